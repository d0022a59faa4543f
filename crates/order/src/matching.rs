//! Matching under MPI's rules (formats/order.md):
//!
//! * point to point: a message travels on a channel (sender, receiver, communicator,
//!   tag). Sends are numbered on their channel in the sender's order (`send`, `isend`);
//!   receives in the order they were posted (`recv_begin`, or `irecv_request`), under
//!   the actual source and tag their completion (`recv_end`, `irecv_complete`)
//!   records, so wildcard receives fall on the channel they really used. The k-th send
//!   of a channel matches its k-th receive (non-overtaking);
//! * requests: `isend_complete` and `irecv_complete` find their posting by request id
//!   (the latest open request of that id on the location);
//! * collectives: the k-th collective on a communicator at each location is instance
//!   k of that communicator; its members are grouped by rank;
//! * locks: critical sections of one lock (per application) hand over in the order
//!   of their acquisitions' times: each acquire follows the previous holder's release;
//! * spawns: a `process_begin` or `thread_begin` with a parent follows the parent's
//!   last event at or before it (resolved while replaying, see `replay`).

use crate::coded::{Coded, Entry};
use crate::describe;
use crate::fasthash::FxHashMap as HashMap;
use crate::scan::{Rec, Record, RecordList};
use rayon::prelude::*;
use serde::Serialize;
use spoor_model::{AppId, ClockViolations, CollOp, CommId, Definitions, EventRef, LocId};
use std::collections::BTreeMap;

/// A matched message: the send (`send`, `isend`) and the receive's completion
/// (`recv_end`, `irecv_complete`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    pub send: EventRef,
    pub recv: EventRef,
    pub send_wall: i64,
    pub recv_wall: i64,
    pub bytes: u64,
}

/// Who waits for whom in a collective instance (members by rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "shape")]
pub enum Shape {
    /// Every member's end follows every member's begin (barrier, allreduce, alltoall, ...).
    AllToAll,
    /// Every end follows the root's begin (bcast, scatter).
    OneToAll { root: u32 },
    /// The root's end follows every begin (reduce, gather).
    AllToOne { root: u32 },
    /// Rank i's end follows the begins of ranks 0..=i (scan).
    Prefix,
}

/// One member of a collective instance. A `coll_end` without its `coll_begin` has
/// `begin == end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    pub loc: LocId,
    pub begin: EventRef,
    pub end: EventRef,
    pub begin_wall: i64,
    pub end_wall: i64,
}

/// The k-th collective operation on a communicator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    pub comm: CommId,
    pub seq: u64,
    pub op: CollOp,
    pub shape: Shape,
    /// The members that took part, by rank in the communicator.
    pub members: Vec<Member>,
}

impl Instance {
    /// Whether member `m`'s end has to wait for member `j`'s begin (j != m).
    pub fn depends(&self, m: usize, j: usize) -> bool {
        if m == j {
            return false;
        }
        match self.shape {
            Shape::AllToAll => true,
            Shape::OneToAll { root } => j == root as usize,
            Shape::AllToOne { root } => m == root as usize,
            Shape::Prefix => j < m,
        }
    }

    /// Per member, the latest recorded begin its end waits for.
    pub fn awaited_begins(&self) -> Vec<Option<i64>> {
        let ms = &self.members;
        if self.shape == Shape::AllToAll {
            let mut top: [(i64, usize); 2] = [(i64::MIN, usize::MAX); 2];
            for (j, mem) in ms.iter().enumerate() {
                let b = mem.begin_wall;
                if b > top[0].0 {
                    top[1] = top[0];
                    top[0] = (b, j);
                } else if b > top[1].0 {
                    top[1] = (b, j);
                }
            }
            return (0..ms.len())
                .map(|m| {
                    let t = if top[0].1 == m { top[1] } else { top[0] };
                    (t.1 != usize::MAX).then_some(t.0)
                })
                .collect();
        }
        let mut prefix = i64::MIN;
        (0..ms.len())
            .map(|m| match self.shape {
                Shape::Prefix => {
                    let need = (m > 0).then_some(prefix);
                    prefix = prefix.max(ms[m].begin_wall);
                    need
                }
                Shape::OneToAll { root } => (m != root as usize).then(|| ms[root as usize].begin_wall),
                Shape::AllToOne { root } if m != root as usize => None,
                _ => (0..ms.len()).filter(|&j| self.depends(m, j)).map(|j| ms[j].begin_wall).max(),
            })
            .collect()
    }
}

/// A lock handed from one critical section to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handoff {
    pub release: EventRef,
    pub acquire: EventRef,
    pub release_wall: i64,
    pub acquire_wall: i64,
}

/// A location started by another (`parent`), at `wall`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spawn {
    pub child: EventRef,
    pub parent: LocId,
    pub wall: i64,
}

/// Event indices kept in 48 bits by [`PartnerAt`] and [`PointAt`]: a location of more
/// events (2.8 * 10^14) is refused by the scan.
pub(crate) const MAX_EVENTS_PER_LOCATION: u64 = 1 << 48;

/// A fixed partner as [`Sync::partners`] keeps it: an event's index and its partner, in
/// 16 bytes rather than 24 (a trace holds one for nearly every message event, and
/// matching keeps them all). Both indices are below [`MAX_EVENTS_PER_LOCATION`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PartnerAt([u32; 4]);

impl PartnerAt {
    pub fn new(index: u64, partner: EventRef) -> PartnerAt {
        debug_assert!(index < MAX_EVENTS_PER_LOCATION && partner.index < MAX_EVENTS_PER_LOCATION);
        let high = |i: u64| (i >> 32) as u32 & 0xffff;
        PartnerAt([index as u32, high(index) | high(partner.index) << 16, partner.loc, partner.index as u32])
    }
}

/// A [`Point`] as [`Sync::points`] keeps it: an event's index (below
/// [`MAX_EVENTS_PER_LOCATION`]) and its point, in 20 bytes rather than 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PointAt([u32; 5]);

impl PointAt {
    pub fn new(index: u64, p: Point) -> PointAt {
        debug_assert!(index < MAX_EVENTS_PER_LOCATION);
        let (tag, a, b): (u32, u32, u64) = match p {
            Point::Source => (0, 0, 0),
            Point::Recv { from } => (1, from.loc, from.index),
            Point::Acquire { from } => (2, from.loc, from.index),
            Point::CollBegin { inst, member } => (3, inst, u64::from(member)),
            Point::CollEnd { inst, member, also_begin: false } => (4, inst, u64::from(member)),
            Point::CollEnd { inst, member, also_begin: true } => (5, inst, u64::from(member)),
            Point::Spawn { parent } => (6, parent, 0),
        };
        PointAt([index as u32, (index >> 32) as u32 & 0xffff | tag << 16, a, b as u32, (b >> 32) as u32])
    }
}

/// An entry as matching builds it: its event's index, and what it holds there.
trait Built {
    type Value: Entry;
    fn index(&self) -> u64;
    fn value(&self) -> Self::Value;
}

/// The 48-bit event index both packed forms start with: a word, and 16 bits of the next.
#[inline]
fn index48(words: &[u32]) -> u64 {
    u64::from(words[0]) | u64::from(words[1] & 0xffff) << 32
}

impl Built for PartnerAt {
    type Value = EventRef;

    #[inline]
    fn index(&self) -> u64 {
        index48(&self.0)
    }

    #[inline]
    fn value(&self) -> EventRef {
        EventRef { loc: self.0[2], index: u64::from(self.0[3]) | u64::from(self.0[1] >> 16) << 32 }
    }
}

impl Built for PointAt {
    type Value = Point;

    #[inline]
    fn index(&self) -> u64 {
        index48(&self.0)
    }

