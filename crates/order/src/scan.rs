//! The first pass over a trace: every location's event count, the events that take
//! part in synchronization (messages, requests, collectives, locks, spawns, clock
//! offsets) as compact [`Record`]s, and optionally every event's wall time. Blocks are
//! decoded in parallel; the result does not depend on the number of threads.

use crate::describe;
use crate::input::Input;
use crate::times::Times;
use crate::{Error, Result};
use rayon::prelude::*;
use spoor_format::varint::get_u64;
use spoor_format::varint::{put_i64, put_u64, unzigzag, zigzag};
use spoor_model::{CollOp, CommId, Definitions, EventRef, Kind, LocId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What matching, alignment and ordering need of a synchronization event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rec {
    /// `send` (no request) or `isend`.
    Send {
        to: LocId,
        comm: CommId,
        tag: u32,
        bytes: u64,
        request: Option<u64>,
    },
    /// `isend_complete`.
    SendDone {
        request: u64,
    },
    /// `recv_begin` (no request) or `irecv_request`; `None` source or tag is a wildcard.
    RecvPost {
        from: Option<LocId>,
        comm: CommId,
        tag: Option<u32>,
        request: Option<u64>,
    },
    /// `recv_end` (no request) or `irecv_complete`: the actual source, tag and size.
    RecvDone {
        from: LocId,
        comm: CommId,
        tag: u32,
        bytes: u64,
        request: Option<u64>,
    },
    CollBegin {
        op: CollOp,
        comm: CommId,
    },
    CollEnd {
        op: CollOp,
        comm: CommId,
        root: Option<LocId>,
    },
    LockRequest {
        lock: u64,
    },
    LockAcquire {
        lock: u64,
    },
    LockRelease {
        lock: u64,
    },
    /// `process_begin` or `thread_begin` with a parent.
    Spawn {
        parent: LocId,
    },
    /// `clock_offset`: reference time = local time + offset.
    Offset {
        reference: LocId,
        offset: i64,
        error: u64,
    },
}

impl Rec {
    pub fn of(kind: &Kind) -> Option<Rec> {
        Some(match *kind {
            Kind::Send { to, comm, tag, bytes } => Rec::Send { to, comm, tag, bytes, request: None },
            Kind::Isend { to, comm, tag, bytes, request } => {
                Rec::Send { to, comm, tag, bytes, request: Some(request) }
            }
            Kind::IsendComplete { request } => Rec::SendDone { request },
            Kind::RecvBegin { from, comm, tag } => Rec::RecvPost { from, comm, tag, request: None },
            Kind::IrecvRequest { from, comm, tag, request } => {
                Rec::RecvPost { from, comm, tag, request: Some(request) }
            }
            Kind::RecvEnd { from, comm, tag, bytes } => {
                Rec::RecvDone { from, comm, tag, bytes, request: None }
            }
            Kind::IrecvComplete { request, from, comm, tag, bytes } => {
                Rec::RecvDone { from, comm, tag, bytes, request: Some(request) }
            }
            Kind::CollBegin { op, comm } => Rec::CollBegin { op, comm },
            Kind::CollEnd { op, comm, root, .. } => Rec::CollEnd { op, comm, root },
            Kind::LockRequest { lock } => Rec::LockRequest { lock },
            Kind::LockAcquire { lock } => Rec::LockAcquire { lock },
            Kind::LockRelease { lock } => Rec::LockRelease { lock },
            Kind::ProcessBegin { parent: Some(parent) } | Kind::ThreadBegin { parent: Some(parent) } => {
                Rec::Spawn { parent }
            }
            Kind::ClockOffset { reference, offset, error } => Rec::Offset { reference, offset, error },
            _ => return None,
        })
    }

    /// The kind's name in the text form (`send` or `isend`, ...).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Rec::Send { request: None, .. } => "send",
            Rec::Send { .. } => "isend",
            Rec::SendDone { .. } => "isend_complete",
            Rec::RecvPost { request: None, .. } => "recv_begin",
            Rec::RecvPost { .. } => "irecv_request",
            Rec::RecvDone { request: None, .. } => "recv_end",
            Rec::RecvDone { .. } => "irecv_complete",
            Rec::CollBegin { .. } => "coll_begin",
            Rec::CollEnd { .. } => "coll_end",
            Rec::LockRequest { .. } => "lock_request",
            Rec::LockAcquire { .. } => "lock_acquire",
            Rec::LockRelease { .. } => "lock_release",
            Rec::Spawn { .. } => "process_begin",
            Rec::Offset { .. } => "clock_offset",
        }
    }

    /// The locations and communicator the record names, for validation.
    fn refs(&self) -> (Peers, Option<CommId>) {
        match *self {
            Rec::Send { to, comm, .. } => ([Some(("sends to", to)), None], Some(comm)),
            Rec::RecvPost { from, comm, .. } => ([from.map(|f| ("receives from", f)), None], Some(comm)),
            Rec::RecvDone { from, comm, .. } => ([Some(("receives from", from)), None], Some(comm)),
            Rec::CollBegin { comm, .. } => ([None, None], Some(comm)),
            Rec::CollEnd { comm, root, .. } => ([root.map(|r| ("names root", r)), None], Some(comm)),
            Rec::Spawn { parent } => ([Some(("names parent", parent)), None], None),
            Rec::Offset { reference, .. } => ([Some(("names reference", reference)), None], None),
            _ => ([None, None], None),
        }
    }
}

