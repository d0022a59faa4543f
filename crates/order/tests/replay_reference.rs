//! Property test: spoor-order (decoding on other threads, emitting a location's events
//! in runs, encoding blocks in parallel) gives exactly the bytes, summaries and errors
//! of a plain reference replay written here: every event of the trace in memory, one
//! event at a time through the engine and a heap of ready locations, written by the
//! format's own writer. The traces are random: messages, requests, wildcards,
//! collectives of every shape, locks, spawns, wall times out of order (violations,
//! cycles), old annotations, CPU times; inputs in per-location blocks, multi-location
//! blocks and the text form.

use proptest::prelude::*;
use spoor_format::binary::flags;
use spoor_format::{TraceWriter, WriterOptions};
use spoor_model::{CollOp, Definitions, Event, EventRef, Kind, LocId};
use spoor_order::matching::{self, Problem, ProblemKind};
use spoor_order::order::{self, OrderOptions};
use spoor_order::replay::{describe_cycle, Engine, Head};
use spoor_order::{scan, Input};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

mod common;

use common::Rng;

/// Random events for `locs` locations: each location's program is drawn on its own
/// (so messages may go unmatched and waits may form cycles), its times mostly rising.
fn generate(seed: u64, locs: u32, per_loc: usize) -> (Definitions, Vec<Event>) {
    let mut r = Rng(seed);
    let mut defs = Definitions::new();
    let app = defs.add_app("random");
    let m = defs.add_machine("node0");
    for l in 0..locs {
        let p = defs.add_process(&format!("rank{l}"), app, m, l);
        defs.add_location(&format!("rank{l}"), p, 0);
    }
    defs.add_comm("world", (0..locs).collect());
    if locs > 2 {
        defs.add_comm("pair", vec![0, 1]);
    }
    let comms = defs.comms.len() as u64;
    let mut events = Vec::new();
    for loc in 0..locs {
        let mut wall = r.below(50) as i64;
        let mut cpu = 0i64;
        let mut req = 0u64;
        let mut open_isend = Vec::new();
        let mut open_irecv = Vec::new();
        let mut held: Vec<u64> = Vec::new();
        let peer = |r: &mut Rng| r.below(locs as u64) as LocId;
        let mut kinds = Vec::new();
        if loc > 0 && r.chance(30) {
            kinds.push(Kind::ThreadBegin { parent: Some(peer(&mut r)) });
        }
        for _ in 0..per_loc {
            let tag = r.below(2) as u32;
            let comm = r.below(comms) as u32;
            let k = match r.below(16) {
                0 | 1 => Kind::Send { to: peer(&mut r), comm, tag, bytes: r.below(3) },
                2 | 3 => {
                    let from = peer(&mut r);
                    kinds.push(Kind::RecvBegin {
                        from: (!r.chance(20)).then_some(from),
                        comm,
                        tag: (!r.chance(20)).then_some(tag),
                    });
                    Kind::RecvEnd { from, comm, tag, bytes: r.below(3) }
                }
                4 => {
                    req += 1;
                    open_isend.push(req);
                    Kind::Isend { to: peer(&mut r), comm, tag, bytes: r.below(3), request: req }
                }
                5 if !open_isend.is_empty() => {
                    let i = r.below(open_isend.len() as u64) as usize;
                    Kind::IsendComplete { request: open_isend.swap_remove(i) }
                }
                6 => {
                    req += 1;
                    let from = peer(&mut r);
                    open_irecv.push((req, from, comm, tag));
                    Kind::IrecvRequest { from: Some(from), comm, tag: Some(tag), request: req }
                }
                7 if !open_irecv.is_empty() => {
                    let i = r.below(open_irecv.len() as u64) as usize;
                    let (request, from, comm, tag) = open_irecv.swap_remove(i);
                    Kind::IrecvComplete { request, from, comm, tag, bytes: r.below(3) }
                }
                8 | 9 => {
                    let op =
                        [CollOp::Barrier, CollOp::Bcast, CollOp::Reduce, CollOp::Scan, CollOp::Allreduce]
                            [r.below(5) as usize];
                    let root = matches!(op, CollOp::Bcast | CollOp::Reduce).then_some(0);
                    let comm = if r.chance(80) { 0 } else { comm };
                    if r.chance(80) {
                        kinds.push(Kind::CollBegin { op, comm });
                    }
                    Kind::CollEnd { op, comm, root, sent: r.below(9), received: r.below(9) }
                }
                10 => {
                    let lock = r.below(2);
                    held.push(lock);
                    if r.chance(50) {
                        kinds.push(Kind::LockRequest { lock });
                    }
                    Kind::LockAcquire { lock }
                }
                11 if !held.is_empty() => Kind::LockRelease { lock: held.remove(0) },
                12 => Kind::Metric { metric: 0, value: r.below(1000) as f64 / 7.0 },
                13 => Kind::Leave { proc: r.below(4) as u32 },
                _ => Kind::Enter { proc: r.below(4) as u32 },
            };
            kinds.push(k);
        }
        for kind in kinds {
            // Mostly rising, sometimes equal, sometimes earlier than the event before.
            wall += match r.below(10) {
                0 => -(r.below(20) as i64),
                1 => 0,
                _ => 1 + r.below(30) as i64,
            };
            let c = match r.below(4) {
                0 => None,
                _ => {
                    cpu += r.below(5) as i64;
                    Some(cpu)
                }
            };
            let mut ev = Event::new(loc, wall, c, kind);
            if r.chance(10) {
                ev.ann.raw_wall = Some(wall - r.below(100) as i64);
            }
            if r.chance(5) {
                ev.ann.lamport = Some(r.below(1000));
            }
            if r.chance(5) {
                ev.ann.partner = Some(EventRef { loc: peer(&mut r), index: r.below(50) });
            }
            events.push(ev);
        }
    }
    // Interleave the locations roughly by time, as a writer of blocks would see them.
    events.sort_by_key(|e| (e.wall / 40, e.loc));
    (defs, events)
}

