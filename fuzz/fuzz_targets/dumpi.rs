//! Any DUMPI trace: an error or a trace, never a panic or a runaway allocation.
//! The input is the `.meta` then the `.bin` of ranks 0, 1, ... (at most 4),
//! joined by `common::SEPARATOR`; the `.bin` files are `fuzz-NNNN.bin` (the
//! seeds' `.meta` say `fileprefix=fuzz`).
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_import::{read_dumpi_from, MemFiles};
use std::path::Path;

fuzz_target!(init: common::one_thread(), |data: &[u8]| {
    let parts = common::split(data);
    let mut files = MemFiles::new();
    files.insert("fuzz.meta", parts[0]);
    for (r, bin) in parts.iter().skip(1).take(4).enumerate() {
        files.insert(format!("fuzz-{r:04}.bin"), *bin);
    }
    let _ = read_dumpi_from(&files, Path::new("fuzz.meta"));
});
