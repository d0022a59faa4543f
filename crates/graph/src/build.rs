//! From an ordered trace to its PAG (formats/pag.md, "Building").
//!
//! Memory: the node arrays are reserved once from the trace's event count (huge pages
//! were tried: the kernel spent more system time on them than on small pages, in two
//! measurements). Built with distances, the builder keeps no distance per node: only the
//! newest node takes arcs, so a distance travels with what needs it later (the
//! location's state, the pending send, the collective instance), and the walk back
//! follows the winning remote arc recorded for the nodes where one won (`relax`'s tie
//! rule, applied as the arcs arrive): 8 bytes a node less.

use crate::cost::Mode;
use crate::cp::{CpOptions, Distances, Scope, NEG};
use crate::error::{Error, Result};
use crate::mem::{populate, Region};
use crate::pag::{ArcKind, Context, Pag, PhaseMark, CLOCK_OFFSET, NONE, VIRTUAL};
use crate::spilled::PagSpill;
use crate::streamed::{Gather, Winners};
use rustc_hash::FxHashMap;
use spoor_format::binary::kind::{
    COLL_BEGIN, COLL_END, ENTER, IRECV_COMPLETE, IRECV_REQUEST, ISEND, LEAVE, LOCK_ACQUIRE, LOCK_RELEASE,
    LOCK_REQUEST, PHASE_BEGIN, PHASE_END, PROCESS_BEGIN, RECV_BEGIN, RECV_END, SEND, THREAD_BEGIN,
};
use spoor_format::binary::{decode_block, flags};
use spoor_format::brief::{decode_block_brief, Brief, NO_CPU, NO_PARTNER};
use spoor_format::spill::{Arena, SpillVec};
use spoor_format::TraceReader;
use spoor_model::{CollOp, Definitions, Event, Feedback, LocId, Silent};
use std::sync::Arc;

#[derive(Clone, Copy)]
struct LocState {
    last: u32,
    ctx: u32,
    /// Inside a blocking wait (receive, collective, lock request).
    waiting: bool,
    /// The blocking call (`spoor_model::calls::blocks`) the location is inside, `NONE`
    /// when none (kept in CPU mode only).
    call: u32,
    count: u64,
    cpu: i64,
    /// Wall time of `last` (kept here: the node arrays are far away in memory).
    wall: i64,
    /// Longest distance to `last` (when distances are tracked).
    dist: i64,
    /// Inside a blocking receive posted for any source.
    any_source: bool,
}

impl LocState {
    /// A location before its first event.
    const FRESH: LocState = LocState {
        last: NONE,
        ctx: 0,
        waiting: false,
        call: NONE,
        count: 0,
        cpu: NO_CPU,
        wall: 0,
        dist: 0,
        any_source: false,
    };
}

/// A forward partner waiting for the event it names.
#[derive(Clone, Copy)]
struct Pending {
    /// The partner's index on its location.
    index: u64,
    from: Reached,
    bytes: u64,
    kind: ArcKind,
}

/// Pending partners a location keeps in its list before the rest go to a map.
const PENDING_IN_PLACE: usize = 64;

/// A node that arcs will leave: its location (`NONE` for a virtual node) and wall time
/// (kept here: the node arrays are far away in memory, or not kept at all), its longest
/// distance (when distances are tracked), and the row of its lanes' distances
/// (`NO_ROW`: none kept).
#[derive(Clone, Copy)]
struct Reached {
    node: u32,
    loc: u32,
    wall: i64,
    dist: i64,
    row: u32,
}

/// No row of lane distances.
const NO_ROW: u32 = u32::MAX;

/// The longest paths of more weightings than the measured one (`CpOptions` of the whole
/// graph: procedures zeroed or scaled, links, an ideal network), made while building as
/// the global scope's distances are: only their lengths are kept. A lane is what one
/// sweep of `cp::lengths` would give, at the cost of a few additions per node.
struct Lanes {
    n: usize,
    zero: Vec<Vec<u32>>,
    /// Per lane: (location, procedure) scaled, and the procedures scaled somewhere.
    scale: Vec<FxHashMap<(u32, u32), f64>>,
    scaled_procs: Vec<Vec<u32>>,
    links: Vec<FxHashMap<(u32, u32), Option<i64>>>,
    message_weight: Vec<Option<i64>>,
    /// Some lane weighs messages otherwise than measured.
    reweigh_messages: bool,
    /// Per context and lane (`ctx * n + lane`), as contexts are made: 0 measured, 1
    /// zeroed, 2 scaled on some locations.
    rule: Vec<u8>,
    /// Per location and lane: the distance of the location's last node.
    at_loc: Vec<i64>,
    /// The newest node's.
    newest: Vec<i64>,
    /// Rows of `n` distances of nodes that arcs still to come leave from, and free rows.
    rows: Vec<i64>,
    free: Vec<u32>,
    /// Rows to free once the event being added is done with them.
    release: Vec<u32>,
}

impl Lanes {
    /// Lanes for `opts`, or `None` when one asks for what they cannot give (a scope,
    /// a window, zeroing with callees).
    fn new(opts: &[CpOptions], locs: usize) -> Option<Lanes> {
        if opts.is_empty()
            || opts.iter().any(|o| {
                o.window.is_some() || o.zero_inclusive || o.scope.is_some_and(|s| s != Scope::Global)
            })
        {
            return None;
        }
        let n = opts.len();
        let mut scale = vec![FxHashMap::default(); n];
        let mut scaled_procs = vec![Vec::new(); n];
        for (k, o) in opts.iter().enumerate() {
            for x in &o.scale {
                scale[k].insert((x.loc, x.proc), x.factor.max(0.0));
                scaled_procs[k].push(x.proc);
            }
        }
        Some(Lanes {
            n,
            zero: opts.iter().map(|o| o.zero.clone()).collect(),
            scale,
            scaled_procs,
            links: opts
                .iter()
                .map(|o| o.links.iter().flat_map(|&(a, b, w)| [((a, b), w), ((b, a), w)]).collect())
                .collect(),
            message_weight: opts.iter().map(|o| o.message_weight).collect(),
            reweigh_messages: opts.iter().any(|o| !o.links.is_empty() || o.message_weight.is_some()),
            rule: Vec::new(),
            at_loc: vec![NEG; locs * n],
            newest: vec![NEG; n],
            rows: Vec::new(),
            free: Vec::new(),
            release: Vec::new(),
        })
    }

    /// The newest node is the first of location `l` (`source`) or follows its last,
    /// by a local arc of measured weight `w` in context `ctx`.
    #[inline]
    fn start(&mut self, contexts: &[Context], l: u32, ctx: u32, w: i64, source: bool) {
        let n = self.n;
        while self.rule.len() < contexts.len() * n {
            let c = &contexts[self.rule.len() / n];
            let k = self.rule.len() % n;
            let r = if c.proc != NONE && self.zero[k].contains(&c.proc) {
                1
            } else if c.proc != NONE && self.scaled_procs[k].contains(&c.proc) {
                2
            } else {
                0
            };
            self.rule.push(r);
        }
        let at = l as usize * n;
        if at + n > self.at_loc.len() {
            self.at_loc.resize(at + n, NEG);
        }
        for k in 0..n {
            let weight = match self.rule.get(ctx as usize * n + k) {
                Some(1) => 0,
                Some(2) => {
                    let proc = contexts[ctx as usize].proc;
                    self.scale[k].get(&(l, proc)).map_or(w, |f| (w as f64 * f).round() as i64)
                }
                _ => w,
            };
            let before = if source { 0 } else { self.at_loc[at + k] };
            self.newest[k] = if before > NEG { before + weight } else { NEG };
        }
    }

    /// The newest node is reached by no local arc (a virtual node).
    fn start_unreached(&mut self) {
        self.newest.fill(NEG);
    }

    /// A row holding the newest node's distances.
    fn save(&mut self) -> u32 {
        let n = self.n;
        let row = match self.free.pop() {
            Some(r) => r,
            None => {
                self.rows.resize(self.rows.len() + n, NEG);
                (self.rows.len() / n - 1) as u32
            }
        };
        let at = row as usize * n;
        self.rows[at..at + n].copy_from_slice(&self.newest);
        row
    }

