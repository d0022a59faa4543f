//! The critical path found without keeping the graph (`streamed`) against the one the
//! whole graph gives: the same report, every profile and the path arc by arc.

use spoor_graph::profile::Level;
use spoor_graph::show::{self, CpReport};
use spoor_graph::{cp, file, streamed, CpOptions, Mode, Pag, Scope};
use spoor_model::Silent;
use spoor_synth::{Spec, Workload};
use spoor_testkit::{ordered_bytes, synth_bytes, testdata};

/// spoor-cp's JSON report of every profile and the path, and spoor-report's drawing of
/// the path.
fn report(pag: &Pag, made: Option<&cp::Distances>) -> String {
    let path = cp::critical_path_with(pag, &CpOptions::default(), made);
    let mut r = CpReport::new("t", pag, Scope::Global, None, &path);
    r.add_profiles(pag, &path, &Level::ALL);
    r.add_path(pag, &path);
    let mut out = Vec::new();
    show::write_json(&mut out, &r).unwrap();
    format!("{}\n{:?}", String::from_utf8(out).unwrap(), cp::drawing(pag, &path))
}

/// Both reports of the trace at `path`, or `None` where the streamed path declines.
fn both(path: &str, mode: Mode) -> Option<(String, String, usize, usize)> {
    let (whole, made) = file::load_with_distances(path, mode, None, &Silent).unwrap();
    let (kept, walk) = streamed::critical_path(path, mode, &[], &Silent).unwrap()?;
    Some((report(&whole, made.as_ref()), report(&kept, Some(&walk)), whole.nodes(), kept.nodes()))
}

fn check(name: &str, path: &str, mode: Mode) -> bool {
    let Some((whole, kept, all, few)) = both(path, mode) else { return false };
    assert_eq!(whole, kept, "{name} ({mode:?})");
    assert!(few <= all, "{name}: kept {few} nodes of {all}");
    true
}

/// The ordered trace of a stencil of `procs` processes and `steps` steps.
fn ordered_stencil(procs: u32, steps: u64, seed: u64) -> Vec<u8> {
    let spec = Spec { procs, steps, seed, ..Spec::new(Workload::Stencil) };
    ordered_bytes("synth", synth_bytes(&spec))
}

#[test]
fn every_workload_gives_the_whole_graphs_report() {
    let dir = tempfile::tempdir().unwrap();
    let mut streamed = 0;
    for w in Workload::ALL {
        for seed in 1..4 {
            let spec = Spec { procs: 6.max(w.min_procs()), steps: 8, seed, imbalance: 0.5, ..Spec::new(w) };
            let path = dir.path().join(format!("{w:?}-{seed}.spoor"));
            std::fs::write(&path, ordered_bytes("synth", synth_bytes(&spec))).unwrap();
            for mode in [Mode::Wall, Mode::Cpu] {
                streamed += usize::from(check(&format!("{w:?} seed {seed}"), path.to_str().unwrap(), mode));
            }
        }
    }
    // Only processes sharing processors in CPU mode need the whole graph.
    assert!(streamed >= Workload::ALL.len() * 3, "{streamed} of {} streamed", Workload::ALL.len() * 6);
}

#[test]
fn lanes_made_on_the_way_are_the_whole_graphs_lengths() {
    let dir = tempfile::tempdir().unwrap();
    let ideal = CpOptions { message_weight: Some(0), ..CpOptions::default() };
    for w in Workload::ALL {
        let spec = Spec { procs: 6.max(w.min_procs()), steps: 8, seed: 5, imbalance: 0.5, ..Spec::new(w) };
        let path = dir.path().join(format!("{w:?}.spoor"));
        std::fs::write(&path, ordered_bytes("synth", synth_bytes(&spec))).unwrap();
        let path = path.to_str().unwrap();
        let whole = file::load(path, Mode::Cpu, None, &Silent).unwrap();
        let Some((_, walk)) =
            streamed::critical_path(path, Mode::Cpu, std::slice::from_ref(&ideal), &Silent).unwrap()
        else {
            continue;
        };
        assert_eq!(walk.lanes(), Some(&[cp::length(&whole, &ideal)][..]), "{w:?}");
    }
}

#[test]
fn hand_worked_traces_give_the_whole_graphs_report() {
    let dir = tempfile::tempdir().unwrap();
    let mut declined = Vec::new();
    for name in ["barrier", "client-server", "helper", "shared-cpu", "shared-cpu-coll", "spa", "spinning"] {
        let source = testdata(&format!("cp/{name}.txt"));
        let path = dir.path().join(format!("{name}.spoor"));
        std::fs::write(&path, ordered_bytes(name, std::fs::read(&source).unwrap())).unwrap();
        for mode in [Mode::Wall, Mode::Cpu] {
            if !check(name, path.to_str().unwrap(), mode) {
                declined.push(format!("{name} {mode:?}"));
            }
        }
    }
    // Processes that shared processors have their CPU-mode arcs weighed again once the
    // whole graph is read.
    assert_eq!(declined, ["shared-cpu Cpu", "shared-cpu-coll Cpu"]);
}

