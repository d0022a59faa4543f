//! Any text given to the communication-cost table parser: an error naming a
//! line, or a table whose times can be looked up for any size.
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_graph::NetTable;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok((table, _warnings)) = NetTable::parse("fuzz", text) else { return };
    let mut sizes: Vec<u64> = table.rows().iter().map(|r| r.0).collect();
    sizes.extend([0, 1, u64::MAX / 2, u64::MAX]);
    for bytes in sizes.iter().flat_map(|&b| [b.saturating_sub(1), b, b.saturating_add(1)]) {
        for local in [false, true] {
            assert!(table.time(bytes, local) >= 0, "a negative time for {bytes} bytes");
        }
    }
});