    /// A remote arc into the newest node from the node of `row`, weighing `weight` as
    /// measured; a message also says the locations it goes between and its whole
    /// transfer time (for the links and the network of each lane).
    #[inline]
    fn arc(&mut self, row: u32, weight: i64, message: Option<(u32, u32, i64)>) {
        let at = row as usize * self.n;
        for k in 0..self.n {
            let from = self.rows[at + k];
            if from > NEG {
                let w = match message {
                    None => weight,
                    Some((a, b, whole)) => match self.links[k].get(&(a, b)) {
                        Some(Some(w)) => *w,
                        Some(None) => whole,
                        None => self.message_weight[k].unwrap_or(weight),
                    },
                };
                self.newest[k] = self.newest[k].max(from + w);
            }
        }
    }

    /// The event of location `l` is added: its distances are the location's now, and
    /// the rows it was the last to use are free.
    fn done(&mut self, l: u32) {
        let at = l as usize * self.n;
        self.at_loc[at..at + self.n].copy_from_slice(&self.newest);
        self.free.append(&mut self.release);
    }

    /// Each lane's length: the longest of the locations' last nodes (distances only
    /// grow along a location), 0 where no node was reached.
    fn lengths(&self) -> Vec<i64> {
        (0..self.n)
            .map(|k| {
                self.at_loc.iter().skip(k).step_by(self.n).copied().filter(|&d| d > NEG).max().unwrap_or(0)
            })
            .collect()
    }
}

/// One collective instance while its events are being read.
#[derive(Default)]
struct Instance {
    /// (location, node) of each begin seen.
    begins: Vec<(u32, Reached)>,
    /// The virtual node every waiting end hangs from (all-to-all and rooted shapes).
    v: Option<Reached>,
    /// Scan: prefix nodes made so far; `scan[j]` holds the latest of ranks < j + 1.
    scan: Vec<Reached>,
    ends: usize,
}

/// The instances of one communicator from the oldest unfinished one on, by number.
#[derive(Default)]
struct LiveInstances {
    first: usize,
    slots: std::collections::VecDeque<Option<Instance>>,
}

impl LiveInstances {
    /// Instance `k`, made when first named; `None` once it has finished.
    fn get_mut(&mut self, k: u64) -> Option<&mut Instance> {
        let k = k as usize;
        if k < self.first {
            return None;
        }
        while self.first + self.slots.len() <= k {
            self.slots.push_back(Some(Instance::default()));
        }
        self.slots[k - self.first].as_mut()
    }

    /// Takes instance `k` out (made if new); `put` brings it back, unless it is done.
    fn take(&mut self, k: u64) -> Option<Instance> {
        self.get_mut(k)?;
        self.slots[k as usize - self.first].take()
    }

    fn put(&mut self, k: u64, inst: Instance) {
        self.slots[k as usize - self.first] = Some(inst);
    }

    /// Lets go of finished instances at the front.
    fn trim(&mut self) {
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.first += 1;
        }
    }
}

struct Builder<'a> {
    file: &'a str,
    mode: Mode,
    pag: Pag,
    locs: Vec<LocState>,
    /// Per location, the last procedure entered and the context it made: loops call
    /// the same procedure from the same place over and over, so this spares most
    /// lookups. Apart from `locs`, which every event reads and writes whole.
    entered: Vec<(u32, u32, u32)>,
    contexts: FxHashMap<(u32, u32), u32>,
    /// Sends (and lock releases) waiting for their partner, by the partner's location:
    /// few at a time, so searched in place.
    pending: Vec<Vec<Pending>>,
    /// Those of locations with `PENDING_IN_PLACE` waiting already, or not defined, by
    /// (location, index) key.
    pending_more: FxHashMap<u64, Pending>,
    /// Collective ends seen per location and communicator (few communicators a
    /// location: searched in place), and the live instances of each communicator.
    coll_count: Vec<Vec<(u32, u64)>>,
    instances: Vec<LiveInstances>,
    /// Rank of each member, per communicator (made when a communicator is first used).
    ranks: FxHashMap<u32, FxHashMap<u32, u32>>,
    spawns: Vec<(u32, u32, u64)>,
    unmatched_receives: u64,
    late_begins: u64,
    min_wall: i64,
    /// Each location's first node, the CPU time its source arc may weigh, and its time.
    sources: Vec<(u32, i64, i64)>,
    /// The forward diffusion of the whole graph, made as nodes arrive (see `Distances`).
    track: Option<Tracker>,
    /// Longest distance to the newest node (when distances are tracked): arcs only
    /// ever come into the newest node, so earlier nodes' distances live where they are
    /// needed next (the location's state, a pending send, a collective instance).
    newest_dist: i64,
    /// The lengths of other weightings, made the same way (with distances only).
    lanes: Option<Lanes>,
    /// The newest node's location and wall time.
    newest_at: (u32, i64),
    /// `None`: the graph is kept. `Some`: only its lengths are made (no node or arc is
    /// kept), and every message arc's (from, to, weight) here.
    lengths_only: Option<Messages>,
    /// Nodes made, when they are not kept.
    made: u32,
    /// Nodes the node arrays have room for (`push_node`).
    room: usize,
    /// Whether the trace says its clocks are aligned (flag ALIGNED; `None`: the text
    /// form, which has no flags).
    aligned: Option<bool>,
    /// Clock-offset samples with an offset other than 0, and the largest offset, ns.
    offsets: (u64, u64),
    /// Per string id: 0 not yet asked, 1 a blocking call's name, 2 another name.
    blocking: Vec<u8>,
    /// CPU time inside blocking calls, which CPU mode does not count as work, per
    /// procedure (string id; a call is a known string, so `blocking` has its place).
    blocked_cpu: Vec<i64>,
    /// Receives from any source (CPU mode).
    wildcards: u64,
    /// Remote arcs made (without the graph kept, their numbers).
    arcs_made: u64,
    /// What a build that keeps no graph keeps of its critical path.
    sieve: Sieve,
}

/// What a build that keeps no graph keeps of its critical path (`streamed`).
pub(crate) enum Sieve {
    Nothing,
    /// Every node won by a remote arc.
    Winners(Winners),
    /// The path's nodes and arcs.
    Path(Box<Gather>),
    /// Every node and arc, on its way to a PAG file.
    Write(Box<PagSpill>),
}

impl Sieve {
    /// What the progress line counts.
    fn unit(&self) -> &'static str {
        match self {
            Sieve::Nothing => "critical paths: events",
            Sieve::Winners(_) => "critical path, pass 1: events",
            Sieve::Path(_) => "critical path, pass 2: events",
            Sieve::Write(_) => "events",
        }
    }
}

/// Longest distances of the global scope (no window, no zeroing), made while building:
/// every arc into a node is known when the node is made, so the forward diffusion needs
/// no pass of its own. Only what the backward walk needs is kept: which remote arc
/// each node's longest way in is, for the nodes where it is one.
struct Tracker {
    /// (node, arc), by node.
    remote: SpillVec<(u32, u32)>,
    /// The wall time wall-mode source arcs are measured from until t0 is known.
    base: Option<i64>,
    /// CPU-mode source weights as they stood when the node was made.
    provisional: Vec<i64>,
}

/// Builds the PAG of an ordered trace (spoor-order's output: every receive completion,
/// lock acquisition and spawned begin carries its partner, and every event comes after
/// the events it waits for).
pub fn build(reader: TraceReader, mode: Mode) -> Result<Pag> {
    build_inner(reader, mode, false, &[], &Silent, None).map(|(pag, _)| pag)
}

/// [`build`], telling `feedback` how many events are added so far.
pub fn build_observed(reader: TraceReader, mode: Mode, feedback: &dyn Feedback) -> Result<Pag> {
    build_inner(reader, mode, false, &[], feedback, None).map(|(pag, _)| pag)
}

/// Whether [`lengths_only`] can be known, from what the trace says before its events, to
/// give nothing: in CPU mode, processes that shared processors have their arcs weighed
/// again once the whole graph is read; a spawned process's arc is linked only then.
pub fn lengths_need_the_graph(defs: &Definitions, mode: Mode, spawns: bool) -> bool {
    spawns || (mode == Mode::Cpu && !defs.shared_processors().is_empty())
}

