//! One pass over a trace: every location's events go through a small state machine
//! (call stack, what it waits for, phase) and every interval between two consecutive
//! events of a location is charged to that location, its innermost procedure, the time
//! histograms and the space-time rows. Messages are joined through their partner
//! annotations. The fold is sequential in input order, so results do not depend on the
//! number of threads; decoding runs on another thread, a few blocks ahead.
//!
//! [`Pass`] is one [`Observer`] of that fold; the Chrome export and the wait states are
//! others, and a report computes only those its output needs.

use crate::grid::Grid;
use crate::metric::Metric;
use spoor_format::{Block, TraceReader};
use spoor_model::{Definitions, Event, EventRef, Feedback, Kind, LocId, StrId};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

/// The procedure id of "outside every procedure".
pub const OUTSIDE: StrId = StrId::MAX;
/// The caller of a procedure entered with an empty stack.
pub const ROOT: StrId = StrId::MAX;

/// What watches the fold over a trace: every event in input order (each location's
/// events in that location's order). What it found it gives at its own end.
pub trait Observer {
    fn event(&mut self, defs: &Definitions, e: &Event);

    /// [`Observer::event`] of each of `events` in turn.
    fn events(&mut self, defs: &Definitions, events: &[Event]) {
        spoor_format::mem::each_prefetched(events, |e| self.event(defs, e));
    }
}

/// What every report counts, whatever else it computes: events, the run's span, and
/// times that go back in input order (clock-condition violations in an ordered trace).
#[derive(Default)]
pub struct Counts {
    pub events: u64,
    pub backwards: u64,
    /// The earliest and latest times seen.
    pub span: Option<(i64, i64)>,
    t_last: Option<i64>,
}

/// Events each observer of a pass takes at a time (30 KiB of them).
const FOLD_CHUNK: usize = 256;

/// Folds `events` into every observer: they are independent of one another, so each
/// takes a few hundred events in turn, which the next then reads from the cache, not
/// from memory.
pub fn fold_all(observers: &mut [&mut dyn Observer], defs: &Definitions, events: &[Event]) {
    for part in events.chunks(FOLD_CHUNK) {
        for o in observers.iter_mut() {
            o.events(defs, part);
        }
    }
}

/// What [`fold_blocks`] gives back.
pub struct Folded {
    /// The reader, whose definitions then hold every definitions chunk read.
    pub reader: TraceReader,
    /// The events folded.
    pub events: u64,
    /// The wait states, when asked for.
    pub waits: Option<spoor_waits::Waits>,
}

