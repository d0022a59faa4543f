//! The critical path of an ordered trace in two passes over it, keeping what is in
//! flight and the path rather than the graph (formats/pag.md, "Critical paths without
//! the graph").
//!
//! The first pass makes the forward diffusion as the builder does and keeps, for every
//! node whose longest way in is a remote arc, that arc and its origin, by the node's
//! location. The walk back then knows the path as stretches of locations' nodes joined
//! by those arcs, without the nodes in between. The second pass builds the graph again,
//! keeping only those nodes and arcs, with what a report needs of the rest (the graph's
//! size, its clock-condition violations, each procedure's time). The graph held in
//! memory takes about 33 bytes a node; this holds 16 bytes a node won by a remote arc.

use crate::build::{self, Sieve};
use crate::cost::Mode;
use crate::cp::Distances;
use crate::error::Result;
use crate::pag::{ArcKind, Pag, Partial, NONE};
use spoor_format::{ReadOptions, TraceReader};
use spoor_model::{ClockViolations, EventRef, Feedback};

/// A node whose longest way in is a remote arc: the arc and where it comes from.
#[derive(Clone, Copy, Debug)]
struct Winner {
    to: u32,
    from: u32,
    from_loc: u32,
    arc: u32,
}

/// The first pass's record: each location's nodes won by a remote arc, in node order.
#[derive(Default)]
pub(crate) struct Winners {
    by_loc: Vec<Vec<Winner>>,
    /// Those of the virtual nodes (a collective's).
    virtuals: Vec<Winner>,
    /// The location of the path's last node.
    pub(crate) end_loc: u32,
}

impl Winners {
    /// Node `to` of `to_loc` is won by remote arc `arc` from `from` (of `from_loc`),
    /// replacing an earlier arc into it.
    pub(crate) fn won(&mut self, to: u32, to_loc: u32, from: u32, from_loc: u32, arc: u32) {
        let v = if to_loc == NONE {
            &mut self.virtuals
        } else {
            let l = to_loc as usize;
            if l >= self.by_loc.len() {
                self.by_loc.resize_with(l + 1, Vec::new);
            }
            &mut self.by_loc[l]
        };
        let w = Winner { to, from, from_loc, arc };
        match v.last_mut() {
            Some(last) if last.to == to => *last = w,
            _ => v.push(w),
        }
    }

    /// The path ending at node `end` as stretches of locations' nodes and the arcs
    /// between them: the walk of `Distances::walk`, knowing of each location only the
    /// nodes won by a remote arc.
    fn plan(&self, end: u32) -> Plan {
        let mut plan = Plan { stretches: vec![Vec::new(); self.by_loc.len()], ..Plan::default() };
        let (mut n, mut l) = (end, self.end_loc);
        loop {
            let won = if l == NONE {
                plan.virtuals.push(n);
                self.virtuals.binary_search_by_key(&n, |w| w.to).ok().map(|k| self.virtuals[k])
            } else {
                let ws = self.by_loc.get(l as usize).map_or(&[][..], |v| &v[..]);
                let k = ws.partition_point(|w| w.to <= n);
                let first = if k == 0 { 0 } else { ws[k - 1].to };
                if l as usize >= plan.stretches.len() {
                    plan.stretches.resize_with(l as usize + 1, Vec::new);
                }
                plan.stretches[l as usize].push((first, n));
                k.checked_sub(1).map(|k| ws[k])
            };
            match won {
                // A remote arc always comes from an earlier node, so the walk ends.
                Some(w) if w.from < n => {
                    plan.arcs.push(w.arc);
                    (n, l) = (w.from, w.from_loc);
                }
                _ => break,
            }
        }
        // The walk went back: put everything in node order.
        plan.stretches.iter_mut().for_each(|s| s.reverse());
        plan.virtuals.reverse();
        plan.arcs.reverse();
        plan.end = end;
        plan
    }
}

/// The path's nodes and arcs, as the first pass's walk back found them.
#[derive(Default)]
struct Plan {
    /// Per location, its stretches of path nodes (first, last), in node order.
    stretches: Vec<Vec<(u32, u32)>>,
    virtuals: Vec<u32>,
    arcs: Vec<u32>,
    end: u32,
}

/// One remote arc of the path, as the second pass finds it.
struct PathArc {
    to: u32,
    from: u32,
    weight: i64,
    kind: ArcKind,
    bytes: u64,
    op: u8,
}