/// Every message arc of a graph as (from location, to location, weight).
pub type Messages = Vec<(u32, u32, i64)>;

/// What `build_with_lanes` finds of the lengths (`Distances`: the global scope's and the
/// lanes'), made without keeping the graph, and its message arcs; `None` where they
/// need the graph kept (a spawn, processors shared, a source clamped by a later t0).
/// The graph's nodes would take tens of bytes an event; this keeps what is in flight.
pub fn lengths_only(
    reader: TraceReader,
    mode: Mode,
    lanes: &[CpOptions],
    feedback: &dyn Feedback,
) -> Result<Option<(Distances, Messages)>> {
    let (_, made, messages, _) = build_kept(reader, mode, true, lanes, Some(Sieve::Nothing), feedback, None)?;
    Ok(made.zip(messages))
}

/// `build`, with the forward diffusion of the global scope made on the way (for
/// `cp::critical_path_with`); `None` when a spawn arc made it unusable.
pub fn build_with_distances(reader: TraceReader, mode: Mode) -> Result<(Pag, Option<Distances>)> {
    build_inner(reader, mode, true, &[], &Silent, None)
}

/// `build_with_distances`, with the lengths of the longest paths under `lanes` made on
/// the way too (`Distances::lanes`).
pub fn build_with_lanes(
    reader: TraceReader,
    mode: Mode,
    lanes: &[CpOptions],
) -> Result<(Pag, Option<Distances>)> {
    build_inner(reader, mode, true, lanes, &Silent, None)
}

/// `build` or `build_with_distances`, telling `feedback` how many events are added so
/// far, the graph in `arena`'s file (`None`: in memory).
pub(crate) fn build_inner(
    reader: TraceReader,
    mode: Mode,
    distances: bool,
    lanes: &[CpOptions],
    feedback: &dyn Feedback,
    arena: Option<&Arc<Arena>>,
) -> Result<(Pag, Option<Distances>)> {
    build_kept(reader, mode, distances, lanes, None, feedback, arena).map(|(pag, made, ..)| (pag, made))
}

/// A build that keeps no graph but what `sieve` keeps of it, which it gives back
/// (`Sieve::Nothing` where a spawn needs the graph kept to write it); the distances
/// are made for the first pass of a critical path only (`Sieve::Winners`).
pub(crate) fn build_sieved(
    reader: TraceReader,
    mode: Mode,
    lanes: &[CpOptions],
    sieve: Sieve,
    feedback: &dyn Feedback,
) -> Result<(Pag, Option<Distances>, Sieve)> {
    let distances = matches!(sieve, Sieve::Winners(_));
    build_kept(reader, mode, distances, lanes, Some(sieve), feedback, None)
        .map(|(pag, made, _, sieve)| (pag, made, sieve))
}

/// What a build gives: the graph (empty where only its lengths were made), its
/// distances where they hold, the message arcs of a build that kept no graph, and what
/// its sieve kept.
type Built = (Pag, Option<Distances>, Option<Messages>, Sieve);

/// `build_inner`, keeping the graph (`sieve` `None`) or only its lengths and messages,
/// and what `sieve` keeps of its critical path.
fn build_kept(
    mut reader: TraceReader,
    mode: Mode,
    distances: bool,
    lanes: &[CpOptions],
    sieve: Option<Sieve>,
    feedback: &dyn Feedback,
    arena: Option<&Arc<Arena>>,
) -> Result<Built> {
    let keep = sieve.is_none();
    let file = reader.name().to_owned();
    if let Some(h) = reader.header() {
        let need = flags::GLOBAL_ORDER | flags::MATCHED;
        if h.flags & need != need {
            return Err(Error::input(
                &file,
                "the trace is not ordered and matched (flags GLOBAL_ORDER and MATCHED are not set): \
                 run it through spoor-order first",
            ));
        }
    }
    if reader.header().is_none() {
        // The text form: its definitions grow as it is read, so read it whole (it is
        // for small, hand-written traces).
        let (defs, events) = reader.read_all()?;
        // spoor-order gives every event its Lamport clock: one without is unordered.
        let mut count = vec![0u64; defs.locations.len()];
        for e in &events {
            let c = count.get_mut(e.loc as usize).map_or(0, |c| std::mem::replace(c, *c + 1));
            if e.ann.lamport.is_none() {
                return Err(Error::input(
                    &file,
                    format!(
                        "event {}:{} ({}) has no Lamport clock: the trace is not ordered; \
                         run it through spoor-order first",
                        e.loc,
                        c,
                        e.kind.name()
                    ),
                ));
            }
        }
        let mut b = Builder::new(&file, mode, defs, distances, lanes, arena);
        b.lengths_only = (!keep).then(Vec::new);
        b.sieve = sieve.unwrap_or(Sieve::Nothing);
        b.add(&events.iter().map(Brief::of).collect::<Vec<_>>())?;
        return finish_whole(b, arena);
    }
    // Blocks decode in parallel while this thread adds their events to the graph in
    // order, as the reader hands them on (and decodes blocks itself while the next one
    // is not ready).
    let expected = reader.end().map(|e| e.events as usize);
    let mut b = Builder::new(&file, mode, reader.defs().clone(), distances, lanes, arena);
    b.lengths_only = (!keep).then(Vec::new);
    b.sieve = sieve.unwrap_or(Sieve::Nothing);
    b.aligned = reader.header().map(|h| h.flags & flags::ALIGNED != 0);
    // Emptied block buffers go back to be filled again: fresh ones would cost page
    // faults on every block.
    let pool: std::sync::Mutex<Vec<Vec<Brief>>> = std::sync::Mutex::new(Vec::new());
    // Set when the builder stops, so that faulting in its arrays stops too.
    let built_all = std::sync::atomic::AtomicBool::new(false);
    let read = std::thread::scope(|scope| {
        if let Some(n) = expected.filter(|_| keep) {
            b.reserve(n);
            let regions = b.node_regions();
            let built_all = &built_all;
            scope.spawn(move || populate(&regions, built_all));
        }
        let total = expected.map(|n| n as u64);
        // A build that keeps no graph only follows its critical paths.
        let unit = if keep { "events" } else { b.sieve.unit() };
        let mut added = 0;
        let read = reader.par_raw_blocks_each(
            |defs, raw| {
                raw.check_crc()?;
                let mut v = pool.lock().expect("the buffer pool is never poisoned").pop().unwrap_or_default();
                let locs = defs.locations.len();
                if !decode_block_brief(raw.payload, raw.form(), locs, &mut v) {
                    // The full decoder names the problem.
                    v.clear();
                    decode_block(raw.payload, raw.form(), locs, |e| v.push(Brief::of(&e)))
                        .map_err(|e| raw.error(e))?;
                }
                Ok(v)
            },
            |_, block| block.events.iter().map(Brief::of).collect(),
            |mut block| -> Result<()> {
                b.add(&block)?;
                added += block.len() as u64;
                feedback.progress(unit, added, total);
                block.clear();
                pool.lock().expect("the buffer pool is never poisoned").push(block);
                Ok(())
            },
        );
        built_all.store(true, std::sync::atomic::Ordering::Relaxed);
        feedback.finish();
        read
    });
    read?;
    b.pag.defs = reader.defs().clone();
    finish_whole(b, arena)
}