/// Folds every block of `reader` into `observers`, in input order, and into `waits`
/// when given, telling `feedback` how far it has got (`total` events, where known). With
/// wait states, this thread decodes the blocks and folds the observers while another
/// folds the wait states, the longest fold: two threads, a core each (a third to decode
/// would share a core with one of them and hand every block on once more). Without,
/// another thread decodes a few blocks ahead.
pub fn fold_blocks(
    reader: TraceReader,
    defs: &Definitions,
    observers: &mut [&mut dyn Observer],
    waits: Option<spoor_waits::Waits>,
    feedback: &dyn Feedback,
    total: Option<u64>,
) -> Result<Folded, spoor_format::Error> {
    let mut read = 0u64;
    let Some(mut waits) = waits else {
        let mut blocks = reader.read_ahead(8);
        while let Some(b) = blocks.next() {
            let b = b?;
            fold_all(observers, defs, &b.events);
            read += b.events.len() as u64;
            feedback.progress("events", read, total);
            blocks.recycle(b);
        }
        feedback.finish();
        return Ok(Folded { reader: blocks.finish(), events: read, waits: None });
    };
    let mut reader = reader;
    // A block decoded is about 2 MB of events: one queued and two rooms to decode into
    // keep the blocks in flight in the shared cache beside the fold's own tables (with
    // four queued and eight rooms, the fold took a tenth longer).
    let (tx, rx) = spoor_format::queue::bounded::<Arc<Block>>(1);
    let (rooms, spare) = std::sync::mpsc::sync_channel::<Vec<Event>>(2);
    let outcome = std::thread::scope(|scope| {
        // Whichever thread lets a block go last hands its room back.
        let done = move |b: Arc<Block>| {
            if let Some(b) = Arc::into_inner(b) {
                let _ = rooms.try_send(b.events);
            }
        };
        let done_w = done.clone();
        // Its room made on its thread, so that what it holds comes from that thread's
        // memory (glibc's arena), as its growth does.
        let worker = scope.spawn(move || {
            if let Some(n) = total {
                waits.expect_events(n);
            }
            while let Some(b) = rx.recv() {
                waits.events(defs, &b.events);
                done_w(b);
            }
            waits
        });
        let outcome = loop {
            let b = match reader.next_block_into(spare.try_recv().unwrap_or_default()) {
                Ok(Some(b)) => Arc::new(b),
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            };
            if tx.send(b.clone()).is_err() {
                break Ok(());
            }
            fold_all(observers, defs, &b.events);
            read += b.events.len() as u64;
            done(b);
            feedback.progress("events", read, total);
        };
        drop(tx);
        let waits = worker.join().expect("the wait-state fold does not panic");
        outcome.map(|()| waits)
    });
    feedback.finish();
    Ok(Folded { reader, events: read, waits: Some(outcome?) })
}

impl Observer for Counts {
    fn event(&mut self, _: &Definitions, e: &Event) {
        let t = e.wall;
        self.events += 1;
        match self.t_last {
            Some(tl) if t < tl => self.backwards += 1,
            _ => self.t_last = Some(t),
        }
        self.span = Some(self.span.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
    }
}

impl Observer for spoor_waits::Waits {
    fn event(&mut self, defs: &Definitions, e: &Event) {
        spoor_waits::Waits::event(self, defs, e);
    }

