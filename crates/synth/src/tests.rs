use super::*;
use spoor_format::{Count, FnSink};
use spoor_model::{CollOp, Event, Kind, StrId};
use std::collections::{HashMap, HashSet, VecDeque};

fn spec(w: Workload, procs: u32, steps: u64) -> Spec {
    Spec { procs, steps, ..Spec::new(w) }
}

/// A spec with no randomness and no call overhead, for times worked out by hand.
fn exact(w: Workload, procs: u32, steps: u64) -> Spec {
    Spec { imbalance: 0.0, call_ns: 0, compute_ns: 1000, latency_ns: 0, bytes: 0, ..spec(w, procs, steps) }
}

/// What the checker counted.
#[derive(Debug, Default)]
struct Stats {
    sends: u64,
    recvs: u64,
    any_source: u64,
    colls: u64,
    enters: HashMap<String, u64>,
    /// Per location: the wall time of its last event.
    end: Vec<i64>,
    /// Per location: the sources of its completed receives, in order.
    sources: Vec<Vec<LocId>>,
}

impl Stats {
    fn enters(&self, name: &str) -> u64 {
        self.enters.get(name).copied().unwrap_or(0)
    }
}

#[derive(Default)]
struct LocState {
    events: u64,
    ended: bool,
    wall: i64,
    cpu: i64,
    stack: Vec<StrId>,
    recv: Option<(Option<LocId>, CommId, Option<u32>)>,
    blocked_cpu: Option<i64>,
    wait_cpu: Option<i64>,
    irecvs: HashMap<u64, (Option<LocId>, CommId, Option<u32>)>,
    isends: HashSet<u64>,
    /// A lock asked for (and its cpu time: waiting for it costs none), or held.
    lock: Option<(u64, i64, bool)>,
}

type Colls = HashMap<CommId, HashMap<LocId, Vec<(CollOp, i64, i64)>>>;
type Queues = HashMap<(LocId, LocId, CommId, u32), VecDeque<(u64, i64)>>;

/// Generates `spec` and checks every rule the simulation promises.
fn run(spec: &Spec) -> (Definitions, Vec<Event>, Stats) {
    let defs = definitions(spec);
    let mut events = Vec::new();
    let n = generate(spec, &mut events).unwrap();
    assert_eq!(n, events.len() as u64, "{spec:?}");
    assert_eq!(n, spec.event_count(), "event_count disagrees for {spec:?}");
    let stats = check(spec, &defs, &events);
    (defs, events, stats)
}