    #[inline]
    fn value(&self) -> Point {
        let [_, w, a, lo, hi] = self.0;
        let b = u64::from(lo) | u64::from(hi) << 32;
        match w >> 16 {
            1 => Point::Recv { from: EventRef { loc: a, index: b } },
            2 => Point::Acquire { from: EventRef { loc: a, index: b } },
            3 => Point::CollBegin { inst: a, member: lo },
            4 => Point::CollEnd { inst: a, member: lo, also_begin: false },
            5 => Point::CollEnd { inst: a, member: lo, also_begin: true },
            6 => Point::Spawn { parent: a },
            _ => Point::Source,
        }
    }
}

/// Each location's entries sorted by index and coded, in parallel (each on its own: the
/// result does not depend on threads), its vector let go as soon as it is; after the
/// entries `settled` already coded for it (which come first among equal indices, as they
/// were made first).
fn coded<B: Built + Send>(settled: Vec<Coded<B::Value>>, lists: Vec<Vec<B>>) -> Vec<Coded<B::Value>>
where
    B::Value: Send,
    Coded<B::Value>: Send,
{
    settled.into_par_iter().zip(lists).map(|(early, v)| merged(early, v)).collect()
}

/// `early` (coded) and `late` (in the order made) as one list, sorted by index; among
/// equal indices the early entries first.
fn merged<B: Built>(early: Coded<B::Value>, mut late: Vec<B>) -> Coded<B::Value> {
    late.sort_by_key(B::index);
    let later = late.iter().map(|e| (e.index(), e.value()));
    if early.is_empty() {
        return Coded::from_sorted(later);
    }
    if late.is_empty() {
        return early;
    }
    let (mut early, mut later) = (early.iter().peekable(), later.peekable());
    Coded::from_sorted(std::iter::from_fn(|| match (early.peek(), later.peek()) {
        (Some(a), Some(b)) if b.0 < a.0 => later.next(),
        (Some(_), _) => early.next(),
        (None, _) => later.next(),
    }))
}

/// The part an event plays in happened-before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// Others wait for it: a matched send, a release handed over.
    Source,
    /// The completion of a receive; waits for the send `from`.
    Recv {
        from: EventRef,
    },
    /// A lock acquisition; waits for the release `from`.
    Acquire {
        from: EventRef,
    },
    CollBegin {
        inst: u32,
        member: u32,
    },
    /// `also_begin` when the member has no `coll_begin` of its own.
    CollEnd {
        inst: u32,
        member: u32,
        also_begin: bool,
    },
    /// Waits until `parent` has nothing left at or before its time.
    Spawn {
        parent: LocId,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    UnmatchedSend,
    UnmatchedRecv,
    SizeMismatch,
    /// Members missing, operations or roots that disagree.
    Collective,
    /// A release without an acquire, a lock held twice at once.
    Lock,
    /// A request completed but never posted, or posted but never completed (sends).
    Request,
    /// A receive whose posting and completion disagree on source, tag or communicator.
    Inconsistent,
    /// A cycle in happened-before.
    Cycle,
}

impl ProblemKind {
    /// Whether `spoor-order --check` fails for it (requests are warnings).
    pub fn is_error(self) -> bool {
        !matches!(self, ProblemKind::Request)
    }

    pub fn label(self) -> &'static str {
        match self {
            ProblemKind::UnmatchedSend => "unmatched send",
            ProblemKind::UnmatchedRecv => "unmatched receive",
            ProblemKind::SizeMismatch => "size mismatch",
            ProblemKind::Collective => "collective",
            ProblemKind::Lock => "lock",
            ProblemKind::Request => "request",
            ProblemKind::Inconsistent => "inconsistent receive",
            ProblemKind::Cycle => "cycle",
        }
    }
}

/// Something wrong with the trace, at an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub kind: ProblemKind,
    pub at: EventRef,
    pub kind_name: &'static str,
    pub wall: i64,
    /// The other event concerned (the send of a size mismatch, ...).
    pub other: Option<EventRef>,
    pub detail: String,
}

impl Problem {
    /// One line naming the location, event and time.
    pub fn describe(&self, defs: &Definitions) -> String {
        format!(
            "{}: {}: {}",
            self.kind.label(),
            describe::event(defs, self.at, self.kind_name, self.wall),
            self.detail
        )
    }

    pub fn to_json(&self, defs: &Definitions) -> serde_json::Value {
        let name = |l: LocId| defs.location_own_name(l).unwrap_or("").to_owned();
        serde_json::json!({
            "kind": self.kind,
            "location": self.at.loc,
            "location_name": name(self.at.loc),
            "index": self.at.index,
            "event": self.kind_name,
            "wall": self.wall,
            "other": self.other.map(|o| serde_json::json!({"location": o.loc, "index": o.index})),
            "detail": self.detail,
        })
    }
}

/// Everything matching found: the synchronization of the trace.
#[derive(Clone, Debug, Default)]
pub struct Sync {
    /// By channel (sender, receiver, communicator, tag), each channel's in order; the
    /// channels in the order they were matched (by the later of their two locations,
    /// then by key). Not sorted by send, which would cost a sort of every message and
    /// which no user needs (empty from [`match_events_uncollected`] and
    /// [`match_events_each`]).
    pub messages: Vec<Message>,
    /// The number of matched messages.
    pub message_count: usize,
    /// Matched messages received (by their recorded times) before they were sent.
    pub late_messages: u64,
    pub instances: Vec<Instance>,
    pub handoffs: Vec<Handoff>,
    pub spawns: Vec<Spawn>,
    /// Per location, the fixed partners by event index (collective ends and spawns get
    /// theirs while replaying).
    pub partners: Vec<Coded<EventRef>>,
    /// Per location, the points by event index.
    pub points: Vec<Coded<Point>>,
    /// Sorted by location, index and kind.
    pub problems: Vec<Problem>,
}

impl Sync {
    /// Every matched message as (send, receive completion), read from the receives'
    /// points ([`Point::Recv`]): by receiving location and event, not in the order of
    /// [`Sync::messages`]; none where the points were not kept.
    pub fn messages_by_points(&self) -> impl Iterator<Item = (EventRef, EventRef)> + '_ {
        self.points.iter().enumerate().flat_map(|(l, points)| {
            points.iter().filter_map(move |(index, p)| match p {
                Point::Recv { from } => Some((from, EventRef { loc: l as LocId, index })),
                _ => None,
            })
        })
    }

    pub fn error_count(&self) -> usize {
        self.problems.iter().filter(|p| p.kind.is_error()).count()
    }

    /// Clock-condition violations of the recorded times with no minimum latency
    /// (formats/order.md): counted whether or not the messages were collected.
    pub fn violations(&self) -> ClockViolations {
        let mut v = ClockViolations { messages: self.late_messages, ..ClockViolations::default() };
        for inst in &self.instances {
            for (m, need) in inst.awaited_begins().into_iter().enumerate() {
                if need.is_some_and(|need| inst.members[m].end_wall < need) {
                    v.collectives += 1;
                }
            }
        }
        v.locks = self.handoffs.iter().filter(|h| h.acquire_wall < h.release_wall).count() as u64;
        v
    }
}

#[derive(Clone, Copy)]
struct Ev {
    at: EventRef,
    wall: i64,
}

/// A message event filed under its channel: what matching needs of it, in 32 bytes
/// (matching holds one for every send and one for every receive).
struct Filed {
    index: u64,
    wall: i64,
    bytes: u64,
    loc: LocId,
    /// Of a non-blocking call (`isend`, `irecv_complete`).
    nonblocking: bool,
}

