//! Property tests: random message patterns (blocking and non-blocking, wildcards,
//! requests completed out of order, reused request ids) matched by spoor-order and by
//! a brute-force reading of MPI's rule, against the truth the generator knows.

use proptest::prelude::*;
use spoor_format::{ReadOptions, TraceReader, TraceWriter, WriterOptions};
use spoor_model::{CollOp, Definitions, Event, EventRef, Kind, LocId};
use spoor_order::align::{self, AlignOptions, Method};
use spoor_order::order::{self, OrderOptions};
use spoor_order::scan::{Rec, Record, RecordList};
use spoor_order::{matching, Input};
use std::collections::{BTreeMap, HashMap};

mod common;

use common::Rng;

type Chan = (LocId, LocId, u32);

struct OpenIrecv {
    request: u64,
    chan: Chan,
    seq: usize,
}

/// A random, consistent run: per location its events (wall = global step, so time
/// agrees with happened-before), and the true (send, receive completion) pairs.
struct Run {
    defs: Definitions,
    events: Vec<Event>,
    truth: Vec<(EventRef, EventRef)>,
}

fn generate(seed: u64, locs: u32, steps: usize) -> Run {
    let mut rng = Rng(seed);
    let mut defs = Definitions::new();
    let app = defs.add_app("random");
    let m = defs.add_machine("node0");
    for r in 0..locs {
        let p = defs.add_process(&format!("rank{r}"), app, m, r);
        defs.add_location(&format!("rank{r}"), p, 0);
    }
    defs.add_comm("world", (0..locs).collect());
    let mut events = Vec::new();
    let mut count = vec![0u64; locs as usize];
    let mut wall = 0i64;
    let mut push = |events: &mut Vec<Event>, loc: LocId, kind: Kind| -> EventRef {
        wall += 1;
        events.push(Event::new(loc, wall, None, kind));
        let r = EventRef { loc, index: count[loc as usize] };
        count[loc as usize] += 1;
        r
    };
    // Per channel: sends (event, bytes) in order, and how many receives were assigned.
    let mut sends: BTreeMap<Chan, Vec<(EventRef, u64)>> = BTreeMap::new();
    let mut assigned: BTreeMap<Chan, usize> = BTreeMap::new();
    let mut open_irecv: Vec<Vec<OpenIrecv>> = (0..locs).map(|_| Vec::new()).collect();
    let mut open_isend: Vec<Vec<u64>> = (0..locs).map(|_| Vec::new()).collect();
    let mut truth = Vec::new();
    let mut next_req = 100u64;
    let tags = 3u64;
    let complete_recv = |rng: &mut Rng,
                         events: &mut Vec<Event>,
                         push: &mut dyn FnMut(&mut Vec<Event>, LocId, Kind) -> EventRef,
                         truth: &mut Vec<(EventRef, EventRef)>,
                         sends: &BTreeMap<Chan, Vec<(EventRef, u64)>>,
                         loc: LocId,
                         o: OpenIrecv| {
        let (s, bytes) = sends[&o.chan][o.seq];
        let _ = rng;
        let r = push(
            events,
            loc,
            Kind::IrecvComplete { request: o.request, from: o.chan.0, comm: 0, tag: o.chan.2, bytes },
        );
        truth.push((s, r));
    };
    for _ in 0..steps {
        let loc = rng.below(locs as u64) as LocId;
        if rng.chance(3) {
            // Everyone meets in a barrier.
            for l in 0..locs {
                push(&mut events, l, Kind::CollBegin { op: CollOp::Barrier, comm: 0 });
            }
            for l in 0..locs {
                push(
                    &mut events,
                    l,
                    Kind::CollEnd { op: CollOp::Barrier, comm: 0, root: None, sent: 0, received: 0 },
                );
            }
            continue;
        }
        match rng.below(6) {
            0 | 1 => {
                // A send, blocking or not, to anyone (itself included).
                let to = rng.below(locs as u64) as LocId;
                let tag = rng.below(tags) as u32;
                let bytes = rng.below(4) * 8;
                let chan = (loc, to, tag);
                let ev = if rng.chance(40) {
                    let request = if rng.chance(30) { 1 } else { next_req };
                    next_req += 1;
                    if open_isend[loc as usize].contains(&request) {
                        push(&mut events, loc, Kind::Send { to, comm: 0, tag, bytes })
                    } else {
                        open_isend[loc as usize].push(request);
                        push(&mut events, loc, Kind::Isend { to, comm: 0, tag, bytes, request })
                    }
                } else {
                    push(&mut events, loc, Kind::Send { to, comm: 0, tag, bytes })
                };
                sends.entry(chan).or_default().push((ev, bytes));
            }
            2 => {
                // A blocking receive of a message already sent (so it completes at once),
                // posted with a wildcard now and then. Only if no receive of this
                // location is posted on that channel ahead of it.
                let avail: Vec<Chan> = sends
                    .iter()
                    .filter(|(c, v)| c.1 == loc && v.len() > *assigned.get(c).unwrap_or(&0))
                    .map(|(c, _)| *c)
                    .collect();
                if avail.is_empty() {
                    continue;
                }
                let chan = avail[rng.below(avail.len() as u64) as usize];
                let seq = *assigned.get(&chan).unwrap_or(&0);
                *assigned.entry(chan).or_default() += 1;
                let from = if rng.chance(30) { None } else { Some(chan.0) };
                let tag = if rng.chance(30) { None } else { Some(chan.2) };
                push(&mut events, loc, Kind::RecvBegin { from, comm: 0, tag });
                let (s, bytes) = sends[&chan][seq];
                let r = push(&mut events, loc, Kind::RecvEnd { from: chan.0, comm: 0, tag: chan.2, bytes });
                truth.push((s, r));
            }
            3 => {
                // A non-blocking receive on a chosen channel (perhaps before its send).
                let from_loc = rng.below(locs as u64) as LocId;
                let chan = (from_loc, loc, rng.below(tags) as u32);
                let seq = *assigned.get(&chan).unwrap_or(&0);
                *assigned.entry(chan).or_default() += 1;
                // Request ids are reused once free.
                let request = if rng.chance(50) && !open_irecv[loc as usize].iter().any(|o| o.request == 5) {
                    5
                } else {
                    next_req += 1;
                    next_req
                };
                let from = if rng.chance(30) { None } else { Some(chan.0) };
                let tag = if rng.chance(30) { None } else { Some(chan.2) };
                push(&mut events, loc, Kind::IrecvRequest { from, comm: 0, tag, request });
                open_irecv[loc as usize].push(OpenIrecv { request, chan, seq });
            }
            4 => {
                // Complete any open receive whose message was sent (any order).
                let ready: Vec<usize> = open_irecv[loc as usize]
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| sends.get(&o.chan).is_some_and(|v| v.len() > o.seq))
                    .map(|(i, _)| i)
                    .collect();
                if ready.is_empty() {
                    continue;
                }
                let o = open_irecv[loc as usize].remove(ready[rng.below(ready.len() as u64) as usize]);
                complete_recv(&mut rng, &mut events, &mut push, &mut truth, &sends, loc, o);
            }
            _ => {
                if let Some(request) = open_isend[loc as usize].pop() {
                    push(&mut events, loc, Kind::IsendComplete { request });
                } else {
                    push(&mut events, loc, Kind::Enter { proc: 0 });
                }
            }
        }
    }
    // Finish: send what open receives still wait for, then complete them.
    for loc in 0..locs {
        let opens = std::mem::take(&mut open_irecv[loc as usize]);
        for o in opens {
            while sends.get(&o.chan).map_or(0, Vec::len) <= o.seq {
                let ev =
                    push(&mut events, o.chan.0, Kind::Send { to: loc, comm: 0, tag: o.chan.2, bytes: 8 });
                sends.entry(o.chan).or_default().push((ev, 8));
            }
            complete_recv(&mut rng, &mut events, &mut push, &mut truth, &sends, loc, o);
        }
        while let Some(request) = open_isend[loc as usize].pop() {
            push(&mut events, loc, Kind::IsendComplete { request });
        }
    }
    defs.strings.intern("work");
    truth.sort();
    Run { defs, events, truth }
}

