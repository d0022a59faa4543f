//! Synthetic workloads (spoor-synth) with known answers: clocks broken on purpose and
//! recovered by align; traces split per process and merged back.

use spoor_format::{ReadOptions, TraceReader, TraceWriter, WriterOptions};
use spoor_model::{Definitions, Event, Kind};
use spoor_order::align::{self, AlignOptions, Method};
use spoor_order::merge::{self, MergeInput, MergeOptions};
use spoor_order::Input;
use spoor_synth::{Spec, Workload};

fn synth(spec: &Spec) -> (Definitions, Vec<Event>) {
    let mut events = Vec::new();
    spoor_synth::generate(spec, &mut events).unwrap();
    (spoor_synth::definitions(spec), events)
}

fn binary(defs: &Definitions, events: &[Event]) -> Vec<u8> {
    let mut w =
        TraceWriter::new(Vec::new(), defs, WriterOptions { block_events: 64, ..Default::default() }).unwrap();
    for e in events {
        w.write(e).unwrap();
    }
    w.finish().unwrap()
}

fn read(bytes: Vec<u8>) -> (Definitions, Vec<Event>) {
    TraceReader::from_bytes("t", bytes, ReadOptions::default()).unwrap().read_all().unwrap()
}

fn per_location(n: usize, events: &[Event]) -> Vec<Vec<&Event>> {
    let mut v = vec![Vec::new(); n];
    for e in events {
        v[e.loc as usize].push(e);
    }
    v
}

/// Process p's clock: local = true + offset + drift * true.
fn clocks(procs: usize) -> Vec<(f64, f64)> {
    (0..procs)
        .map(|p| {
            if p == 0 {
                (0.0, 0.0)
            } else {
                let o = ((p * 7919) % 11) as f64 - 5.0; // -5 .. 5 ms
                let d = ((p * 104729) % 9) as f64 - 4.0; // -40 .. 40 ppm
                (o * 1e6 + 123.0 * p as f64, d * 1e-5)
            }
        })
        .collect()
}

/// The events on broken clocks, with samples against location 0 at each location's
/// start and end if asked for; and the true time of every event, per location.
fn break_clocks(defs: &Definitions, events: &[Event], samples: bool) -> (Vec<Event>, Vec<Vec<i64>>) {
    let n = defs.locations.len();
    let cl = clocks(defs.processes.len());
    let local = |loc: u32, t: i64| {
        let (o, d) = cl[defs.locations[loc as usize].process as usize];
        t + (o + d * t as f64).round() as i64
    };
    let per = per_location(n, events);
    let mut truth = vec![Vec::new(); n];
    let mut out = Vec::new();
    let sample = |loc: u32, t: i64| {
        let l = local(loc, t);
        Event::new(loc, l, None, Kind::ClockOffset { reference: 0, offset: t - l, error: 100 })
    };
    for (loc, evs) in per.iter().enumerate() {
        let loc = loc as u32;
        if samples && loc != 0 {
            let t = evs.first().map_or(0, |e| e.wall);
            out.push(sample(loc, t));
            truth[loc as usize].push(t);
        }
        for e in evs {
            let mut e = (*e).clone();
            truth[loc as usize].push(e.wall);
            e.wall = local(loc, e.wall);
            out.push(e);
        }
        if samples && loc != 0 {
            let t = evs.last().map_or(0, |e| e.wall);
            out.push(sample(loc, t));
            truth[loc as usize].push(t);
        }
    }
    (out, truth)
}

/// Largest |aligned − true| over all events.
fn worst(defs: &Definitions, aligned: &[Event], truth: &[Vec<i64>]) -> i64 {
    let per = per_location(defs.locations.len(), aligned);
    let mut worst = 0;
    for (l, evs) in per.iter().enumerate() {
        assert_eq!(evs.len(), truth[l].len());
        for (e, t) in evs.iter().zip(&truth[l]) {
            worst = worst.max((e.wall - t).abs());
            // The recorded time is kept where the time changed.
            assert_ne!(e.ann.raw_wall, Some(e.wall));
        }
    }
    worst
}

