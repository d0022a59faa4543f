//! Process LBF: the Group Activity Graph of a PAG for a placement (the LBF paper's §2.1
//! and Figure 2), computed offline by a discrete-event simulation of the events of the
//! PAG on the placement's processors (formats/placement.md, "Prediction").
//!
//! Events *arrive* in the PAG's causal order and wait in a queue per location (the
//! paper's *queued* state) until they are needed. Each location has one *current* event,
//! the next one it works toward: it is runnable while the local arc into it has CPU time
//! left, then *pending* while a remote predecessor (a send, a collective's virtual node,
//! a lock release, a spawn) is not reported or its message is in flight, and *reported*
//! when it happens. The runnable locations of a processor share it equally (round robin
//! with an infinitely small quantum: processor sharing, kept exact with a virtual time
//! per processor), or with `Sharing::Slices` take turns, one at a time for at most a
//! slice of CPU time each, in a line per processor. A receive ends at the later of its
//! local readiness and its send's time plus the transfer time. Events are reported in
//! order of predicted time across all processors, so a long computation in one process
//! never holds the others back, and no keep-alive events are needed.
//!
//! State: per location its queue and current event, per processor a heap of runnable
//! locations, a slab of the arrived nodes that have remote arcs into them and are not
//! reported, one map entry per origin of remote arcs whose other ends have not all
//! arrived (reported: a message in flight; not reported: a list of waiting targets in a
//! second slab), and one byte per node counting the remote arcs out of it. Nothing is
//! allocated per event once the slabs have grown to the events in flight.
//!
//! Speed: the origins' entries are in a table indexed by the origin's low node bits
//! (growing to 2^20 places; a map takes the collisions). What a location needs of a node
//! (weight, flags) is read on arrival, while the arrays are in cache; a node that the
//! asking location needs is handed over without queuing, and a stretch of its nodes
//! without remote arcs in arrives in one tight loop.

use crate::placement::Placement;
use crate::serve::{server_loops, ServerLoop, Wildcards};
use rustc_hash::FxHashMap;
use spoor_format::mem::prefetch;
use spoor_format::spill::SpillVec;
use spoor_graph::inflight::InFlight;
use spoor_graph::mem::filled_in;
use spoor_graph::net::NodeOf;
use spoor_graph::pag::{ArcKind, Pag, PhaseMark, Reach, CLOCK_OFFSET, NONE, VIRTUAL};
use spoor_graph::{Error, Local, Mode, Network, Result};
use spoor_model::Definitions;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What a process waiting for a remote arc does on a processor it shares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Waits {
    /// It gives the processor up (the LBF paper's model).
    #[default]
    Yield,
    /// It keeps its share, spinning (MPI libraries polling for progress).
    Spin,
}

impl std::str::FromStr for Waits {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Waits, String> {
        match s {
            "yield" => Ok(Waits::Yield),
            "spin" => Ok(Waits::Spin),
            _ => Err(format!("`{s}`: expected yield or spin")),
        }
    }
}

/// How the runnable locations of one processor share it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Sharing {
    /// Each of n gets 1/n of it at every instant (the LBF paper's model).
    #[default]
    Equal,
    /// One at a time, in turn, for at most this many ns of CPU time each (a time-sharing
    /// kernel's slices).
    Slices(f64),
}

/// The slice `slices` takes when it names none: what Linux's CFS gives each of two
/// runnable tasks on two CPUs (its period, 6 ms times 1 + log2 of the CPUs, shared).
const DEFAULT_SLICE_NS: f64 = 6e6;

impl std::str::FromStr for Sharing {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Sharing, String> {
        let slice = |d: &str| match spoor_format::text::parse_duration(d) {
            Some(ns) if ns > 0 => Ok(Sharing::Slices(ns as f64)),
            _ => Err(format!("`{s}`: expected a slice longer than 0, such as slices:3ms")),
        };
        match s.split_once(':') {
            None if s == "equal" => Ok(Sharing::Equal),
            None if s == "slices" => Ok(Sharing::Slices(DEFAULT_SLICE_NS)),
            Some(("slices", d)) => slice(d),
            _ => Err(format!("`{s}`: expected equal, slices or slices:DURATION")),
        }
    }
}

/// What a prediction changes in the PAG's costs besides the placement.
#[derive(Clone, Debug, Default)]
pub struct Costs<'a> {
    /// Local-arc weights to use instead of the PAG's (a procedure move).
    pub local: Option<&'a [i64]>,
    /// Procedures whose time counts as zero (critical-path zeroing): exclusive time
    /// unless `zero_inclusive`, as in `spoor_graph::CpOptions`.
    pub zero: Vec<u32>,
    pub zero_inclusive: bool,
    /// The network model (formats/network.md): message and collective arcs take its
    /// times, messages queue for its links and buses, blocking calls take its
    /// overhead. A message is local when sender and receiver share a processor in the
    /// placement (or as the model's `local` says).
    pub net: Option<&'a Network>,
    /// What a location waiting for a remote arc does with its processor
    /// (formats/placement.md, "Waiting").
    pub waits: Waits,
    /// Which message a blocking receive for any source takes (`serve`).
    pub wildcards: Wildcards,
    /// How the locations of one processor share it (formats/placement.md, "Sharing").
    pub sharing: Sharing,
}

/// The result of a prediction.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Prediction {
    /// The predicted time: the latest predicted time of an event, from the source.
    pub time_ns: i64,
    /// Events (nodes) simulated.
    pub events: u64,
    /// The most events that had arrived and were not yet reported at one time.
    pub max_in_flight: u64,
}

/// Reads `--net SPEC` for a prediction of `pag` (formats/network.md), `--local` winning
/// over the model's `local`; its warnings go to `feedback`.
pub fn load_network(
    spec: &str,
    local: Option<Local>,
    pag: &Pag,
    feedback: &dyn spoor_model::Feedback,
) -> Result<Network> {
    let net = Network::load(spec, feedback)?.with_local(local);
    for w in net.warnings_for(pag) {
        feedback.warn(&w);
    }
    Ok(net)
}

/// The predicted time of the PAG's run on the placement's processors.
pub fn predict(pag: &Pag, place: &Placement, costs: &Costs) -> Result<Prediction> {
    predict_then(pag, place, costs, || {})
}

/// [`predict`], calling `ready` when the simulation is set up and starts to run. Work
/// that reads the whole PAG on another core (the prediction's interval) slows the
/// set-up, whose page faults and scans of the arcs share the memory with it, far more
/// than the run: started at `ready`, it slows neither much.
pub fn predict_then(pag: &Pag, place: &Placement, costs: &Costs, ready: impl FnOnce()) -> Result<Prediction> {
    let mut sim = Sim::new(pag, place, costs, false)?;
    ready();
    sim.run()?;
    Ok(sim.prediction())
}

/// The Group Activity Graph: a PAG whose locations are the placement's processors,
/// nodes in predicted-time order, each local arc weighing the processor's busy time
/// between two of its events; remote arcs as in the PAG (with the table's weights under
/// `costs.net`, the times the model gave them). Its critical path in cpu mode is the predicted time.
pub fn build_gag(pag: &Pag, place: &Placement, costs: &Costs) -> Result<(Pag, Prediction)> {
    let mut sim = Sim::new(pag, place, costs, true)?;
    sim.run()?;
    let pred = sim.prediction();
    // The GAG grew beside the PAG: in its file, where one is full, it is not whole.
    let gag = sim.finish_gag(place);
    gag.spill_error()?;
    Ok((gag, pred))
}

/// Where a location of the simulation is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LocState {
    /// Its current node runs.
    Running,
    /// Its current node waits for remote arcs.
    Blocked,
    /// It has no node left.
    Done,
    /// A server loop waiting for its next request (`serve`).
    Choosing,
    /// Not started: it has no current node yet.
    Starting,
}

