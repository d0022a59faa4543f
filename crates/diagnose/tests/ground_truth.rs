//! Ground truth from spoor-synth's injected bottlenecks: the first fix names the injected
//! cause, and its predicted gain is within 5 % of the gain measured by synthesizing the
//! same workload without it (the run's elapsed time, its wall-mode critical path).

use spoor_diagnose::{diagnose, render, Diagnosis, Fix, Options};
use spoor_graph::{critical_path, CpOptions, Mode};
use spoor_model::Silent;
use spoor_synth::{ExtraWork, SlowLink, Spec, Workload};
use spoor_testkit::{ordered_bytes, synth_bytes, synth_pag};

/// A synthetic workload, ordered, in a file (a diagnosis reads it twice).
fn ordered_file(spec: &Spec) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.spoor");
    std::fs::write(&path, ordered_bytes("synth", synth_bytes(spec))).unwrap();
    let path = path.to_str().unwrap().to_owned();
    (dir, path)
}

fn diagnosis(spec: &Spec) -> Diagnosis {
    let (_dir, path) = ordered_file(spec);
    diagnose(&path, None, &Options::default(), &Silent).unwrap()
}

fn elapsed(spec: &Spec) -> i64 {
    critical_path(&synth_pag(spec, Mode::Wall), &CpOptions::default()).length
}

/// The fix's predicted gain against the measured one: `without` is the workload without
/// the cause the fix removes.
fn check_gain(f: &Fix, with: &Spec, without: &Spec) {
    let measured = (elapsed(with) - elapsed(without)) as f64;
    let predicted = (f.length_ns - f.predicted_ns) as f64;
    assert!(measured > 0.0, "the injection costs nothing: {measured}");
    assert!(
        (predicted - measured).abs() <= 0.05 * measured,
        "predicted {predicted} ns, measured {measured} ns: {f:?}"
    );
}

fn ranks(rs: impl IntoIterator<Item = u32>) -> Vec<String> {
    rs.into_iter().map(|r| format!("rank{r}")).collect()
}

fn stencil() -> Spec {
    Spec { procs: 16, steps: 30, ..Spec::new(Workload::Stencil) }
}

fn barrier() -> Spec {
    Spec { procs: 8, steps: 20, ..Spec::new(Workload::Barrier) }
}

#[test]
fn a_late_sender_is_the_extra_work_on_its_rank() {
    let base = stencil();
    let with = Spec {
        extra: vec![ExtraWork { proc: "late".into(), ranks: vec![5], ns: 2_000_000 }],
        ..base.clone()
    };
    let d = diagnosis(&with);
    let f = &d.fixes[0];
    assert_eq!((f.kind, f.procedure.as_deref()), ("delay", Some("late")), "{f:?}");
    assert_eq!(f.processes, ranks([5]));
    check_gain(f, &with, &base);
    // The search found the late senders, refined to the ranks that wait for rank 5.
    let text = render::text(&d, 10, true);
    assert!(text.contains("late_sender at /Process/rank4, /Partner/rank5: true"), "{text}");
    // A prediction reads as the change of the run's time; an upper bound (the computing
    // procedure taking no time) as the most it could save, never as "at most -X %".
    assert!(text.contains("late removed on rank5: predicted -"), "{text}");
    let bound = d.fixes.iter().find(|f| f.bound).expect("the stencil's computing is an upper bound");
    assert!(text.contains(&format!("{}: saves at most ", bound.change)), "{text}");
    assert!(!text.contains("at most -"), "{text}");
}

#[test]
fn an_imbalanced_procedure_is_rebalanced_on_its_ranks() {
    let base = stencil();
    let extra = vec![ExtraWork { proc: "stencilUpdate".into(), ranks: vec![12, 13, 14, 15], ns: 500_000 }];
    let with = Spec { extra, ..base.clone() };
    let d = diagnosis(&with);
    let f = &d.fixes[0];
    assert_eq!((f.kind, f.procedure.as_deref()), ("delay", Some("stencilUpdate")), "{f:?}");
    assert_eq!(f.processes, ranks(12..16));
    assert!(f.change.contains("brought down to its mean"), "{}", f.change);
    check_gain(f, &with, &base);
}

