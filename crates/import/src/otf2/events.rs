//! Decoding one location's events file.
//!
//! Event record layouts (after the type byte and, except for singletons, the
//! record length; `c32`/`c64` are compressed integers):
//!
//! | id | record | fields |
//! |---|---|---|
//! | 12, 13 | Enter, Leave (singletons) | region c32 |
//! | 14 | MpiSend | receiver c32, comm c32, tag c32, length c64 |
//! | 15 | MpiIsend | receiver c32, comm c32, tag c32, length c64, request c64 |
//! | 16, 17 | MpiIsendComplete, MpiIrecvRequest (singletons) | request c64 |
//! | 18 | MpiRecv | sender c32, comm c32, tag c32, length c64 |
//! | 19 | MpiIrecv | sender c32, comm c32, tag c32, length c64, request c64 |
//! | 22 | MpiCollectiveBegin | (nothing) |
//! | 23 | MpiCollectiveEnd | op u8, comm c32, root c32, sent c64, received c64 |
//! | 31 | Metric | metric c32, n u8, n × (type u8, value c64) |
//! | 62, 63, 65 | ThreadCreate, ThreadBegin, ThreadEnd | contingent c32, sequence c64 |
//! | 83 | ProgramBegin | name c32, n c32, n × argument c32 |
//! | 84 | ProgramEnd | exit status c64 |
//!
//! A TIMESTAMP record (5, then a full u64) sets the time of the events that
//! follow; an ATTRIBUTE_LIST record (6) precedes the event it belongs to.

use super::buf::{Chunked, ATTRIBUTE_LIST, END_OF_BUFFER, END_OF_CHUNK, END_OF_FILE, TIMESTAMP};
use super::defs::{mapping, ClockOffset, LocalDefs, UNDEF32};
use super::names::{ev, event_name, is_singleton};
use super::{ClockMode, CommInfo, LocationEvents, Otf2Archive};
use spoor_format::Error;
use spoor_model::{CollOp, Event, Kind, LocId};
use std::collections::{BTreeMap, HashMap};

/// Placeholder communicator of events completed later (IrecvRequest, CollBegin).
const PENDING: u32 = u32::MAX;

/// OTF2's clock correction: offsets interpolated linearly between samples
/// (extrapolated before the first and after the last interval); a single
/// sample corrects nothing, as in OTF2.
struct Corrector {
    /// (begin, end, offset at begin, slope)
    intervals: Vec<(u64, u64, i64, f64)>,
    cur: usize,
}

impl Corrector {
    fn new(offsets: &[ClockOffset]) -> Self {
        let intervals = offsets
            .windows(2)
            .map(|w| {
                // The differences converted, not the values: less precision lost.
                let slope = w[1].offset.wrapping_sub(w[0].offset) as f64 / (w[1].time - w[0].time) as f64;
                (w[0].time, w[1].time, w[0].offset, slope)
            })
            .collect();
        Corrector { intervals, cur: 0 }
    }

    #[inline]
    fn apply(&mut self, t: u64) -> u64 {
        if self.intervals.is_empty() {
            return t;
        }
        while self.cur + 1 < self.intervals.len() && t > self.intervals[self.cur].1 {
            self.cur += 1;
        }
        let (begin, _, offset, slope) = self.intervals[self.cur];
        // As OTF2 3.x does it: the interpolated part rounded to whole ticks
        // (ties to even), then added in integer arithmetic.
        let diff = if t >= begin { (t - begin) as f64 } else { -((begin - t) as f64) };
        let offset = offset.wrapping_add((slope * diff).round_ties_even() as i64);
        t.wrapping_add(offset as u64)
    }
}

fn coll_op(op: u8) -> CollOp {
    match op {
        0 => CollOp::Barrier,
        1 => CollOp::Bcast,
        2 => CollOp::Gather,
        3 => CollOp::Gatherv,
        4 => CollOp::Scatter,
        5 => CollOp::Scatterv,
        6 => CollOp::Allgather,
        7 => CollOp::Allgatherv,
        8 => CollOp::Alltoall,
        9 => CollOp::Alltoallv,
        11 => CollOp::Allreduce,
        12 => CollOp::Reduce,
        13 | 16 => CollOp::ReduceScatter,
        14 => CollOp::Scan,
        _ => CollOp::Other,
    }
}

/// A metric value of OTF2 type `ty` from its 8 raw bytes.
fn metric_value(ty: u8, raw: u64) -> f64 {
    match ty {
        8 => raw as i64 as f64,    // INT64
        10 => f64::from_bits(raw), // DOUBLE
        _ => raw as f64,           // UINT64 (and anything else)
    }
}

