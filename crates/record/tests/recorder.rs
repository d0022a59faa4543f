//! The recorder writes readable traces: every event recorded comes back, in order, with
//! wall and CPU time; threads get locations of their own; memory is bounded by blocks;
//! definitions grow as the run goes and are complete in the file.

use spoor_format::{ReadOptions, TraceReader};
use spoor_model::{Definitions, Event, Kind};
use spoor_record::{Config, Recorder};
use std::collections::BTreeMap;
use std::path::Path;

fn read(path: &Path) -> (Definitions, Vec<Event>) {
    let r = TraceReader::open(path.to_str().unwrap(), ReadOptions::default()).unwrap();
    r.read_all().unwrap()
}

fn by_loc(events: &[Event]) -> BTreeMap<u32, Vec<&Event>> {
    let mut m: BTreeMap<u32, Vec<&Event>> = BTreeMap::new();
    for e in events {
        m.entry(e.loc).or_default().push(e);
    }
    m
}

/// CPU time never advances by more than wall time on a location, and neither goes back
/// (wall time is CLOCK_REALTIME: it does not step during a test).
fn check_times(events: &[Event]) {
    for (loc, evs) in by_loc(events) {
        for w in evs.windows(2) {
            let (a, b) = (w[0], w[1]);
            assert!(b.wall >= a.wall, "location {loc}: wall time goes back");
            let (ca, cb) = (a.cpu.expect("cpu"), b.cpu.expect("cpu"));
            assert!(cb >= ca, "location {loc}: cpu time goes back");
            assert!(cb - ca <= b.wall - a.wall, "location {loc}: cpu advanced more than wall");
        }
    }
}

#[test]
fn rust_api_events_come_back_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::new(dir.path(), "demo", "server", 0);
    cfg.machine = Some("node1".into());
    let rec = Recorder::start(cfg).unwrap();
    let client = rec.peer("client", 1);
    assert_eq!(rec.peer("client", 1), client, "a peer is defined once");
    let me = rec.location();
    assert_eq!(me, 0);
    let world = rec.comm("world", &[me, client]);
    let serve = rec.procedure("serve");
    let phase = rec.intern("startup");
    let queue = rec.metric_def("queue length", "requests");
    rec.phase_begin(phase);
    {
        let _g = rec.scope(serve);
        rec.recv_begin(None, world, None);
        rec.recv_end(client, world, 7, 128);
        rec.send(client, world, 8, 256);
        rec.lock_request(3);
        rec.lock_acquire(3);
        rec.lock_release(3);
        rec.barrier_begin(world);
        rec.barrier_end(world);
        rec.metric(queue, 2.5);
        rec.clock_offset(client, -1500, 20);
    }
    rec.phase_end(phase);
    let path = rec.finish().unwrap();
    // Events after finish are dropped, and finishing twice is harmless.
    rec.send(client, world, 9, 1);
    assert_eq!(rec.finish().unwrap(), path);

    let (defs, events) = read(&path);
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.name()).collect();
    assert_eq!(
        kinds,
        [
            "process_begin",
            "phase_begin",
            "enter",
            "recv_begin",
            "recv_end",
            "send",
            "lock_request",
            "lock_acquire",
            "lock_release",
            "coll_begin",
            "coll_end",
            "metric",
            "clock_offset",
            "leave",
            "phase_end",
            "process_end"
        ]
    );
    assert!(events.iter().all(|e| e.loc == 0));
    check_times(&events);
    assert_eq!(events[2].kind, Kind::Enter { proc: serve });
    assert_eq!(defs.strings.get(serve), Some("serve"));
    assert_eq!(events[4].kind, Kind::RecvEnd { from: client, comm: world, tag: 7, bytes: 128 });
    assert_eq!(events[11].kind, Kind::Metric { metric: queue, value: 2.5 });
    assert_eq!(events[12].kind, Kind::ClockOffset { reference: client, offset: -1500, error: 20 });
    assert_eq!(defs.strings.get(defs.apps[0].name), Some("demo"));
    assert_eq!(defs.strings.get(defs.machines[0].name), Some("node1"));
    assert_eq!(defs.processes.len(), 2);
    assert_eq!(defs.processes[1].rank, 1);
    assert_eq!(defs.comms[world as usize].members, vec![0, client]);
    assert_eq!(defs.property("creator"), Some("spoor-record"));
}