fn check(spec: &Spec, defs: &Definitions, events: &[Event]) -> Stats {
    defs.check().unwrap();
    let name = |id: StrId| defs.strings.get(id).unwrap().to_string();
    let nloc = defs.locations.len();
    assert_eq!(nloc as u64, spec.procs as u64 * spec.apps as u64);
    let mut st: Vec<LocState> = (0..nloc).map(|_| LocState::default()).collect();
    let mut queues: Queues = HashMap::new();
    // Per communicator and member: the collectives' (op, begin, end).
    let mut colls: Colls = HashMap::new();
    let mut stats = Stats { end: vec![0; nloc], sources: vec![Vec::new(); nloc], ..Stats::default() };
    // Per lock: its holders' (acquire, release) times.
    let mut holds: HashMap<u64, Vec<(i64, i64)>> = HashMap::new();
    let member = |comm: CommId, loc: LocId| {
        assert!(defs.comms[comm as usize].members.contains(&loc), "{loc} not in communicator {comm}")
    };
    let top_is = |s: &LocState, want: &[&str]| {
        let top = s.stack.last().map(|&id| name(id)).unwrap_or_default();
        assert!(want.contains(&top.as_str()), "inside {top}, expected one of {want:?}");
    };
    for ev in events {
        let loc = ev.loc;
        let s = &mut st[loc as usize];
        let (wall, cpu) = (ev.wall, ev.cpu.expect("every event has a cpu time"));
        assert!(!s.ended, "event after process_end: {ev:?}");
        if s.events == 0 {
            assert_eq!(ev.kind, Kind::ProcessBegin { parent: None });
        } else {
            assert!(wall >= s.wall && cpu >= s.cpu, "time goes backwards at {ev:?}");
        }
        assert!(0 <= cpu && cpu <= wall, "cpu > wall at {ev:?}");
        s.events += 1;
        s.wall = wall;
        s.cpu = cpu;
        stats.end[loc as usize] = wall;
        match ev.kind {
            Kind::ProcessBegin { .. } => assert_eq!(s.events, 1),
            Kind::ProcessEnd => {
                assert!(s.stack.is_empty());
                s.ended = true;
            }
            Kind::Enter { proc } => {
                if s.stack.is_empty() {
                    assert_eq!(name(proc), "main");
                }
                *stats.enters.entry(name(proc)).or_default() += 1;
                s.stack.push(proc);
            }
            Kind::Leave { proc } => {
                assert_eq!(s.stack.pop(), Some(proc));
                if name(proc) == "MPI_Waitall" {
                    s.wait_cpu = None;
                }
            }
            Kind::Send { to, comm, tag, bytes } => {
                top_is(s, &["MPI_Send"]);
                member(comm, loc);
                member(comm, to);
                stats.sends += 1;
                queues.entry((loc, to, comm, tag)).or_default().push_back((bytes, wall));
            }
            Kind::Isend { to, comm, tag, bytes, request } => {
                top_is(s, &["MPI_Isend"]);
                member(comm, loc);
                member(comm, to);
                stats.sends += 1;
                assert!(s.isends.insert(request));
                queues.entry((loc, to, comm, tag)).or_default().push_back((bytes, wall));
            }
            Kind::RecvBegin { from, comm, tag } => {
                top_is(s, &["MPI_Recv"]);
                member(comm, loc);
                if from.is_none() {
                    stats.any_source += 1;
                }
                assert!(s.recv.replace((from, comm, tag)).is_none());
                s.blocked_cpu = Some(cpu);
            }
            Kind::RecvEnd { from, comm, tag, bytes } => {
                top_is(s, &["MPI_Recv"]);
                let posted = s.recv.take().expect("recv_end without recv_begin");
                assert_eq!(s.blocked_cpu.take(), Some(cpu), "cpu advanced while blocked: {ev:?}");
                assert!(posted.0.is_none_or(|f| f == from) && posted.1 == comm);
                assert!(posted.2.is_none_or(|t| t == tag));
                let (b, sent) = queues
                    .get_mut(&(from, loc, comm, tag))
                    .and_then(|q| q.pop_front())
                    .unwrap_or_else(|| panic!("no send matches {ev:?}"));
                assert_eq!(b, bytes);
                assert!(wall >= sent + spec.transfer_ns(bytes), "received before arrival: {ev:?}");
                stats.recvs += 1;
                stats.sources[loc as usize].push(from);
            }
            Kind::IrecvRequest { from, comm, tag, request } => {
                top_is(s, &["MPI_Irecv"]);
                member(comm, loc);
                assert!(s.irecvs.insert(request, (from, comm, tag)).is_none());
            }
            Kind::IsendComplete { request } => {
                top_is(s, &["MPI_Waitall"]);
                assert!(s.isends.remove(&request));
                assert_eq!(*s.wait_cpu.get_or_insert(cpu), cpu, "cpu advanced in a wait");
            }
            Kind::IrecvComplete { request, from, comm, tag, bytes } => {
                top_is(s, &["MPI_Waitall"]);
                assert_eq!(*s.wait_cpu.get_or_insert(cpu), cpu, "cpu advanced in a wait");
                let posted = s.irecvs.remove(&request).expect("completion of an unknown request");
                assert!(posted.0.is_none_or(|f| f == from) && posted.1 == comm);
                assert!(posted.2.is_none_or(|t| t == tag));
                let (b, sent) = queues
                    .get_mut(&(from, loc, comm, tag))
                    .and_then(|q| q.pop_front())
                    .unwrap_or_else(|| panic!("no send matches {ev:?}"));
                assert_eq!(b, bytes);
                assert!(wall >= sent + spec.transfer_ns(bytes), "received before arrival: {ev:?}");
                stats.recvs += 1;
                stats.sources[loc as usize].push(from);
            }
            Kind::CollBegin { op, comm } => {
                top_is(s, &["MPI_Barrier", "MPI_Allreduce"]);
                member(comm, loc);
                s.blocked_cpu = Some(cpu);
                stats.colls += 1;
                colls.entry(comm).or_default().entry(loc).or_default().push((op, wall, i64::MIN));
            }
            Kind::CollEnd { op, comm, root, .. } => {
                assert_eq!(root, None);
                assert_eq!(s.blocked_cpu.take(), Some(cpu), "cpu advanced in a collective: {ev:?}");
                let last = colls.get_mut(&comm).and_then(|m| m.get_mut(&loc)).and_then(|v| v.last_mut());
                let last = last.expect("coll_end without coll_begin");
                assert_eq!(last.0, op);
                assert_eq!(last.2, i64::MIN);
                last.2 = wall;
            }
            Kind::LockRequest { lock } => {
                assert!(s.lock.is_none(), "a second lock asked for: {ev:?}");
                s.lock = Some((lock, cpu, false));
            }
            Kind::LockAcquire { lock } => {
                let (l, asked_cpu, held) = s.lock.expect("acquired without a request");
                assert!(l == lock && !held && asked_cpu == cpu, "cpu advanced waiting for a lock: {ev:?}");
                s.lock = Some((lock, cpu, true));
                holds.entry(lock).or_default().push((wall, i64::MAX));
            }
            Kind::LockRelease { lock } => {
                assert_eq!(
                    s.lock.take().map(|x| (x.0, x.2)),
                    Some((lock, true)),
                    "released what it did not hold"
                );
                let h = holds.get_mut(&lock).and_then(|v| v.iter_mut().rev().find(|h| h.1 == i64::MAX));
                h.expect("a release without its acquire").1 = wall;
            }
            ref k => panic!("unexpected kind {k:?}"),
        }
    }
    for (lock, v) in &mut holds {
        v.sort_unstable();
        assert!(v.windows(2).all(|w| w[0].1 <= w[1].0), "lock {lock} held by two at once: {v:?}");
    }
    for (i, s) in st.iter().enumerate() {
        assert!(s.ended, "location {i} did not end");
        assert!(s.irecvs.is_empty() && s.isends.is_empty(), "location {i} left requests open");
    }
    for (k, q) in &queues {
        assert!(q.is_empty(), "{} unmatched sends on {k:?}", q.len());
    }
    for (comm, per) in &colls {
        let members = &defs.comms[*comm as usize].members;
        assert_eq!(per.len(), members.len(), "not every member of {comm} joined");
        let seqs: Vec<&Vec<(CollOp, i64, i64)>> = members.iter().map(|m| &per[m]).collect();
        assert!(seqs.iter().all(|s| s.len() == seqs[0].len()), "members of {comm} disagree");
        for k in 0..seqs[0].len() {
            let all: Vec<_> = seqs.iter().map(|s| s[k]).collect();
            let latest = all.iter().map(|c| c.1).max().unwrap();
            for c in &all {
                assert_eq!(c.0, all[0].0);
                assert_eq!(c.2, all[0].2, "collective {k} of {comm} ends at different times");
                assert!(c.2 >= latest);
            }
        }
    }
    stats
}

