//! Decoding the events of one location: the hot loop over a chunk, and the
//! sinks that turn decoded records into spoor events.
//!
//! An events chunk is a sequence of records, each a type byte and its
//! fields; a timestamp record (0x05 and a full 8-byte time) sets the time of
//! the records that follow it until the next one, and an attribute list
//! (0x06) belongs to the next event. Most records carry their length after
//! the type byte (one byte, or 0xFF and 8 bytes), so unknown ones are
//! skipped; the OTF2 1.x "singleton" records (Enter, Leave, ...) have one
//! compressed integer and no length.
//!
//! The decoder calls a [`RecordHandler`]; the [`Resolver`] pairs what OTF2 leaves
//! apart: a collective begin with its end, an Irecv request with its
//! completion (or cancellation), a blocking receive with the Enter of its
//! MPI_Recv region.

use super::buf::{self, compressed, full_u64, record_len, Bad, R};
use super::clock::{correct, Interval, TimeConv};
use super::defs::{Lookup, NONE, RECV_FLAG, SELF_FLAG, UNDEF};
use super::names as n;
use spoor_format::binary::BlockEncoder;
use spoor_model::{Annotations, CollOp, CommId, Communicator, Event, Kind, LocId, MetricId, StrId};

/// The communicator of placeholders the resolver fills in later.
pub const PLACEHOLDER: CommId = u32::MAX;

/// Where a location's ids lead.
pub struct LocCtx<'a> {
    pub regions: &'a Lookup,
    pub region_map: Option<&'a Lookup>,
    pub comms: &'a Lookup,
    pub comm_map: Option<&'a Lookup>,
    pub self_comms: &'a [CommId],
    pub comm_defs: &'a [Communicator],
    pub metrics: &'a Lookup,
    pub metric_map: Option<&'a Lookup>,
    pub metric_sets: &'a [Vec<MetricId>],
    pub conv: TimeConv,
    /// Clock correction (empty: raw ticks).
    pub intervals: &'a [Interval],
    /// Where THREAD_BEGIN parents are found while decoding; without,
    /// `ThreadBegin` parents stay `None`.
    pub creators: Option<&'a (dyn Parents + Sync)>,
}

/// THREAD_BEGIN parents: the location of the THREAD_CREATE with the same
/// (contingent, sequence number).
pub trait Parents {
    fn parent(&self, key: (CommId, u64)) -> Option<LocId>;
}

/// Maps a local id through a mapping table (ids not in the table map to themselves).
#[inline(always)]
fn map_id(m: Option<&Lookup>, id: u32) -> u32 {
    match m {
        None => id,
        Some(m) => {
            let g = m.get(id);
            if g == NONE {
                id
            } else {
                g
            }
        }
    }
}

impl LocCtx<'_> {
    #[inline(always)]
    fn comm(&self, raw: u32) -> CommId {
        let c = self.comms.get(map_id(self.comm_map, raw));
        if c != NONE && c & SELF_FLAG != 0 {
            self.self_comms.get((c & !SELF_FLAG) as usize).copied().unwrap_or(NONE)
        } else {
            c
        }
    }

    #[inline(always)]
    fn member(&self, comm: CommId, rank: u32, at: usize) -> R<LocId> {
        match self.comm_defs[comm as usize].members.get(rank as usize) {
            Some(&l) => Ok(l),
            None => Err(Bad::new(
                at,
                format!(
                    "rank {rank} is not in communicator {comm} ({} members)",
                    self.comm_defs[comm as usize].members.len()
                ),
            )),
        }
    }
}

/// Per-location decoding state that crosses chunks.
pub struct DecState {
    /// The current time in ticks (OTF2 starts at 0) and in ns.
    pub time: u64,
    pub wall: i64,
    cursor: usize,
    /// Event records read (every record but timestamps, attribute lists and markers).
    pub records: u64,
    /// Skipped records by type; attribute lists at [`buf::ATTRIBUTE_LIST`].
    pub skipped: Box<[u64; 256]>,
    /// Records skipped because their communicator is not defined, by type.
    pub no_comm: Box<[u64; 256]>,
    /// THREAD_CREATE and THREAD_BEGIN: (contingent, sequence number), in order.
    pub creates: Vec<(CommId, u64)>,
    pub begins: Vec<(CommId, u64)>,
}

