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
//!
//! Threads: one reads blocks and two decode them into per-location chunks (wall times
//! apart); matching runs while the first chunks are read; the replay reads wall times
//! only and hands each output block, as references into the chunks, to a few threads
//! that encode it (or make its events' briefs, for a graph built in the same process:
//! [`Sink`]); the calling thread writes the blocks (or hands the briefs on) in order.
//!
//! Speed: the replay keeps one cache line per location (current chunk, position, Lamport
//! clock, next fixed partner; the engine likewise). A location stays chosen while its
//! next event is still the earliest and waits for nothing: the heap's top key (wall and
//! location in one integer) is replaced, with no engine check.

use crate::coded::Coded;
use crate::encode::{MultiBlock, OutEvent};
use crate::input::Input;
use crate::matching::{self, Point, Problem, ProblemKind, Sync};
use crate::replay::{describe_cycle, Engine, Head};
use crate::scan::{self, RecordList, Scan};
use crate::{Error, Result};
use spoor_format::binary::{flags, Form};
use spoor_format::brief::Brief;
use spoor_format::mem::prefetch;
use spoor_format::raw::{self, BlockCursor};
use spoor_format::{NextBlock, TraceWriter, WriterOptions};
use spoor_model::{Annotations, Definitions, Event, EventRef, Feedback, Kind, LocId, Silent};
use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, VecDeque};
use std::io::Write;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct OrderOptions {
    /// Events per block of the output.
    pub block_events: usize,
}

impl Default for OrderOptions {
    fn default() -> Self {
        OrderOptions { block_events: spoor_format::GLOBAL_ORDER_BLOCK_EVENTS }
    }
}

/// What ordering keeps in memory while it orders, bytes an event, at about the most (the
/// matched partners and points, the blocks in flight: a stencil's take 10.3).
pub const BYTES_PER_EVENT: u64 = 12;

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
    /// Clock-condition violations of the recorded times (no minimum latency).
    pub violations: spoor_model::ClockViolations,
}

impl OrderSummary {
    pub fn error_count(&self) -> usize {
        self.problems.iter().filter(|p| p.kind.is_error()).count()
    }

    fn new(scan: &Scan, sync: &Sync) -> Self {
        OrderSummary {
            defs: scan.defs.clone(),
            events: scan.total_events(),
            messages: sync.message_count,
            collectives: sync.instances.len(),
            handoffs: sync.handoffs.len(),
            spawns: sync.spawns.len(),
            released_spawns: 0,
            problems: sync.problems.clone(),
            violations: sync.violations(),
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
            "violations": self.violations,
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
    let mut scan = scan::scan(input, scan::Keep::Records)?;
    let records = std::mem::take(&mut scan.records);
    let pool = Pool::default();
    let (mut summary, stuck) =
        replay_stream(input, &scan, Matching::Records(records), &pool, &mut |_| Ok(()))?;
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
    order_with_feedback(input, out, opts, &Silent)
}

/// `order`, telling `feedback` how many of the input's events are written so far.
///
/// Matching runs on a thread of its own, on rayon's pool, while this one waits for it:
/// called from the only worker of a pool of one thread, it would wait forever.
pub fn order_with_feedback(
    input: &Input,
    out: impl Write,
    opts: &OrderOptions,
    feedback: &dyn Feedback,
) -> Result<OrderSummary> {
    order_to(input, Sink::Trace(out, opts), feedback)
}

/// `order_with_feedback`, its events going to `sink`: written as a trace, or handed on
/// as the briefs a graph is built from (the same events in the same order, with the
/// same partners, as a reading of the written trace gives).
pub fn order_to<W: Write>(input: &Input, sink: Sink<W>, feedback: &dyn Feedback) -> Result<OrderSummary> {
    prepare(input, feedback)?.order(sink, feedback)
}

/// Reads `input` once, as ordering it does first: what the ordered trace will hold is
/// then known ([`Prepared`]), before it is ordered.
pub fn prepare<'a>(input: &'a Input, feedback: &dyn Feedback) -> Result<Prepared<'a>> {
    prepare_held(Held::Given(input), feedback)
}

/// [`prepare`] of a trace given or made.
pub(crate) fn prepare_held<'a>(input: Held<'a>, feedback: &dyn Feedback) -> Result<Prepared<'a>> {
    let mut p = Prepared { input, scan: Scan::default(), matching: Matching::Records(Vec::new()) };
    p.scan = scan::scan_with(p.input(), scan::Keep::Records, feedback)?;
    // Matching (inside the replay) takes the records.
    p.matching = Matching::Records(std::mem::take(&mut p.scan.records));
    Ok(p)
}

/// A trace read once, to be ordered: its definitions, flags and events are known.
pub struct Prepared<'a> {
    input: Held<'a>,
    scan: Scan,
    matching: Matching,
}

/// The trace a [`Prepared`] orders: the one given, or a copy it made (an aligned trace
/// in the spill directory), removed with it.
pub(crate) enum Held<'a> {
    Given(&'a Input),
    Made(Input),
}

impl Held<'_> {
    fn get(&self) -> &Input {
        match self {
            Held::Given(i) => i,
            Held::Made(i) => i,
        }
    }
}

