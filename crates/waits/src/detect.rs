//! The fold that finds wait states: events go in one at a time (each location's in its
//! own order, every receive completion after its send), instances come out.

use crate::pattern::Pattern;
use crate::runs::Runs;
use crate::{CallPaths, Instance, SyncObject, OUTSIDE};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use spoor_format::spill::{Arena, SpillVec};
use spoor_model::{CollOp, CommId, Definitions, Event, EventRef, Kind, LocId, StrId};
use std::collections::VecDeque;
use std::sync::Arc;

/// Late-sender instances per location that a later receive can still show to have
/// waited in the wrong order (Scalasca keeps such a bounded history too).
const WRONG_ORDER_WINDOW: usize = 64;

/// How the detector treats a procedure by its name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Call {
    /// MPI_Wait*, MPI_Test*: a call that completes non-blocking requests.
    Completion,
    Init,
    Finalize,
    Other,
}

fn classify(name: &str) -> Call {
    let n = name.to_ascii_lowercase();
    let n = n.trim_end_matches('_');
    match n {
        "mpi_wait" | "mpi_waitall" | "mpi_waitany" | "mpi_waitsome" | "mpi_test" | "mpi_testall"
        | "mpi_testany" | "mpi_testsome" => Call::Completion,
        "mpi_init" | "mpi_init_thread" => Call::Init,
        "mpi_finalize" => Call::Finalize,
        _ => Call::Other,
    }
}

/// What a collective operation synchronizes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sync {
    Barrier,
    NxN,
    OneToN,
    NToOne,
    None,
}

fn sync_of(op: CollOp) -> Sync {
    match op {
        CollOp::Barrier => Sync::Barrier,
        CollOp::Allreduce
        | CollOp::Allgather
        | CollOp::Allgatherv
        | CollOp::Alltoall
        | CollOp::Alltoallv
        | CollOp::ReduceScatter => Sync::NxN,
        CollOp::Bcast | CollOp::Scatter | CollOp::Scatterv => Sync::OneToN,
        CollOp::Reduce | CollOp::Gather | CollOp::Gatherv => Sync::NToOne,
        CollOp::Scan | CollOp::Other => Sync::None,
    }
}

/// Where a wait is charged: the innermost procedure and the call path at that moment.
#[derive(Clone, Copy)]
struct Site {
    proc: StrId,
    callpath: u32,
}

impl Default for Site {
    /// Outside every procedure.
    fn default() -> Self {
        Site { proc: OUTSIDE, callpath: 0 }
    }
}

/// One location's state during the fold.
#[derive(Default)]
pub(crate) struct LocState {
    index: u64,
    /// Where its waits are charged now: the innermost open procedure and call path (kept
    /// here, not read off `stack` and `runs`, whose tails are cold by the location's next
    /// event).
    site: Site,
    /// Open procedures: (procedure, enter time, call path).
    stack: Vec<(StrId, i64, u32)>,
    recv_begin: Option<i64>,
    /// The current run of completion calls: when it started, and how far its waits
    /// have been charged (a waitall's completions share one wait, charged once).
    run: Option<(i64, i64)>,
    /// Open non-blocking requests: posting time.
    requests: Requests,
    /// A blocking send whose end is this location's next event.
    open_send: Option<EventRef>,
    /// Collective instances ended so far, per communicator.
    coll_count: FxHashMap<CommId, u64>,
    coll_begin: Option<(i64, u64)>,
    lock_request: Option<i64>,
    /// Its waits, in the order found.
    instances: SpillVec<Instance>,
    /// Recent late-sender instances: (send time, index in `instances`).
    late_senders: VecDeque<(i64, usize)>,
    /// At least the latest send time in `late_senders` (a receive of a message sent
    /// later than all of them can show none to be out of order).
    late_senders_max: i64,
    /// MPI_Init and MPI_Finalize on this location.
    init: Option<Span>,
    finalize: Option<Span>,
    /// The location's call path over time: (from, call path), a run per change.
    pub(crate) runs: Runs,
    /// Its last event's time (where its last run ends).
    pub(crate) last: i64,
    /// Where it synchronized with others: in its own order (but for MPI_Init's and lock
    /// releases, known later), sorted at the end.
    pub(crate) syncs: SpillVec<SyncPoint>,
    /// The other sides of synchronizations too far from them to be kept as an offset.
    far: Vec<(LocId, i64)>,
}