/// Builds the whole graph in memory, with the distances of its global scope (as
/// [`build_with_distances`]), of ordered events that `fill` hands over a block at a time
/// to the function it is given: a trace being ordered in the same process, never
/// written. `defs` and `aligned` are what the written trace would say (its definitions,
/// its ALIGNED flag), `events` how many events it has, if known (room for them is made
/// at once). `fill`'s error stops the build; so does the builder's, which `fill` gets
/// from the function it calls.
///
/// The room is not faulted in ahead by a thread of its own, as a trace's reading has it:
/// the ordering keeps the cores busy and hands events over more slowly than a reading,
/// and such a thread only takes the cores from it (a tenth more time, measured).
pub fn build_fed<T, E: From<Error>>(
    file: &str,
    defs: &Definitions,
    aligned: bool,
    events: Option<u64>,
    mode: Mode,
    fill: impl FnOnce(&mut dyn FnMut(&[Brief]) -> Result<()>) -> std::result::Result<T, E>,
) -> std::result::Result<(Pag, Option<Distances>, T), E> {
    let mut b = Builder::new(file, mode, defs.clone(), true, &[], None);
    b.aligned = Some(aligned);
    if let Some(n) = events {
        b.reserve(n as usize);
    }
    let filled = fill(&mut |block| b.add(block))?;
    b.pag.defs = defs.clone();
    let (pag, made, ..) = finish_whole(b, None)?;
    Ok((pag, made, filled))
}

/// The builder's `finish`, where every array it wrote to `arena`'s file is whole: a file
/// that stopped growing (the disk full) is the error, before the ends are read back.
fn finish_whole(b: Builder, arena: Option<&Arc<Arena>>) -> Result<Built> {
    let spill_error = || arena.and_then(|a| a.error()).map_or(Ok(()), |e| Err(Error::Spill(e)));
    spill_error()?;
    let built = b.finish()?;
    spill_error()?;
    Ok(built)
}

/// Builds the PAG of events already in memory (tests, small traces).
pub fn build_from_events(file: &str, defs: &Definitions, events: &[Event], mode: Mode) -> Result<Pag> {
    let mut b = Builder::new(file, mode, defs.clone(), false, &[], None);
    b.add(&events.iter().map(Brief::of).collect::<Vec<_>>())?;
    b.finish().map(|(pag, ..)| pag)
}

impl<'a> Builder<'a> {
    /// A builder whose graph lives in `arena`'s file (`None`: in memory).
    fn new(
        file: &'a str,
        mode: Mode,
        defs: Definitions,
        distances: bool,
        lanes: &[CpOptions],
        arena: Option<&Arc<Arena>>,
    ) -> Self {
        let contexts = vec![Context { parent: NONE, proc: NONE }];
        let pag = Pag { defs, mode, contexts, ..Pag::in_arena(arena) };
        let locs = vec![LocState::FRESH; pag.defs.locations.len()];
        let entered = vec![(NONE, NONE, 0); locs.len()];
        let locs_len = locs.len();
        Builder {
            file,
            mode,
            pag,
            locs,
            entered,
            contexts: FxHashMap::default(),
            pending: Vec::new(),
            pending_more: FxHashMap::default(),
            coll_count: Vec::new(),
            instances: Vec::new(),
            ranks: FxHashMap::default(),
            spawns: Vec::new(),
            unmatched_receives: 0,
            late_begins: 0,
            min_wall: i64::MAX,
            sources: Vec::new(),
            track: distances.then(|| Tracker {
                remote: SpillVec::new_in(arena),
                base: None,
                provisional: Vec::new(),
            }),
            room: 0,
            newest_dist: NEG,
            // Lanes go with the global scope's distances, in CPU mode (whose sources
            // need no shift once t0 is known).
            lanes: (distances && mode == Mode::Cpu).then(|| Lanes::new(lanes, locs_len)).flatten(),
            newest_at: (NONE, 0),
            lengths_only: None,
            made: 0,
            aligned: None,
            offsets: (0, 0),
            blocking: Vec::new(),
            blocked_cpu: Vec::new(),
            wildcards: 0,
            arcs_made: 0,
            sieve: Sieve::Nothing,
        }
    }

    /// The node arrays, to fault in ahead of the builder.
    fn node_regions(&self) -> Vec<Region> {
        let p = &self.pag;
        let r = [Region::of(&p.loc), Region::of(&p.prev), Region::of(&p.wall), Region::of(&p.weight)];
        r.into_iter().chain([Region::of(&p.ctx), Region::of(&p.kind)]).collect()
    }

    /// Room for `events` nodes and a guess of the arcs, so the arrays grow once.
    fn reserve(&mut self, events: usize) {
        self.reserve_nodes(events + events / 64);
        let p = &mut self.pag;
        // In memory, address space only: pages no arc reaches are never touched. In a
        // file, disk: a guess nearer most programs' (a stencil's is a sixth), the room
        // left over given back at the end.
        let arcs = if p.arena().is_some() { events / 4 } else { events / 2 };
        p.arc_to.reserve_exact(arcs);
        p.arc_from.reserve_exact(arcs);
        p.arc_weight.reserve_exact(arcs);
        p.arc_kind.reserve_exact(arcs);
        p.arc_bytes.reserve_exact(arcs);
    }

    /// Room for location `l`'s state (the text form may name locations late).
    #[cold]
    fn more_locations(&mut self, l: usize) {
        self.locs.resize(l + 1, LocState::FRESH);
        self.entered.resize(l + 1, (NONE, NONE, 0));
    }

    fn err(&self, message: String) -> Error {
        Error::input(self.file, message)
    }

    /// Adds a node; its longest distance starts at `dist` (`NEG`: unreached), and
    /// `push_arc` lifts it.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)] // one per node array
    fn push_node(
        &mut self,
        loc: u32,
        prev: u32,
        wall: i64,
        weight: i64,
        ctx: u32,
        kind: u8,
        dist: i64,
    ) -> Result<u32> {
        if self.lengths_only.is_some() {
            let n = self.made;
            if n >= NONE - 1 {
                return Err(self.err(format!("more than {} nodes: too large for one PAG", NONE - 1)));
            }
            self.made += 1;
            self.newest_dist = dist;
            self.newest_at = (loc, wall);
            match &mut self.sieve {
                Sieve::Path(g) => g.node(n, loc, prev, wall, weight, ctx, kind),
                Sieve::Write(w) => w.node(loc, prev, wall, weight, ctx, kind)?,
                _ => {}
            }
            return Ok(n);
        }
        let n = self.pag.loc.len();
        if n >= self.room {
            self.grow_nodes()?;
        }
        let p = &mut self.pag;
        // SAFETY: only this function lengthens the node arrays, so all have length n,
        // and `room` is at most the capacity of each.
        unsafe {
            p.loc.push_unchecked(loc);
            p.prev.push_unchecked(prev);
            p.wall.push_unchecked(wall);
            p.weight.push_unchecked(weight);
            p.ctx.push_unchecked(ctx);
            p.kind.push_unchecked(kind);
        }
        self.newest_dist = dist;
        self.newest_at = (loc, wall);
        Ok(n as u32)
    }

    /// The newest node's lane distances kept in a row, for the arcs that will leave it.
    fn save_lanes(&mut self) -> u32 {
        self.lanes.as_mut().map_or(NO_ROW, Lanes::save)
    }

    /// Makes room for more nodes in every node array, or refuses a graph that would
    /// outgrow the node numbers.
    #[cold]
    fn grow_nodes(&mut self) -> Result<()> {
        let n = self.pag.loc.len();
        if n >= NONE as usize {
            return Err(self.err(format!("more than {} nodes: too large for one PAG", NONE - 1)));
        }
        self.reserve_nodes((n / 2).max(4096));
        if self.room <= n {
            // A file that could not grow (the disk full).
            let e = self.pag.arena().and_then(|a| a.error());
            return Err(Error::Spill(
                e.unwrap_or_else(|| std::io::Error::other("no room for the graph's nodes")),
            ));
        }
        Ok(())
    }

    /// Room for `more` nodes in every node array.
    fn reserve_nodes(&mut self, more: usize) {
        let p = &mut self.pag;
        p.loc.reserve_exact(more);
        p.prev.reserve_exact(more);
        p.wall.reserve_exact(more);
        p.weight.reserve_exact(more);
        p.ctx.reserve_exact(more);
        p.kind.reserve_exact(more);
        self.set_room();
    }

    /// The number of nodes every node array has capacity for, and the node numbers allow.
    fn set_room(&mut self) {
        let p = &self.pag;
        let caps = [p.loc.capacity(), p.prev.capacity(), p.wall.capacity(), p.weight.capacity()];
        let caps = caps.into_iter().chain([p.ctx.capacity(), p.kind.capacity()]);
        self.room = caps.fold(NONE as usize, usize::min);
    }