struct Loc {
    node: u32,
    state: LocState,
    group: u32,
    /// The current node's slot in `Sim::waits` (`NONE`: no remote arcs lead into it).
    slot: u32,
    /// Whether remote arcs leave the current node.
    out: bool,
    /// One past the location's last node: some have not arrived while the cursor is
    /// below it.
    end: usize,
    /// Arrived nodes.
    queue: Ring,
}

/// An arrived node waiting in its location's queue.
#[derive(Clone, Copy)]
struct Queued {
    node: u32,
    /// Its slot in `Sim::waits`, `NONE` when no remote arcs lead into it.
    slot: u32,
    /// Its local weight, with `HAS_OUT` when remote arcs leave it.
    w: u64,
}

/// A first-in first-out queue of arrived nodes in a ring of a power-of-two size.
#[derive(Default)]
struct Ring {
    buf: Vec<Queued>,
    head: usize,
    len: usize,
}

impl Ring {
    #[inline]
    fn push(&mut self, q: Queued) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let mask = self.buf.len() - 1;
        self.buf[(self.head + self.len) & mask] = q;
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self) -> Option<Queued> {
        if self.len == 0 {
            return None;
        }
        let q = self.buf[self.head];
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        Some(q)
    }

    #[cold]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(8);
        let mut buf = Vec::with_capacity(cap);
        let mask = self.buf.len().wrapping_sub(1);
        buf.extend((0..self.len).map(|k| self.buf[(self.head + k) & mask]));
        buf.resize(cap, Queued { node: NONE, slot: NONE, w: 0 });
        self.buf = buf;
        self.head = 0;
    }
}

/// A queued node with remote arcs out of it (above every local weight, which is not
/// negative).
const HAS_OUT: u64 = 1 << 63;

struct Group {
    /// The time the group's state is advanced to.
    t: f64,
    /// Virtual time: CPU time each runnable location has received.
    v: f64,
    /// Time during which a location of the group was runnable.
    busy: f64,
    n: u32,
    /// Locations that wait and spin, taking their share of the processor.
    spinning: u32,
    /// Runnable locations: the virtual time their work ends (bits) above the location.
    heap: RunQueue,
    version: u32,
    /// The group's last reported node in the GAG, its time and busy time.
    last: (u32, f64, f64),
    /// Time passed with nothing runnable since the last reported node.
    idle: bool,
    /// With `Sharing::Slices`, the slice in ns (else 0), the runnable locations in
    /// turn with the CPU time each still needs (the first runs), and what is left of
    /// the first's slice.
    slice: f64,
    turns: std::collections::VecDeque<(u32, f64)>,
    slice_left: f64,
}

impl Group {
    #[inline]
    fn advance(&mut self, t: f64) {
        // In slices: the first in turn has run since the last advance.
        if self.slice > 0.0 {
            if t > self.t {
                let dt = t - self.t;
                match self.turns.front_mut() {
                    Some(h) => {
                        h.1 -= dt;
                        self.slice_left -= dt;
                        self.busy += dt;
                    }
                    None => self.idle = true,
                }
                self.t = t;
            }
            return;
        }
        if t > self.t {
            if self.n == 0 {
                self.idle = true;
            } else {
                let dt = t - self.t;
                let sharing = self.n + self.spinning;
                // Dividing by one is exact: skip it (one process per processor).
                self.v += if sharing == 1 { dt } else { dt / sharing as f64 };
                self.busy += dt;
            }
            self.t = t;
        }
    }

    /// The time the first runnable location of the group finishes its work.
    #[inline]
    fn next(&self) -> Option<f64> {
        if self.slice > 0.0 {
            return self.turns.front().map(|h| {
                self.t + if self.turns.len() == 1 { h.1 } else { h.1.min(self.slice_left) }.max(0.0)
            });
        }
        self.heap.peek().map(|k| {
            let left = (f64::from_bits((k >> 64) as u64) - self.v).max(0.0);
            let sharing = self.n + self.spinning;
            self.t + if sharing == 1 { left } else { left * sharing as f64 }
        })
    }
}

/// The runnable locations of a group, smallest key first: the smallest apart, the
/// others in a heap, so a processor with one runnable location (one process per
/// processor) never sifts. Keys are distinct (the location is in them).
struct RunQueue {
    /// The smallest key, `EMPTY` when there is none.
    first: u128,
    rest: BinaryHeap<Reverse<u128>>,
}

const EMPTY: u128 = u128::MAX;

impl Default for RunQueue {
    fn default() -> Self {
        RunQueue { first: EMPTY, rest: BinaryHeap::new() }
    }
}

impl RunQueue {
    #[inline]
    fn peek(&self) -> Option<u128> {
        (self.first != EMPTY).then_some(self.first)
    }