    fn events(&mut self, defs: &Definitions, events: &[Event]) {
        spoor_waits::Waits::events(self, defs, events);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    None,
    /// In a blocking receive; `any`: posted for any source.
    Recv {
        any: bool,
    },
    Coll,
    Lock,
}

/// Totals of one location (thread).
#[derive(Clone, Debug, Default)]
pub struct LocStats {
    /// First and last counted moments (ns); `None` when nothing was counted.
    pub first: Option<i64>,
    pub last: i64,
    /// First and last events of the location at all (for utilization).
    pub seen: Option<(i64, i64)>,
    pub cpu: i64,
    pub busy: i64,
    pub wait_recv: i64,
    /// The part of `wait_recv` spent in receives posted for any source.
    pub wait_recv_any: i64,
    pub wait_coll: i64,
    pub wait_lock: i64,
    pub msgs_sent: u64,
    pub bytes_sent: u64,
    pub msgs_recv: u64,
    pub bytes_recv: u64,
    pub colls: u64,
    pub calls: u64,
    pub npt: f64,
}

/// Totals of one procedure on one location.
#[derive(Clone, Debug, Default)]
pub struct ProcStats {
    pub loc: LocId,
    pub proc: StrId,
    pub calls: u64,
    /// Inclusive time of the outermost activations (recursive ones are inside them).
    pub incl: i64,
    pub incl_cpu: i64,
    /// Time while the procedure was the innermost one.
    pub self_wall: i64,
    pub self_cpu: i64,
    pub busy: i64,
    pub wait_recv: i64,
    pub wait_coll: i64,
    pub wait_lock: i64,
    pub msgs_sent: u64,
    pub bytes_sent: u64,
    pub msgs_recv: u64,
    pub bytes_recv: u64,
    pub colls: u64,
    pub npt: f64,
}

/// One caller-callee arc of the dynamic call graph on one location.
#[derive(Clone, Debug, Default)]
pub struct ArcStats {
    pub loc: LocId,
    pub caller: StrId,
    pub callee: StrId,
    pub calls: u64,
    /// The callee's own time during these calls, and its descendants' (gprof's self
    /// and children), wall and CPU.
    pub self_wall: i64,
    pub child_wall: i64,
    pub self_cpu: i64,
    pub child_cpu: i64,
}

/// One message (point to point), as the transaction summary shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub origin: LocId,
    /// Index of the send among its location's events.
    pub send_index: u64,
    pub dest: LocId,
    pub tag: u32,
    pub bytes: u64,
    /// Send starts; receive completes.
    pub start: i64,
    pub end: i64,
    /// When the receive was posted (`recv_begin`, `irecv_request`), if it was.
    pub posted: Option<i64>,
    /// From delivery to the receiver's next send.
    pub processing: Option<i64>,
    /// Transit of that next send when it went back to the origin (a reply).
    pub reply: Option<i64>,
}

impl Message {
    pub fn transit(&self) -> i64 {
        self.end - self.start
    }
    /// Time the message existed before the receiver asked for it.
    pub fn queue(&self) -> Option<i64> {
        self.posted.map(|p| (p - self.start).max(0))
    }
    /// Time the receiver waited in the receive before the send started (late sender).
    pub fn recv_wait(&self) -> Option<i64> {
        self.posted.map(|p| (self.start - p).max(0))
    }
}

/// Minimum, sum and maximum of one quantity over messages.
#[derive(Clone, Debug, Default)]
pub struct MinAvgMax {
    pub count: u64,
    pub min: i64,
    pub max: i64,
    pub sum: i128,
}

impl MinAvgMax {
    fn add(&mut self, v: i64) {
        if self.count == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.count += 1;
        self.sum += v as i128;
    }
    pub fn avg(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Ranked(Message);

impl Ranked {
    fn key(&self) -> (i64, Reverse<LocId>, Reverse<u64>) {
        (self.0.transit(), Reverse(self.0.origin), Reverse(self.0.send_index))
    }
}
impl Ord for Ranked {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key().cmp(&o.key())
    }
}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// The message transaction summary.
#[derive(Clone, Debug, Default)]
pub struct Messages {
    pub count: u64,
    pub transit: MinAvgMax,
    pub queue: MinAvgMax,
    pub recv_wait: MinAvgMax,
    pub processing: MinAvgMax,
    pub reply: MinAvgMax,
    /// The messages with the longest transit, longest first (ties: origin, send index).
    pub longest: Vec<Message>,
    /// Message events without a partner.
    pub unmatched: u64,
}

/// A row of the space-time diagram: consecutive locations drawn as one line.
#[derive(Clone, Debug)]
pub struct Row {
    pub locs: Vec<LocId>,
    pub busy: usize,
    pub wait: usize,
}

struct Frame {
    proc: StrId,
    stats: usize,
    arc: usize,
    enter_wall: i64,
    enter_cpu: Option<i64>,
    self_wall: i64,
    self_cpu: i64,
    recursive: bool,
}

struct LocState {
    started: bool,
    ended: bool,
    prev_wall: i64,
    prev_cpu: Option<i64>,
    wait: Wait,
    stack: Vec<Frame>,
    in_phase: bool,
    phi: f64,
    busy_counted: bool,
    outside: usize,
    index: u64,
    /// When the blocking receive in progress was posted.
    recv_posted: Option<i64>,
    irecv_posted: HashMap<u64, i64>,
    last_delivered: Option<u64>,
}

struct PendingSend {
    from: LocId,
    index: u64,
    tag: u32,
    bytes: u64,
    start: i64,
    reply_of: Option<u64>,
}

struct PendingRecv {
    loc: LocId,
    end: i64,
    posted: Option<i64>,
}

/// What to compute in the pass.
#[derive(Clone, Debug)]
pub struct PassOptions {
    /// Locations whose intervals go into histograms and space-time rows (by location id).
    pub focus: Vec<bool>,
    pub phase: Option<StrId>,
    /// The phase was named but the trace has no such string: nothing is counted.
    pub phase_missing: bool,
    pub hist: Vec<Metric>,
    pub bins: usize,
    pub rows: usize,
    pub keep_messages: usize,
}

/// Everything the pass found; tables and pictures are made from it.
pub struct Pass {
    pub locs: Vec<LocStats>,
    pub procs: Vec<ProcStats>,
    pub arcs: Vec<ArcStats>,
    pub messages: Messages,
    pub grid: Grid,
    pub hist: Vec<(Metric, usize)>,
    pub rows: Vec<Row>,
    /// Leaves that matched no open procedure; frames closed implicitly.
    pub stray_leaves: u64,
    pub implicit_leaves: u64,
    /// Message completions and sends without a partner annotation.
    pub missing_partners: u64,
    /// Matched messages received before they were sent (clock-condition violations).
    pub late_messages: u64,
    pub message_events: u64,
    /// Names of the phases the trace has.
    pub phases: std::collections::BTreeSet<StrId>,
    state: Vec<LocState>,
    proc_index: HashMap<(LocId, StrId), usize>,
    arc_index: HashMap<(LocId, StrId, StrId), usize>,
    pending_sends: HashMap<EventRef, PendingSend>,
    pending_recvs: HashMap<EventRef, PendingRecv>,
    open: HashMap<u64, Message>,
    next_msg: u64,
    heap: BinaryHeap<Reverse<Ranked>>,
    phi: f64,
    t_last: Option<i64>,
    n_busy: u64,
    loc_row: Vec<Option<usize>>,
    opts: PassOptions,
}

impl Pass {
    pub fn new(defs: &Definitions, opts: PassOptions) -> Pass {
        let n = defs.locations.len();
        let mut grid = Grid::new(opts.bins);
        let hist = opts.hist.iter().map(|&m| (m, grid.add_series())).collect();
        // Space-time rows: the focused locations in id order, at most `rows` lines.
        let focused: Vec<LocId> =
            (0..n as LocId).filter(|&l| opts.focus.get(l as usize) == Some(&true)).collect();
        let per_row = focused.len().div_ceil(opts.rows.max(1)).max(1);
        let mut rows = Vec::new();
        let mut loc_row = vec![None; n];
        for chunk in focused.chunks(per_row) {
            let r = rows.len();
            for &l in chunk {
                loc_row[l as usize] = Some(r);
            }
            rows.push(Row { locs: chunk.to_vec(), busy: grid.add_series(), wait: grid.add_series() });
        }
        let mut p = Pass {
            locs: vec![LocStats::default(); n],
            procs: Vec::new(),
            arcs: Vec::new(),
            messages: Messages::default(),
            grid,
            hist,
            rows,
            late_messages: 0,
            stray_leaves: 0,
            implicit_leaves: 0,
            missing_partners: 0,
            message_events: 0,
            phases: Default::default(),
            state: Vec::with_capacity(n),
            proc_index: HashMap::new(),
            arc_index: HashMap::new(),
            pending_sends: HashMap::new(),
            pending_recvs: HashMap::new(),
            open: HashMap::new(),
            next_msg: 0,
            heap: BinaryHeap::new(),
            phi: 0.0,
            t_last: None,
            n_busy: 0,
            loc_row,
            opts,
        };
        for l in 0..n as LocId {
            let outside = p.proc_stats(l, OUTSIDE);
            p.state.push(LocState {
                started: false,
                ended: false,
                prev_wall: 0,
                prev_cpu: None,
                wait: Wait::None,
                stack: Vec::new(),
                in_phase: p.opts.phase.is_none() && !p.opts.phase_missing,
                phi: 0.0,
                busy_counted: false,
                outside,
                index: 0,
                recv_posted: None,
                irecv_posted: HashMap::new(),
                last_delivered: None,
            });
        }
        p
    }

