//! spoor-order: match, then emit every event in a causally consistent total order
//! with its partner and Lamport clock.
//!
//! The second pass streams the input's blocks and keeps a queue per location; among
//! the locations whose next event has everything it waits for, the one with the
//! earliest wall time goes next. The result is a topological order of happened-before
//! that follows time wherever time agrees with it: on a trace without clock-condition
//! violations it is the time order (ties by location). Memory holds the queued events,
//! about one block per location for traces whose blocks interleave in time (as spoor's
//! writers produce them).

use crate::input::Input;
use crate::matching::{self, Problem, ProblemKind, Sync};
use crate::replay::{describe_cycle, Engine, Head};
use crate::scan::{self, Scan};
use crate::{Error, Result};
use spoor_format::binary::{flags, Form};
use spoor_format::raw::BlockCursor;
use spoor_format::{NextBlock, TraceWriter, WriterOptions};
use spoor_model::{Definitions, Event, EventRef, Kind, LocId};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::Write;

#[derive(Clone, Debug)]
pub struct OrderOptions {
    /// Events per block of the output.
    pub block_events: usize,
    /// A bar of the events written, on standard error when it is a terminal.
    pub progress: bool,
}

impl Default for OrderOptions {
    fn default() -> Self {
        OrderOptions { block_events: WriterOptions::default().block_events, progress: false }
    }
}

/// What spoor-order found.
#[derive(Clone, Debug, Default)]
pub struct OrderSummary {
    pub defs: Definitions,
    pub events: u64,
    pub messages: usize,
    pub collectives: usize,
    pub handoffs: usize,
    pub spawns: usize,
    /// Spawn waits that time alone imposed and that had to be let go to avoid a cycle.
    pub released_spawns: usize,
    /// Everything wrong, sorted by location and event (a cycle last).
    pub problems: Vec<Problem>,
}

impl OrderSummary {
    pub fn error_count(&self) -> usize {
        self.problems.iter().filter(|p| p.kind.is_error()).count()
    }

    fn new(scan: &Scan, sync: &Sync) -> Self {
        OrderSummary {
            defs: scan.defs.clone(),
            events: scan.total_events(),
            messages: sync.messages.len(),
            collectives: sync.instances.len(),
            handoffs: sync.handoffs.len(),
            spawns: sync.spawns.len(),
            released_spawns: 0,
            problems: sync.problems.clone(),
        }
    }

    /// The problems as a JSON document.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "events": self.events,
            "messages": self.messages,
            "collectives": self.collectives,
            "lock_handoffs": self.handoffs,
            "spawns": self.spawns,
            "errors": self.error_count(),
            "problems": self.problems.iter().map(|p| p.to_json(&self.defs)).collect::<Vec<_>>(),
        })
    }
}

/// A cycle found while replaying.
struct Stuck {
    problem: Problem,
    message: String,
}

/// Checks `input`: matches it and replays it in causal order (without writing) to
/// find cycles. Never fails for what it finds; only for unreadable input.
pub fn check(input: &Input) -> Result<OrderSummary> {
    let mut scan = scan::scan(input, false)?;
    let mut sync = matching::match_events(&scan.defs, &scan.records);
    scan.records = Vec::new();
    let mut summary = OrderSummary::new(&scan, &sync);
    sync.messages = Vec::new();
    let (released, stuck) = replay_stream(input, &scan, &sync, &mut |_| Ok(()))?;
    summary.released_spawns = released;
    if let Some(s) = stuck {
        summary.problems.push(s.problem);
    }
    Ok(summary)
}