#[test]
fn ring_counts() {
    let (_, events, st) = run(&spec(Workload::Ring, 4, 3));
    assert_eq!(events.len(), 4 * 4 + 9 * 4 * 3);
    assert_eq!(st.sends, 12);
    assert_eq!(st.recvs, 12);
    assert_eq!(st.enters("ringWork"), 12);
    assert_eq!(st.enters("MPI_Send"), 12);
    assert_eq!(st.enters("MPI_Recv"), 12);
    assert_eq!(st.enters("main"), 4);
    // Rank r receives from r-1.
    assert_eq!(st.sources[0], vec![3, 3, 3]);
    assert_eq!(st.sources[2], vec![1, 1, 1]);
}

#[test]
fn ring_known_times() {
    // Every step: 1000 ns of compute, then a 100-byte message taking 10 + 100 ns.
    let s = Spec { latency_ns: 10, bytes: 100, ..exact(Workload::Ring, 4, 5) };
    let (_, _, st) = run(&s);
    assert_eq!(st.end, vec![5 * 1110; 4]);
}

#[test]
fn stencil_grid() {
    let g = |p| spec(Workload::Stencil, p, 1).grid();
    assert_eq!(g(1), (1, 1));
    assert_eq!(g(2), (1, 2));
    assert_eq!(g(4), (2, 2));
    assert_eq!(g(6), (2, 3));
    assert_eq!(g(7), (1, 7));
    assert_eq!(g(12), (3, 4));
    assert_eq!(g(16), (4, 4));
    assert_eq!(g(18), (3, 6));
}

#[test]
fn stencil_counts() {
    // A 2 x 3 grid has 7 undirected links, 14 messages per step.
    let (_, events, st) = run(&spec(Workload::Stencil, 6, 2));
    assert_eq!(events.len(), 24 + 2 * (8 * 6 + 8 * 14));
    assert_eq!(st.sends, 28);
    assert_eq!(st.recvs, 28);
    assert_eq!(st.enters("MPI_Isend"), 28);
    assert_eq!(st.enters("MPI_Irecv"), 28);
    assert_eq!(st.enters("MPI_Waitall"), 12);
    assert_eq!(st.enters("MPI_Allreduce"), 12);
    assert_eq!(st.colls, 12);
    // The corner rank 0 hears from its east (1) and south (3) neighbours each step.
    let mut from0 = st.sources[0].clone();
    from0.sort();
    assert_eq!(from0, vec![1, 1, 3, 3]);
}

