//! Decodes an OTF2 archive and prints how many events it holds and how fast
//! they were read: `cargo run --release -p spoor-import --example otf2_count -- ANCHOR [--corrected] [--repeat N]`.

use spoor_import::otf2::{ClockMode, Otf2Archive, Otf2Options};
use std::collections::BTreeMap;
use std::io::Write;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut anchor = None;
    let mut opts = Otf2Options::default();
    let mut repeat = 1;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--corrected" => opts.clock = ClockMode::Corrected,
            "--no-recv-begin" => opts.recv_begin = false,
            "--repeat" => repeat = args.next().and_then(|n| n.parse().ok()).unwrap_or(1),
            _ => anchor = Some(a),
        }
    }
    let Some(anchor) = anchor else {
        return Err("usage: otf2_count ANCHOR [--corrected] [--no-recv-begin] [--repeat N]".into());
    };
    for _ in 0..repeat {
        let t0 = Instant::now();
        let archive = Otf2Archive::open_with(anchor.as_ref(), opts)?;
        let t1 = Instant::now();
        let locations = archive.read_all()?;
        let t2 = Instant::now();
        let events: usize = locations.iter().map(|l| l.events.len()).sum();
        let records: u64 = locations.iter().map(|l| l.records).sum();
        let mut skipped = BTreeMap::<&str, u64>::new();
        for l in &locations {
            for (k, n) in &l.skipped {
                *skipped.entry(k).or_default() += n;
            }
        }
        let read = (t2 - t1).as_secs_f64();
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "{} locations, {records} records, {events} events; open {:.3} s, read_all {:.3} s: {:.1} M events/s, {:.1} M records/s ({} threads)",
            locations.len(),
            (t1 - t0).as_secs_f64(),
            read,
            events as f64 / read / 1e6,
            records as f64 / read / 1e6,
            rayon::current_num_threads()
        );
        for (k, n) in &skipped {
            let _ = writeln!(out, "  skipped {n} {k}");
        }
        let t3 = Instant::now();
        drop(locations);
        let _ = writeln!(out, "  drop {:.3} s", t3.elapsed().as_secs_f64());
    }
    Ok(())
}
