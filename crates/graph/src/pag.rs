//! The Program Activity Graph in memory (formats/pag.md): nodes in a topological
//! order, each with the local arc into it; remote arcs listed by their target.

use crate::cost::{Local, Mode};
use crate::net::Network;
use spoor_format::spill::{Arena, SpillVec};
use spoor_model::{ClockViolations, Definitions, EventRef, StrId, KIND_NAMES};
use std::sync::Arc;

/// "No node", "no location", "no procedure".
pub const NONE: u32 = u32::MAX;
/// The kind of a collective's virtual node (event kinds are 0..KIND_COUNT).
pub const VIRTUAL: u8 = 255;
/// The kind code of a clock-offset sample (`Kind::ClockOffset`): a node without arcs
/// that no path reaches (formats/pag.md, "Nodes").
pub const CLOCK_OFFSET: u8 = spoor_format::binary::kind::CLOCK_OFFSET;

/// What of a procedure's time a question is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Where it is the innermost procedure: its own time.
    Exclusive,
    /// Where it is anywhere on the call stack: its time with everything it calls.
    Inclusive,
}

impl Reach {
    /// `Inclusive` when `inclusive` holds (options keep the choice as a flag).
    pub fn inclusive_if(inclusive: bool) -> Reach {
        if inclusive {
            Reach::Inclusive
        } else {
            Reach::Exclusive
        }
    }
}

/// What a remote arc stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArcKind {
    /// A send to the receive completion that got it.
    Message = 0,
    /// A collective begin to the instance's virtual node (weight 0).
    CollIn = 1,
    /// A collective instance's virtual node to an end that waited for it.
    CollOut = 2,
    /// A lock release to the acquisition that waited for it.
    Lock = 3,
    /// A parent's spawn point to the begin of the process or thread it started.
    Spawn = 4,
}

impl ArcKind {
    /// Every kind, in code order.
    pub const ALL: [ArcKind; 5] =
        [ArcKind::Message, ArcKind::CollIn, ArcKind::CollOut, ArcKind::Lock, ArcKind::Spawn];

    /// A collective's arc (into its virtual node or out of it).
    pub fn is_collective(self) -> bool {
        matches!(self, ArcKind::CollIn | ArcKind::CollOut)
    }

    /// The kind of a PAG file's code, if any.
    pub fn from_code(c: u8) -> Option<ArcKind> {
        Self::ALL.get(c as usize).copied()
    }

    /// The kind's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            ArcKind::Message => "message",
            ArcKind::CollIn => "coll_in",
            ArcKind::CollOut => "collective",
            ArcKind::Lock => "lock",
            ArcKind::Spawn => "spawn",
        }
    }
}

/// A node of the calling-context tree: the procedure entered and the context it was
/// entered from. Context 0 is the root (outside every procedure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Context {
    /// The context it was entered from (`NONE` for the root).
    pub parent: u32,
    /// The procedure entered (`NONE` for the root).
    pub proc: StrId,
}

/// Where a phase begins or ends in a PAG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseMark {
    /// The phase's name.
    pub name: StrId,
    /// The node of its begin or end event.
    pub node: u32,
    /// A begin (else an end).
    pub begin: bool,
}