impl Filed {
    fn new(ev: Ev, bytes: u64, nonblocking: bool) -> Filed {
        Filed { index: ev.at.index, wall: ev.wall, bytes, loc: ev.at.loc, nonblocking }
    }

    fn ev(&self) -> Ev {
        Ev { at: EventRef { loc: self.loc, index: self.index }, wall: self.wall }
    }
}

/// A send filed under its channel.
struct SendItem(Filed);

impl SendItem {
    fn kind(&self) -> &'static str {
        ["send", "isend"][usize::from(self.0.nonblocking)]
    }
}

/// A receive's completion filed under its channel, with its posting's place.
struct RecvItem {
    /// Position in the receiver's posting order.
    key: u64,
    filed: Filed,
}

impl RecvItem {
    fn kind(&self) -> &'static str {
        ["recv_end", "irecv_complete"][usize::from(self.filed.nonblocking)]
    }
}

/// (sender, receiver, communicator, tag).
type ChannelKey = (LocId, LocId, CommId, u32);

struct Posted {
    ev: Ev,
    kind: &'static str,
    from: Option<LocId>,
    comm: CommId,
    tag: Option<u32>,
}

struct Section {
    acquire: Ev,
    release: Option<Ev>,
}

struct CollPart {
    loc: LocId,
    begin: Ev,
    end: Ev,
    op: CollOp,
    root: Option<LocId>,
}

struct Builder<'d> {
    defs: &'d Definitions,
    want_partners: bool,
    want_points: bool,
    partners: Vec<Vec<PartnerAt>>,
    points: Vec<Vec<PointAt>>,
    /// Per location, its partners and points coded once its messages are all matched
    /// ([`Builder::settle`]); those added later (collectives, locks) join them at the end.
    settled_partners: Vec<Coded<EventRef>>,
    settled_points: Vec<Coded<Point>>,
    problems: Vec<Problem>,
}

impl Builder<'_> {
    fn new(defs: &Definitions, n: usize, want_partners: bool, want_points: bool) -> Builder<'_> {
        Builder {
            defs,
            want_partners,
            want_points,
            partners: vec![Vec::new(); n],
            points: vec![Vec::new(); n],
            settled_partners: vec![Coded::default(); n],
            settled_points: vec![Coded::default(); n],
            problems: Vec::new(),
        }
    }

    /// The messages of `locations` are all matched: their partners and points so far
    /// are sorted and coded (a few bytes each where they took 16 and 20; each location on
    /// its own, in parallel), and what is added after (their collectives' points, their
    /// lock hand-offs) is little.
    fn settle(&mut self, locations: &[usize]) {
        let taken: Vec<_> = locations
            .iter()
            .map(|&l| {
                let partners =
                    (std::mem::take(&mut self.settled_partners[l]), std::mem::take(&mut self.partners[l]));
                let points =
                    (std::mem::take(&mut self.settled_points[l]), std::mem::take(&mut self.points[l]));
                (l, partners, points)
            })
            .collect();
        let settled: Vec<_> = taken
            .into_par_iter()
            .map(|(l, (early, v), (early_points, w))| (l, merged(early, v), merged(early_points, w)))
            .collect();
        for (l, partners, points) in settled {
            self.settled_partners[l] = partners;
            self.settled_points[l] = points;
        }
    }

    fn problem(
        &mut self,
        kind: ProblemKind,
        ev: Ev,
        kind_name: &'static str,
        other: Option<EventRef>,
        detail: String,
    ) {
        self.problems.push(Problem { kind, at: ev.at, kind_name, wall: ev.wall, other, detail });
    }

    fn partner(&mut self, of: EventRef, is: EventRef) {
        if !self.want_partners {
            return;
        }
        self.partners[of.loc as usize].push(PartnerAt::new(of.index, is));
    }

    fn point(&mut self, at: EventRef, p: Point) {
        if !self.want_points {
            return;
        }
        self.points[at.loc as usize].push(PointAt::new(at.index, p));
    }

    fn loc_name(&self, l: LocId) -> String {
        self.defs.location_described(l)
    }
}

/// What one location's records give on their own: its requests, postings, critical
/// sections and collective parts, its own partners and points, its problems, and its
/// sends and receives by channel (sorted: sends by channel in order, receives by
/// channel and posting).
struct LocPass<'d> {
    defs: &'d Definitions,
    loc: LocId,
    want_partners: bool,
    want_points: bool,
    partners: Vec<PartnerAt>,
    points: Vec<PointAt>,
    problems: Vec<Problem>,
    sends: Vec<(ChannelKey, SendItem)>,
    recvs: Vec<(ChannelKey, RecvItem)>,
    /// Once sorted: the items without their keys, and each channel's (key, first, end).
    send_items: Vec<SendItem>,
    recv_items: Vec<RecvItem>,
    send_runs: Vec<(ChannelKey, usize, usize)>,
    recv_runs: Vec<(ChannelKey, usize, usize)>,
    colls: Vec<((CommId, u64), CollPart)>,
    sections: Vec<((AppId, u64), Section)>,
    spawns: Vec<Spawn>,
}

impl LocPass<'_> {
    fn problem(
        &mut self,
        kind: ProblemKind,
        ev: Ev,
        kind_name: &'static str,
        other: Option<EventRef>,
        detail: String,
    ) {
        self.problems.push(Problem { kind, at: ev.at, kind_name, wall: ev.wall, other, detail });
    }

    /// A partner of one of this location's events.
    fn partner(&mut self, of: EventRef, is: EventRef) {
        debug_assert_eq!(of.loc, self.loc);
        if self.want_partners {
            self.partners.push(PartnerAt::new(of.index, is));
        }
    }

    /// A point of one of this location's events.
    fn point(&mut self, at: EventRef, p: Point) {
        debug_assert_eq!(at.loc, self.loc);
        if self.want_points {
            self.points.push(PointAt::new(at.index, p));
        }
    }

    fn loc_name(&self, l: LocId) -> String {
        self.defs.location_described(l)
    }
}

/// What a location has open during its pass: requests, a blocking receive, a
/// collective begun, the locks it holds or asked for, and its collectives so far.
#[derive(Default)]
struct InFlight {
    isends: HashMap<u64, Ev>,
    irecvs: HashMap<u64, Posted>,
    recv: Option<Posted>,
    coll: Option<(Ev, CollOp, CommId)>,
    coll_seq: HashMap<CommId, u64>,
    held: Vec<(u64, Ev)>,
    requested: HashMap<u64, Ev>,
}

/// The first pass of matching over the records of location `loc`.
fn location_pass<'d>(
    defs: &'d Definitions,
    loc: LocId,
    recs: &RecordList,
    want_partners: bool,
    want_points: bool,
) -> LocPass<'d> {
    let mut b = LocPass {
        defs,
        loc,
        want_partners,
        want_points,
        partners: Vec::new(),
        points: Vec::new(),
        problems: Vec::new(),
        sends: Vec::new(),
        recvs: Vec::new(),
        send_items: Vec::new(),
        recv_items: Vec::new(),
        send_runs: Vec::new(),
        recv_runs: Vec::new(),
        colls: Vec::new(),
        sections: Vec::new(),
        spawns: Vec::new(),
    };
    let mut open = InFlight::default();
    for r in recs {
        b.record(&mut open, &r);
    }
    b.finish(open);
    b
}