/// The locations a record names, with what it does with them.
type Peers = [Option<(&'static str, LocId)>; 2];

/// One synchronization event: its index among its location's events, its wall time
/// and what it does ([`Record::rec`]). 48 bytes: a trace keeps one for nearly half
/// its events until matching has read them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub index: u64,
    pub wall: i64,
    packed: Packed,
}

impl Record {
    #[inline]
    pub fn new(index: u64, wall: i64, rec: Rec) -> Record {
        Record { index, wall, packed: Packed::from(rec) }
    }

    /// What the event does.
    #[inline]
    pub fn rec(&self) -> Rec {
        self.packed.rec()
    }
}

/// [`Rec`] in 32 bytes instead of 40: the variants with a request are apart from
/// those without, so that no `Option<u64>` (16 bytes) is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Packed {
    Send { to: LocId, comm: CommId, tag: u32, bytes: u64 },
    Isend { to: LocId, comm: CommId, tag: u32, bytes: u64, request: u64 },
    SendDone { request: u64 },
    RecvBegin { from: Option<LocId>, comm: CommId, tag: Option<u32> },
    IrecvRequest { from: Option<LocId>, comm: CommId, tag: Option<u32>, request: u64 },
    RecvEnd { from: LocId, comm: CommId, tag: u32, bytes: u64 },
    IrecvComplete { from: LocId, comm: CommId, tag: u32, bytes: u64, request: u64 },
    CollBegin { op: CollOp, comm: CommId },
    CollEnd { op: CollOp, comm: CommId, root: Option<LocId> },
    LockRequest { lock: u64 },
    LockAcquire { lock: u64 },
    LockRelease { lock: u64 },
    Spawn { parent: LocId },
    Offset { reference: LocId, offset: i64, error: u64 },
}

impl From<Rec> for Packed {
    #[inline]
    fn from(r: Rec) -> Packed {
        match r {
            Rec::Send { to, comm, tag, bytes, request: None } => Packed::Send { to, comm, tag, bytes },
            Rec::Send { to, comm, tag, bytes, request: Some(request) } => {
                Packed::Isend { to, comm, tag, bytes, request }
            }
            Rec::SendDone { request } => Packed::SendDone { request },
            Rec::RecvPost { from, comm, tag, request: None } => Packed::RecvBegin { from, comm, tag },
            Rec::RecvPost { from, comm, tag, request: Some(request) } => {
                Packed::IrecvRequest { from, comm, tag, request }
            }
            Rec::RecvDone { from, comm, tag, bytes, request: None } => {
                Packed::RecvEnd { from, comm, tag, bytes }
            }
            Rec::RecvDone { from, comm, tag, bytes, request: Some(request) } => {
                Packed::IrecvComplete { from, comm, tag, bytes, request }
            }
            Rec::CollBegin { op, comm } => Packed::CollBegin { op, comm },
            Rec::CollEnd { op, comm, root } => Packed::CollEnd { op, comm, root },
            Rec::LockRequest { lock } => Packed::LockRequest { lock },
            Rec::LockAcquire { lock } => Packed::LockAcquire { lock },
            Rec::LockRelease { lock } => Packed::LockRelease { lock },
            Rec::Spawn { parent } => Packed::Spawn { parent },
            Rec::Offset { reference, offset, error } => Packed::Offset { reference, offset, error },
        }
    }
}