/// The second pass's record: the path's nodes and arcs, and what reports need of the
/// whole graph.
pub(crate) struct Gather {
    plan: Plan,
    /// Per location, its next stretch; the next virtual node and arc of the path.
    next: Vec<usize>,
    next_virtual: usize,
    next_arc: usize,
    /// Per location, its nodes so far (a node's event index).
    count: Vec<u64>,
    /// The path's nodes: their numbers in the whole graph, and as a graph of their own.
    kept: Vec<u32>,
    path: Pag,
    refs: Vec<Option<EventRef>>,
    arcs: Vec<PathArc>,
    /// Local-arc weight per calling context over the whole graph (sources' weights are
    /// added at the end).
    by_ctx: Vec<i64>,
    /// The context of each location's first node, in the order they came.
    source_ctx: Vec<u32>,
    nodes: usize,
    arcs_made: usize,
    clock: ClockViolations,
}

impl Gather {
    fn new(plan: Plan) -> Gather {
        Gather {
            next: vec![0; plan.stretches.len()],
            plan,
            next_virtual: 0,
            next_arc: 0,
            count: Vec::new(),
            kept: Vec::new(),
            path: Pag::default(),
            refs: Vec::new(),
            arcs: Vec::new(),
            by_ctx: Vec::new(),
            source_ctx: Vec::new(),
            nodes: 0,
            arcs_made: 0,
            clock: ClockViolations::default(),
        }
    }

    fn on_path(&mut self, n: u32, loc: u32) -> bool {
        if loc == NONE {
            let v = &self.plan.virtuals;
            let k = &mut self.next_virtual;
            while *k < v.len() && v[*k] < n {
                *k += 1;
            }
            return *k < v.len() && v[*k] == n;
        }
        let Some(stretches) = self.plan.stretches.get(loc as usize) else { return false };
        let k = &mut self.next[loc as usize];
        while *k < stretches.len() && stretches[*k].1 < n {
            *k += 1;
        }
        *k < stretches.len() && stretches[*k].0 <= n
    }

    /// Node `n`, as `Builder::push_node` makes it.
    #[allow(clippy::too_many_arguments)] // one per node array
    pub(crate) fn node(&mut self, n: u32, loc: u32, prev: u32, wall: i64, weight: i64, ctx: u32, kind: u8) {
        self.nodes += 1;
        let mut event = None;
        if loc != NONE {
            let l = loc as usize;
            if l >= self.count.len() {
                self.count.resize(l + 1, 0);
            }
            event = Some(EventRef { loc, index: self.count[l] });
            self.count[l] += 1;
            if prev == NONE {
                // Its weight is known once the graph's source is.
                self.source_ctx.push(ctx);
            } else {
                if ctx as usize >= self.by_ctx.len() {
                    self.by_ctx.resize(ctx as usize + 1, 0);
                }
                self.by_ctx[ctx as usize] += weight;
            }
        }
        if self.on_path(n, loc) {
            let p = &mut self.path;
            self.kept.push(n);
            p.loc.push(loc);
            p.prev.push(prev);
            p.wall.push(wall);
            p.weight.push(weight);
            p.ctx.push(ctx);
            p.kind.push(kind);
            self.refs.push(event);
        }
    }

    /// Remote arc `arc` into `to` (the newest node) from `from`, with their wall times.
    #[allow(clippy::too_many_arguments)] // one per arc array, and the walls compared
    pub(crate) fn arc(&mut self, arc: u32, to: (u32, i64), from: (u32, i64), weight: i64, kind: ArcKind, bytes: u64, op: u8) {
        self.arcs_made += 1;
        if to.1 < from.1 {
            match kind {
                ArcKind::Message => self.clock.messages += 1,
                ArcKind::CollOut => self.clock.collectives += 1,
                ArcKind::Lock => self.clock.locks += 1,
                ArcKind::CollIn | ArcKind::Spawn => {}
            }
        }
        let a = &self.plan.arcs;
        while self.next_arc < a.len() && a[self.next_arc] < arc {
            self.next_arc += 1;
        }
        if self.next_arc < a.len() && a[self.next_arc] == arc {
            self.arcs.push(PathArc { to: to.0, from: from.0, weight, kind, bytes, op });
        }
    }