impl LocPass<'_> {
    /// Takes one record of the location.
    fn record(&mut self, open: &mut InFlight, r: &Record) {
        let (defs, loc) = (self.defs, self.loc);
        let b = self;
        let ev = Ev { at: EventRef { loc, index: r.index }, wall: r.wall };
        let rec = r.rec();
        match rec {
            Rec::Send { to, comm, tag, bytes, request } => {
                b.send(open, ev, (loc, to, comm, tag), bytes, request)
            }
            Rec::SendDone { request } => match open.isends.remove(&request) {
                Some(isend) => b.partner(ev.at, isend.at),
                None => b.problem(
                    ProblemKind::Request,
                    ev,
                    "isend_complete",
                    None,
                    format!("completes send request {request}, which this location did not post"),
                ),
            },
            Rec::RecvPost { from, comm, tag, request } => {
                let p = Posted { ev, kind: rec.kind_name(), from, comm, tag };
                let old = match request {
                    None => open.recv.replace(p),
                    Some(q) => open.irecvs.insert(q, p),
                };
                if let Some(old) = old {
                    b.problem(
                        ProblemKind::UnmatchedRecv,
                        old.ev,
                        old.kind,
                        None,
                        "a receive posted but never completed".into(),
                    );
                }
            }
            Rec::RecvDone { from, comm, tag, bytes, request } => {
                b.recv_done(open, ev, r.index, rec, (from, loc, comm, tag), bytes, request)
            }
            Rec::CollBegin { op, comm } => {
                if let Some((old, oop, _)) = open.coll.replace((ev, op, comm)) {
                    b.problem(
                        ProblemKind::Collective,
                        old,
                        "coll_begin",
                        None,
                        format!("{} begins but never ends", oop.name()),
                    );
                }
            }
            Rec::CollEnd { op, comm, root } => b.coll_end(open, ev, op, comm, root),
            Rec::LockRequest { lock } => {
                open.requested.insert(lock, ev);
            }
            Rec::LockAcquire { lock } => {
                if let Some(req) = open.requested.remove(&lock) {
                    b.partner(req.at, ev.at);
                }
                open.held.push((lock, ev));
            }
            Rec::LockRelease { lock } => match open.held.iter().rposition(|&(k, _)| k == lock) {
                Some(i) => {
                    let (_, acq) = open.held.remove(i);
                    b.sections.push(((app_of(defs, loc), lock), Section { acquire: acq, release: Some(ev) }));
                }
                None => b.problem(
                    ProblemKind::Lock,
                    ev,
                    "lock_release",
                    None,
                    format!("releases lock {lock}, which this location does not hold"),
                ),
            },
            Rec::Spawn { parent } => {
                if parent != loc {
                    b.spawns.push(Spawn { child: ev.at, parent, wall: ev.wall });
                    b.point(ev.at, Point::Spawn { parent });
                }
            }
            Rec::Offset { .. } => {}
        }
    }

    fn send(&mut self, open: &mut InFlight, ev: Ev, key: ChannelKey, bytes: u64, request: Option<u64>) {
        let b = self;
        b.sends.push((key, SendItem(Filed::new(ev, bytes, request.is_some()))));
        if let Some(q) = request {
            if let Some(old) = open.isends.insert(q, ev) {
                b.problem(
                    ProblemKind::Request,
                    old,
                    "isend",
                    Some(ev.at),
                    format!("request {q} is posted again before it completed"),
                );
            }
        }
    }

    /// A receive completed: joined to its posting, checked against it, and filed under
    /// its channel with the posting's index as its key (receives match in posting order).
    #[allow(clippy::too_many_arguments)]
    fn recv_done(
        &mut self,
        open: &mut InFlight,
        ev: Ev,
        index: u64,
        rec: Rec,
        key: ChannelKey,
        bytes: u64,
        request: Option<u64>,
    ) {
        let defs = self.defs;
        let b = self;
        let (from, _, comm, tag) = key;
        let posted = match request {
            None => open.recv.take(),
            Some(q) => open.irecvs.remove(&q),
        };
        let order = match &posted {
            Some(p) => {
                b.partner(p.ev.at, ev.at);
                let bad_from = p.from.is_some_and(|f| f != from);
                let bad_tag = p.tag.is_some_and(|t| t != tag);
                if bad_from || bad_tag || p.comm != comm {
                    b.problem(
                        ProblemKind::Inconsistent,
                        ev,
                        rec.kind_name(),
                        Some(p.ev.at),
                        format!(
                            "completes from {} tag {tag} on {}, but was posted for {} tag {} on {}",
                            b.loc_name(from),
                            describe::comm(defs, comm),
                            p.from.map_or("any source".into(), |f| b.loc_name(f)),
                            tag_text(p.tag),
                            describe::comm(defs, p.comm),
                        ),
                    );
                }
                p.ev.at.index
            }
            None => index,
        };
        b.recvs.push((key, RecvItem { key: order, filed: Filed::new(ev, bytes, request.is_some()) }));
    }

    fn coll_end(&mut self, open: &mut InFlight, ev: Ev, op: CollOp, comm: CommId, root: Option<LocId>) {
        let (defs, loc) = (self.defs, self.loc);
        let b = self;
        let begin = match open.coll.take() {
            Some((bev, bop, bcomm)) if bcomm == comm && bop == op => bev,
            Some((bev, bop, bcomm)) => {
                b.problem(
                    ProblemKind::Collective,
                    ev,
                    "coll_end",
                    Some(bev.at),
                    format!(
                        "{} on {} ends, but {} on {} began",
                        op.name(),
                        describe::comm(defs, comm),
                        bop.name(),
                        describe::comm(defs, bcomm)
                    ),
                );
                ev
            }
            None => ev,
        };
        let seq = open.coll_seq.entry(comm).or_insert(0);
        b.colls.push(((comm, *seq), CollPart { loc, begin, end: ev, op, root }));
        *seq += 1;
    }

    /// What is still open at the location's end is reported; its channels are sorted.
    fn finish(&mut self, open: InFlight) {
        let (defs, loc) = (self.defs, self.loc);
        let b = self;
        let InFlight {
            isends: open_isend,
            irecvs: open_irecv,
            recv: pending_recv,
            coll: pending_coll,
            held,
            ..
        } = open;
        for (q, ev) in open_isend {
            b.problem(ProblemKind::Request, ev, "isend", None, format!("send request {q} never completes"));
        }
        for p in open_irecv.into_values().chain(pending_recv) {
            b.problem(
                ProblemKind::UnmatchedRecv,
                p.ev,
                p.kind,
                None,
                format!(
                    "a receive from {} tag {} on {} is posted but never completes",
                    p.from.map_or("any source".into(), |f| b.loc_name(f)),
                    tag_text(p.tag),
                    describe::comm(defs, p.comm)
                ),
            );
        }
        if let Some((ev, op, _)) = pending_coll {
            b.problem(
                ProblemKind::Collective,
                ev,
                "coll_begin",
                None,
                format!("{} begins but never ends", op.name()),
            );
        }
        for (lock, acq) in held {
            b.sections.push(((app_of(defs, loc), lock), Section { acquire: acq, release: None }));
        }
        // Channels in key order; a channel's sends in order (as pushed), its receives in
        // posting order (usually already theirs: keys are unique, so unstable is exact).
        (b.send_items, b.send_runs) = by_channel(std::mem::take(&mut b.sends), |_| {});
        (b.recv_items, b.recv_runs) = by_channel(std::mem::take(&mut b.recvs), |rs| {
            if !rs.is_sorted_by_key(|r| (r.key, r.filed.index)) {
                rs.sort_unstable_by_key(|r| (r.key, r.filed.index));
            }
        });
    }
}

