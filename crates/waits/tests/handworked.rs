//! Wait states of the hand-written traces of testdata/waits (and testdata/late-sender.txt):
//! each figure is worked out by hand in the comment at the top of its file.

use spoor_format::{ReadOptions, TraceReader};
use spoor_model::Definitions;
use spoor_testkit::{ms, ordered_bytes, testdata};
use spoor_waits::{analyze, proc_name, Error, Pattern, WaitStates};

fn waits_of(rel: &str) -> (Definitions, WaitStates) {
    let path = testdata(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let ordered = ordered_bytes(&path, bytes);
    analyze(TraceReader::from_bytes(&path, ordered, ReadOptions::default()).unwrap()).unwrap()
}

/// (pattern, location, procedure, start, duration) of every instance, in order.
fn instances(defs: &Definitions, w: &WaitStates) -> Vec<(Pattern, u32, String, i64, i64)> {
    w.instances.iter().map(|i| (i.pattern, i.loc, proc_name(defs, i.proc), i.start, i.duration)).collect()
}

/// Overlapping waits on one location, and waits outside the trace's span.
fn check_invariants(w: &WaitStates) {
    for pair in w.instances.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.loc == b.loc {
            assert!(a.start + a.duration <= b.start, "overlapping waits: {a:?} and {b:?}");
        }
        assert!(a.duration > 0);
    }
}

#[test]
fn late_sender_and_barrier() {
    let (defs, w) = waits_of("late-sender.txt");
    check_invariants(&w);
    let got = instances(&defs, &w);
    let want = vec![
        (Pattern::WaitAtBarrier, 0, "main".to_owned(), ms(10.05), ms(0.11)),
        (Pattern::BarrierCompletion, 0, "main".to_owned(), ms(10.19), ms(0.01)),
        (Pattern::LateSender, 1, "main".to_owned(), ms(2.0), ms(8.03)),
        (Pattern::WaitAtBarrier, 1, "main".to_owned(), ms(10.12), ms(0.04)),
        (Pattern::BarrierCompletion, 1, "main".to_owned(), ms(10.19), ms(0.01)),
        (Pattern::LateSender, 2, "main".to_owned(), ms(1.0), ms(9.10)),
    ];
    assert_eq!(got, want);
    // The late sender's cause is rank 0's send (its event 4).
    assert_eq!(w.instances[2].cause, Some(spoor_model::EventRef { loc: 0, index: 4 }));
    assert_eq!(w.pattern_total(Pattern::LateSender).time_ns, ms(17.13));
    assert_eq!(w.pattern_total(Pattern::LateSender).count, 2);
}

#[test]
fn late_sender_in_the_wrong_order() {
    let (defs, w) = waits_of("waits/wrong-order.txt");
    check_invariants(&w);
    let got = instances(&defs, &w);
    let want = vec![
        (Pattern::LateSender, 1, "MPI_Recv".to_owned(), ms(7.0), ms(2.0)),
        (Pattern::LateSenderWrongOrder, 2, "MPI_Recv".to_owned(), ms(2.0), ms(3.0)),
    ];
    assert_eq!(got, want);
    assert_eq!(w.callpaths.render(&defs, w.instances[1].callpath), "MPI_Recv");
}

#[test]
fn late_receiver() {
    let (defs, w) = waits_of("waits/late-receiver.txt");
    check_invariants(&w);
    assert_eq!(
        instances(&defs, &w),
        vec![(Pattern::LateReceiver, 0, "MPI_Send".to_owned(), ms(1.0), ms(3.0))]
    );
}

#[test]
fn completions_of_non_blocking_receives() {
    let (defs, w) = waits_of("waits/nonblocking.txt");
    check_invariants(&w);
    let ls = |p: &str, start: f64, d: f64| (Pattern::LateSender, 1, p.to_owned(), ms(start), ms(d));
    let want = vec![
        ls("MPI_Wait", 2.0, 3.0),
        ls("MPI_Waitall", 10.0, 2.0),
        ls("MPI_Waitall", 12.0, 3.0),
        ls("MPI_Test", 21.0, 3.0),
        ls("MPI_Test", 27.5, 0.5),
    ];
    assert_eq!(instances(&defs, &w), want);
}