    #[inline]
    fn push(&mut self, k: u128) {
        if self.first == EMPTY {
            self.first = k;
        } else if k < self.first {
            self.rest.push(Reverse(std::mem::replace(&mut self.first, k)));
        } else {
            self.rest.push(Reverse(k));
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<u128> {
        if self.first == EMPTY {
            return None;
        }
        let k = self.first;
        self.first = if self.rest.is_empty() { EMPTY } else { self.rest.pop().map_or(EMPTY, |Reverse(x)| x) };
        Some(k)
    }
}

/// Remote arcs into an arrived node that is not reported.
#[derive(Clone, Copy)]
struct Wait {
    ready: f64,
    pending: u32,
    node: u32,
    lo: u32,
    hi: u32,
}

/// An origin of remote arcs whose targets have not all arrived.
#[derive(Clone, Copy)]
enum Link {
    /// Reported at `t`; `left` arcs still to arrive (255: many, kept for good).
    Sent { t: f64, left: u8 },
    /// Not reported: the arrived targets waiting for it, a list in `Sim::waiters`.
    Waiting { head: u32, tail: u32 },
}

/// The links of origins.
type Links = InFlight<Link>;

/// An arrived target waiting for an unreported origin: its slot in `Sim::waits`, the
/// arc's weight, and the next waiter of the same origin.
#[derive(Clone, Copy)]
struct Waiter {
    aw: f64,
    slot: u32,
    next: u32,
    /// The arc, whose weight a contended network knows only once its origin is
    /// reported.
    arc: u32,
}

/// Whether a message from location `f` to `to` is local on the network model `n`: both
/// ends share a processor of the placement (`group_of_loc`), unless the model says
/// otherwise.
#[inline]
fn message_is_local(p: &Pag, group_of_loc: &[u32], n: &Network, f: u32, to: u32) -> bool {
    f != NONE
        && to != NONE
        && match n.local.unwrap_or(Local::Processor) {
            Local::Processor => group_of_loc.get(f as usize) == group_of_loc.get(to as usize),
            other => p.is_local(other, f, to),
        }
}

/// A message arc as its sender meets it: its origin node, the arc, and the target's
/// location (read once here, in arc order, rather than from a random place per send).
#[derive(Clone, Copy, Default)]
struct Send {
    origin: u32,
    arc: u32,
    to: u32,
}

/// The links, buses and connections of a network model: when each link and bus is
/// free, and which processes have connected.
struct LinksModel {
    /// Message arcs by the origin's location, then the origin, then the arc. A
    /// location reports its nodes in order, so each location's cursor into its
    /// stretch only moves forward.
    sends: SpillVec<Send>,
    /// Per location, its cursor into `sends` and the end of its stretch.
    cursor: Vec<(u32, u32)>,
    /// Per message arc in flight, its time from the send to the arrival, from the
    /// send's report until its last read (the target's report with GAG output, else
    /// when the target takes it).
    delay: InFlight<f64>,
    /// Per location, the node whose links its messages take.
    node_of_loc: Vec<u32>,
    links_out: usize,
    links_in: usize,
    /// When each outgoing link of each node is free (`links_out` a node), then each
    /// incoming one, then each bus.
    out_free: Vec<f64>,
    in_free: Vec<f64>,
    /// When each bus is free (the bits of non-negative times order as the times).
    bus_free: BinaryHeap<Reverse<u64>>,
    /// What the first remote message between two processes waits for their
    /// connection, ns, and the pairs of processes connected so far.
    connect: f64,
    connected: rustc_hash::FxHashSet<(u32, u32)>,
}

impl LinksModel {
    fn new(pag: &Pag, net: &Network, group_of_loc: &[u32]) -> LinksModel {
        // The message arcs bucketed by the origin's location (arcs come in target
        // order, and an origin lies near its targets, so these reads stay close), then
        // each location's stretch sorted by origin: small sorts of nearly sorted runs.
        let locs = pag.defs.locations.len();
        let origin_loc = |a: usize| pag.loc[pag.arc_from[a] as usize] as usize;
        let messages = || (0..pag.arcs()).filter(|&a| pag.arc_kind[a] == ArcKind::Message);
        let mut cursor = vec![(0u32, 0u32); locs];
        for a in messages() {
            if let Some(c) = cursor.get_mut(origin_loc(a)) {
                c.1 += 1;
            }
        }
        let mut at = 0u32;
        for c in &mut cursor {
            let n = c.1;
            *c = (at, at);
            at += n;
        }
        let mut sends = filled_in(at as usize, Send::default(), pag.arena());
        // Short where the graph's file is full: `Sim::new` says so once this returns.
        if sends.len() == at as usize {
            for a in messages() {
                if let Some(c) = cursor.get_mut(origin_loc(a)) {
                    let to = pag.loc[pag.arc_to[a] as usize];
                    sends[c.1 as usize] = Send { origin: pag.arc_from[a], arc: a as u32, to };
                    c.1 += 1;
                }
            }
            for &(from, end) in &cursor {
                sort_nearly_sorted(&mut sends[from as usize..end as usize]);
            }
        }
        let node_of_loc: Vec<u32> = (0..pag.defs.locations.len() as u32)
            .map(|l| match net.node {
                NodeOf::Machine => pag.machine_of(l),
                NodeOf::Processor => group_of_loc.get(l as usize).copied().unwrap_or(0),
            })
            .collect();
        let nodes = node_of_loc.iter().map(|&n| n as usize + 1).max().unwrap_or(0);
        let (lo, li) = (net.links_out.unwrap_or(0) as usize, net.links_in.unwrap_or(0) as usize);
        LinksModel {
            sends,
            cursor,
            // In flight, message arcs spread wider in arc order than origins do.
            delay: InFlight::with_places(1 << 16, 0.0),
            node_of_loc,
            links_out: lo,
            links_in: li,
            out_free: vec![0.0; nodes * lo],
            in_free: vec![0.0; nodes * li],
            bus_free: (0..net.buses.unwrap_or(0)).map(|_| Reverse(0)).collect(),
            connect: net.connect(),
            connected: Default::default(),
        }
    }

    /// Asks for location `l`'s next sends, which it reads when the node it now runs is
    /// reported: a cache miss otherwise, as every other location's sends come between.
    #[inline(always)]
    fn prefetch_sends(&self, l: u32) {
        if let Some(&(k, _)) = self.cursor.get(l as usize) {
            prefetch(self.sends.as_ptr().wrapping_add(k as usize));
        }
    }

    /// A transfer of `wire` ns from node `src` to `dst`, sent at `t`: it starts when an
    /// outgoing link of `src`, an incoming one of `dst` and a bus are free, and holds
    /// them for `wire`. Returns its start.
    fn take(&mut self, t: f64, src: u32, dst: u32, wire: f64) -> f64 {
        fn earliest(v: &[f64]) -> Option<usize> {
            (0..v.len()).min_by(|&a, &b| v[a].total_cmp(&v[b]))
        }
        let out = &mut self.out_free[src as usize * self.links_out..][..self.links_out];
        let o = earliest(out);
        let ins = &mut self.in_free[dst as usize * self.links_in..][..self.links_in];
        let i = earliest(ins);
        let b = self.bus_free.peek().map(|r| f64::from_bits(r.0));
        let mut start = t;
        if let Some(o) = o {
            start = start.max(out[o]);
        }
        if let Some(i) = i {
            start = start.max(ins[i]);
        }
        if let Some(b) = b {
            start = start.max(b);
        }
        let end = start + wire;
        if let Some(o) = o {
            self.out_free[src as usize * self.links_out + o] = end;
        }
        if let Some(i) = i {
            self.in_free[dst as usize * self.links_in + i] = end;
        }
        if b.is_some() {
            // The earliest bus is the one taken: replaced in place, one sift.
            if let Some(mut top) = self.bus_free.peek_mut() {
                *top = Reverse(end.to_bits());
            }
        }
        start
    }
}

/// Sorts a location's sends by origin, then arc. They come in arc order (by target),
/// where each origin lies a few places from where it belongs: an insertion sort, unless
/// it meets more disorder than that, then a general sort.
fn sort_nearly_sorted(sends: &mut [Send]) {
    let key = |s: &Send| (s.origin as u64) << 32 | s.arc as u64;
    let mut moves = 0usize;
    for i in 1..sends.len() {
        let x = sends[i];
        let mut j = i;
        while j > 0 && key(&sends[j - 1]) > key(&x) {
            sends[j] = sends[j - 1];
            j -= 1;
        }
        sends[j] = x;
        moves += i - j;
        if moves > 8 * sends.len() {
            sends.sort_unstable_by_key(key);
            return;
        }
    }
}

/// Items of the global agenda.
const GROUP: u64 = 0;
const UNBLOCK: u64 = 1;

struct Sim<'a> {
    pag: &'a Pag,
    local: Weights<'a>,
    zero_ctx: Vec<bool>,
    any_zero: bool,
    net: Option<&'a Network>,
    /// Process count per collective instance (virtual node), when the network model
    /// weighs collectives.
    coll_procs: rustc_hash::FxHashMap<u32, u32>,
    /// The links and buses messages queue for, when the model has them.
    links_model: Option<LinksModel>,
    spin: bool,
    group_of_loc: Vec<u32>,
    locs: Vec<Loc>,
    groups: Vec<Group>,
    /// Time bits above the item, which is `kind << 63 | version << 32 | id`; ties go to
    /// the smaller item, so the order is fixed.
    agenda: BinaryHeap<Reverse<u128>>,
    now: f64,
    cursor: usize,
    arc_cursor: usize,
    /// Remote arcs out of each node not yet consumed (255: many, kept for good).
    out_left: SpillVec<u8>,
    /// Origins of remote arcs whose targets have not all arrived.
    links: Links,
    /// Slab of waiters (lists of `Link::Waiting`) and its free list.
    waiters: Vec<Waiter>,
    free_waiter: u32,
    /// Slab of the remote arcs into arrived, unreported nodes, and its free slots.
    waits: Vec<Wait>,
    free_waits: Vec<u32>,
    /// Virtual nodes ready to be reported, with their slots.
    virt: Vec<(u32, u32)>,
    dirty: Vec<u32>,
    /// The group whose completions `run` is handling: it reschedules itself, so it is
    /// not put in `dirty`.
    stepping: u32,
    reported: u64,
    max_in_flight: u64,
    end: f64,
    gag: Option<GagOut>,
    /// Server loops that take requests as they arrive (`Wildcards::Arrival`), per
    /// location the index of its loop (empty when there are none), and per request's
    /// send its loop and request.
    serving: Vec<Serving>,
    serving_of: Vec<u32>,
    request_of: FxHashMap<u32, (u32, u32)>,
}

/// Where a server loop is in its location's nodes (positions among them).
#[derive(Clone, Copy, Debug)]
enum Plan {
    /// Before the first request's receive.
    Before(u32),
    /// Choosing the request for the `i`-th receive.
    Choose(u32),
    /// Serving request `k` at the `i`-th receive.
    Serve {
        k: u32,
        pos: u32,
        i: u32,
    },
    /// What follows the `i`-th service up to the next receive (it stays in place).
    After {
        i: u32,
        pos: u32,
    },
    Done,
}

/// A server loop as the simulation runs it.
struct Serving {
    shape: ServerLoop,
    /// When each request arrives, once its send is reported (NaN before).
    arrival: Vec<f64>,
    /// Per source process, its requests in order and how many are served: a source's
    /// requests are taken in their order (MPI's messages do not overtake).
    by_source: FxHashMap<u32, (Vec<u32>, usize)>,
    plan: Plan,
    /// The location's arrived nodes not yet run, by position, and how many arrived.
    got: Vec<Option<Queued>>,
    fetched: usize,
    /// Tells the wake-ups of the present wait from stale ones (never 0).
    epoch: u32,
}

impl Serving {
    fn new(shape: ServerLoop) -> Serving {
        let mut by_source: FxHashMap<u32, (Vec<u32>, usize)> = FxHashMap::default();
        for (k, r) in shape.requests.iter().enumerate() {
            by_source.entry(r.source).or_default().0.push(k as u32);
        }
        Serving {
            // A request sent before the stretch is there from its start.
            arrival: shape.requests.iter().map(|r| if r.origin == NONE { 0.0 } else { f64::NAN }).collect(),
            by_source,
            plan: Plan::Before(0),
            got: vec![None; shape.nodes.len()],
            fetched: 0,
            epoch: 1,
            shape,
        }
    }