impl Packed {
    #[inline]
    fn rec(self) -> Rec {
        match self {
            Packed::Send { to, comm, tag, bytes } => Rec::Send { to, comm, tag, bytes, request: None },
            Packed::Isend { to, comm, tag, bytes, request } => {
                Rec::Send { to, comm, tag, bytes, request: Some(request) }
            }
            Packed::SendDone { request } => Rec::SendDone { request },
            Packed::RecvBegin { from, comm, tag } => Rec::RecvPost { from, comm, tag, request: None },
            Packed::IrecvRequest { from, comm, tag, request } => {
                Rec::RecvPost { from, comm, tag, request: Some(request) }
            }
            Packed::RecvEnd { from, comm, tag, bytes } => {
                Rec::RecvDone { from, comm, tag, bytes, request: None }
            }
            Packed::IrecvComplete { from, comm, tag, bytes, request } => {
                Rec::RecvDone { from, comm, tag, bytes, request: Some(request) }
            }
            Packed::CollBegin { op, comm } => Rec::CollBegin { op, comm },
            Packed::CollEnd { op, comm, root } => Rec::CollEnd { op, comm, root },
            Packed::LockRequest { lock } => Rec::LockRequest { lock },
            Packed::LockAcquire { lock } => Rec::LockAcquire { lock },
            Packed::LockRelease { lock } => Rec::LockRelease { lock },
            Packed::Spawn { parent } => Rec::Spawn { parent },
            Packed::Offset { reference, offset, error } => Rec::Offset { reference, offset, error },
        }
    }
}

/// One location's records in order, delta and varint coded: a few bytes each where a
/// [`Record`] takes 48, and a trace keeps one for nearly half its events until matching
/// has read them. Read in order only ([`RecordList::iter`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordList {
    bytes: Vec<u8>,
    len: usize,
    /// The last record's index and wall time: the next one's are kept as differences.
    last: (u64, i64),
}

impl RecordList {
    pub fn push(&mut self, r: Record) {
        let out = &mut self.bytes;
        put_u64(out, r.index.wrapping_sub(self.last.0));
        put_i64(out, r.wall.wrapping_sub(self.last.1));
        self.last = (r.index, r.wall);
        self.len += 1;
        let opt = |v: Option<u32>| v.map_or(0, |x| u64::from(x) + 1);
        // The last of the fields is an optional request, which the code's high bit says
        // is there.
        let (code, fields): (u8, [Option<u64>; 5]) = match r.rec() {
            Rec::Send { to, comm, tag, bytes, request } => {
                (0, [Some(to.into()), Some(comm.into()), Some(tag.into()), Some(bytes), request])
            }
            Rec::SendDone { request } => (1, [Some(request), None, None, None, None]),
            Rec::RecvPost { from, comm, tag, request } => {
                (2, [Some(opt(from)), Some(comm.into()), Some(opt(tag)), None, request])
            }
            Rec::RecvDone { from, comm, tag, bytes, request } => {
                (3, [Some(from.into()), Some(comm.into()), Some(tag.into()), Some(bytes), request])
            }
            Rec::CollBegin { op, comm } => (4, [Some(op.code().into()), Some(comm.into()), None, None, None]),
            Rec::CollEnd { op, comm, root } => {
                (5, [Some(op.code().into()), Some(comm.into()), Some(opt(root)), None, None])
            }
            Rec::LockRequest { lock } => (6, [Some(lock), None, None, None, None]),
            Rec::LockAcquire { lock } => (7, [Some(lock), None, None, None, None]),
            Rec::LockRelease { lock } => (8, [Some(lock), None, None, None, None]),
            Rec::Spawn { parent } => (9, [Some(parent.into()), None, None, None, None]),
            Rec::Offset { reference, offset, error } => {
                (10, [Some(reference.into()), Some(zigzag(offset)), Some(error), None, None])
            }
        };
        out.push(code | if fields[4].is_some() { 0x80 } else { 0 });
        for v in fields.into_iter().flatten() {
            put_u64(out, v);
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Lets go of the room the list grew into.
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
    }

    pub fn iter(&self) -> RecordIter<'_> {
        RecordIter { bytes: &self.bytes, at: 0, left: self.len, last: (0, 0) }
    }
}