#[test]
fn messages_recover_offsets_and_drifts() {
    // Offsets of up to 5 ms and drifts of up to 40 ppm, over runs of about 40 ms, estimated
    // from the messages along a spanning tree. Tolerance: 10 ns and 0.1 ppm where some
    // messages each way are received as soon as they arrive (the stencil's halo
    // exchanges); where the fastest deliveries differ by direction, the method errs by half
    // the difference (master-worker: the busy master picks results up late), so 1 us there,
    // and the drift only as well as 1 us over the run allows (25 ppm).
    for (w, procs, tolerance, ppm) in [
        (Workload::Stencil, 6, 10, 0.1),
        (Workload::Stencil, 9, 10, 0.1),
        (Workload::MasterWorker, 5, 1_000, 25.0),
    ] {
        let spec = Spec { procs, steps: 40, ..Spec::new(w) };
        let (defs, events) = synth(&spec);
        let (broken, truth) = break_clocks(&defs, &events, false);
        let input = Input::from_bytes("broken", binary(&defs, &broken));
        let opts = AlignOptions { method: Method::Messages, ..AlignOptions::default() };
        let mut out = Vec::new();
        let rep = align::align(&input, &opts, &mut out).unwrap();
        assert!(rep.violations_before.total() > 0, "{w}: the broken clocks violate: {rep:?}");
        assert_eq!(rep.violations_after.total(), 0, "{w}: {}", rep.to_text());
        let (d2, aligned) = read(out);
        assert_eq!(d2, defs);
        let err = worst(&defs, &aligned, &truth);
        assert!(err <= tolerance, "{w} {procs}: worst error {err} ns\n{}", rep.to_text());
        // The reported corrections are the injected ones, at the start and at the end.
        let cl = clocks(defs.processes.len());
        for c in &rep.locations {
            let (o, d) = cl[defs.locations[c.location as usize].process as usize];
            let t_end = *truth[c.location as usize].last().unwrap() as f64;
            assert!((c.offset_start_ns as f64 + o).abs() <= tolerance as f64, "{w}: {c:?}");
            assert!((c.offset_end_ns as f64 + o + d * t_end).abs() <= tolerance as f64, "{w}: {c:?}");
            assert!((c.drift_ppm + d * 1e6).abs() < ppm, "{w}: {c:?}");
            assert_eq!(c.method, if c.location == 0 { "reference" } else { "messages" });
        }
    }
}

/// spoor-synth's own disagreeing clocks (machines of three processes each, offsets of up
/// to 50 us and drifts of up to 20 ppm): the messages give every process its machine's
/// clock back, as closely as the injected ones above, and no violation is left.
#[test]
fn messages_recover_the_synthesized_machine_clocks() {
    let spec = Spec {
        procs: 9,
        steps: 40,
        machines: Some(3),
        clock_offset_ns: 50_000,
        clock_drift_ppm: 20.0,
        ..Spec::new(Workload::Stencil)
    };
    let (defs, events) = synth(&spec);
    let input = Input::from_bytes("skewed", binary(&defs, &events));
    let opts = AlignOptions { method: Method::Messages, ..AlignOptions::default() };
    let rep = align::align(&input, &opts, &mut Vec::new()).unwrap();
    assert!(rep.violations_before.total() > 0, "{}", rep.to_text());
    assert_eq!(rep.violations_after.total(), 0, "{}", rep.to_text());
    for c in &rep.locations {
        let process = &defs.processes[defs.locations[c.location as usize].process as usize];
        let clock = spec.clock_of(process.machine);
        // The correction undoes the clock: at its reading r of true time t, t - r.
        let first = events.iter().find(|e| e.loc == c.location).unwrap().wall;
        let t = (first - clock.offset_ns) as f64 / (1.0 + clock.drift);
        assert!((c.offset_start_ns as f64 - (t - first as f64)).abs() <= 10.0, "{c:?} {clock:?}");
        assert!((c.drift_ppm + clock.drift * 1e6).abs() < 0.1, "{c:?} {clock:?}");
    }
}