#[test]
fn threads_get_their_own_locations_and_memory_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::new(dir.path(), "threads", "p", 0);
    cfg.block_bytes = 1024;
    let rec = Recorder::start(cfg).unwrap();
    let work = rec.procedure("work");
    let per_thread = 5000;
    // Joined (not scoped) threads: join returns once a thread's storage is destroyed,
    // which is when it records thread_end and writes out its last block.
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let rec = rec.clone();
            std::thread::spawn(move || {
                for _ in 0..per_thread {
                    let _g = rec.scope(work);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let (events_before, blocks_before) = rec.written();
    // Each thread wrote full blocks while it ran, and its last one when it ended.
    assert!(blocks_before >= 3 * (2 * per_thread) / 1024, "{blocks_before} blocks");
    assert_eq!(events_before, 3 * (2 * per_thread as u64 + 2));
    let path = rec.finish().unwrap();
    let (defs, events) = read(&path);
    assert_eq!(defs.locations.len(), 4);
    let locs = by_loc(&events);
    assert_eq!(locs.len(), 4);
    for (loc, evs) in &locs {
        let l = &defs.locations[*loc as usize];
        assert_eq!(l.process, 0);
        if *loc == 0 {
            assert_eq!(evs.len(), 2);
            continue;
        }
        assert!(l.thread >= 1);
        assert_eq!(evs.len(), 2 * per_thread + 2);
        assert_eq!(evs[0].kind, Kind::ThreadBegin { parent: None });
        assert_eq!(evs.last().unwrap().kind, Kind::ThreadEnd);
        // Properly nested enter/leave pairs.
        for p in evs[1..evs.len() - 1].chunks(2) {
            assert_eq!(p[0].kind, Kind::Enter { proc: work });
            assert_eq!(p[1].kind, Kind::Leave { proc: work });
        }
    }
    check_times(&events);
}

#[test]
fn addresses_are_named_when_the_trace_is_finished() {
    #[inline(never)]
    #[no_mangle]
    extern "C" fn spoor_record_test_procedure() -> u32 {
        std::hint::black_box(42)
    }
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::new(dir.path(), "addr", "p", 0);
    cfg.block_bytes = 64;
    // A reading at every event: blocks are written as they fill, whatever the timing
    // (events waiting for a reading stay in the buffer).
    cfg.cpu_interval_ns = 0;
    let rec = Recorder::start(cfg).unwrap();
    let f = spoor_record_test_procedure as extern "C" fn() -> u32 as usize;
    for _ in 0..20 {
        rec.enter_addr(f);
        spoor_record_test_procedure();
        rec.leave_addr(f);
    }
    rec.enter_addr(16); // no symbol: keeps its address as its name
    rec.leave_addr(16);
    // Before the end, blocks already written refer to the placeholder.
    let mid = TraceReader::open(rec.path().to_str().unwrap(), ReadOptions { salvage: true }).unwrap();
    let mid = mid.defs();
    assert!(mid.strings.lookup(&format!("{f:#x}")).is_some());
    let path = rec.finish().unwrap();
    let (defs, events) = read(&path);
    let named: Vec<&str> = events
        .iter()
        .filter_map(|e| match e.kind {
            Kind::Enter { proc } => defs.strings.get(proc),
            _ => None,
        })
        .collect();
    assert_eq!(named.len(), 21);
    assert!(named[..20].iter().all(|&n| n == "spoor_record_test_procedure"));
    assert_eq!(named[20], "0x10");
}

#[test]
fn unwritable_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let err = Recorder::start(Config::new(file.join("sub"), "a", "p", 0)).err().unwrap();
    assert!(err.to_string().contains("plain-file"), "{err}");
}

fn thread_cpu() -> i64 {
    spoor_record::clock::thread_cpu_ns()
}

/// How far a recorded CPU time may lag our own reading of the clock: Linux's thread CPU
/// clock can run ahead of the wall clock by microseconds at a time (its accounting), and
/// the recorder holds such a reading back to the wall time elapsed.
const LAG: i64 = 200_000;

/// Computes (no system call) for about `ns` of this thread's CPU time.
fn spin(ns: i64) {
    let end = thread_cpu() + ns;
    let mut x = 0u64;
    while thread_cpu() < end {
        for i in 0..1000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
    }
}

/// The CPU time of the events carrying it, in order, with their kinds.
fn cpu_of(events: &[Event]) -> Vec<(&'static str, i64, i64)> {
    events.iter().map(|e| (e.kind.name(), e.wall, e.cpu.expect("cpu"))).collect()
}

#[test]
fn cpu_time_is_read_exactly_at_waits_and_never_exceeds_wall_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::new(dir.path(), "exact", "p", 0);
    // Hardly any reading by time: only the kinds that need one read the clock.
    cfg.cpu_interval_ns = 1_000_000_000;
    let rec = Recorder::start(cfg).unwrap();
    let peer = rec.peer("q", 1);
    let world = rec.comm("world", &[rec.location(), peer]);
    let work = rec.procedure("work");
    // Each exact event is bracketed by our own readings of the thread's CPU clock.
    let mut brackets = Vec::new();
    let mut exact = |f: &dyn Fn()| {
        let before = thread_cpu();
        f();
        brackets.push((before, thread_cpu()));
    };
    for round in 0..3 {
        rec.enter(work);
        spin(300_000);
        exact(&|| rec.recv_begin(Some(peer), world, Some(round)));
        std::thread::sleep(std::time::Duration::from_millis(5)); // waiting: no CPU
        exact(&|| rec.recv_end(peer, world, round, 8));
        spin(200_000);
        exact(&|| rec.barrier_begin(world));
        exact(&|| rec.barrier_end(world));
        exact(&|| rec.lock_request(1));
        exact(&|| rec.lock_acquire(1));
        rec.lock_release(1);
        rec.leave(work);
    }
    let path = rec.finish().unwrap();
    let (defs, events) = read(&path);
    assert_eq!(defs.property("cpu_interval_ns"), Some("1000000000"));
    check_times(&events);
    let waits: Vec<_> = cpu_of(&events)
        .into_iter()
        .filter(|(k, _, _)| {
            ["recv_begin", "recv_end", "coll_begin", "coll_end", "lock_request", "lock_acquire"].contains(k)
        })
        .collect();
    assert_eq!(waits.len(), brackets.len());
    for ((kind, _, cpu), (before, after)) in waits.iter().zip(&brackets) {
        assert!(before - LAG <= *cpu && cpu <= after, "{kind}: cpu {cpu} outside [{before}, {after}]");
    }
    // The 5 ms sleeps are inside the waits: they cost wall time, hardly any CPU time.
    for w in events.windows(2) {
        if matches!(w[0].kind, Kind::RecvBegin { .. }) {
            let (dw, dc) = (w[1].wall - w[0].wall, w[1].cpu.unwrap() - w[0].cpu.unwrap());
            assert!(dw >= 5_000_000 && dc < 2_000_000, "wait: wall {dw}, cpu {dc}");
        }
    }
}