/// A consistent random program: events made in one global sequence, every receive
/// after its send, collectives and critical sections in turn, so that happened-before
/// has no cycle; then some wall times moved far (clock-condition violations, locations
/// whose times go back).
fn generate_consistent(seed: u64, locs: u32, steps: usize) -> (Definitions, Vec<Event>) {
    let mut r = Rng(seed);
    let mut defs = Definitions::new();
    let app = defs.add_app("consistent");
    let m = defs.add_machine("node0");
    for l in 0..locs {
        let p = defs.add_process(&format!("rank{l}"), app, m, l);
        defs.add_location(&format!("rank{l}"), p, 0);
    }
    defs.add_comm("world", (0..locs).collect());
    let n = locs as usize;
    let mut events: Vec<Event> = Vec::new();
    let mut step = 0i64;
    let mut push = |events: &mut Vec<Event>, loc: LocId, kind: Kind| {
        step += 1;
        events.push(Event::new(loc, step * 10, Some(step * 7), kind));
    };
    for l in 1..locs {
        if r.chance(30) {
            let parent = r.below(l as u64) as LocId;
            push(&mut events, l, Kind::ThreadBegin { parent: Some(parent) });
        }
    }
    // Sends not yet received, per (sender, receiver, tag).
    let mut in_flight: Vec<(LocId, LocId, u32)> = Vec::new();
    let mut open_irecv: Vec<Vec<(u64, LocId, u32)>> = vec![Vec::new(); n];
    let mut req = 0u64;
    for _ in 0..steps {
        let loc = r.below(n as u64) as LocId;
        match r.below(12) {
            0..=2 => {
                let to = r.below(n as u64) as LocId;
                let tag = r.below(2) as u32;
                if r.chance(50) {
                    push(&mut events, loc, Kind::Send { to, comm: 0, tag, bytes: 8 });
                } else {
                    req += 1;
                    push(&mut events, loc, Kind::Isend { to, comm: 0, tag, bytes: 8, request: req });
                    push(&mut events, loc, Kind::IsendComplete { request: req });
                }
                in_flight.push((loc, to, tag));
            }
            3..=5 => {
                // The oldest message to `loc`, if any: the oldest of its channel too.
                if let Some(i) = in_flight.iter().position(|&(_, to, _)| to == loc) {
                    let (from, _, tag) = in_flight.remove(i);
                    if r.chance(50) {
                        let wild = r.chance(30);
                        push(
                            &mut events,
                            loc,
                            Kind::RecvBegin {
                                from: (!wild).then_some(from),
                                comm: 0,
                                tag: (!wild).then_some(tag),
                            },
                        );
                        push(&mut events, loc, Kind::RecvEnd { from, comm: 0, tag, bytes: 8 });
                    } else {
                        req += 1;
                        push(
                            &mut events,
                            loc,
                            Kind::IrecvRequest { from: Some(from), comm: 0, tag: Some(tag), request: req },
                        );
                        open_irecv[loc as usize].push((req, from, tag));
                    }
                }
            }
            6 => {
                if let Some((request, from, tag)) = open_irecv[loc as usize].pop() {
                    push(&mut events, loc, Kind::IrecvComplete { request, from, comm: 0, tag, bytes: 8 });
                }
            }
            7 => {
                let op = [CollOp::Barrier, CollOp::Bcast, CollOp::Reduce, CollOp::Scan, CollOp::Allreduce]
                    [r.below(5) as usize];
                let root = matches!(op, CollOp::Bcast | CollOp::Reduce).then(|| r.below(n as u64) as LocId);
                let mut order: Vec<LocId> = (0..locs).collect();
                for i in (1..order.len()).rev() {
                    order.swap(i, r.below(i as u64 + 1) as usize);
                }
                for &l in &order {
                    push(&mut events, l, Kind::CollBegin { op, comm: 0 });
                }
                for &l in order.iter().rev() {
                    push(&mut events, l, Kind::CollEnd { op, comm: 0, root, sent: 1, received: 1 });
                }
            }
            8 => {
                let lock = r.below(2);
                push(&mut events, loc, Kind::LockRequest { lock });
                push(&mut events, loc, Kind::LockAcquire { lock });
                push(&mut events, loc, Kind::Enter { proc: 1 });
                push(&mut events, loc, Kind::LockRelease { lock });
            }
            9 => push(&mut events, loc, Kind::Metric { metric: 0, value: r.below(100) as f64 / 3.0 }),
            _ => {
                push(&mut events, loc, Kind::Enter { proc: 0 });
                push(&mut events, loc, Kind::Leave { proc: 0 });
            }
        }
    }
    // Receive what is still in flight, so that most messages match.
    for (from, to, tag) in std::mem::take(&mut in_flight) {
        push(&mut events, to, Kind::RecvEnd { from, comm: 0, tag, bytes: 8 });
    }
    for e in events.iter_mut() {
        if r.chance(8) {
            let moved = e.wall + r.below(400) as i64 - 200;
            e.ann.raw_wall = Some(e.wall);
            e.wall = moved;
        }
    }
    (defs, events)
}