impl DecState {
    pub fn new(ctx: &LocCtx) -> Self {
        DecState {
            time: 0,
            wall: ctx.conv.ns(correct(ctx.intervals, &mut 0, 0)),
            cursor: 0,
            records: 0,
            skipped: Box::new([0; 256]),
            no_comm: Box::new([0; 256]),
            creates: Vec::new(),
            begins: Vec::new(),
        }
    }

    #[inline(always)]
    fn set_time(&mut self, ctx: &LocCtx, t: u64) {
        if t != self.time {
            self.time = t;
            self.wall = ctx.conv.ns(correct(ctx.intervals, &mut self.cursor, t));
        }
    }
}

/// What the decoder hands each OTF2 record to, as the data model's pieces (one event or a
/// placeholder the [`Resolver`] fills in later); not an [`spoor_format::EventSink`]:
/// OTF2 leaves some events to be paired (a receive's begin, a request) before they exist.
pub trait RecordHandler {
    fn plain(&mut self, wall: i64, kind: Kind);
    fn enter(&mut self, wall: i64, proc: StrId, recv: bool);
    fn leave(&mut self, wall: i64, proc: StrId);
    fn recv(&mut self, wall: i64, from: LocId, comm: CommId, tag: u32, bytes: u64);
    fn coll_begin(&mut self, wall: i64);
    fn coll_end(
        &mut self,
        wall: i64,
        op: CollOp,
        comm: CommId,
        root: Option<LocId>,
        sent: u64,
        received: u64,
    );
    fn irecv_request(&mut self, wall: i64, request: u64);
    #[allow(clippy::too_many_arguments)]
    fn irecv(&mut self, wall: i64, request: u64, from: LocId, comm: CommId, tag: u32, bytes: u64);
    /// MPI_REQUEST_CANCELLED: a pending receive request never communicates.
    fn cancel(&mut self, wall: i64, request: u64);
}

#[inline(always)]
fn ev(loc: LocId, wall: i64, kind: Kind) -> Event {
    Event { loc, wall, cpu: None, kind, ann: Annotations { partner: None, lamport: None, raw_wall: None } }
}

/// Builds a location's final events: fills placeholders, inserts the
/// synthesized `RecvBegin`s, and (in raw clock mode) interleaves the
/// clock-offset samples by time.
///
/// Collecting ([`Resolver::new`]), `events` ends up holding all of the
/// location's events. Streaming ([`Resolver::streaming`]), `events` is a
/// window: whenever it has grown by `window` events, the events before the
/// earliest placeholder that may still be filled are encoded into blocks
/// (`Encoded::full`) and dropped from the window, unfilled placeholders
/// (which can no longer be filled) left out. Indices into the events are
/// counted from the location's first event (`base` is the number dropped).
pub struct Resolver {
    loc: LocId,
    pub events: Vec<Event>,
    recv_begin: bool,
    /// Open regions: a RecvBegin placeholder's index, or NO_PLACEHOLDER.
    stack: Vec<usize>,
    /// Open collective begins (placeholder indices).
    colls: Vec<usize>,
    /// Pending Irecv requests: (request id, placeholder index).
    irecvs: Vec<(u64, usize)>,
    default_comm: CommId,
    /// Placeholders that may stay unfilled (removed at the end).
    open_placeholders: usize,
    /// Clock-offset events not yet placed, by decreasing time.
    samples: Vec<Event>,
    next_sample: i64,
    /// Streaming: the events dropped from the window so far, the window's
    /// length that triggers the next flush, the encoded blocks.
    base: usize,
    flush_len: usize,
    window: usize,
    encoded: Option<Encoded>,
    /// Placeholders left out while streaming: collective begins, cancelled requests.
    dropped_colls: u64,
    dropped_cancelled: u64,
}

/// Streaming: the window is flushed whenever it has grown by this many events
/// (about 240 KiB of events, which stay in the cache).
pub const WINDOW: usize = 2048;