    fn proc_stats(&mut self, loc: LocId, proc: StrId) -> usize {
        let procs = &mut self.procs;
        *self.proc_index.entry((loc, proc)).or_insert_with(|| {
            procs.push(ProcStats { loc, proc, ..Default::default() });
            procs.len() - 1
        })
    }

    fn arc_stats(&mut self, loc: LocId, caller: StrId, callee: StrId) -> usize {
        let arcs = &mut self.arcs;
        *self.arc_index.entry((loc, caller, callee)).or_insert_with(|| {
            arcs.push(ArcStats { loc, caller, callee, ..Default::default() });
            arcs.len() - 1
        })
    }
}

impl Observer for Pass {
    /// Takes one event. Events of a location must come in that location's order.
    fn event(&mut self, _: &Definitions, e: &Event) {
        let li = e.loc as usize;
        if li >= self.state.len() {
            return; // the reader checks locations; nothing to charge it to
        }
        let t = e.wall;
        // The NPT potential: integral of 1 / (locations busy) over time, up to t. A time
        // that goes back (a clock-condition violation) adds nothing.
        match self.t_last {
            Some(tl) if t < tl => {}
            Some(tl) => {
                if self.n_busy > 0 {
                    self.phi += (t - tl) as f64 / self.n_busy as f64;
                }
                self.t_last = Some(t);
            }
            None => self.t_last = Some(t),
        }
        let phi = self.phi;
        if self.state[li].started {
            self.interval(e.loc, t, e.cpu, phi);
        } else {
            self.state[li].started = true;
        }
        {
            let s = &mut self.locs[li];
            s.seen = Some(match s.seen {
                None => (t, t),
                Some((a, b)) => (a.min(t), b.max(t)),
            });
        }
        let index = self.state[li].index;
        self.kind(e, index);
        let st = &mut self.state[li];
        if st.in_phase {
            let s = &mut self.locs[li];
            if s.first.is_none() {
                s.first = Some(t);
            }
            s.last = s.last.max(t);
        }
        let busy_now = !st.ended && st.wait == Wait::None;
        if busy_now != st.busy_counted {
            if busy_now {
                self.n_busy += 1;
            } else {
                self.n_busy -= 1;
            }
            st.busy_counted = busy_now;
        }
        st.phi = phi;
        st.prev_wall = t;
        st.prev_cpu = e.cpu;
        st.index += 1;
    }
}

impl Pass {
    /// Charges the interval from the location's previous event to `t`.
    fn interval(&mut self, loc: LocId, t: i64, cpu: Option<i64>, phi: f64) {
        let li = loc as usize;
        let st = &mut self.state[li];
        let t0 = st.prev_wall;
        if !st.in_phase || st.ended {
            return;
        }
        let dt = (t - t0).max(0);
        let dc = match (st.prev_cpu, cpu) {
            (Some(a), Some(b)) if b >= a => b - a,
            _ => 0,
        };
        let wait = st.wait;
        let npt = if wait == Wait::None { phi - st.phi } else { 0.0 };
        let stats = match st.stack.last_mut() {
            Some(f) => {
                f.self_wall += dt;
                f.self_cpu += dc;
                f.stats
            }
            None => st.outside,
        };
        let s = &mut self.locs[li];
        let p = &mut self.procs[stats];
        s.cpu += dc;
        p.self_wall += dt;
        p.self_cpu += dc;
        match wait {
            Wait::None => {
                s.busy += dt;
                p.busy += dt;
                s.npt += npt;
                p.npt += npt;
            }
            Wait::Recv { any } => {
                s.wait_recv += dt;
                if any {
                    s.wait_recv_any += dt;
                }
                p.wait_recv += dt;
            }
            Wait::Coll => {
                s.wait_coll += dt;
                p.wait_coll += dt;
            }
            Wait::Lock => {
                s.wait_lock += dt;
                p.wait_lock += dt;
            }
        }
        if self.opts.focus.get(li) != Some(&true) {
            return;
        }
        let t1 = t0 + dt;
        for &(m, series) in &self.hist {
            let v = match (m, wait) {
                (Metric::Busy, Wait::None) => dt as f64,
                (Metric::Wait, w) if w != Wait::None => dt as f64,
                (Metric::WaitRecv, Wait::Recv { .. }) => dt as f64,
                (Metric::WaitColl, Wait::Coll) => dt as f64,
                (Metric::WaitLock, Wait::Lock) => dt as f64,
                (Metric::Cpu, _) => dc as f64,
                (Metric::Npt, Wait::None) => npt,
                _ => continue,
            };
            if v != 0.0 {
                self.grid.add_interval(series, t0, t1, v);
            }
        }
        if let Some(r) = self.loc_row[li] {
            let series = if wait == Wait::None { self.rows[r].busy } else { self.rows[r].wait };
            if dt > 0 {
                self.grid.add_interval(series, t0, t1, dt as f64);
            }
        } else if dt > 0 {
            self.grid.cover(t0, t1);
        }
    }