#[test]
fn stencil_single_process() {
    let (_, events, st) = run(&spec(Workload::Stencil, 1, 3));
    assert_eq!(events.len(), 4 + 3 * 8);
    assert_eq!(st.sends, 0);
    assert_eq!(st.colls, 3);
}

#[test]
fn spa_counts() {
    let (defs, events, st) = run(&spec(Workload::Spa, 4, 5));
    assert_eq!(events.len(), 16 + 18 * 3 * 5);
    assert_eq!(st.sends, 30);
    assert_eq!(st.recvs, 30);
    assert_eq!(st.any_source, 15);
    assert_eq!(st.enters("clientWork"), 15);
    assert_eq!(st.enters("servBusy1"), 5);
    assert_eq!(st.enters("servBusy2"), 10);
    let pname = |l: usize| defs.strings.get(defs.processes[l].name).unwrap();
    assert_eq!(pname(0), "server");
    assert_eq!(pname(3), "client3");
    assert_eq!(defs.strings.get(defs.locations[1].name), Some("spa-0/client1"));
}

#[test]
fn spa_serves_in_arrival_order() {
    // Clients compute 1000 ns, the server serves each request in 500 ns, messages
    // are free: the server is busy from 1000 on and serves clients round robin.
    let steps = 4;
    let (_, _, st) = run(&exact(Workload::Spa, 4, steps));
    assert_eq!(st.end[0], 1000 + 1500 * steps as i64);
    let order: Vec<LocId> = (0..steps).flat_map(|_| [1, 2, 3]).collect();
    assert_eq!(st.sources[0], order);
}

#[test]
fn servers_take_the_first_arrival() {
    // With imbalance the server still takes requests in arrival order: each
    // receive gets, of the clients' oldest unanswered requests, the one that
    // arrives first (ties to the lower rank).
    for w in [Workload::Spa, Workload::MasterWorker] {
        let s = Spec { imbalance: 0.9, procs: 6, steps: 20, ..Spec::new(w) };
        let (_, events, st) = run(&s);
        let mut arrivals: Vec<Vec<i64>> = vec![Vec::new(); 6];
        for e in &events {
            if let Kind::Send { to: 0, bytes, .. } = e.kind {
                arrivals[e.loc as usize].push(e.wall + s.transfer_ns(bytes));
            }
        }
        let mut next = [0usize; 6];
        for &c in &st.sources[0] {
            let c = c as usize;
            let a = arrivals[c][next[c]];
            for o in 1..6 {
                if let Some(&b) = arrivals[o].get(next[o]) {
                    assert!((a, c) <= (b, o), "{w}: served {c} (arrives {a}) before {o} (arrives {b})");
                }
            }
            next[c] += 1;
        }
        assert_eq!(st.sources[0].len(), 100);
    }
}

#[test]
fn master_worker_counts() {
    let (_, events, st) = run(&spec(Workload::MasterWorker, 3, 4));
    // 8 tasks: 8 task messages, 8 results, 2 stops.
    assert_eq!(events.len(), 12 + 18 * 8 + 7 * 2);
    assert_eq!(st.sends, 18);
    assert_eq!(st.recvs, 18);
    assert_eq!(st.any_source, 8);
    assert_eq!(st.enters("workerTask"), 8);
    assert_eq!(st.enters("assignTask"), 8);
}

#[test]
fn master_worker_no_tasks() {
    let (_, _, st) = run(&spec(Workload::MasterWorker, 4, 0));
    assert_eq!(st.sends, 3);
    assert_eq!(st.enters("workerTask"), 0);
}

#[test]
fn master_worker_balances() {
    // Equal tasks, free messages: each worker gets the same number of tasks.
    let (_, _, st) = run(&exact(Workload::MasterWorker, 5, 6));
    for w in 1..5 {
        assert_eq!(st.sources[w].len(), 6 + 1);
    }
}

#[test]
fn pipeline_counts_and_times() {
    let (_, events, st) = run(&spec(Workload::Pipeline, 4, 5));
    assert_eq!(events.len(), 16 + 5 * (9 * 4 - 7));
    assert_eq!(st.sends, 15);
    assert_eq!(st.enters("stageWork"), 20);
    // The last stage finishes item i at (i + 4) * 1000 with free messages.
    let (_, _, st) = run(&exact(Workload::Pipeline, 4, 5));
    assert_eq!(st.end[3], (5 + 3) * 1000);
    assert_eq!(st.end[0], 5 * 1000);
}

#[test]
fn barrier_counts_and_times() {
    let (_, events, st) = run(&spec(Workload::Barrier, 3, 4));
    assert_eq!(events.len(), 12 + 6 * 3 * 4);
    assert_eq!(st.colls, 12);
    assert_eq!(st.sends, 0);
    // 3 processes: 2 rounds of 5 ns latency per barrier.
    let s = Spec { latency_ns: 5, ..exact(Workload::Barrier, 3, 4) };
    let (_, _, st) = run(&s);
    assert_eq!(st.end, vec![4 * 1010; 3]);
}