/// `items` grouped by channel, channels in key order, each channel's items in the order
/// given and then put in order by `order`; with each channel's (key, first, end). A
/// location talks on a few channels, so this counts instead of sorting every item.
fn by_channel<T>(
    items: Vec<(ChannelKey, T)>,
    order: impl Fn(&mut [T]),
) -> (Vec<T>, Vec<(ChannelKey, usize, usize)>) {
    let mut slot_of: HashMap<ChannelKey, usize> = HashMap::default();
    let mut groups: Vec<(ChannelKey, Vec<T>)> = Vec::new();
    let mut last: Option<(ChannelKey, usize)> = None;
    for (key, item) in items {
        let slot = match last {
            Some((k, s)) if k == key => s,
            _ => {
                let s = *slot_of.entry(key).or_insert_with(|| {
                    groups.push((key, Vec::new()));
                    groups.len() - 1
                });
                last = Some((key, s));
                s
            }
        };
        groups[slot].1.push(item);
    }
    groups.sort_unstable_by_key(|g| g.0);
    let total = groups.iter().map(|g| g.1.len()).sum();
    let mut out = Vec::with_capacity(total);
    let mut spans = Vec::with_capacity(groups.len());
    for (key, mut group) in groups {
        order(&mut group);
        spans.push((key, out.len(), out.len() + group.len()));
        out.append(&mut group);
    }
    (out, spans)
}

fn app_of(defs: &Definitions, loc: LocId) -> AppId {
    defs.process_of(loc).map_or(u32::MAX, |p| p.app)
}

fn shape_of(op: CollOp, root: Option<u32>) -> Shape {
    match (op, root) {
        (CollOp::Bcast | CollOp::Scatter | CollOp::Scatterv, Some(r)) => Shape::OneToAll { root: r },
        (CollOp::Reduce | CollOp::Gather | CollOp::Gatherv, Some(r)) => Shape::AllToOne { root: r },
        (CollOp::Scan, _) => Shape::Prefix,
        _ => Shape::AllToAll,
    }
}

fn needs_root(op: CollOp) -> bool {
    matches!(
        op,
        CollOp::Bcast
            | CollOp::Scatter
            | CollOp::Scatterv
            | CollOp::Reduce
            | CollOp::Gather
            | CollOp::Gatherv
    )
}

fn tag_text(t: Option<u32>) -> String {
    t.map_or("any".into(), |t| t.to_string())
}

/// Matches every synchronization event of a trace. `records[loc]` are the location's
/// records in order (see [`crate::scan`]); every id in them must be defined.
pub fn match_events(defs: &Definitions, records: &[RecordList]) -> Sync {
    match_events_with(defs, records, true)
}

/// [`match_events`], leaving [`Sync::partners`] empty unless `partners` (spoor-align
/// does not need them, and they take 24 bytes a synchronization event).
pub fn match_events_with(defs: &Definitions, records: &[RecordList], partners: bool) -> Sync {
    match_events_for(defs, records, partners, true)
}

/// [`match_events_with`], leaving [`Sync::points`] empty too unless `points` (what a
/// replay needs; spoor-align's proof that its clocks change nothing does not).
pub fn match_events_for(defs: &Definitions, records: &[RecordList], partners: bool, points: bool) -> Sync {
    match_all_collected(defs, Records::Borrowed(records), partners, points)
}

/// [`match_events_for`], taking the records and freeing them as soon as they are read
/// (spoor-align's proof that its clocks change nothing needs nothing else of them).
pub fn match_events_owned(
    defs: &Definitions,
    records: Vec<RecordList>,
    partners: bool,
    points: bool,
) -> Sync {
    match_all_collected(defs, Records::Owned(records), partners, points)
}

/// [`match_events_with`] without partners and without collecting [`Sync::messages`]:
/// each message is in the points ([`Sync::messages_by_points`]), where it would take 56
/// bytes more, and is given to `each` as it is matched (what spoor-align's replay of the
/// clocks reads). Takes the records and frees them as soon as they are read.
pub fn match_events_points(
    defs: &Definitions,
    records: Vec<RecordList>,
    mut each: impl FnMut(Message),
) -> Sync {
    match_all(defs, Records::Owned(records), false, true, &mut each)
}

/// [`match_events_owned`] without partners or points, giving each message to `each` as
/// it is matched rather than collecting them (spoor-align's proof that its clocks change
/// nothing reads each once; [`Sync::messages`] is left empty).
pub fn match_events_each(
    defs: &Definitions,
    records: Vec<RecordList>,
    mut each: impl FnMut(Message),
) -> Sync {
    match_all(defs, Records::Owned(records), false, false, &mut each)
}

/// [`match_events`] without collecting [`Sync::messages`] (only their number), taking
/// the records and freeing them as soon as they are used: what spoor-order needs.
pub fn match_events_uncollected(defs: &Definitions, records: Vec<RecordList>) -> Sync {
    match_events_uncollected_each(defs, records, |_| {})
}

/// [`match_events_uncollected`], giving each message to `each` as it is matched (spoor-order
/// `--align`: the alignment reads the messages, the replay the partners and points).
pub fn match_events_uncollected_each(
    defs: &Definitions,
    records: Vec<RecordList>,
    mut each: impl FnMut(Message),
) -> Sync {
    match_all(defs, Records::Owned(records), true, true, &mut each)
}

/// The records matching reads: borrowed, or owned and freed once read.
enum Records<'a> {
    Borrowed(&'a [RecordList]),
    Owned(Vec<RecordList>),
}

/// Spans of one channel's items in [`Channels::sends_of`] and `recvs_of`: (location,
/// first, end).
type Span = Option<(usize, usize, usize)>;

/// What the per-location passes found, merged in location order.
struct Gathered {
    coll: BTreeMap<(CommId, u64), Vec<CollPart>>,
    locks: BTreeMap<(AppId, u64), Vec<Section>>,
    spawns: Vec<Spawn>,
}

/// Matched point-to-point messages: how many, and how many were received (by their
/// recorded times) before they were sent.
#[derive(Default)]
struct PointToPoint {
    count: usize,
    late: u64,
}

/// The sends and receives filed by channel and not matched yet. A channel is matched as
/// soon as the records of its sender and of its receiver are both gathered, and a
/// location's filed items are let go once its last channel is: what is held is the
/// messages between locations gathered and locations not yet (a few neighbours' for
/// most programs), not every message of the trace.
struct Channels {
    sends_of: Vec<Vec<SendItem>>,
    recvs_of: Vec<Vec<RecvItem>>,
    /// Channels filed and not matched: their sends' and receives' spans.
    waiting: HashMap<ChannelKey, (Span, Span)>,
    /// Per location, the channels that can be matched once it is gathered (it is the
    /// later of their two ends); those naming a location past them all are matched last.
    ready_with: Vec<Vec<ChannelKey>>,
    beyond: Vec<ChannelKey>,
    /// Per location, its channels not matched yet.
    left: Vec<u32>,
    /// Bytes of filed items let go since memory was last given back.
    freed: usize,
}

impl Channels {
    fn new(n: usize) -> Channels {
        Channels {
            sends_of: Vec::with_capacity(n),
            recvs_of: Vec::with_capacity(n),
            waiting: HashMap::default(),
            ready_with: vec![Vec::new(); n],
            beyond: Vec::new(),
            left: vec![0; n],
            freed: 0,
        }
    }

    /// Files location `l`'s runs of sends and receives (it is the next location).
    fn file(&mut self, l: usize, pass: &mut LocPass) {
        debug_assert_eq!(self.sends_of.len(), l);
        let runs =
            pass.send_runs.drain(..).map(|r| (r, true)).chain(pass.recv_runs.drain(..).map(|r| (r, false)));
        for ((key, a, z), send) in runs {
            let entry = self.waiting.entry(key).or_insert_with(|| {
                match self.ready_with.get_mut(key.0.max(key.1) as usize) {
                    Some(v) => v.push(key),
                    None => self.beyond.push(key),
                }
                (None, None)
            });
            if send {
                entry.0 = Some((l, a, z));
            } else {
                entry.1 = Some((l, a, z));
            }
            self.left[l] += 1;
        }
        self.sends_of.push(std::mem::take(&mut pass.send_items));
        self.recvs_of.push(std::mem::take(&mut pass.recv_items));
    }