    /// The request to serve at `t`: of each source's next, the first to arrive (the
    /// earlier recorded on a tie), once it has. Else when the first known one arrives
    /// (`None`: none is sent yet).
    fn choose(&mut self, t: f64) -> Result<u32, Option<f64>> {
        let mut best: Option<(f64, u32, u32)> = None;
        for (&source, (list, served)) in &self.by_source {
            let Some(&k) = list.get(*served) else { continue };
            let a = self.arrival[k as usize];
            if !a.is_nan() && best.is_none_or(|(ba, bk, _)| (a, k) < (ba, bk)) {
                best = Some((a, k, source));
            }
        }
        match best {
            Some((a, k, source)) if a <= t => {
                if let Some(s) = self.by_source.get_mut(&source) {
                    s.1 += 1;
                }
                Ok(k)
            }
            other => Err(other.map(|b| b.0)),
        }
    }
}

/// What a location runs next.
enum Next {
    Node(Queued),
    Done,
    /// A server loop waits for a request (until when the first known one arrives).
    Wait(Option<f64>),
}

struct GagOut {
    pag: Pag,
    id: SpillVec<u32>,
}

/// The local weights a simulation runs with: the PAG's (or a move's), or its own copy
/// with the network's overhead added, beside the PAG (in its file where it has one).
enum Weights<'a> {
    Of(&'a [i64]),
    Own(SpillVec<i64>),
}

impl std::ops::Deref for Weights<'_> {
    type Target = [i64];
    #[inline]
    fn deref(&self) -> &[i64] {
        match self {
            Weights::Of(w) => w,
            Weights::Own(w) => w,
        }
    }
}

#[inline]
fn round(t: f64) -> i64 {
    t.round() as i64
}

/// An agenda key: time bits (times are not negative, so the bits order as the times),
/// then kind, version and id.
#[inline]
fn agenda_key(t: f64, kind: u64, id: u32, version: u32) -> u128 {
    let item = kind << 63 | ((version & 0x7fff_ffff) as u64) << 32 | id as u64;
    (t.to_bits() as u128) << 64 | item as u128
}

/// A waiter entry for the target in `slot`, taken from the free list if it can.
#[inline]
fn new_waiter(waiters: &mut Vec<Waiter>, free: &mut u32, slot: u32, aw: f64, arc: u32) -> u32 {
    let w = Waiter { aw, slot, next: NONE, arc };
    if *free != NONE {
        let k = *free;
        *free = waiters[k as usize].next;
        waiters[k as usize] = w;
        k
    } else {
        waiters.push(w);
        (waiters.len() - 1) as u32
    }
}

impl<'a> Sim<'a> {
    fn new(pag: &'a Pag, place: &Placement, costs: &'a Costs, gag: bool) -> Result<Self> {
        if pag.mode != Mode::Cpu {
            return Err(Error::Usage(
                "the Group Activity Graph needs a PAG weighted in cpu mode (spoor-pag --weight cpu)".into(),
            ));
        }
        if place.group_of.len() != pag.defs.processes.len() {
            return Err(Error::Usage(format!(
                "the placement has {} processes, the trace {}",
                place.group_of.len(),
                pag.defs.processes.len()
            )));
        }
        if costs.waits == Waits::Spin && costs.sharing != Sharing::Equal {
            return Err(Error::Usage(
                "--waits spin shares a processor equally among the runnable and spinning locations: \
                 it needs --sharing equal"
                    .into(),
            ));
        }
        pag.spill_error()?;
        let mut local = Weights::Of(costs.local.unwrap_or(&pag.weight));
        if local.len() != pag.nodes() {
            return Err(Error::Usage("the local weights do not fit the PAG".into()));
        }
        if let Some(net) = costs.net.filter(|n| n.overhead_ns > 0) {
            let mut w = SpillVec::with_capacity_in(local.len(), pag.arena());
            w.extend_from_slice(&local);
            pag.spill_error()?;
            for i in pag.blocking_call_ends() {
                w[i] += net.overhead_ns;
            }
            local = Weights::Own(w);
        }
        let group_of_loc = place.group_of_locations(pag);
        let coll_procs = match costs.net {
            Some(_) => spoor_graph::net::collective_procs(pag),
            None => Default::default(),
        };
        // Two tables of the arcs, each a pass over them and fresh memory: made side by side.
        let (links_model, out_left) = rayon::join(
            || costs.net.filter(|n| n.per_send()).map(|n| LinksModel::new(pag, n, &group_of_loc)),
            || pag.remote_arcs_out(),
        );
        let serving: Vec<Serving> = match costs.wildcards {
            Wildcards::Arrival => server_loops(pag).into_iter().map(Serving::new).collect(),
            Wildcards::Recorded => Vec::new(),
        };
        let mut serving_of = Vec::new();
        let mut request_of = FxHashMap::default();
        if !serving.is_empty() {
            serving_of = vec![NONE; pag.defs.locations.len()];
            for (s, sv) in serving.iter().enumerate() {
                serving_of[sv.shape.loc as usize] = s as u32;
                for (k, r) in sv.shape.requests.iter().enumerate().filter(|(_, r)| r.origin != NONE) {
                    request_of.insert(r.origin, (s as u32, k as u32));
                }
            }
        }
        let mut locs: Vec<Loc> = group_of_loc
            .iter()
            .map(|&g| Loc {
                node: NONE,
                state: LocState::Starting,
                group: g,
                slot: NONE,
                out: false,
                end: 0,
                queue: Ring::default(),
            })
            .collect();
        // Each location's last node, from the back until every location has one.
        let mut unseen = locs.len();
        for (i, &l) in pag.loc.iter().enumerate().rev() {
            if unseen == 0 {
                break;
            }
            if let Some(loc) = locs.get_mut(l as usize) {
                if loc.end == 0 {
                    loc.end = i + 1;
                    unseen -= 1;
                }
            }
        }
        let zero_ctx = pag.zeroed_contexts(&costs.zero, Reach::inclusive_if(costs.zero_inclusive));
        let any_zero = zero_ctx.iter().any(|&z| z);
        let groups = (0..place.groups())
            .map(|_| Group {
                t: 0.0,
                v: 0.0,
                busy: 0.0,
                n: 0,
                spinning: 0,
                heap: RunQueue::default(),
                slice: match costs.sharing {
                    Sharing::Slices(ns) => ns,
                    Sharing::Equal => 0.0,
                },
                turns: Default::default(),
                slice_left: 0.0,
                version: 0,
                last: (NONE, 0.0, 0.0),
                idle: false,
            })
            .collect();
        // A graph in a file has its GAG made in the same file.
        let gag = gag.then(|| GagOut {
            pag: Pag {
                mode: Mode::Cpu,
                t0: pag.t0,
                contexts: pag.contexts.clone(),
                notes: pag.notes.clone(),
                ..Pag::in_arena(pag.arena())
            },
            id: filled_in(pag.nodes(), NONE, pag.arena()),
        });
        // Tables made beside a graph whose file is full are short (the network's sends,
        // the arcs out, the GAG's ids; none read before here): stop.
        pag.spill_error()?;
        Ok(Sim {
            pag,
            local,
            zero_ctx,
            any_zero,
            net: costs.net,
            coll_procs,
            links_model,
            spin: costs.waits == Waits::Spin,
            group_of_loc,
            locs,
            groups,
            agenda: BinaryHeap::new(),
            now: 0.0,
            cursor: 0,
            arc_cursor: 0,
            out_left,
            links: Links::new(Link::Waiting { head: NONE, tail: NONE }),
            waiters: Vec::new(),
            free_waiter: NONE,
            waits: Vec::new(),
            free_waits: Vec::new(),
            virt: Vec::new(),
            dirty: Vec::new(),
            stepping: NONE,
            reported: 0,
            max_in_flight: 0,
            end: 0.0,
            gag,
            serving,
            serving_of,
            request_of,
        })
    }