/// A location's open non-blocking requests and when each was posted: a few at a time
/// in a list (a program posts a handful, then waits for them), a hash map past that.
#[derive(Default)]
struct Requests {
    few: Vec<(u64, i64)>,
    many: FxHashMap<u64, i64>,
}

/// Open requests kept in the list at most.
const FEW_REQUESTS: usize = 16;

impl Requests {
    fn insert(&mut self, request: u64, posted: i64) {
        if let Some(r) = self.few.iter_mut().find(|r| r.0 == request) {
            r.1 = posted;
        } else if self.few.len() < FEW_REQUESTS && !self.many.contains_key(&request) {
            self.few.push((request, posted));
        } else {
            self.many.insert(request, posted);
        }
    }

    fn remove(&mut self, request: u64) -> Option<i64> {
        match self.few.iter().position(|r| r.0 == request) {
            Some(k) => Some(self.few.swap_remove(k).1),
            None if self.many.is_empty() => None,
            None => self.many.remove(&request),
        }
    }
}

/// A moment a location synchronized with another: a message, a lock hand-off, a
/// collective instance; 16 bytes, as a trace holds one for every send, receive and
/// collective end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SyncPoint {
    pub(crate) at: i64,
    /// The location, the collective instance, or the place in [`LocState::far`].
    who: u32,
    /// The other side's time less `at` (a location's that fits 32 bits), or one of
    /// [`UNKNOWN`], [`COLL`], [`FAR`].
    dt: i32,
}

const UNKNOWN: i32 = i32::MIN;
const COLL: i32 = i32::MIN + 1;
/// A location's side more than 2 s away: kept in [`LocState::far`].
const FAR: i32 = i32::MIN + 2;

impl LocState {
    fn new_in(arena: Option<&Arc<Arena>>) -> LocState {
        LocState {
            syncs: SpillVec::new_in(arena),
            instances: SpillVec::new_in(arena),
            runs: Runs::new_in(arena),
            ..LocState::default()
        }
    }

    /// A synchronization at `at` with `peer`; its place.
    fn push_sync(&mut self, at: i64, peer: Peer) -> usize {
        let mut s = SyncPoint { at, who: 0, dt: UNKNOWN };
        self.set(&mut s, peer);
        self.syncs.push(s);
        // The line after the tail, asked for now: a fresh line written later would stall.
        spoor_format::mem::prefetch(self.syncs.as_ptr().wrapping_add(self.syncs.len() + 4));
        // (Past the end where a spill failed: the result is refused.)
        self.syncs.len().wrapping_sub(1)
    }

    /// Synchronization `k` was with `peer`.
    fn set_peer(&mut self, k: usize, peer: Peer) {
        if let Some(mut s) = self.syncs.get(k).copied() {
            self.set(&mut s, peer);
            self.syncs[k] = s;
        }
    }

    fn set(&mut self, s: &mut SyncPoint, peer: Peer) {
        (s.who, s.dt) = match peer {
            Peer::Unknown => (0, UNKNOWN),
            Peer::Coll(id) => (id, COLL),
            Peer::Loc(l, t) => match t.checked_sub(s.at).and_then(|d| i32::try_from(d).ok()) {
                Some(d) if d > FAR => (l, d),
                _ => {
                    self.far.push((l, t));
                    (self.far.len() as u32 - 1, FAR)
                }
            },
        };
    }

    /// Who synchronization `s` was with.
    #[inline]
    pub(crate) fn peer(&self, s: &SyncPoint) -> Peer {
        match s.dt {
            UNKNOWN => Peer::Unknown,
            COLL => Peer::Coll(s.who),
            FAR => self.far.get(s.who as usize).map_or(Peer::Unknown, |&(l, t)| Peer::Loc(l, t)),
            d => Peer::Loc(s.who, s.at + i64::from(d)),
        }
    }
}

/// Who the other side of a synchronization was.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Peer {
    /// Not known yet, or never: a send not received, a collective instance missing
    /// members. A location's synchronizations are written when its own event comes (so
    /// they come in its order) and told their other side when that comes.
    Unknown,
    /// A location, and the time of its side of the synchronization.
    Loc(LocId, i64),
    /// Every member of a collective instance (an index into `Detector::coll_ends`).
    Coll(u32),
}

