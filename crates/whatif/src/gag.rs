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
//! per processor). A receive ends at the later of its local readiness and its send's
//! time plus the transfer time. Events are reported in order of predicted time across
//! all processors, so a long computation in one process never holds the others back,
//! and no keep-alive events are needed.
//!
//! State: per location its queue and current event, per processor a heap of runnable
//! locations, a map of the remote arcs whose origin is reported and whose target has
//! not arrived (messages in flight), and one byte per node counting the remote arcs
//! out of it.

use crate::placement::Placement;
use rustc_hash::FxHashMap;
use spoor_graph::pag::{ArcKind, Pag, NONE, VIRTUAL};
use spoor_graph::{Error, Mode, NetTable, Result};
use spoor_model::Definitions;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// What a prediction changes in the PAG's costs besides the placement.
#[derive(Clone, Debug, Default)]
pub struct Costs<'a> {
    /// Local-arc weights to use instead of the PAG's (a procedure move).
    pub local: Option<&'a [i64]>,
    /// Procedures whose exclusive time counts as zero (critical-path zeroing).
    pub zero: Vec<u32>,
    /// Message-arc weights from this table: local when sender and receiver share a
    /// processor in the placement, remote otherwise (the networking factor).
    pub net: Option<&'a NetTable>,
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

/// The predicted time of the PAG's run on the placement's processors.
pub fn predict(pag: &Pag, place: &Placement, costs: &Costs) -> Result<Prediction> {
    let mut sim = Sim::new(pag, place, costs, false)?;
    sim.run()?;
    Ok(sim.prediction())
}

/// The Group Activity Graph: a PAG whose locations are the placement's processors,
/// nodes in predicted-time order, each local arc weighing the processor's busy time
/// between two of its events; remote arcs as in the PAG (with the table's weights under
/// `costs.net`). Its critical path in cpu mode is the predicted time.
pub fn build_gag(pag: &Pag, place: &Placement, costs: &Costs) -> Result<(Pag, Prediction)> {
    let mut sim = Sim::new(pag, place, costs, true)?;
    sim.run()?;
    let pred = sim.prediction();
    Ok((sim.finish_gag(place), pred))
}

const RUNNING: u8 = 0;
const BLOCKED: u8 = 1;
const DONE: u8 = 2;
const STARTING: u8 = 3;

struct Loc {
    node: u32,
    state: u8,
    group: u32,
    /// Nodes of this location that have not arrived yet.
    left: u64,
    /// Arrived nodes, with `HAS_WAIT` when remote arcs lead into them.
    queue: VecDeque<(u64, i64)>,
    /// The current node's `HAS_WAIT` and `HAS_OUT` flags.
    flags: u64,
}

struct Group {
    /// The time the group's state is advanced to.
    t: f64,
    /// Virtual time: CPU time each runnable location has received.
    v: f64,
    /// Time during which a location of the group was runnable.
    busy: f64,
    n: u32,
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    version: u32,
    /// The group's last reported node in the GAG, its time and busy time.
    last: (u32, f64, f64),
    /// Time passed with nothing runnable since the last reported node.
    idle: bool,
}

impl Group {
    #[inline]
    fn advance(&mut self, t: f64) {
        if self.n == 0 && t > self.t {
            self.idle = true;
        }
        if self.n > 0 && t > self.t {
            let dt = t - self.t;
            self.v += dt / self.n as f64;
            self.busy += dt;
        }
        if t > self.t {
            self.t = t;
        }
    }

    /// The time the first runnable location of the group finishes its work.
    #[inline]
    fn next(&self) -> Option<f64> {
        self.heap.peek().map(|Reverse((v, _))| {
            let left = (f64::from_bits(*v) - self.v).max(0.0);
            self.t + left * self.n as f64
        })
    }
}

/// Remote arcs into an arrived node that is not reported.
#[derive(Clone, Copy)]
struct Wait {
    pending: u32,
    ready: f64,
    lo: u32,
    hi: u32,
}

/// Items of the global agenda.
const GROUP: u64 = 0;
const UNBLOCK: u64 = 1;
/// A queued node with remote arcs into it (the flag above the node's number).
const HAS_WAIT: u64 = 1 << 32;
/// A queued node with remote arcs out of it.
const HAS_OUT: u64 = 1 << 33;

