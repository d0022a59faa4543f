//! Ground truth from spoor-synth's injected bottlenecks, and the invariants of wait
//! states and root causes on every workload.

use spoor_format::{ReadOptions, TraceReader};
use spoor_model::Definitions;
use spoor_synth::{ExtraWork, Spec, Workload};
use spoor_testkit::{ms, ordered_bytes, synth_bytes};
use spoor_waits::{analyze, caused_by_delay, Pattern, WaitStates};

fn waits(spec: &Spec) -> (Definitions, WaitStates) {
    let ordered = ordered_bytes("synth", synth_bytes(spec));
    analyze(TraceReader::from_bytes("synth", ordered, ReadOptions::default()).unwrap()).unwrap()
}

fn late(ranks: &[u32], ns: u64) -> Vec<ExtraWork> {
    vec![ExtraWork { proc: "late".into(), ranks: ranks.to_vec(), ns }]
}

fn charged(w: &WaitStates) -> i64 {
    w.instances.iter().filter(|i| caused_by_delay(i.pattern)).map(|i| i.duration).sum()
}

/// Every other rank waits at each barrier exactly as long as the injected extra work,
/// and all of it is charged to that work.
#[test]
fn extra_work_before_a_barrier_is_every_wait_and_its_root_cause() {
    for ranks in [vec![2u32], vec![1, 2]] {
        let spec = Spec {
            procs: 4,
            steps: 5,
            imbalance: 0.0,
            extra: late(&ranks, 3_000_000),
            ..Spec::new(Workload::Barrier)
        };
        let (defs, w) = waits(&spec);
        let want = (4 - ranks.len() as i64) * ms(3.0) * 5;
        assert_eq!(w.pattern_total(Pattern::WaitAtBarrier).time_ns, want, "ranks {ranks:?}");
        assert_eq!(charged(&w), want, "nothing else waits: {:?}", w.instances);
        let c = &w.causes;
        let on_late: f64 = c
            .delays
            .iter()
            .filter(|d| w.callpaths.render(&defs, d.callpath) == "main > late")
            .inspect(|d| assert!(ranks.contains(&d.loc), "{d:?}"))
            .map(|d| d.cost_ns())
            .sum();
        assert!((on_late - want as f64).abs() < 1.0, "{on_late} of {want}: {:?}", c.delays);
    }
}

/// A serialization point and a hot lock before each barrier (4 ranks, 3 steps, 2 ms
/// each, no transfer or call costs): rank r waits r × 2 ms for the token or the lock and
/// then (3 − r) × 2 ms at the barrier, 36 ms of each in all; every wait is charged to the
/// work done while holding the token or the lock.
#[test]
fn a_serialization_point_and_a_hot_lock_are_every_wait_and_their_root_cause() {
    let base = Spec {
        procs: 4,
        steps: 3,
        imbalance: 0.0,
        latency_ns: 0,
        call_ns: 0,
        ..Spec::new(Workload::Barrier)
    };
    for (spec, pattern, path) in [
        (Spec { serial_ns: 2_000_000, ..base.clone() }, Pattern::LateSender, "main > serial"),
        (Spec { hot_lock_ns: 2_000_000, ..base.clone() }, Pattern::LockContention, "main > critical"),
    ] {
        let (defs, w) = waits(&spec);
        assert_eq!(w.pattern_total(pattern).time_ns, ms(36.0), "{pattern:?}");
        assert_eq!(w.pattern_total(Pattern::WaitAtBarrier).time_ns, ms(36.0), "{pattern:?}");
        assert_eq!(charged(&w), ms(72.0), "{:?}", w.instances);
        let on: f64 = w
            .causes
            .delays
            .iter()
            .filter(|d| w.callpaths.render(&defs, d.callpath) == path)
            .map(|d| d.cost_ns())
            .sum();
        assert!((on - ms(72.0) as f64).abs() < 1.0, "{pattern:?}: {on}: {:?}", w.causes);
    }
}

/// Extra work on one rank of a stencil: its neighbours wait for its halo (late senders),
/// the others at the allreduce; the largest root cause is that rank's extra work, and
/// it accounts for the waits the injection added.
#[test]
fn extra_work_in_a_stencil_is_found_as_the_root_cause() {
    let base = Spec { procs: 16, steps: 6, imbalance: 0.0, ..Spec::new(Workload::Stencil) };
    let (_, w0) = waits(&base);
    let spec = Spec { extra: late(&[5], 2_000_000), ..base.clone() };
    let (defs, w) = waits(&spec);
    let added = charged(&w) - charged(&w0);
    // 15 ranks held back 2 ms in each of 6 steps, give or take the call costs.
    assert!((added - 15 * ms(2.0) * 6).abs() < ms(0.5), "{added}");
    assert!(
        w.pattern_total(Pattern::LateSender).time_ns > 0 && w.pattern_total(Pattern::WaitAtNxN).time_ns > 0
    );
    let top = &w.causes.delays[0];
    assert_eq!((top.loc, w.callpaths.render(&defs, top.callpath).as_str()), (5, "main > late"));
    assert!(top.cost_ns() > 0.9 * added as f64, "{top:?} of {added}");
}