    /// Matches the channels whose later end is among `locations` (just gathered, with
    /// every location before them), in key order.
    fn match_ready(
        &mut self,
        b: &mut Builder,
        locations: std::ops::Range<usize>,
        p2p: &mut PointToPoint,
        each: &mut dyn FnMut(Message),
    ) {
        let mut keys: Vec<ChannelKey> =
            self.ready_with[locations].iter_mut().flat_map(std::mem::take).collect();
        self.match_keys(b, &mut keys, p2p, each);
    }

    /// Matches the channels that name a location past every location (after the last).
    fn match_beyond(&mut self, b: &mut Builder, p2p: &mut PointToPoint, each: &mut dyn FnMut(Message)) {
        let mut keys = std::mem::take(&mut self.beyond);
        self.match_keys(b, &mut keys, p2p, each);
    }

    fn match_keys(
        &mut self,
        b: &mut Builder,
        keys: &mut [ChannelKey],
        p2p: &mut PointToPoint,
        each: &mut dyn FnMut(Message),
    ) {
        const RETURN_BYTES: usize = 64 << 20;
        keys.sort_unstable();
        // The locations whose last channel is matched here.
        let mut done = Vec::new();
        for &key in keys.iter() {
            let Some((ss, rs)) = self.waiting.remove(&key) else { continue };
            let sends = ss.map_or(&[][..], |(l, a, z)| &self.sends_of[l][a..z]);
            let recvs = rs.map_or(&[][..], |(l, a, z)| &self.recvs_of[l][a..z]);
            match_channel(b, key, sends, recvs, p2p, each);
            for (l, _, _) in [ss, rs].into_iter().flatten() {
                self.left[l] -= 1;
                if self.left[l] == 0 {
                    self.freed += std::mem::take(&mut self.sends_of[l]).capacity()
                        * std::mem::size_of::<SendItem>()
                        + std::mem::take(&mut self.recvs_of[l]).capacity() * std::mem::size_of::<RecvItem>();
                    done.push(l);
                }
            }
            if self.freed >= RETURN_BYTES {
                spoor_format::mem::return_freed_memory();
                self.freed = 0;
            }
        }
        b.settle(&done);
    }
}

fn match_all(
    defs: &Definitions,
    records: Records,
    partners: bool,
    points: bool,
    each: &mut dyn FnMut(Message),
) -> Sync {
    let n = match &records {
        Records::Borrowed(r) => r.len(),
        Records::Owned(r) => r.len(),
    };
    let mut b = Builder::new(defs, n, partners, points);
    let owned = matches!(records, Records::Owned(_));
    let (g, p2p) = gather(&mut b, records, n, each);
    if owned {
        // The records are let go: their pages back before the collectives' points are
        // written.
        spoor_format::mem::return_freed_memory();
    }
    let instances = collectives(&mut b, g.coll, n);
    let handoffs = lock_handoffs(&mut b, g.locks);
    let partners = coded(std::mem::take(&mut b.settled_partners), std::mem::take(&mut b.partners));
    let points = coded(std::mem::take(&mut b.settled_points), std::mem::take(&mut b.points));
    // What matching let go (its filed messages, the vectors its entries were built in)
    // goes back before the replay's queues grow.
    spoor_format::mem::return_freed_memory();
    b.problems.sort_by_key(|x| (x.at, x.kind));
    Sync {
        messages: Vec::new(),
        message_count: p2p.count,
        late_messages: p2p.late,
        instances,
        handoffs,
        spawns: g.spawns,
        partners,
        points,
        problems: b.problems,
    }
}

/// [`match_all`], collecting the messages into [`Sync::messages`].
fn match_all_collected(defs: &Definitions, records: Records, partners: bool, points: bool) -> Sync {
    let mut messages = Vec::new();
    let mut sync = match_all(defs, records, partners, points, &mut |m| messages.push(m));
    sync.messages = messages;
    sync
}

/// Each location's own records in parallel (a few at a time, to bound what waits to be
/// merged), merged in location order: its own partners, points and problems into `b`;
/// each channel matched as soon as both its ends are gathered, its messages given to
/// `each`.
fn gather(
    b: &mut Builder,
    mut records: Records,
    n: usize,
    each: &mut dyn FnMut(Message),
) -> (Gathered, PointToPoint) {
    let (defs, partners, points) = (b.defs, b.want_partners, b.want_points);
    let mut coll: BTreeMap<(CommId, u64), Vec<CollPart>> = BTreeMap::new();
    let mut locks: BTreeMap<(AppId, u64), Vec<Section>> = BTreeMap::new();
    let mut spawns = Vec::new();
    let mut channels = Channels::new(n);
    let mut p2p = PointToPoint::default();
    const AT_ONCE: usize = 16;
    for first in (0..n).step_by(AT_ONCE) {
        let end = n.min(first + AT_ONCE);
        let taken: Vec<RecordList>;
        let recs: Vec<&RecordList> = match &mut records {
            Records::Borrowed(r) => r[first..end].iter().collect(),
            Records::Owned(r) => {
                taken = r[first..end].iter_mut().map(std::mem::take).collect();
                taken.iter().collect()
            }
        };
        let passes: Vec<LocPass> = (first..end)
            .into_par_iter()
            .map(|l| location_pass(defs, l as LocId, recs[l - first], partners, points))
            .collect();
        for (l, mut pass) in (first..).zip(passes) {
            // Room for a partner and a point per record: the messages' come below, and
            // growing there copies and faults in every location's vectors twice over.
            // Room not written to costs no memory.
            let room = recs[l - first].len();
            let (mut own_partners, mut own_points) =
                (std::mem::take(&mut pass.partners), std::mem::take(&mut pass.points));
            if partners {
                own_partners.reserve(room.saturating_sub(own_partners.len()));
            }
            if points {
                own_points.reserve(room.saturating_sub(own_points.len()));
            }
            b.partners[l] = own_partners;
            b.points[l] = own_points;
            b.problems.append(&mut pass.problems);
            for (key, part) in pass.colls.drain(..) {
                coll.entry(key).or_default().push(part);
            }
            for (key, sec) in pass.sections.drain(..) {
                locks.entry(key).or_default().push(sec);
            }
            spawns.append(&mut pass.spawns);
            channels.file(l, &mut pass);
        }
        channels.match_ready(b, first..end, &mut p2p, each);
    }
    channels.match_beyond(b, &mut p2p, each);
    (Gathered { coll, locks, spawns }, p2p)
}