/// A call of MPI_Init or MPI_Finalize: its enter and leave (time, event index) and where
/// it was called.
#[derive(Clone, Copy)]
struct Span {
    enter: (i64, u64),
    leave: (i64, u64),
    site: Site,
}

/// A send whose receive has not come yet: what the receive needs of it (kept small: one
/// is in flight for every message on its way).
struct Sent {
    time: i64,
    /// Its place among the sender's synchronizations.
    sync: usize,
}

/// A blocking send not yet judged: its end and the posting time of the receive that got
/// it (a late receiver needs both).
struct Blocking {
    time: i64,
    site: Site,
    object: SyncObject,
    end: Option<i64>,
    recv_post: Option<(i64, EventRef)>,
}

/// One member's part in a collective instance.
struct Member {
    loc: LocId,
    comm: CommId,
    /// Its place among the location's synchronizations.
    sync: usize,
    begin: (i64, u64),
    end: (i64, u64),
    op: CollOp,
    root: Option<LocId>,
    site: Site,
}

/// What the fold found so far.
pub(crate) struct Detector {
    pub(crate) locs: Vec<LocState>,
    sends: FxHashMap<EventRef, Sent>,
    blocking: FxHashMap<EventRef, Blocking>,
    /// The latest release of each lock: (event, time).
    releases: FxHashMap<u64, (EventRef, i64)>,
    /// The members' end times of every judged collective instance, sorted by location.
    pub(crate) coll_ends: Vec<Vec<(LocId, i64)>>,
    colls: FxHashMap<(CommId, u64), Vec<Member>>,
    /// Each procedure's [`Call`], by string id, found once (`None`: not yet).
    calls: Vec<Option<Call>>,
    pub(crate) callpaths: CallPaths,
    /// Receive completions without a partner, or whose partner came later.
    pub(crate) unmatched: u64,
    /// Receive completions earlier than their send.
    pub(crate) late_messages: u64,
    pub(crate) out_of_order: Option<(EventRef, EventRef)>,
    /// Where the timelines, synchronizations and waits are kept when not in memory.
    pub(crate) arena: Option<Arc<Arena>>,
    /// Events taken since the arena's pages were last let go.
    since_release: u32,
}

/// Events between two lettings-go of a spilled fold's pages (about 20 MiB written).
const RELEASE_EVERY: u32 = 1 << 20;

impl Detector {
    pub(crate) fn new(defs: &Definitions, arena: Option<Arc<Arena>>) -> Detector {
        let mut locs = Vec::new();
        locs.resize_with(defs.locations.len(), || LocState::new_in(arena.as_ref()));
        Detector {
            locs,
            arena,
            since_release: 0,
            sends: FxHashMap::default(),
            blocking: FxHashMap::default(),
            releases: FxHashMap::default(),
            coll_ends: Vec::new(),
            colls: FxHashMap::default(),
            calls: Vec::new(),
            callpaths: CallPaths::default(),
            unmatched: 0,
            late_messages: 0,
            out_of_order: None,
        }
    }

    /// Gives each location room, from the `events` the trace holds, for the
    /// synchronizations and waits it will likely keep (a synchronization for a fourth of
    /// its events, a wait for an eighth; a stencil has about a fifth and a thirteenth): a
    /// vector that doubles copies what it held into pages it faults in afresh, and under
    /// `keep_freed_memory` keeps the pages it left (at 10^9 events, gigabytes); spilled,
    /// it writes what it held again. Room past a location's share is address space (and
    /// in a spill file, disk reserved but never written); the total is bounded anyway.
    pub(crate) fn expect_events(&mut self, events: u64) {
        const ROOM_BYTES: u64 = 1 << 40;
        let locs = self.locs.len().max(1) as u64;
        let per = events / locs;
        let cap = |size: usize| ROOM_BYTES / 2 / locs / size as u64;
        let syncs = (per / 4).min(cap(std::mem::size_of::<SyncPoint>())) as usize;
        let waits = (per / 8).min(cap(std::mem::size_of::<Instance>())) as usize;
        // Only room: where the address space (ulimit -v) or the disk is limited, the
        // vectors grow as they need instead.
        for st in &mut self.locs {
            let _ = st.syncs.try_reserve(syncs);
            let _ = st.instances.try_reserve(waits);
        }
    }