/// Matches `input` and writes it to `out` in a causally consistent total order
/// (GLOBAL_ORDER, MATCHED), every event with its partner (where it has one) and its
/// Lamport clock. Unmatched events are reported in the summary, not dropped; a cycle
/// is an error naming its events.
pub fn order(input: &Input, out: impl Write, opts: &OrderOptions) -> Result<OrderSummary> {
    let mut scan = scan::scan(input, false)?;
    let mut sync = matching::match_events(&scan.defs, &scan.records);
    scan.records = Vec::new();
    let mut summary = OrderSummary::new(&scan, &sync);
    // The replay needs the points, partners and collectives, not the message list.
    sync.messages = Vec::new();
    let wopts = WriterOptions {
        block_events: opts.block_events.max(1),
        global_order: true,
        index: true,
        flags: (scan.flags & 0xffff_ffff) | flags::MATCHED,
    };
    let mut w = TraceWriter::new(out, &scan.defs, wopts).map_err(Error::Write)?;
    // The replay runs on its own thread and hands over batches of events; this one
    // encodes and writes them.
    let (released, stuck) = std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Event>>(4);
        // Written batches come back empty, to be filled again.
        let (back_tx, back_rx) = std::sync::mpsc::channel::<Vec<Event>>();
        let (scan, sync) = (&scan, &sync);
        let replay = s.spawn(move || {
            let mut batch = Vec::with_capacity(BATCH);
            let r = replay_stream(input, scan, sync, &mut |ev| {
                batch.push(ev);
                if batch.len() >= BATCH {
                    let empty = back_rx.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
                    let full = std::mem::replace(&mut batch, empty);
                    tx.send(full).map_err(|_| std::io::Error::other("the writer stopped"))?;
                }
                Ok(())
            });
            if !batch.is_empty() {
                let _ = tx.send(batch);
            }
            r
        });
        let mut written = Ok(());
        let bar = opts.progress.then(|| spoor_cli::Progress::new("events", Some(scan.total_events())));
        for mut batch in rx.iter() {
            if let Err(e) = batch.iter().try_for_each(|ev| w.write(ev)) {
                written = Err(Error::Write(e));
                break;
            }
            if let Some(bar) = &bar {
                bar.add(batch.len() as u64);
            }
            batch.clear();
            let _ = back_tx.send(batch);
        }
        if let Some(bar) = &bar {
            bar.finish();
        }
        drop(rx);
        let r = replay.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        written?;
        r
    })?;
    if let Some(s) = stuck {
        return Err(Error::input(input.name(), s.message));
    }
    w.finish().map_err(Error::Write)?;
    summary.released_spawns = released;
    Ok(summary)
}

/// Events handed from the replay to the writer at a time.
const BATCH: usize = 4096;

/// Replays the input in causal order, giving each event (with its annotations) to
/// `sink`. Returns the number of released spawn waits and the cycle, if it got stuck.
fn replay_stream(
    input: &Input,
    scan: &Scan,
    sync: &Sync,
    sink: &mut dyn FnMut(Event) -> std::io::Result<()>,
) -> Result<(usize, Option<Stuck>)> {
    let n = scan.counts.len();
    let mut reader = input.reader()?;
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<NextBlock, spoor_format::Error>>(8);
        s.spawn(move || loop {
            match reader.next_raw_block() {
                Ok(Some(b)) => {
                    if tx.send(Ok(b)).is_err() {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    break;
                }
            }
        });
        let mut st = Stream {
            queues: (0..n).map(|_| Queue::default()).collect(),
            remaining: scan.counts.clone(),
            starving: scan.counts.iter().filter(|&&c| c > 0).count(),
            slot: vec![u32::MAX; n],
        };
        let mut engine = Engine::new(sync, n);
        let mut heap: BinaryHeap<Reverse<(i64, LocId)>> = BinaryHeap::new();
        let mut in_heap = vec![false; n];
        let mut pending: Vec<LocId> = (0..n as LocId).filter(|&l| scan.counts[l as usize] > 0).collect();
        let mut partner_at = vec![0usize; n];
        let mut lamport = vec![0i64; n];
        let mut woken = Vec::new();
        let mut left: u64 = scan.total_events();
        let mut released = 0;
        let mut rescanned = false;
        let mut last: Option<LocId> = None;
        let mut candidate: Option<(i64, LocId)> = None;
        loop {
            while st.starving > 0 {
                match rx.recv() {
                    Ok(Ok(b)) => st.push(b, &scan.name)?,
                    Ok(Err(e)) => return Err(input.rename(e)),
                    Err(_) => {
                        return Err(Error::input(
                            &scan.name,
                            "the trace ended before the events the first reading counted: did it change?",
                        ))
                    }
                }
            }
            for loc in pending.drain(..) {
                let l = loc as usize;
                if in_heap[l] {
                    continue;
                }
                let Some(head) = st.queues[l].front() else { continue };
                let wall = head.wall;
                let heads = |p: LocId| st.head(p);
                if engine.check(loc, wall, &heads) {
                    if Some(loc) == last {
                        // Kept aside: it often goes next, which saves a push and a pop.
                        candidate = Some((wall, loc));
                    } else {
                        heap.push(Reverse((wall, loc)));
                    }
                    in_heap[l] = true;
                }
            }
            let next = match candidate.take() {
                Some(c) if heap.peek().is_none_or(|Reverse(top)| c < *top) => Some(c),
                Some(c) => {
                    heap.push(Reverse(c));
                    heap.pop().map(|Reverse(t)| t)
                }
                None => heap.pop().map(|Reverse(t)| t),
            };
            last = None;
            let Some((_, loc)) = next else {
                if left == 0 {
                    break;
                }
                if !rescanned {
                    // Check every waiting location once more before concluding.
                    rescanned = true;
                    pending.extend((0..n as LocId).filter(|&l| !st.queues[l as usize].is_empty()));
                    continue;
                }
                if let Some(child) = engine.release_spawn() {
                    released += 1;
                    pending.push(child);
                    continue;
                }
                let start = (0..n).find(|&l| !st.queues[l].is_empty()).unwrap_or(0) as LocId;
                let cycle = engine.cycle(start);
                return Ok((released, Some(stuck(&scan.defs, &st, &engine, &cycle))));
            };
            let l = loc as usize;
            in_heap[l] = false;
            rescanned = false;
            let Some(mut ev) = st.pop(loc, &scan.name)? else {
                return Err(Error::input(&scan.name, "internal: a scheduled location has no event"));
            };
            let idx = engine.next_index(loc);
            let inc = engine.incoming(loc);
            let clock = lamport[l].max(inc.map_or(0, |i| i.value)) + 1;
            lamport[l] = clock;
            let fixed = &sync.partners[l];
            let mut partner = None;
            while partner_at[l] < fixed.len() && fixed[partner_at[l]].0 <= idx {
                if fixed[partner_at[l]].0 == idx {
                    partner = Some(fixed[partner_at[l]].1);
                }
                partner_at[l] += 1;
            }
            if partner.is_none()
                && matches!(
                    ev.kind,
                    Kind::CollEnd { .. } | Kind::ProcessBegin { .. } | Kind::ThreadBegin { .. }
                )
            {
                partner = inc.map(|i| i.from);
            }
            ev.ann.partner = partner;
            ev.ann.lamport = Some(clock as u64);
            engine.emit(loc, ev.wall, clock, &mut woken);
            pending.append(&mut woken);
            pending.push(loc);
            last = Some(loc);
            left -= 1;
            sink(ev).map_err(Error::Write)?;
        }
        Ok((released, None))
    })
}