    /// An arc into the newest node, `to`, from a node whose longest distance is
    /// `from_dist`.
    #[allow(clippy::too_many_arguments)]
    fn push_arc(&mut self, to: u32, from: Reached, weight: i64, kind: ArcKind, bytes: u64, op: u8) {
        let (from_at, from_dist, row) = ((from.loc, from.wall), from.dist, from.row);
        let from = from.node;
        let arc = match &mut self.lengths_only {
            Some(messages) => {
                // Kept for the lanes' network predictions, not for a critical path.
                if kind == ArcKind::Message && matches!(self.sieve, Sieve::Nothing) {
                    messages.push((from_at.0, self.newest_at.0, weight));
                }
                let arc = self.arcs_made;
                self.arcs_made += 1;
                let Ok(arc) = u32::try_from(arc) else {
                    // Past the arc numbers a walk back can name: no path is found.
                    self.track = None;
                    self.sieve = Sieve::Nothing;
                    return;
                };
                match &mut self.sieve {
                    Sieve::Path(g) => {
                        g.arc(arc, (to, self.newest_at.1), (from, from_at.1), weight, kind, bytes, op)
                    }
                    Sieve::Write(w) => {
                        w.arc((to, self.newest_at.1), (from, from_at.1), weight, kind, bytes, op)
                    }
                    _ => {}
                }
                arc
            }
            None => {
                debug_assert_eq!(to as usize + 1, self.pag.nodes());
                let arc = self.pag.arc_to.len() as u32;
                self.pag.push_arc(to, from, weight, kind, bytes, op);
                arc
            }
        };
        if let Some(t) = &mut self.track {
            if from_dist > NEG {
                // The rule of `cp::Pass::relax`: ties go to the first remote arc over
                // the local one.
                let d = from_dist + weight;
                let remote_won = t.remote.last().is_some_and(|r| r.0 == to);
                if d > self.newest_dist || (d == self.newest_dist && !remote_won) {
                    self.newest_dist = d;
                    match t.remote.last_mut() {
                        Some(r) if r.0 == to => r.1 = arc,
                        // Without the graph there is no walk back: only the newest node's
                        // winner is kept, for the tie rule.
                        Some(r) if self.lengths_only.is_some() => *r = (to, arc),
                        _ => t.remote.push((to, arc)),
                    }
                    if let Sieve::Winners(w) = &mut self.sieve {
                        w.won(to, self.newest_at.0, from, from_at.0, arc);
                    }
                }
            }
        }
        if let (Some(lanes), true) = (&mut self.lanes, row != NO_ROW) {
            // A message's other weights: the links' and the network's.
            let (to_loc, to_wall) = self.newest_at;
            let message = (kind == ArcKind::Message && lanes.reweigh_messages)
                .then(|| (from_at.0, to_loc, (to_wall - from_at.1).max(0)));
            lanes.arc(row, weight, message);
        }
    }

    /// The measured weight of a remote arc into an event at `wall` whose local
    /// predecessor is at `prev_wall`: the time from when both sides were ready.
    fn remote_weight(&self, wall: i64, from_wall: i64, prev_wall: Option<i64>) -> i64 {
        (wall - prev_wall.map_or(from_wall, |p| p.max(from_wall))).max(0)
    }

    #[cold]
    fn index_too_large(&self, loc: u32, index: u64) -> Error {
        self.err(format!("event index {index} of location {loc} is too large"))
    }

    #[cold]
    fn out_of_order(&self, s: &Brief, own_index: u64) -> Error {
        self.err(format!(
            "not in causal order: event {}:{} ({}) comes before its partner {}:{}, \
             or the partner does not point back at it; run it through spoor-order",
            s.loc,
            own_index,
            spoor_model::KIND_NAMES[s.code as usize],
            s.partner_loc,
            s.partner_idx
        ))
    }

    #[inline(always)]
    fn key(&self, loc: u32, index: u64) -> Result<u64> {
        if index >= 1 << 40 {
            return Err(self.index_too_large(loc, index));
        }
        Ok((loc as u64) << 40 | index)
    }

    /// Adds the events of `briefs`, in order, with the weight mode and the tracking of
    /// distances fixed for the whole block rather than asked at every event.
    fn add(&mut self, briefs: &[Brief]) -> Result<()> {
        match (self.mode, self.track.is_some()) {
            (Mode::Cpu, true) => self.add_as::<true, true>(briefs),
            (Mode::Cpu, false) => self.add_as::<true, false>(briefs),
            (Mode::Wall, true) => self.add_as::<false, true>(briefs),
            (Mode::Wall, false) => self.add_as::<false, false>(briefs),
        }
    }

    fn add_as<const CPU: bool, const TRACK: bool>(&mut self, briefs: &[Brief]) -> Result<()> {
        for (k, s) in briefs.iter().enumerate() {
            // The briefs were written on another core: ask for them early.
            if let Some(ahead) = briefs.get(k + 8) {
                spoor_format::mem::prefetch(ahead);
            }
            self.event::<CPU, TRACK>(s)?;
        }
        Ok(())
    }

    /// Adds one event; `CPU` for CPU-mode weights, `TRACK` when distances are tracked
    /// (`self.mode` and `self.track`, as `add` found them).
    #[inline(always)]
    fn event<const CPU: bool, const TRACK: bool>(&mut self, s: &Brief) -> Result<()> {
        let l = s.loc as usize;
        if l >= self.locs.len() {
            self.more_locations(l);
        }
        let st = self.locs[l];
        if s.code == CLOCK_OFFSET {
            return self.sample(s);
        }
        self.min_wall = self.min_wall.min(s.wall);
        let weight = local_weight::<CPU>(&st, s);
        let own_index = st.count;
        // A collective end that waits hangs from a virtual node made just before it.
        let coll_from = if s.code == COLL_END { self.collective_end(s)? } else { None };
        let dist = match &mut self.track {
            _ if !TRACK => 0,
            _ if st.last != NONE => st.dist + weight,
            None => 0,
            // Measured from the first wall time seen; finish() moves it to t0.
            Some(t) if !CPU => s.wall - *t.base.get_or_insert(s.wall),
            Some(t) => {
                let w = weight.clamp(0, (s.wall - self.min_wall).max(0));
                t.provisional.push(w);
                w
            }
        };
        if let (Some(lanes), true) = (&mut self.lanes, TRACK && CPU) {
            // A source's weight as the global scope's tracking takes it, for now.
            let w = if st.last != NONE { weight } else { weight.clamp(0, (s.wall - self.min_wall).max(0)) };
            lanes.start(&self.pag.contexts, s.loc, st.ctx, w, st.last == NONE);
        }
        if st.last == NONE {
            let node = if self.lengths_only.is_some() { self.made } else { self.pag.loc.len() as u32 };
            self.sources.push((node, weight, s.wall));
        }
        let node = self.push_node(s.loc, st.last, s.wall, weight, st.ctx, s.code, dist)?;
        let mut ctx = st.ctx;
        let mut waiting = st.waiting;
        let mut call = st.call;
        let mut any_source = st.any_source;
        if CPU && call != NONE && st.last != NONE {
            self.blocked_cpu[call as usize] += cpu_used(&st, s);
        }
        match s.code {
            ENTER => {
                ctx = self.enter(l, st.ctx, s.a);
                if CPU && call == NONE && self.blocks(s.a) {
                    call = s.a;
                }
            }
            LEAVE => {
                if call == s.a {
                    call = NONE;
                }
                // Pop to the matching procedure; a leave without its enter is ignored.
                let mut c = ctx;
                while c != 0 && self.pag.contexts[c as usize].proc != s.a {
                    c = self.pag.contexts[c as usize].parent;
                }
                if c != 0 {
                    ctx = self.pag.contexts[c as usize].parent;
                }
            }
            SEND | ISEND | LOCK_RELEASE if s.partner_loc != NO_PARTNER => self.send(s, node)?,
            RECV_BEGIN => {
                waiting = true;
                any_source = s.sub == 1;
                if CPU && any_source {
                    self.wildcards += 1;
                }
            }
            LOCK_REQUEST => waiting = true,
            IRECV_REQUEST if CPU && s.sub == 1 => self.wildcards += 1,
            COLL_BEGIN => {
                waiting = true;
                let k = *self.ends_seen(s.loc, s.a);
                let dist = self.newest_dist;
                if self.live(s.a).get_mut(k).is_some() {
                    let row = self.save_lanes();
                    if let Some(inst) = self.live(s.a).get_mut(k) {
                        inst.begins.push((s.loc, Reached { node, loc: s.loc, wall: s.wall, dist, row }));
                    }
                }
            }
            RECV_END | IRECV_COMPLETE | LOCK_ACQUIRE => {
                waiting = false;
                if CPU && s.code == RECV_END && any_source {
                    self.pag.wildcard_receives.push(node);
                }
                any_source = false;
                if s.partner_loc != NO_PARTNER {
                    self.receive(s, &st, node, own_index)?;
                } else if s.code != LOCK_ACQUIRE {
                    self.unmatched_receives += 1;
                }
            }
            COLL_END => {
                waiting = false;
                if let Some(from) = coll_from {
                    let w = self.remote_weight(s.wall, from.wall, (st.last != NONE).then_some(st.wall));
                    self.push_arc(node, from, w, ArcKind::CollOut, s.partner_idx, s.sub + 1);
                }
            }
            PHASE_BEGIN | PHASE_END => {
                self.pag.phases.push(PhaseMark { name: s.a, node, begin: s.code == PHASE_BEGIN })
            }
            PROCESS_BEGIN | THREAD_BEGIN if s.sub == 1 && s.partner_loc != NO_PARTNER => {
                self.spawns.push((node, s.partner_loc, s.partner_idx));
            }
            _ => {}
        }
        let st = &mut self.locs[l];
        st.last = node;
        st.ctx = ctx;
        st.waiting = waiting;
        st.call = call;
        st.any_source = any_source;
        st.count = own_index + 1;
        st.wall = s.wall;
        if s.cpu != NO_CPU {
            st.cpu = s.cpu;
        }
        if TRACK {
            st.dist = self.newest_dist;
            if let Some(lanes) = &mut self.lanes {
                lanes.done(s.loc);
            }
        }
        Ok(())
    }