/// The trace in one of three forms: per-location blocks of `block` events, blocks in
/// the order given (multi-location), or text.
fn encode(defs: &Definitions, events: &[Event], form: u8, block: usize) -> Vec<u8> {
    if form == 2 {
        let mut out = Vec::new();
        spoor_format::text::write_header(&mut out).unwrap();
        spoor_format::text::write_definitions(&mut out, defs).unwrap();
        for e in events {
            spoor_format::text::write_event(&mut out, defs, e).unwrap();
        }
        return out;
    }
    let opts = WriterOptions { block_events: block, global_order: form == 1, index: true, flags: 0 };
    let mut w = TraceWriter::new(Vec::new(), defs, opts).unwrap();
    for e in events {
        w.write(e).unwrap();
    }
    w.finish().unwrap()
}

/// What the reference replay found: its output, or the cycle; its summary's JSON.
struct Reference {
    out: Result<Vec<u8>, String>,
    check: serde_json::Value,
}

/// The plain replay: blocks read in order while a location with events left has none
/// queued (so that a cycle names the events read so far, as spoor-order does), then
/// one event at a time.
fn reference(input: &Input, block_events: usize) -> Reference {
    let sc = scan::scan(input, scan::Keep::Records).unwrap();
    let sync = matching::match_events(&sc.defs, &sc.records);
    let n = sc.counts.len();
    let mut reader = input.reader().unwrap();
    let mut queues: Vec<VecDeque<Event>> = (0..n).map(|_| VecDeque::new()).collect();
    let mut remaining = sc.counts.clone();
    let mut starving = remaining.iter().filter(|&&c| c > 0).count();
    let mut engine = Engine::new(&sync, n);
    let mut heap: BinaryHeap<Reverse<(i64, LocId)>> = BinaryHeap::new();
    let mut in_heap = vec![false; n];
    let mut pending: Vec<LocId> = (0..n as LocId).filter(|&l| !queues[l as usize].is_empty()).collect();
    let mut partner_at = vec![0usize; n];
    let fixed_of: Vec<Vec<(u64, EventRef)>> = sync.partners.iter().map(|p| p.iter().collect()).collect();
    let mut lamport = vec![0i64; n];
    let mut woken = Vec::new();
    let mut left = sc.total_events();
    let mut released = 0;
    let mut rescanned = false;
    let mut written = Vec::new();
    let mut stuck: Option<(Problem, String)> = None;
    loop {
        while starving > 0 {
            for e in reader.next_block().unwrap().unwrap().events {
                let l = e.loc as usize;
                if queues[l].is_empty() {
                    starving -= 1;
                }
                remaining[l] -= 1;
                queues[l].push_back(e);
            }
        }
        for loc in pending.drain(..) {
            let l = loc as usize;
            if in_heap[l] {
                continue;
            }
            let Some(head) = queues[l].front() else { continue };
            let heads = |p: LocId| match queues.get(p as usize).and_then(|q| q.front()) {
                Some(e) => Head::At(e.wall),
                None if remaining[p as usize] == 0 => Head::Finished,
                None => Head::At(i64::MIN),
            };
            if engine.check(loc, head.wall, &heads) {
                heap.push(Reverse((head.wall, loc)));
                in_heap[l] = true;
            }
        }
        let Some(Reverse((_, loc))) = heap.pop() else {
            if left == 0 {
                break;
            }
            if !rescanned {
                rescanned = true;
                pending.extend((0..n as LocId).filter(|&l| !queues[l as usize].is_empty()));
                continue;
            }
            if let Some(child) = engine.release_spawn() {
                released += 1;
                pending.push(child);
                continue;
            }
            let start = (0..n).find(|&l| !queues[l].is_empty()).unwrap_or(0) as LocId;
            let cycle = engine.cycle(start);
            let what = |r: EventRef| -> Option<(&'static str, i64)> {
                let k = r.index.checked_sub(engine.next_index(r.loc))?;
                let e = queues.get(r.loc as usize)?.get(k as usize)?;
                Some((e.kind.name(), e.wall))
            };
            let message = describe_cycle(&sc.defs, &cycle, &what);
            let none = EventRef { loc: 0, index: 0 };
            let (at, awaited) = cycle.first().copied().unwrap_or((none, none));
            let (kind_name, wall) = what(at).unwrap_or(("event", 0));
            let problem = Problem {
                kind: ProblemKind::Cycle,
                at,
                kind_name,
                wall,
                other: Some(awaited),
                detail: message.clone(),
            };
            stuck = Some((problem, message));
            break;
        };
        let l = loc as usize;
        in_heap[l] = false;
        rescanned = false;
        let mut ev = queues[l].pop_front().unwrap();
        if queues[l].is_empty() && remaining[l] > 0 {
            starving += 1;
        }
        let idx = engine.next_index(loc);
        let inc = engine.incoming(loc);
        let clock = lamport[l].max(inc.map_or(0, |i| i.value)) + 1;
        lamport[l] = clock;
        let fixed = &fixed_of[l];
        let mut partner = None;
        while partner_at[l] < fixed.len() && fixed[partner_at[l]].0 <= idx {
            if fixed[partner_at[l]].0 == idx {
                partner = Some(fixed[partner_at[l]].1);
            }
            partner_at[l] += 1;
        }
        if partner.is_none()
            && matches!(ev.kind, Kind::CollEnd { .. } | Kind::ProcessBegin { .. } | Kind::ThreadBegin { .. })
        {
            partner = inc.map(|i| i.from);
        }
        ev.ann.partner = partner;
        ev.ann.lamport = Some(clock as u64);
        engine.emit(loc, ev.wall, clock, &mut woken);
        pending.append(&mut woken);
        pending.push(loc);
        left -= 1;
        written.push(ev);
    }
    let mut problems = sync.problems.clone();
    let out = match &stuck {
        Some((p, message)) => {
            problems.push(p.clone());
            Err(format!("{}: {message}", input.name()))
        }
        None => {
            let opts = WriterOptions {
                block_events,
                global_order: true,
                index: true,
                flags: (sc.flags & 0xffff_ffff) | flags::MATCHED,
            };
            let mut w = TraceWriter::new(Vec::new(), &sc.defs, opts).unwrap();
            for e in &written {
                w.write(e).unwrap();
            }
            Ok(w.finish().unwrap())
        }
    };
    let summary = order::OrderSummary {
        defs: sc.defs.clone(),
        events: sc.total_events(),
        messages: sync.messages.len(),
        collectives: sync.instances.len(),
        handoffs: sync.handoffs.len(),
        spawns: sync.spawns.len(),
        released_spawns: released,
        problems,
        violations: {
            // Per location, its events' times, for the plain count of violations.
            let mut walls: Vec<Vec<i64>> = vec![Vec::new(); sc.counts.len()];
            for e in input.reader().unwrap().read_all().unwrap().1 {
                walls[e.loc as usize].push(e.wall);
            }
            spoor_order::align::violations(&sync, &walls[..], 0)
        },
    };
    Reference { out, check: summary.to_json() }
}