/// A location's events encoded into blocks of `block_events` events.
pub struct Encoded {
    block_events: usize,
    /// The block being filled.
    pub current: BlockEncoder,
    /// Full blocks, in order, not yet taken.
    pub full: Vec<BlockEncoder>,
}

impl Encoded {
    fn new(block_events: usize) -> Self {
        Encoded { block_events: block_events.max(1), current: Self::block(block_events), full: Vec::new() }
    }

    fn block(block_events: usize) -> BlockEncoder {
        let mut b = BlockEncoder::default();
        b.buf.reserve(block_events.min(1 << 16) * 8);
        b
    }

    fn put(&mut self, events: &[Event]) {
        for e in events {
            self.current.push(e, false);
            if self.current.count as usize == self.block_events {
                let next = Self::block(self.block_events);
                self.full.push(std::mem::replace(&mut self.current, next));
            }
        }
    }
}

const NO_PLACEHOLDER: usize = usize::MAX;

/// A placeholder left unfilled (always one that can no longer be filled, at the end or before a flush point).
#[inline(always)]
fn is_placeholder(k: &Kind) -> bool {
    matches!(
        k,
        Kind::RecvBegin { comm: PLACEHOLDER, .. }
            | Kind::CollBegin { comm: PLACEHOLDER, .. }
            | Kind::IrecvRequest { comm: PLACEHOLDER, .. }
    )
}

impl Resolver {
    /// A resolver that collects all of the location's events.
    pub fn new(
        loc: LocId,
        capacity: usize,
        recv_begin: bool,
        default_comm: CommId,
        mut samples: Vec<Event>,
    ) -> Self {
        // By decreasing time, samples of equal times in their recorded order from the end.
        samples.sort_by_key(|e| e.wall);
        samples.reverse();
        let next_sample = samples.last().map_or(i64::MAX, |e| e.wall);
        Resolver {
            loc,
            events: super::alloc_events(capacity),
            recv_begin,
            stack: Vec::new(),
            colls: Vec::new(),
            irecvs: Vec::new(),
            default_comm,
            open_placeholders: 0,
            samples,
            next_sample,
            base: 0,
            flush_len: usize::MAX,
            window: WINDOW,
            encoded: None,
            dropped_colls: 0,
            dropped_cancelled: 0,
        }
    }

    /// A resolver that encodes the events into blocks of `block_events` as
    /// they become final, keeping a window of events (see [`Resolver`]).
    pub fn streaming(
        loc: LocId,
        block_events: usize,
        window: usize,
        recv_begin: bool,
        default_comm: CommId,
        samples: Vec<Event>,
    ) -> Self {
        let mut r = Self::new(loc, 0, recv_begin, default_comm, samples);
        r.window = window.max(1);
        r.events = Vec::with_capacity(r.window + r.window / 4);
        r.flush_len = r.window;
        r.encoded = Some(Encoded::new(block_events));
        r
    }

    /// Streaming: encodes `events` as they are, after every event pushed so far.
    pub fn put_final(&mut self, events: &[Event]) {
        self.flush(true);
        if let Some(enc) = self.encoded.as_mut() {
            enc.put(events);
        }
    }

    /// The full blocks encoded so far (streaming), in order.
    pub fn take_blocks(&mut self) -> Vec<BlockEncoder> {
        self.encoded.as_mut().map(|e| std::mem::take(&mut e.full)).unwrap_or_default()
    }

    /// Appends an event (after the samples taken before it); its index.
    #[inline(always)]
    fn push(&mut self, wall: i64, kind: Kind) -> usize {
        if wall > self.next_sample {
            self.place_samples(wall);
        }
        if self.events.len() >= self.flush_len {
            self.flush(false);
        }
        self.events.push(ev(self.loc, wall, kind));
        self.base + self.events.len() - 1
    }

    #[inline(always)]
    fn at(&mut self, i: usize) -> &mut Event {
        &mut self.events[i - self.base]
    }

