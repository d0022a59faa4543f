//! The search itself: directives prune, order and set thresholds, and the counts say what
//! they saved; peer annotations; what the search refuses.

use spoor_diagnose::{diagnose, Diagnosis, Error, Hypothesis, Options, State};
use spoor_model::Silent;
use spoor_synth::{ExtraWork, Spec, Workload};
use spoor_testkit::{ordered_bytes, synth_bytes, testdata};

struct Trace {
    _dir: tempfile::TempDir,
    path: String,
}

/// A 16-rank stencil where rank 5 does 2 ms of extra work (`late`) every step.
fn late_stencil() -> Trace {
    let spec = Spec {
        procs: 16,
        steps: 30,
        extra: vec![ExtraWork { proc: "late".into(), ranks: vec![5], ns: 2_000_000 }],
        ..Spec::new(Workload::Stencil)
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.spoor");
    std::fs::write(&path, ordered_bytes("synth", synth_bytes(&spec))).unwrap();
    Trace { path: path.to_str().unwrap().to_owned(), _dir: dir }
}

/// A hand-written text trace of testdata/, ordered into a file.
fn ordered_testdata(rel: &str) -> Trace {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.spoor");
    let text = std::fs::read(testdata(rel)).unwrap();
    std::fs::write(&path, ordered_bytes(rel, text)).unwrap();
    Trace { path: path.to_str().unwrap().to_owned(), _dir: dir }
}

fn run(t: &Trace, directives: Option<&str>) -> Result<Diagnosis, Error> {
    diagnose(&t.path, directives.map(|d| ("t.dirs", d)), &Options::default(), &Silent)
}

fn node<'a>(
    d: &'a Diagnosis,
    h: &str,
    focus: &str,
    window: usize,
) -> Option<&'a spoor_diagnose::search::Node> {
    d.shg.nodes.iter().find(|n| n.hypothesis.name() == h && n.focus_name == focus && n.window == window)
}

#[test]
fn the_search_refines_true_nodes_and_never_false_ones() {
    let d = run(&late_stencil(), None).unwrap();
    let children = d.shg.children();
    for n in &d.shg.nodes {
        if n.state != State::True {
            assert!(children[n.id].is_empty(), "a {:?} node was refined: {n:?}", n.state);
        }
        for &p in &n.parents {
            assert_eq!(d.shg.nodes[p].state, State::True, "{n:?} refines a node that is not true");
        }
        if let Some(v) = n.value {
            assert_eq!(n.state == State::True, v > n.threshold, "{n:?}");
        }
    }
    assert_eq!(
        d.shg.tested,
        d.shg.nodes.iter().filter(|n| n.value.is_some() || n.state == State::NotApplicable).count()
    );
    // Rank 5 computes the most: it alone is annotated against its peers, as overworked.
    let five: Vec<_> = d.annotations.iter().filter(|a| a.process_name == "rank5").collect();
    assert!(!five.is_empty() && five.iter().all(|a| a.kind == "overworked"), "{:?}", d.annotations);
    // The waits' values at a process add up to the root's (the same denominator), and so
    // do those at the tags with the waits that are no message's (the allreduce's,
    // MPI_Init's, MPI_Finalize's). The stencil has one communicator: that level, which
    // tells nothing new, is skipped for its tags (one a direction).
    let root = node(&d, "sync_waiting", "/", 0).unwrap();
    assert_eq!(root.state, State::True);
    let sum_at = |prefix: &str| -> f64 {
        d.shg
            .nodes
            .iter()
            .filter(|n| {
                n.hypothesis.name() == "sync_waiting"
                    && n.focus_name.starts_with(prefix)
                    && !n.focus_name.contains(", ")
                    && n.window == 0
            })
            .map(|n| n.amount_ns.unwrap())
            .sum()
    };
    let sum = sum_at("/Process/");
    assert!((sum - root.amount_ns.unwrap()).abs() < 1e-6 * sum, "{sum} against {:?}", root.amount_ns);
    let off_tags: f64 =
        ["init_completion", "wait_at_finalize", "finalize_completion", "wait_at_nxn", "nxn_completion"]
            .iter()
            .filter_map(|h| node(&d, h, "/", 0).and_then(|n| n.amount_ns))
            .sum();
    assert!(d.shg.nodes.iter().all(|n| !n.focus_name.ends_with("/SyncObject/MPI_COMM_WORLD")));
    let on_tags = sum_at("/SyncObject/MPI_COMM_WORLD/tag ");
    assert!(on_tags > 0.0);
    assert!(
        (on_tags + off_tags - root.amount_ns.unwrap()).abs() < 1e-6 * sum,
        "{on_tags} + {off_tags} against {sum}"
    );
}

