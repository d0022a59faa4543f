//! The store and its operators on hand-made runs, with answers worked out by hand; the
//! store's safety (concurrent adds, corrupt and newer stores, migrations, moved traces);
//! and runs derived from synthetic traces (the gate on an injected slowdown, directives
//! that halve the search).

use spoor_exp::ops::{self, Mapping, Side};
use spoor_exp::{Derived, Query, Runs, Store};
use spoor_model::Silent;
use spoor_synth::{ExtraWork, Spec, Workload};
use spoor_testkit::{ordered_bytes, synth_bytes};
use std::path::Path;

fn store(dir: &tempfile::TempDir) -> Store {
    Store::open(&dir.path().join("s.db")).unwrap()
}

/// A run made by hand: attributes, resources, metrics at `/`.
fn run(attrs: &[(&str, &str)], resources: &[&str], metrics: &[(&str, &str, f64)]) -> Derived {
    Derived {
        trace: "/nowhere/t.spoor".into(),
        hash: format!("{attrs:?}{metrics:?}"),
        attrs: attrs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        resources: resources.iter().map(|s| s.to_string()).collect(),
        metrics: metrics.iter().map(|(f, m, v)| (f.to_string(), m.to_string(), *v)).collect(),
        ..Default::default()
    }
}

fn side(s: &Store, text: &str) -> Side {
    Side::resolve(s, &Runs::parse(text).unwrap(), text).unwrap()
}