#[test]
fn barrier_waits_for_the_slowest() {
    let s = Spec { imbalance: 0.5, call_ns: 0, latency_ns: 0, ..spec(Workload::Barrier, 4, 1) };
    let (_, events, _) = run(&s);
    let ends: Vec<i64> =
        events.iter().filter(|e| matches!(e.kind, Kind::CollEnd { .. })).map(|e| e.wall).collect();
    let works: Vec<i64> =
        events.iter().filter(|e| matches!(e.kind, Kind::CollBegin { .. })).map(|e| e.cpu.unwrap()).collect();
    assert_eq!(ends.len(), 4);
    assert_eq!(ends[0], *works.iter().max().unwrap());
    for w in &works {
        assert!((500_000..=1_500_000).contains(w), "compute {w} outside the imbalance band");
    }
    assert!(works.iter().any(|&w| w != works[0]));
}

#[test]
fn event_count_is_exact_everywhere() {
    for w in Workload::ALL {
        for procs in [1, 2, 3, 4, 5, 7, 9] {
            if procs < w.min_procs() {
                continue;
            }
            for steps in [0, 1, 3] {
                for apps in [1, 2] {
                    let s = Spec { apps, ..spec(w, procs, steps) };
                    run(&s);
                    let s = Spec { call_ns: 0, latency_ns: 0, bytes: 0, imbalance: 1.0, ..s };
                    run(&s);
                    run(&Spec { kernels: 3, ..s.clone() });
                    if procs > 1 {
                        let slow_link = Some(SlowLink { a: 0, b: procs - 1, ns: 11 });
                        run(&Spec { slow_link, ..s.clone() });
                    }
                    if w == Workload::Barrier {
                        run(&Spec { serial_ns: 5, hot_lock_ns: 3, ..s.clone() });
                    }
                    if w != Workload::MasterWorker {
                        let extra = vec![ExtraWork { proc: "late".into(), ranks: vec![0, procs - 1], ns: 7 }];
                        run(&Spec { extra, ..s });
                    }
                }
            }
        }
    }
}

/// Splitting the compute procedure into kernels changes only the procedures inside
/// each compute: every other event is the same, each compute's kernels follow one
/// another and add up to its time, and their shares fall from the first to the last.
#[test]
fn kernels_split_only_the_compute() {
    let names = ["clientWork", "ringWork", "stencilUpdate", "workerTask", "stageWork", "simulateCycle"];
    for w in Workload::ALL {
        for k in [2, 5] {
            let one = spec(w, 5, 4);
            let split = Spec { kernels: k, ..one.clone() };
            let (d1, e1, st1) = run(&one);
            let (dk, ek, stk) = run(&split);
            // The procedure an event enters or leaves.
            let proc_of = |d: &Definitions, e: &Event| match e.kind {
                Kind::Enter { proc } | Kind::Leave { proc } => Some(d.strings.get(proc).unwrap().to_owned()),
                _ => None,
            };
            let name1 = |e: &Event| proc_of(&d1, e);
            let namek = |e: &Event| proc_of(&dk, e);
            let work = names.iter().copied().find(|n| st1.enters(n) > 0).expect("a compute procedure");
            let kernel = |i: u32| format!("{work}_{i}");
            assert_eq!(st1.enters(work), stk.enters(&kernel(1)), "{w}");
            assert_eq!(stk.enters(work), 0, "{w}");
            let is_work = |n: &Option<String>| n.as_deref() == Some(work);
            let is_kernel =
                |n: &Option<String>| n.as_deref().is_some_and(|n| n.starts_with(&format!("{work}_")));
            // Everything else: the same events, procedures named the same.
            let rest1: Vec<_> = e1.iter().filter(|e| !is_work(&name1(e))).map(|e| (e, name1(e))).collect();
            let restk: Vec<_> = ek.iter().filter(|e| !is_kernel(&namek(e))).map(|e| (e, namek(e))).collect();
            assert_eq!(rest1.len(), restk.len(), "{w}");
            for ((a, na), (b, nb)) in rest1.iter().zip(&restk) {
                assert_eq!((a.loc, a.wall, a.cpu, na), (b.loc, b.wall, b.cpu, nb), "{w}");
                if na.is_none() {
                    assert_eq!(a.kind, b.kind, "{w}");
                }
            }
            // Each compute: its enter and leave times, against the kernels' in a row.
            let computes1: Vec<(LocId, i64, i64)> = e1
                .iter()
                .zip(e1.iter().skip(1))
                .filter(|(a, _)| is_work(&name1(a)) && matches!(a.kind, Kind::Enter { .. }))
                .map(|(a, b)| (a.loc, a.wall, b.wall))
                .collect();
            let mut computesk = Vec::new();
            let mut i = 0;
            while i < ek.len() {
                if namek(&ek[i]).as_deref() == Some(kernel(1).as_str())
                    && matches!(ek[i].kind, Kind::Enter { .. })
                {
                    let group = &ek[i..i + 2 * k as usize];
                    let mut prev = i64::MAX;
                    for (j, pair) in group.chunks(2).enumerate() {
                        assert_eq!(namek(&pair[0]), Some(kernel(j as u32 + 1)), "{w}");
                        assert!(matches!(
                            (&pair[0].kind, &pair[1].kind),
                            (Kind::Enter { .. }, Kind::Leave { .. })
                        ));
                        assert!(
                            j == 0 || pair[0].wall == group[2 * j - 1].wall,
                            "{w}: kernels follow one another"
                        );
                        let took = pair[1].wall - pair[0].wall;
                        // Shares fall (the last takes the rounding).
                        assert!(
                            j + 1 == k as usize || took <= prev,
                            "{w}: kernel {} took {took} after {prev}",
                            j + 1
                        );
                        prev = took;
                    }
                    computesk.push((ek[i].loc, ek[i].wall, group[2 * k as usize - 1].wall));
                    i += 2 * k as usize;
                } else {
                    i += 1;
                }
            }
            assert_eq!(computes1, computesk, "{w}");
        }
    }
}