    /// How much CPU time the blocking calls took that CPU mode counts as communication,
    /// by call, largest first (`None` when there is none).
    fn blocked_note(&self) -> Option<String> {
        let mut calls: Vec<(i64, String)> = (self.blocked_cpu.iter().enumerate())
            .filter(|&(_, &t)| t > 0)
            .map(|(p, &t)| (t, self.pag.defs.strings.name(p as u32).to_string()))
            .collect();
        if calls.is_empty() {
            return None;
        }
        calls.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let total: i64 = calls.iter().map(|c| c.0).sum();
        let shown: Vec<String> =
            calls.iter().take(4).map(|(t, name)| format!("{name} {}", crate::show::fmt_ns(*t))).collect();
        let more = if calls.len() > 4 { format!(", {} more", calls.len() - 4) } else { String::new() };
        Some(format!(
            "{} of CPU time inside blocking calls is communication, not work ({}{more})",
            crate::show::fmt_ns(total),
            shown.join(", ")
        ))
    }

    /// CPU mode, for a run recorded while processes shared processors: a message to a
    /// process that shared one may have waited for its processor after it arrived, which
    /// the predicted configuration decides anew. Such arcs weigh the least transfer
    /// time of the trace's messages of their size class (the power of two at or above
    /// the size; between two machines or within one) instead. Says what it changed, or
    /// `None` when the trace does not say processes shared processors, or nothing
    /// changed.
    fn undo_shared_processors(&mut self) -> Option<String> {
        let shared = self.pag.defs.shared_processors();
        let first = shared.first()?;
        let defs = &self.pag.defs;
        let mut sharing = vec![false; defs.processes.len()];
        for &p in shared.iter().flat_map(|s| &s.processes) {
            sharing[p as usize] = true;
        }
        let process = |node: u32| defs.locations.get(self.pag.loc[node as usize] as usize).map(|l| l.process);
        let machine =
            |node: u32| process(node).and_then(|p| defs.processes.get(p as usize)).map(|p| p.machine);
        // Arcs of one class take the same time on an idle processor: a message's size
        // class and whether it stays on its machine; a collective's operation and size.
        let class = |a: usize| {
            let size = self.pag.arc_bytes[a].checked_next_power_of_two().map_or(64, u64::trailing_zeros);
            match self.pag.arc_kind[a] {
                ArcKind::Message => (0, size, machine(self.pag.arc_from[a]) == machine(self.pag.arc_to[a])),
                _ => (1 + self.pag.arc_op[a] as u32, size, true),
            }
        };
        let lowerable: Vec<usize> = (0..self.pag.arcs())
            .filter(|&a| matches!(self.pag.arc_kind[a], ArcKind::Message | ArcKind::CollOut))
            .collect();
        let mut least: FxHashMap<(u32, u32, bool), i64> = FxHashMap::default();
        for &a in &lowerable {
            let w = least.entry(class(a)).or_insert(i64::MAX);
            *w = (*w).min(self.pag.arc_weight[a]);
        }
        // (arcs, ns) lowered: messages, collectives.
        let mut lowered = [(0u64, 0i64); 2];
        let mut weights = Vec::new();
        for &a in &lowerable {
            let into_sharing = process(self.pag.arc_to[a]).is_some_and(|p| sharing[p as usize]);
            let least = least[&class(a)];
            if into_sharing && least < self.pag.arc_weight[a] {
                let l = &mut lowered[(self.pag.arc_kind[a] != ArcKind::Message) as usize];
                l.0 += 1;
                l.1 += self.pag.arc_weight[a] - least;
                weights.push((a, least));
            }
        }
        for (a, w) in weights {
            self.pag.arc_weight[a] = w;
        }
        let groups = shared.len();
        let more = if groups > 1 { format!(" and {} more group(s)", groups - 1) } else { String::new() };
        let [(messages, by), (collectives, coll_by)] = lowered;
        let collectives = match collectives {
            0 => String::new(),
            n => format!(
                "; {n} collective arc(s) into them the least time of their operation and size ({} less)",
                crate::show::fmt_ns(coll_by)
            ),
        };
        Some(format!(
            "the run was recorded with processes sharing processors ({}: {} processes on CPU {}{more}): \
             {messages} message arc(s) into them weigh the least transfer time of messages of their size \
             instead of the wait for a processor ({} less in all){collectives}",
            first.machine,
            first.processes.len(),
            spoor_model::placement::cpu_list(&first.cpus),
            crate::show::fmt_ns(by),
        ))
    }

    /// Whether procedure `proc` is a blocking call.
    #[inline(always)]
    fn blocks(&mut self, proc: u32) -> bool {
        match self.blocking.get(proc as usize) {
            Some(1) => true,
            Some(2) => false,
            _ => self.blocks_new(proc),
        }
    }

    #[cold]
    fn blocks_new(&mut self, proc: u32) -> bool {
        let i = proc as usize;
        let yes =
            i < self.pag.defs.strings.len() && spoor_model::calls::blocks(&self.pag.defs.strings.name(proc));
        if i < self.pag.defs.strings.len() {
            if i >= self.blocking.len() {
                self.blocking.resize(self.pag.defs.strings.len(), 0);
                self.blocked_cpu.resize(self.pag.defs.strings.len(), 0);
            }
            self.blocking[i] = if yes { 1 } else { 2 };
        }
        yes
    }

    /// The context entered by an ENTER of `proc` at location `l` in context `parent`.
    #[inline(always)]
    fn enter(&mut self, l: usize, parent: u32, proc: u32) -> u32 {
        let entered = self.entered[l];
        if entered.0 == parent && entered.1 == proc {
            return entered.2;
        }
        let next = self.contexts.len() as u32 + 1;
        let ctx = *self.contexts.entry((parent, proc)).or_insert(next);
        if ctx == next {
            self.pag.contexts.push(Context { parent, proc });
        }
        self.entered[l] = (parent, proc, ctx);
        ctx
    }