    /// Streaming: encodes the events before the earliest placeholder that
    /// may still be filled (`all`: every event), leaving unfilled ones out.
    #[cold]
    #[inline(never)]
    fn flush(&mut self, all: bool) {
        let Some(enc) = self.encoded.as_mut() else {
            return;
        };
        let mut upto = self.events.len();
        if !all {
            let pending = self.stack.iter().copied().filter(|&i| i != NO_PLACEHOLDER);
            let pending = pending.chain(self.colls.iter().copied()).chain(self.irecvs.iter().map(|p| p.1));
            if let Some(first) = pending.min() {
                upto = upto.min(first - self.base);
            }
        }
        let ready = &self.events[..upto];
        let mut start = 0;
        if self.open_placeholders > 0 {
            for (j, e) in ready.iter().enumerate() {
                if is_placeholder(&e.kind) {
                    enc.put(&ready[start..j]);
                    start = j + 1;
                    self.open_placeholders -= 1;
                    match e.kind {
                        Kind::CollBegin { .. } => self.dropped_colls += 1,
                        Kind::IrecvRequest { .. } => self.dropped_cancelled += 1,
                        _ => {}
                    }
                }
            }
        }
        enc.put(&ready[start..]);
        self.events.drain(..upto);
        self.base += upto;
        // Geometric growth while a placeholder holds the window open.
        self.flush_len = (self.events.len() + self.window).max(2 * self.events.len());
    }

    /// Places the samples taken before `wall` (a sample goes after the events at its own time).
    #[cold]
    fn place_samples(&mut self, wall: i64) {
        while self.samples.last().is_some_and(|s| s.wall < wall) {
            let s = self.samples.pop().unwrap();
            if self.events.len() >= self.flush_len {
                self.flush(false);
            }
            self.events.push(s);
        }
        self.next_sample = self.samples.last().map_or(i64::MAX, |e| e.wall);
    }

    fn finish_placeholders(&mut self) {
        self.place_samples(i64::MAX);
        for (_, i) in std::mem::take(&mut self.irecvs) {
            self.unmatched_irecv(i);
        }
        self.stack.clear();
        self.colls.clear();
    }

    /// The final events, and the numbers of collective begins without an end
    /// and of cancelled receive requests (both dropped).
    pub fn finish(mut self) -> (Vec<Event>, u64, u64) {
        self.finish_placeholders();
        let (mut colls, mut cancelled) = (0, 0);
        if self.open_placeholders > 0 {
            self.events.retain(|e| match e.kind {
                Kind::RecvBegin { comm: PLACEHOLDER, .. } => false,
                Kind::CollBegin { comm: PLACEHOLDER, .. } => {
                    colls += 1;
                    false
                }
                Kind::IrecvRequest { comm: PLACEHOLDER, .. } => {
                    cancelled += 1;
                    false
                }
                _ => true,
            });
        }
        (self.events, colls, cancelled)
    }

    /// Streaming: the remaining blocks (the last one possibly not full, or
    /// empty), and the numbers of dropped collective begins and cancelled
    /// receive requests.
    pub fn finish_streaming(mut self) -> (Vec<BlockEncoder>, u64, u64) {
        self.finish_placeholders();
        self.flush(true);
        let mut enc = self.encoded.take().expect("a streaming resolver");
        enc.full.push(enc.current);
        (enc.full, self.dropped_colls, self.dropped_cancelled)
    }

    fn unmatched_irecv(&mut self, i: usize) {
        let comm = self.default_comm;
        if let Kind::IrecvRequest { comm: c, .. } = &mut self.at(i).kind {
            *c = comm;
        }
    }
}

impl RecordHandler for Resolver {
    #[inline(always)]
    fn plain(&mut self, wall: i64, kind: Kind) {
        self.push(wall, kind);
    }

    #[inline(always)]
    fn enter(&mut self, wall: i64, proc: StrId, recv: bool) {
        self.push(wall, Kind::Enter { proc });
        if recv && self.recv_begin {
            let i = self.push(wall, Kind::RecvBegin { from: None, comm: PLACEHOLDER, tag: None });
            self.stack.push(i);
            self.open_placeholders += 1;
        } else {
            self.stack.push(NO_PLACEHOLDER);
        }
    }

    #[inline(always)]
    fn leave(&mut self, wall: i64, proc: StrId) {
        self.push(wall, Kind::Leave { proc });
        self.stack.pop();
    }