#[test]
fn prunes_cut_the_tests_and_priorities_test_first() {
    let t = late_stencil();
    let plain = run(&t, None).unwrap();
    let pruned = run(&t, Some("prune cpu_bound /\nprune * /Process/rank3  # a comment\n")).unwrap();
    assert!(pruned.shg.tested < plain.shg.tested, "{} against {}", pruned.shg.tested, plain.shg.tested);
    assert_eq!(node(&pruned, "cpu_bound", "/", 0).unwrap().state, State::Pruned);
    assert!(pruned.shg.nodes.iter().all(|n| !(n.focus_name.contains("/Process/rank3") && n.value.is_some())));
    // The same fix comes first: the prunes took nothing it needs.
    assert_eq!(pruned.fixes[0].finding, plain.fixes[0].finding);
    // A high-priority pair starts with the search (made right after the five top
    // hypotheses), and is tested even where no true parent leads.
    let high = run(&t, Some("priority lock_contention /Process/rank0 high\n")).unwrap();
    let n = node(&high, "lock_contention", "/Process/rank0", 0).unwrap();
    assert_eq!((n.id, n.state), (5, State::False));
    assert!(n.parents.iter().all(|&p| high.shg.nodes[p].state == State::True));
}

#[test]
fn thresholds_from_directives_decide() {
    let t = late_stencil();
    let d = run(&t, Some("threshold sync_waiting 0.99\nthreshold cpu_bound /Code/late 0.999\n")).unwrap();
    let root = node(&d, "sync_waiting", "/", 0).unwrap();
    assert_eq!((root.threshold, root.state), (0.99, State::False));
    assert!(d.shg.nodes.iter().all(|n| n.hypothesis.name() != "late_sender"), "refined below a false node");
    assert_eq!(node(&d, "cpu_bound", "/Code/late", 0).unwrap().threshold, 0.999);
    assert_eq!(node(&d, "cpu_bound", "/", 0).unwrap().threshold, Hypothesis::CpuBound.default_threshold());
}

#[test]
fn bad_directives_name_the_line_and_the_valid_names() {
    let t = late_stencil();
    for (text, want) in [
        ("prune slowness /\n", "t.dirs:1: no hypothesis `slowness`; the hypotheses are: sync_waiting"),
        ("\nprune cpu_bound /Code/nosuch\n", "t.dirs:2: no procedure `nosuch`"),
        (
            "prune cpu_bound /Process/rank99\n",
            "no place `/Process/rank99` in the trace (places are written like `/Process/rank0`)",
        ),
        ("priority cpu_bound / urgent\n", "t.dirs:1: expected high, medium or low, found `urgent`"),
        ("threshold cpu_bound / much\n", "expected a threshold (a share like 0.15), found `much`"),
        ("ignore cpu_bound /\n", "no directive `ignore`; the directives are: prune, priority, threshold"),
        ("prune cpu_bound /Host/x\n", "`/Host/x` names no resource"),
        ("prune cpu_bound\n", "expected a focus"),
    ] {
        match run(&t, Some(text)) {
            Err(Error::Directives(m)) => assert!(m.contains(want), "{text:?}: {m}"),
            other => panic!("{text:?}: {:?}", other.map(|d| d.shg.tested)),
        }
    }
}

#[test]
fn an_unordered_trace_and_standard_input_are_refused() {
    let e = diagnose(&testdata("late-sender.txt"), None, &Options::default(), &Silent).err().unwrap();
    assert!(matches!(&e, Error::NotOrdered(m) if m.contains("spoor-order")), "{e}");
    let e = diagnose("-", None, &Options::default(), &Silent).err().unwrap();
    assert!(matches!(&e, Error::Usage(m) if m.contains("read twice")), "{e}");
}

/// testdata/diagnose/io.txt, worked out by hand in its header.
#[test]
fn hand_worked_values_of_a_trace_that_reads() {
    let t = ordered_testdata("diagnose/io.txt");
    let d = diagnose(&t.path, None, &Options::default(), &Silent).unwrap();
    let value =
        |h: &str, f: &str| node(&d, h, f, 0).and_then(|n| n.value).unwrap_or_else(|| panic!("{h} at {f}"));
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(close(value("io_blocking", "/"), 0.25));
    assert!(close(value("io_blocking", "/Process/rank0"), 0.75));
    assert!(close(value("io_blocking", "/Code/read"), 0.25));
    assert!(close(value("cpu_bound", "/"), 0.75));
    assert!(close(value("load_imbalance", "/Code/solve"), 0.25));
    assert!(close(value("sync_waiting", "/"), 0.0));
    assert!(close(value("communication", "/"), 0.0));
    // `main` spans the whole run: it is no focus of its own.
    assert!(d.shg.nodes.iter().all(|n| !n.focus_name.contains("/Code/main")));
}

