//! Any bytes as the per-process traces of a run (the input's files, split as
//! `common::split` splits them), merged as spoor-merge merges them: an error, or a
//! trace that reads back with every event the merge says it wrote. Binary files are
//! merged block by block on the pool (of this one thread: the merge runs its own
//! tasks while it waits), anything else among them event by event. Unlike the other
//! targets it writes its files, to a directory of its own: the block by block merge
//! reads mapped files.
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_format::{ReadOptions, TraceReader};
use spoor_order::merge::{self, MergeInput, MergeOptions};
use std::sync::Once;

static INIT: Once = Once::new();

fuzz_target!(|data: &[u8]| {
    INIT.call_once(common::one_thread);
    let dir = std::env::temp_dir().join(format!("spoor-fuzz-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let inputs: Vec<MergeInput> = common::split(data)
        .into_iter()
        .take(8)
        .enumerate()
        .map(|(k, bytes)| {
            let path = dir.join(format!("{k}.spoor"));
            std::fs::write(&path, bytes).expect("writing a scratch file");
            MergeInput { path: path.to_string_lossy().into_owned(), app: None }
        })
        .collect();
    let mut out = Vec::new();
    let opts = MergeOptions { block_events: 5, ..MergeOptions::default() };
    if let Ok(s) = merge::merge(&inputs, &opts, &mut out) {
        let read = TraceReader::from_bytes("merged", out, ReadOptions::default()).and_then(|r| r.read_all());
        let (_, events) = read.expect("the merge's output reads back");
        assert_eq!(events.len() as u64, s.events, "the events the merge says it wrote");
    }
});