#[test]
fn perfect_clocks_stay_untouched() {
    let spec = Spec { procs: 6, steps: 20, ..Spec::new(Workload::Stencil) };
    let (defs, events) = synth(&spec);
    let input = Input::from_bytes("synth", binary(&defs, &events));
    let mut out = Vec::new();
    let rep = align::align(&input, &AlignOptions::default(), &mut out).unwrap();
    assert_eq!(rep.violations_before.total(), 0);
    for c in &rep.locations {
        assert_eq!((c.offset_start_ns, c.offset_end_ns, c.clc_moved), (0, 0, 0), "{c:?}");
    }
    let (_, aligned) = read(out);
    assert_eq!(per_location(6, &aligned), per_location(6, &events));
}

#[test]
fn samples_recover_offsets_and_drifts_exactly() {
    // Tolerance: 2 ns (rounding), with samples at every location's start and end.
    let spec = Spec { procs: 6, steps: 20, ..Spec::new(Workload::Stencil) };
    let (defs, events) = synth(&spec);
    let (broken, truth) = break_clocks(&defs, &events, true);
    let input = Input::from_bytes("broken", binary(&defs, &broken));
    let mut out = Vec::new();
    let rep = align::align(&input, &AlignOptions::default(), &mut out).unwrap();
    assert_eq!(rep.violations_after.total(), 0);
    assert_eq!(rep.violations_after_offsets.total(), 0);
    let (_, aligned) = read(out);
    let err = worst(&defs, &aligned, &truth);
    assert!(err <= 2, "worst error {err} ns\n{}", rep.to_text());
    for c in &rep.locations[1..] {
        assert_eq!(c.method, "samples");
        assert_eq!(c.clc_moved, 0);
    }
}

#[test]
fn clc_alone_repairs_every_violation() {
    let spec = Spec { procs: 4, steps: 30, ..Spec::new(Workload::Ring) };
    let (defs, events) = synth(&spec);
    let (broken, _) = break_clocks(&defs, &events, false);
    let input = Input::from_bytes("broken", binary(&defs, &broken));
    for lmin in [0, 500, 5_000] {
        let opts = AlignOptions { method: Method::None, min_latency: lmin, ..AlignOptions::default() };
        let mut out = Vec::new();
        let rep = align::align(&input, &opts, &mut out).unwrap();
        assert!(rep.violations_before.total() > 0);
        assert_eq!(rep.violations_after.total(), 0, "lmin {lmin}: {}", rep.to_text());
        // Local order is kept: times never go backwards on a location.
        let (_, aligned) = read(out);
        for evs in per_location(defs.locations.len(), &aligned) {
            assert!(evs.windows(2).all(|w| w[0].wall <= w[1].wall));
        }
    }
}

#[test]
fn barrier_only_workload_aligns_from_collectives() {
    let spec = Spec { procs: 4, steps: 30, ..Spec::new(Workload::Barrier) };
    let (defs, events) = synth(&spec);
    let (broken, truth) = break_clocks(&defs, &events, false);
    let input = Input::from_bytes("broken", binary(&defs, &broken));
    let mut out = Vec::new();
    let rep = align::align(&input, &AlignOptions::default(), &mut out).unwrap();
    assert_eq!(rep.violations_after.total(), 0);
    assert!(rep.unaligned.is_empty(), "{}", rep.to_text());
    let (_, aligned) = read(out);
    // A barrier end follows the last begin by two transfer rounds whoever arrives last,
    // alike for every pair of neighbours: offsets come out within 10 ns.
    let err = worst(&defs, &aligned, &truth);
    assert!(err <= 10, "worst error {err} ns\n{}", rep.to_text());
}

/// One file per process: all definitions, only that process's events.
fn split(defs: &Definitions, events: &[Event]) -> Vec<Vec<u8>> {
    (0..defs.locations.len() as u32)
        .map(|l| {
            let mine: Vec<Event> = events.iter().filter(|e| e.loc == l).cloned().collect();
            binary(defs, &mine)
        })
        .collect()
}