    /// A send or lock release with a partner: its arc waits (in place at the partner's
    /// location, or in the map when there are many) for the partner's node.
    #[inline(always)]
    fn send(&mut self, s: &Brief, node: u32) -> Result<()> {
        let kind = if s.code == LOCK_RELEASE { ArcKind::Lock } else { ArcKind::Message };
        let k = self.key(s.partner_loc, s.partner_idx)?;
        let from = Reached { node, loc: s.loc, wall: s.wall, dist: self.newest_dist, row: self.save_lanes() };
        let p = Pending { index: s.partner_idx, from, bytes: s.bytes, kind };
        let target = s.partner_loc as usize;
        match self.pending.get_mut(target) {
            Some(v) if v.len() < PENDING_IN_PLACE => v.push(p),
            None if target < self.locs.len() => {
                self.pending.resize_with(self.locs.len(), Vec::new);
                self.pending[target].push(p);
            }
            _ => {
                self.pending_more.insert(k, p);
            }
        }
        Ok(())
    }

    /// A receive end or lock acquisition with a partner (event `own_index` of its
    /// location, whose state before it is `st`): the arc from the partner's node.
    #[inline(always)]
    fn receive(&mut self, s: &Brief, st: &LocState, node: u32, own_index: u64) -> Result<()> {
        let l = s.loc as usize;
        let k = self.key(s.loc, own_index)?;
        // The newest of the partners that name this event, as a map would keep.
        let in_place = self
            .pending
            .get_mut(l)
            .and_then(|v| v.iter().rposition(|p| p.index == own_index).map(|at| v.remove(at)));
        let found = match in_place {
            Some(p) => Some(p),
            None if self.pending_more.is_empty() => None,
            None => self.pending_more.remove(&k),
        };
        match found {
            Some(p) if p.from.loc == s.partner_loc => {
                let w = self.remote_weight(s.wall, p.from.wall, (st.last != NONE).then_some(st.wall));
                self.push_arc(node, p.from, w, p.kind, p.bytes, 0);
                if let Some(lanes) = &mut self.lanes {
                    lanes.free.push(p.from.row);
                }
                Ok(())
            }
            _ => Err(self.out_of_order(s, own_index)),
        }
    }

    /// A clock-offset sample: a node that carries no activity. It hangs from the
    /// location's previous event, nothing follows it (the next event's local arc comes
    /// from that previous event and covers the whole interval), no path reaches it, and
    /// its time counts neither for t0 nor for the end.
    #[cold]
    fn sample(&mut self, s: &Brief) -> Result<()> {
        let l = s.loc as usize;
        let st = self.locs[l];
        self.push_node(s.loc, st.last, s.wall, 0, st.ctx, s.code, NEG)?;
        self.locs[l].count += 1;
        if s.bytes > 0 {
            self.offsets = (self.offsets.0 + 1, self.offsets.1.max(s.bytes));
        }
        Ok(())
    }

    /// Handles the bookkeeping of a collective end and returns the node it waits for,
    /// making the virtual node(s) it needs.
    #[inline(never)]
    fn collective_end(&mut self, s: &Brief) -> Result<Option<Reached>> {
        let comm = s.a;
        let k = {
            let c = self.ends_seen(s.loc, comm);
            *c += 1;
            *c - 1
        };
        let op = CollOp::from_code(s.sub).unwrap_or(CollOp::Other);
        let root = if s.bytes == 0 { None } else { Some((s.bytes - 1) as LocId) };
        let members = self.pag.defs.comms.get(comm as usize).map_or(0, |c| c.members.len());
        let Some(mut inst) = self.live(comm).take(k) else {
            // An end without any begin: nothing to wait for.
            return Ok(None);
        };
        inst.ends += 1;
        let waits = match op {
            CollOp::Reduce | CollOp::Gather | CollOp::Gatherv => root == Some(s.loc),
            _ => true,
        };
        let mut from = None;
        if waits {
            if op == CollOp::Scan {
                from = self.scan_prefix(comm, &mut inst, s.loc)?;
            } else {
                if inst.v.is_none() {
                    let feeding: Vec<Reached> = match op {
                        CollOp::Bcast | CollOp::Scatter | CollOp::Scatterv => {
                            inst.begins.iter().filter(|b| Some(b.0) == root).map(|b| b.1).collect()
                        }
                        _ => inst.begins.iter().map(|b| b.1).collect(),
                    };
                    if !feeding.is_empty() {
                        inst.v = Some(self.virtual_node(&feeding, op)?);
                    }
                }
                from = inst.v;
            }
        }
        let done = members > 0 && inst.ends >= members;
        if done {
            self.live(comm).trim();
            if let Some(lanes) = &mut self.lanes {
                // Freed once this end has taken its arc from them.
                let kept = inst.begins.iter().map(|b| b.1).chain(inst.v).chain(inst.scan.iter().copied());
                lanes.release.extend(kept.map(|r| r.row).filter(|&r| r != NO_ROW));
            }
        } else {
            self.live(comm).put(k, inst);
        }
        Ok(from)
    }

    /// How many collective ends `loc` has seen on `comm`.
    fn ends_seen(&mut self, loc: u32, comm: u32) -> &mut u64 {
        let l = loc as usize;
        if l >= self.coll_count.len() {
            self.coll_count.resize_with(l + 1, Vec::new);
        }
        let v = &mut self.coll_count[l];
        let at = match v.iter().position(|c| c.0 == comm) {
            Some(p) => p,
            None => {
                v.push((comm, 0));
                v.len() - 1
            }
        };
        &mut v[at].1
    }

    fn live(&mut self, comm: u32) -> &mut LiveInstances {
        let c = comm as usize;
        if c >= self.instances.len() {
            self.instances.resize_with(c + 1, LiveInstances::default);
        }
        &mut self.instances[c]
    }

    /// A virtual node fed by `feeding` (weight-0 arcs), at the latest of their times.
    fn virtual_node(&mut self, feeding: &[Reached], op: CollOp) -> Result<Reached> {
        let wall = feeding.iter().map(|b| b.wall).max().unwrap_or(0);
        let v = self.push_node(NONE, NONE, wall, 0, 0, VIRTUAL, NEG)?;
        if let Some(lanes) = &mut self.lanes {
            lanes.start_unreached();
        }
        for b in feeding {
            self.push_arc(v, *b, 0, ArcKind::CollIn, 0, op.code() + 1);
        }
        Ok(Reached { node: v, loc: NONE, wall, dist: self.newest_dist, row: self.save_lanes() })
    }

    /// Scan: the end of rank r waits for the begins of ranks below r, through a chain
    /// of prefix nodes (node j: the latest of ranks 0..=j), made as far as needed.
    fn scan_prefix(&mut self, comm: u32, inst: &mut Instance, loc: u32) -> Result<Option<Reached>> {
        let ranks = self.ranks.entry(comm).or_insert_with(|| {
            let members =
                self.pag.defs.comms.get(comm as usize).map(|c| c.members.clone()).unwrap_or_default();
            members.iter().enumerate().map(|(r, &l)| (l, r as u32)).collect()
        });
        let Some(&r) = ranks.get(&loc) else { return Ok(None) };
        if r == 0 {
            return Ok(None);
        }
        let by_rank: FxHashMap<u32, Reached> =
            inst.begins.iter().filter_map(|&(l, n)| ranks.get(&l).map(|&rk| (rk, n))).collect();
        while (inst.scan.len() as u32) < r {
            let j = inst.scan.len() as u32;
            let mut feeding = Vec::with_capacity(2);
            if let Some(&p) = inst.scan.last() {
                feeding.push(p);
            }
            match by_rank.get(&j) {
                Some(&b) => feeding.push(b),
                None => self.late_begins += 1,
            }
            let v = self.virtual_node(&feeding, CollOp::Scan)?;
            inst.scan.push(v);
        }
        Ok(Some(inst.scan[r as usize - 1]))
    }

