//! Any bytes given to the binary reader: an error or a trace, never a panic or a runaway allocation.
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_format::{ReadOptions, TraceReader};

fuzz_target!(|data: &[u8]| {
    // The whole-file path, strict and salvaging, then the stream path.
    for salvage in [false, true] {
        if let Ok(mut r) = TraceReader::from_bytes("fuzz", data.to_vec(), ReadOptions { salvage }) {
            let _ = r.par_map_blocks(|_, b| b.events.len());
        }
    }
    let input = Box::new(std::io::Cursor::new(data.to_vec()));
    if let Ok(r) = TraceReader::from_reader("fuzz", input, ReadOptions::default()) {
        let _ = r.read_all();
    }
});