#[test]
fn merge_puts_split_traces_back_together() {
    let spec = Spec { procs: 5, steps: 8, ..Spec::new(Workload::Pipeline) };
    let (defs, events) = synth(&spec);
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for (l, bytes) in split(&defs, &events).into_iter().enumerate().rev() {
        let p = dir.path().join(format!("rank{l}.spoor"));
        std::fs::write(&p, bytes).unwrap();
        inputs.push(MergeInput { path: p.to_string_lossy().into_owned(), app: None });
    }
    // Any input order: ids follow the first input's definitions, which are complete.
    // One event a block, so that the file shows the order of the merge.
    let mut out = Vec::new();
    let s = merge::merge(&inputs, &MergeOptions { block_events: 1, ..MergeOptions::default() }, &mut out)
        .unwrap();
    assert_eq!(s.events, events.len() as u64);
    let (d2, merged) = read(out);
    assert_eq!(d2, defs);
    assert_eq!(per_location(5, &merged), per_location(5, &events));
    // The merged stream is in time order across inputs (per-process inputs are).
    let walls: Vec<i64> = merged.iter().map(|e| e.wall).collect();
    let bad: Vec<_> = merged.windows(2).filter(|w| w[0].wall > w[1].wall).take(3).collect();
    assert!(walls.windows(2).all(|w| w[0] <= w[1]), "{bad:#?}");
    // Progress ends at every event of the inputs, which their end chunks count; a text
    // input counts its events as it is read whole.
    let text = dir.path().join("rank0.txt");
    let (d0, e0) = read(std::fs::read(dir.path().join("rank0.spoor")).unwrap());
    let mut t = Vec::new();
    spoor_format::text::write_header(&mut t).unwrap();
    spoor_format::text::write_definitions(&mut t, &d0).unwrap();
    for e in &e0 {
        spoor_format::text::write_event(&mut t, &d0, e).unwrap();
    }
    std::fs::write(&text, t).unwrap();
    let with_text: Vec<MergeInput> = inputs
        .iter()
        .map(|i| match i.path.ends_with("rank0.spoor") {
            true => MergeInput { path: text.to_string_lossy().into_owned(), app: None },
            false => i.clone(),
        })
        .collect();
    for (what, ins) in [("binary files", &inputs), ("a text input among them", &with_text)] {
        let seen = spoor_model::Collected::default();
        let opts = MergeOptions { block_events: 3, ..MergeOptions::default() };
        merge::merge_with_feedback(ins, &opts, &mut Vec::new(), &seen).unwrap();
        let n = events.len() as u64;
        assert_eq!(seen.last_progress(), Some(("events".to_owned(), n, Some(n))), "{what}");
        assert_eq!(seen.finished(), 1, "{what}");
    }
}

#[test]
fn merge_applications_and_comparison_mode() {
    let a = Spec { procs: 3, steps: 5, ..Spec::new(Workload::Ring) };
    let b = Spec { procs: 3, steps: 5, seed: 2, ..Spec::new(Workload::Ring) };
    let (da, ea) = synth(&a);
    let (db, mut eb) = synth(&b);
    // Run b was recorded an hour later.
    for e in &mut eb {
        e.wall += 3_600_000_000_000;
    }
    let dir = tempfile::tempdir().unwrap();
    let pa = dir.path().join("a.spoor");
    let pb = dir.path().join("b.spoor");
    std::fs::write(&pa, binary(&da, &ea)).unwrap();
    std::fs::write(&pb, binary(&db, &eb)).unwrap();
    let inputs = vec![
        MergeInput { path: pa.to_string_lossy().into_owned(), app: Some("before".into()) },
        MergeInput { path: pb.to_string_lossy().into_owned(), app: Some("after".into()) },
    ];
    // Same application name, same ranks: without --app the locations would collide.
    let plain: Vec<MergeInput> = inputs.iter().map(|i| MergeInput { app: None, ..i.clone() }).collect();
    let err = merge::merge(&plain, &MergeOptions::default(), &mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("--app"), "{err}");

    let opts = MergeOptions { compare: vec!["after".into()], ..MergeOptions::default() };
    let mut out = Vec::new();
    let s = merge::merge(&inputs, &opts, &mut out).unwrap();
    assert_eq!(s.shifts, vec![("before".to_owned(), 0), ("after".to_owned(), -3_600_000_000_000)]);
    let (d, merged) = read(out);
    assert_eq!(d.apps.len(), 2);
    assert_eq!(d.locations.len(), 6);
    assert_eq!(d.comms.len(), 2, "each run keeps its world communicator");
    // Machines are shared by name: node0..node2 once.
    assert_eq!(d.machines.len(), 3);
    let first =
        |app: u32| merged.iter().filter(|e| d.process_of(e.loc).unwrap().app == app).map(|e| e.wall).min();
    assert_eq!(first(0), first(1));
    assert_eq!(merged.len(), ea.len() + eb.len());
    // Unknown application names are a usage error.
    let bad = MergeOptions { compare: vec!["nope".into()], ..MergeOptions::default() };
    let e = merge::merge(&inputs, &bad, &mut Vec::new()).unwrap_err();
    assert!(matches!(e, spoor_order::Error::Usage(_)), "{e}");
}