    #[inline]
    fn call(&mut self, defs: &Definitions, proc: StrId) -> Call {
        match self.calls.get(proc as usize) {
            Some(Some(c)) => *c,
            _ => self.classify_new(defs, proc),
        }
    }

    #[cold]
    fn classify_new(&mut self, defs: &Definitions, proc: StrId) -> Call {
        let i = proc as usize;
        let c = classify(&defs.strings.name(proc));
        // String ids are dense; an id past them all (no such string) is not kept.
        if i < defs.strings.len().max(self.calls.len()) {
            if i >= self.calls.len() {
                self.calls.resize(i + 1, None);
            }
            self.calls[i] = Some(c);
        }
        c
    }

    fn site(&self, loc: LocId) -> Site {
        self.locs[loc as usize].site
    }

    /// Records a wait from `start` to `end` (nothing if empty) on `object`, and what it
    /// waited for: the event and its time.
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        pattern: Pattern,
        loc: LocId,
        site: Site,
        start: i64,
        end: i64,
        cause: Option<(EventRef, i64)>,
        object: Option<SyncObject>,
    ) {
        if end > start {
            let mine = &mut self.locs[loc as usize].instances;
            spoor_format::mem::prefetch(mine.as_ptr().wrapping_add(mine.len() + 1));
            mine.push(Instance {
                pattern,
                loc,
                proc: site.proc,
                callpath: site.callpath,
                start,
                duration: end - start,
                cause: cause.map(|c| c.0),
                cause_time: cause.map_or(0, |c| c.1),
                object,
            });
        }
    }

    /// Takes one event.
    pub(crate) fn event(&mut self, defs: &Definitions, e: &Event) {
        let li = e.loc as usize;
        if li >= self.locs.len() {
            let arena = self.arena.clone();
            self.locs.resize_with(li + 1, || LocState::new_in(arena.as_ref()));
        }
        if let Some(a) = &self.arena {
            self.since_release += 1;
            if self.since_release == RELEASE_EVERY {
                self.since_release = 0;
                a.release();
            }
        }
        let me = EventRef { loc: e.loc, index: self.locs[li].index };
        self.locs[li].index += 1;
        // Clock-offset samples carry no activity: they end no call and no run.
        if matches!(e.kind, Kind::ClockOffset { .. }) {
            return;
        }
        if let Some(send) = self.locs[li].open_send.take() {
            self.send_ended(send, e.wall);
        }
        self.track_completion_run(defs, e);
        match &e.kind {
            Kind::Enter { proc } => {
                let call = self.call(defs, *proc);
                let parent = self.locs[li].site.callpath;
                let path = self.callpaths.child(parent, *proc);
                let st = &mut self.locs[li];
                st.stack.push((*proc, e.wall, path));
                st.site = Site { proc: *proc, callpath: path };
                st.runs.push(e.wall, path);
                if matches!(call, Call::Init | Call::Finalize) {
                    let at = (e.wall, me.index);
                    let span = Some(Span { enter: at, leave: at, site: self.site(e.loc) });
                    let st = &mut self.locs[li];
                    *(if call == Call::Init { &mut st.init } else { &mut st.finalize }) = span;
                }
            }
            Kind::Leave { proc } => {
                let call = self.call(defs, *proc);
                let st = &mut self.locs[li];
                // Close up to the matching frame (a missing leave closes inner frames).
                if let Some(pos) = st.stack.iter().rposition(|f| f.0 == *proc) {
                    st.stack.truncate(pos);
                    st.site = st
                        .stack
                        .last()
                        .map_or_else(Site::default, |&(proc, _, callpath)| Site { proc, callpath });
                    st.runs.push(e.wall, st.site.callpath);
                }
                let slot = match call {
                    Call::Init => &mut st.init,
                    Call::Finalize => &mut st.finalize,
                    _ => &mut None,
                };
                if let Some(span) = slot {
                    span.leave = (e.wall, me.index);
                }
            }
            Kind::Send { comm, tag, .. } | Kind::Isend { comm, tag, .. } => {
                let blocking = matches!(e.kind, Kind::Send { .. });
                if let Kind::Isend { request, .. } = e.kind {
                    self.locs[li].requests.insert(request, e.wall);
                }
                let site = self.site(e.loc);
                let object = SyncObject { comm: *comm, tag: Some(*tag) };
                let sync = self.unknown_sync(li, e.wall);
                self.sends.insert(me, Sent { time: e.wall, sync });
                if blocking {
                    let send = Blocking { time: e.wall, site, object, end: None, recv_post: None };
                    self.blocking.insert(me, send);
                    self.locs[li].open_send = Some(me);
                }
            }
            Kind::RecvBegin { .. } => self.locs[li].recv_begin = Some(e.wall),
            Kind::IrecvRequest { request, .. } => {
                self.locs[li].requests.insert(*request, e.wall);
            }
            Kind::RecvEnd { .. } => {
                let begin = self.locs[li].recv_begin.take();
                let wait = begin.map(|b| (b, b));
                self.receive_completed(e, me, begin.unwrap_or(e.wall), wait);
            }
            Kind::IrecvComplete { request, .. } => {
                let post = self.locs[li].requests.remove(*request).unwrap_or(e.wall);
                let run = self.locs[li].run;
                self.receive_completed(e, me, post, run);
            }
            Kind::IsendComplete { request } => {
                self.locs[li].requests.remove(*request);
            }
            Kind::CollBegin { .. } => self.locs[li].coll_begin = Some((e.wall, me.index)),
            Kind::CollEnd { op, comm, root, .. } => self.collective_ended(defs, e, me, *op, *comm, *root),
            Kind::LockRequest { .. } => self.locs[li].lock_request = Some(e.wall),
            Kind::LockAcquire { lock } => {
                let release = self.releases.get(lock).copied().filter(|r| Some(r.0) == e.ann.partner);
                if let Some(t) = self.locs[li].lock_request.take() {
                    let site = self.site(e.loc);
                    self.push(Pattern::LockContention, e.loc, site, t, e.wall, release, None);
                }
                if let Some((r, rt)) = release {
                    self.sync(e.loc, e.wall, Peer::Loc(r.loc, rt));
                    self.sync(r.loc, rt, Peer::Loc(e.loc, e.wall));
                }
            }
            Kind::LockRelease { lock } => {
                self.releases.insert(*lock, (me, e.wall));
            }
            _ => {}
        }
        let st = &mut self.locs[li];
        if st.runs.is_empty() {
            st.runs.push(e.wall, st.site.callpath);
        }
        st.last = e.wall;
    }

    /// A synchronization of location `li` at `at` whose other side comes later; its place.
    fn unknown_sync(&mut self, li: usize, at: i64) -> usize {
        self.locs[li].push_sync(at, Peer::Unknown)
    }

    fn sync(&mut self, loc: LocId, at: i64, peer: Peer) {
        if let Some(st) = self.locs.get_mut(loc as usize) {
            st.push_sync(at, peer);
        }
    }

    /// Every member of a collective instance synchronized with every other at its end.
    fn sync_all(&mut self, ends: Vec<(LocId, i64)>) {
        let id = self.new_instance(ends);
        for k in 0..self.coll_ends[id as usize].len() {
            let (l, t) = self.coll_ends[id as usize][k];
            self.sync(l, t, Peer::Coll(id));
        }
    }

    /// A synchronization of several locations, ended at `ends`: its id.
    fn new_instance(&mut self, mut ends: Vec<(LocId, i64)>) -> u32 {
        ends.sort_unstable();
        self.coll_ends.push(ends);
        self.coll_ends.len() as u32 - 1
    }

    /// A run of completion calls (MPI_Wait*, MPI_Test* back to back, with only the
    /// completions they return in between) is one wait; anything else ends it.
    fn track_completion_run(&mut self, defs: &Definitions, e: &Event) {
        let keeps = match &e.kind {
            Kind::Enter { proc } | Kind::Leave { proc } => self.call(defs, *proc) == Call::Completion,
            Kind::IrecvComplete { .. } | Kind::IsendComplete { .. } => true,
            _ => false,
        };
        let st = &mut self.locs[e.loc as usize];
        if !keeps {
            st.run = None;
        } else if st.run.is_none() && matches!(e.kind, Kind::Enter { .. }) {
            st.run = Some((e.wall, e.wall));
        }
    }

    /// A receive completed at `e`: posted at `post`; `wait` is where its waiting began
    /// and how far it was already charged (None: it completed outside any wait).
    fn receive_completed(&mut self, e: &Event, me: EventRef, post: i64, wait: Option<(i64, i64)>) {
        let Some(send_ref) = e.ann.partner else {
            self.unmatched += 1;
            return;
        };
        let Some(Sent { time: send_time, sync: send_sync }) = self.sends.remove(&send_ref) else {
            // Its send is not before it (or another receive got it): the input is not in
            // causal order.
            self.out_of_order.get_or_insert((me, send_ref));
            return;
        };
        self.late_messages += u64::from(e.wall < send_time);
        self.sync(e.loc, e.wall, Peer::Loc(send_ref.loc, send_time));
        if let Some(st) = self.locs.get_mut(send_ref.loc as usize) {
            st.set_peer(send_sync, Peer::Loc(e.loc, e.wall));
        }
        if let Some(send) = self.blocking.get_mut(&send_ref) {
            send.recv_post = Some((post, me));
            self.judge_late_receiver(send_ref);
        }
        let li = e.loc as usize;
        // Earlier late senders that waited while this message, sent before theirs, was
        // on its way: they waited in the wrong order.
        let st = &mut self.locs[li];
        let scan =
            st.late_senders.iter().take(if st.late_senders_max > send_time { WRONG_ORDER_WINDOW } else { 0 });
        for &(t, k) in scan {
            // (None only where a spill failed: the result is refused.)
            if let Some(w) = st.instances.get_mut(k) {
                if t > send_time && w.pattern == Pattern::LateSender {
                    w.pattern = Pattern::LateSenderWrongOrder;
                }
            }
        }
        let Some((start, charged)) = wait else { return };
        let from = start.max(charged);
        let until = send_time.min(e.wall);
        if until > from {
            let site = self.site(e.loc);
            let object = match e.kind {
                Kind::RecvEnd { comm, tag, .. } | Kind::IrecvComplete { comm, tag, .. } => {
                    Some(SyncObject { comm, tag: Some(tag) })
                }
                _ => None,
            };
            self.push(Pattern::LateSender, e.loc, site, from, until, Some((send_ref, send_time)), object);
            let st = &mut self.locs[li];
            if st.late_senders.len() == WRONG_ORDER_WINDOW {
                st.late_senders.pop_front();
            }
            st.late_senders.push_back((send_time, st.instances.len().wrapping_sub(1)));
            st.late_senders_max = st.late_senders_max.max(send_time);
            if let Some(run) = &mut st.run {
                run.1 = run.1.max(until);
            }
        }
    }

    fn send_ended(&mut self, send: EventRef, end: i64) {
        if let Some(s) = self.blocking.get_mut(&send) {
            s.end = Some(end);
            self.judge_late_receiver(send);
        }
    }

    /// A blocking send waited for its receive when the receive was posted after the
    /// send began and before it returned.
    fn judge_late_receiver(&mut self, send_ref: EventRef) {
        let Some(s) = self.blocking.get(&send_ref) else { return };
        let (Some(end), Some((post, recv))) = (s.end, s.recv_post) else { return };
        let (time, site, object) = (s.time, s.site, s.object);
        self.blocking.remove(&send_ref);
        // A send that returned before the receive was posted did not wait for it (eager).
        if post < end {
            self.push(
                Pattern::LateReceiver,
                send_ref.loc,
                site,
                time,
                post,
                Some((recv, post)),
                Some(object),
            );
        }
    }

    fn collective_ended(
        &mut self,
        defs: &Definitions,
        e: &Event,
        me: EventRef,
        op: CollOp,
        comm: CommId,
        root: Option<LocId>,
    ) {
        let site = self.site(e.loc);
        let st = &mut self.locs[e.loc as usize];
        let begin = st.coll_begin.take().unwrap_or((e.wall, me.index));
        let k = st.coll_count.entry(comm).or_insert(0);
        let key = (comm, *k);
        *k += 1;
        let size = defs.comms.get(comm as usize).map_or(0, |c| c.members.len());
        let sync = self.unknown_sync(e.loc as usize, e.wall);
        let members = self.colls.entry(key).or_default();
        members.push(Member { loc: e.loc, comm, sync, begin, end: (e.wall, me.index), op, root, site });
        if members.len() >= size {
            let members = self.colls.remove(&key).unwrap_or_default();
            self.judge_collective(&members);
        }
    }

    /// The waits of one complete collective instance.
    fn judge_collective(&mut self, members: &[Member]) {
        let Some(first) = members.first() else { return };
        // Every member synchronized with every other at its end.
        let id = self.new_instance(members.iter().map(|m| (m.loc, m.end.0)).collect());
        for m in members {
            self.locs[m.loc as usize].set_peer(m.sync, Peer::Coll(id));
        }
        let sync = sync_of(first.op);
        let at = |m: &Member, i: (i64, u64)| Some((EventRef { loc: m.loc, index: i.1 }, i.0));
        let object = Some(SyncObject { comm: first.comm, tag: None });
        let last_in = members.iter().max_by_key(|m| (m.begin.0, m.loc)).expect("non-empty");
        let first_out = members.iter().min_by_key(|m| (m.end.0, m.loc)).expect("non-empty");
        for m in members {
            let (b, e) = (m.begin.0, m.end.0);
            match sync {
                Sync::Barrier | Sync::NxN => {
                    let (wait, done) = if sync == Sync::Barrier {
                        (Pattern::WaitAtBarrier, Pattern::BarrierCompletion)
                    } else {
                        (Pattern::WaitAtNxN, Pattern::NxNCompletion)
                    };
                    let until = last_in.begin.0.min(e);
                    self.push(wait, m.loc, m.site, b, until, at(last_in, last_in.begin), object);
                    self.push(
                        done,
                        m.loc,
                        m.site,
                        first_out.end.0.max(until).max(b),
                        e,
                        at(first_out, first_out.end),
                        object,
                    );
                }
                Sync::OneToN => {
                    let Some(root) = members.iter().find(|r| Some(r.loc) == m.root) else { continue };
                    if root.loc != m.loc {
                        self.push(
                            Pattern::LateBroadcast,
                            m.loc,
                            m.site,
                            b,
                            root.begin.0.min(e),
                            at(root, root.begin),
                            object,
                        );
                    }
                }
                Sync::NToOne => {
                    if Some(m.loc) != m.root {
                        continue;
                    }
                    let Some(other) =
                        members.iter().filter(|o| o.loc != m.loc).min_by_key(|o| (o.begin.0, o.loc))
                    else {
                        continue;
                    };
                    self.push(
                        Pattern::EarlyReduce,
                        m.loc,
                        m.site,
                        b,
                        other.begin.0.min(e),
                        at(other, other.begin),
                        object,
                    );
                }
                Sync::None => {}
            }
        }
    }

    /// What only the end of the trace tells: MPI_Init's completion and the wait at
    /// MPI_Finalize, over the processes of each application.
    pub(crate) fn finish(&mut self, defs: &Definitions) {
        let mut apps: FxHashMap<u32, Vec<LocId>> = FxHashMap::default();
        for l in 0..self.locs.len() as LocId {
            if let Some(p) = defs.process_of(l) {
                apps.entry(p.app).or_default().push(l);
            }
        }
        let mut apps: Vec<(u32, Vec<LocId>)> = apps.into_iter().collect();
        apps.sort_unstable();
        for (_, locs) in apps {
            let spans = |f: fn(&LocState) -> Option<Span>| -> Vec<(LocId, Span)> {
                locs.iter().filter_map(|&l| f(&self.locs[l as usize]).map(|s| (l, s))).collect()
            };
            let init = spans(|st| st.init);
            let fin = spans(|st| st.finalize);
            if init.len() > 1 {
                self.sync_all(init.iter().map(|(l, s)| (*l, s.leave.0)).collect());
            }
            // Time in MPI_Init after the first process left it.
            if let Some(&(l0, s0)) = init.iter().min_by_key(|(l, s)| (s.leave.0, *l)) {
                for &(l, s) in init.iter().filter(|_| init.len() > 1) {
                    let cause = Some((EventRef { loc: l0, index: s0.leave.1 }, s0.leave.0));
                    self.push(
                        Pattern::InitCompletion,
                        l,
                        s.site,
                        s0.leave.0.max(s.enter.0),
                        s.leave.0,
                        cause,
                        None,
                    );
                }
            }
            // Time in MPI_Finalize before the last process entered it, and after the
            // first left it.
            let last_in = fin.iter().max_by_key(|(l, s)| (s.enter.0, *l)).copied();
            let first_out = fin.iter().min_by_key(|(l, s)| (s.leave.0, *l)).copied();
            if let (Some((l1, s1)), Some((l0, s0))) = (last_in, first_out) {
                for &(l, s) in fin.iter().filter(|_| fin.len() > 1) {
                    let cause = Some((EventRef { loc: l1, index: s1.enter.1 }, s1.enter.0));
                    let until = s1.enter.0.min(s.leave.0);
                    self.push(Pattern::WaitAtFinalize, l, s.site, s.enter.0, until, cause, None);
                    let cause = Some((EventRef { loc: l0, index: s0.leave.1 }, s0.leave.0));
                    let from = s0.leave.0.max(until).max(s.enter.0);
                    self.push(Pattern::FinalizeCompletion, l, s.site, from, s.leave.0, cause, None);
                }
            }
        }
    }

    /// Every wait found, by location, then start, then pattern (a location's waits never
    /// overlap, so the key is unique): each location's, which the fold found nearly in
    /// order, sorted (the locations in parallel), then moved to its place in the whole,
    /// its own memory let go as it is.
    pub(crate) fn take_instances(&mut self) -> SpillVec<Instance> {
        for some in self.locs.chunks_mut(64) {
            some.par_iter_mut().for_each(|st| st.instances.sort_by_key(|i| (i.start, i.pattern)));
            // Spilled, the pages sorted go back to the file a few locations at a time.
            self.arena.as_ref().inspect(|a| a.release());
        }
        let total = self.locs.iter().map(|st| st.instances.len()).sum();
        let mut all = SpillVec::with_capacity_in(total, self.arena.as_ref());
        for st in &mut self.locs {
            let mine = std::mem::take(&mut st.instances);
            all.extend_from_slice(&mine);
            // Its pages go as the whole fills, rather than staying with the fold's
            // thread's arena until the end.
            mine.drop_returning_pages();
        }
        all
    }

    /// Sends and collective instances still open at the end (their partners are missing).
    pub(crate) fn open(&self) -> (usize, usize) {
        (self.blocking.len(), self.colls.len())
    }
}