    fn recv(&mut self, wall: i64, from: LocId, comm: CommId, tag: u32, bytes: u64) {
        if self.recv_begin {
            let begin = Kind::RecvBegin { from: Some(from), comm, tag: Some(tag) };
            match self.stack.iter_mut().rev().find(|i| **i != NO_PLACEHOLDER) {
                Some(i) => {
                    let at = std::mem::replace(i, NO_PLACEHOLDER);
                    self.at(at).kind = begin;
                    self.open_placeholders -= 1;
                }
                None => {
                    self.push(wall, begin);
                }
            }
        }
        self.push(wall, Kind::RecvEnd { from, comm, tag, bytes });
    }

    fn coll_begin(&mut self, wall: i64) {
        let i = self.push(wall, Kind::CollBegin { op: CollOp::Other, comm: PLACEHOLDER });
        self.colls.push(i);
        self.open_placeholders += 1;
    }

    fn coll_end(
        &mut self,
        wall: i64,
        op: CollOp,
        comm: CommId,
        root: Option<LocId>,
        sent: u64,
        received: u64,
    ) {
        if let Some(i) = self.colls.pop() {
            self.at(i).kind = Kind::CollBegin { op, comm };
            self.open_placeholders -= 1;
        }
        self.push(wall, Kind::CollEnd { op, comm, root, sent, received });
    }

    fn irecv_request(&mut self, wall: i64, request: u64) {
        let i = self.push(wall, Kind::IrecvRequest { from: None, comm: PLACEHOLDER, tag: None, request });
        if let Some(p) = self.irecvs.iter_mut().find(|p| p.0 == request) {
            let old = std::mem::replace(&mut p.1, i);
            self.unmatched_irecv(old);
        } else {
            self.irecvs.push((request, i));
        }
    }

    fn irecv(&mut self, wall: i64, request: u64, from: LocId, comm: CommId, tag: u32, bytes: u64) {
        if let Some(k) = self.irecvs.iter().position(|p| p.0 == request) {
            let (_, i) = self.irecvs.swap_remove(k);
            self.at(i).kind = Kind::IrecvRequest { from: Some(from), comm, tag: Some(tag), request };
        }
        self.push(wall, Kind::IrecvComplete { request, from, comm, tag, bytes });
    }

    fn cancel(&mut self, _wall: i64, request: u64) {
        // The placeholder stays unfilled and is removed at the end.
        if let Some(k) = self.irecvs.iter().position(|p| p.0 == request) {
            self.irecvs.swap_remove(k);
            self.open_placeholders += 1;
        }
    }
}

/// OTF2's collective operations as spoor's.
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

/// A metric value of OTF2 type `t` (its bits as read) as f64.
fn metric_value(t: u8, v: u64) -> f64 {
    match t {
        5..=8 => v as i64 as f64,
        9 => f32::from_bits(v as u32) as f64,
        10 => f64::from_bits(v),
        _ => v as f64,
    }
}

/// How a chunk ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkEnd {
    Chunk,
    File,
}

