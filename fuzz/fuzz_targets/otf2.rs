//! Any OTF2 archive: an error or a trace, never a panic or a runaway allocation.
//! The input is the archive's files joined by `common::SEPARATOR`: the anchor,
//! the global definitions, then for locations 0, 1, ... (at most 4) their local
//! definitions and events (an empty part: no such file).
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_import::{ClockMode, MemFiles, Otf2Archive, Otf2Options};
use std::path::Path;

fuzz_target!(init: common::one_thread(), |data: &[u8]| {
    let parts = common::split(data);
    let mut files = MemFiles::new();
    files.insert("traces.otf2", parts[0]);
    files.insert("traces.def", parts.get(1).copied().unwrap_or_default());
    for (k, pair) in parts.get(2..).unwrap_or_default().chunks(2).take(4).enumerate() {
        for (ext, bytes) in ["def", "evt"].iter().zip(pair) {
            if !bytes.is_empty() {
                files.insert(format!("traces/{k}.{ext}"), *bytes);
            }
        }
    }
    let anchor = Path::new("traces.otf2");
    // Whole locations with corrected clocks, then streamed blocks with raw clocks.
    let opts = Otf2Options { clock: ClockMode::Corrected, recv_begin: true };
    if let Ok(a) = Otf2Archive::open_from(&files, anchor, opts) {
        let _ = a.read_all();
    }
    if let Ok(a) = Otf2Archive::open_from(&files, anchor, Otf2Options::default()) {
        let _ = a.for_each_block(64, |_, b| -> Result<(), spoor_format::Error> {
            std::hint::black_box(b.count);
            Ok(())
        });
    }
});