#[test]
fn kernels_are_bounded_and_described() {
    assert!(Spec { kernels: 0, ..spec(Workload::Ring, 2, 1) }.validate().is_err());
    assert!(Spec { kernels: MAX_KERNELS + 1, ..spec(Workload::Ring, 2, 1) }.validate().is_err());
    assert!(Spec { kernels: MAX_KERNELS, ..spec(Workload::Ring, 2, 1) }.validate().is_ok());
    assert!(!spec(Workload::Ring, 2, 1).describe().contains("--kernels"));
    assert!(Spec { kernels: 16, ..spec(Workload::Ring, 2, 1) }.describe().ends_with(" --kernels 16"));
}

#[test]
fn deterministic() {
    for w in Workload::ALL {
        let s = spec(w, 5, 4);
        let (_, a, _) = run(&s);
        let (_, b, _) = run(&s);
        assert_eq!(a, b, "{w}");
        let (_, c, _) = run(&Spec { seed: 2, ..s.clone() });
        assert_ne!(a, c, "{w}: a different seed changes nothing");
        // Without imbalance the seed does not matter.
        let s0 = Spec { imbalance: 0.0, ..s.clone() };
        assert_eq!(run(&s0).1, run(&Spec { seed: 2, ..s0.clone() }).1, "{w}");
        assert_eq!(definitions(&s), definitions(&s));
    }
}

#[test]
fn golden_draws() {
    // Pins the random stream: if this changes, every synthetic trace changes.
    let s = Spec { imbalance: 0.5, ..exact(Workload::Barrier, 2, 2) };
    let (_, events, _) = run(&s);
    let works: Vec<i64> =
        events.iter().filter(|e| matches!(e.kind, Kind::CollBegin { .. })).map(|e| e.cpu.unwrap()).collect();
    let expected: Vec<i64> = [(0u64, 0u64), (1, 0), (0, 1), (1, 1)]
        .iter()
        .scan([0i64; 2], |acc, &(r, step)| {
            let h = rng::hash(1, &[0, 1, r, step]);
            let d = (1000.0 * (1.0 + 0.5 * (2.0 * rng::unit(h) - 1.0))).round() as i64;
            acc[r as usize] += d;
            Some(acc[r as usize])
        })
        .collect();
    assert_eq!(works, expected);
}

#[test]
fn two_apps_are_disjoint() {
    let s = Spec { apps: 2, ..spec(Workload::Stencil, 4, 2) };
    let (defs, events, _) = run(&s);
    assert_eq!(defs.apps.len(), 2);
    assert_eq!(defs.strings.get(defs.apps[0].name), Some("stencil-0"));
    assert_eq!(defs.strings.get(defs.apps[1].name), Some("stencil-1"));
    assert_eq!(defs.processes.len(), 8);
    assert_eq!(defs.comms.len(), 2);
    for (a, comm) in defs.comms.iter().enumerate() {
        for (rank, &l) in comm.members.iter().enumerate() {
            let p = defs.process_of(l).unwrap();
            assert_eq!((p.app, p.rank), (a as u32, rank as u32));
        }
    }
    // Shared machines: machine m runs rank m of each application.
    assert_eq!(defs.machines.len(), 4);
    for p in &defs.processes {
        assert_eq!(p.machine, p.rank);
    }
    // Each application's messages and collectives stay inside it.
    for e in &events {
        let app = defs.process_of(e.loc).unwrap().app;
        match e.kind {
            Kind::Isend { to, comm, .. } => {
                assert_eq!(defs.process_of(to).unwrap().app, app);
                assert_eq!(comm, app);
            }
            Kind::CollBegin { comm, .. } => assert_eq!(comm, app),
            _ => {}
        }
    }
}