/// Every workload with perfect clocks: the alignment decided from the synchronization
/// records alone (copying blocks) and the one replaying the controlled logical clock
/// over every event give the same trace and the same report; so do they on clocks
/// broken on purpose (where the replay is needed).
#[test]
fn proved_clocks_give_what_the_full_replay_gives() {
    let workloads = [
        Workload::Spa,
        Workload::Ring,
        Workload::Stencil,
        Workload::MasterWorker,
        Workload::Pipeline,
        Workload::Barrier,
    ];
    for w in workloads {
        let spec = Spec { procs: 5, steps: 12, ..Spec::new(w) };
        let (defs, events) = synth(&spec);
        let (broken, _) = break_clocks(&defs, &events, false);
        for (what, evs) in [("perfect", &events), ("broken", &broken)] {
            let input = Input::from_bytes("synth", binary(&defs, evs));
            for lat in [0, 1000, 200_000] {
                let run = |force: bool| {
                    let opts = AlignOptions {
                        min_latency: lat,
                        force_replay: force,
                        block_events: Some(64),
                        ..Default::default()
                    };
                    let mut out = Vec::new();
                    let rep = align::align(&input, &opts, &mut out).unwrap();
                    (out, serde_json::to_string(&rep).unwrap())
                };
                let (fast, fast_rep) = run(false);
                let (slow, slow_rep) = run(true);
                assert_eq!(fast_rep, slow_rep, "{w:?} {what} latency {lat}");
                assert!(fast == slow, "{w:?} {what} latency {lat}: the traces differ");
            }
        }
    }
}

/// spoor-order --align gives the bytes and the reports of spoor-align piped into
/// spoor-order, whether its proof that nothing moves holds (perfect clocks, no latency)
/// or not (broken clocks, a latency the stencil's messages do not have, the replay forced).
#[test]
fn align_and_order_in_one_gives_what_the_two_stages_give() {
    use spoor_order::order::{self, OrderOptions};
    let tmp = tempfile::tempdir().unwrap();
    let workloads = [Workload::Ring, Workload::Stencil, Workload::MasterWorker, Workload::Barrier];
    let mut spooled = [0, 0];
    for w in workloads {
        let (defs, events) = synth(&Spec { procs: 5, steps: 12, ..Spec::new(w) });
        let (broken, _) = break_clocks(&defs, &events, false);
        for (what, evs) in [("perfect", &events), ("broken", &broken)] {
            let input = Input::from_bytes("synth", binary(&defs, evs));
            for (lat, force) in [(0, false), (0, true), (200_000, false)] {
                let aopts = AlignOptions { min_latency: lat, force_replay: force, ..Default::default() };
                let oopts = OrderOptions { block_events: 100 };
                let mut aligned = Vec::new();
                let arep = align::align(&input, &aopts, &mut aligned).unwrap();
                let mut two = Vec::new();
                let orep = order::order(&Input::from_bytes("synth", aligned), &mut two, &oopts).unwrap();
                let mut one = Vec::new();
                let dir = || Ok(tmp.path().to_owned());
                let done =
                    align::align_and_order(&input, &aopts, &oopts, &dir, &mut one, &spoor_model::Silent)
                        .unwrap_or_else(|e| panic!("{w:?} {what} latency {lat}: {e}"));
                let case = format!("{w:?} {what} latency {lat} forced {force}");
                assert!(one == two, "{case}: the traces differ");
                assert_eq!(
                    serde_json::to_string(&done.align).unwrap(),
                    serde_json::to_string(&arep).unwrap()
                );
                assert_eq!(done.order.to_json(), orep.to_json(), "{case}");
                spooled[usize::from(done.spooled_bytes > 0)] += 1;
                assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "{case}: a file left behind");
            }
        }
    }
    assert!(spooled[0] > 0 && spooled[1] > 0, "both ways taken: {spooled:?}");
}