impl FromIterator<Record> for RecordList {
    fn from_iter<I: IntoIterator<Item = Record>>(iter: I) -> RecordList {
        let mut l = RecordList::default();
        for r in iter {
            l.push(r);
        }
        l
    }
}

impl<'a> IntoIterator for &'a RecordList {
    type Item = Record;
    type IntoIter = RecordIter<'a>;
    fn into_iter(self) -> RecordIter<'a> {
        self.iter()
    }
}

/// The records of a [`RecordList`], in order.
pub struct RecordIter<'a> {
    bytes: &'a [u8],
    at: usize,
    left: usize,
    last: (u64, i64),
}

impl RecordIter<'_> {
    /// The next varint (the list wrote it, so it is whole; past the end reads as 0).
    #[inline]
    fn u64(&mut self) -> u64 {
        get_u64(self.bytes, &mut self.at)
    }

    #[inline]
    fn u32(&mut self) -> u32 {
        self.u64() as u32
    }

    /// An optional id, kept as its value plus one (0: none).
    #[inline]
    fn opt(&mut self) -> Option<u32> {
        self.u64().checked_sub(1).map(|v| v as u32)
    }
}

impl Iterator for RecordIter<'_> {
    type Item = Record;

    #[inline]
    fn next(&mut self) -> Option<Record> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let index = self.last.0.wrapping_add(self.u64());
        let wall = self.last.1.wrapping_add(unzigzag(self.u64()));
        self.last = (index, wall);
        let head = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        let has_request = head & 0x80 != 0;
        let rec = match head & 0x7f {
            0 => {
                let (to, comm, tag, bytes) = (self.u32(), self.u32(), self.u32(), self.u64());
                Rec::Send { to, comm, tag, bytes, request: has_request.then(|| self.u64()) }
            }
            1 => Rec::SendDone { request: self.u64() },
            2 => {
                let (from, comm, tag) = (self.opt(), self.u32(), self.opt());
                Rec::RecvPost { from, comm, tag, request: has_request.then(|| self.u64()) }
            }
            3 => {
                let (from, comm, tag, bytes) = (self.u32(), self.u32(), self.u32(), self.u64());
                Rec::RecvDone { from, comm, tag, bytes, request: has_request.then(|| self.u64()) }
            }
            4 => {
                let op = CollOp::from_code(self.u64() as u8).unwrap_or(CollOp::Other);
                Rec::CollBegin { op, comm: self.u32() }
            }
            5 => {
                let op = CollOp::from_code(self.u64() as u8).unwrap_or(CollOp::Other);
                let comm = self.u32();
                Rec::CollEnd { op, comm, root: self.opt() }
            }
            6 => Rec::LockRequest { lock: self.u64() },
            7 => Rec::LockAcquire { lock: self.u64() },
            8 => Rec::LockRelease { lock: self.u64() },
            9 => Rec::Spawn { parent: self.u32() },
            _ => {
                let reference = self.u32();
                let offset = unzigzag(self.u64());
                Rec::Offset { reference, offset, error: self.u64() }
            }
        };
        Some(Record::new(index, wall, rec))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// What the first pass learned.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// The input's name, for messages.
    pub name: String,
    /// The final definitions.
    pub defs: Definitions,
    /// The input's feature flags (0 for the text form).
    pub flags: u64,
    /// Events per location.
    pub counts: Vec<u64>,
    /// Per location, its synchronization events in order (empty unless kept).
    pub records: Vec<RecordList>,
    /// Per location, the wall time of every event (empty unless kept).
    pub walls: Vec<Times>,
    /// Per location, its first, last, smallest and largest wall time (`None`: no events).
    pub ranges: Vec<Option<WallRange>>,
    /// How many clock-offset records there are (0 where not kept).
    pub clock_offsets: u64,
}

/// What the first pass learned of a location's wall times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WallRange {
    pub first: i64,
    pub last: i64,
    pub min: i64,
    pub max: i64,
    /// No event is earlier than the one before it.
    pub sorted: bool,
}

impl WallRange {
    fn new(w: i64) -> Self {
        WallRange { first: w, last: w, min: w, max: w, sorted: true }
    }