/// Point to point on one channel: its k-th send goes to its k-th receive; what is left
/// over on either side is a problem.
fn match_channel(
    b: &mut Builder,
    (from, to, comm, tag): ChannelKey,
    sends: &[SendItem],
    recvs: &[RecvItem],
    p2p: &mut PointToPoint,
    each: &mut dyn FnMut(Message),
) {
    let defs = b.defs;
    let matched = sends.len().min(recvs.len());
    p2p.count += matched;
    for (s_item, r_item) in sends.iter().zip(recvs) {
        let (s, r) = (&s_item.0, &r_item.filed);
        p2p.late += u64::from(r.wall < s.wall);
        each(Message {
            send: s.ev().at,
            recv: r.ev().at,
            send_wall: s.wall,
            recv_wall: r.wall,
            bytes: s.bytes,
        });
        b.partner(s.ev().at, r.ev().at);
        b.partner(r.ev().at, s.ev().at);
        b.point(s.ev().at, Point::Source);
        b.point(r.ev().at, Point::Recv { from: s.ev().at });
        if s.bytes != r.bytes {
            b.problem(
                ProblemKind::SizeMismatch,
                r.ev(),
                r_item.kind(),
                Some(s.ev().at),
                format!(
                    "receives {} bytes, but {} sent {} bytes",
                    r.bytes,
                    describe::event(defs, s.ev().at, s_item.kind(), s.wall),
                    s.bytes
                ),
            );
        }
    }
    let chan = |b: &Builder| {
        format!("from {} to {} tag {tag} on {}", b.loc_name(from), b.loc_name(to), describe::comm(defs, comm))
    };
    for s in &sends[matched..] {
        let detail = format!("no receive matches this message {} ({} bytes)", chan(b), s.0.bytes);
        b.problem(ProblemKind::UnmatchedSend, s.0.ev(), s.kind(), None, detail);
    }
    for r in &recvs[matched..] {
        let detail =
            format!("no send matches this receive of a message {} ({} bytes)", chan(b), r.filed.bytes);
        b.problem(ProblemKind::UnmatchedRecv, r.filed.ev(), r.kind(), None, detail);
    }
}

/// Collectives: each instance's members in rank order, checked (members, operation,
/// root) and given their points.
fn collectives(b: &mut Builder, coll: BTreeMap<(CommId, u64), Vec<CollPart>>, n: usize) -> Vec<Instance> {
    let defs = b.defs;
    let mut instances = Vec::new();
    // Per location, its rank (first position) in the communicator `ranks_of`.
    let mut ranks: Vec<usize> = vec![usize::MAX; n];
    let mut ranks_of: Option<CommId> = None;
    let mut present: Vec<bool> = Vec::new();
    for ((comm, seq), mut parts) in coll {
        let c = &defs.comms[comm as usize];
        if ranks_of != Some(comm) {
            if let Some(old) = ranks_of {
                for &m in &defs.comms[old as usize].members {
                    if let Some(r) = ranks.get_mut(m as usize) {
                        *r = usize::MAX;
                    }
                }
            }
            for (i, &m) in c.members.iter().enumerate() {
                if let Some(r) = ranks.get_mut(m as usize) {
                    if *r == usize::MAX {
                        *r = i;
                    }
                }
            }
            ranks_of = Some(comm);
        }
        let rank_of = |l: LocId| ranks.get(l as usize).copied().unwrap_or(usize::MAX);
        parts.sort_by_key(|p| (rank_of(p.loc), p.loc));
        let root = check_collective(b, comm, seq, &parts, &rank_of, &mut present);
        let op = parts[0].op;
        let inst = instances.len() as u32;
        let mut members = Vec::with_capacity(parts.len());
        for (m, p) in parts.iter().enumerate() {
            let also_begin = p.begin.at == p.end.at;
            if !also_begin {
                b.point(p.begin.at, Point::CollBegin { inst, member: m as u32 });
            }
            b.point(p.end.at, Point::CollEnd { inst, member: m as u32, also_begin });
            members.push(Member {
                loc: p.loc,
                begin: p.begin.at,
                end: p.end.at,
                begin_wall: p.begin.wall,
                end_wall: p.end.wall,
            });
        }
        instances.push(Instance { comm, seq, op, shape: shape_of(op, root), members });
    }

    instances
}

/// Checks one collective instance (its members in rank order): members that are not
/// in the communicator or missing, operations and roots that disagree, a root that did
/// not take part. Returns the root's position among the members.
fn check_collective(
    b: &mut Builder,
    comm: CommId,
    seq: u64,
    parts: &[CollPart],
    rank_of: &dyn Fn(LocId) -> usize,
    present: &mut Vec<bool>,
) -> Option<u32> {
    let defs = b.defs;
    let c = &defs.comms[comm as usize];
    let first = Ev { at: parts[0].end.at, wall: parts[0].end.wall };
    let what = || format!("collective #{seq} on {}", describe::comm(defs, comm));
    for p in parts {
        if !c.members.is_empty() && rank_of(p.loc) == usize::MAX {
            b.problem(
                ProblemKind::Collective,
                p.end,
                "coll_end",
                None,
                format!("{}: {} is not a member", what(), b.loc_name(p.loc)),
            );
        }
    }
    if !c.members.is_empty() {
        present.clear();
        present.resize(c.members.len(), false);
        for p in parts {
            if let Some(x) = present.get_mut(rank_of(p.loc)) {
                *x = true;
            }
        }
        let missing: Vec<String> = c
            .members
            .iter()
            .filter(|&&m| !present.get(rank_of(m)).copied().unwrap_or(false))
            .map(|&m| b.loc_name(m))
            .collect();
        if !missing.is_empty() {
            b.problem(
                ProblemKind::Collective,
                first,
                "coll_end",
                None,
                format!("{} ({}): {} did not take part", what(), parts[0].op.name(), missing.join(", ")),
            );
        }
    }
    let op = parts[0].op;
    for p in &parts[1..] {
        if p.op != op {
            b.problem(
                ProblemKind::Collective,
                p.end,
                "coll_end",
                Some(parts[0].end.at),
                format!(
                    "{}: this member does {}, {} does {}",
                    what(),
                    p.op.name(),
                    b.loc_name(parts[0].loc),
                    op.name()
                ),
            );
        }
    }
    let root_loc = parts.iter().find_map(|p| p.root);
    if let Some(rl) = root_loc {
        for p in parts {
            if p.root.is_some_and(|r| r != rl) {
                b.problem(
                    ProblemKind::Collective,
                    p.end,
                    "coll_end",
                    None,
                    format!("{}: members disagree on the root", what()),
                );
                break;
            }
        }
    }
    let root = root_loc.and_then(|rl| parts.iter().position(|p| p.loc == rl)).map(|i| i as u32);
    if needs_root(op) && root_loc.is_some() && root.is_none() {
        b.problem(
            ProblemKind::Collective,
            first,
            "coll_end",
            None,
            format!("{}: the root {} did not take part", what(), b.loc_name(root_loc.unwrap_or(0))),
        );
    }
    root
}