#[test]
fn cpu_time_between_readings_advances_with_wall_time_until_the_next_reading() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::new(dir.path(), "between", "p", 0);
    cfg.cpu_interval_ns = 1_000_000_000;
    let rec = Recorder::start(cfg).unwrap();
    let a = rec.procedure("a");
    let b = rec.procedure("b");
    // Computing, then sleeping, between two readings (barrier end and begin): the
    // estimated times put the computing first, which is the truth here.
    rec.barrier_end(0);
    let t0 = thread_cpu();
    rec.enter(a);
    spin(3_000_000);
    let t1 = thread_cpu();
    rec.leave(a);
    std::thread::sleep(std::time::Duration::from_millis(20));
    rec.barrier_begin(0);
    // Sleeping, then computing: the estimate for leave(b) is too high (by the CPU time
    // used after it), never too low, and never above the next reading.
    rec.enter(b);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let t2 = thread_cpu();
    rec.leave(b);
    spin(3_000_000);
    rec.barrier_end(0);
    let t3 = thread_cpu();
    let path = rec.finish().unwrap();
    let (_, events) = read(&path);
    check_times(&events);
    let ev = cpu_of(&events);
    let at = |kind: &str, nth: usize| ev.iter().filter(|e| e.0 == kind).nth(nth).unwrap().2;
    let (enter_a, leave_a, begin) = (at("enter", 0), at("leave", 0), at("coll_begin", 0));
    let (leave_b, end) = (at("leave", 1), at("coll_end", 1));
    // a computed for 3 ms: its enter and leave carry (almost) its true CPU times.
    assert!(enter_a >= t0 - LAG && enter_a <= t0 + 1_000_000, "enter a {enter_a}, true {t0}");
    assert!(leave_a >= t1 - LAG && leave_a <= t1 + 1_000_000, "leave a {leave_a}, true {t1}");
    // The 20 ms sleep after it costs (almost) no CPU time.
    assert!(begin - leave_a < 1_000_000, "sleep after a: {} ns of cpu", begin - leave_a);
    // leave(b): at least its true time, at most the reading after it.
    assert!(leave_b >= t2 - LAG && leave_b <= end && end <= t3, "leave b {leave_b}, true {t2}, next {end}");
}