struct Sim<'a> {
    pag: &'a Pag,
    local: &'a [i64],
    zero_ctx: Vec<bool>,
    any_zero: bool,
    net: Option<&'a NetTable>,
    group_of_loc: Vec<u32>,
    locs: Vec<Loc>,
    groups: Vec<Group>,
    /// (time bits, item): the item is `kind << 63 | version << 32 | id`; ties go to
    /// the smaller item, so the order is fixed.
    agenda: BinaryHeap<Reverse<(u64, u64)>>,
    now: f64,
    cursor: usize,
    arc_cursor: usize,
    /// Remote arcs out of each node not yet consumed (255: many, kept for good).
    out_left: Vec<u8>,
    /// Reported origins whose targets have not all arrived: (time, arcs left).
    origin: FxHashMap<u32, (f64, u8)>,
    /// Unreported origins: the arrived targets waiting for them, with the arc.
    waiters: FxHashMap<u32, Vec<(u32, u32)>>,
    wait: FxHashMap<u32, Wait>,
    virt: Vec<u32>,
    dirty: Vec<u32>,
    reported: u64,
    arrived: u64,
    max_in_flight: u64,
    end: f64,
    gag: Option<GagOut>,
}

struct GagOut {
    pag: Pag,
    id: Vec<u32>,
}