    /// The `k`th location's first node, `n`, weighs `weight` (known at the end).
    pub(crate) fn source(&mut self, k: usize, n: u32, weight: i64) {
        if let Some(&ctx) = self.source_ctx.get(k) {
            if ctx as usize >= self.by_ctx.len() {
                self.by_ctx.resize(ctx as usize + 1, 0);
            }
            self.by_ctx[ctx as usize] += weight;
        }
        if let Ok(i) = self.kept.binary_search(&n) {
            self.path.weight[i] = weight;
        }
    }

    /// The path's graph (renumbered, `whole` giving the rest of it: its definitions,
    /// contexts and notes) and the distances that walk it.
    fn finish(self, mut whole: Pag, length: i64) -> (Pag, Distances) {
        let kept = self.kept;
        let at = |n: u32| kept.binary_search(&n).map_or(NONE, |i| i as u32);
        let mut p = self.path;
        for prev in &mut p.prev {
            *prev = if *prev == NONE { NONE } else { at(*prev) };
        }
        let mut remote = Vec::with_capacity(self.arcs.len());
        for (k, a) in self.arcs.into_iter().enumerate() {
            let to = at(a.to);
            remote.push((to, k as u32));
            p.arc_to.push(to);
            p.arc_from.push(at(a.from));
            p.arc_weight.push(a.weight);
            p.arc_kind.push(a.kind);
            p.arc_bytes.push(a.bytes);
            p.arc_op.push(a.op);
        }
        let mut totals = std::collections::BTreeMap::<u32, i64>::new();
        for (ctx, &w) in self.by_ctx.iter().enumerate() {
            if ctx < whole.contexts.len() && w != 0 {
                *totals.entry(whole.proc_of_ctx(ctx as u32)).or_default() += w;
            }
        }
        let mut processes: Vec<u32> = (0..self.count.len() as u32)
            .filter(|&l| self.count[l as usize] > 0)
            .map(|l| whole.process_of(l))
            .collect();
        processes.sort_unstable();
        processes.dedup();
        let end = at(self.plan.end);
        let nodes = p.loc.len();
        p.partial = Some(Box::new(Partial {
            nodes: self.nodes,
            arcs: self.arcs_made,
            clock: self.clock,
            procedure_time: totals.into_iter().collect(),
            processes: processes.len(),
            events: self.refs,
        }));
        // The whole graph's own parts: definitions, contexts, notes; its phases and
        // wildcard receives name nodes this graph does not keep.
        p.defs = std::mem::take(&mut whole.defs);
        p.mode = whole.mode;
        p.t0 = whole.t0;
        p.contexts = std::mem::take(&mut whole.contexts);
        p.notes = std::mem::take(&mut whole.notes);
        let d = Distances { length, end: (end != NONE).then_some(end as usize), remote, nodes, lanes: None };
        (p, d)
    }
}

/// The graph of the global scope's critical path of the trace at `path`, and the
/// distances that walk it, made in two passes over the trace without keeping the rest
/// of the graph (the returned graph holds only the path's nodes and arcs, with
/// [`Partial`] for the rest). `None` where that cannot be done and the whole graph is
/// needed: a PAG file or a stream (read once), processes sharing processors in CPU mode,
/// a spawn, a CPU time clamped by a later start.
pub fn critical_path(path: &str, mode: Mode, feedback: &dyn Feedback) -> Result<Option<(Pag, Distances)>> {
    if spoor_format::is_stream(path) || crate::file::is_pag_file(path)? {
        return Ok(None);
    }
    let open = || TraceReader::open(path, ReadOptions::default());
    let reader = open()?;
    if build::lengths_need_the_graph(reader.defs(), mode, false) {
        return Ok(None);
    }
    let (_, made, sieve) = build::build_sieved(reader, mode, Sieve::Winners(Winners::default()), feedback)?;
    let (Some(made), Sieve::Winners(winners)) = (made, sieve) else { return Ok(None) };
    let length = made.length;
    // No node reached: nothing to walk (the whole graph, empty, says so).
    let Some(end) = made.end else { return Ok(None) };
    let plan = winners.plan(end as u32);
    drop(winners);
    let (whole, _, sieve) =
        build::build_sieved(open()?, mode, Sieve::Path(Gather::new(plan)), feedback)?;
    let Sieve::Path(g) = sieve else { return Ok(None) };
    Ok(Some(g.finish(whole, length)))
}
