//! Any Paraver trace: an error or a trace, never a panic or a runaway allocation.
//! The input is the `.prv` (plain or gzip-ed), the `.pcf` and the `.row`
//! joined by `common::SEPARATOR` (a missing part: no such file).
//!
//! The header may declare at most 2^16 threads here (2^22 by default): every declared
//! thread is a named location, work linear in the count and bounded by the default
//! limit (about 1 GiB), which would otherwise take most executions.
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_import::{read_paraver_from, MemFiles, ParaverOptions};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let parts = common::split(data);
    let mut files = MemFiles::new();
    files.insert("t.prv", parts[0]);
    for (ext, bytes) in ["pcf", "row"].iter().zip(parts.get(1..).unwrap_or_default()) {
        files.insert(format!("t.{ext}"), *bytes);
    }
    let opts = ParaverOptions { max_threads: 1 << 16, ..Default::default() };
    let _ = read_paraver_from(&files, Path::new("t.prv"), &opts);
});