#[test]
fn apps_draw_differently() {
    let s = Spec { apps: 2, ..spec(Workload::Ring, 3, 3) };
    let (_, events, _) = run(&s);
    let works = |app: u32| -> Vec<i64> {
        events
            .iter()
            .filter(|e| e.loc / 3 == app && matches!(e.kind, Kind::Send { .. }))
            .map(|e| e.cpu.unwrap())
            .collect()
    };
    assert_ne!(works(0), works(1));
}

#[test]
fn machine_placement() {
    let s = Spec { machines: Some(3), ..spec(Workload::Ring, 8, 1) };
    let m: Vec<u32> = (0..8).map(|r| s.machine_of(r)).collect();
    assert_eq!(m, vec![0, 0, 0, 1, 1, 1, 2, 2]);
    let d = definitions(&s);
    assert_eq!(d.machines.len(), 3);
    assert_eq!(d.strings.get(d.machines[2].name), Some("node2"));
    let one = Spec { machines: Some(1), ..s.clone() };
    assert!((0..8).all(|r| one.machine_of(r) == 0));
    let many = Spec { machines: Some(10), ..s.clone() };
    assert!((0..8).all(|r| many.machine_of(r) == r));
    assert_eq!(definitions(&many).machines.len(), 10);
    let default = spec(Workload::Ring, 8, 1);
    assert_eq!(definitions(&default).machines.len(), 8);
}

#[test]
fn steps_for_events_is_close() {
    for w in Workload::ALL {
        for procs in [2, 4, 16, 100] {
            for target in [100_000u64, 1_000_000, 1_000_000_000] {
                let s = spec(w, procs, 0);
                let steps = s.steps_for_events(target);
                let n = Spec { steps, ..s.clone() }.event_count();
                let err = (n as f64 - target as f64).abs() / target as f64;
                assert!(err < 0.1, "{w} procs {procs}: {n} events for {target}");
            }
        }
    }
    // Too few events for one step still gives one step.
    assert_eq!(spec(Workload::Ring, 4, 0).steps_for_events(1), 1);
}

#[test]
fn large_runs_stream() {
    let s = Spec { procs: 64, ..spec(Workload::Stencil, 64, 0) };
    let s = Spec { steps: s.steps_for_events(2_000_000), ..s };
    let mut c = Count::default();
    assert_eq!(generate(&s, &mut c).unwrap(), s.event_count());
    assert_eq!(c.0, s.event_count());
}