impl<'a> Prepared<'a> {
    pub(crate) fn new(input: Held<'a>, scan: Scan, matching: Matching) -> Prepared<'a> {
        Prepared { input, scan, matching }
    }

    fn input(&self) -> &Input {
        self.input.get()
    }

    /// The ordered trace's definitions.
    pub fn defs(&self) -> &Definitions {
        &self.scan.defs
    }

    /// The ordered trace's flags (`binary::flags`), GLOBAL_ORDER and MATCHED among them.
    pub fn flags(&self) -> u64 {
        (self.scan.flags & 0xffff_ffff) | flags::MATCHED | flags::GLOBAL_ORDER
    }

    /// The number of its events.
    pub fn events(&self) -> u64 {
        self.scan.total_events()
    }

    /// The bytes of the copy it made on disk (0: none).
    pub fn spooled_bytes(&self) -> u64 {
        match &self.input {
            Held::Given(_) => 0,
            Held::Made(i) => i.spooled_bytes(),
        }
    }

    /// Orders the trace, its events going to `sink`.
    pub fn order<W: Write>(self, sink: Sink<W>, feedback: &dyn Feedback) -> Result<OrderSummary> {
        let Prepared { input, scan, matching } = self;
        order_scanned(input.get(), &scan, matching, sink, feedback)
    }
}

/// What a consumer of handed-on events gives back when it stops the ordering.
pub type BoxError = Box<dyn std::error::Error + Send + std::marker::Sync>;

/// A consumer of ordered events, a block of briefs at a time.
pub type HandOn<'a> = dyn FnMut(&[Brief]) -> std::result::Result<(), BoxError> + 'a;

/// Where an ordering's events go.
pub enum Sink<'a, W> {
    /// Written as a trace (spoor-order's output).
    Trace(W, &'a OrderOptions),
    /// Handed on, on the calling thread, as briefs in blocks of
    /// `GLOBAL_ORDER_BLOCK_EVENTS`: what a graph is built from, without writing the trace
    /// and reading it back.
    Briefs(&'a mut HandOn<'a>),
}

impl<'a> Sink<'a, std::io::Sink> {
    /// Events handed on to `each` (see [`Sink::Briefs`]), with no writer's type to name.
    pub fn briefs(each: &'a mut HandOn<'a>) -> Self {
        Sink::Briefs(each)
    }
}

/// The synchronization records of a scanned trace, still to be matched (while the replay
/// reads its first blocks), or matched already.
pub(crate) enum Matching {
    Records(Vec<RecordList>),
    Done(Sync),
}

/// [`order_to`] of a trace `scan` read, its records given as `matching`: a written
/// output's flags are the scan's and MATCHED.
fn order_scanned<W: Write>(
    input: &Input,
    scan: &Scan,
    matching: Matching,
    sink: Sink<W>,
    feedback: &dyn Feedback,
) -> Result<OrderSummary> {
    match sink {
        Sink::Trace(out, opts) => write_ordered(input, scan, matching, out, opts, feedback),
        Sink::Briefs(each) => hand_on_ordered(input, scan, matching, each, feedback),
    }
}

/// [`order_scanned`] to a trace writer.
fn write_ordered(
    input: &Input,
    scan: &Scan,
    matching: Matching,
    out: impl Write,
    opts: &OrderOptions,
    feedback: &dyn Feedback,
) -> Result<OrderSummary> {
    let block_events = opts.block_events.max(1);
    let wopts = WriterOptions {
        block_events,
        global_order: true,
        index: true,
        flags: (scan.flags & 0xffff_ffff) | flags::MATCHED,
    };
    let mut w = TraceWriter::new(out, &scan.defs, wopts).map_err(Error::Write)?;
    let total = Some(scan.total_events());
    let summary = replay_in_blocks(input, scan, matching, block_events, Make::Blocks, |done_rxs, reuse| {
        let written = write_encoded(&mut w, done_rxs, reuse, feedback, total);
        feedback.finish();
        written
    })?;
    w.finish().map_err(Error::Write)?;
    Ok(summary)
}

/// [`order_scanned`] to a consumer of briefs, handed on in their order on this thread.
fn hand_on_ordered(
    input: &Input,
    scan: &Scan,
    matching: Matching,
    each: &mut HandOn,
    feedback: &dyn Feedback,
) -> Result<OrderSummary> {
    let block_events = spoor_format::GLOBAL_ORDER_BLOCK_EVENTS;
    let total = Some(scan.total_events());
    replay_in_blocks(input, scan, matching, block_events, Make::Briefs, |done_rxs, reuse| {
        let mut handed = 0;
        for k in 0.. {
            let Ok(Encoded::Briefs(briefs)) = done_rxs[k % done_rxs.len()].recv() else { break };
            each(&briefs).map_err(Error::HandedOn)?;
            handed += briefs.len() as u64;
            feedback.progress("events", handed, total);
            if let Ok(mut r) = reuse.lock() {
                r.briefs.push(briefs);
            }
        }
        feedback.finish();
        Ok(())
    })
}

/// What the threads after the replay make of its blocks.
#[derive(Clone, Copy)]
enum Make {
    /// Encoded blocks of the output trace.
    Blocks,
    /// The events' briefs.
    Briefs,
}

/// Buffers the consumer is done with, back to the making threads.
#[derive(Default)]
struct Reuse {
    payloads: Vec<Vec<u8>>,
    briefs: Vec<Vec<Brief>>,
}

/// Replays the input on a thread of its own, which hands over one output block at a
/// time (what goes where: `Batch`), in turn to each of a few threads that make what
/// `make` says of it; `consume`, on this thread, takes them in their order from the
/// receivers (block k from receiver k % receivers) until they end.
fn replay_in_blocks(
    input: &Input,
    scan: &Scan,
    matching: Matching,
    block_events: usize,
    make: Make,
    consume: impl FnOnce(&[std::sync::mpsc::Receiver<Encoded>], &std::sync::Mutex<Reuse>) -> Result<()>,
) -> Result<OrderSummary> {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4);
    let pool = &Pool::default();
    let reuse = &std::sync::Mutex::new(Reuse::default());
    let (summary, stuck) = std::thread::scope(|s| {
        let mut job_txs = Vec::new();
        let mut done_rxs = Vec::new();
        // Batches come back empty from the making threads, to be filled again.
        let (back_tx, back_rx) = std::sync::mpsc::channel::<Batch>();
        for _ in 0..workers {
            let back_tx = back_tx.clone();
            let (job_tx, job_rx) = std::sync::mpsc::sync_channel::<Batch>(2);
            let (done_tx, done_rx) = std::sync::mpsc::sync_channel::<Encoded>(2);
            job_txs.push(job_tx);
            done_rxs.push(done_rx);
            s.spawn(move || make_batches(job_rx, done_tx, back_tx, reuse, pool, block_events, make));
        }
        let replay = s.spawn(move || {
            let mut batcher = Batcher {
                batch: Batch::with_capacity(block_events),
                sent: 0,
                block_events,
                job_txs,
                back_rx,
            };
            let r = replay_stream(input, scan, matching, pool, &mut |e: Emit| batcher.push(e));
            batcher.flush();
            r
        });
        let consumed = consume(&done_rxs, reuse);
        // The replay stops at its next block once nobody takes them.
        drop(done_rxs);
        let r = replay.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        consumed?;
        r
    })?;
    if let Some(s) = stuck {
        return Err(Error::input(input.name(), s.message));
    }
    Ok(summary)
}