struct Skips {
    by_type: [u64; 256],
    attribute_lists: u64,
    other: BTreeMap<String, u64>,
}

impl Skips {
    fn add(&mut self, why: &str) {
        *self.other.entry(why.to_owned()).or_insert(0) += 1;
    }

    fn into_map(self) -> BTreeMap<String, u64> {
        let mut m = self.other;
        if self.attribute_lists > 0 {
            m.insert("ATTRIBUTE_LIST".into(), self.attribute_lists);
        }
        for (t, &n) in self.by_type.iter().enumerate() {
            if n > 0 {
                let name = match event_name(t as u8) {
                    Some(s) => s.to_owned(),
                    None => format!("UNKNOWN_{t}"),
                };
                *m.entry(name).or_insert(0) += n;
            }
        }
        m
    }
}

pub(crate) fn decode(
    a: &Otf2Archive,
    loc: LocId,
    data: &[u8],
    file: &str,
    local: &LocalDefs,
) -> Result<LocationEvents, Error> {
    let ctx = &a.ctx;
    let defs = &a.defs;
    let clock = ctx.clock;
    let raw_mode = a.options.clock == ClockMode::Raw;
    let mut corrector = Corrector::new(if raw_mode { &[] } else { &local.clock_offsets });

    let announced = ctx.announced.get(loc as usize).copied().unwrap_or(0);
    // The announced count is a hint: never trust it beyond what the file can hold
    // (an event with its timestamp takes about 10 bytes or more).
    let mut events: Vec<Event> = Vec::with_capacity(announced.min(data.len() as u64 / 8 + 16) as usize);
    let mut skips = Skips { by_type: [0; 256], attribute_lists: 0, other: BTreeMap::new() };
    let mut records: u64 = 0;

    // Extra events inserted before the event at a given index of `events`.
    let mut extras: Vec<(usize, Event)> = Vec::new();
    // Open regions: (index of the Enter event, region is a blocking receive).
    let mut stack: Vec<(usize, bool)> = Vec::new();
    let mut pending_irecv: HashMap<u64, usize> = HashMap::new();
    let mut pending_coll: Vec<usize> = Vec::new();
    let mut placeholders = 0usize;
    let mut thread_creates = Vec::new();
    let mut thread_begins = Vec::new();

    let mut ch = Chunked::new(data, file, a.anchor.chunk_size_events)?;
    let mut wall: i64 = clock.ticks_to_ns(corrector.apply(0));
    let mut in_chunk: u64 = 0;

    let check_count = |ch: &Chunked, n: u64, at: usize| -> Result<(), Error> {
        let h = ch.header;
        let expected = h.last_event as i128 - h.first_event as i128 + 1;
        if h.last_event != 0 && expected != n as i128 {
            return Err(Error::corrupt(
                file,
                at as u64,
                format!(
                    "the chunk at byte {} announces events {} to {} ({} events) but holds {n}: the file is \
                     truncated or corrupt",
                    h.start, h.first_event, h.last_event, expected
                ),
            ));
        }
        Ok(())
    };

    let comm_of = |id: u32| -> Option<CommInfo> { ctx.comms.get(id).copied() };
    let resolve = |c: CommInfo, rank: u32| -> Option<LocId> {
        if c.is_self {
            (rank == 0).then_some(loc)
        } else {
            defs.comms.get(c.id as usize).and_then(|cm| cm.members.get(rank as usize)).copied()
        }
    };
    let bad_rank = |at: usize, what: &str, rank: u32, c: CommInfo| -> Error {
        let (name, n) = match defs.comms.get(c.id as usize) {
            Some(cm) => (defs.strings.name(cm.name).into_owned(), cm.members.len()),
            None => ("?".into(), 0),
        };
        let n = if c.is_self { 1 } else { n };
        Error::corrupt(
            file,
            at as u64,
            format!("{what} rank {rank} is not in communicator '{name}' ({n} members)"),
        )
    };

    loop {
        let at = ch.cur.pos;
        let t = ch.record_type()?;
        match t {
            END_OF_CHUNK => {
                check_count(&ch, in_chunk, at)?;
                in_chunk = 0;
                ch.next_chunk(at)?;
                continue;
            }
            END_OF_FILE | END_OF_BUFFER => {
                check_count(&ch, in_chunk, at)?;
                break;
            }
            TIMESTAMP => {
                let ticks = ch.cur.u64_full("a timestamp")?;
                wall = clock.ticks_to_ns(corrector.apply(ticks));
                continue;
            }
            ATTRIBUTE_LIST => {
                ch.cur.record("ATTRIBUTE_LIST")?;
                skips.attribute_lists += 1;
                continue;
            }
            _ => {}
        }
        in_chunk += 1;
        records += 1;
        let push = |events: &mut Vec<Event>, kind: Kind| events.push(Event::new(loc, wall, None, kind));

        if is_singleton(t) {
            match t {
                ev::ENTER | ev::LEAVE => {
                    let id = local.map(mapping::REGION, ch.cur.u32("a region id")?);
                    let Some(r) = ctx.regions.get(id) else {
                        return Err(Error::corrupt(
                            file,
                            at as u64,
                            format!(
                                "{} of region {id}, which the global definitions do not define",
                                event_name(t).unwrap_or("?")
                            ),
                        ));
                    };
                    if t == ev::ENTER {
                        stack.push((events.len(), r.blocking_recv));
                        push(&mut events, Kind::Enter { proc: r.name });
                    } else {
                        stack.pop();
                        push(&mut events, Kind::Leave { proc: r.name });
                    }
                }
                ev::MPI_ISEND_COMPLETE => {
                    let request = ch.cur.u64("a request id")?;
                    push(&mut events, Kind::IsendComplete { request });
                }
                ev::MPI_IRECV_REQUEST => {
                    let request = ch.cur.u64("a request id")?;
                    // A request id reused before completing drops the older post.
                    pending_irecv.insert(request, events.len());
                    placeholders += 1;
                    push(&mut events, Kind::IrecvRequest { from: None, comm: PENDING, tag: None, request });
                }
                _ => {
                    ch.cur.u64(event_name(t).unwrap_or("a singleton record"))?;
                    skips.by_type[t as usize] += 1;
                }
            }
            continue;
        }

        let name = event_name(t).unwrap_or("an unknown event");
        let mut r = ch.cur.record(name)?;
        match t {
            ev::MPI_SEND | ev::MPI_ISEND => {
                let rank = r.u32("the receiver")?;
                let comm = local.map(mapping::COMM, r.u32("the communicator")?);
                let tag = r.u32("the tag")?;
                let bytes = r.u64("the message length")?;
                let request = if t == ev::MPI_ISEND { r.u64("the request id")? } else { 0 };
                let Some(c) = comm_of(comm) else {
                    skips.add(&format!("{name}(undefined communicator)"));
                    continue;
                };
                let to =
                    resolve(c, rank).ok_or_else(|| bad_rank(at, &format!("{name} receiver"), rank, c))?;
                let kind = if t == ev::MPI_SEND {
                    Kind::Send { to, comm: c.id, tag, bytes }
                } else {
                    Kind::Isend { to, comm: c.id, tag, bytes, request }
                };
                push(&mut events, kind);
            }
            ev::MPI_RECV | ev::MPI_IRECV => {
                let rank = r.u32("the sender")?;
                let comm = local.map(mapping::COMM, r.u32("the communicator")?);
                let tag = r.u32("the tag")?;
                let bytes = r.u64("the message length")?;
                let request = if t == ev::MPI_IRECV { r.u64("the request id")? } else { 0 };
                let Some(c) = comm_of(comm) else {
                    skips.add(&format!("{name}(undefined communicator)"));
                    continue;
                };
                let from =
                    resolve(c, rank).ok_or_else(|| bad_rank(at, &format!("{name} sender"), rank, c))?;
                if t == ev::MPI_RECV {
                    if a.options.recv_begin {
                        if let Some(&(enter, true)) = stack.last() {
                            let w = events[enter].wall;
                            let kind = Kind::RecvBegin { from: Some(from), comm: c.id, tag: Some(tag) };
                            extras.push((enter + 1, Event::new(loc, w, None, kind)));
                        }
                    }
                    push(&mut events, Kind::RecvEnd { from, comm: c.id, tag, bytes });
                } else {
                    if let Some(i) = pending_irecv.remove(&request) {
                        events[i].kind =
                            Kind::IrecvRequest { from: Some(from), comm: c.id, tag: Some(tag), request };
                        placeholders -= 1;
                    }
                    push(&mut events, Kind::IrecvComplete { request, from, comm: c.id, tag, bytes });
                }
            }
            ev::MPI_COLLECTIVE_BEGIN => {
                pending_coll.push(events.len());
                placeholders += 1;
                push(&mut events, Kind::CollBegin { op: CollOp::Other, comm: PENDING });
            }
            ev::MPI_COLLECTIVE_END => {
                let op = coll_op(r.u8("the collective operation")?);
                let comm = local.map(mapping::COMM, r.u32("the communicator")?);
                let root = r.u32("the root")?;
                let sent = r.u64("the bytes sent")?;
                let received = r.u64("the bytes received")?;
                // The begin pairs with this end even if the end is dropped
                // (then the begin stays a placeholder and is dropped too).
                let begin = pending_coll.pop();
                let Some(c) = comm_of(comm) else {
                    skips.add(&format!("{name}(undefined communicator)"));
                    continue;
                };
                if let Some(i) = begin {
                    events[i].kind = Kind::CollBegin { op, comm: c.id };
                    placeholders -= 1;
                }
                let root = if root == UNDEF32 { None } else { resolve(c, root) };
                push(&mut events, Kind::CollEnd { op, comm: c.id, root, sent, received });
            }
            ev::METRIC => {
                let id = local.map(mapping::METRIC, r.u32("the metric")?);
                let n = r.u8("the number of metric values")?;
                let slots = ctx.metrics.get(id);
                if slots.is_none() {
                    skips.add("METRIC(undefined metric)");
                }
                for i in 0..n as usize {
                    let ty = r.u8("a metric value type")?;
                    let raw = r.u64("a metric value")?;
                    if let Some(s) = slots.and_then(|s| s.get(i)) {
                        let value = metric_value(ty, raw) * s.scale;
                        push(&mut events, Kind::Metric { metric: s.id, value });
                    }
                }
            }
            ev::PROGRAM_BEGIN => push(&mut events, Kind::ProcessBegin { parent: None }),
            ev::PROGRAM_END => push(&mut events, Kind::ProcessEnd),
            ev::THREAD_BEGIN | ev::THREAD_END | ev::THREAD_CREATE => {
                let contingent = local.map(mapping::COMM, r.u32("the thread contingent")?);
                let seq = r.u64("the sequence count")?;
                match t {
                    ev::THREAD_BEGIN => {
                        thread_begins.push((contingent, seq));
                        push(&mut events, Kind::ThreadBegin { parent: None });
                    }
                    ev::THREAD_END => push(&mut events, Kind::ThreadEnd),
                    _ => {
                        thread_creates.push((contingent, seq));
                        skips.by_type[t as usize] += 1;
                    }
                }
            }
            _ => skips.by_type[t as usize] += 1,
        }
    }

    if raw_mode {
        for o in &local.clock_offsets {
            let w = clock.ticks_to_ns(o.time);
            let offset = offset_ns(&clock, o.offset);
            let error = clock.span_to_ns(o.stddev).abs().round();
            let error = if error.is_finite() { error.min(u64::MAX as f64) as u64 } else { 0 };
            let pos = events.partition_point(|e| e.wall <= w);
            extras.push((pos, Event::new(loc, w, None, Kind::ClockOffset { reference: 0, offset, error })));
        }
    }

    let events =
        if extras.is_empty() && placeholders == 0 { events } else { assemble(events, extras, &mut skips) };
    Ok(LocationEvents { loc, events, skipped: skips.into_map(), records, thread_creates, thread_begins })
}