/// Decodes the records of one chunk (`d`, header included) into `sink`.
/// Offsets in errors are relative to the chunk.
#[inline(never)]
pub fn decode_chunk<const BE: bool, S: RecordHandler>(
    ctx: &LocCtx,
    d: &[u8],
    st: &mut DecState,
    sink: &mut S,
) -> R<ChunkEnd> {
    let len = d.len();
    let mut p = buf::CHUNK_HEADER_LEN;
    loop {
        if p >= len {
            return Err(Bad::new(
                p,
                "truncated: the chunk ends without an end-of-chunk or end-of-file marker",
            ));
        }
        let at = p;
        let t = d[p];
        p += 1;
        match t {
            buf::TIMESTAMP => {
                if p + 8 > len {
                    return Err(Bad::new(at, "truncated timestamp"));
                }
                let time = full_u64(d, p, BE);
                p += 8;
                st.set_time(ctx, time);
                continue;
            }
            n::ENTER | n::LEAVE => {
                let region = compressed::<BE>(d, &mut p, 4)? as u32;
                let r = ctx.regions.get(map_id(ctx.region_map, region));
                if r == NONE {
                    return Err(undefined_region(at, region));
                }
                st.records += 1;
                if t == n::ENTER {
                    sink.enter(st.wall, r & !RECV_FLAG, r & RECV_FLAG != 0);
                } else {
                    sink.leave(st.wall, r & !RECV_FLAG);
                }
                continue;
            }
            buf::END_OF_CHUNK => return Ok(ChunkEnd::Chunk),
            buf::END_OF_FILE => return Ok(ChunkEnd::File),
            _ => {}
        }
        if n::is_singleton(t) {
            let v = compressed::<BE>(d, &mut p, 8)?;
            st.records += 1;
            match t {
                n::MPI_ISEND_COMPLETE => sink.plain(st.wall, Kind::IsendComplete { request: v }),
                n::MPI_IRECV_REQUEST => sink.irecv_request(st.wall, v),
                n::MPI_REQUEST_CANCELLED => {
                    st.skipped[t as usize] += 1;
                    sink.cancel(st.wall, v);
                }
                _ => st.skipped[t as usize] += 1,
            }
            continue;
        }
        let rec_len = record_len::<BE>(d, &mut p)?;
        if rec_len > len - p {
            return Err(Bad::new(at, format!("record of {rec_len} bytes runs past the end of its chunk")));
        }
        let end = p + rec_len;
        if t == buf::ATTRIBUTE_LIST {
            st.skipped[t as usize] += 1;
            p = end;
            continue;
        }
        st.records += 1;
        let q = p;
        p = end;
        decode_record::<BE, S>(ctx, d, st, sink, t, at, q, end)?;
    }
}

/// One record with a length (`t` at `at`, its fields from `q` to `end`) into `sink`.
// Called from decode_chunk's loop only: inlined there, as it was written.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn decode_record<const BE: bool, S: RecordHandler>(
    ctx: &LocCtx,
    d: &[u8],
    st: &mut DecState,
    sink: &mut S,
    t: u8,
    at: usize,
    mut q: usize,
    end: usize,
) -> R<()> {
    let w = st.wall;
    macro_rules! u32c {
        () => {
            compressed::<BE>(d, &mut q, 4)? as u32
        };
    }
    macro_rules! u64c {
        () => {
            compressed::<BE>(d, &mut q, 8)?
        };
    }
    // A record on a communicator that is not defined is counted and skipped.
    macro_rules! comm {
        ($raw:expr) => {{
            let c = ctx.comm($raw);
            if c == NONE {
                st.no_comm[t as usize] += 1;
                return Ok(());
            }
            c
        }};
    }
    match t {
        n::MPI_SEND | n::MPI_ISEND => {
            let (rank, c, tag, bytes) = (u32c!(), u32c!(), u32c!(), u64c!());
            let request = if t == n::MPI_ISEND { u64c!() } else { 0 };
            check_end(q, end, at)?;
            let comm = comm!(c);
            let to = ctx.member(comm, rank, at)?;
            if t == n::MPI_SEND {
                sink.plain(w, Kind::Send { to, comm, tag, bytes });
            } else {
                sink.plain(w, Kind::Isend { to, comm, tag, bytes, request });
            }
        }
        n::MPI_RECV | n::MPI_IRECV => {
            let (rank, c, tag, bytes) = (u32c!(), u32c!(), u32c!(), u64c!());
            let request = if t == n::MPI_IRECV { u64c!() } else { 0 };
            check_end(q, end, at)?;
            let comm = comm!(c);
            let from = ctx.member(comm, rank, at)?;
            if t == n::MPI_RECV {
                sink.recv(w, from, comm, tag, bytes);
            } else {
                sink.irecv(w, request, from, comm, tag, bytes);
            }
        }
        n::MPI_COLLECTIVE_BEGIN => sink.coll_begin(w),
        n::MPI_COLLECTIVE_END => {
            if q >= end {
                return Err(Bad::new(at, "MPI_COLLECTIVE_END record too short"));
            }
            let op = d[q];
            q += 1;
            let (c, root, sent, received) = (u32c!(), u32c!(), u64c!(), u64c!());
            check_end(q, end, at)?;
            let comm = comm!(c);
            let root = if root == UNDEF { None } else { Some(ctx.member(comm, root, at)?) };
            sink.coll_end(w, coll_op(op), comm, root, sent, received);
        }
        n::METRIC => {
            let m = u32c!();
            decode_metric::<BE, S>(ctx, d, sink, w, at, m, q, end)?;
        }
        n::THREAD_BEGIN | n::THREAD_CREATE => {
            let (c, seq) = (u32c!(), u64c!());
            check_end(q, end, at)?;
            let comm = ctx.comm(c);
            if t == n::THREAD_BEGIN {
                st.begins.push((comm, seq));
                let parent = ctx.creators.and_then(|m| m.parent((comm, seq)));
                sink.plain(w, Kind::ThreadBegin { parent });
            } else {
                st.creates.push((comm, seq));
                st.skipped[t as usize] += 1;
            }
        }
        n::THREAD_END => sink.plain(w, Kind::ThreadEnd),
        n::PROGRAM_BEGIN => sink.plain(w, Kind::ProcessBegin { parent: None }),
        n::PROGRAM_END => sink.plain(w, Kind::ProcessEnd),
        _ => st.skipped[t as usize] += 1,
    }
    Ok(())
}