    /// The graph (empty when only its lengths were made), its distances when they hold,
    /// and the message arcs of a build that kept no graph.
    fn finish(mut self) -> Result<Built> {
        let t0 = if self.min_wall == i64::MAX { 0 } else { self.min_wall };
        self.pag.t0 = t0;
        let mut track = self.track.take();
        // The last event node of the longest distance, as the forward pass picks it:
        // distances only grow along a location, so it is the latest of the locations'
        // last nodes that reach the longest.
        let longest = self.locs.iter().enumerate().filter(|(_, st)| st.last != NONE);
        let longest = longest.map(|(l, st)| (st.dist, st.last, l as u32)).max();
        let (mut length, end) = longest.map_or((NEG, None), |(d, node, _)| (d, Some(node as usize)));
        if let (Sieve::Winners(w), Some((.., l))) = (&mut self.sieve, longest) {
            w.end_loc = l;
        }
        // Source arcs: elapsed time since the source (wall), CPU time used before the
        // first event (cpu; the builder stored it, 0 when unknown).
        for (k, &(i, cpu, wall)) in self.sources.iter().enumerate() {
            let since = wall - t0;
            let weight = match self.mode {
                Mode::Wall => since,
                Mode::Cpu => cpu.clamp(0, since.max(0)),
            };
            if self.lengths_only.is_none() {
                self.pag.weight[i as usize] = weight;
            }
            match &mut self.sieve {
                Sieve::Path(g) => g.source(k, i, weight),
                Sieve::Write(w) => w.source(i, weight),
                _ => {}
            }
            // A CPU time clamped by a t0 that came later: the distances are wrong.
            if self.mode == Mode::Cpu && track.as_ref().is_some_and(|t| t.provisional[k] != weight) {
                track = None;
            }
        }
        if let Some(t) = &mut track {
            // Every path starts with one source arc: wall-mode distances move as one
            // (and which way into a node is longest stays).
            if let Some(base) = t.base {
                if length > NEG {
                    length -= t0 - base;
                }
            }
        }
        if !self.spawns.is_empty() {
            if self.lengths_only.is_none() {
                self.link_spawns()?;
            }
            track = None;
            // Spawn arcs are linked with the graph: a graph written as built lacks them.
            if matches!(self.sieve, Sieve::Write(_)) {
                self.sieve = Sieve::Nothing;
            }
        }
        let waiting = self.pending.iter().flatten().chain(self.pending_more.values());
        let n = waiting.filter(|p| p.kind == ArcKind::Message).count();
        if n > 0 {
            self.pag.notes.push(format!("{n} send(s) whose receive is not in the trace"));
        }
        if self.unmatched_receives > 0 {
            self.pag.notes.push(format!("{} receive(s) without a matched send", self.unmatched_receives));
        }
        if self.aligned == Some(false) && self.offsets.0 > 0 {
            self.pag.notes.push(format!(
                "the clocks are not aligned: {} clock-offset sample(s), offsets up to {}, were not \
                 applied (run spoor-align first)",
                self.offsets.0,
                crate::show::fmt_ns(self.offsets.1.min(i64::MAX as u64) as i64)
            ));
        }
        if let Some(note) = self.blocked_note() {
            self.pag.notes.push(note);
        }
        if self.wildcards > 0 {
            self.pag.notes.push(format!(
                "{} receive(s) from any source: they keep the sends they matched, which under \
                 another timing could be others (spoor-gag and spoor-whatif --wildcards arrival \
                 serve a server loop's requests as they arrive)",
                self.wildcards
            ));
        }
        if self.mode == Mode::Cpu && self.lengths_only.is_some() {
            // Arcs weighed again after the build: its lengths are not theirs.
            if lengths_need_the_graph(&self.pag.defs, self.mode, false) {
                track = None;
            }
        } else if self.mode == Mode::Cpu {
            if let Some(note) = self.undo_shared_processors() {
                self.pag.notes.push(note);
                track = None;
            }
        }
        if self.late_begins > 0 {
            self.pag
                .notes
                .push(format!("{} collective begin(s) missing where a scan needed them", self.late_begins));
        }
        let nodes = if self.lengths_only.is_some() { self.made as usize } else { self.pag.nodes() };
        self.pag.give_back_spare();
        let lanes = self.lanes.as_ref().map(Lanes::lengths);
        let distances = track.map(|t| Distances { length, end, remote: t.remote, nodes, lanes });
        Ok((self.pag, distances, self.lengths_only, self.sieve))
    }

    /// Spawn arcs point back at an event that does not know it is a spawn point:
    /// resolve them in one pass over the nodes, then keep the arcs sorted by target.
    fn link_spawns(&mut self) -> Result<()> {
        let mut want: Vec<(u32, u64, usize)> =
            self.spawns.iter().enumerate().map(|(k, &(_, l, i))| (l, i, k)).collect();
        want.sort_unstable();
        let mut found = vec![NONE; self.spawns.len()];
        let mut count = vec![0u64; self.locs.len()];
        for n in 0..self.pag.nodes() {
            let l = self.pag.loc[n];
            if l == NONE {
                continue;
            }
            let c = count[l as usize];
            if let Ok(p) = want.binary_search_by(|w| (w.0, w.1).cmp(&(l, c))) {
                // Several spawns may name one parent event.
                let mut q = p;
                while q > 0 && (want[q - 1].0, want[q - 1].1) == (l, c) {
                    q -= 1;
                }
                while q < want.len() && (want[q].0, want[q].1) == (l, c) {
                    found[want[q].2] = n as u32;
                    q += 1;
                }
            }
            count[l as usize] += 1;
        }
        let mut extra = Vec::new();
        for (k, &(node, pl, pi)) in self.spawns.iter().enumerate() {
            let from = found[k];
            if from == NONE || from >= node {
                return Err(self.err(format!(
                    "not in causal order: the begin at node {node} names its parent event {pl}:{pi}, \
                     which {}",
                    if from == NONE { "is not in the trace" } else { "comes after it" }
                )));
            }
            let w = self.remote_weight(self.pag.wall[node as usize], self.pag.wall[from as usize], None);
            extra.push((node, from, w));
        }
        let mut all: Vec<(u32, u32, u32, i64, ArcKind, u64, u8)> = (0..self.pag.arcs())
            .map(|a| {
                (
                    self.pag.arc_to[a],
                    a as u32,
                    self.pag.arc_from[a],
                    self.pag.arc_weight[a],
                    self.pag.arc_kind[a],
                    self.pag.arc_bytes[a],
                    self.pag.arc_op[a],
                )
            })
            .collect();
        let base = all.len() as u32;
        for (k, (to, from, w)) in extra.into_iter().enumerate() {
            all.push((to, base + k as u32, from, w, ArcKind::Spawn, 0, 0));
        }
        all.sort_unstable_by_key(|a| (a.0, a.1));
        self.pag.arc_to = all.iter().map(|a| a.0).collect();
        self.pag.arc_from = all.iter().map(|a| a.2).collect();
        self.pag.arc_weight = all.iter().map(|a| a.3).collect();
        self.pag.arc_kind = all.iter().map(|a| a.4).collect();
        self.pag.arc_bytes = all.iter().map(|a| a.5).collect();
        self.pag.arc_op = all.iter().map(|a| a.6).collect();
        Ok(())
    }
}

/// The weight of the local arc into event `s` from its location's previous one
/// (state `st`); `CPU` for CPU-mode weights.
#[inline(always)]
fn local_weight<const CPU: bool>(st: &LocState, s: &Brief) -> i64 {
    if st.last == NONE {
        // The source arc; its weight needs t0 and is set in finish().
        if s.cpu == NO_CPU {
            0
        } else {
            s.cpu
        }
    } else {
        if !CPU {
            (s.wall - st.wall).max(0)
        } else if st.waiting || st.call != NONE {
            0
        } else {
            cpu_used(st, s)
        }
    }
}

/// The CPU time used from a location's previous event (state `st`) to `s`: at most the
/// wall time between them, the wall time where either CPU time is unknown.
#[inline(always)]
fn cpu_used(st: &LocState, s: &Brief) -> i64 {
    let d = (s.wall - st.wall).max(0);
    if s.cpu != NO_CPU && st.cpu != NO_CPU {
        (s.cpu - st.cpu).clamp(0, d)
    } else {
        d
    }
}
