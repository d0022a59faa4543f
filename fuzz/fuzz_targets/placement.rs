//! Any text given to the placement parsers (the file form, the inline form,
//! the `--by` rules), over the PAG of testdata/cp/spa.txt: an error, or a
//! placement that puts every location in a group.
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_graph::{Mode, Pag};
use spoor_whatif::{PlaceBy, Placement};
use std::sync::OnceLock;

fn pag() -> &'static Pag {
    static PAG: OnceLock<Pag> = OnceLock::new();
    PAG.get_or_init(|| spoor_testkit::pag_of_file("cp/spa.txt", Mode::Cpu))
}

fn check(pag: &Pag, place: Placement) {
    let groups = place.group_of_locations(pag);
    assert!(groups.iter().all(|&g| (g as usize) < place.groups()));
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let pag = pag();
    if let Ok(p) = Placement::parse_file(pag, "fuzz", text) {
        check(pag, p);
    }
    if let Ok(p) = Placement::parse_inline(pag, "--place", text) {
        check(pag, p);
    }
    if let Ok(rule) = PlaceBy::parse(text) {
        check(pag, Placement::by(pag, rule));
    }
});