    fn count_point(&mut self, loc: LocId, m: Metric, t: i64, v: f64) {
        if self.opts.focus.get(loc as usize) != Some(&true) {
            return;
        }
        for i in 0..self.hist.len() {
            if self.hist[i].0 == m {
                let s = self.hist[i].1;
                self.grid.add_point(s, t, v);
            }
        }
    }

    fn innermost(&self, loc: LocId) -> usize {
        let st = &self.state[loc as usize];
        st.stack.last().map_or(st.outside, |f| f.stats)
    }

    fn kind(&mut self, e: &Event, index: u64) {
        let loc = e.loc;
        let li = loc as usize;
        let t = e.wall;
        if let Kind::PhaseBegin { name } = e.kind {
            self.phases.insert(name);
        }
        let counted = self.state[li].in_phase;
        match &e.kind {
            Kind::Enter { proc } => self.enter(e, *proc, counted),
            Kind::Leave { proc } => match self.state[li].stack.iter().rposition(|f| f.proc == *proc) {
                Some(at) => {
                    while self.state[li].stack.len() > at {
                        if self.state[li].stack.len() > at + 1 {
                            self.implicit_leaves += 1;
                        }
                        self.pop_frame(loc, t, e.cpu);
                    }
                }
                None => self.stray_leaves += 1,
            },
            Kind::Send { to, tag, bytes, .. } | Kind::Isend { to, tag, bytes, .. } => {
                let p = self.innermost(loc);
                if counted {
                    let s = &mut self.locs[li];
                    s.msgs_sent += 1;
                    s.bytes_sent += bytes;
                    self.procs[p].msgs_sent += 1;
                    self.procs[p].bytes_sent += bytes;
                    self.count_point(loc, Metric::MsgsSent, t, 1.0);
                    self.count_point(loc, Metric::BytesSent, t, *bytes as f64);
                }
                self.send(e, index, *to, *tag, *bytes);
            }
            Kind::RecvBegin { from, .. } => {
                let st = &mut self.state[li];
                st.wait = Wait::Recv { any: from.is_none() };
                st.recv_posted = Some(t);
            }
            Kind::IrecvRequest { request, .. } => {
                self.state[li].irecv_posted.insert(*request, t);
            }
            Kind::RecvEnd { bytes, .. } | Kind::IrecvComplete { bytes, .. } => {
                self.recv_end(e, index, *bytes, counted)
            }
            Kind::CollBegin { .. } => self.state[li].wait = Wait::Coll,
            Kind::CollEnd { .. } => {
                self.state[li].wait = Wait::None;
                if counted {
                    self.locs[li].colls += 1;
                    let p = self.innermost(loc);
                    self.procs[p].colls += 1;
                    self.count_point(loc, Metric::Colls, t, 1.0);
                }
            }
            Kind::LockRequest { .. } => self.state[li].wait = Wait::Lock,
            Kind::LockAcquire { .. } => self.state[li].wait = Wait::None,
            Kind::PhaseBegin { name } if Some(*name) == self.opts.phase => self.state[li].in_phase = true,
            Kind::PhaseEnd { name } if Some(*name) == self.opts.phase => self.state[li].in_phase = false,
            Kind::ProcessEnd | Kind::ThreadEnd => {
                let st = &mut self.state[li];
                st.ended = true;
            }
            _ => {}
        }
    }