#[test]
fn bad_specs() {
    let bad = [
        spec(Workload::Ring, 1, 1),
        spec(Workload::Spa, 1, 1),
        Spec { apps: 0, ..spec(Workload::Ring, 2, 1) },
        Spec { imbalance: 1.5, ..spec(Workload::Ring, 2, 1) },
        Spec { imbalance: f64::NAN, ..spec(Workload::Ring, 2, 1) },
        Spec { bandwidth: 0.0, ..spec(Workload::Ring, 2, 1) },
        Spec { machines: Some(0), ..spec(Workload::Ring, 2, 1) },
        Spec { steps: u64::MAX / 2, ..spec(Workload::Ring, 2, 1) },
        Spec { procs: 1 << 20, apps: 100, ..spec(Workload::Ring, 2, 1) },
    ];
    for s in bad {
        assert!(s.validate().is_err(), "{s:?}");
        let e = generate(&s, &mut Count::default()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
    assert!(spec(Workload::Pipeline, 1, 1).validate().is_ok());
}

#[test]
fn sink_errors_stop_generation() {
    let mut n = 0;
    let mut sink = FnSink(|_| {
        n += 1;
        if n == 10 {
            Err(io::Error::other("full"))
        } else {
            Ok(())
        }
    });
    let e = generate(&spec(Workload::Ring, 4, 3), &mut sink).unwrap_err();
    assert_eq!(e.to_string(), "full");
    assert_eq!(n, 10);
}

#[test]
fn workload_names() {
    for w in Workload::ALL {
        assert_eq!(Workload::from_name(w.name()), Some(w));
        assert!(!w.about().is_empty());
    }
    assert_eq!(Workload::from_name("nope"), None);
    let d = definitions(&Spec::new(Workload::Spa));
    assert_eq!(d.property("creator"), Some("spoor-synth"));
    assert_eq!(d.property("workload"), Some("spa"));
    assert!(d.property("synth.spec").unwrap().starts_with("spa --procs 4 --steps 10"));
}

#[test]
fn extra_work_parses_describes_and_is_checked() {
    let x = ExtraWork::parse("late:0,3-5:2000").unwrap();
    assert_eq!(x, ExtraWork { proc: "late".into(), ranks: vec![0, 3, 4, 5], ns: 2000 });
    assert_eq!(x.describe(), "late:0,3,4,5:2000");
    for bad in ["late", "late:0", ":0:5", "late:x:5", "late:5-3:1", "late:0:ms"] {
        assert!(ExtraWork::parse(bad).is_err(), "{bad}");
    }
    let s = Spec { extra: vec![x.clone()], ..spec(Workload::Ring, 4, 1) };
    assert!(s.validate().unwrap_err().0.contains("rank 4"));
    assert!(Spec { extra: vec![x.clone()], ..spec(Workload::Ring, 6, 1) }.validate().is_ok());
    assert!(Spec { extra: vec![x], ..spec(Workload::MasterWorker, 6, 1) }.validate().is_err());
    let described =
        Spec { extra: vec![ExtraWork::parse("f:1:9").unwrap()], ..spec(Workload::Ring, 2, 1) }.describe();
    assert!(described.ends_with(" --extra-work f:1:9"), "{described}");
}

#[test]
fn slow_link_parses_and_is_checked() {
    assert_eq!(SlowLink::parse("1-2:3000").unwrap(), SlowLink { a: 1, b: 2, ns: 3000 });
    for bad in ["1-2", "1:3", "a-2:3", "1-2:x", "1-99999999999:3"] {
        assert!(SlowLink::parse(bad).is_err(), "{bad}");
    }
    let on = |a, b| Spec { slow_link: Some(SlowLink { a, b, ns: 5 }), ..spec(Workload::Ring, 3, 1) };
    assert!(on(0, 2).validate().is_ok());
    assert!(on(0, 3).validate().is_err() && on(1, 1).validate().is_err());
    assert!(on(0, 2).describe().ends_with(" --slow-link 0-2:5"));
}

/// Clocks that disagree change only the wall times: each event's is its machine's clock
/// reading of the time base (machine 0's the time base itself), the processes of one
/// machine sharing it, every offset and drift within its bound and different from the
/// next machine's; out of bounds they are refused.
#[test]
fn machine_clocks_read_the_time_base() {
    let plain = Spec { machines: Some(4), ..spec(Workload::Stencil, 12, 6) };
    let skewed = Spec { clock_offset_ns: 50_000, clock_drift_ppm: 20.0, ..plain.clone() };
    let (defs, base, _) = run(&plain);
    // Not `run`: its checks read the wall times as one time base.
    let mut read = Vec::new();
    generate(&skewed, &mut read).unwrap();
    assert_eq!(base.len(), read.len());
    for (b, r) in base.iter().zip(&read) {
        let machine = defs.processes[defs.locations[b.loc as usize].process as usize].machine;
        assert_eq!(r.wall, skewed.clock_of(machine).read(b.wall), "{b:?}");
        assert_eq!((r.loc, r.cpu, &r.kind), (b.loc, b.cpu, &b.kind));
    }
    assert_eq!(skewed.clock_of(0), MachineClock { offset_ns: 0, drift: 0.0 });
    let clocks: Vec<MachineClock> = (1..4).map(|m| skewed.clock_of(m)).collect();
    for c in &clocks {
        assert!(c.offset_ns.abs() <= 50_000 && c.offset_ns != 0, "{c:?}");
        assert!(c.drift.abs() <= 20e-6 && c.drift != 0.0, "{c:?}");
    }
    assert!(clocks.windows(2).all(|w| w[0] != w[1]), "{clocks:?}");
    assert_eq!(plain.clock_of(3), MachineClock { offset_ns: 0, drift: 0.0 });
    let too_far = Spec { clock_offset_ns: MAX_CLOCK_OFFSET_NS + 1, ..plain.clone() };
    assert!(too_far.validate().unwrap_err().0.contains("clock offset"));
    for drift in [-1.0, MAX_CLOCK_DRIFT_PPM + 1.0, f64::NAN] {
        let bad = Spec { clock_drift_ppm: drift, ..plain.clone() };
        assert!(bad.validate().unwrap_err().0.contains("clock drift"), "{drift}");
    }
}