/// MPI's rule read literally, in quadratic time: take each location's receives in the
/// order they were posted, each with the source and tag it actually got, and give each
/// the earliest send of that source to it, with that tag, not given to another.
fn brute_force(run: &Run) -> Vec<(EventRef, EventRef)> {
    let locs = run.defs.locations.len();
    let mut per: Vec<Vec<(u64, &Event)>> = vec![Vec::new(); locs];
    for e in &run.events {
        let v = &mut per[e.loc as usize];
        let i = v.len() as u64;
        v.push((i, e));
    }
    // Receives: (receiver, posting index, completion index, from, tag).
    let mut recvs = Vec::new();
    for (l, evs) in per.iter().enumerate() {
        for (i, e) in evs {
            let posted = |pred: &dyn Fn(&Kind) -> bool| -> u64 {
                evs[..*i as usize].iter().rev().find(|(_, x)| pred(&x.kind)).map_or(*i, |(j, _)| *j)
            };
            match e.kind {
                Kind::RecvEnd { from, tag, .. } => {
                    let p = posted(&|k| matches!(k, Kind::RecvBegin { .. }));
                    recvs.push((l as LocId, p, *i, from, tag));
                }
                Kind::IrecvComplete { request, from, tag, .. } => {
                    let p = posted(&|k| matches!(k, Kind::IrecvRequest { request: q, .. } if *q == request));
                    recvs.push((l as LocId, p, *i, from, tag));
                }
                _ => {}
            }
        }
    }
    recvs.sort();
    let mut taken = vec![Vec::new(); locs];
    for (l, evs) in per.iter().enumerate() {
        taken[l] = vec![false; evs.len()];
    }
    let mut pairs = Vec::new();
    for (to, _, ci, from, tag) in recvs {
        let found = per[from as usize].iter().find(|(i, e)| {
            !taken[from as usize][*i as usize]
                && match e.kind {
                    Kind::Send { to: t, tag: g, .. } | Kind::Isend { to: t, tag: g, .. } => {
                        t == to && g == tag
                    }
                    _ => false,
                }
        });
        if let Some((i, _)) = found {
            taken[from as usize][*i as usize] = true;
            pairs.push((EventRef { loc: from, index: *i }, EventRef { loc: to, index: ci }));
        }
    }
    pairs.sort();
    pairs
}