#[test]
fn queries_select_runs_by_their_attributes() {
    let d = tempfile::tempdir().unwrap();
    let mut s = store(&d);
    for (procs, version, machine) in [
        ("4", "1", "node1"),
        ("8", "1", "node1"),
        ("8", "2", "node2"),
        ("16", "2", "node1"),
        ("16", "2.1", "node2"),
    ] {
        let r = run(&[("procs", procs)], &[], &[]);
        s.add(
            &r,
            &[("version".into(), version.into()), ("machine".into(), machine.into())],
            "2026-01-01T00:00:00Z",
        )
        .unwrap();
    }
    let ids = |s: &Store, q: &str| s.select(Some(&Query::parse(q).unwrap())).unwrap();
    assert_eq!(ids(&s, r#"procs >= 8 and version = "2""#), vec![3, 4]);
    // A number compares as a number: 16 > 8, though "16" < "8" as text.
    assert_eq!(ids(&s, "procs > 8"), vec![4, 5]);
    assert_eq!(ids(&s, "version = 2"), vec![3, 4]);
    assert_eq!(ids(&s, r#"version like "2%""#), vec![3, 4, 5]);
    assert_eq!(ids(&s, "not machine = node1 or procs = 4"), vec![1, 3, 5]);
    assert_eq!(ids(&s, "(procs = 4 or procs = 16) and machine != node2"), vec![1, 4]);
    assert_eq!(ids(&s, "id >= 4"), vec![4, 5]);
    // A run without the attribute matches no comparison of it.
    assert!(ids(&s, "flags = O3").is_empty());
    // The user's attribute wins over the trace's of the same name.
    let id = s.add(&run(&[("procs", "4")], &[], &[]), &[("procs".into(), "5".into())], "x").unwrap();
    assert_eq!(ids(&s, "procs = 5"), vec![id]);
}

#[test]
fn the_difference_operator_over_sets_takes_medians() {
    let d = tempfile::tempdir().unwrap();
    let mut s = store(&d);
    // Version 1: three runs, solve 400, 410, 500 ms (median 410); version 2: 300 and 320
    // (median 310); the program 1000/1010/1100 (1010) against 900/920 (910).
    for (v, prog, solve) in [
        ("1", 1000.0, 400.0),
        ("1", 1010.0, 410.0),
        ("1", 1100.0, 500.0),
        ("2", 900.0, 300.0),
        ("2", 920.0, 320.0),
    ] {
        let r = run(
            &[("version", v)],
            &[],
            &[("/", "time", prog), ("/Code/solve", "time", solve), ("/Code/io", "time", 50.0)],
        );
        s.add(&r, &[], "x").unwrap();
    }
    let a = ops::metrics(&s, &side(&s, "version = 1"), &Mapping::default()).unwrap();
    let b = ops::metrics(&s, &side(&s, "version = 2"), &Mapping::default()).unwrap();
    assert_eq!(a[&("/Code/solve".to_owned(), "time".to_owned())], 410.0);
    assert_eq!(b[&("/".to_owned(), "time".to_owned())], 910.0);
    let ds = ops::difference(&a, &b, 0.05, 0.005);
    let got: Vec<(&str, f64)> = ds.iter().map(|x| (x.focus.as_str(), x.b - x.a)).collect();
    // solve -100 of 1010 (24 %), the program -100 (9.9 %); io unchanged.
    assert_eq!(got, vec![("/", -100.0), ("/Code/solve", -100.0)]);
    assert!((ds[1].change - (-100.0 / 410.0)).abs() < 1e-12);
    // A threshold above both changes lists nothing.
    assert!(ops::difference(&a, &b, 0.25, 0.005).is_empty());
}

#[test]
fn structures_merge_differ_and_map() {
    let d = tempfile::tempdir().unwrap();
    let mut s = store(&d);
    let v1 = ["/Code/main", "/Code/solve_v1", "/Machine/n1", "/Machine/n1/rank0", "/Machine/n1/rank1"];
    let v1b = ["/Code/main", "/Code/extra", "/Machine/n1", "/Machine/n1/rank0"];
    let v2 = ["/Code/main", "/Code/solve", "/Machine/hostA", "/Machine/hostA/rank0", "/Machine/hostA/rank1"];
    s.add(&run(&[("v", "1")], &v1, &[("/Code/solve_v1", "time", 10.0)]), &[], "x").unwrap();
    s.add(&run(&[("v", "1b")], &v1b, &[]), &[], "x").unwrap();
    s.add(&run(&[("v", "2")], &v2, &[("/Code/solve", "time", 10.0)]), &[], "x").unwrap();
    // The merge of runs 1 and 2 has every resource either has.
    let merged = ops::structure(&s, &side(&s, "v like '1%'"), &Mapping::default()).unwrap();
    assert_eq!(merged.len(), 6);
    assert!(merged.contains("/Code/extra"));
    let (a, b) = (
        ops::structure(&s, &side(&s, "1"), &Mapping::default()).unwrap(),
        ops::structure(&s, &side(&s, "3"), &Mapping::default()).unwrap(),
    );
    let diff = ops::struct_diff(&a, &b);
    assert_eq!(diff.shared, vec!["/Code/main"]);
    assert_eq!(diff.only_a.len(), 4);
    assert_eq!(diff.only_b.len(), 4);
    let map = ops::suggest_mapping(&a, &b);
    assert_eq!(map.pairs().len(), 2, "{map:?}");
    // Under the suggested mapping the structures are equal and the metrics line up.
    let mapped = ops::structure(&s, &side(&s, "1"), &map).unwrap();
    assert_eq!(mapped, b);
    let ma = ops::metrics(&s, &side(&s, "1"), &map).unwrap();
    let mb = ops::metrics(&s, &side(&s, "3"), &Mapping::default()).unwrap();
    assert!(ops::difference(&ma, &mb, 0.0, 0.0).is_empty());
    // Runs 1 and 2 differ by more than names: no suggestion.
    let c = ops::structure(&s, &side(&s, "2"), &Mapping::default()).unwrap();
    assert!(ops::suggest_mapping(&a, &c).pairs().is_empty());
}

#[test]
fn removing_a_run_removes_all_derived_from_it() {
    let d = tempfile::tempdir().unwrap();
    let mut s = store(&d);
    let id = s.add(&run(&[("a", "1")], &["/Code/f"], &[("/", "time", 1.0)]), &[], "x").unwrap();
    assert_eq!(s.remove(&[id, 99]).unwrap(), vec![99]);
    for table in ["runs", "attrs", "resources", "metrics", "shg", "findings"] {
        let n: i64 =
            s.connection().query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap();
        assert_eq!(n, 0, "{table}");
    }
}

#[test]
fn concurrent_adds_lose_nothing() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s.db");
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut s = Store::open(&path).unwrap();
                for k in 0..25 {
                    let r = run(
                        &[("writer", &t.to_string()), ("k", &k.to_string())],
                        &["/Code/f"],
                        &[("/", "time", k as f64)],
                    );
                    s.add(&r, &[], "x").unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.select(None).unwrap().len(), 100);
    for t in 0..4 {
        assert_eq!(s.select(Some(&Query::parse(&format!("writer = {t}")).unwrap())).unwrap().len(), 25);
    }
}

#[test]
fn a_corrupt_or_newer_store_is_refused_and_left_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    let junk = d.path().join("junk.db");
    let bytes: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&junk, &bytes).unwrap();
    let e = Store::open(&junk).err().unwrap().to_string();
    assert!(e.contains("junk.db") && e.contains("not a spoor-exp store"), "{e}");
    assert_eq!(std::fs::read(&junk).unwrap(), bytes);
    // A SQLite file of another program.
    let other = d.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    let before = std::fs::read(&other).unwrap();
    let e = Store::open(&other).err().unwrap().to_string();
    assert!(e.contains("not a spoor-exp store"), "{e}");
    assert_eq!(std::fs::read(&other).unwrap(), before);
    // A store of a newer schema.
    let newer = d.path().join("newer.db");
    drop(Store::open(&newer).unwrap());
    rusqlite::Connection::open(&newer).unwrap().pragma_update(None, "user_version", 99).unwrap();
    let before = std::fs::read(&newer).unwrap();
    let e = Store::open(&newer).err().unwrap().to_string();
    assert!(e.contains("version 99, newer than"), "{e}");
    assert_eq!(std::fs::read(&newer).unwrap(), before);
}

#[test]
fn an_older_store_migrates_forward_with_its_runs() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("old.db");
    {
        let mut s = Store::open(&path).unwrap();
        s.add(&run(&[("v", "1")], &["/Code/f"], &[("/", "time", 5.0)]), &[], "x").unwrap();
    }
    // Take the store back to schema 1, as a spoor of that schema left it.
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch("DROP TABLE shg; DROP TABLE findings; PRAGMA user_version = 1;").unwrap();
    drop(c);
    let s = Store::open(&path).unwrap();
    assert_eq!(s.version().unwrap(), spoor_exp::SCHEMA_VERSION);
    assert_eq!(s.metric(1, "/", "time").unwrap(), Some(5.0));
    assert!(s.shg(1).unwrap().is_empty());
}

