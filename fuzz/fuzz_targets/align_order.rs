//! Any bytes as a trace (binary or text) aligned and ordered in one process, as
//! `spoor-order --align` does, and by the two stages, spoor-align then spoor-order on its
//! output: both refuse it, or both give the same trace and the same reports. Where the
//! clocks move, the one process writes the aligned trace to a directory of its own. The
//! events handed on as briefs (`spoor-cp --align`) are those of the written trace.
#![no_main]
#[path = "common/mod.rs"]
#[allow(dead_code)]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_format::brief::Brief;
use spoor_format::{ReadOptions, TraceReader};
use spoor_model::Silent;
use spoor_order::align::{self, AlignOptions};
use spoor_order::order::{self, OrderOptions, Sink};
use spoor_order::Input;

// rayon's own pool, not `common::one_thread`: spoor-order matches on a thread of its
// own while the calling thread waits for it, so the caller cannot be the pool's only
// worker.
fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("spoor-fuzz-align-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let input = Input::from_bytes("fuzz", data.to_vec());
    let (aopts, oopts) = (AlignOptions::default(), OrderOptions { block_events: 7 });
    let mut aligned = Vec::new();
    let two = align::align(&input, &aopts, &mut aligned).and_then(|report| {
        let mut ordered = Vec::new();
        let summary = order::order(&Input::from_bytes("fuzz", aligned), &mut ordered, &oopts)?;
        Ok((report, summary, ordered))
    });
    let mut ordered = Vec::new();
    let tmpdir = || Ok(dir.clone());
    let one = align::align_and_order(&input, &aopts, &oopts, &tmpdir, &mut ordered, &Silent);
    match (one, two) {
        (Ok(done), Ok((report, summary, expected))) => {
            assert!(ordered == expected, "another trace in one process");
            let mut briefs = Vec::new();
            let mut hand_on = |b: &[Brief]| {
                briefs.extend_from_slice(b);
                Ok(())
            };
            align::align_and_order_to(&input, &aopts, &tmpdir, Sink::briefs(&mut hand_on), &Silent)
                .expect("handed on what it writes");
            let reader =
                TraceReader::from_bytes("o", ordered, ReadOptions::default()).expect("its own output");
            let written: Vec<Brief> =
                reader.read_all().expect("its own output").1.iter().map(Brief::of).collect();
            assert!(briefs == written, "other events handed on than written");
            let json = |r: &align::AlignReport| serde_json::to_string(r).expect("a report in JSON");
            assert_eq!(json(&done.align), json(&report), "another alignment report");
            assert_eq!(done.order.to_json(), summary.to_json(), "another order summary");
        }
        (Err(_), Err(_)) => {}
        (Ok(_), Err(e)) => panic!("the two stages refuse what one process orders: {e}"),
        (Err(e), Ok(_)) => panic!("one process refuses what the two stages order: {e}"),
    }
    let left = std::fs::read_dir(&dir).map_or(0, |d| d.count());
    assert_eq!(left, 0, "a temporary file left behind");
});