#[test]
fn a_serialization_point_is_removed() {
    let base = barrier();
    let with = Spec { serial_ns: 300_000, ..base.clone() };
    let f = &diagnosis(&with).fixes[0];
    assert_eq!((f.kind, f.procedure.as_deref()), ("delay", Some("serial")), "{f:?}");
    assert_eq!(f.processes, ranks(0..8));
    check_gain(f, &with, &base);
}

#[test]
fn a_hot_lock_is_removed() {
    let base = barrier();
    let with = Spec { hot_lock_ns: 300_000, ..base.clone() };
    let d = diagnosis(&with);
    let f = &d.fixes[0];
    assert_eq!((f.kind, f.procedure.as_deref()), ("delay", Some("critical")), "{f:?}");
    check_gain(f, &with, &base);
    assert!(d
        .shg
        .nodes
        .iter()
        .any(|n| n.hypothesis.name() == "lock_contention" && n.state == spoor_diagnose::State::True));
}

#[test]
fn a_slow_link_gets_the_median_transfer_time() {
    let base = Spec { procs: 8, steps: 40, ..Spec::new(Workload::Ring) };
    let with = Spec { slow_link: Some(SlowLink { a: 2, b: 3, ns: 1_000_000 }), ..base.clone() };
    let f = &diagnosis(&with).fixes[0];
    assert_eq!(f.kind, "link", "{f:?}");
    assert_eq!(f.processes, ranks([2, 3]));
    check_gain(f, &with, &base);
}

/// A slow link and a late rank at once: the link holds the run up, and mending it alone
/// gives what the run with the late rank alone measures.
#[test]
fn two_bottlenecks_at_once_rank_the_one_that_holds_the_run_up_first() {
    let late =
        Spec { extra: vec![ExtraWork { proc: "late".into(), ranks: vec![3], ns: 1_000_000 }], ..stencil() };
    let both = Spec { slow_link: Some(SlowLink { a: 0, b: 1, ns: 2_000_000 }), ..late.clone() };
    let f = &diagnosis(&both).fixes[0];
    assert_eq!(f.kind, "link", "{f:?}");
    assert_eq!(f.processes, ranks([0, 1]));
    check_gain(f, &both, &late);
}

/// Results do not depend on the number of threads.
#[test]
fn one_and_several_threads_give_the_same_diagnosis() {
    let spec =
        Spec { extra: vec![ExtraWork { proc: "late".into(), ranks: vec![1], ns: 1_000_000 }], ..stencil() };
    let (_dir, path) = ordered_file(&spec);
    let run = |n| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
        pool.install(|| render::json(&diagnose(&path, None, &Options::default(), &Silent).unwrap()))
    };
    assert_eq!(run(1), run(3));
}

/// Where a fix's gain needs the whole graph swept (a slow link), a graph kept in a spill
/// file, with the wait states in another, gives the diagnosis kept in memory.
#[test]
fn a_graph_and_wait_states_spilled_give_the_same_diagnosis() {
    let spec = Spec {
        slow_link: Some(SlowLink { a: 2, b: 3, ns: 1_000_000 }),
        ..Spec { procs: 8, steps: 40, ..Spec::new(Workload::Ring) }
    };
    let (dir, path) = ordered_file(&spec);
    let memory = render::json(&diagnose(&path, None, &Options::default(), &Silent).unwrap());
    let waits = spoor_format::spill::Arena::new(dir.path()).unwrap();
    let graph = spoor_format::spill::Arena::new(dir.path()).unwrap();
    let opts = Options { spill: Some(waits.clone()), graph_spill: Some(graph.clone()), ..Options::default() };
    let spilled = render::json(&diagnose(&path, None, &opts, &Silent).unwrap());
    assert_eq!(spilled, memory);
    assert!(graph.most_bytes() > 0 && waits.most_bytes() > 0, "both kept in their files");
}