/// A synthetic workload, ordered, in a file of `dir`.
fn ordered_file(dir: &Path, name: &str, spec: &Spec) -> String {
    let path = dir.join(name);
    std::fs::write(&path, ordered_bytes("synth", synth_bytes(spec))).unwrap();
    path.to_str().unwrap().to_owned()
}

fn stencil(seed: u64) -> Spec {
    Spec { procs: 8, steps: 30, seed, ..Spec::new(Workload::Stencil) }
}

#[test]
fn a_derived_run_keeps_consistent_figures_and_notices_its_trace_changing() {
    let d = tempfile::tempdir().unwrap();
    let t = ordered_file(d.path(), "t.spoor", &stencil(1));
    let derived = spoor_exp::derive(&t, &Silent).unwrap();
    let mut s = store(&d);
    let id = s.add(&derived, &[("version".into(), "1".into())], "x").unwrap();
    let get = |f: &str, m: &str| s.metric(id, f, m).unwrap().unwrap_or_else(|| panic!("{f} {m}"));
    let run = s.expect_run(id).unwrap();
    assert!(run.attrs.contains(&("procs".into(), "8".into())));
    assert_eq!(get("/", "elapsed"), derived.elapsed_ns as f64);
    // The CPU-mode path is never longer than the run; the ideal network never longer
    // than the path.
    assert!(get("/", "cp") <= get("/", "elapsed") && get("/", "ideal_network") <= get("/", "cp"));
    // Waiting is the sum of its patterns, everywhere it is kept.
    let metrics = s.metrics(id).unwrap();
    let patterns: f64 =
        metrics.iter().filter(|(f, m, _)| f == "/" && m.starts_with("waits.")).map(|x| x.2).sum();
    assert!((patterns - get("/", "wait")).abs() < 1.0);
    // Processes' useful computation adds up to the program's.
    let useful: f64 =
        metrics.iter().filter(|(f, m, _)| f.starts_with("/Process/") && m == "useful").map(|x| x.2).sum();
    assert!((useful - get("/", "useful")).abs() < 1.0);
    assert!(get("/", "useful.mean") <= get("/", "useful.max"));
    let res = s.resources(id).unwrap();
    for r in ["/Code/stencilUpdate", "/Process/rank0", "/Process/rank7", "/SyncObject/MPI_COMM_WORLD"] {
        assert!(res.contains(&r.to_owned()), "{r}: {res:?}");
    }
    assert!(!s.findings(id).unwrap().is_empty());
    assert!(s.shg(id).unwrap().iter().any(|n| n.state == "false"));
    assert_eq!(spoor_exp::TraceStatus::of(&run), spoor_exp::TraceStatus::Unchanged);
    std::fs::write(&t, b"rewritten").unwrap();
    assert_eq!(spoor_exp::TraceStatus::of(&run), spoor_exp::TraceStatus::Changed);
    std::fs::remove_file(&t).unwrap();
    let status = spoor_exp::TraceStatus::of(&run);
    assert_eq!(status, spoor_exp::TraceStatus::Missing);
    assert!(status.describe(&run).unwrap().contains("no longer there"));
}