/// The Program Activity Graph of one trace.
///
/// Node `i` is an event of the trace (or a collective's virtual node), numbered in a
/// causally consistent order, so every arc goes from a lower to a higher number. The
/// local arc into a node comes from `prev[i]` (the location's previous event) or, for a
/// location's first event, from the graph's source; it weighs `weight[i]` and is
/// attributed to the location and the calling context `ctx[i]` active during it.
#[derive(Clone, Debug, Default)]
pub struct Pag {
    /// The trace's definitions.
    pub defs: Definitions,
    /// What the weights measure.
    pub mode: Mode,
    /// The earliest wall time of the trace: the source's time.
    pub t0: i64,
    /// Per node: its location (`NONE` for a virtual node).
    pub loc: SpillVec<u32>,
    /// Per node: the location's previous node (`NONE` for its first).
    pub prev: SpillVec<u32>,
    /// Per node: the event's wall time.
    pub wall: SpillVec<i64>,
    /// Per node: the weight of its local arc.
    pub weight: SpillVec<i64>,
    /// Per node: the calling context of its local arc.
    pub ctx: SpillVec<u32>,
    /// Per node: the event's kind code, `VIRTUAL` for a collective's node.
    pub kind: SpillVec<u8>,
    /// Remote arcs, sorted by target (then in the order they were made).
    pub arc_to: SpillVec<u32>,
    /// Per remote arc: its source node.
    pub arc_from: SpillVec<u32>,
    /// Per remote arc: its weight.
    pub arc_weight: SpillVec<i64>,
    /// Per remote arc: what it stands for.
    pub arc_kind: SpillVec<ArcKind>,
    /// Per remote arc: the message's size, or of a collective arc into an end, the
    /// bytes of that end (the more of what it sent and received); 0 for the others.
    pub arc_bytes: SpillVec<u64>,
    /// Per remote arc: of a collective arc, its operation's code + 1
    /// (`spoor_model::CollOp::code`); 0 for the others, and when unknown.
    pub arc_op: SpillVec<u8>,
    /// The calling-context tree (`ctx` indexes it).
    pub contexts: Vec<Context>,
    /// Phase begins and ends, in node order.
    pub phases: Vec<PhaseMark>,
    /// What the builder saw but could not turn into arcs (unmatched messages, ...).
    pub notes: Vec<String>,
    /// The ends of blocking receives posted for any source, in node order (cpu mode:
    /// a prediction may serve them in the order their messages arrive).
    pub wildcard_receives: Vec<u32>,
    /// Set when the graph holds only a critical path's nodes and arcs
    /// (`streamed::critical_path`): what reports need of the rest.
    pub partial: Option<Box<Partial>>,
}

/// What a graph holding only a critical path's nodes and arcs knows of the whole graph.
#[derive(Clone, Debug, Default)]
pub struct Partial {
    /// The whole graph's nodes.
    pub nodes: usize,
    /// The whole graph's remote arcs.
    pub arcs: usize,
    /// Its clock-condition violations.
    pub clock: ClockViolations,
    /// Each procedure's exclusive time over the whole graph, by procedure id.
    pub procedure_time: Vec<(u32, i64)>,
    /// The processes with events.
    pub processes: usize,
    /// Per node kept, its event (`None` for a virtual node).
    pub events: Vec<Option<EventRef>>,
}

impl Pag {
    /// An empty graph whose node and arc arrays live in `arena`'s file (`None`: in
    /// memory), as those of a graph larger than memory do.
    pub fn in_arena(arena: Option<&Arc<Arena>>) -> Pag {
        Pag {
            loc: SpillVec::new_in(arena),
            prev: SpillVec::new_in(arena),
            wall: SpillVec::new_in(arena),
            weight: SpillVec::new_in(arena),
            ctx: SpillVec::new_in(arena),
            kind: SpillVec::new_in(arena),
            arc_to: SpillVec::new_in(arena),
            arc_from: SpillVec::new_in(arena),
            arc_weight: SpillVec::new_in(arena),
            arc_kind: SpillVec::new_in(arena),
            arc_bytes: SpillVec::new_in(arena),
            arc_op: SpillVec::new_in(arena),
            ..Pag::default()
        }
    }

    /// In a file, gives back the room its arrays have past their lengths.
    pub fn give_back_spare(&mut self) {
        self.loc.give_back_spare();
        self.prev.give_back_spare();
        self.wall.give_back_spare();
        self.weight.give_back_spare();
        self.ctx.give_back_spare();
        self.kind.give_back_spare();
        self.arc_to.give_back_spare();
        self.arc_from.give_back_spare();
        self.arc_weight.give_back_spare();
        self.arc_kind.give_back_spare();
        self.arc_bytes.give_back_spare();
        self.arc_op.give_back_spare();
    }

    /// The file its arrays live in (`None`: in memory).
    pub fn arena(&self) -> Option<&Arc<Arena>> {
        self.loc.arena()
    }

    /// Where its file could not grow (the disk full), the error: a graph whose arrays
    /// stopped growing is not whole.
    pub fn spill_error(&self) -> crate::Result<()> {
        match self.arena().and_then(|a| a.error()) {
            Some(e) => Err(crate::Error::Spill(e)),
            None => Ok(()),
        }
    }

    /// The number of nodes.
    pub fn nodes(&self) -> usize {
        self.loc.len()
    }