fn compare(seed: u64, locs: u32, per_loc: usize, form: u8, in_block: usize, out_block: usize) {
    let (defs, events) = if seed.is_multiple_of(3) {
        generate(seed, locs, per_loc)
    } else {
        generate_consistent(seed, locs, per_loc * locs as usize)
    };
    let input = Input::from_bytes("random", encode(&defs, &events, form, in_block));
    let want = reference(&input, out_block);
    let mut out = Vec::new();
    let got = order::order(&input, &mut out, &OrderOptions { block_events: out_block });
    match (&want.out, got) {
        (Ok(bytes), Ok(_)) => assert!(*bytes == out, "seed {seed}: outputs differ"),
        (Err(message), Err(e)) => assert_eq!(*message, e.to_string(), "seed {seed}"),
        (w, g) => panic!("seed {seed}: reference {:?}, order {:?}", w.as_ref().map(|b| b.len()), g.err()),
    }
    let check = order::check(&input).unwrap();
    assert_eq!(check.to_json(), want.check, "seed {seed}: --check differs");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn order_is_the_plain_replay(
        seed in any::<u64>(),
        locs in 1u32..7,
        per_loc in 0usize..60,
        form in 0u8..3,
        in_block in 1usize..9,
        out_block in 1usize..9,
    ) {
        compare(seed, locs, per_loc, form, in_block, out_block);
    }
}

/// Many locations and events (runs, refills of the queues, full and partial blocks).
#[test]
fn bigger_traces_are_the_plain_replay() {
    for seed in 0..6 {
        compare(seed, 40, 300, (seed % 3) as u8, 17, 64);
    }
}
