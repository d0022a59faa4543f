//! Any bytes given to the PAG file reader: an error, or a PAG whose critical
//! path can be computed and that the writer writes back to a file that reads
//! back to the same PAG (the same bytes when written again); the node count its END
//! chunk gives, when it gives one, is the PAG's.
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_graph::{cp, file, CpOptions};

fuzz_target!(|data: &[u8]| {
    let tail = data.get(data.len().saturating_sub(33)..).unwrap_or_default();
    let counted = file::node_count_of(tail, data.len() as u64);
    let Ok(pag) = file::read("fuzz", data) else { return };
    if let Some(n) = counted {
        assert_eq!(n, pag.nodes() as u64, "the END chunk's count is not the PAG's");
    }
    let _ = cp::length(&pag, &CpOptions::default());
    let mut out = Vec::new();
    file::write(&mut out, &pag).expect("writing to memory");
    let again = file::read("again", &out[..]).expect("the writer's PAG reads back");
    let mut out_again = Vec::new();
    file::write(&mut out_again, &again).expect("writing to memory");
    assert!(out_again == out, "the PAG read back writes other bytes");
});
