//! Shared by the graph tests: traces ordered in memory with spoor-order.
#![allow(dead_code)]

use spoor_format::{ReadOptions, TraceReader};
use spoor_graph::{build, Mode, Pag};
use spoor_order::order::{self, OrderOptions};
use spoor_order::Input;

/// The repository's testdata directory.
pub fn testdata(rel: &str) -> String {
    format!("{}/../../testdata/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// A trace (any form) put through spoor-order, as bytes of the binary format.
pub fn ordered_bytes(name: &str, bytes: Vec<u8>) -> Vec<u8> {
    let input = Input::from_bytes(name, bytes);
    let mut out = Vec::new();
    order::order(&input, &mut out, &OrderOptions { block_events: 7 }).expect("spoor-order");
    out
}

/// The PAG of a trace file after spoor-order.
pub fn pag_of_file(rel: &str, mode: Mode) -> Pag {
    let path = testdata(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    pag_of_bytes(&path, bytes, mode)
}

pub fn pag_of_bytes(name: &str, bytes: Vec<u8>, mode: Mode) -> Pag {
    let ordered = ordered_bytes(name, bytes);
    let r = TraceReader::from_bytes(name, ordered, ReadOptions::default()).expect("reader");
    build::build(r, mode).expect("build")
}

/// Milliseconds as nanoseconds, exactly (for hand-worked figures like 9.60 ms).
pub fn ms(v: f64) -> i64 {
    (v * 1e6).round() as i64
}
