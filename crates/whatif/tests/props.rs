//! Invariants of the prediction on every synthetic workload, and on random
//! embarrassingly parallel programs.

use proptest::prelude::*;
use spoor_graph::pag::NONE;
use spoor_graph::{build, cp, file, CpOptions, Mode, Pag};
use spoor_model::{Definitions, Event, Kind};
use spoor_synth::{Spec, Workload};
use spoor_testkit::{pag_of_bytes, synth_bytes, synth_pag};
use spoor_whatif::{build_gag, predict, Costs, PlaceBy, Placement, Sharing};

/// Both ways a processor is shared, slices short enough to take turns often.
const SHARINGS: [Sharing; 2] = [Sharing::Equal, Sharing::Slices(50_000.0)];

fn spec(w: Workload, procs: u32, steps: u64, seed: u64) -> Spec {
    Spec { procs: procs.max(w.min_procs()), steps, seed, imbalance: 0.5, ..Spec::new(w) }
}

fn total_cpu(pag: &Pag) -> i64 {
    (0..pag.nodes()).filter(|&i| pag.loc[i] != NONE).map(|i| pag.weight[i]).sum()
}

#[test]
fn one_process_per_processor_predicts_the_cpu_critical_path_on_every_workload() {
    for w in Workload::ALL {
        for seed in 1..4 {
            for apps in [1, 2] {
                let s = Spec { apps, ..spec(w, 5, 6, seed) };
                let pag = synth_pag(&s, Mode::Cpu);
                let cpu = cp::length(&pag, &CpOptions::default());
                let place = Placement::by(&pag, PlaceBy::Process);
                for sharing in SHARINGS {
                    let (gag, pred) =
                        build_gag(&pag, &place, &Costs { sharing, ..Costs::default() }).unwrap();
                    assert_eq!(pred.time_ns, cpu, "{w:?} seed {seed} apps {apps} {sharing:?}");
                    assert_eq!(pred.events as usize, pag.nodes());
                    assert_eq!(cp::length(&gag, &CpOptions::default()), cpu, "{w:?}: the GAG's own path");
                }
            }
        }
    }
}

/// A stretch of a run is predicted on its sub-PAG: with one process per processor, the
/// cpu-mode critical path of that window (spoor-cp --window), on every workload.
#[test]
fn a_stretch_on_its_own_processors_predicts_the_windows_cpu_critical_path() {
    for w in Workload::ALL {
        for seed in 1..3 {
            let pag = synth_pag(&spec(w, 5, 8, seed), Mode::Cpu);
            let (first, last) = pag.activity_span().unwrap();
            for (a, b) in [(0.25, 0.75), (0.6, 1.0)] {
                let at = |f: f64| first + ((last - first) as f64 * f) as i64;
                let win = (at(a), at(b));
                let windowed = cp::length(&pag, &CpOptions { window: Some(win), ..CpOptions::default() });
                let sub = pag.within(win);
                let place = Placement::by(&sub, PlaceBy::Process);
                let (gag, pred) = build_gag(&sub, &place, &Costs::default()).unwrap();
                assert_eq!(pred.time_ns, windowed, "{w:?} seed {seed} {win:?}");
                assert_eq!(cp::length(&gag, &CpOptions::default()), windowed, "{w:?}: the GAG's own path");
            }
        }
    }
}

#[test]
fn one_processor_for_all_predicts_at_least_the_sum_of_cpu_times() {
    for w in Workload::ALL {
        for seed in 1..4 {
            let pag = synth_pag(&spec(w, 6, 5, seed), Mode::Cpu);
            for sharing in SHARINGS {
                let costs = Costs { sharing, ..Costs::default() };
                let pred = predict(&pag, &Placement::by(&pag, PlaceBy::Block(1)), &costs).unwrap();
                assert!(
                    pred.time_ns >= total_cpu(&pag),
                    "{w:?} seed {seed} {sharing:?}: {} < {}",
                    pred.time_ns,
                    total_cpu(&pag)
                );
                // And never less than with more processors' worth of sharing removed.
                let cpu = cp::length(&pag, &CpOptions::default());
                assert!(pred.time_ns >= cpu, "{w:?}");
            }
        }
    }
}