    fn prediction(&self) -> Prediction {
        Prediction { time_ns: round(self.end), events: self.reported, max_in_flight: self.max_in_flight }
    }

    #[inline]
    fn local_weight(&self, i: u32) -> i64 {
        if self.any_zero && self.zero_ctx.get(self.pag.ctx[i as usize] as usize).copied().unwrap_or(false) {
            0
        } else {
            self.local[i as usize].max(0)
        }
    }

    #[inline(always)]
    fn arc_weight(&self, a: usize) -> f64 {
        let p = self.pag;
        match self.net {
            Some(n) if p.arc_kind[a] == ArcKind::Message => match &self.links_model {
                Some(m) => m.delay.get(a as u32).unwrap_or(0.0),
                None => n.time(p.arc_bytes[a], self.is_local(n, a)),
            },
            Some(n) if p.arc_kind[a] == ArcKind::CollOut => {
                n.collective_arc(p, &self.coll_procs, a).unwrap_or(p.arc_weight[a].max(0) as f64)
            }
            _ => p.arc_weight[a].max(0) as f64,
        }
    }

    /// Whether message arc `a` is local on the network model `n`.
    #[inline]
    fn is_local(&self, n: &Network, a: usize) -> bool {
        let p = self.pag;
        message_is_local(p, &self.group_of_loc, n, p.loc[p.arc_from[a] as usize], p.loc[p.arc_to[a] as usize])
    }

    /// The messages node `x` of location `l` sends, at `t`: each takes its links and bus
    /// when they are free, in the order of the sends (formats/network.md, "Messages"),
    /// and its delay is known from then on.
    #[inline(never)]
    fn send_messages(&mut self, x: u32, l: u32, t: f64) {
        let (Some(n), Some(m)) = (self.net, self.links_model.as_mut()) else { return };
        let p = self.pag;
        // A virtual node (no location) sends no message.
        let Some(&(mut k, end)) = m.cursor.get(l as usize) else { return };
        while k < end && m.sends[k as usize].origin < x {
            k += 1;
        }
        while k < end && m.sends[k as usize].origin == x {
            let Send { arc: a, to, .. } = m.sends[k as usize];
            k += 1;
            let bytes = p.arc_bytes[a as usize];
            let delay = if message_is_local(p, &self.group_of_loc, n, l, to) {
                n.time(bytes, true)
            } else {
                let (src, dst) = (m.node_of_loc[l as usize], m.node_of_loc[to as usize]);
                let mut ready = t;
                if m.connect > 0.0 && m.connected.insert(p.process_pair(l, to)) {
                    ready += m.connect;
                }
                let start = m.take(ready, src, dst, n.wire(bytes, false));
                start - t + n.time(bytes, false)
            };
            m.delay.insert(a, delay);
        }
        m.cursor[l as usize].0 = k;
        // The location's next message comes round after every other location's: ask
        // for what it reads now, which would otherwise be a cache miss.
        if let Some(s) = m.sends.get(k as usize).filter(|_| k < end) {
            prefetch(p.arc_bytes.as_ptr().wrapping_add(s.arc as usize));
        }
    }

    #[inline]
    fn push(&mut self, t: f64, kind: u64, id: u32, version: u32) {
        self.agenda.push(Reverse(agenda_key(t, kind, id, version)));
    }

    /// The next node of the PAG arrives: its remote arcs are joined to their origins.
    /// A node of location `want`, whose queue is empty, is handed back instead of
    /// queued.
    #[inline(always)]
    fn arrive(&mut self, want: u32) -> Option<Queued> {
        let i = self.cursor as u32;
        self.cursor += 1;
        let inflight = self.cursor as u64 - self.reported;
        if inflight > self.max_in_flight {
            self.max_in_flight = inflight;
        }
        let p = self.pag;
        let l = p.loc[i as usize];
        let has_arcs = p.arc_to.get(self.arc_cursor).is_some_and(|&to| to <= i);
        let slot = if has_arcs { self.join_arcs(i, l) } else { NONE };
        if l == NONE {
            if !has_arcs {
                self.virt.push((i, NONE));
            }
            return None;
        }
        // What the location needs of the node later, read now while it is in cache.
        let w = self.local_weight(i) as u64;
        let out = if self.out_left[i as usize] > 0 { HAS_OUT } else { 0 };
        let q = Queued { node: i, slot, w: w | out };
        if l == want {
            return Some(q);
        }
        self.locs[l as usize].queue.push(q);
        None
    }

    /// The remote arcs into the arriving node `i` of location `l` (`NONE`: virtual):
    /// joined to their reported origins, or waiting for the others. Returns the node's
    /// slot in `waits`.
    #[inline(never)]
    fn join_arcs(&mut self, i: u32, l: u32) -> u32 {
        let p = self.pag;
        let lo = self.arc_cursor;
        while self.arc_cursor < p.arc_to.len() && p.arc_to[self.arc_cursor] <= i {
            self.arc_cursor += 1;
        }
        let hi = self.arc_cursor;
        let slot = match self.free_waits.pop() {
            Some(s) => s,
            None => {
                self.waits.push(Wait { ready: 0.0, pending: 0, node: 0, lo: 0, hi: 0 });
                (self.waits.len() - 1) as u32
            }
        };
        let mut w = Wait { ready: 0.0, pending: 0, node: i, lo: lo as u32, hi: hi as u32 };
        for a in lo..hi {
            let from = p.arc_from[a];
            let aw = self.arc_weight(a);
            match self.links.get_mut(from) {
                Some(Link::Sent { t, left }) => {
                    w.ready = w.ready.max(*t + aw);
                    if let (Some(m), None) = (self.links_model.as_mut(), &self.gag) {
                        m.delay.remove(a as u32);
                    }
                    if *left != u8::MAX {
                        *left -= 1;
                        if *left == 0 {
                            self.links.remove(from);
                        }
                    }
                }
                Some(Link::Waiting { tail, .. }) => {
                    let k = new_waiter(&mut self.waiters, &mut self.free_waiter, slot, aw, a as u32);
                    self.waiters[*tail as usize].next = k;
                    *tail = k;
                    w.pending += 1;
                }
                None => {
                    let k = new_waiter(&mut self.waiters, &mut self.free_waiter, slot, aw, a as u32);
                    self.links.insert(from, Link::Waiting { head: k, tail: k });
                    w.pending += 1;
                }
            }
        }
        self.waits[slot as usize] = w;
        if l == NONE && w.pending == 0 {
            self.virt.push((i, slot));
        }
        slot
    }

    #[inline]
    fn next_node(&mut self, l: u32) -> Option<Queued> {
        if let Some(x) = self.locs[l as usize].queue.pop() {
            return Some(x);
        }
        loop {
            let end = self.locs[l as usize].end;
            if self.cursor >= end {
                return None;
            }
            if let Some(q) = self.pull(l, end) {
                return Some(q);
            }
            if self.cursor >= end {
                return None;
            }
            // A node with remote arcs into it, or a virtual one.
            let q = self.arrive(l);
            if !self.virt.is_empty() {
                self.drain_virtual();
            }
            if q.is_some() {
                return q;
            }
        }
    }