/// A making thread: each batch it is given made into a block (a last, shorter one as
/// its events) or into briefs, handed on in the order given; the batch goes back empty.
fn make_batches(
    job_rx: std::sync::mpsc::Receiver<Batch>,
    done_tx: std::sync::mpsc::SyncSender<Encoded>,
    back_tx: std::sync::mpsc::Sender<Batch>,
    reuse: &std::sync::Mutex<Reuse>,
    pool: &Pool,
    block_events: usize,
    make: Make,
) {
    let mut enc = MultiBlock::default();
    for mut batch in job_rx.iter() {
        let done = match make {
            Make::Briefs => {
                let mut briefs = reuse.lock().ok().and_then(|mut r| r.briefs.pop()).unwrap_or_default();
                batch.briefs(&mut briefs);
                Encoded::Briefs(briefs)
            }
            Make::Blocks if batch.out.len() == block_events => {
                // A payload the writer is done with, if there is one.
                let buf = reuse.lock().ok().and_then(|mut r| r.payloads.pop()).unwrap_or_default();
                enc.start(block_events as u64, buf);
                batch.encode(&mut enc);
                Encoded::Block(enc.finish())
            }
            Make::Blocks => {
                let mut events = Vec::with_capacity(batch.out.len());
                batch.events(&mut events);
                Encoded::Events(events)
            }
        };
        for c in batch.chunks.drain(..) {
            recycle(Some(c), pool);
        }
        batch.out.clear();
        let _ = back_tx.send(batch);
        if done_tx.send(done).is_err() {
            break;
        }
    }
}

/// The replay's sink: fills a batch, and gives each full one to the next encoding
/// thread in turn (batch k to thread k % threads).
struct Batcher {
    batch: Batch,
    /// The batches sent so far.
    sent: u64,
    block_events: usize,
    job_txs: Vec<std::sync::mpsc::SyncSender<Batch>>,
    back_rx: std::sync::mpsc::Receiver<Batch>,
}

impl Batcher {
    #[inline]
    fn push(&mut self, e: Emit) -> std::io::Result<()> {
        let batch = &mut self.batch;
        // The chunk's slot in this batch's `chunks`.
        if e.tag.0 != self.sent {
            *e.tag = (self.sent, batch.chunks.len() as u32);
            batch.chunks.push(e.chunk.clone());
        }
        let (ploc, pidx) = e.partner.map_or((u32::MAX, 0), |p| (p.loc, p.index));
        batch.out.push(Out {
            chunk: e.tag.1,
            idx: e.idx as u32,
            loc: e.loc,
            wall: e.wall,
            ploc,
            lamport: e.lamport,
            pidx,
        });
        if batch.out.len() >= self.block_events {
            let empty = self.back_rx.try_recv().unwrap_or_else(|_| Batch::with_capacity(self.block_events));
            let full = std::mem::replace(&mut self.batch, empty);
            self.job_txs[(self.sent % self.job_txs.len() as u64) as usize]
                .send(full)
                .map_err(|_| std::io::Error::other("the writer stopped"))?;
            self.sent += 1;
        }
        Ok(())
    }