#[cfg(test)]
mod tests {
    use super::{LocState, Peer};

    /// A synchronization's other side reads back as written: near, more than 2 s
    /// before or after, at the extremes of time, a collective, not yet known.
    #[test]
    fn sync_peers_read_back() {
        let mut st = LocState::default();
        let cases = [
            (1_000, Peer::Loc(3, 900)),
            (1_000, Peer::Loc(4, 1_000 + i64::from(i32::MAX))),
            (5_000_000_000, Peer::Loc(5, 1)),
            (i64::MIN, Peer::Loc(6, i64::MAX)),
            (7, Peer::Coll(u32::MAX)),
            (8, Peer::Unknown),
            (9, Peer::Loc(7, 9 + i64::from(i32::MIN) + 3)),
            (10, Peer::Loc(8, 10 + i64::from(i32::MIN))),
        ];
        for (at, peer) in cases {
            st.push_sync(at, Peer::Unknown);
            let k = st.push_sync(at, peer);
            st.set_peer(k - 1, peer);
        }
        for (k, (at, peer)) in cases.iter().enumerate() {
            for s in &st.syncs[2 * k..2 * k + 2] {
                assert_eq!(s.at, *at);
                assert_eq!(format!("{:?}", st.peer(s)), format!("{peer:?}"), "sync at {at}");
            }
        }
    }
}

#[cfg(test)]
mod requests_tests {
    use super::{Requests, FEW_REQUESTS};
    use std::collections::HashMap;

    /// Open requests behave as a map, past the list's size too, with requests reused.
    #[test]
    fn requests_are_a_map() {
        let mut r = Requests::default();
        let mut m: HashMap<u64, i64> = HashMap::new();
        let mut x = 7u64;
        for step in 0..20_000i64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let key = (x >> 33) % (3 * FEW_REQUESTS as u64);
            if x & 1 == 0 {
                r.insert(key, step);
                m.insert(key, step);
            } else {
                assert_eq!(r.remove(key), m.remove(&key), "step {step} key {key}");
            }
        }
        assert!(!r.many.is_empty());
    }
}
