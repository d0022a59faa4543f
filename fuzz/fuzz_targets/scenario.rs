//! Any text given as a what-if scenario file, over the PAG of
//! testdata/cp/spa.txt with testdata/whatif as its folder: an error, or a sweep
//! that runs (when it has at most 64 scenarios: a file may ask for millions).
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_graph::{Mode, Pag};
use spoor_whatif::scenario::{ScenarioFile, Sweep};
use std::path::Path;
use std::sync::OnceLock;

fn pag() -> &'static Pag {
    static PAG: OnceLock<Pag> = OnceLock::new();
    PAG.get_or_init(|| spoor_testkit::pag_of_file("cp/spa.txt", Mode::Cpu))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(spec) = ScenarioFile::parse("fuzz.toml", text) else { return };
    // File names are confined to testdata/whatif: this is about the parser, not
    // about reading /dev/zero on request.
    let plain = |f: &String| {
        !f.is_empty()
            && f.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
            && !f.starts_with('.')
    };
    if !spec.placement.iter().filter_map(|p| p.get_ref().file.as_ref()).all(plain)
        || !spec.network.iter().flat_map(|n| [&n.table, &n.model]).flatten().map(|f| f.get_ref()).all(plain)
    {
        return;
    }
    let base = Path::new(&spoor_testkit::testdata("whatif")).to_path_buf();
    let pag = pag();
    let Ok(sweep) = Sweep::new(pag, "fuzz.toml", &spec, &base) else { return };
    if sweep.scenarios().len() <= 64 {
        let _ = sweep.run(pag);
    }
});