/// An offset in ticks to ns (no global offset: it is a difference).
fn offset_ns(clock: &super::ClockInfo, ticks: i64) -> i64 {
    let r = clock.resolution as i128;
    let ns = (ticks as i128 * 2_000_000_000 + r).div_euclid(2 * r);
    ns.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// Inserts the extra events at their positions and drops the placeholders
/// that were never completed (an MPI_IRECV_REQUEST without its MPI_IRECV, an
/// MPI_COLLECTIVE_BEGIN without its end).
fn assemble(events: Vec<Event>, mut extras: Vec<(usize, Event)>, skips: &mut Skips) -> Vec<Event> {
    extras.sort_by_key(|p| p.0);
    let mut out = Vec::with_capacity(events.len() + extras.len());
    let mut extras = extras.into_iter().peekable();
    for (i, e) in events.into_iter().enumerate() {
        while let Some((_, x)) = extras.next_if(|p| p.0 <= i) {
            out.push(x);
        }
        match e.kind {
            Kind::IrecvRequest { comm: PENDING, .. } => skips.add("MPI_IRECV_REQUEST(never completed)"),
            Kind::CollBegin { comm: PENDING, .. } => skips.add("MPI_COLLECTIVE_BEGIN(no end)"),
            _ => out.push(e),
        }
    }
    out.extend(extras.map(|p| p.1));
    out
}