/// testdata/diagnose/objects.txt, worked out by hand in its header: waits refined along
/// the communicators, then the tags.
#[test]
fn hand_worked_synchronization_objects() {
    let t = ordered_testdata("diagnose/objects.txt");
    let path = t.path.as_str();
    let d = diagnose(path, None, &Options::default(), &Silent).unwrap();
    let world = "/SyncObject/MPI_COMM_WORLD";
    let at = |h: &str, f: &str| node(&d, h, f, 0).unwrap_or_else(|| panic!("no {h} at {f}"));
    let close = |h: &str, f: &str, want: f64| {
        let n = at(h, f);
        assert!((n.value.unwrap() - want).abs() < 1e-9, "{h} at {f}: {n:?}");
        assert_eq!(n.state == State::True, want > n.threshold, "{h} at {f}");
    };
    close("sync_waiting", "/", 12.0 / 60.0);
    close("sync_waiting", world, 8.0 / 60.0);
    close("sync_waiting", "/SyncObject/ROW", 4.0 / 60.0);
    close("sync_waiting", &format!("{world}/tag 7"), 7.0 / 60.0);
    close("sync_waiting", &format!("{world}/tag 3"), 1.0 / 60.0);
    close("late_sender", world, 8.0 / 60.0);
    close("late_sender", &format!("{world}/tag 7"), 7.0 / 60.0);
    close("wait_at_barrier", "/SyncObject/ROW", 4.0 / 60.0);
    close("wait_at_barrier", world, 0.0);
    // A collective has no tags; a false communicator is not refined.
    assert!(d.shg.nodes.iter().all(|n| !n.focus_name.starts_with("/SyncObject/ROW/tag")));
    // The tag of the late sender's refinement is a focus a directive can name.
    let pruned = format!("prune late_sender {world}/tag 7\n");
    let p = diagnose(path, Some(("d", &pruned)), &Options::default(), &Silent).unwrap();
    let n = node(&p, "late_sender", &format!("{world}/tag 7"), 0).unwrap();
    assert_eq!(n.state, State::Pruned);
    for (bad, says) in [
        ("prune * /SyncObject/COLUMN\n", "the communicators are: MPI_COMM_WORLD, ROW"),
        ("prune * /SyncObject/ROW/tag x\n", "is not a tag"),
        ("prune * /Partner/rank0, /SyncObject/ROW\n", "not both"),
    ] {
        let e = diagnose(path, Some(("d", bad)), &Options::default(), &Silent).err().unwrap();
        assert!(e.to_string().contains(says), "{bad}: {e}");
    }
}

/// What a diagnosis reported its progress in.
#[derive(Default)]
struct Units(std::sync::Mutex<Vec<String>>);

impl spoor_model::Feedback for Units {
    fn progress(&self, unit: &str, _done: u64, _total: Option<u64>) {
        let mut units = self.0.lock().unwrap();
        if units.last().map(String::as_str) != Some(unit) {
            units.push(unit.to_owned());
        }
    }
}

/// A trace whose graph is needed whole keeps it from the second pass on: no pass without
/// it finds that it needs one (and reads the trace a third time). Processes that shared
/// a processor: testdata/cp/shared-cpu.txt, worked by hand, its CPU-mode path 2.510 ms;
/// a spawned thread: testdata/waits/collectives.txt.
#[test]
fn a_trace_that_needs_its_graph_whole_is_read_twice_not_three_times() {
    let units_of = |t: &Trace| {
        let units = Units::default();
        let d = diagnose(&t.path, None, &Options::default(), &units).unwrap();
        (d, units.0.into_inner().unwrap())
    };
    let (d, units) = units_of(&ordered_testdata("cp/shared-cpu.txt"));
    assert_eq!(d.length_ns, 2_510_000);
    assert!(!units.iter().any(|u| u.starts_with("critical paths")), "{units:?}");
    let (_, units) = units_of(&ordered_testdata("waits/collectives.txt"));
    assert!(!units.iter().any(|u| u.starts_with("critical paths")), "{units:?}");
    // A trace whose processes had processors of their own, and spawned none, takes the
    // pass without it.
    let (_, units) = units_of(&ordered_testdata("cp/spa.txt"));
    assert!(units.iter().any(|u| u.starts_with("critical paths")), "{units:?}");
}