#[test]
fn a_pag_file_and_a_stream_are_left_to_the_whole_graph() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.spoor");
    std::fs::write(&trace, ordered_stencil(4, 4, 1)).unwrap();
    let pag = file::load(trace.to_str().unwrap(), Mode::Wall, None, &Silent).unwrap();
    let pag_file = dir.path().join("t.pag");
    file::write(&mut std::fs::File::create(&pag_file).unwrap(), &pag).unwrap();
    assert!(streamed::critical_path(pag_file.to_str().unwrap(), Mode::Wall, &[], &Silent).unwrap().is_none());
    assert!(streamed::critical_path("-", Mode::Wall, &[], &Silent).unwrap().is_none());
    // A graph of its path only knows the whole one's size.
    let (kept, _) =
        streamed::critical_path(trace.to_str().unwrap(), Mode::Wall, &[], &Silent).unwrap().unwrap();
    assert!(kept.nodes() < pag.nodes());
    assert_eq!((kept.graph_nodes(), kept.graph_arcs()), (pag.nodes(), pag.arcs()));
}

#[test]
fn a_damaged_trace_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = ordered_stencil(4, 20, 1);
    let n = bytes.len();
    bytes[n / 2] ^= 0x55;
    let path = dir.path().join("bad.spoor");
    std::fs::write(&path, &bytes).unwrap();
    let Err(e) = streamed::critical_path(path.to_str().unwrap(), Mode::Wall, &[], &Silent) else {
        panic!("a damaged trace was read")
    };
    let said = spoor_testkit::error_chain(&e);
    assert!(said.contains("bad.spoor"), "{said}");
}

#[test]
fn a_trace_without_its_index_is_reckoned_from_its_size_and_streamed_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = ordered_stencil(8, 40, 2);
    // The end chunk, cut off: the reader keeps what comes before it.
    let path = dir.path().join("cut.spoor");
    std::fs::write(&path, &bytes[..bytes.len() - 40]).unwrap();
    let path = path.to_str().unwrap();
    let reader = streamed::trace_file(path).unwrap().expect("a trace file");
    let reckoned = streamed::graph_bytes(&reader).expect("reckoned from the file's size");
    assert!(reckoned >= (bytes.len() as u64 - 40) * 8, "{reckoned}");
    assert!(check("cut", path, Mode::Wall));
    // A trace in the text form is small: its graph is kept.
    let text = streamed::trace_file(&testdata("cp/barrier.txt")).unwrap().expect("a trace file");
    assert_eq!(streamed::graph_bytes(&text), None);
}

#[test]
fn the_least_a_whole_graph_takes_is_known_before_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = ordered_stencil(8, 40, 4);
    let trace = dir.path().join("t.spoor");
    std::fs::write(&trace, &bytes).unwrap();
    let trace = trace.to_str().unwrap();
    let events = spoor_format::TraceReader::open(trace, Default::default()).unwrap().end().unwrap().events;
    let least = streamed::least_graph_bytes(trace).unwrap();
    assert_eq!(least, Some(events * streamed::GRAPH_BYTES_AT_LEAST));
    // A PAG file: its END chunk's node count.
    let pag = file::load(trace, Mode::Cpu, None, &Silent).unwrap();
    let mut written = Vec::new();
    file::write(&mut written, &pag).unwrap();
    let pag_path = dir.path().join("t.pag");
    std::fs::write(&pag_path, &written).unwrap();
    let pag_path = pag_path.to_str().unwrap();
    assert_eq!(file::node_count(pag_path).unwrap(), Some(pag.nodes() as u64));
    assert_eq!(
        streamed::least_graph_bytes(pag_path).unwrap(),
        Some(pag.nodes() as u64 * streamed::GRAPH_BYTES_AT_LEAST)
    );
    // Nothing may follow the END chunk (a reader of the tail would take it for the
    // count): an error naming the file and the offset.
    let mut trailing = written.clone();
    trailing.extend_from_slice(&written[written.len() - 33..]);
    let Err(e) = file::read("trailing.pag", &trailing[..]) else { panic!("bytes after END were read") };
    let said = spoor_testkit::error_chain(&e);
    assert!(
        said.contains("trailing.pag")
            && said.contains(&written.len().to_string())
            && said.contains("after the END"),
        "{said}"
    );
    // Not known: a PAG cut short, one whose END is damaged or claims more nodes than its
    // bytes could hold, a trace without its end chunk, a stream.
    let n = written.len();
    let mut cases: Vec<Vec<u8>> = vec![written[..n - 1].to_vec()];
    let mut damaged = written.clone();
    damaged[n - 20] ^= 1;
    cases.push(damaged);
    let mut inflated = written.clone();
    inflated[n - 24..n - 16].copy_from_slice(&(n as u64).to_le_bytes());
    let crc = crc32fast::hash(&inflated[n - 24..]);
    inflated[n - 28..n - 24].copy_from_slice(&crc.to_le_bytes());
    cases.push(inflated);
    for (k, bad) in cases.iter().enumerate() {
        std::fs::write(pag_path, bad).unwrap();
        assert_eq!(file::node_count(pag_path).unwrap(), None, "case {k}");
    }
    // A trace whose end chunk counts more events than its bytes could hold.
    let mut inflated = bytes.clone();
    let m = inflated.len();
    inflated[m - 24..m - 16].copy_from_slice(&(m as u64 + 1).to_le_bytes());
    let crc = crc32fast::hash(&inflated[m - 24..]);
    inflated[m - 28..m - 24].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(trace, &inflated).unwrap();
    assert_eq!(streamed::least_graph_bytes(trace).unwrap(), None);
    std::fs::write(trace, &bytes[..bytes.len() - 40]).unwrap();
    assert_eq!(streamed::least_graph_bytes(trace).unwrap(), None);
    assert_eq!(streamed::least_graph_bytes("-").unwrap(), None);
}