#[inline]
fn round(t: f64) -> i64 {
    t.round() as i64
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
        let local = costs.local.unwrap_or(&pag.weight);
        if local.len() != pag.nodes() {
            return Err(Error::Usage("the local weights do not fit the PAG".into()));
        }
        let group_of_loc = place.group_of_locations(pag);
        let mut locs: Vec<Loc> = group_of_loc
            .iter()
            .map(|&g| Loc {
                node: NONE,
                state: STARTING,
                group: g,
                left: 0,
                queue: VecDeque::new(),
                flags: 0,
            })
            .collect();
        for &l in &pag.loc {
            if l != NONE {
                locs[l as usize].left += 1;
            }
        }
        let mut out_left = vec![0u8; pag.nodes()];
        for &f in &pag.arc_from {
            let c = &mut out_left[f as usize];
            *c = c.saturating_add(1);
        }
        let zero_ctx: Vec<bool> =
            pag.contexts.iter().map(|c| c.proc != NONE && costs.zero.contains(&c.proc)).collect();
        let any_zero = zero_ctx.iter().any(|&z| z);
        let groups = (0..place.groups())
            .map(|_| Group {
                t: 0.0,
                v: 0.0,
                busy: 0.0,
                n: 0,
                heap: BinaryHeap::new(),
                version: 0,
                last: (NONE, 0.0, 0.0),
                idle: false,
            })
            .collect();
        let gag = gag.then(|| GagOut {
            pag: Pag {
                mode: Mode::Cpu,
                t0: pag.t0,
                contexts: pag.contexts.clone(),
                notes: pag.notes.clone(),
                ..Pag::default()
            },
            id: vec![NONE; pag.nodes()],
        });
        Ok(Sim {
            pag,
            local,
            zero_ctx,
            any_zero,
            net: costs.net,
            group_of_loc,
            locs,
            groups,
            agenda: BinaryHeap::new(),
            now: 0.0,
            cursor: 0,
            arc_cursor: 0,
            out_left,
            origin: FxHashMap::default(),
            waiters: FxHashMap::default(),
            wait: FxHashMap::default(),
            virt: Vec::new(),
            dirty: Vec::new(),
            reported: 0,
            arrived: 0,
            max_in_flight: 0,
            end: 0.0,
            gag,
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

    #[inline]
    fn arc_weight(&self, a: usize) -> i64 {
        let p = self.pag;
        match self.net {
            Some(t) if p.arc_kind[a] == ArcKind::Message => {
                let (f, to) = (p.loc[p.arc_from[a] as usize], p.loc[p.arc_to[a] as usize]);
                let same = f != NONE
                    && to != NONE
                    && self.group_of_loc.get(f as usize) == self.group_of_loc.get(to as usize);
                t.time(p.arc_bytes[a], same)
            }
            _ => p.arc_weight[a].max(0),
        }
    }

    #[inline]
    fn push(&mut self, t: f64, kind: u64, id: u32, version: u32) {
        let item = kind << 63 | ((version & 0x7fff_ffff) as u64) << 32 | id as u64;
        self.agenda.push(Reverse((t.to_bits(), item)));
    }

    /// The next node of the PAG arrives: its remote arcs are joined to their origins.
    fn arrive(&mut self) {
        let i = self.cursor as u32;
        self.cursor += 1;
        self.arrived += 1;
        let p = self.pag;
        let lo = self.arc_cursor;
        while self.arc_cursor < p.arc_to.len() && p.arc_to[self.arc_cursor] <= i {
            self.arc_cursor += 1;
        }
        let hi = self.arc_cursor;
        let flag = if hi > lo { HAS_WAIT } else { 0 };
        if hi > lo {
            let mut w = Wait { pending: 0, ready: 0.0, lo: lo as u32, hi: hi as u32 };
            for a in lo..hi {
                let from = p.arc_from[a];
                let aw = self.arc_weight(a) as f64;
                match self.origin.get_mut(&from) {
                    Some(o) => {
                        w.ready = w.ready.max(o.0 + aw);
                        if o.1 != u8::MAX {
                            o.1 -= 1;
                            if o.1 == 0 {
                                self.origin.remove(&from);
                            }
                        }
                    }
                    None => {
                        self.waiters.entry(from).or_default().push((i, a as u32));
                        w.pending += 1;
                    }
                }
            }
            if p.loc[i as usize] == NONE && w.pending == 0 {
                self.wait.insert(i, w);
                self.virt.push(i);
            } else {
                self.wait.insert(i, w);
            }
        } else if p.loc[i as usize] == NONE {
            self.virt.push(i);
        }
        let l = p.loc[i as usize];
        if l != NONE {
            // What the location needs of the node later, read now while it is in cache.
            let w = self.local_weight(i);
            let out = if self.out_left[i as usize] > 0 { HAS_OUT } else { 0 };
            let loc = &mut self.locs[l as usize];
            loc.left -= 1;
            loc.queue.push_back((i as u64 | flag | out, w));
        }
        let inflight = self.arrived - self.reported;
        if inflight > self.max_in_flight {
            self.max_in_flight = inflight;
        }
    }

    #[inline]
    fn next_node(&mut self, l: u32) -> Option<(u64, i64)> {
        loop {
            if let Some(x) = self.locs[l as usize].queue.pop_front() {
                return Some(x);
            }
            if self.locs[l as usize].left == 0 {
                return None;
            }
            self.arrive();
            self.drain_virtual();
        }
    }

    /// Reports node `x` at time `t`: it joins the GAG, and the remote arcs out of it
    /// release their targets.
    fn report(&mut self, x: u32, t: f64, l: u32, flags: u64) {
        self.reported += 1;
        let p = self.pag;
        let w = if flags & HAS_WAIT != 0 { self.wait.remove(&x) } else { None };
        if l != NONE && t > self.end {
            self.end = t;
        }
        if self.gag.is_some() {
            self.gag_node(x, t, l, w);
        }
        if flags & HAS_OUT == 0 {
            return;
        }
        let out = self.out_left[x as usize];
        let mut used = 0u32;
        if let Some(ws) = self.waiters.remove(&x) {
            for &(tgt, a) in &ws {
                used += 1;
                let aw = self.arc_weight(a as usize) as f64;
                let Some(wt) = self.wait.get_mut(&tgt) else { continue };
                wt.pending -= 1;
                wt.ready = wt.ready.max(t + aw);
                if wt.pending == 0 {
                    let ready = wt.ready;
                    let tl = p.loc[tgt as usize];
                    if tl == NONE {
                        self.virt.push(tgt);
                    } else {
                        let loc = &self.locs[tl as usize];
                        if loc.state == BLOCKED && loc.node == tgt {
                            self.push(ready.max(self.now), UNBLOCK, tl, 0);
                        }
                    }
                }
            }
        }
        if out == u8::MAX {
            self.origin.insert(x, (t, u8::MAX));
        } else if (out as u32) > used {
            self.origin.insert(x, (t, (out as u32 - used) as u8));
        }
    }

    fn drain_virtual(&mut self) {
        while let Some(v) = self.virt.pop() {
            let t = self.wait.get(&v).map_or(0.0, |w| w.ready);
            self.report(v, t, NONE, HAS_WAIT | HAS_OUT);
        }
    }

    fn gag_node(&mut self, x: u32, t: f64, l: u32, w: Option<Wait>) {
        let p = self.pag;
        let (g, prev, weight) = if l == NONE {
            (NONE, NONE, 0)
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
            }
            for a in w.lo as usize..w.hi as usize {
                let aw = self.arc_weight(a);
                self.gag.as_mut().unwrap().pag.arc_weight.push(aw);
            }
        }
        if g != NONE {
            let gr = &mut self.groups[g as usize];
            gr.last = (id, t, gr.busy);
            gr.idle = false;
        }
    }

    /// Location `l` has done the local work of its current event at time `t` (its
    /// group advanced to `t`): the event happens now, or waits for its remote arcs.
    fn local_done(&mut self, l: u32, t: f64) -> bool {
        let x = self.locs[l as usize].node;
        let flags = self.locs[l as usize].flags;
        if let Some(w) = if flags & HAS_WAIT != 0 { self.wait.get(&x) } else { None } {
            if w.pending > 0 {
                self.locs[l as usize].state = BLOCKED;
                return false;
            }
            if w.ready > t {
                self.locs[l as usize].state = BLOCKED;
                self.push(w.ready, UNBLOCK, l, 0);
                return false;
            }
        }
        self.report(x, t, l, flags);
        if !self.virt.is_empty() {
            self.drain_virtual();
        }
        true
    }

    /// Location `l` moves on to its next events from time `t` (its group advanced to
    /// `t`), reporting those that need no time, until one needs CPU time or waits.
    fn advance_location(&mut self, l: u32, t: f64) {
        loop {
            let Some(x) = self.next_node(l) else {
                self.locs[l as usize].state = DONE;
                return;
            };
            let (e, w) = x;
            let (x, flags) = (e as u32, e & (HAS_WAIT | HAS_OUT));
            let loc = &mut self.locs[l as usize];
            loc.node = x;
            loc.flags = flags;
            if w > 0 {
                let g = self.locs[l as usize].group as usize;
                let gr = &mut self.groups[g];
                let vfin = gr.v + w as f64;
                gr.heap.push(Reverse((vfin.to_bits(), l)));
                gr.n += 1;
                self.locs[l as usize].state = RUNNING;
                self.dirty.push(g as u32);
                return;
            }
            if !self.local_done(l, t) {
                return;
            }
        }
    }

    /// The first runnable location of group `g` finishes its work at `t`.
    fn group_step(&mut self, g: u32, t: f64) {
        let gr = &mut self.groups[g as usize];
        gr.advance(t);
        let Some(Reverse((_, l))) = gr.heap.pop() else { return };
        gr.n -= 1;
        if gr.n == 0 {
            // No rounding left behind: an idle group's clock restarts from its time.
            gr.v = 0.0;
        }
        self.dirty.push(g);
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
        let mut next_item: Option<(u64, u64)> = None;
        while let Some((tb, item)) = next_item.take().or_else(|| self.agenda.pop().map(|Reverse(x)| x)) {
            let t = f64::from_bits(tb);
            let id = item as u32;
            let version = ((item >> 32) & 0x7fff_ffff) as u32;
            self.now = t;
            if item >> 63 == GROUP {
                if self.groups[id as usize].version & 0x7fff_ffff != version {
                    continue;
                }
                let mut t = t;
                loop {
                    self.group_step(id, t);
                    self.reschedule(id);
                    // Keep going in this group while nothing else comes first.
                    let gr = &mut self.groups[id as usize];
                    gr.version = gr.version.wrapping_add(1);
                    let Some(next) = gr.next() else { break };
                    let first = self.agenda.peek().map(|Reverse((b, _))| f64::from_bits(*b));
                    if first.is_some_and(|f| f <= next) {
                        // Put this group's next completion where the first item was.
                        let gr = &mut self.groups[id as usize];
                        gr.version = gr.version.wrapping_add(1);
                        let ours = (
                            next.to_bits(),
                            GROUP << 63 | ((gr.version & 0x7fff_ffff) as u64) << 32 | id as u64,
                        );
                        let mut top = self.agenda.peek_mut().expect("the agenda has a first item");
                        next_item = Some(std::mem::replace(&mut *top, Reverse(ours)).0);
                        break;
                    }
                    t = next;
                    self.now = t;
                }
            } else {
                let l = id;
                let g = self.locs[l as usize].group;
                self.groups[g as usize].advance(t);
                if self.locs[l as usize].state != BLOCKED {
                    continue;
                }
                let x = self.locs[l as usize].node;
                let flags = self.locs[l as usize].flags;
                self.report(x, t, l, flags);
                self.drain_virtual();
                self.advance_location(l, t);
                self.reschedule(NONE);
            }
        }
        // Whatever never arrived (nodes after every location's last event) arrives now.
        while self.cursor < self.pag.nodes() {
            self.arrive();
            self.drain_virtual();
        }
        if let Some(l) = self.locs.iter().position(|l| l.state != DONE) {
            let loc = &self.locs[l];
            return Err(Error::Usage(format!(
                "the prediction is stuck: {} waits at node {} for a remote arc that never comes \
                 (is the PAG in causal order?)",
                self.pag.loc_name(l as u32),
                loc.node
            )));
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
            .filter_map(|&(n, node, b)| out.id.get(node as usize).map(|&i| (n, i, b)))
            .collect();
        out.pag.notes.push(format!(
            "Group Activity Graph of {} processes on {} processors",
            procs.len(),
            place.groups()
        ));
        out.pag
    }
}
