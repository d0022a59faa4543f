//! spoor-synth end to end: the binary's traces read back with the format's reader.

use crate::common::*;
use spoor_format::{ReadOptions, TraceReader};
use spoor_model::{Definitions, Event, Kind};
use spoor_synth::{Spec, Workload};

fn read(bytes: Vec<u8>) -> (Definitions, Vec<Event>) {
    TraceReader::from_bytes("synth", bytes, ReadOptions::default()).unwrap().read_all().unwrap()
}

#[test]
fn every_workload_reads_back() {
    for w in Workload::ALL {
        let bytes = ok("synth", &[w.name(), "--procs", "5", "--steps", "3"], b"");
        let (defs, events) = read(bytes.clone());
        let spec = Spec { procs: 5, steps: 3, ..Spec::new(w) };
        assert_eq!(events.len() as u64, spec.event_count(), "{w}");
        assert_eq!(defs, spoor_synth::definitions(&spec), "{w}");
        // Same as the library's events, location by location.
        let mut lib = Vec::new();
        spoor_synth::generate(&spec, &mut lib).unwrap();
        for loc in 0..defs.locations.len() as u32 {
            let a: Vec<&Event> = events.iter().filter(|e| e.loc == loc).collect();
            let b: Vec<&Event> = lib.iter().filter(|e| e.loc == loc).collect();
            assert_eq!(a, b, "{w} location {loc}");
        }
        // Deterministic: the same options give the same bytes.
        assert_eq!(ok("synth", &[w.name(), "--procs", "5", "--steps", "3"], b""), bytes, "{w}");
    }
}

#[test]
fn counts_by_hand() {
    let (_, ev) = read(ok("synth", &["ring", "--procs", "4", "--steps", "3"], b""));
    assert_eq!(ev.iter().filter(|e| matches!(e.kind, Kind::Send { .. })).count(), 12);
    let (defs, ev) = read(ok("synth", &["spa", "--steps", "5"], b""));
    let enters = |name: &str| {
        let id = defs.strings.lookup(name).unwrap();
        ev.iter().filter(|e| e.kind == Kind::Enter { proc: id }).count()
    };
    assert_eq!(enters("servBusy1"), 5);
    assert_eq!(enters("servBusy2"), 10);
    assert_eq!(enters("clientWork"), 15);
    let (_, ev) = read(ok("synth", &["barrier", "--procs", "3", "--steps", "7"], b""));
    assert_eq!(ev.iter().filter(|e| matches!(e.kind, Kind::CollEnd { .. })).count(), 21);
}

#[test]
fn events_option_is_close() {
    for w in Workload::ALL {
        let (_, ev) = read(ok("synth", &[w.name(), "--events", "100000", "--procs", "8"], b""));
        let n = ev.len() as f64;
        assert!((n - 100_000.0).abs() < 10_000.0, "{w}: {n} events");
    }
}

#[test]
fn output_file_and_text_form() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.spoor");
    let args = ["stencil", "--procs", "6", "--steps", "2", "--apps", "2", "--machines", "2"];
    let out = run("synth", &[&args[..], &["-o", file.to_str().unwrap()]].concat(), b"", &[]);
    assert!(out.status.success() && out.stdout.is_empty());
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes, ok("synth", &args, b""));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "only the output file is left");
    let (defs, events) = read(bytes);
    assert_eq!(defs.apps.len(), 2);
    assert_eq!(defs.machines.len(), 2);
    assert_eq!(defs.processes.len(), 12);
    let text = ok("synth", &[&args[..], &["--text"]].concat(), b"");
    assert!(text.starts_with(b"spoor-text 1\n"));
    let (tdefs, tevents) = read(text);
    assert_eq!(tdefs, defs);
    assert_eq!(tevents.len(), events.len());
    let mut a = events.clone();
    let mut b = tevents.clone();
    a.sort_by_key(|e| e.loc);
    b.sort_by_key(|e| e.loc);
    assert_eq!(a, b);
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["nosuch"][..],
        &["ring", "--procs", "1"],
        &["ring", "--steps", "3", "--events", "100"],
        &["ring", "--imbalance", "2"],
        &["ring", "--bandwidth", "0"],
        &[],
    ] {
        let out = run("synth", args, b"", &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn unwritable_output_exits_1() {
    let out = run("synth", &["ring", "-o", "/nonexistent-dir/x.spoor"], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("spoor-synth"));
}

#[test]
fn help_describes_every_workload() {
    let help = String::from_utf8(ok("synth", &["--help"], b"")).unwrap();
    for w in Workload::ALL {
        assert!(help.contains(w.name()), "{w}");
    }
    assert!(help.contains("servBusy1"));
    assert!(help.contains("MPI_Allreduce"));
}

#[test]
fn split_writes_a_trace_per_process_that_merge_joins() {
    let dir = tempfile::tempdir().unwrap();
    let split = dir.path().join("run");
    let s = split.to_str().unwrap();
    let args = ["stencil", "--procs", "6", "--steps", "4", "--block-events", "7"];
    ok("synth", &[&args[..], &["--split", s]].concat(), b"");
    let mut names: Vec<String> =
        std::fs::read_dir(&split).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let want: Vec<String> = (0..6).map(|r| format!("stencil-0.{r}.spoor")).collect();
    assert_eq!(names, want, "one file per process, nothing else");
    let whole = read(ok("synth", &args, b""));
    for (rank, name) in want.iter().enumerate() {
        let (defs, events) = read(std::fs::read(split.join(name)).unwrap());
        assert_eq!(defs, whole.0, "{name}: the whole program's definitions");
        let own: Vec<&Event> =
            whole.1.iter().filter(|e| defs.locations[e.loc as usize].process == rank as u32).collect();
        assert_eq!(events.iter().collect::<Vec<_>>(), own, "{name}: its own events, in order");
    }
    // Joined again, the same trace as written whole.
    let files: Vec<String> = want.iter().map(|n| split.join(n).to_str().unwrap().to_owned()).collect();
    let merged = ok("merge", &files.iter().map(String::as_str).collect::<Vec<_>>(), b"");
    let (defs, events) = read(merged);
    assert_eq!(defs.locations.len(), whole.0.locations.len());
    for loc in 0..defs.locations.len() as u32 {
        let a: Vec<&Event> = events.iter().filter(|e| e.loc == loc).collect();
        let b: Vec<&Event> = whole.1.iter().filter(|e| e.loc == loc).collect();
        assert_eq!(a, b, "location {loc}");
    }
}

#[test]
fn split_refuses_a_file_for_a_directory_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let out = run("synth", &["ring", "--procs", "3", "--split", file.to_str().unwrap()], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(file.to_str().unwrap()), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