    /// Nodes of real locations without remote arcs into them arrive, below `end`, until
    /// one of location `l` does (handed back) or a node needs `arrive`. The same as
    /// `arrive` for each, with the state kept in registers: the most in flight is the
    /// last, as no node is reported meanwhile.
    #[inline(always)]
    fn pull(&mut self, l: u32, end: usize) -> Option<Queued> {
        let p = self.pag;
        let stop = p.arc_to.get(self.arc_cursor).map_or(end, |&to| end.min(to as usize));
        let start = self.cursor;
        if start >= stop {
            return None;
        }
        let loc_of = &p.loc[start..stop];
        let local = &self.local[start..stop];
        let out_left = &self.out_left[start..stop];
        let (any_zero, zero_ctx, ctx) = (self.any_zero, &self.zero_ctx, &p.ctx);
        let locs = &mut self.locs;
        let mut found = None;
        let mut k = 0;
        while k < loc_of.len() {
            let lx = loc_of[k];
            if lx == NONE {
                break;
            }
            let i = start + k;
            k += 1;
            let w = if any_zero && zero_ctx.get(ctx[i] as usize).copied().unwrap_or(false) {
                0
            } else {
                local[k - 1].max(0) as u64
            };
            let out = if out_left[k - 1] > 0 { HAS_OUT } else { 0 };
            let q = Queued { node: i as u32, slot: NONE, w: w | out };
            if lx == l {
                found = Some(q);
                break;
            }
            locs[lx as usize].queue.push(q);
        }
        self.cursor = start + k;
        let inflight = self.cursor as u64 - self.reported;
        if inflight > self.max_in_flight {
            self.max_in_flight = inflight;
        }
        found
    }

    /// Reports node `x` at time `t`: it joins the GAG, and the remote arcs out of it
    /// release their targets. `slot` holds the remote arcs into it (`NONE`: none), and
    /// `out` says whether remote arcs may leave it.
    #[inline(always)]
    fn report(&mut self, x: u32, t: f64, l: u32, slot: u32, out: bool) {
        self.reported += 1;
        if l != NONE && t > self.end {
            self.end = t;
        }
        if self.gag.is_some() {
            let w = (slot != NONE).then(|| self.waits[slot as usize]);
            self.gag_node(x, t, l, w);
        }
        if slot != NONE {
            self.free_waits.push(slot);
        }
        if out {
            self.release(x, l, t);
        }
    }

    /// The remote arcs out of node `x`, reported at `t`: the arrived targets waiting
    /// for it get their times, the others will find it in `links`.
    #[inline(never)]
    fn release(&mut self, x: u32, l: u32, t: f64) {
        if self.links_model.is_some() {
            self.send_messages(x, l, t);
        }
        if !self.request_of.is_empty() {
            if let Some(&(s, k)) = self.request_of.get(&x) {
                self.request_sent(s as usize, k, t);
            }
        }
        let out = self.out_left[x as usize];
        match self.links.get_mut(x) {
            Some(link) => {
                let Link::Waiting { head, .. } = *link else {
                    // Reported twice: cannot happen, each node is reported once.
                    return;
                };
                let mut used = 0u32;
                let mut k = head;
                while k != NONE {
                    let wr = self.waiters[k as usize];
                    self.waiters[k as usize].next = self.free_waiter;
                    self.free_waiter = k;
                    k = wr.next;
                    used += 1;
                    self.waits[wr.slot as usize].pending -= 1;
                    let aw = match &self.links_model {
                        Some(m) => m.delay.get(wr.arc).unwrap_or(wr.aw),
                        None => wr.aw,
                    };
                    if let (Some(m), None) = (self.links_model.as_mut(), &self.gag) {
                        m.delay.remove(wr.arc);
                    }
                    let wt = &mut self.waits[wr.slot as usize];
                    wt.ready = wt.ready.max(t + aw);
                    if wt.pending == 0 {
                        let (ready, tgt) = (wt.ready, wt.node);
                        let tl = self.pag.loc[tgt as usize];
                        if tl == NONE {
                            self.virt.push((tgt, wr.slot));
                        } else {
                            let loc = &self.locs[tl as usize];
                            if loc.state == LocState::Blocked && loc.node == tgt {
                                self.agenda.push(Reverse(agenda_key(ready.max(self.now), UNBLOCK, tl, 0)));
                            }
                        }
                    }
                }
                if out == u8::MAX {
                    *link = Link::Sent { t, left: u8::MAX };
                } else if (out as u32) > used {
                    *link = Link::Sent { t, left: (out as u32 - used) as u8 };
                } else {
                    self.links.remove(x);
                }
            }
            None => {
                if out > 0 {
                    self.links.insert(x, Link::Sent { t, left: out });
                }
            }
        }
    }

    fn drain_virtual(&mut self) {
        while let Some((v, slot)) = self.virt.pop() {
            let t = if slot == NONE { 0.0 } else { self.waits[slot as usize].ready };
            self.report(v, t, NONE, slot, true);
        }
    }

    fn gag_node(&mut self, x: u32, t: f64, l: u32, w: Option<Wait>) {
        let p = self.pag;
        // A clock-offset sample stays a leaf, as in the PAG: it hangs from the group's
        // last node, weighs nothing and the next node's arc covers its time.
        let sample = p.kind[x as usize] == CLOCK_OFFSET;
        let (g, prev, weight) = if l == NONE {
            (NONE, NONE, 0)
        } else if sample {
            (self.group_of_loc[l as usize], self.groups[self.group_of_loc[l as usize] as usize].last.0, 0)
        } else {
            let g = self.group_of_loc[l as usize];
            let gr = &self.groups[g as usize];
            let (last, lt, lb) = gr.last;
            // Busy all along: the time difference, rounded as the times are (so the
            // chain adds up to the rounded time). After an idle stretch the node is the
            // one a remote arc released, and that arc gives its time exactly.
            let since = if last == NONE { round(t) } else { round(t) - round(lt) };
            let weight = if !gr.idle {
                since
            } else if last == NONE {
                round(gr.busy).min(since)
            } else {
                (round(gr.busy) - round(lb)).min(since)
            };
            (g, last, weight.max(0))
        };
        let out = self.gag.as_mut().expect("building a GAG");
        let id = out.pag.loc.len() as u32;
        out.id[x as usize] = id;
        out.pag.loc.push(g);
        out.pag.prev.push(prev);
        out.pag.wall.push(p.t0 + round(t));
        out.pag.weight.push(weight);
        out.pag.ctx.push(if l == NONE { 0 } else { p.ctx[x as usize] });
        out.pag.kind.push(if l == NONE { VIRTUAL } else { p.kind[x as usize] });
        if let Some(w) = w {
            for a in w.lo as usize..w.hi as usize {
                let from = out.id[p.arc_from[a] as usize];
                out.pag.arc_to.push(id);
                out.pag.arc_from.push(from);
                out.pag.arc_kind.push(p.arc_kind[a]);
                out.pag.arc_bytes.push(p.arc_bytes[a]);
                out.pag.arc_op.push(p.arc_op[a]);
            }
            for a in w.lo as usize..w.hi as usize {
                let aw = round(self.arc_weight(a));
                self.gag.as_mut().unwrap().pag.arc_weight.push(aw);
                if let Some(m) = self.links_model.as_mut() {
                    m.delay.remove(a as u32);
                }
            }
        }
        if g != NONE && !sample {
            let gr = &mut self.groups[g as usize];
            gr.last = (id, t, gr.busy);
            gr.idle = false;
        }
    }