#[test]
fn gag_critical_path_is_the_prediction_for_every_placement() {
    for w in Workload::ALL {
        let pag = synth_pag(&spec(w, 7, 5, 3), Mode::Cpu);
        for rule in [
            PlaceBy::Block(1),
            PlaceBy::Block(2),
            PlaceBy::Block(3),
            PlaceBy::Cyclic(2),
            PlaceBy::Cyclic(4),
            PlaceBy::Machine,
        ] {
            let place = Placement::by(&pag, rule);
            let sliced = Costs { sharing: SHARINGS[1], ..Costs::default() };
            let (gag, pred) = build_gag(&pag, &place, &sliced).unwrap();
            assert_eq!(cp::length(&gag, &CpOptions::default()), pred.time_ns, "{w:?} {rule:?} in slices");
            assert_eq!(predict(&pag, &place, &sliced).unwrap(), pred, "{w:?} {rule:?} in slices");
            let (gag, pred) = build_gag(&pag, &place, &Costs::default()).unwrap();
            assert_eq!(cp::length(&gag, &CpOptions::default()), pred.time_ns, "{w:?} {rule:?}");
            assert_eq!(predict(&pag, &place, &Costs::default()).unwrap(), pred, "{w:?} {rule:?}");
            // The GAG is a PAG file like any other.
            let mut bytes = Vec::new();
            file::write(&mut bytes, &gag).unwrap();
            let back = file::read("gag", &bytes[..]).unwrap();
            assert_eq!(cp::length(&back, &CpOptions::default()), pred.time_ns);
            assert_eq!(back.defs.locations.len(), place.groups());
        }
    }
}

/// Hundreds of processes: collectives with more than 255 remote arcs out of one node,
/// long queues per location, many messages in flight and slots reused many times over
/// (the simulation's slabs, rings and origin map). The invariants still hold exactly.
#[test]
fn hundreds_of_processes_with_many_messages_in_flight() {
    for w in Workload::ALL {
        let s = Spec { procs: 300, steps: 4, seed: 7, imbalance: 0.9, ..Spec::new(w) };
        let pag = synth_pag(&s, Mode::Cpu);
        let cpu = cp::length(&pag, &CpOptions::default());
        let place = Placement::by(&pag, PlaceBy::Process);
        let (gag, pred) = build_gag(&pag, &place, &Costs::default()).unwrap();
        assert_eq!(pred.time_ns, cpu, "{w:?}: one process per processor");
        assert_eq!(pred.events as usize, pag.nodes(), "{w:?}");
        assert_eq!(cp::length(&gag, &CpOptions::default()), cpu, "{w:?}: the GAG's own path");
        for rule in [PlaceBy::Cyclic(7), PlaceBy::Block(64), PlaceBy::Block(1)] {
            let place = Placement::by(&pag, rule);
            let sliced = Costs { sharing: SHARINGS[1], ..Costs::default() };
            let (gag, pred) = build_gag(&pag, &place, &sliced).unwrap();
            assert_eq!(cp::length(&gag, &CpOptions::default()), pred.time_ns, "{w:?} {rule:?} in slices");
            assert_eq!(predict(&pag, &place, &sliced).unwrap(), pred, "{w:?} {rule:?} in slices");
            let (gag, pred) = build_gag(&pag, &place, &Costs::default()).unwrap();
            assert_eq!(cp::length(&gag, &CpOptions::default()), pred.time_ns, "{w:?} {rule:?}");
            assert_eq!(predict(&pag, &place, &Costs::default()).unwrap(), pred, "{w:?} {rule:?}");
            assert!(pred.time_ns >= cpu, "{w:?} {rule:?}");
            assert_eq!(pred.events as usize, pag.nodes(), "{w:?} {rule:?}");
        }
    }
}

#[test]
fn results_are_identical_on_one_and_many_threads() {
    let bytes = synth_bytes(&Spec { procs: 12, steps: 20, ..Spec::new(Workload::Stencil) });
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let pag = pag_of_bytes("synth", bytes.clone(), Mode::Cpu);
            let place = Placement::by(&pag, PlaceBy::Cyclic(5));
            let (gag, pred) = build_gag(&pag, &place, &Costs::default()).unwrap();
            let mut f = Vec::new();
            file::write(&mut f, &gag).unwrap();
            (f, pred)
        })
    };
    assert_eq!(run(1), run(4));
}