/// Where a location's queued events come from: a block of its own, decoded one event
/// at a time as the replay gets to it, or events decoded already (split off a
/// multi-location block, or of the text form).
enum Src {
    Lazy { offset: u64, cursor: BlockCursor },
    Decoded(std::vec::IntoIter<Event>),
}

/// The events of a location read but not yet replayed: the next one decoded (`head`),
/// the rest in their blocks.
#[derive(Default)]
struct Queue {
    head: Option<Event>,
    srcs: VecDeque<Src>,
}

/// A decoding problem of the block at `offset` (which the first reading decoded
/// without one: the trace changed).
fn decode_error(name: &str, offset: u64, e: spoor_format::binary::DecodeError) -> Error {
    let at = offset + spoor_format::binary::chunk::HEADER_LEN as u64 + e.offset as u64;
    Error::Format(spoor_format::Error::corrupt(name, at, e.message))
}

impl Queue {
    fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    fn front(&self) -> Option<&Event> {
        self.head.as_ref()
    }

    /// Decodes the next event into `head` (none when every block is used up).
    fn advance(&mut self, name: &str) -> Result<()> {
        while let Some(src) = self.srcs.front_mut() {
            let next = match src {
                Src::Lazy { offset, cursor } => {
                    cursor.next_event().map_err(|e| decode_error(name, *offset, e))?
                }
                Src::Decoded(it) => it.next(),
            };
            if let Some(ev) = next {
                self.head = Some(ev);
                return Ok(());
            }
            self.srcs.pop_front();
        }
        self.head = None;
        Ok(())
    }

    fn push(&mut self, src: Src, name: &str) -> Result<()> {
        self.srcs.push_back(src);
        if self.head.is_none() {
            self.advance(name)?;
        }
        Ok(())
    }

    /// The `k`th queued event (for describing a cycle; decodes ahead on copies).
    fn get(&self, k: usize) -> Option<Event> {
        if k == 0 {
            return self.head.clone();
        }
        let mut k = k - 1;
        for src in &self.srcs {
            match src {
                Src::Lazy { cursor, .. } => {
                    let mut c = cursor.clone();
                    while let Ok(Some(ev)) = c.next_event() {
                        if k == 0 {
                            return Some(ev);
                        }
                        k -= 1;
                    }
                }
                Src::Decoded(it) => {
                    let rest = it.as_slice();
                    if k < rest.len() {
                        return Some(rest[k].clone());
                    }
                    k -= rest.len();
                }
            }
        }
        None
    }

    fn pop(&mut self, name: &str) -> Result<Option<Event>> {
        let Some(ev) = self.head.take() else { return Ok(None) };
        self.advance(name)?;
        Ok(Some(ev))
    }
}

struct Stream {
    queues: Vec<Queue>,
    /// Events of each location not yet read.
    remaining: Vec<u64>,
    /// Locations with an empty queue and events still to read.
    starving: usize,
    /// Scratch for splitting blocks: each location's run in the block (u32::MAX: none).
    slot: Vec<u32>,
}