    /// Appends a node to the node arrays.
    #[inline]
    #[allow(clippy::too_many_arguments)] // one per node array
    pub(crate) fn push_node(&mut self, loc: u32, prev: u32, wall: i64, weight: i64, ctx: u32, kind: u8) {
        self.loc.push(loc);
        self.prev.push(prev);
        self.wall.push(wall);
        self.weight.push(weight);
        self.ctx.push(ctx);
        self.kind.push(kind);
    }

    /// Appends a remote arc to the arc arrays.
    #[inline]
    #[allow(clippy::too_many_arguments)] // one per arc array
    pub(crate) fn push_arc(&mut self, to: u32, from: u32, weight: i64, kind: ArcKind, bytes: u64, op: u8) {
        self.arc_to.push(to);
        self.arc_from.push(from);
        self.arc_weight.push(weight);
        self.arc_kind.push(kind);
        self.arc_bytes.push(bytes);
        self.arc_op.push(op);
    }

    /// Empties the node arrays, keeping their room.
    pub(crate) fn clear_nodes(&mut self) {
        self.loc.clear();
        self.prev.clear();
        self.wall.clear();
        self.weight.clear();
        self.ctx.clear();
        self.kind.clear();
    }

    /// Empties the arc arrays, keeping their room.
    pub(crate) fn clear_arcs(&mut self) {
        self.arc_to.clear();
        self.arc_from.clear();
        self.arc_weight.clear();
        self.arc_kind.clear();
        self.arc_bytes.clear();
        self.arc_op.clear();
    }

    /// The number of nodes of the whole graph (more than `nodes` where it holds only a
    /// critical path's).
    pub fn graph_nodes(&self) -> usize {
        self.partial.as_ref().map_or(self.nodes(), |p| p.nodes)
    }

    /// The number of remote arcs of the whole graph.
    pub fn graph_arcs(&self) -> usize {
        self.partial.as_ref().map_or(self.arcs(), |p| p.arcs)
    }

    /// The number of remote arcs.
    pub fn arcs(&self) -> usize {
        self.arc_to.len()
    }

    /// The range of arcs into node `i`.
    pub fn arcs_into(&self, i: u32) -> std::ops::Range<usize> {
        let lo = self.arc_to.partition_point(|&t| t < i);
        let hi = lo + self.arc_to[lo..].partition_point(|&t| t <= i);
        lo..hi
    }

    /// How many remote arcs leave each node (255: that many or more), beside the graph
    /// (in its file where it has one).
    pub fn remote_arcs_out(&self) -> SpillVec<u8> {
        let mut out = crate::mem::filled_in(self.nodes(), 0u8, self.arena());
        for &f in &self.arc_from {
            if let Some(c) = out.get_mut(f as usize) {
                *c = c.saturating_add(1);
            }
        }
        out
    }

    /// The application of a location.
    pub fn app_of(&self, loc: u32) -> u32 {
        self.defs.process_of(loc).map(|p| p.app).unwrap_or(NONE)
    }

    /// The machine of a location.
    pub fn machine_of(&self, loc: u32) -> u32 {
        self.defs.process_of(loc).map(|p| p.machine).unwrap_or(NONE)
    }

    /// The process of a location.
    pub fn process_of(&self, loc: u32) -> u32 {
        self.defs.locations.get(loc as usize).map(|l| l.process).unwrap_or(NONE)
    }

    /// The innermost procedure of a calling context, `NONE` at the root.
    pub fn proc_of_ctx(&self, ctx: u32) -> StrId {
        if ctx == 0 {
            NONE
        } else {
            self.contexts[ctx as usize].proc
        }
    }

    /// Per calling context: whether its time counts as zero when `procs` are zeroed.
    /// Exclusive: the context's innermost procedure is one of them. Inclusive: one of
    /// them is anywhere on its call stack (the procedure with everything it calls).
    pub fn zeroed_contexts(&self, procs: &[StrId], reach: Reach) -> Vec<bool> {
        let inclusive = reach == Reach::Inclusive;
        let mut zeroed = vec![false; self.contexts.len()];
        for (c, ctx) in self.contexts.iter().enumerate() {
            // A context's parent comes before it (the builder and the PAG reader see to it).
            let from_caller =
                inclusive && ctx.parent != NONE && zeroed.get(ctx.parent as usize).copied().unwrap_or(false);
            zeroed[c] = (ctx.proc != NONE && procs.contains(&ctx.proc)) || from_caller;
        }
        zeroed
    }