    /// Sends the last, partial batch.
    fn flush(self) {
        if !self.batch.out.is_empty() {
            let _ = self.job_txs[(self.sent % self.job_txs.len() as u64) as usize].send(self.batch);
        }
    }
}

/// Writes the encoded blocks in their order (batch k from thread k % threads) until
/// the threads end, telling `feedback` how far it has got.
fn write_encoded<W: Write>(
    w: &mut TraceWriter<W>,
    done_rxs: &[std::sync::mpsc::Receiver<Encoded>],
    reuse: &std::sync::Mutex<Reuse>,
    feedback: &dyn Feedback,
    total: Option<u64>,
) -> Result<()> {
    let mut written_events = 0;
    for k in 0.. {
        let Ok(done) = done_rxs[k % done_rxs.len()].recv() else { break };
        let (r, count) = match done {
            Encoded::Block(b) => {
                let r = w.write_block(&b);
                if let Ok(mut p) = reuse.lock() {
                    p.payloads.push(b.payload);
                }
                (r, b.count)
            }
            Encoded::Events(events) => (events.iter().try_for_each(|ev| w.write(ev)), events.len() as u64),
            Encoded::Briefs(_) => unreachable!("a writer's threads make blocks"),
        };
        r.map_err(Error::Write)?;
        written_events += count;
        feedback.progress("writing: events", written_events, total);
    }
    Ok(())
}

/// An output block from a making thread: a full block encoded, a last, shorter one's
/// events to write one by one, or the briefs of a block's events.
enum Encoded {
    Block(raw::EncodedBlock),
    Events(Vec<Event>),
    Briefs(Vec<Brief>),
}

/// One output event as the replay hands it over: where its input event is and what the
/// output adds (partner location `u32::MAX`: none).
struct Out {
    chunk: u32,
    idx: u32,
    loc: LocId,
    ploc: LocId,
    wall: i64,
    lamport: u64,
    pidx: u64,
}

/// An output block's events: the chunks they come from and, in order, each event.
struct Batch {
    chunks: Vec<Arc<ChunkData>>,
    out: Vec<Out>,
}

impl Batch {
    fn with_capacity(n: usize) -> Batch {
        Batch { chunks: Vec::new(), out: Vec::with_capacity(n) }
    }

    /// Each output event with what its input event keeps, in order; the chunks' data
    /// fetched ahead.
    #[inline(always)]
    fn each(&self, mut f: impl FnMut(&Out, &Slim)) {
        // The chunk's header well ahead, then (once it is there) the event.
        const AHEAD: usize = 16;
        for (k, o) in self.out.iter().enumerate() {
            if let Some(a) = self.out.get(k + 2 * AHEAD) {
                prefetch(Arc::as_ptr(&self.chunks[a.chunk as usize]));
            }
            if let Some(a) = self.out.get(k + AHEAD) {
                prefetch(self.chunks[a.chunk as usize].evs.as_ptr().wrapping_add(a.idx as usize));
            }
            f(o, &self.chunks[o.chunk as usize].evs[o.idx as usize]);
        }
    }

    /// Encodes the events into `enc`.
    fn encode(&self, enc: &mut MultiBlock) {
        self.each(|o, e| {
            enc.push(&OutEvent {
                loc: o.loc,
                wall: o.wall,
                cpu: e.cpu,
                kind: &e.kind,
                partner: o.partner(),
                lamport: o.lamport,
                raw_wall: e.raw_wall,
            })
        });
    }

    /// The output events' briefs, into `briefs`.
    fn briefs(&self, briefs: &mut Vec<Brief>) {
        briefs.clear();
        self.each(|o, e| briefs.push(Brief::of_parts(o.loc, o.wall, e.cpu, &e.kind, o.partner())));
    }

    /// The output events, into `events`.
    fn events(&self, events: &mut Vec<Event>) {
        events.clear();
        self.each(|o, e| {
            events.push(Event {
                loc: o.loc,
                wall: o.wall,
                cpu: e.cpu,
                kind: e.kind.clone(),
                ann: Annotations { partner: o.partner(), lamport: Some(o.lamport), raw_wall: e.raw_wall },
            })
        });
    }
}

impl Out {
    fn partner(&self) -> Option<EventRef> {
        (self.ploc != u32::MAX).then_some(EventRef { loc: self.ploc, index: self.pidx })
    }
}

/// What the output keeps of an input event besides its wall time: its location is its
/// queue's, its partner and Lamport clock are replaced.
#[derive(Clone, Debug)]
struct Slim {
    cpu: Option<i64>,
    raw_wall: Option<i64>,
    kind: Kind,
}

/// One location's events from one block: the wall times (all the replay reads) apart
/// from the rest (read when encoding).
#[derive(Default)]
struct ChunkData {
    walls: Vec<i64>,
    evs: Vec<Slim>,
}

impl ChunkData {
    fn push(&mut self, ev: Event) {
        self.walls.push(ev.wall);
        self.evs.push(Slim { cpu: ev.cpu, raw_wall: ev.ann.raw_wall, kind: ev.kind });
    }
}

/// One location's events from one block.
struct Chunk {
    loc: LocId,
    /// The events the block declares for the location (more than `data` holds when
    /// decoding stopped at an error).
    declared: u64,
    data: ChunkData,
    /// In a multi-location block: each event's position in the block, in order.
    at: Vec<u32>,
}