/// A METRIC record's values (after its metric id, from `q`), one event each.
#[allow(clippy::too_many_arguments)]
#[inline]
fn decode_metric<const BE: bool, S: RecordHandler>(
    ctx: &LocCtx,
    d: &[u8],
    sink: &mut S,
    w: i64,
    at: usize,
    m: u32,
    mut q: usize,
    end: usize,
) -> R<()> {
    let set = ctx.metrics.get(map_id(ctx.metric_map, m));
    if set == NONE {
        return Err(Bad::new(at, format!("METRIC names metric {m}, which is not defined")));
    }
    let members = &ctx.metric_sets[set as usize];
    if q >= end {
        return Err(Bad::new(at, "METRIC record too short"));
    }
    let k = d[q] as usize;
    q += 1;
    if k != members.len() {
        return Err(Bad::new(at, format!("METRIC has {k} values for a metric of {} members", members.len())));
    }
    for &metric in members {
        if q >= end {
            return Err(Bad::new(at, "METRIC record too short"));
        }
        let ty = d[q];
        q += 1;
        let v = compressed::<BE>(d, &mut q, 8)?;
        sink.plain(w, Kind::Metric { metric, value: metric_value(ty, v) });
    }
    check_end(q, end, at)
}

#[inline(always)]
fn check_end(q: usize, end: usize, at: usize) -> R<()> {
    if q > end {
        Err(Bad::new(at, "record shorter than its fields"))
    } else {
        Ok(())
    }
}

#[cold]
fn undefined_region(at: usize, region: u32) -> Bad {
    Bad::new(at, format!("ENTER/LEAVE names region {region}, which is not defined"))
}