    /// A procedure's name for reports (`NONE`: outside any procedure).
    pub fn proc_name(&self, proc: StrId) -> String {
        if proc == NONE {
            spoor_model::OUTSIDE_ANY_PROCEDURE.to_owned()
        } else {
            self.defs.strings.name(proc).into_owned()
        }
    }

    /// The kind name of node `i` for reports.
    pub fn kind_name(&self, i: u32) -> &'static str {
        match self.kind[i as usize] {
            VIRTUAL => "collective",
            k => KIND_NAMES.get(k as usize).copied().unwrap_or("?"),
        }
    }

    /// The event references (location, index among its events) of the given nodes,
    /// in one pass over the graph; virtual nodes map to `None`.
    pub fn event_refs(&self, nodes: &[u32]) -> Vec<Option<EventRef>> {
        if let Some(p) = &self.partial {
            return nodes.iter().map(|&n| p.events.get(n as usize).copied().flatten()).collect();
        }
        let mut want: Vec<(u32, usize)> = nodes.iter().enumerate().map(|(k, &n)| (n, k)).collect();
        want.sort_unstable();
        let mut out = vec![None; nodes.len()];
        let mut count = vec![0u64; self.defs.locations.len()];
        let mut w = 0;
        for i in 0..self.nodes() {
            let l = self.loc[i];
            while w < want.len() && want[w].0 as usize == i {
                if l != NONE {
                    out[want[w].1] = Some(EventRef { loc: l, index: count[l as usize] });
                }
                w += 1;
            }
            if w == want.len() {
                break;
            }
            if l != NONE {
                count[l as usize] += 1;
            }
        }
        out
    }

    /// Remote arcs whose target's wall time is earlier than their origin's: messages
    /// received before they were sent, collective ends before the latest begin they wait
    /// for (the wall time of the virtual node), acquisitions before the release. Such a
    /// graph's times between locations are wrong (arcs clamped to 0, wall-mode distances
    /// that are not elapsed times): the clocks were not aligned.
    pub fn clock_violations(&self) -> ClockViolations {
        if let Some(p) = &self.partial {
            return p.clock;
        }
        let mut v = ClockViolations::default();
        for a in 0..self.arcs() {
            if self.wall[self.arc_to[a] as usize] >= self.wall[self.arc_from[a] as usize] {
                continue;
            }
            match self.arc_kind[a] {
                ArcKind::Message => v.messages += 1,
                ArcKind::CollOut => v.collectives += 1,
                ArcKind::Lock => v.locks += 1,
                ArcKind::CollIn | ArcKind::Spawn => {}
            }
        }
        v
    }

    /// The activity events: every node but the virtual ones and the clock-offset samples.
    fn activity(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes()).filter(|&i| self.loc[i] != NONE && self.kind[i] != CLOCK_OFFSET)
    }

    /// The earliest and latest wall times of the activity events; `None` for a graph
    /// without any.
    pub fn activity_span(&self) -> Option<(i64, i64)> {
        let mut walls = self.activity().map(|i| self.wall[i]);
        let first = walls.next()?;
        Some(walls.fold((first, first), |(a, b), t| (a.min(t), b.max(t))))
    }

    /// How many activity events lie in the window `[a, b]` of wall time.
    pub fn activity_in(&self, a: i64, b: i64) -> usize {
        self.activity().filter(|&i| (a..=b).contains(&self.wall[i])).count()
    }

    /// The application named `name`, or an error listing the applications there are.
    pub fn app_id(&self, name: &str) -> Result<u32, crate::Error> {
        let names: Vec<String> =
            self.defs.apps.iter().map(|a| self.defs.strings.name(a.name).into_owned()).collect();
        names.iter().position(|n| n == name).map(|p| p as u32).ok_or_else(|| {
            crate::Error::Usage(format!("no application named `{name}`; the trace has: {}", names.join(", ")))
        })
    }

    /// The time window of a phase: from its earliest begin to its latest end.
    pub fn phase_window(&self, name: &str) -> Option<(i64, i64)> {
        let id = self.defs.strings.lookup(name)?;
        let marks = |begin: bool| {
            self.phases
                .iter()
                .filter(move |p| p.name == id && p.begin == begin)
                .map(|p| self.wall[p.node as usize])
        };
        let (begins, ends) = (marks(true), marks(false));
        Some((begins.min()?, ends.max()?))
    }

    /// The names of the phases the trace has.
    pub fn phase_names(&self) -> Vec<String> {
        let mut v: Vec<String> =
            self.phases.iter().map(|p| self.defs.strings.name(p.name).into_owned()).collect();
        v.sort();
        v.dedup();
        v
    }

    /// Weighs the graph on the network model's machine (`--net`, formats/network.md):
    /// every message arc its time (local, unless the model says otherwise, when both
    /// ends are on one machine), every collective arc the model's time, and each
    /// blocking MPI call the model's overhead more. Returns what the caller should say:
    /// the model's links and buses play no part here (no simulation).
    pub fn apply_network(&mut self, net: &Network) -> Vec<String> {
        let local = net.local.unwrap_or(Local::Machine);
        let procs = crate::net::collective_procs(self);
        for a in 0..self.arcs() {
            let w = match self.arc_kind[a] {
                ArcKind::Message => {
                    let (f, t) = (self.loc[self.arc_from[a] as usize], self.loc[self.arc_to[a] as usize]);
                    Some(net.time(self.arc_bytes[a], self.is_local(local, f, t)))
                }
                ArcKind::CollOut => net.collective_arc(self, &procs, a),
                _ => None,
            };
            if let Some(w) = w {
                self.arc_weight[a] = w.round() as i64;
            }
        }
        if net.connect() > 0.0 {
            for a in self.first_remote_messages(local) {
                self.arc_weight[a] += net.connect_ns;
            }
        }
        if net.overhead_ns > 0 {
            for i in self.blocking_call_ends() {
                self.weight[i] += net.overhead_ns;
            }
        }
        let mut notes = net.warnings_for(self);
        if net.contention() {
            notes.push(
                "the network model's links and buses are not modelled here, only in a simulation \
                 (spoor-gag, spoor-whatif): every message takes its own time"
                    .into(),
            );
        }
        notes
    }

    /// The first remote message arc (by its send's place in the graph) between each
    /// two processes that exchange remote messages: the one that waits for their
    /// connection (formats/network.md, "Connections").
    pub fn first_remote_messages(&self, local: Local) -> Vec<usize> {
        let mut first: rustc_hash::FxHashMap<(u32, u32), usize> = Default::default();
        for a in 0..self.arcs() {
            if self.arc_kind[a] != ArcKind::Message {
                continue;
            }
            let (f, t) = (self.loc[self.arc_from[a] as usize], self.loc[self.arc_to[a] as usize]);
            if self.is_local(local, f, t) {
                continue;
            }
            let e = first.entry(self.process_pair(f, t)).or_insert(a);
            if self.arc_from[a] < self.arc_from[*e] {
                *e = a;
            }
        }
        let mut arcs: Vec<usize> = first.into_values().collect();
        arcs.sort_unstable();
        arcs
    }

    /// The processes of locations `f` and `t`, the smaller first: the pair one
    /// connection serves both ways.
    pub fn process_pair(&self, f: u32, t: u32) -> (u32, u32) {
        let (p, q) = (self.process_of(f), self.process_of(t));
        (p.min(q), p.max(q))
    }

    /// The nodes that end a blocking MPI call (`spoor_model::calls::blocks`): its
    /// `leave`, whose local arc is the call's last.
    pub fn blocking_call_ends(&self) -> Vec<usize> {
        let blocking: Vec<bool> = (0..self.contexts.len())
            .map(|c| {
                let p = self.contexts[c].proc;
                p != NONE && spoor_model::calls::blocks(&self.defs.strings.name(p))
            })
            .collect();
        (0..self.nodes())
            .filter(|&i| {
                self.kind[i] == spoor_model::kind_code::LEAVE
                    && blocking.get(self.ctx[i] as usize).copied().unwrap_or(false)
            })
            .collect()
    }

    /// Whether a message from location `f` to `t` is local by `local` (a processor being
    /// a process: the graph has no placement).
    pub fn is_local(&self, local: Local, f: u32, t: u32) -> bool {
        match local {
            Local::Processor => self.process_of(f) == self.process_of(t),
            Local::Machine => self.machine_of(f) == self.machine_of(t),
            Local::Never => false,
        }
    }
}