/// An embarrassingly parallel program: independent processes, each computing in a few
/// procedure calls; no messages.
fn parallel(works: &[Vec<i64>]) -> Pag {
    let mut defs = Definitions::new();
    let app = defs.add_app("ep");
    let m = defs.add_machine("node0");
    let f = defs.strings.intern("work");
    for (r, _) in works.iter().enumerate() {
        let p = defs.add_process(&format!("rank{r}"), app, m, r as u32);
        defs.add_location(&format!("rank{r}"), p, 0);
    }
    let mut events = Vec::new();
    for (r, calls) in works.iter().enumerate() {
        let mut t = 0i64;
        let ev = |t: i64, kind: Kind| Event::new(r as u32, t, Some(t), kind);
        events.push(ev(0, Kind::ProcessBegin { parent: None }));
        for &w in calls {
            events.push(ev(t, Kind::Enter { proc: f }));
            t += w;
            events.push(ev(t, Kind::Leave { proc: f }));
        }
        events.push(ev(t, Kind::ProcessEnd));
    }
    build::build_from_events("ep", &defs, &events, Mode::Cpu).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// For an embarrassingly parallel program each processor finishes after the sum of
    /// its processes' CPU times, and splitting a processor's processes over two never
    /// predicts a longer time.
    #[test]
    fn more_processors_never_predict_longer_for_embarrassingly_parallel_programs(
        works in prop::collection::vec(prop::collection::vec(1i64..50_000, 1..5), 2..9),
        seed in any::<u64>(),
    ) {
        let pag = parallel(&works);
        let p = works.len();
        let sums: Vec<i64> = works.iter().map(|w| w.iter().sum()).collect();
        // Start with all on one processor, then split a group in two until each process
        // has its own; the prediction must never grow and must equal the largest sum.
        let mut group_of = vec![0u32; p];
        let mut groups = 1u32;
        let mut rng = seed;
        let mut last = i64::MAX;
        loop {
            let place = Placement { group_of: group_of.clone(), names: (0..groups).map(|g| format!("cpu{g}")).collect() };
            let pred = predict(&pag, &place, &Costs::default()).unwrap().time_ns;
            let expect = (0..groups).map(|g| (0..p).filter(|&i| group_of[i] == g).map(|i| sums[i]).sum::<i64>()).max().unwrap();
            prop_assert_eq!(pred, expect);
            prop_assert!(pred <= last);
            last = pred;
            // Split the first group with at least two processes.
            let Some(g) = (0..groups).find(|&g| group_of.iter().filter(|&&x| x == g).count() > 1) else { break };
            let members: Vec<usize> = (0..p).filter(|&i| group_of[i] == g).collect();
            let mut moved = 0;
            for (k, &i) in members.iter().enumerate() {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if (rng >> 33) & 1 == 1 && k > 0 || (k == members.len() - 1 && moved == 0) {
                    group_of[i] = groups;
                    moved += 1;
                }
            }
            groups += 1;
        }
        prop_assert_eq!(last, *sums.iter().max().unwrap());
    }

    /// Random placements of a random workload: the GAG's critical path is the
    /// prediction, it is at least the cpu-mode critical path, and merging two
    /// processors never makes a prediction shorter than the total work of either.
    #[test]
    fn random_placements_of_workloads(w in 0usize..6, seed in 1u64..1000, k in 1u32..6) {
        let w = Workload::ALL[w];
        let pag = synth_pag(&spec(w, 6, 3, seed), Mode::Cpu);
        let procs = pag.defs.processes.len();
        let mut rng = seed;
        let group_of: Vec<u32> = (0..procs).map(|_| {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((rng >> 33) % k as u64) as u32
        }).collect();
        let mut used: Vec<u32> = group_of.clone();
        used.sort_unstable();
        used.dedup();
        let group_of: Vec<u32> = group_of.iter().map(|g| used.binary_search(g).unwrap() as u32).collect();
        let place = Placement { group_of: group_of.clone(), names: used.iter().map(|g| format!("cpu{g}")).collect() };
        let (gag, pred) = build_gag(&pag, &place, &Costs::default()).unwrap();
        prop_assert_eq!(cp::length(&gag, &CpOptions::default()), pred.time_ns);
        prop_assert!(pred.time_ns >= cp::length(&pag, &CpOptions::default()));
        for g in 0..place.groups() as u32 {
            let work: i64 = (0..pag.nodes())
                .filter(|&i| pag.loc[i] != NONE && group_of[pag.defs.locations[pag.loc[i] as usize].process as usize] == g)
                .map(|i| pag.weight[i]).sum();
            prop_assert!(pred.time_ns >= work);
        }
    }
}