/// The sends of `run` that no receive got.
fn unreceived(run: &Run) -> Vec<EventRef> {
    let got: std::collections::HashSet<EventRef> = run.truth.iter().map(|p| p.0).collect();
    let mut count = vec![0u64; run.defs.locations.len()];
    let mut v = Vec::new();
    for e in &run.events {
        let r = EventRef { loc: e.loc, index: count[e.loc as usize] };
        count[e.loc as usize] += 1;
        if matches!(e.kind, Kind::Send { .. } | Kind::Isend { .. }) && !got.contains(&r) {
            v.push(r);
        }
    }
    v.sort();
    v
}

fn records(run: &Run) -> Vec<RecordList> {
    let mut recs = vec![RecordList::default(); run.defs.locations.len()];
    let mut count = vec![0u64; run.defs.locations.len()];
    for e in &run.events {
        let l = e.loc as usize;
        if let Some(rec) = Rec::of(&e.kind) {
            recs[l].push(Record::new(count[l], e.wall, rec));
        }
        count[l] += 1;
    }
    recs
}

fn binary(run: &Run) -> Vec<u8> {
    let mut w =
        TraceWriter::new(Vec::new(), &run.defs, WriterOptions { block_events: 7, ..Default::default() })
            .unwrap();
    for e in &run.events {
        w.write(e).unwrap();
    }
    w.finish().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn matching_agrees_with_brute_force(
        seed in any::<u64>(),
        // Past 16 locations, matching reads them in batches and matches a channel as soon
        // as both its ends are read, across batches either way.
        locs in prop_oneof![1u32..5, 17u32..60],
        steps in 0usize..300,
    ) {
        let run = generate(seed, locs, steps);
        let sync = matching::match_events(&run.defs, &records(&run));
        // Messages handed over one at a time are those collected, in the same order.
        let mut each = Vec::new();
        let counted = matching::match_events_each(&run.defs, records(&run), |m| each.push(m));
        prop_assert_eq!(&each, &sync.messages);
        prop_assert_eq!(counted.message_count, sync.messages.len());
        let mut got: Vec<(EventRef, EventRef)> = sync.messages.iter().map(|m| (m.send, m.recv)).collect();
        got.sort();
        prop_assert_eq!(&got, &run.truth);
        prop_assert_eq!(&brute_force(&run), &run.truth);
        // The receives' points name the same messages, collected or not.
        let mut by_points: Vec<(EventRef, EventRef)> = sync.messages_by_points().collect();
        by_points.sort();
        prop_assert_eq!(&by_points, &run.truth);
        let mut handed = Vec::new();
        let uncollected = matching::match_events_points(&run.defs, records(&run), |m| handed.push(m));
        prop_assert_eq!(&handed, &sync.messages);
        prop_assert!(uncollected.messages.is_empty());
        prop_assert_eq!(uncollected.message_count, run.truth.len());
        prop_assert!(uncollected.messages_by_points().eq(sync.messages_by_points()));
        // The only errors are the sends no receive was given: the generator's leftovers.
        let mut unsent: Vec<EventRef> = sync
            .problems
            .iter()
            .filter(|p| p.kind == matching::ProblemKind::UnmatchedSend)
            .map(|p| p.at)
            .collect();
        unsent.sort();
        prop_assert_eq!(unsent, unreceived(&run));
        let others: Vec<String> = sync
            .problems
            .iter()
            .filter(|p| p.kind.is_error() && p.kind != matching::ProblemKind::UnmatchedSend)
            .map(|p| p.describe(&run.defs))
            .collect();
        prop_assert!(others.is_empty(), "{:?}", others);
    }

    #[test]
    fn order_follows_time_and_happened_before(
        seed in any::<u64>(),
        // Past 16 locations, matching reads them in batches, and codes each location's
        // partners once its messages are all matched, before its barriers'.
        locs in prop_oneof![1u32..5, 17u32..40],
        steps in 0usize..300,
    ) {
        let run = generate(seed, locs, steps);
        let input = Input::from_bytes("random", binary(&run));
        let mut out = Vec::new();
        let s = order::order(&input, &mut out, &OrderOptions { block_events: 5 }).unwrap();
        let list: Vec<String> = s.problems.iter().map(|p| p.describe(&run.defs)).collect();
        prop_assert_eq!(s.error_count(), unreceived(&run).len(), "{:#?}", list);
        let (_, events) = TraceReader::from_bytes("out", out, ReadOptions::default()).unwrap().read_all().unwrap();
        prop_assert_eq!(events.len(), run.events.len());
        // Times agree with happened-before here (one global clock), so the order is time order.
        let walls: Vec<i64> = events.iter().map(|e| e.wall).collect();
        let mut sorted = walls.clone();
        sorted.sort();
        prop_assert_eq!(walls, sorted);
        // Partners both ways, and Lamport clocks that grow along every message.
        let mut at: HashMap<EventRef, &Event> = HashMap::new();
        let mut count = vec![0u64; run.defs.locations.len()];
        for e in &events {
            at.insert(EventRef { loc: e.loc, index: count[e.loc as usize] }, e);
            count[e.loc as usize] += 1;
        }
        for &(s, r) in &run.truth {
            prop_assert_eq!(at[&s].ann.partner, Some(r));
            prop_assert_eq!(at[&r].ann.partner, Some(s));
            prop_assert!(at[&s].ann.lamport < at[&r].ann.lamport);
        }
    }

    #[test]
    fn broken_clocks_still_order_and_align(
        seed in any::<u64>(),
        locs in prop_oneof![2u32..5, 17u32..30],
        steps in 0usize..200,
    ) {
        let mut run = generate(seed, locs, steps);
        // Every location's clock off by up to +-40 steps: times now disagree with happened-before.
        let mut rng = Rng(seed ^ 0x5eed);
        let skew: Vec<i64> = (0..locs).map(|_| rng.below(81) as i64 - 40).collect();
        for e in &mut run.events {
            e.wall = e.wall * 10 + skew[e.loc as usize] * 10;
        }
        let bytes = binary(&run);
        let input = Input::from_bytes("skewed", bytes);
        let mut out = Vec::new();
        let s = order::order(&input, &mut out, &OrderOptions { block_events: 3 }).unwrap();
        prop_assert_eq!(s.error_count(), unreceived(&run).len());
        let (_, events) = TraceReader::from_bytes("out", out, ReadOptions::default()).unwrap().read_all().unwrap();
        let mut pos: HashMap<EventRef, usize> = HashMap::new();
        let mut count = vec![0u64; locs as usize];
        for (i, e) in events.iter().enumerate() {
            pos.insert(EventRef { loc: e.loc, index: count[e.loc as usize] }, i);
            count[e.loc as usize] += 1;
        }
        for &(snd, rcv) in &run.truth {
            prop_assert!(pos[&snd] < pos[&rcv], "send {:?} after its receive {:?}", snd, rcv);
        }
        // Every barrier (the k-th at each location is instance k): all begins before any end.
        let mut begins_seen: HashMap<u64, u32> = HashMap::new();
        let mut nth_begin = vec![0u64; locs as usize];
        let mut nth_end = vec![0u64; locs as usize];
        for e in &events {
            let l = e.loc as usize;
            match e.kind {
                Kind::CollBegin { .. } => {
                    *begins_seen.entry(nth_begin[l]).or_default() += 1;
                    nth_begin[l] += 1;
                }
                Kind::CollEnd { .. } => {
                    prop_assert_eq!(begins_seen.get(&nth_end[l]).copied(), Some(locs), "an end before every begin");
                    nth_end[l] += 1;
                }
                _ => {}
            }
        }
        // The controlled logical clock alone leaves no violation, and keeps local order.
        for lmin in [0i64, 7] {
            let opts = AlignOptions { method: Method::None, min_latency: lmin, ..AlignOptions::default() };
            let mut out = Vec::new();
            let rep = align::align(&input, &opts, &mut out).unwrap();
            prop_assert_eq!(rep.violations_after.total(), 0);
            let aligned = spoor_order::scan::scan(&Input::from_bytes("a", out), spoor_order::scan::Keep::Walls).unwrap();
            for w in &aligned.walls {
                prop_assert!(w.iter().zip(w.iter().skip(1)).all(|(a, b)| a <= b));
            }
        }
    }
}