/// A block as the reading thread hands it to the replay: its events by location (in
/// order of first appearance), and a decoding error after them.
#[derive(Default)]
struct Piece {
    chunks: Vec<Chunk>,
    /// Several locations' events (or the text form's): checked against the counts
    /// event by event.
    multi: bool,
    /// The first event of a location that is not defined: (position, location).
    bad: Option<(u32, LocId)>,
    err: Option<Error>,
}

/// Decodes one block into a [`Piece`], taking its vectors from `pool` when it can.
fn piece_of(
    block: std::result::Result<Option<NextBlock>, spoor_format::Error>,
    input: &Input,
    n: usize,
    pool: &Pool,
    slot: &mut [u32],
) -> Result<Piece> {
    let name = input.name();
    match block {
        Ok(Some(NextBlock::Raw(raw))) if !raw.multi() => {
            let mut data = pool.lock().ok().and_then(|mut p| p.pop()).unwrap_or_default();
            data.walls.clear();
            data.evs.clear();
            // Room for the events the block declares (at most one per two bytes: a
            // wrong count is the decoder's to report).
            let mut c = spoor_format::varint::Cursor::new(&raw.payload);
            if let (Ok(_), Ok(count)) = (c.u64(), c.u64()) {
                let count = (count as usize).min(raw.payload.len() / 2);
                data.walls.reserve(count);
                data.evs.reserve(count);
            }
            match spoor_format::binary::decode_block(&raw.payload, Form::Single, n, |e| data.push(e)) {
                Ok(prefix) => Ok(match prefix.loc {
                    Some(loc) if prefix.count > 0 => Piece {
                        chunks: vec![Chunk { loc, declared: prefix.count, data, at: Vec::new() }],
                        ..Piece::default()
                    },
                    _ => Piece::default(),
                }),
                Err(e) => {
                    // The events before the error are queued (and the count checked)
                    // before the error is reported, as when decoding one at a time.
                    let err = decode_error(name, raw.offset, e);
                    match BlockCursor::new(raw.payload, Form::Single, n) {
                        Err(_) => Err(err),
                        Ok(cursor) => Ok(Piece {
                            chunks: match cursor.loc() {
                                Some(loc) if cursor.remaining() > 0 => {
                                    vec![Chunk { loc, declared: cursor.remaining(), data, at: Vec::new() }]
                                }
                                _ => Vec::new(),
                            },
                            err: Some(err),
                            ..Piece::default()
                        }),
                    }
                }
            }
        }
        Ok(Some(NextBlock::Raw(raw))) => {
            let mut decoded = Vec::new();
            match spoor_format::binary::decode_block(&raw.payload, raw.form(), n, |e| decoded.push(e)) {
                Ok(_) => Ok(split(decoded, slot)),
                Err(e) => Err(decode_error(name, raw.offset, e)),
            }
        }
        Ok(Some(NextBlock::Decoded(b))) => Ok(split(b.events, slot)),
        Ok(None) => Ok(Piece::default()),
        Err(e) => Err(input.rename(e)),
    }
}

/// Chunks used up, for the decoding threads to fill again.
type Pool = std::sync::Mutex<Vec<ChunkData>>;

/// Splits a block's events by location, keeping each location's order.
fn split(events: Vec<Event>, slot: &mut [u32]) -> Piece {
    let mut piece = Piece { multi: true, ..Piece::default() };
    for (pos, ev) in events.into_iter().enumerate() {
        let l = ev.loc as usize;
        if l >= slot.len() {
            piece.bad = Some((pos as u32, ev.loc));
            break;
        }
        let i = match slot[l] {
            u32::MAX => {
                slot[l] = piece.chunks.len() as u32;
                piece.chunks.push(Chunk {
                    loc: ev.loc,
                    declared: 0,
                    data: ChunkData::default(),
                    at: Vec::new(),
                });
                piece.chunks.len() - 1
            }
            i => i as usize,
        };
        let c = &mut piece.chunks[i];
        c.data.push(ev);
        c.at.push(pos as u32);
        c.declared += 1;
    }
    for c in &piece.chunks {
        slot[c.loc as usize] = u32::MAX;
    }
    piece
}