    /// Location `l` has done the local work of its current event at time `t` (its
    /// group advanced to `t`): the event happens now, or waits for its remote arcs.
    #[inline(always)]
    fn local_done(&mut self, l: u32, t: f64) -> bool {
        let loc = &self.locs[l as usize];
        let (x, slot, out) = (loc.node, loc.slot, loc.out);
        if slot != NONE {
            let w = &self.waits[slot as usize];
            if w.pending > 0 {
                self.block(l);
                return false;
            }
            if w.ready > t {
                let ready = w.ready;
                self.block(l);
                self.push(ready, UNBLOCK, l, 0);
                return false;
            }
        }
        self.report(x, t, l, slot, out);
        if !self.virt.is_empty() {
            self.drain_virtual();
        }
        true
    }

    /// Location `l` waits for remote arcs from now on (its group advanced to now); it
    /// keeps its share of the processor when waiting spins.
    #[inline(always)]
    fn block(&mut self, l: u32) {
        self.wait_in(l, LocState::Blocked);
    }

    /// Location `l` waits from now on, in `state` (blocked, or a server loop choosing).
    #[inline(always)]
    fn wait_in(&mut self, l: u32, state: LocState) {
        let loc = &mut self.locs[l as usize];
        loc.state = state;
        if self.spin {
            let g = loc.group;
            self.groups[g as usize].spinning += 1;
            if g != self.stepping {
                self.dirty.push(g);
            }
        }
    }

    /// Location `l` stops waiting: a spinning one gives its share back.
    #[inline(always)]
    fn stop_waiting(&mut self, l: u32) {
        if self.spin {
            let g = self.locs[l as usize].group;
            self.groups[g as usize].spinning -= 1;
            self.dirty.push(g);
        }
    }

    /// Location `l` moves on to its next events from time `t` (its group advanced to
    /// `t`), reporting those that need no time, until one needs CPU time or waits.
    fn advance_location(&mut self, l: u32, t: f64) {
        loop {
            let next = match self.serving_of.get(l as usize) {
                Some(&s) if s != NONE => self.planned_next(s as usize, l, t),
                _ => self.next_node(l).map_or(Next::Done, Next::Node),
            };
            let q = match next {
                Next::Node(q) => q,
                Next::Done => {
                    self.locs[l as usize].state = LocState::Done;
                    return;
                }
                Next::Wait(at) => {
                    self.wait_for_request(l, at);
                    return;
                }
            };
            let loc = &mut self.locs[l as usize];
            loc.node = q.node;
            loc.slot = q.slot;
            loc.out = q.w & HAS_OUT != 0;
            let w = q.w & !HAS_OUT;
            if w > 0 {
                if loc.out {
                    if let Some(m) = &self.links_model {
                        m.prefetch_sends(l);
                    }
                }
                let loc = &mut self.locs[l as usize];
                loc.state = LocState::Running;
                let g = loc.group as usize;
                let gr = &mut self.groups[g];
                let vfin = gr.v + w as f64;
                if gr.slice > 0.0 {
                    gr.turns.push_back((l, w as f64));
                    if gr.turns.len() == 1 {
                        gr.slice_left = gr.slice;
                    }
                } else {
                    gr.heap.push((vfin.to_bits() as u128) << 64 | l as u128);
                }
                gr.n += 1;
                if g as u32 != self.stepping {
                    self.dirty.push(g as u32);
                }
                return;
            }
            if !self.local_done(l, t) {
                return;
            }
        }
    }

    /// A server loop's next node (`Plan`), choosing the request to serve at each
    /// receive for any source when its location gets there at `t`.
    fn planned_next(&mut self, s: usize, l: u32, t: f64) -> Next {
        loop {
            let sv = &mut self.serving[s];
            let reqs = &sv.shape.requests;
            let n = reqs.len() as u32;
            let pos = match sv.plan {
                Plan::Before(pos) if pos < reqs[0].first => {
                    sv.plan = Plan::Before(pos + 1);
                    pos
                }
                Plan::Before(_) => {
                    sv.plan = Plan::Choose(0);
                    continue;
                }
                Plan::Choose(i) => match sv.choose(t) {
                    Ok(k) => {
                        sv.plan = Plan::Serve { k, pos: sv.shape.requests[k as usize].first, i };
                        continue;
                    }
                    Err(at) => return Next::Wait(at),
                },
                Plan::Serve { k, pos, i } if pos <= reqs[k as usize].last => {
                    sv.plan = Plan::Serve { k, pos: pos + 1, i };
                    pos
                }
                Plan::Serve { i, .. } => {
                    sv.plan = Plan::After { i, pos: reqs[i as usize].last + 1 };
                    continue;
                }
                Plan::After { i, pos } => {
                    let limit = reqs.get(i as usize + 1).map_or(sv.shape.nodes.len() as u32, |r| r.first);
                    if pos < limit {
                        sv.plan = Plan::After { i, pos: pos + 1 };
                        pos
                    } else {
                        sv.plan = if i + 1 < n { Plan::Choose(i + 1) } else { Plan::Done };
                        continue;
                    }
                }
                Plan::Done => return Next::Done,
            };
            return self.fetch(s, l, pos).map_or(Next::Done, Next::Node);
        }
    }

    /// The node at position `pos` of server loop `s`'s location `l`, which arrive in
    /// order: those before it are kept until their turn.
    fn fetch(&mut self, s: usize, l: u32, pos: u32) -> Option<Queued> {
        while self.serving[s].fetched <= pos as usize {
            let q = self.next_node(l)?;
            let sv = &mut self.serving[s];
            sv.got[sv.fetched] = Some(q);
            sv.fetched += 1;
        }
        self.serving[s].got[pos as usize].take()
    }

    /// Server loop location `l` waits for a request, woken when the first known one
    /// arrives (`at`) or when one is sent; it spins meanwhile when waiting spins.
    fn wait_for_request(&mut self, l: u32, at: Option<f64>) {
        let s = self.serving_of[l as usize] as usize;
        let sv = &mut self.serving[s];
        sv.epoch = (sv.epoch % 0x7fff_ffff) + 1;
        let epoch = sv.epoch;
        self.wait_in(l, LocState::Choosing);
        if let Some(at) = at {
            self.push(at.max(self.now), UNBLOCK, l, epoch);
        }
    }

    /// Request `k` of server loop `s` is sent at `t`: when it arrives is known, and a
    /// loop waiting for a request is woken then.
    fn request_sent(&mut self, s: usize, k: u32, t: f64) {
        let arc = self.serving[s].shape.requests[k as usize].arc;
        let arrival = t + self.arc_weight(arc as usize);
        let sv = &mut self.serving[s];
        sv.arrival[k as usize] = arrival;
        let (l, epoch) = (sv.shape.loc, sv.epoch);
        if self.locs[l as usize].state == LocState::Choosing {
            self.push(arrival.max(self.now), UNBLOCK, l, epoch);
        }
    }

    /// A wake-up of server loop location `l` (`epoch`) at `t`: unless it is stale, the
    /// loop chooses again.
    fn request_arrived(&mut self, l: u32, epoch: u32, t: f64) {
        let Some(&s) = self.serving_of.get(l as usize) else { return };
        let current = self.serving.get(s as usize).map(|sv| sv.epoch);
        if self.locs[l as usize].state != LocState::Choosing || current != Some(epoch) {
            return;
        }
        self.stop_waiting(l);
        self.advance_location(l, t);
        self.reschedule(NONE);
    }

    /// The first runnable location of group `g` finishes its work at `t`.
    fn group_step(&mut self, g: u32, t: f64) {
        let gr = &mut self.groups[g as usize];
        gr.advance(t);
        let k = if gr.slice > 0.0 {
            let Some(&(hl, left)) = gr.turns.front() else { return };
            if left > 1e-6 && gr.turns.len() > 1 {
                // Its slice is over, its work not: the next one's turn.
                gr.turns.rotate_left(1);
                gr.slice_left = gr.slice;
                return;
            }
            gr.turns.pop_front();
            gr.slice_left = gr.slice;
            hl as u128
        } else {
            let Some(k) = gr.heap.pop() else { return };
            k
        };
        let l = k as u32;
        gr.n -= 1;
        if gr.n == 0 {
            // No rounding left behind: an idle group's clock restarts from its time.
            gr.v = 0.0;
        }
        // The caller reschedules the group itself.
        if self.local_done(l, t) {
            self.advance_location(l, t);
        }
    }