/// Collects the (contingent, sequence number) of a chunk's THREAD_CREATE
/// records, parsing no other record than to find where it ends (the first
/// byte of a compressed integer is its length). Errors are those of a chunk
/// decoding would also reject, without their details.
pub fn scan_creates<const BE: bool>(ctx: &LocCtx, d: &[u8], creates: &mut Vec<(CommId, u64)>) -> R<ChunkEnd> {
    let len = d.len();
    let mut p = buf::CHUNK_HEADER_LEN;
    loop {
        if p >= len {
            return Err(Bad::new(p, "truncated chunk"));
        }
        let t = d[p];
        p += 1;
        match t {
            buf::TIMESTAMP => {
                p += 8;
                continue;
            }
            buf::END_OF_CHUNK => return Ok(ChunkEnd::Chunk),
            buf::END_OF_FILE => return Ok(ChunkEnd::File),
            _ if n::is_singleton(t) => {
                match d.get(p) {
                    Some(0 | 0xff) => p += 1,
                    Some(&k) => p += 1 + k as usize,
                    None => return Err(Bad::new(p, "truncated chunk")),
                }
                continue;
            }
            _ => {}
        }
        let rec_len = record_len::<BE>(d, &mut p)?;
        if rec_len > len - p {
            return Err(Bad::new(p, "record runs past the end of its chunk"));
        }
        if t == n::THREAD_CREATE {
            let mut q = p;
            let (c, seq) = (compressed::<BE>(d, &mut q, 4)? as u32, compressed::<BE>(d, &mut q, 8)?);
            if q <= p + rec_len {
                creates.push((ctx.comm(c), seq));
            }
        }
        p += rec_len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n.max(1)
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Enter(bool),
        Leave,
        Recv,
        CollBegin,
        CollEnd,
        IrecvRequest(u64),
        Irecv(u64),
        Cancel(u64),
        Plain,
    }

    fn ops(r: &mut Rng) -> Vec<(i64, Op)> {
        let (n, mut wall) = (r.below(3000), 0i64);
        (0..n)
            .map(|_| {
                wall += r.below(3) as i64;
                let op = match r.below(20) {
                    0..=3 => Op::Enter(r.below(3) == 0),
                    4..=7 => Op::Leave,
                    8 | 9 => Op::Recv,
                    10 => Op::CollBegin,
                    11 => Op::CollEnd,
                    12 | 13 => Op::IrecvRequest(r.below(6)),
                    14 | 15 => Op::Irecv(r.below(6)),
                    16 => Op::Cancel(r.below(6)),
                    _ => Op::Plain,
                };
                (wall, op)
            })
            .collect()
    }

    fn run(res: &mut Resolver, ops: &[(i64, Op)]) {
        for &(w, op) in ops {
            match op {
                Op::Enter(recv) => res.enter(w, 1, recv),
                Op::Leave => res.leave(w, 1),
                Op::Recv => res.recv(w, 2, 0, 5, 8),
                Op::CollBegin => res.coll_begin(w),
                Op::CollEnd => res.coll_end(w, CollOp::Barrier, 0, None, 0, 0),
                Op::IrecvRequest(q) => res.irecv_request(w, q),
                Op::Irecv(q) => res.irecv(w, q, 3, 0, 7, 16),
                Op::Cancel(q) => res.cancel(w, q),
                Op::Plain => res.plain(w, Kind::ThreadEnd),
            }
        }
    }

    fn bytes(blocks: Vec<BlockEncoder>) -> Vec<(u64, i64, i64, Vec<u8>)> {
        blocks.into_iter().filter(|b| b.count > 0).map(|b| (b.count, b.min_wall, b.max_wall, b.buf)).collect()
    }

    /// A streaming resolver gives the blocks of encoding what a collecting
    /// one gives, whatever its window: placeholders filled late (receives,
    /// collectives, Irecv requests), left unfilled (cancelled, never
    /// completed, regions left without a receive) and clock samples.
    #[test]
    fn streaming_gives_the_blocks_of_collecting() {
        let mut r = Rng(0x9e3779b97f4a7c15);
        let mut held = 0;
        for case in 0..300 {
            let ops = ops(&mut r);
            let recv_begin = case % 4 != 0;
            let block_events = [1, 3, 64, 4096][case % 4];
            let samples: Vec<Event> =
                (0..r.below(4)).map(|_| ev(0, r.below(6000) as i64, Kind::ProcessEnd)).collect();
            let mut c = Resolver::new(0, 0, recv_begin, 9, samples.clone());
            run(&mut c, &ops);
            let (events, colls, cancelled) = c.finish();
            let mut want = Encoded::new(block_events);
            want.put(&events);
            want.full.push(want.current);
            let want = bytes(want.full);
            for window in [1, 2, 5, 64, 1 << 20] {
                let mut s = Resolver::streaming(0, block_events, window, recv_begin, 9, samples.clone());
                run(&mut s, &ops);
                held = held.max(s.events.len());
                let (got, c2, x2) = s.finish_streaming();
                assert_eq!((c2, x2), (colls, cancelled), "case {case}, window {window}");
                assert!(bytes(got) == want, "case {case}, window {window}: other blocks");
            }
        }
        // Some windows were held open by placeholders.
        assert!(held > 64, "{held}");
    }
}
