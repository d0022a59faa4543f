//! Fills a store with many runs for the store's benchmark (scripts/bench-exp): one run
//! derived from TRACE, then N copies with their own attributes (`version` 0-9, `procs`
//! 4-128, `seed`) and metrics jittered by up to ±10 %.
//!
//!     cargo run --release -p spoor-exp --example populate -- DB TRACE N

use spoor_exp::Store;
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: populate DB TRACE N");
        std::process::exit(2);
    }
    let n: usize = args[3].parse().expect("N: a number of runs");
    let base = spoor_exp::derive(&args[2], &spoor_model::Silent).unwrap_or_else(|e| {
        eprintln!("populate: {e}");
        std::process::exit(1)
    });
    let mut store = Store::open(Path::new(&args[1])).unwrap_or_else(|e| {
        eprintln!("populate: {e}");
        std::process::exit(1)
    });
    // A small deterministic generator (xorshift): the same store every time.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut runs = Vec::with_capacity(n);
    for k in 0..n {
        let mut d = base.clone();
        d.hash = format!("{:032x}", k);
        for m in &mut d.metrics {
            m.2 *= 0.9 + 0.2 * next();
        }
        let attrs = vec![
            ("version".to_owned(), (k % 10).to_string()),
            ("procs".to_owned(), (4usize << (k % 6)).to_string()),
            ("seed".to_owned(), k.to_string()),
        ];
        runs.push((d, attrs));
    }
    let ids = store
        .add_all(runs.iter().map(|(d, a)| (d, a.as_slice())), "2026-01-01T00:00:00Z")
        .unwrap_or_else(|e| {
            eprintln!("populate: {e}");
            std::process::exit(1)
        });
    println!("{} runs of {} metrics each", ids.len(), base.metrics.len());
}