    fn reschedule(&mut self, except: u32) {
        while let Some(g) = self.dirty.pop() {
            if g == except {
                continue;
            }
            self.schedule(g);
        }
    }

    fn schedule(&mut self, g: u32) {
        let gr = &mut self.groups[g as usize];
        gr.version = gr.version.wrapping_add(1);
        let version = gr.version;
        if let Some(t) = gr.next() {
            self.push(t, GROUP, g, version);
        }
    }

    fn run(&mut self) -> Result<()> {
        for l in 0..self.locs.len() as u32 {
            self.advance_location(l, 0.0);
        }
        self.drain_virtual();
        self.reschedule(NONE);
        // The item to handle next when it was taken off the agenda while putting another
        // on (one sift instead of two).
        let mut next_item: Option<u128> = None;
        while let Some(key) = next_item.take().or_else(|| self.agenda.pop().map(|Reverse(x)| x)) {
            let t = f64::from_bits((key >> 64) as u64);
            let item = key as u64;
            let id = item as u32;
            let version = ((item >> 32) & 0x7fff_ffff) as u32;
            self.now = t;
            if item >> 63 == GROUP {
                if self.groups[id as usize].version & 0x7fff_ffff != version {
                    continue;
                }
                let mut t = t;
                self.stepping = id;
                loop {
                    self.group_step(id, t);
                    self.reschedule(id);
                    // Keep going in this group while nothing else comes first.
                    let gr = &mut self.groups[id as usize];
                    gr.version = gr.version.wrapping_add(1);
                    let Some(next) = gr.next() else { break };
                    let first = self.agenda.peek().map(|&Reverse(k)| f64::from_bits((k >> 64) as u64));
                    if first.is_some_and(|f| f <= next) {
                        // Put this group's next completion where the first item was.
                        let gr = &mut self.groups[id as usize];
                        gr.version = gr.version.wrapping_add(1);
                        let ours = agenda_key(next, GROUP, id, gr.version);
                        let mut top = self.agenda.peek_mut().expect("the agenda has a first item");
                        next_item = Some(std::mem::replace(&mut *top, Reverse(ours)).0);
                        break;
                    }
                    t = next;
                    self.now = t;
                }
                self.stepping = NONE;
            } else {
                let l = id;
                let g = self.locs[l as usize].group;
                self.groups[g as usize].advance(t);
                if version != 0 {
                    self.request_arrived(l, version, t);
                    continue;
                }
                if self.locs[l as usize].state != LocState::Blocked {
                    continue;
                }
                self.stop_waiting(l);
                let loc = &self.locs[l as usize];
                let (x, slot, out) = (loc.node, loc.slot, loc.out);
                self.report(x, t, l, slot, out);
                self.drain_virtual();
                self.advance_location(l, t);
                self.reschedule(NONE);
            }
        }
        // Whatever never arrived (nodes after every location's last event) arrives now.
        while self.cursor < self.pag.nodes() {
            self.arrive(NONE);
            self.drain_virtual();
        }
        if let Some(l) = self.locs.iter().position(|l| l.state != LocState::Done) {
            let loc = &self.locs[l];
            // A PAG that is not in causal order: bad input, not a usage error.
            return Err(Error::input(
                "the PAG",
                format!(
                    "the prediction is stuck: {} waits at node {} for a remote arc that never comes \
                 (is the PAG in causal order?)",
                    self.pag.defs.location_name(l as u32),
                    loc.node
                ),
            ));
        }
        Ok(())
    }

    fn finish_gag(self, place: &Placement) -> Pag {
        let src = self.pag;
        let mut out = self.gag.expect("building a GAG");
        let mut defs = Definitions {
            strings: src.defs.strings.clone(),
            apps: src.defs.apps.clone(),
            ..Definitions::default()
        };
        defs.properties = src.defs.properties.clone();
        let procs = &src.defs.processes;
        for (g, name) in place.names.iter().enumerate() {
            let members: Vec<usize> = (0..procs.len()).filter(|&p| place.group_of[p] == g as u32).collect();
            let app = members.first().map_or(0, |&p| procs[p].app);
            let m = defs.add_machine(name);
            let p = defs.add_process(name, app, m, g as u32);
            defs.add_location(name, p, 0);
        }
        if defs.apps.is_empty() {
            defs.add_app("gag");
        }
        out.pag.defs = defs;
        out.pag.phases = src
            .phases
            .iter()
            .filter_map(|m| out.id.get(m.node as usize).map(|&node| PhaseMark { node, ..*m }))
            .collect();
        out.pag.notes.push(format!(
            "Group Activity Graph of {} processes on {} processors",
            procs.len(),
            place.groups()
        ));
        out.pag
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// The run queue hands out keys smallest first, like a binary heap.
    #[test]
    fn run_queue_is_a_min_heap() {
        let mut q = RunQueue::default();
        let mut model = BinaryHeap::new();
        let mut rng = 99u64;
        for n in 0..50_000u32 {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let size = if (n / 1000) % 2 == 0 { 8 } else { 2 };
            if (rng >> 33) % 10 < 5 && model.len() < size {
                let k = ((rng >> 20) as u128 % 1000) << 64 | n as u128;
                q.push(k);
                model.push(Reverse(k));
            } else {
                assert_eq!(q.pop(), model.pop().map(|Reverse(k)| k), "at step {n}");
            }
            assert_eq!(q.peek(), model.peek().map(|&Reverse(k)| k));
        }
    }

    /// A location's sends sort as the standard sort orders them, nearly sorted (the
    /// insertion sort) or not at all (its fallback), with repeated origins.
    #[test]
    fn sends_sort_by_origin_then_arc() {
        let mut rng = 99u64;
        let mut next = |below: u32| {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 33) as u32 % below
        };
        for (n, jitter) in [(0u32, 1u32), (1, 1), (1000, 3), (1000, 40), (5000, 1_000_000)] {
            let mut sends: Vec<Send> =
                (0..n).map(|a| Send { origin: a / 2 + next(jitter), arc: a, to: next(7) }).collect();
            let mut want = sends.clone();
            want.sort_by_key(|s| (s.origin, s.arc));
            sort_nearly_sorted(&mut sends);
            let got: Vec<(u32, u32, u32)> = sends.iter().map(|s| (s.origin, s.arc, s.to)).collect();
            let want: Vec<(u32, u32, u32)> = want.iter().map(|s| (s.origin, s.arc, s.to)).collect();
            assert_eq!(got, want, "{n} sends, origins {jitter} out of place");
        }
    }

    /// The ring queue against the standard library's on a random mix of pushes and
    /// pops, through many wrap-arounds and growths.
    #[test]
    fn ring_is_first_in_first_out_like_a_vecdeque() {
        let mut ring = Ring::default();
        let mut model = VecDeque::new();
        let mut rng = 12345u64;
        for n in 0..200_000u32 {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Phases that mostly grow and phases that mostly shrink the queue.
            let grow = (n / 5000) % 2 == 0;
            let push = (rng >> 33) % 8 < if grow { 6 } else { 2 };
            if push {
                let q = Queued { node: n, slot: (rng >> 40) as u32, w: rng >> 1 };
                ring.push(q);
                model.push_back((q.node, q.slot, q.w));
            } else {
                let got = ring.pop().map(|q| (q.node, q.slot, q.w));
                assert_eq!(got, model.pop_front(), "at step {n}");
            }
            assert_eq!(ring.len, model.len());
        }
        while let Some(m) = model.pop_front() {
            assert_eq!(ring.pop().map(|q| (q.node, q.slot, q.w)), Some(m));
        }
        assert!(ring.pop().is_none());
    }
}