/// Locks: sections in the order of their acquisitions; each release hands the lock to
/// the next acquisition.
fn lock_handoffs(b: &mut Builder, locks: BTreeMap<(AppId, u64), Vec<Section>>) -> Vec<Handoff> {
    let mut handoffs = Vec::new();
    for ((_, lock), mut secs) in locks {
        secs.sort_by_key(|s| (s.acquire.wall, s.acquire.at));
        for w in secs.windows(2) {
            let (prev, next) = (&w[0], &w[1]);
            let Some(rel) = prev.release else {
                b.problem(
                    ProblemKind::Lock,
                    next.acquire,
                    "lock_acquire",
                    Some(prev.acquire.at),
                    format!(
                        "acquires lock {lock} while {} holds it without ever releasing it",
                        b.loc_name(prev.acquire.at.loc)
                    ),
                );
                continue;
            };
            if next.acquire.wall < rel.wall {
                b.problem(
                    ProblemKind::Lock,
                    next.acquire,
                    "lock_acquire",
                    Some(rel.at),
                    format!(
                        "acquires lock {lock} while {} holds it until {}",
                        b.loc_name(rel.at.loc),
                        describe::time(rel.wall)
                    ),
                );
            }
            handoffs.push(Handoff {
                release: rel.at,
                acquire: next.acquire.at,
                release_wall: rel.wall,
                acquire_wall: next.acquire.wall,
            });
            b.partner(rel.at, next.acquire.at);
            b.partner(next.acquire.at, rel.at);
            b.point(rel.at, Point::Source);
            b.point(next.acquire.at, Point::Acquire { from: rel.at });
        }
    }

    handoffs
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Grouping by channel gives what a stable sort by key does, each group then
        /// put in order, with the groups' spans.
        #[test]
        fn by_channel_is_a_stable_sort_by_key(
            items in prop::collection::vec(((0u32..3, 0u32..3, 0u32..2, 0u32..2), 0u32..6), 0..80),
        ) {
            let tagged: Vec<(ChannelKey, (u32, usize))> =
                items.iter().enumerate().map(|(i, &(k, v))| (k, (v, i))).collect();
            let (got, spans) = by_channel(tagged.clone(), |g| g.sort_by_key(|x| x.0));
            let mut want = tagged;
            want.sort_by_key(|x| x.0);
            let mut want_spans = Vec::new();
            let mut start = 0;
            for i in 1..=want.len() {
                if i == want.len() || want[i].0 != want[start].0 {
                    want[start..i].sort_by_key(|x| x.1 .0);
                    want_spans.push((want[start].0, start, i));
                    start = i;
                }
            }
            let want_items: Vec<(u32, usize)> = want.into_iter().map(|x| x.1).collect();
            prop_assert_eq!(got, want_items);
            prop_assert_eq!(spans, want_spans);
        }
    }

    /// `n` locations in a ring: each sends one message to the next and receives one from
    /// the one before (blocking), plus the sends in `extra` (from, to).
    fn ring(n: u32, extra: &[(LocId, LocId)]) -> (Definitions, Vec<RecordList>) {
        let mut defs = crate::testdefs::ranks("ring", n);
        defs.add_comm("world", (0..n).collect());
        let records = (0..n)
            .map(|l| {
                let (to, from) = ((l + 1) % n, (l + n - 1) % n);
                let mut recs = vec![
                    Rec::Send { to, comm: 0, tag: 0, bytes: 8, request: None },
                    Rec::RecvPost { from: Some(from), comm: 0, tag: Some(0), request: None },
                    Rec::RecvDone { from, comm: 0, tag: 0, bytes: 8, request: None },
                ];
                recs.extend(extra.iter().filter(|e| e.0 == l).map(|&(_, to)| Rec::Send {
                    to,
                    comm: 0,
                    tag: 1,
                    bytes: 8,
                    request: None,
                }));
                recs.into_iter().enumerate().map(|(k, r)| Record::new(k as u64, 10 * k as i64, r)).collect()
            })
            .collect();
        (defs, records)
    }

    /// A channel is matched as soon as its sender and its receiver are both gathered,
    /// and a location's filed sends and receives go once its last channel is: on a ring,
    /// after each batch only the first location (whose sender comes last) and the last
    /// gathered (whose receiver is not yet) hold theirs.
    #[test]
    fn filed_messages_go_once_both_ends_are_gathered() {
        let n = 40;
        let (defs, records) = ring(n as u32, &[]);
        let mut b = Builder::new(&defs, n, true, true);
        let (mut channels, mut p2p, mut got) = (Channels::new(n), PointToPoint::default(), Vec::new());
        for first in (0..n).step_by(16) {
            let end = n.min(first + 16);
            for (l, recs) in records.iter().enumerate().take(end).skip(first) {
                channels.file(l, &mut location_pass(&defs, l as LocId, recs, true, true));
            }
            channels.match_ready(&mut b, first..end, &mut p2p, &mut |m| got.push(m));
            let held: Vec<usize> = (0..end)
                .filter(|&l| !channels.sends_of[l].is_empty() || !channels.recvs_of[l].is_empty())
                .collect();
            let want = if end == n { vec![] } else { vec![0, end - 1] };
            assert_eq!(held, want, "after locations {first} to {end}");
            assert_eq!(got.len(), end - 1 + usize::from(end == n));
        }
        channels.match_beyond(&mut b, &mut p2p, &mut |m| got.push(m));
        assert_eq!(p2p.count, n);
        let mut pairs: Vec<(EventRef, EventRef)> = got.iter().map(|m| (m.send, m.recv)).collect();
        pairs.sort();
        let want: Vec<(EventRef, EventRef)> = (0..n as u32)
            .map(|l| (EventRef { loc: l, index: 0 }, EventRef { loc: (l + 1) % n as u32, index: 2 }))
            .collect();
        assert_eq!(pairs, want);
        assert!(b.problems.is_empty());
    }

    /// Entries coded early and entries made later read back as one list sorted by
    /// index, the early ones first among equal indices (as a stable sort of them all in
    /// the order made would give).
    #[test]
    fn settled_entries_merge_with_later_ones() {
        let at = |index: u64, loc: LocId| PartnerAt::new(index, EventRef { loc, index: 7 * index });
        let early: Vec<PartnerAt> = [(1, 0), (3, 1), (5, 2), (9, 3)].map(|(i, l)| at(i, l)).into();
        let late: Vec<PartnerAt> = [(3, 4), (0, 5), (6, 6), (9, 7), (12, 8)].map(|(i, l)| at(i, l)).into();
        let mut all: Vec<(u64, EventRef)> =
            early.iter().chain(&late).map(|e| (e.index(), e.value())).collect();
        all.sort_by_key(|e| e.0);
        let settled = merged(Coded::default(), early.clone());
        assert_eq!(merged(settled, late.clone()).iter().collect::<Vec<_>>(), all);
        let want = |v: &[PartnerAt]| {
            let mut w: Vec<(u64, EventRef)> = v.iter().map(|e| (e.index(), e.value())).collect();
            w.sort_by_key(|e| e.0);
            w
        };
        assert_eq!(merged(Coded::default(), late.clone()).iter().collect::<Vec<_>>(), want(&late));
        let settled = merged(Coded::default(), early.clone());
        assert_eq!(merged(settled, Vec::<PartnerAt>::new()).iter().collect::<Vec<_>>(), want(&early));
    }

    /// A send to a location the trace does not have is matched after every other
    /// channel: it is a send no receive matches, and the rest are as without it.
    #[test]
    fn a_channel_past_every_location_is_an_unmatched_send() {
        let (defs, records) = ring(20, &[(3, 99)]);
        let mut each = Vec::new();
        let sync = match_events_each(&defs, records.clone(), |m| each.push(m));
        assert_eq!(sync.message_count, 20);
        assert_eq!(each, match_events(&defs, &records).messages);
        let unmatched: Vec<EventRef> =
            sync.problems.iter().filter(|p| p.kind == ProblemKind::UnmatchedSend).map(|p| p.at).collect();
        assert_eq!(unmatched, [EventRef { loc: 3, index: 3 }]);
    }

    /// Partners and points read back as they were made, at the ends of every field's
    /// range (a bit out of place would give a wrong partner, silently).
    #[test]
    fn partners_and_points_read_back() {
        let top = MAX_EVENTS_PER_LOCATION - 1;
        let indices = [0, 1, u32::MAX as u64, u32::MAX as u64 + 1, 0x1234_5678_9abc, top];
        for &index in &indices {
            for &other in &indices {
                for loc in [0, 7, LocId::MAX] {
                    let partner = EventRef { loc, index: other };
                    let p = PartnerAt::new(index, partner);
                    assert_eq!((p.index(), p.value()), (index, partner));
                    let from = EventRef { loc, index: other.wrapping_mul(0x1_0001) | u64::MAX << 60 };
                    let (inst, member) = (loc, other as u32);
                    for point in [
                        Point::Source,
                        Point::Recv { from },
                        Point::Acquire { from },
                        Point::CollBegin { inst, member },
                        Point::CollEnd { inst, member, also_begin: false },
                        Point::CollEnd { inst, member, also_begin: true },
                        Point::Spawn { parent: loc },
                    ] {
                        let at = PointAt::new(index, point);
                        assert_eq!((at.index(), at.value()), (index, point));
                    }
                }
            }
        }
    }
}