    /// An enter of `proc`: a frame on the location's stack, its call counted.
    #[inline]
    fn enter(&mut self, e: &Event, proc: StrId, counted: bool) {
        let (loc, li, t) = (e.loc, e.loc as usize, e.wall);
        let caller = self.state[li].stack.last().map_or(ROOT, |f| f.proc);
        let stats = self.proc_stats(loc, proc);
        let arc = self.arc_stats(loc, caller, proc);
        let recursive = self.state[li].stack.iter().any(|f| f.proc == proc);
        if counted {
            self.procs[stats].calls += 1;
            self.arcs[arc].calls += 1;
            self.locs[li].calls += 1;
            self.count_point(loc, Metric::Calls, t, 1.0);
        }
        self.state[li].stack.push(Frame {
            proc,
            stats,
            arc,
            enter_wall: t,
            enter_cpu: e.cpu,
            self_wall: 0,
            self_cpu: 0,
            recursive,
        });
    }

    /// A receive's end (blocking or not), event `index` of its location.
    #[inline]
    fn recv_end(&mut self, e: &Event, index: u64, bytes: u64, counted: bool) {
        let (loc, li, t) = (e.loc, e.loc as usize, e.wall);
        let posted = match &e.kind {
            Kind::RecvEnd { .. } => {
                self.state[li].wait = Wait::None;
                self.state[li].recv_posted.take()
            }
            Kind::IrecvComplete { request, .. } => self.state[li].irecv_posted.remove(request),
            _ => None,
        };
        let p = self.innermost(loc);
        if counted {
            let s = &mut self.locs[li];
            s.msgs_recv += 1;
            s.bytes_recv += bytes;
            self.procs[p].msgs_recv += 1;
            self.procs[p].bytes_recv += bytes;
            self.count_point(loc, Metric::MsgsRecv, t, 1.0);
            self.count_point(loc, Metric::BytesRecv, t, bytes as f64);
        }
        self.recv(e, index, posted);
    }