/// Replays the input in causal order, giving each event to `sink`: its location, its
/// chunk and index there, its Lamport clock and partner. Returns the number of
/// released spawn waits and the cycle, if it got stuck.
///
/// A location stays chosen as long as its next event is still the earliest ready one
/// and waits for nothing (no receive, collective end, lock or spawn): then the heap of
/// ready locations only has its top's key replaced; everything else goes through the
/// engine's checks. The replay reads only wall times; the events themselves are read
/// where they are encoded.
fn replay_stream<F>(
    input: &Input,
    scan: &Scan,
    matching: Matching,
    pool: &Pool,
    sink: &mut F,
) -> Result<(OrderSummary, Option<Stuck>)>
where
    F: FnMut(Emit) -> std::io::Result<()>,
{
    let n = scan.counts.len();
    let reader = input.reader()?;
    let name = scan.name.as_str();
    std::thread::scope(|s| {
        let rxs = spawn_readers(s, input, reader, n, pool);
        // Matching runs while the first blocks are read.
        let defs = &scan.defs;
        let matched = match matching {
            // (frees the records as it goes)
            Matching::Records(records) => {
                Err(s.spawn(move || matching::match_events_uncollected(defs, records)))
            }
            Matching::Done(sync) => Ok(sync),
        };
        let mut next_rx = 0usize;
        let mut st = Stream::new(&scan.counts, pool);
        st.fill(&rxs, &mut next_rx, name)?;
        let sync = matched.unwrap_or_else(|m| m.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        let sync = &sync;
        let mut summary = OrderSummary::new(scan, sync);
        let mut engine = Engine::new(sync, n);
        let mut heap: BinaryHeap<Reverse<HeapKey>> = BinaryHeap::with_capacity(n);
        let mut pending: Vec<LocId> = (0..n as LocId).filter(|&l| scan.counts[l as usize] > 0).collect();
        let mut woken = Vec::new();
        let mut left: u64 = scan.total_events();
        let mut released = 0;
        let mut rescanned = false;
        loop {
            if st.starving > 0 {
                st.fill(&rxs, &mut next_rx, name)?;
            }
            schedule(&mut pending, &mut st, &mut engine, &mut heap);
            let Some(&Reverse(key)) = heap.peek() else {
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
                summary.released_spawns = released;
                return Ok((summary, Some(stuck(&scan.defs, &st, &engine, &cycle))));
            };
            rescanned = false;
            let loc = key_loc(key);
            let l = loc as usize;
            let fixed = &sync.partners[l];
            // `loc` is the top of the heap: emit its events while it stays there.
            loop {
                let q = &mut st.queues[l];
                let Queue { cur: Some(chunk), pos, tag, lamport, .. } = q else {
                    return Err(Error::input(name, "internal: a scheduled location has no event"));
                };
                let at = *pos as usize;
                let wall = chunk.walls[at];
                let idx = engine.next_index(loc);
                let mut partner = None;
                if q.partner_index <= idx {
                    partner = fixed_partner(&mut q.partner_at, &mut q.partner_index, fixed, idx);
                }
                let clock = lamport_of(&engine, loc, *lamport, &mut partner);
                *lamport = clock;
                engine.emit(loc, wall, clock, &mut woken);
                left -= 1;
                sink(Emit { loc, chunk, idx: at, wall, lamport: clock as u64, partner, tag })
                    .map_err(Error::Write)?;
                st.advance(loc);
                if !requeue(loc, &mut st, &engine, &mut heap, &mut pending) {
                    break;
                }
                if !woken.is_empty() || heap.peek().is_some_and(|&Reverse(k)| key_loc(k) != loc) {
                    break;
                }
            }
            pending.append(&mut woken);
        }
        summary.released_spawns = released;
        Ok((summary, None))
    })
}

/// Starts the reading: one thread reads the blocks; DECODERS decode them, block k on
/// thread k % DECODERS, and the replay takes them back from the receivers in that order.
fn spawn_readers<'scope, 'env>(
    s: &'scope std::thread::Scope<'scope, 'env>,
    input: &'env Input,
    mut reader: spoor_format::TraceReader,
    n: usize,
    pool: &'env Pool,
) -> Vec<std::sync::mpsc::Receiver<Result<Piece>>> {
    let mut rxs = Vec::new();
    let mut job_txs = Vec::new();
    for _ in 0..DECODERS {
        let (job_tx, job_rx) = std::sync::mpsc::sync_channel(4);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Piece>>(4);
        job_txs.push(job_tx);
        rxs.push(rx);
        s.spawn(move || {
            let mut slot = vec![u32::MAX; n];
            for block in job_rx.iter() {
                let piece = piece_of(block, input, n, pool, &mut slot);
                let stop = piece.is_err();
                if tx.send(piece).is_err() || stop {
                    break;
                }
            }
        });
    }
    s.spawn(move || {
        for k in 0.. {
            let block = reader.next_raw_block();
            let last = !matches!(block, Ok(Some(_)));
            if job_txs[k % DECODERS].send(block).is_err() || last {
                break;
            }
        }
    });
    rxs
}

/// Checks the `pending` locations, putting those whose next event is ready in the heap.
#[inline]
fn schedule(
    pending: &mut Vec<LocId>,
    st: &mut Stream,
    engine: &mut Engine,
    heap: &mut BinaryHeap<Reverse<HeapKey>>,
) {
    for loc in pending.drain(..) {
        let l = loc as usize;
        if st.queues[l].in_heap {
            continue;
        }
        let Some(wall) = st.queues[l].front() else { continue };
        let heads = |p: LocId| st.head(p);
        if engine.check(loc, wall, &heads) {
            heap.push(Reverse(heap_key(wall, loc)));
            st.queues[l].in_heap = true;
        }
    }
}

/// After `loc` (the top of the heap) emitted: its next event, still ready without a
/// check, replaces its key; else `loc` leaves the heap, back to the checks. True if
/// it stayed.
#[inline(always)]
fn requeue(
    loc: LocId,
    st: &mut Stream,
    engine: &Engine,
    heap: &mut BinaryHeap<Reverse<HeapKey>>,
    pending: &mut Vec<LocId>,
) -> bool {
    let l = loc as usize;
    let next = match st.queues[l].front() {
        Some(w) if engine.needs_nothing(loc) => Some(w),
        _ => None,
    };
    let mut top = heap.peek_mut().expect("the emitting location is in the heap");
    match next {
        Some(wall) => *top = Reverse(heap_key(wall, loc)),
        None => {
            PeekMut::pop(top);
            st.queues[l].in_heap = false;
            pending.push(loc);
            return false;
        }
    }
    true
}

/// A queue's place in its fixed partners before the first is looked for.
const NOT_STARTED: usize = usize::MAX;

/// The fixed partner of event `idx`, if it has one, moving a location's place in its
/// `fixed` partners (`at`, and `index`, the event index there) past it.
#[inline(always)]
fn fixed_partner(at: &mut usize, index: &mut u64, fixed: &Coded<EventRef>, idx: u64) -> Option<EventRef> {
    if *at == NOT_STARTED {
        (*at, *index) = fixed.first();
    }
    let mut partner = None;
    while *index <= idx {
        let (p, end) = fixed.get(*at, *index);
        if *index == idx {
            partner = Some(p);
        }
        (*at, *index) = fixed.after(end, *index);
    }
    prefetch(fixed.bytes_at(*at + 64));
    partner
}

/// The Lamport clock of `loc`'s next event, after `lamport`; a collective end or a
/// spawned location without a `partner` gets the event it waited for.
#[inline(always)]
fn lamport_of(engine: &Engine, loc: LocId, lamport: i64, partner: &mut Option<EventRef>) -> i64 {
    match engine.point_of(loc) {
        None => lamport + 1,
        Some(p) => {
            let inc = engine.incoming(loc);
            // Collective ends and spawned locations get what they waited for.
            if partner.is_none() && matches!(p, Point::CollEnd { .. } | Point::Spawn { .. }) {
                *partner = inc.map(|i| i.from);
            }
            lamport.max(inc.map_or(0, |i| i.value)) + 1
        }
    }
}

/// A location's place in the replay's heap: its next event's wall time, then the
/// location, in one integer that compares as the pair (wall, location) does.
type HeapKey = u128;

#[inline]
fn heap_key(wall: i64, loc: LocId) -> HeapKey {
    // Flipping the sign bit maps i64's order onto u64's.
    ((((wall as u64) ^ (1 << 63)) as u128) << 32) | loc as u128
}

#[inline]
fn key_loc(key: HeapKey) -> LocId {
    key as LocId
}

/// One event as the replay hands it over.
struct Emit<'a> {
    loc: LocId,
    /// Its chunk and index there.
    chunk: &'a Arc<ChunkData>,
    idx: usize,
    wall: i64,
    lamport: u64,
    partner: Option<EventRef>,
    /// For the sink, kept with the chunk: (batch, slot) it gave the chunk, (u64::MAX,
    /// _) when the chunk is new.
    tag: &'a mut (u64, u32),
}