    #[inline(always)]
    fn push(&mut self, w: i64) {
        self.sorted &= w >= self.last;
        self.last = w;
        self.min = self.min.min(w);
        self.max = self.max.max(w);
    }

    /// This range followed by `o`.
    fn then(self, o: WallRange) -> WallRange {
        WallRange {
            first: self.first,
            last: o.last,
            min: self.min.min(o.min),
            max: self.max.max(o.max),
            sorted: self.sorted && o.sorted && o.first >= self.last,
        }
    }
}

impl Scan {
    pub fn total_events(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// One block's share of the scan, computed in parallel.
#[derive(Default)]
struct Part {
    /// Locations of the block in order of first appearance, with their event counts.
    locs: Vec<(LocId, u64)>,
    /// (slot in `locs`, position among that location's events in the block, wall, record).
    recs: Vec<(u32, u64, i64, Rec)>,
    /// Per slot, the wall times (when asked for).
    walls: Vec<Vec<i64>>,
    /// Per slot, the range of its wall times.
    ranges: Vec<WallRange>,
    slot_of: HashMap<LocId, u32>,
    last: Option<(LocId, u32)>,
    /// Whether the map moved a record.
    moved: bool,
    /// How many of its records are clock offsets.
    clock_offsets: u64,
}

impl Part {
    /// A part with room for `recs` records (the most a block had so far: blocks of a
    /// trace are mostly alike, and growing the vector block after block costs copies
    /// and fresh pages).
    fn with_room(recs: usize) -> Part {
        Part { recs: Vec::with_capacity(recs), ..Part::default() }
    }

    fn push(&mut self, ev: spoor_model::Event, want_walls: bool, map: Option<WallMap>, room: &AtomicUsize) {
        let slot = match self.last {
            Some((l, s)) if l == ev.loc => s,
            _ => {
                let s = match self.slot_of.get(&ev.loc) {
                    Some(&s) => s,
                    None => {
                        self.locs.push((ev.loc, 0));
                        self.ranges.push(WallRange::new(ev.wall));
                        if want_walls {
                            self.walls.push(Vec::new());
                        }
                        let s = (self.locs.len() - 1) as u32;
                        self.slot_of.insert(ev.loc, s);
                        s
                    }
                };
                self.last = Some((ev.loc, s));
                s
            }
        };
        let pos = self.locs[slot as usize].1;
        self.ranges[slot as usize].push(ev.wall);
        self.locs[slot as usize].1 += 1;
        let mut at = |wall: i64| {
            let y = map.map_or(wall, |m| m(ev.loc, wall));
            self.moved |= y != wall;
            y
        };
        if want_walls {
            self.walls[slot as usize].push(at(ev.wall));
        } else if let Some(r) = Rec::of(&ev.kind) {
            let wall = at(ev.wall);
            self.clock_offsets += u64::from(matches!(r, Rec::Offset { .. }));
            if self.recs.len() == self.recs.capacity() {
                room.fetch_max(2 * self.recs.len().max(8), Ordering::Relaxed);
            }
            self.recs.push((slot, pos, wall, r));
        }
    }
}

/// What a scan keeps beside each location's event count and time range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// The synchronization records ([`Scan::records`]).
    Records,
    /// Every event's wall time ([`Scan::walls`], about 2 bytes an event), and no records.
    Walls,
}

/// A correction of the records' times: (location, recorded time) to corrected time.
pub type WallMap<'a> = &'a (dyn Fn(LocId, i64) -> i64 + Sync);

/// Reads `input` once, keeping `keep`.
pub fn scan(input: &Input, keep: Keep) -> Result<Scan> {
    scan_with(input, keep, &spoor_model::Silent)
}

/// [`scan`], telling `feedback` how far it has got (as `reading: events`).
pub fn scan_with(input: &Input, keep: Keep, feedback: &dyn spoor_model::Feedback) -> Result<Scan> {
    scan_inner(input, keep, None, feedback).map(|(s, _)| s)
}

/// [`scan_with`] keeping the records or the wall times each at the time `map` gives
/// it, as they are read (the ranges stay those of the recorded times); and whether it
/// moved any.
pub fn scan_at(
    input: &Input,
    keep: Keep,
    map: WallMap,
    feedback: &dyn spoor_model::Feedback,
) -> Result<(Scan, bool)> {
    scan_inner(input, keep, Some(map), feedback)
}

fn scan_inner(
    input: &Input,
    keep: Keep,
    map: Option<WallMap>,
    feedback: &dyn spoor_model::Feedback,
) -> Result<(Scan, bool)> {
    let walls = keep == Keep::Walls;
    let mut reader = input.reader()?;
    let total = reader.end().map(|e| e.events);
    let mut read = 0u64;
    let room = AtomicUsize::new(0);
    // Blocks are folded in parallel into parts; each part is taken apart on this thread
    // as soon as the reader hands it on, in input order, while later blocks decode, and
    // then freed: only the parts of the few blocks in the reader's ring exist at once,
    // never all of them beside the records gathered from them (twice the records'
    // memory).
    let mut g = Gathered::default();
    reader
        .par_fold_blocks_each(
            |_| Part::with_room(room.load(Ordering::Relaxed)),
            |p: &mut Part, ev| p.push(ev, walls, map, &room),
            |p| {
                read += p.locs.iter().map(|l| l.1).sum::<u64>();
                g.add(p, walls);
                feedback.progress("reading: events", read, total);
                Ok(())
            },
        )
        .map_err(|e| input.rename(e))?;
    let defs = reader.defs().clone();
    let flags = reader.header().map_or(0, |h| h.flags);
    drop(reader);
    let n = defs.locations.len();
    let name = input.name().to_owned();
    if let Some(loc) = g.seen.iter().find(|&&l| l as usize >= n) {
        return Err(Error::input(&name, format!("events of location {loc}, which is not defined")));
    }
    g.counts.resize(n, 0);
    g.records.resize_with(n, RecordList::default);
    g.ranges.resize(n, None);
    if walls {
        g.walls.resize_with(n, Times::default);
    }
    // Exact sizes (the slack of growing was never touched, so it took no memory).
    g.records.par_iter_mut().for_each(|r| r.shrink_to_fit());
    g.walls.par_iter_mut().for_each(|w| w.shrink_to_fit());
    let s = Scan {
        name,
        flags,
        counts: g.counts,
        records: g.records,
        walls: if walls { g.walls } else { Vec::new() },
        ranges: g.ranges,
        clock_offsets: g.clock_offsets,
        defs,
    };
    validate(&s)?;
    Ok((s, g.moved))
}

/// The per-location results of the scan, gathered from the parts in input order.
#[derive(Default)]
struct Gathered {
    counts: Vec<u64>,
    records: Vec<RecordList>,
    walls: Vec<Times>,
    ranges: Vec<Option<WallRange>>,
    /// Per slot of the part at hand, its location and the index of its first event.
    base: Vec<(usize, u64)>,
    /// The locations in the order their first events came.
    seen: Vec<LocId>,
    /// Whether a part's map moved a record.
    moved: bool,
    clock_offsets: u64,
}

impl Gathered {
    /// Adds the next part in input order. Locations grow as they appear (the decoder
    /// checks every location against the definitions; the text form defines them as
    /// they are used).
    fn add(&mut self, part: Part, walls: bool) {
        self.base.clear();
        self.moved |= part.moved;
        self.clock_offsets += part.clock_offsets;
        for (&(loc, count), &r) in part.locs.iter().zip(&part.ranges) {
            let l = loc as usize;
            if l >= self.counts.len() {
                self.counts.resize(l + 1, 0);
                self.records.resize_with(l + 1, RecordList::default);
                self.ranges.resize(l + 1, None);
                if walls {
                    self.walls.resize_with(l + 1, Times::default);
                }
            }
            if self.counts[l] == 0 {
                self.seen.push(loc);
            }
            self.base.push((l, self.counts[l]));
            self.counts[l] += count;
            self.ranges[l] = Some(self.ranges[l].map_or(r, |x| x.then(r)));
        }
        if let [(l, base)] = self.base[..] {
            // One location (every block of a 1.1 trace): its records in order.
            let out = &mut self.records[l];
            for &(_, pos, wall, rec) in &part.recs {
                out.push(Record::new(base + pos, wall, rec));
            }
        } else {
            for &(slot, pos, wall, rec) in &part.recs {
                let (l, base) = self.base[slot as usize];
                self.records[l].push(Record::new(base + pos, wall, rec));
            }
        }
        if walls {
            for (w, &(l, _)) in part.walls.iter().zip(&self.base) {
                for &t in w {
                    self.walls[l].push(t);
                }
            }
        }
    }
}

/// Checks that every location and communicator a record names is defined (locations
/// in parallel; the first problem in location order is the one reported).
fn validate(s: &Scan) -> Result<()> {
    // Matching keeps event indices in 48 bits.
    let limit = crate::matching::MAX_EVENTS_PER_LOCATION;
    if let Some((loc, n)) = s.counts.iter().enumerate().find(|(_, &n)| n > limit) {
        return Err(Error::input(
            &s.name,
            format!(
                "{} has {n} events: at most {limit} a location can be matched",
                s.defs.location_described(loc as LocId)
            ),
        ));
    }
    s.records
        .par_iter()
        .enumerate()
        .map(|(loc, recs)| validate_location(s, loc, recs))
        .find_first(|r| r.is_err())
        .unwrap_or(Ok(()))
}

fn validate_location(s: &Scan, loc: usize, recs: &RecordList) -> Result<()> {
    let locs = s.defs.locations.len();
    let comms = s.defs.comms.len();
    {
        for r in recs {
            let rec = r.rec();
            let (peers, comm) = rec.refs();
            let at = || {
                describe::event(
                    &s.defs,
                    EventRef { loc: loc as LocId, index: r.index },
                    rec.kind_name(),
                    r.wall,
                )
            };
            for (what, peer) in peers.into_iter().flatten() {
                if peer as usize >= locs {
                    return Err(Error::input(
                        &s.name,
                        format!("{}: {what} location {peer}, but {locs} locations are defined", at()),
                    ));
                }
            }
            if let Some(c) = comm {
                if c as usize >= comms {
                    return Err(Error::input(
                        &s.name,
                        format!("{}: names communicator {c}, but {comms} communicators are defined", at()),
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use spoor_format::{text, TraceWriter, WriterOptions};
    use spoor_model::Event;
    use spoor_synth::{Spec, Workload};

    fn binary(events: &[Event], defs: &Definitions, opts: WriterOptions) -> Input {
        let mut w = TraceWriter::new(Vec::new(), defs, opts).unwrap();
        for e in events {
            w.write(e).unwrap();
        }
        Input::from_bytes("t", w.finish().unwrap())
    }

    fn text_form(events: &[Event], defs: &Definitions) -> Input {
        let mut out = Vec::new();
        text::write_header(&mut out).unwrap();
        text::write_definitions(&mut out, defs).unwrap();
        for e in events {
            text::write_event(&mut out, defs, e).unwrap();
        }
        Input::from_bytes("t", out)
    }

    /// Per-location blocks, multi-location blocks in global order (small blocks, so a
    /// block holds several locations and a location many blocks) and the text form
    /// give the scan worked out directly from the events in order.
    #[test]
    fn every_input_form_gives_the_events_records() {
        for workload in Workload::ALL {
            let spec = Spec { procs: 5, steps: 40, ..Spec::new(workload) };
            let mut events = Vec::new();
            spoor_synth::generate(&spec, &mut events).unwrap();
            let defs = spoor_synth::definitions(&spec);
            let n = defs.locations.len();
            let mut counts = vec![0u64; n];
            let mut records = vec![Vec::new(); n];
            let mut walls: Vec<Vec<i64>> = vec![Vec::new(); n];
            let mut ranges: Vec<Option<WallRange>> = vec![None; n];
            for e in &events {
                let l = e.loc as usize;
                if let Some(rec) = Rec::of(&e.kind) {
                    records[l].push(Record::new(counts[l], e.wall, rec));
                }
                counts[l] += 1;
                walls[l].push(e.wall);
                ranges[l] = Some(ranges[l].map_or(WallRange::new(e.wall), |mut r| {
                    r.push(e.wall);
                    r
                }));
            }
            assert!(records.iter().all(|r| !r.is_empty()), "{workload:?}: every location synchronizes");
            let small =
                |global_order| WriterOptions { block_events: 7, global_order, ..WriterOptions::default() };
            let inputs = [
                binary(&events, &defs, WriterOptions::default()),
                binary(&events, &defs, small(false)),
                binary(&events, &defs, small(true)),
                text_form(&events, &defs),
            ];
            for (i, input) in inputs.iter().enumerate() {
                for keep in [Keep::Records, Keep::Walls] {
                    let with_walls = keep == Keep::Walls;
                    let s = scan(input, keep).unwrap();
                    let what = format!("{workload:?}, input {i}, keep {keep:?}");
                    assert_eq!(s.counts, counts, "{what}");
                    let read: Vec<Vec<Record>> = s.records.iter().map(|l| l.iter().collect()).collect();
                    let no_records = vec![Vec::new(); n];
                    assert_eq!(read, if with_walls { no_records } else { records.clone() }, "{what}");
                    let offsets =
                        read.iter().flatten().filter(|r| matches!(r.rec(), Rec::Offset { .. })).count();
                    assert_eq!(s.clock_offsets, offsets as u64, "{what}");
                    assert_eq!(s.ranges, ranges, "{what}");
                    let read: Vec<Vec<i64>> = s.walls.iter().map(|w| w.iter().collect()).collect();
                    assert_eq!(read, if with_walls { walls.clone() } else { Vec::new() }, "{what}");
                }
            }
        }
    }

    /// Every record reads back as it was made, with and without its options, in 48 bytes.
    #[test]
    fn records_read_back_what_they_were_made_of() {
        assert_eq!(std::mem::size_of::<Record>(), 48);
        let (l, c, big) = (7, 3, u64::MAX - 5);
        let mut recs = Vec::new();
        for request in [None, Some(0), Some(big)] {
            recs.push(Rec::Send { to: l, comm: c, tag: u32::MAX, bytes: big, request });
            for from in [None, Some(0), Some(u32::MAX)] {
                for tag in [None, Some(0), Some(u32::MAX)] {
                    recs.push(Rec::RecvPost { from, comm: c, tag, request });
                }
            }
            recs.push(Rec::RecvDone { from: u32::MAX, comm: c, tag: 9, bytes: 0, request });
        }
        for root in [None, Some(0), Some(u32::MAX)] {
            recs.push(Rec::CollEnd { op: CollOp::Bcast, comm: c, root });
        }
        recs.extend([
            Rec::SendDone { request: big },
            Rec::CollBegin { op: CollOp::Allreduce, comm: u32::MAX },
            Rec::LockRequest { lock: big },
            Rec::LockAcquire { lock: 0 },
            Rec::LockRelease { lock: 1 },
            Rec::Spawn { parent: l },
            Rec::Offset { reference: l, offset: i64::MIN, error: big },
        ]);
        for (i, &rec) in recs.iter().enumerate() {
            let r = Record::new(i as u64, -(i as i64), rec);
            assert_eq!((r.index, r.wall, r.rec()), (i as u64, -(i as i64), rec));
        }
        // In a list, each read back after the one before, whatever the jumps between
        // their indices and times (times may go back).
        let walls = [0, i64::MAX, i64::MIN, -1, 1, i64::MIN, 5, i64::MAX];
        let made: Vec<Record> = recs
            .iter()
            .enumerate()
            .map(|(i, &rec)| {
                let index = if i % 3 == 2 { u64::MAX - i as u64 } else { (i as u64) << (i % 40) };
                Record::new(index, walls[i % walls.len()], rec)
            })
            .collect();
        let list: RecordList = made.iter().copied().collect();
        assert_eq!(list.len(), made.len());
        assert_eq!(list.iter().collect::<Vec<_>>(), made);
        assert!(RecordList::default().iter().next().is_none());
    }

    /// A location of more events than matching can index is refused, naming it; one of
    /// exactly that many is not.
    #[test]
    fn a_location_past_the_indexable_events_is_refused() {
        let spec = Spec { procs: 2, ..Spec::new(Workload::Stencil) };
        let limit = crate::matching::MAX_EVENTS_PER_LOCATION;
        let mut s = Scan { name: "t".into(), defs: spoor_synth::definitions(&spec), ..Scan::default() };
        s.records = vec![RecordList::default(); 2];
        s.counts = vec![3, limit];
        assert!(validate(&s).is_ok());
        s.counts = vec![3, limit + 1];
        let e = validate(&s).unwrap_err().to_string();
        assert!(e.contains(&format!("has {} events", limit + 1)) && e.contains("at most"), "{e}");
    }
}