#[test]
fn merge_inside_a_pool_of_one_thread_runs_its_own_tasks() {
    // Called from a parallel job on a pool of one thread, the block by block merge must
    // run its inputs' tasks itself while it waits for them (else nobody would).
    let spec = Spec { procs: 6, steps: 9, ..Spec::new(Workload::Stencil) };
    let (defs, events) = synth(&spec);
    let dir = tempfile::tempdir().unwrap();
    let inputs: Vec<MergeInput> = split(&defs, &events)
        .into_iter()
        .enumerate()
        .map(|(l, bytes)| {
            let p = dir.path().join(format!("rank{l}.spoor"));
            std::fs::write(&p, bytes).unwrap();
            MergeInput { path: p.to_string_lossy().into_owned(), app: None }
        })
        .collect();
    let opts = MergeOptions { block_events: 4, ..MergeOptions::default() };
    let mut alone = Vec::new();
    merge::merge(&inputs, &opts, &mut alone).unwrap();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let inside = inputs.clone();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let r = pool.install(|| merge::merge(&inside, &opts, &mut out));
        let _ = tx.send(r.map(|_| out));
    });
    let out = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the merge finishes").unwrap();
    assert!(out == alone, "the same bytes inside the pool");
}

/// The ordered events handed on as briefs, over many blocks (each handed on by one of
/// several threads, in turn), are the briefs of the trace spoor-order writes, with and
/// without alignment, where the clocks agree and where they move.
#[test]
fn ordered_events_handed_on_are_those_of_the_written_trace() {
    use spoor_format::brief::Brief;
    use spoor_order::order::{self, OrderOptions, Sink};
    let tmp = tempfile::tempdir().unwrap();
    let dir = || Ok(tmp.path().to_owned());
    let (defs, events) = synth(&Spec { procs: 16, steps: 300, ..Spec::new(Workload::Stencil) });
    let (broken, _) = break_clocks(&defs, &events, false);
    let blocks = events.len() / spoor_format::GLOBAL_ORDER_BLOCK_EVENTS;
    assert!(blocks >= 4, "{} events: too few blocks", events.len());
    for (what, evs) in [("perfect", &events), ("broken", &broken)] {
        let input = Input::from_bytes("synth", binary(&defs, evs));
        for aligned in [false, true] {
            let mut written = Vec::new();
            let mut briefs = Vec::new();
            let mut hand_on = |b: &[Brief]| {
                briefs.extend_from_slice(b);
                Ok(())
            };
            let (aopts, oopts) = (AlignOptions::default(), OrderOptions::default());
            if aligned {
                align::align_and_order(&input, &aopts, &oopts, &dir, &mut written, &spoor_model::Silent)
                    .unwrap();
                align::align_and_order_to(
                    &input,
                    &aopts,
                    &dir,
                    Sink::briefs(&mut hand_on),
                    &spoor_model::Silent,
                )
                .unwrap();
            } else {
                order::order(&input, &mut written, &oopts).unwrap();
                order::order_to(&input, Sink::briefs(&mut hand_on), &spoor_model::Silent).unwrap();
            }
            let reader = spoor_format::TraceReader::from_bytes("o", written, Default::default()).unwrap();
            let expected: Vec<Brief> = reader.read_all().unwrap().1.iter().map(Brief::of).collect();
            assert_eq!(briefs.len(), expected.len(), "{what} aligned {aligned}");
            assert!(briefs == expected, "{what} aligned {aligned}: the events differ");
        }
    }
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "a file left behind");
}