/// What the replay keeps of one location, in one cache line: its next events (the
/// current chunk's from `pos` on; the next chunks are in [`Stream::rest`]), its
/// Lamport clock and its next fixed partner.
#[repr(align(64))]
struct Queue {
    cur: Option<Arc<ChunkData>>,
    pos: u32,
    tag: (u64, u32),
    lamport: i64,
    /// Its next entry in `Sync::partners`: where it is (`NOT_STARTED` before the first is
    /// looked for) and its event index (`u64::MAX`: none).
    partner_at: usize,
    partner_index: u64,
    /// Ready and in the heap.
    in_heap: bool,
}

impl Default for Queue {
    fn default() -> Self {
        Queue {
            cur: None,
            pos: 0,
            tag: (u64::MAX, 0),
            lamport: 0,
            partner_at: NOT_STARTED,
            partner_index: 0,
            in_heap: false,
        }
    }
}

/// Hands a chunk nobody else holds back to the decoding threads.
fn recycle(chunk: Option<Arc<ChunkData>>, pool: &Pool) {
    if let Some(data) = chunk.and_then(|c| Arc::try_unwrap(c).ok()) {
        if let Ok(mut p) = pool.lock() {
            p.push(data);
        }
    }
}

/// Threads decoding the blocks of the second reading.
const DECODERS: usize = 2;

/// A decoding problem of the block at `offset` (which the first reading decoded
/// without one: the trace changed).
fn decode_error(name: &str, offset: u64, e: spoor_format::binary::DecodeError) -> Error {
    let at = offset + spoor_format::binary::chunk::HEADER_LEN as u64 + e.offset as u64;
    Error::Format(spoor_format::Error::corrupt(name, at, e.message))
}

impl Queue {
    fn is_empty(&self) -> bool {
        self.cur.is_none()
    }

    /// The wall time of the next event.
    #[inline]
    fn front(&self) -> Option<i64> {
        self.cur.as_ref().map(|c| c.walls[self.pos as usize])
    }

    /// The `k`th queued event's kind and wall time (for describing a cycle); `rest` are
    /// the chunks after the current one.
    fn get(&self, k: usize, rest: &VecDeque<Arc<ChunkData>>) -> Option<(&'static str, i64)> {
        let mut k = k + self.pos as usize;
        for c in self.cur.iter().chain(rest) {
            if k < c.walls.len() {
                return Some((c.evs[k].kind.name(), c.walls[k]));
            }
            k -= c.walls.len();
        }
        None
    }
}