    fn pop_frame(&mut self, loc: LocId, t: i64, cpu: Option<i64>) {
        let li = loc as usize;
        let Some(f) = self.state[li].stack.pop() else { return };
        let incl = (t - f.enter_wall).max(0);
        let incl_cpu = match (f.enter_cpu, cpu) {
            (Some(a), Some(b)) if b >= a => b - a,
            _ => f.self_cpu,
        };
        // An activation outside the phase still closes; only counted parts were added.
        let p = &mut self.procs[f.stats];
        if !f.recursive {
            p.incl += incl;
            p.incl_cpu += incl_cpu;
        }
        let a = &mut self.arcs[f.arc];
        a.self_wall += f.self_wall;
        a.child_wall += (incl - f.self_wall).max(0);
        a.self_cpu += f.self_cpu;
        a.child_cpu += (incl_cpu - f.self_cpu).max(0);
    }

    fn send(&mut self, e: &Event, index: u64, to: LocId, tag: u32, bytes: u64) {
        let loc = e.loc;
        let li = loc as usize;
        self.message_events += 1;
        let mut reply_of = None;
        if let Some(id) = self.state[li].last_delivered.take() {
            if let Some(m) = self.open.get_mut(&id) {
                m.processing = Some((e.wall - m.end).max(0));
                if m.origin == to {
                    reply_of = Some(id);
                } else {
                    let m = self.open.remove(&id).expect("open message");
                    self.finish(m);
                }
            }
        }
        let Some(partner) = e.ann.partner else {
            self.missing_partners += 1;
            if let Some(id) = reply_of {
                let m = self.open.remove(&id).expect("open message");
                self.finish(m);
            }
            return;
        };
        let s = PendingSend { from: loc, index, tag, bytes, start: e.wall, reply_of };
        let me = EventRef { loc, index };
        match self.pending_recvs.remove(&me) {
            Some(r) => self.complete(s, r),
            None => {
                self.pending_sends.insert(partner, s);
            }
        }
    }

