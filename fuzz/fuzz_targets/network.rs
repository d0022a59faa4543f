//! Any text given as a network model (formats/network.md) with testdata/whatif as its
//! folder, or as a collective table: an error naming a line, or a model whose message
//! and collective times are never negative for any size, operation and process count.
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_graph::net::{CollTable, Network};
use spoor_model::{CollOp, Silent};
use std::path::Path;

const SIZES: [u64; 6] = [0, 1, 1000, 1 << 20, u64::MAX / 2, u64::MAX];

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    if which % 2 == 0 {
        let Ok(table) = CollTable::parse("fuzz.csv", text) else { return };
        for op in CollOp::ALL {
            for procs in [1, 2, 3, 64, u32::MAX] {
                for bytes in SIZES {
                    assert!(table.time(op, procs, bytes).is_none_or(|t| t >= 0.0), "{op:?} {procs} {bytes}");
                }
            }
        }
        return;
    }
    // Files the model names are confined to testdata/whatif: this is about the parser,
    // not about reading /dev/zero on request.
    let Ok(value) = text.parse::<toml::Table>() else { return };
    let plain = |v: &toml::Value| {
        v.as_str().is_none_or(|f| {
            !f.is_empty()
                && f.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
                && !f.starts_with('.')
        })
    };
    if !["table", "collectives"].iter().filter_map(|k| value.get(*k)).all(plain) {
        return;
    }
    let dir = spoor_testkit::testdata("whatif");
    let Ok(net) = Network::parse("fuzz.toml", text, Path::new(&dir), &Silent) else { return };
    for bytes in SIZES {
        for local in [false, true] {
            assert!(net.time(bytes, local) >= 0.0 && net.wire(bytes, local) >= 0.0, "{bytes} bytes");
        }
        for op in 0..=16u8 {
            for procs in [1, 2, 3, 64, u32::MAX] {
                assert!(
                    net.collective(op, procs, bytes).is_none_or(|t| t >= 0.0),
                    "op {op}, {procs}, {bytes}"
                );
            }
        }
    }
});
