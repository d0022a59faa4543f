//! Any bytes given as an ordered trace to the critical path found without the graph
//! (two passes): an error where the whole graph's build gives one, else the same path,
//! profiles and figures as the whole graph's (or the whole graph left to do it).
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_format::{ReadOptions, TraceReader};
use spoor_graph::profile::Level;
use spoor_graph::show::{self, CpReport};
use spoor_graph::{build, cp, streamed, CpOptions, Mode, Pag, Scope};
use spoor_model::Silent;

fn report(pag: &Pag, made: Option<&cp::Distances>) -> Vec<u8> {
    let path = cp::critical_path_with(pag, &CpOptions::default(), made);
    let mut r = CpReport::new("fuzz", pag, Scope::Global, None, &path);
    r.add_profiles(pag, &path, &Level::ALL);
    r.add_path(pag, &path);
    let mut out = Vec::new();
    show::write_json(&mut out, &r).expect("writing to memory");
    out
}

fuzz_target!(init: common::one_thread(), |data: &[u8]| {
    let open = || Ok(TraceReader::from_bytes("fuzz", data.to_vec(), ReadOptions::default())?);
    let Ok(reader) = open() else { return };
    for mode in [Mode::Cpu, Mode::Wall] {
        let whole = build::build_with_distances(open().expect("opened once"), mode);
        let kept = streamed::critical_path_of(&open, mode, &[], &Silent);
        match (whole, kept) {
            (Ok((pag, made)), Ok(Some((kept, walk)))) => {
                assert!(report(&pag, made.as_ref()) == report(&kept, Some(&walk)), "another path without the graph");
            }
            (Err(_), Ok(Some(_))) => panic!("a trace the whole graph's build refuses gave a path"),
            (Ok(_), Err(e)) => panic!("a trace the whole graph's build reads was refused: {e}"),
            _ => {}
        }
    }
    drop(reader);
});