#[test]
fn every_event_reads_the_cpu_clock_with_interval_zero() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::new(dir.path(), "zero", "p", 0);
    cfg.cpu_interval_ns = 0;
    let rec = Recorder::start(cfg).unwrap();
    let a = rec.procedure("a");
    let mut brackets = Vec::new();
    for _ in 0..100 {
        let before = thread_cpu();
        rec.enter(a);
        let mid = thread_cpu();
        rec.leave(a);
        brackets.push((before, mid));
        brackets.push((mid, thread_cpu()));
    }
    let path = rec.finish().unwrap();
    let (_, events) = read(&path);
    check_times(&events);
    let procs: Vec<i64> = events
        .iter()
        .filter(|e| matches!(e.kind, Kind::Enter { .. } | Kind::Leave { .. }))
        .map(|e| e.cpu.unwrap())
        .collect();
    assert_eq!(procs.len(), brackets.len());
    for (cpu, (before, after)) in procs.iter().zip(&brackets) {
        assert!(before - LAG <= *cpu && *cpu <= *after, "cpu {cpu} outside [{before}, {after}]");
    }
}

#[test]
fn an_event_before_a_wait_takes_its_cpu_time_from_the_waits_reading() {
    let dir = tempfile::tempdir().unwrap();
    let rec = Recorder::start(Config::new(dir.path(), "before", "p", 0)).unwrap();
    let recv = rec.procedure("recv");
    rec.barrier_end(0);
    spin(2_000_000); // far more than the 10 µs after which an event reads the clock
    let before = thread_cpu();
    rec.record_before_wait(Kind::Enter { proc: recv });
    rec.recv_begin(None, 0, None);
    let after = thread_cpu();
    std::thread::sleep(std::time::Duration::from_millis(5));
    rec.recv_end(0, 0, 1, 8);
    let path = rec.finish().unwrap();
    let (_, events) = read(&path);
    check_times(&events);
    let ev = cpu_of(&events);
    let i = ev.iter().position(|e| e.0 == "enter").unwrap();
    let ((_, w_enter, c_enter), (kind, w_begin, c_begin)) = (ev[i], ev[i + 1]);
    assert_eq!(kind, "recv_begin");
    // Within the wall time between the two of the truth, and not above the reading.
    assert!(c_enter >= before - LAG && c_enter <= c_begin && c_begin <= after, "{ev:?}");
    assert!(c_begin - c_enter <= w_begin - w_enter);
}