/// On every workload: waits lie inside the location's span and never overlap, and the
/// costs of all delays plus what found no work equal the charged waits.
#[test]
fn invariants_on_every_workload() {
    for wl in Workload::ALL {
        for seed in 1..4 {
            let spec = Spec { procs: 6.max(wl.min_procs()), steps: 5, seed, imbalance: 0.5, ..Spec::new(wl) };
            let (_, w) = waits(&spec);
            for pair in w.instances.windows(2) {
                if pair[0].loc == pair[1].loc {
                    assert!(pair[0].start + pair[0].duration <= pair[1].start, "{wl:?}: {pair:?}");
                }
            }
            assert!(w.instances.iter().all(|i| i.duration > 0));
            let c = &w.causes;
            let total: f64 = c.delays.iter().map(|d| d.cost_ns()).sum::<f64>() + c.unattributed_ns;
            let want = charged(&w) as f64;
            assert!(
                (total - want).abs() <= 1e-6 * want.max(1.0),
                "{wl:?} seed {seed}: {total} against {want}"
            );
            assert_eq!(w.unmatched, 0);
            assert_eq!((w.open_sends, w.open_collectives), (0, 0), "{wl:?}");
        }
    }
}

/// A slow link between ranks 1 and 2 of a pipeline (3 ms more a message): rank 2 receives
/// every item late, so rank 3 waits for it, and the root cause of what the link adds is
/// rank 2's time in MPI_Recv, on the slow link's receiving side.
#[test]
fn a_slow_link_is_found_at_its_receiving_end() {
    let s = Spec { procs: 4, steps: 6, imbalance: 0.0, ..Spec::new(Workload::Pipeline) };
    let slow = Spec { slow_link: Some(spoor_synth::SlowLink { a: 1, b: 2, ns: 3_000_000 }), ..s.clone() };
    let (_, w0) = waits(&s);
    let (defs, w) = waits(&slow);
    let top = &w.causes.delays[0];
    assert_eq!(
        (top.loc, w.callpaths.render(&defs, top.callpath).as_str()),
        (2, "main > MPI_Recv"),
        "{:?}",
        w.causes
    );
    let added = charged(&w) - charged(&w0);
    assert!(
        added > 0 && (top.cost_ns() - added as f64).abs() < 0.05 * added as f64,
        "{top:?} against {added}"
    );
}

/// The root causes are found over stretches of the waits, one a thread: the same delays,
/// costs and classes on one thread as on several.
#[test]
fn root_causes_are_the_same_on_one_and_several_threads() {
    let spec = Spec { procs: 16, steps: 20, extra: late(&[3, 9], 1_500_000), ..Spec::new(Workload::Stencil) };
    let run = |n| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
        pool.install(|| waits(&spec).1)
    };
    let (one, three) = (run(1), run(3));
    assert!(one.causes.delays.len() > 1 && one.causes.waits.iter().filter(|w| w.is_some()).count() > 100);
    same_causes(&one, &three);
    // Stretches far smaller than the waits: many found while the one before is applied.
    for (threads, stretch) in [(1, 1), (1, 7), (3, 5), (2, 64)] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let ordered = ordered_bytes("synth", synth_bytes(&spec));
        let small = pool.install(|| {
            let mut r = TraceReader::from_bytes("synth", ordered, ReadOptions::default()).unwrap();
            let defs = r.defs().clone();
            let mut w = spoor_waits::Waits::new(&defs).with_stretch(stretch);
            while let Some(b) = r.next_block().unwrap() {
                for e in &b.events {
                    w.event(&defs, e);
                }
            }
            w.finish(r.defs(), "synth").unwrap()
        });
        same_causes(&one, &small);
    }
}

fn same_causes(a: &WaitStates, b: &WaitStates) {
    assert_eq!(a.instances, b.instances);
    assert_eq!(a.causes.delays, b.causes.delays);
    assert_eq!(a.causes.waits, b.causes.waits);
    assert_eq!(a.causes.unattributed_ns.to_bits(), b.causes.unattributed_ns.to_bits());
}

/// Kept in a spill file (its pages let go many times over, its vectors moved as they
/// grow), the fold and the root causes give what they give in memory: on every workload,
/// with extra work, a serialization point and a hot lock, over small stretches.
#[test]
fn spilled_wait_states_are_the_same_as_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut specs: Vec<Spec> = Workload::ALL
        .iter()
        .map(|&w| {
            // Master-worker's tasks go to whichever worker is free: no extra work there.
            let extra = if w == Workload::MasterWorker { Vec::new() } else { late(&[2, 7], 900_000) };
            Spec { procs: 12, steps: 30, extra, ..Spec::new(w) }
        })
        .collect();
    specs.push(Spec {
        procs: 8,
        steps: 20,
        serial_ns: 300_000,
        hot_lock_ns: 200_000,
        ..Spec::new(Workload::Barrier)
    });
    for spec in &specs {
        let ordered = ordered_bytes("synth", synth_bytes(spec));
        let fold = |arena: Option<std::sync::Arc<spoor_format::spill::Arena>>| {
            let mut r = TraceReader::from_bytes("synth", ordered.clone(), ReadOptions::default()).unwrap();
            let defs = r.defs().clone();
            let mut w = spoor_waits::Waits::new_in(&defs, arena).with_stretch(37);
            while let Some(b) = r.next_block().unwrap() {
                w.events(&defs, &b.events);
            }
            w.finish(r.defs(), "synth").unwrap()
        };
        let arena = spoor_format::spill::Arena::new(dir.path()).unwrap();
        let (memory, spilled) = (fold(None), fold(Some(arena.clone())));
        assert!(spilled.instances.is_spilled() && spilled.causes.waits.is_spilled());
        assert!(memory.instances.len() > 20, "{:?}: {} waits", spec.workload, memory.instances.len());
        same_causes(&memory, &spilled);
        assert_eq!(memory.totals, spilled.totals);
        assert!(arena.most_bytes() > 0 && arena.error().is_none());
    }
    // The file was unlinked when made: nothing is left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