#[test]
fn collectives_init_finalize_and_a_lock() {
    let (defs, w) = waits_of("waits/collectives.txt");
    check_invariants(&w);
    let i =
        |p: Pattern, loc: u32, proc: &str, start: f64, d: f64| (p, loc, proc.to_owned(), ms(start), ms(d));
    use Pattern::*;
    let want = vec![
        i(WaitAtNxN, 0, "MPI_Allreduce", 2.0, 4.0),
        i(LateBroadcast, 0, "MPI_Bcast", 8.0, 2.0),
        i(EarlyReduce, 0, "MPI_Reduce", 12.0, 2.0),
        i(WaitAtBarrier, 0, "MPI_Barrier", 20.0, 3.0),
        i(LockContention, 0, "(outside any procedure)", 31.0, 3.0),
        i(WaitAtFinalize, 0, "MPI_Finalize", 40.0, 4.0),
        i(InitCompletion, 1, "MPI_Init", 1.0, 0.2),
        i(WaitAtNxN, 1, "MPI_Allreduce", 3.0, 3.0),
        i(NxNCompletion, 1, "MPI_Allreduce", 6.2, 0.1),
        i(WaitAtBarrier, 1, "MPI_Barrier", 21.0, 2.0),
        i(BarrierCompletion, 1, "MPI_Barrier", 23.1, 0.1),
        i(WaitAtFinalize, 1, "MPI_Finalize", 41.0, 3.0),
        i(FinalizeCompletion, 1, "MPI_Finalize", 44.5, 0.1),
        i(InitCompletion, 2, "MPI_Init", 1.0, 0.5),
        i(NxNCompletion, 2, "MPI_Allreduce", 6.2, 0.2),
        i(BarrierCompletion, 2, "MPI_Barrier", 23.1, 0.2),
        i(FinalizeCompletion, 2, "MPI_Finalize", 44.5, 0.2),
    ];
    assert_eq!(instances(&defs, &w), want);
    // Totals by pattern × procedure × process.
    let allreduce = defs.strings.lookup("MPI_Allreduce").unwrap();
    assert_eq!(w.totals[&(WaitAtNxN, allreduce, 0)].time_ns, ms(4.0));
    assert_eq!(w.totals[&(WaitAtNxN, allreduce, 1)].time_ns, ms(3.0));
    assert_eq!(w.pattern_total(WaitAtNxN).time_ns, ms(7.0));
}

#[test]
fn an_unordered_trace_is_refused_with_the_command_that_orders_it() {
    let path = testdata("late-sender.txt");
    let r = TraceReader::open(&path, ReadOptions::default()).unwrap();
    let e = analyze(r).unwrap_err();
    assert!(matches!(e, Error::NotOrdered(_)));
    assert!(e.to_string().contains("spoor-order"), "{e}");
}

#[test]
fn pattern_names_round_trip_and_unknown_ones_list_the_patterns() {
    for p in Pattern::ALL {
        assert_eq!(Pattern::parse(p.name()), Ok(p));
    }
    let e = Pattern::parse("late_everything").unwrap_err();
    assert!(e.contains("late_sender, late_sender_wrong_order"), "{e}");
}

/// Root causes of late-sender.txt, worked out by hand (formats/waits.md, "Root causes"):
/// rank 1 waits 8.03 ms for rank 0, which computed 10 ms in `compute` while rank 1 did
/// nothing comparable: all of it is charged to rank 0's `compute`, short term. Rank 2
/// waits 9.10 ms for rank 1, which since the start did 1.07 ms more in `main` than rank 2
/// and waited 8.03 ms: 1.07 ms is charged to rank 1's `main`, 8.03 ms passes on to rank
/// 1's wait and from there to rank 0's `compute`, long term. The barrier waits pass small
/// amounts along the same chain. Every delay-caused wait is charged in full.
#[test]
fn root_causes_of_the_late_sender_chain() {
    let (defs, w) = waits_of("late-sender.txt");
    let c = &w.causes;
    let top = &c.delays[0];
    assert_eq!((top.loc, w.callpaths.render(&defs, top.callpath).as_str()), (0, "main > compute"));
    assert!((top.short_term_ns - ms(8.03) as f64).abs() < 1.0, "{top:?}");
    // Long term: rank 2's 8.03 ms through rank 1, and rank 0's barrier wait passed along.
    assert!(top.long_term_ns > ms(8.03) as f64 && top.long_term_ns < ms(8.2) as f64, "{top:?}");
    let rank1_main = c.delays.iter().find(|d| d.loc == 1).unwrap();
    assert!((rank1_main.short_term_ns - ms(1.07) as f64).abs() < 1.0, "{rank1_main:?}");
    let charged: f64 = c.delays.iter().map(|d| d.cost_ns()).sum::<f64>() + c.unattributed_ns;
    let waited: i64 =
        w.instances.iter().filter(|i| spoor_waits::caused_by_delay(i.pattern)).map(|i| i.duration).sum();
    assert_eq!(waited, ms(17.28));
    assert!((charged - waited as f64).abs() < 1e-3, "{charged} against {waited}");
    // Rank 1's late sender is direct and propagates; rank 2's is partly indirect.
    let cause_of = |loc: u32| {
        let k = w.instances.iter().position(|i| i.loc == loc && i.pattern == Pattern::LateSender).unwrap();
        c.waits[k].unwrap()
    };
    assert!(cause_of(1).direct() && cause_of(1).propagating());
    assert!((cause_of(2).indirect_ns - ms(8.03) as f64).abs() < 1.0, "{:?}", cause_of(2));
}