#[test]
fn the_gate_names_an_injected_slowdown_and_passes_another_seed() {
    let d = tempfile::tempdir().unwrap();
    let slow =
        Spec { extra: vec![ExtraWork { proc: "late".into(), ranks: vec![3], ns: 3_000_000 }], ..stencil(1) };
    let mut s = store(&d);
    for (name, spec) in [("base.spoor", stencil(1)), ("again.spoor", stencil(2)), ("slow.spoor", slow)] {
        let t = ordered_file(d.path(), name, &spec);
        s.add(&spoor_exp::derive(&t, &Silent).unwrap(), &[], "x").unwrap();
    }
    let m = |id: &str| ops::metrics(&s, &side(&s, id), &Mapping::default()).unwrap();
    assert!(ops::check(&m("1"), &m("2"), 0.05).is_empty(), "{:?}", ops::check(&m("1"), &m("2"), 0.05));
    let r = ops::check(&m("1"), &m("3"), 0.05);
    let named: Vec<String> = r.iter().map(|x| format!("{} {}", x.focus, x.metric)).collect();
    assert!(named.contains(&"/ elapsed".to_owned()), "{named:?}");
    assert!(named.contains(&"/Code/late cp".to_owned()), "{named:?}");
    // The late sender it causes on rank 3's neighbours.
    assert!(named.iter().any(|n| n.contains("waits.late_sender")), "{named:?}");
}

#[test]
fn directives_from_one_run_halve_the_search_of_another_and_keep_its_first_bottleneck() {
    let d = tempfile::tempdir().unwrap();
    let injected = |seed| Spec {
        extra: vec![ExtraWork { proc: "late".into(), ranks: vec![2], ns: 2_000_000 }],
        ..stencil(seed)
    };
    let first = ordered_file(d.path(), "first.spoor", &injected(1));
    let other = ordered_file(d.path(), "other.spoor", &injected(2));
    let mut s = store(&d);
    let id = s.add(&spoor_exp::derive(&first, &Silent).unwrap(), &[], "x").unwrap();
    let text = ops::directives(&s, &[id], true, 0.8).unwrap();
    assert!(
        text.lines().any(|l| l.starts_with("prune ")) && text.lines().any(|l| l.starts_with("priority "))
    );
    let opts = spoor_diagnose::Options::default();
    let plain = spoor_diagnose::diagnose(&other, None, &opts, &Silent).unwrap();
    let steered = spoor_diagnose::diagnose(&other, Some(("d.txt", &text)), &opts, &Silent).unwrap();
    assert!(
        2 * steered.shg.tested <= plain.shg.tested,
        "{} against {}",
        steered.shg.tested,
        plain.shg.tested
    );
    let top = |x: &spoor_diagnose::Diagnosis| {
        let n = &x.shg.nodes[x.bottlenecks[0]];
        (n.hypothesis, n.focus_name.clone())
    };
    assert_eq!(top(&steered), top(&plain));
    assert_eq!(steered.fixes[0].finding, plain.fixes[0].finding);
}

#[test]
fn a_run_derived_without_the_graph_has_the_same_figures() {
    // Past its budget, the critical path's metrics come from two passes without the graph.
    let d = tempfile::tempdir().unwrap();
    for w in [Workload::Stencil, Workload::MasterWorker, Workload::Pipeline] {
        let spec = Spec { procs: 8, steps: 20, seed: 3, imbalance: 0.5, ..Spec::new(w) };
        let t = ordered_file(d.path(), &format!("{w:?}.spoor"), &spec);
        let whole = spoor_exp::derive(&t, &Silent).unwrap();
        let streamed = spoor_exp::derive_within(&t, 0, None, &Silent).unwrap();
        assert_eq!(whole.metrics, streamed.metrics, "{w:?}");
        assert!(whole.metrics.iter().any(|(f, m, v)| f == "/" && m == "cp.imbalance" && *v > 0.0), "{w:?}");
        assert_eq!(whole.warnings, streamed.warnings, "{w:?}");
    }
}

/// A run derived with its wait states in a spill file is the run derived in memory:
/// the same metrics, search history and findings.
#[test]
fn a_run_derived_with_its_wait_states_spilled_is_the_same() {
    let d = tempfile::tempdir().unwrap();
    let spec = Spec {
        extra: vec![spoor_synth::ExtraWork { proc: "late".into(), ranks: vec![3], ns: 2_000_000 }],
        ..stencil(4)
    };
    let t = ordered_file(d.path(), "t.spoor", &spec);
    let spill = d.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let arena = spoor_format::spill::Arena::new(&spill).unwrap();
    let memory = spoor_exp::derive(&t, &Silent).unwrap();
    let spilled = spoor_exp::derive_within(&t, u64::MAX, Some(arena.clone()), &Silent).unwrap();
    assert!(arena.most_bytes() > 0);
    assert!(memory.metrics.iter().any(|(_, m, v)| m.starts_with("waits.") && *v > 0.0));
    assert_eq!(memory.metrics, spilled.metrics);
    assert_eq!(format!("{:?}", memory.shg), format!("{:?}", spilled.shg));
    assert_eq!(format!("{:?}", memory.findings), format!("{:?}", spilled.findings));
}
