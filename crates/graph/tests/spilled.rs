//! The PAG file written without keeping the graph (`spilled`) against the whole
//! graph's: the same bytes.

use spoor_graph::{file, spilled, streamed, Mode};
use spoor_model::Silent;
use spoor_synth::{Spec, Workload};
use spoor_testkit::{ordered_bytes, synth_bytes, testdata};

/// Both files of the trace at `path`, or `None` where the spilled writer declines.
fn both(path: &str, mode: Mode, dir: &std::path::Path) -> Option<(Vec<u8>, Vec<u8>)> {
    let whole = file::load(path, mode, None, &Silent).unwrap();
    let mut expected = Vec::new();
    file::write(&mut expected, &whole).unwrap();
    let mut written = Vec::new();
    let reader = streamed::trace_file(path).unwrap().expect("a trace file");
    let (summary, spilled) = spilled::write_pag(reader, mode, dir, &mut written, &Silent).unwrap()?;
    assert_eq!(spilled, node_and_arc_chunks(&written), "{path}: what was spilled is what was copied");
    // The writer's spill files go once copied.
    assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "{path}");
    assert_eq!((summary.graph_nodes(), summary.graph_arcs()), (whole.nodes(), whole.arcs()), "{path}");
    assert_eq!(summary.clock_violations(), whole.clock_violations(), "{path}");
    assert_eq!(summary.notes, whole.notes, "{path}");
    Some((expected, written))
}

/// The bytes of a PAG file's NODES and ARCS chunks, framing included (formats/pag.md).
fn node_and_arc_chunks(file: &[u8]) -> u64 {
    let (mut at, mut sum) = (24, 0);
    while at + 9 <= file.len() {
        let len = u32::from_le_bytes(file[at + 1..at + 5].try_into().unwrap()) as usize;
        if matches!(file[at], 3 | 4) {
            sum += 9 + len as u64;
        }
        at += 9 + len;
    }
    sum
}

#[test]
fn every_workload_writes_the_whole_graphs_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let (mut written, mut most) = (0, 0);
    for w in Workload::ALL {
        for (seed, steps) in [(1, 8), (2, 3000)] {
            let spec = Spec { procs: 6.max(w.min_procs()), steps, seed, imbalance: 0.5, ..Spec::new(w) };
            let path = dir.path().join(format!("{w:?}-{seed}.spoor"));
            std::fs::write(&path, ordered_bytes("synth", synth_bytes(&spec))).unwrap();
            for mode in [Mode::Wall, Mode::Cpu] {
                if let Some((expected, got)) = both(path.to_str().unwrap(), mode, spill.path()) {
                    assert!(expected == got, "{w:?} seed {seed} {mode:?}: other bytes");
                    written += 1;
                    most = most.max(file::read("x", &got[..]).unwrap().nodes());
                }
            }
        }
    }
    assert!(written >= Workload::ALL.len() * 2, "{written} of {} written", Workload::ALL.len() * 4);
    // Chunks of 65,536 nodes: some graphs take several.
    assert!(most > 3 << 16, "{most} nodes at most");
}

#[test]
fn hand_worked_traces_write_the_whole_graphs_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let mut declined = Vec::new();
    for name in ["barrier", "client-server", "helper", "shared-cpu", "shared-cpu-coll", "spa", "spinning"] {
        let path = dir.path().join(format!("{name}.spoor"));
        std::fs::write(
            &path,
            ordered_bytes(name, std::fs::read(testdata(&format!("cp/{name}.txt"))).unwrap()),
        )
        .unwrap();
        for mode in [Mode::Wall, Mode::Cpu] {
            match both(path.to_str().unwrap(), mode, spill.path()) {
                Some((expected, got)) => assert!(expected == got, "{name} {mode:?}: other bytes"),
                None => declined.push(format!("{name} {mode:?}")),
            }
        }
    }
    assert_eq!(declined, ["shared-cpu Cpu", "shared-cpu-coll Cpu"]);
}

#[test]
fn a_spill_directory_that_cannot_be_written_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec { procs: 4, steps: 4, seed: 1, ..Spec::new(Workload::Stencil) };
    let path = dir.path().join("t.spoor");
    std::fs::write(&path, ordered_bytes("synth", synth_bytes(&spec))).unwrap();
    let missing = dir.path().join("no-such-directory");
    let Err(e) = spilled::write_pag(
        streamed::trace_file(path.to_str().unwrap()).unwrap().unwrap(),
        Mode::Wall,
        &missing,
        &mut Vec::new(),
        &Silent,
    ) else {
        panic!("wrote into a directory that does not exist")
    };
    let said = spoor_testkit::error_chain(&e);
    assert!(said.contains("no-such-directory"), "{said}");
}

/// A graph kept in a file (as one larger than memory is), built from a trace or read from
/// a PAG file, is the graph kept in memory: the same file bytes, the same critical path
/// (the distances made while building, kept in the file too), the same stretches cut
/// from it (into the same file); its pages let go on the way change nothing.
#[test]
fn a_graph_kept_in_a_file_is_the_one_kept_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let arena = spoor_format::spill::Arena::new(spill.path()).unwrap();
    let bytes = |pag: &spoor_graph::Pag| {
        let mut out = Vec::new();
        file::write(&mut out, pag).unwrap();
        out
    };
    for w in Workload::ALL {
        let spec = Spec { procs: 6.max(w.min_procs()), steps: 300, seed: 4, imbalance: 0.5, ..Spec::new(w) };
        let path = dir.path().join(format!("{w:?}.spoor"));
        std::fs::write(&path, ordered_bytes("synth", synth_bytes(&spec))).unwrap();
        let path = path.to_str().unwrap();
        for mode in [Mode::Wall, Mode::Cpu] {
            let (memory, made) = file::load_with_distances_in(path, mode, None, &Silent, None).unwrap();
            let (spilled, made_spilled) =
                file::load_with_distances_in(path, mode, None, &Silent, Some(&arena)).unwrap();
            assert!(spilled.loc.is_spilled() && spilled.arc_from.is_spilled() && !memory.loc.is_spilled());
            arena.release();
            let whole = bytes(&memory);
            assert!(bytes(&spilled) == whole, "{w:?} {mode:?}: another graph");
            let plain = spoor_graph::CpOptions::default();
            assert_eq!(
                spoor_graph::cp::length_with(&spilled, &plain, made_spilled.as_ref()),
                spoor_graph::cp::length_with(&memory, &plain, made.as_ref()),
                "{w:?} {mode:?}"
            );
            let pag_file = dir.path().join("g.pag");
            std::fs::write(&pag_file, &whole).unwrap();
            let read = file::load_in(pag_file.to_str().unwrap(), mode, None, &Silent, Some(&arena)).unwrap();
            assert!(read.wall.is_spilled() && bytes(&read) == whole, "{w:?} {mode:?}: read back");
            let (t0, t1) = memory.activity_span().unwrap();
            let third = (t1 - t0) / 3;
            let cut = spilled.within((t0 + third, t1 - third));
            assert!(cut.kind.is_spilled(), "{w:?}: cut into the same file");
            assert!(
                bytes(&cut) == bytes(&memory.within((t0 + third, t1 - third))),
                "{w:?} {mode:?}: the stretch"
            );
        }
    }
    assert!(arena.error().is_none() && arena.most_bytes() > 0);
}