struct Stream<'p> {
    queues: Vec<Queue>,
    /// Per location, the chunks after its current one.
    rest: Vec<VecDeque<Arc<ChunkData>>>,
    /// Events of each location not yet read.
    remaining: Vec<u64>,
    /// Locations with an empty queue and events still to read.
    starving: usize,
    /// Used-up chunks, back to the decoding threads.
    pool: &'p Pool,
}

impl<'p> Stream<'p> {
    /// Nothing read yet of locations with `counts` events.
    fn new(counts: &[u64], pool: &'p Pool) -> Self {
        let n = counts.len();
        Stream {
            queues: (0..n).map(|_| Queue::default()).collect(),
            rest: (0..n).map(|_| VecDeque::new()).collect(),
            remaining: counts.to_vec(),
            starving: counts.iter().filter(|&&c| c > 0).count(),
            pool,
        }
    }

    /// Takes decoded blocks (from `rxs`, in turn from `*next`) until every location
    /// with events still to read has some queued.
    fn fill(
        &mut self,
        rxs: &[std::sync::mpsc::Receiver<Result<Piece>>],
        next: &mut usize,
        name: &str,
    ) -> Result<()> {
        while self.starving > 0 {
            let got = rxs[*next % rxs.len()].recv();
            *next += 1;
            match got {
                Ok(Ok(p)) => self.push(p, name)?,
                Ok(Err(e)) => return Err(e),
                Err(_) => {
                    return Err(Error::input(
                        name,
                        "the trace ended before the events the first reading counted: did it change?",
                    ))
                }
            }
        }
        Ok(())
    }

    fn push(&mut self, p: Piece, name: &str) -> Result<()> {
        if p.multi {
            // The first event (in the block) beyond its location's count, as the
            // events are taken one by one.
            let mut first = p.bad;
            for c in &p.chunks {
                let r = self.remaining[c.loc as usize];
                if c.declared > r {
                    let at = c.at[r as usize];
                    if first.is_none_or(|(a, _)| at < a) {
                        first = Some((at, c.loc));
                    }
                }
            }
            if let Some((_, loc)) = first {
                return Err(more_events(name, loc));
            }
        }
        for c in p.chunks {
            self.push_src(c.loc, c.declared, c.data, name)?;
        }
        match p.err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Queues `n` events of `loc`.
    fn push_src(&mut self, loc: LocId, n: u64, data: ChunkData, name: &str) -> Result<()> {
        let l = loc as usize;
        if l >= self.queues.len() || self.remaining[l] < n {
            return Err(more_events(name, loc));
        }
        self.remaining[l] -= n;
        if data.walls.is_empty() {
            return Ok(());
        }
        let q = &mut self.queues[l];
        if q.cur.is_none() {
            self.starving -= 1;
            q.cur = Some(Arc::new(data));
            q.pos = 0;
            q.tag = (u64::MAX, 0);
        } else {
            self.rest[l].push_back(Arc::new(data));
        }
        Ok(())
    }

    /// Moves past the next event of `loc`.
    #[inline]
    fn advance(&mut self, loc: LocId) {
        let l = loc as usize;
        let q = &mut self.queues[l];
        q.pos += 1;
        if q.pos.is_multiple_of(8) {
            if let Some(c) = &q.cur {
                prefetch(c.walls.as_ptr().wrapping_add(q.pos as usize + 8));
            }
        }
        if q.cur.as_ref().is_some_and(|c| q.pos as usize >= c.walls.len()) {
            q.pos = 0;
            q.tag = (u64::MAX, 0);
            let old = std::mem::replace(&mut q.cur, self.rest[l].pop_front());
            recycle(old, self.pool);
            if q.cur.is_none() && self.remaining[l] > 0 {
                self.starving += 1;
            }
        }
    }

    fn head(&self, loc: LocId) -> Head {
        let l = loc as usize;
        match self.queues.get(l).and_then(|q| q.front()) {
            Some(w) => Head::At(w),
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
        q.get(usize::try_from(r.index.checked_sub(engine.next_index(r.loc))?).ok()?, &st.rest[r.loc as usize])
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const EDGES: [i64; 7] = [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX];

    /// The heap's key orders as (wall, location) does and gives the location back.
    #[test]
    fn heap_keys_order_as_pairs_at_the_edges() {
        let locs = [0, 1, u32::MAX - 1, u32::MAX];
        for &wa in &EDGES {
            for &wb in &EDGES {
                for &la in &locs {
                    for &lb in &locs {
                        assert_eq!(heap_key(wa, la).cmp(&heap_key(wb, lb)), (wa, la).cmp(&(wb, lb)));
                        assert_eq!(key_loc(heap_key(wa, la)), la);
                    }
                }
            }
        }
    }

    proptest! {
        #[test]
        fn heap_keys_order_as_pairs(wa in any::<i64>(), wb in any::<i64>(), la in any::<u32>(), lb in any::<u32>()) {
            prop_assert_eq!(heap_key(wa, la).cmp(&heap_key(wb, lb)), (wa, la).cmp(&(wb, lb)));
            prop_assert_eq!(heap_key(wa, la).cmp(&heap_key(wa, lb)), la.cmp(&lb));
            prop_assert_eq!(key_loc(heap_key(wa, la)), la);
        }
    }
}