impl Stream {
    fn push(&mut self, b: NextBlock, name: &str) -> Result<()> {
        let events = match b {
            NextBlock::Raw(raw) if !raw.multi() => {
                let offset = raw.offset;
                let cursor = BlockCursor::new(raw.payload, Form::Single, self.queues.len())
                    .map_err(|e| decode_error(name, offset, e))?;
                let (Some(loc), n) = (cursor.loc(), cursor.remaining()) else { return Ok(()) };
                if n == 0 {
                    return Ok(());
                }
                return self.push_src(loc, n, Src::Lazy { offset, cursor }, name);
            }
            NextBlock::Raw(raw) => {
                let mut events = Vec::new();
                spoor_format::binary::decode_block(&raw.payload, raw.form(), self.queues.len(), |e| {
                    events.push(e)
                })
                .map_err(|e| decode_error(name, raw.offset, e))?;
                events
            }
            NextBlock::Decoded(b) => b.events,
        };
        let Some(first) = events.first().map(|e| e.loc) else { return Ok(()) };
        if events.iter().all(|e| e.loc == first) {
            let n = events.len() as u64;
            return self.push_src(first, n, Src::Decoded(events.into_iter()), name);
        }
        // Several locations' events: split them by location, keeping their order.
        let mut runs: Vec<(LocId, Vec<Event>)> = Vec::new();
        let mut result = Ok(());
        for ev in events {
            let l = ev.loc as usize;
            if l >= self.queues.len() {
                result = Err(more_events(name, ev.loc));
                break;
            }
            let i = match self.slot[l] {
                u32::MAX => {
                    self.slot[l] = runs.len() as u32;
                    runs.push((ev.loc, Vec::new()));
                    runs.len() - 1
                }
                i => i as usize,
            };
            if self.remaining[l] <= runs[i].1.len() as u64 {
                result = Err(more_events(name, ev.loc));
                break;
            }
            runs[i].1.push(ev);
        }
        for (loc, _) in &runs {
            self.slot[*loc as usize] = u32::MAX;
        }
        result?;
        for (loc, v) in runs {
            let n = v.len() as u64;
            self.push_src(loc, n, Src::Decoded(v.into_iter()), name)?;
        }
        Ok(())
    }

    /// Queues `n` events of `loc`.
    fn push_src(&mut self, loc: LocId, n: u64, src: Src, name: &str) -> Result<()> {
        let l = loc as usize;
        if l >= self.queues.len() || self.remaining[l] < n {
            return Err(more_events(name, loc));
        }
        self.remaining[l] -= n;
        if self.queues[l].is_empty() {
            self.starving -= 1;
        }
        self.queues[l].push(src, name)
    }

    fn pop(&mut self, loc: LocId, name: &str) -> Result<Option<Event>> {
        let l = loc as usize;
        let ev = self.queues[l].pop(name)?;
        if ev.is_some() && self.queues[l].is_empty() && self.remaining[l] > 0 {
            self.starving += 1;
        }
        Ok(ev)
    }

    fn head(&self, loc: LocId) -> Head {
        let l = loc as usize;
        match self.queues.get(l).and_then(|q| q.front()) {
            Some(e) => Head::At(e.wall),
            None if self.remaining.get(l).is_none_or(|&c| c == 0) => Head::Finished,
            // Not read yet: treat as not past anything, so waiters wait.
            None => Head::At(i64::MIN),
        }
    }
}

fn more_events(name: &str, loc: LocId) -> Error {
    Error::input(
        name,
        format!("location {loc} has more events than the first reading counted: did the trace change?"),
    )
}

fn stuck(defs: &Definitions, st: &Stream, engine: &Engine, cycle: &[(EventRef, EventRef)]) -> Stuck {
    // The queue of a location holds its events from its next one on.
    let what = |r: EventRef| -> Option<(&'static str, i64)> {
        let q = st.queues.get(r.loc as usize)?;
        let ev = q.get(usize::try_from(r.index.checked_sub(engine.next_index(r.loc))?).ok()?)?;
        Some((ev.kind.name(), ev.wall))
    };
    let message = describe_cycle(defs, cycle, &what);
    let none = EventRef { loc: 0, index: 0 };
    let (at, awaited) = cycle.first().copied().unwrap_or((none, none));
    let (kind_name, wall) = what(at).unwrap_or(("event", 0));
    Stuck {
        problem: Problem {
            kind: ProblemKind::Cycle,
            at,
            kind_name,
            wall,
            other: Some(awaited),
            detail: message.clone(),
        },
        message,
    }
}