/// A graph kept in a file (as one larger than memory is) predicts what it does in
/// memory, with every table the simulation makes beside it there too (the network's
/// sends in order, the weights with its overhead), and gives the same GAG, made into
/// the same file, and the same weights for a moved procedure.
#[test]
fn a_graph_in_a_file_predicts_what_it_does_in_memory() {
    use spoor_graph::{NetTable, Network};
    let dir = tempfile::tempdir().unwrap();
    let arena = spoor_format::spill::Arena::new(dir.path()).unwrap();
    let (table, _) = NetTable::parse("t", "bytes,local_ns,remote_ns\n0,500,20000\n").unwrap();
    let net = Network {
        links_in: Some(1),
        links_out: Some(1),
        overhead_ns: 700,
        connect_ns: 5_000,
        ..Network::from_table(table)
    };
    let gag_bytes = |gag: &Pag| {
        let mut out = Vec::new();
        file::write(&mut out, gag).unwrap();
        out
    };
    for w in Workload::ALL {
        let trace = dir.path().join(format!("{w:?}.spoor"));
        let bytes = spoor_testkit::ordered_bytes("synth", synth_bytes(&spec(w, 6, 60, 2)));
        std::fs::write(&trace, bytes).unwrap();
        let trace = trace.to_str().unwrap();
        let memory = file::load(trace, Mode::Cpu, None, &spoor_model::Silent).unwrap();
        let spilled = file::load_in(trace, Mode::Cpu, None, &spoor_model::Silent, Some(&arena)).unwrap();
        let place = Placement::by(&memory, PlaceBy::Cyclic(2));
        for costs in [Costs::default(), Costs { net: Some(&net), ..Costs::default() }] {
            let (gag, pred) = build_gag(&memory, &place, &costs).unwrap();
            let (gag_spilled, pred_spilled) = build_gag(&spilled, &place, &costs).unwrap();
            arena.release();
            assert_eq!(pred_spilled, pred, "{w:?}");
            assert!(gag_spilled.loc.is_spilled(), "{w:?}: the GAG beside its PAG");
            assert!(gag_bytes(&gag_spilled) == gag_bytes(&gag), "{w:?}: another GAG");
        }
        // The procedure with the most time, moved.
        let busiest = (0..memory.nodes())
            .filter(|&i| memory.ctx[i] != 0)
            .max_by_key(|&i| memory.weight[i])
            .map(|i| memory.contexts[memory.ctx[i] as usize].proc);
        if let Some(proc) = busiest {
            let moved = spoor_whatif::procedure::move_weights(&spilled, proc).unwrap();
            assert!(moved.weight.is_spilled());
            assert_eq!(
                moved.weight,
                spoor_whatif::procedure::move_weights(&memory, proc).unwrap().weight,
                "{w:?}"
            );
        }
    }
    assert!(arena.error().is_none());
}

/// Once a graph's file can grow no more (the disk full), what would make more beside the
/// graph says so, and nothing panics: a stretch cut from it, a procedure moved, a
/// prediction and a GAG are errors; a forward pass takes memory instead, its length the
/// same.
#[test]
fn a_graph_whose_file_is_full_is_an_error_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let arena = spoor_format::spill::Arena::new(dir.path()).unwrap();
    let trace = dir.path().join("t.spoor");
    let spec = spec(Workload::Stencil, 6, 40, 1);
    std::fs::write(&trace, spoor_testkit::ordered_bytes("synth", synth_bytes(&spec))).unwrap();
    let trace = trace.to_str().unwrap();
    let memory = file::load(trace, Mode::Cpu, None, &spoor_model::Silent).unwrap();
    let pag = file::load_in(trace, Mode::Cpu, None, &spoor_model::Silent, Some(&arena)).unwrap();
    // More than the file may ever take: the arena fails.
    let mut huge: spoor_format::spill::SpillVec<u64> = spoor_format::spill::SpillVec::new_in(Some(&arena));
    huge.reserve(usize::MAX / 16);
    assert!(arena.failed());
    let full = |e: spoor_graph::Error| assert!(matches!(e, spoor_graph::Error::Spill(_)), "{e:?}");
    let place = Placement::by(&pag, PlaceBy::Cyclic(2));
    full(predict(&pag, &place, &Costs::default()).unwrap_err());
    full(build_gag(&pag, &place, &Costs::default()).unwrap_err());
    let proc = pag.contexts[pag.ctx[pag.nodes() / 2] as usize].proc;
    full(spoor_whatif::procedure::move_weights(&pag, proc).unwrap_err());
    let zeroed = CpOptions { zero: vec![proc], ..CpOptions::default() };
    assert_eq!(cp::length(&pag, &zeroed), cp::length(&memory, &zeroed));
    let (t0, t1) = pag.activity_span().unwrap();
    let stretch = spoor_whatif::Stretch { window: Some((t0, (t0 + t1) / 2)), note: None };
    full(spoor_whatif::stretch::cut(pag, &stretch).unwrap_err());
}