    fn recv(&mut self, e: &Event, index: u64, posted: Option<i64>) {
        self.message_events += 1;
        let Some(partner) = e.ann.partner else {
            self.missing_partners += 1;
            return;
        };
        let r = PendingRecv { loc: e.loc, end: e.wall, posted };
        let me = EventRef { loc: e.loc, index };
        match self.pending_sends.remove(&me) {
            Some(s) => self.complete(s, r),
            None => {
                self.pending_recvs.insert(partner, r);
            }
        }
    }

    fn complete(&mut self, s: PendingSend, r: PendingRecv) {
        self.late_messages += u64::from(r.end < s.start);
        let m = Message {
            origin: s.from,
            send_index: s.index,
            dest: r.loc,
            tag: s.tag,
            bytes: s.bytes,
            start: s.start,
            end: r.end,
            posted: r.posted,
            processing: None,
            reply: None,
        };
        if let Some(orig) = s.reply_of {
            if let Some(mut o) = self.open.remove(&orig) {
                o.reply = Some(m.transit());
                self.finish(o);
            }
        }
        let id = self.next_msg;
        self.next_msg += 1;
        let dest = r.loc as usize;
        if dest < self.state.len() {
            if let Some(prev) = self.state[dest].last_delivered.replace(id) {
                if let Some(p) = self.open.remove(&prev) {
                    self.finish(p);
                }
            }
            self.open.insert(id, m);
        } else {
            self.finish(m);
        }
    }

    fn finish(&mut self, m: Message) {
        let ms = &mut self.messages;
        ms.count += 1;
        ms.transit.add(m.transit());
        if let Some(q) = m.queue() {
            ms.queue.add(q);
        }
        if let Some(w) = m.recv_wait() {
            ms.recv_wait.add(w);
        }
        if let Some(p) = m.processing {
            ms.processing.add(p);
        }
        if let Some(r) = m.reply {
            ms.reply.add(r);
        }
        if self.opts.keep_messages == 0 {
            return;
        }
        let r = Ranked(m);
        if self.heap.len() < self.opts.keep_messages {
            self.heap.push(Reverse(r));
        } else if let Some(Reverse(worst)) = self.heap.peek() {
            if r > *worst {
                self.heap.pop();
                self.heap.push(Reverse(r));
            }
        }
    }

    /// Closes what is still open (frames at each location's last event, messages).
    pub fn finish_pass(&mut self) {
        for l in 0..self.state.len() {
            let loc = l as LocId;
            let (t, cpu) = (self.state[l].prev_wall, self.state[l].prev_cpu);
            while !self.state[l].stack.is_empty() {
                self.implicit_leaves += 1;
                self.pop_frame(loc, t, cpu);
            }
        }
        let mut open: Vec<u64> = self.open.keys().copied().collect();
        open.sort_unstable();
        for id in open {
            let m = self.open.remove(&id).expect("open message");
            self.finish(m);
        }
        self.messages.unmatched =
            (self.pending_sends.len() + self.pending_recvs.len()) as u64 + self.missing_partners;
        let mut longest: Vec<Message> =
            std::mem::take(&mut self.heap).into_iter().map(|Reverse(r)| r.0).collect();
        longest.sort_by_key(|m| Reverse(Ranked(m.clone())));
        self.messages.longest = longest;
    }
}
