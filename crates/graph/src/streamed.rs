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
//! memory takes about 33 bytes a node; this holds 6 to 8 bytes a node won by a remote arc.

use crate::build::{self, Sieve};
use crate::cost::Mode;
use crate::cp::{CpOptions, Distances};
use crate::error::Result;
use crate::pag::{ArcKind, Pag, Partial, NONE};
use spoor_format::varint::{get_u64, put_u64, unzigzag, zigzag};
use spoor_format::{ReadOptions, TraceReader};
use spoor_model::{ClockViolations, EventRef, Feedback};

/// A node whose longest way in is a remote arc: the arc and where it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Winner {
    to: u32,
    from: u32,
    from_loc: u32,
    arc: u32,
}

/// Entries between two places a search may start decoding from.
const STRIDE: usize = 32;

/// Where a search may start decoding: an entry's node, its place, and the node and arc
/// of the entry before it (what its deltas are from).
struct Mark {
    to: u32,
    at: usize,
    before: (u32, u32),
}

/// One location's winners in node order, delta and varint coded (a node, the way back
/// to its origin, the origin's location and the arc's number in 6 to 8 bytes rather
/// than 16), with every `STRIDE`th entry marked for the walk's searches. The newest is
/// kept as is: a later arc into the same node may replace it.
#[derive(Default)]
struct WinnerList {
    bytes: Vec<u8>,
    marks: Vec<Mark>,
    coded: usize,
    newest: Option<Winner>,
    /// The node and arc of the last entry coded.
    before: (u32, u32),
}

impl WinnerList {
    fn push(&mut self, w: Winner, own: u32) {
        match self.newest {
            Some(n) if n.to == w.to => {}
            Some(n) => self.code(n, own),
            None => {}
        }
        self.newest = Some(w);
    }

    fn code(&mut self, w: Winner, own: u32) {
        if self.coded.is_multiple_of(STRIDE) {
            self.marks.push(Mark { to: w.to, at: self.bytes.len(), before: self.before });
        }
        let out = &mut self.bytes;
        put_u64(out, u64::from(w.to.wrapping_sub(self.before.0)));
        put_u64(out, u64::from(w.to.wrapping_sub(w.from)));
        put_u64(out, if w.from_loc == NONE { 0 } else { zigzag(i64::from(w.from_loc) - i64::from(own)) + 1 });
        put_u64(out, u64::from(w.arc.wrapping_sub(self.before.1)));
        self.before = (w.to, w.arc);
        self.coded += 1;
    }

    /// Codes the newest entry too: the list is complete.
    fn seal(&mut self, own: u32) {
        if let Some(n) = self.newest.take() {
            self.code(n, own);
        }
        self.bytes.shrink_to_fit();
    }

    /// The last entry whose node is at most `n`.
    fn at_or_before(&self, n: u32, own: u32) -> Option<Winner> {
        let k = self.marks.partition_point(|m| m.to <= n).checked_sub(1)?;
        let m = &self.marks[k];
        let (mut at, mut before) = (m.at, m.before);
        let end = if k + 1 < self.marks.len() { self.marks[k + 1].at } else { self.bytes.len() };
        let mut found = None;
        while at < end {
            let b = &self.bytes;
            let to = before.0.wrapping_add(get_u64(b, &mut at) as u32);
            if to > n {
                break;
            }
            let from = to.wrapping_sub(get_u64(b, &mut at) as u32);
            let from_loc = match get_u64(b, &mut at) {
                0 => NONE,
                z => (i64::from(own) + unzigzag(z - 1)) as u32,
            };
            let arc = before.1.wrapping_add(get_u64(b, &mut at) as u32);
            before = (to, arc);
            found = Some(Winner { to, from, from_loc, arc });
        }
        found
    }
}

/// The first pass's record: each location's nodes won by a remote arc, in node order.
#[derive(Default)]
pub(crate) struct Winners {
    by_loc: Vec<WinnerList>,
    /// Those of the virtual nodes (a collective's).
    virtuals: WinnerList,
    /// The location of the path's last node.
    pub(crate) end_loc: u32,
}

impl Winners {
    /// Node `to` of `to_loc` is won by remote arc `arc` from `from` (of `from_loc`),
    /// replacing an earlier arc into it.
    pub(crate) fn won(&mut self, to: u32, to_loc: u32, from: u32, from_loc: u32, arc: u32) {
        let w = Winner { to, from, from_loc, arc };
        if to_loc == NONE {
            return self.virtuals.push(w, 0);
        }
        let l = to_loc as usize;
        if l >= self.by_loc.len() {
            self.by_loc.resize_with(l + 1, WinnerList::default);
        }
        self.by_loc[l].push(w, to_loc);
    }

    /// The path ending at node `end` as stretches of locations' nodes and the arcs
    /// between them: the walk of `Distances::walk`, knowing of each location only the
    /// nodes won by a remote arc.
    fn plan(mut self, end: u32) -> Plan {
        for (l, list) in self.by_loc.iter_mut().enumerate() {
            list.seal(l as u32);
        }
        self.virtuals.seal(0);
        let mut plan = Plan { stretches: vec![Vec::new(); self.by_loc.len()], ..Plan::default() };
        let (mut n, mut l) = (end, self.end_loc);
        loop {
            let won = if l == NONE {
                plan.virtuals.push(n);
                self.virtuals.at_or_before(n, 0).filter(|w| w.to == n)
            } else {
                let won = self.by_loc.get(l as usize).and_then(|list| list.at_or_before(n, l));
                if l as usize >= plan.stretches.len() {
                    plan.stretches.resize_with(l as usize + 1, Vec::new);
                }
                plan.stretches[l as usize].push((won.map_or(0, |w| w.to), n));
                won
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
    clock: ClockCount,
}

/// Remote arcs that go back in time, counted as they are made (`Pag::clock_violations`).
#[derive(Default)]
pub(crate) struct ClockCount(pub(crate) ClockViolations);

impl ClockCount {
    pub(crate) fn arc(&mut self, kind: ArcKind, to_wall: i64, from_wall: i64) {
        if to_wall < from_wall {
            match kind {
                ArcKind::Message => self.0.messages += 1,
                ArcKind::CollOut => self.0.collectives += 1,
                ArcKind::Lock => self.0.locks += 1,
                ArcKind::CollIn | ArcKind::Spawn => {}
            }
        }
    }
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
            clock: ClockCount::default(),
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
            self.kept.push(n);
            self.path.push_node(loc, prev, wall, weight, ctx, kind);
            self.refs.push(event);
        }
    }

    /// Remote arc `arc` into `to` (the newest node) from `from`, with their wall times.
    #[allow(clippy::too_many_arguments)] // one per arc array, and the walls compared
    pub(crate) fn arc(
        &mut self,
        arc: u32,
        to: (u32, i64),
        from: (u32, i64),
        weight: i64,
        kind: ArcKind,
        bytes: u64,
        op: u8,
    ) {
        self.arcs_made += 1;
        self.clock.arc(kind, to.1, from.1);
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
    fn finish(self, mut whole: Pag, length: i64, lanes: Option<Vec<i64>>) -> (Pag, Distances) {
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
            p.push_arc(to, at(a.from), a.weight, a.kind, a.bytes, a.op);
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
            clock: self.clock.0,
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
        let d = Distances {
            length,
            end: (end != NONE).then_some(end as usize),
            remote: remote.into(),
            nodes,
            lanes,
        };
        (p, d)
    }
}

/// The graph of the global scope's critical path of the trace at `path`, and the
/// distances that walk it, made in two passes over the trace without keeping the rest
/// of the graph (the returned graph holds only the path's nodes and arcs, with
/// [`Partial`] for the rest). `None` where that cannot be done and the whole graph is
/// needed: a PAG file or a stream (read once), processes sharing processors in CPU mode,
/// a spawn, a CPU time clamped by a later start.
///
/// The lengths of `lanes` (other weightings of the whole graph, CPU mode) are made on
/// the way, as `file::load_with_lanes` makes them (`Distances::lanes`).
pub fn critical_path(
    path: &str,
    mode: Mode,
    lanes: &[CpOptions],
    feedback: &dyn Feedback,
) -> Result<Option<(Pag, Distances)>> {
    match trace_file(path)? {
        Some(reader) => critical_path_from(reader, &|| open(path), mode, lanes, feedback),
        None => Ok(None),
    }
}

/// The trace file at `path`, opened; `None` for a stream (it is read once) and a PAG file.
pub fn trace_file(path: &str) -> Result<Option<TraceReader>> {
    if spoor_format::is_stream(path) || crate::file::is_pag_file(path)? {
        return Ok(None);
    }
    open(path).map(Some)
}

fn open(path: &str) -> Result<TraceReader> {
    Ok(TraceReader::open(path, ReadOptions::default())?)
}

/// [`critical_path`] of the trace `open` opens, once for each pass (a file, or bytes in
/// memory).
pub fn critical_path_of(
    open: &dyn Fn() -> Result<TraceReader>,
    mode: Mode,
    lanes: &[CpOptions],
    feedback: &dyn Feedback,
) -> Result<Option<(Pag, Distances)>> {
    critical_path_from(open()?, open, mode, lanes, feedback)
}

/// [`critical_path_of`], its first pass reading `reader` (opened already).
fn critical_path_from(
    reader: TraceReader,
    open: &dyn Fn() -> Result<TraceReader>,
    mode: Mode,
    lanes: &[CpOptions],
    feedback: &dyn Feedback,
) -> Result<Option<(Pag, Distances)>> {
    if build::lengths_need_the_graph(reader.defs(), mode, false) {
        return Ok(None);
    }
    let (_, made, sieve) =
        build::build_sieved(reader, mode, lanes, Sieve::Winners(Winners::default()), feedback)?;
    let (Some(made), Sieve::Winners(winners)) = (made, sieve) else { return Ok(None) };
    if !lanes.is_empty() && made.lanes.is_none() {
        // The lanes asked for need the whole graph.
        return Ok(None);
    }
    let length = made.length;
    // No node reached: nothing to walk (the whole graph, empty, says so).
    let Some(end) = made.end else { return Ok(None) };
    let plan = winners.plan(end as u32);
    let reader = open()?;
    let name = reader.name().to_owned();
    let (whole, _, sieve) =
        build::build_sieved(reader, mode, &[], Sieve::Path(Box::new(Gather::new(plan))), feedback)?;
    let Sieve::Path(g) = sieve else { return Ok(None) };
    if g.nodes != made.nodes {
        return Err(crate::Error::input(
            &name,
            format!(
                "the trace changed while it was read: {} nodes in the first pass, {} in the second",
                made.nodes, g.nodes
            ),
        ));
    }
    Ok(Some(g.finish(whole, length, made.lanes)))
}

/// What the whole graph of a trace takes in memory, bytes an event (measured: 33 to 35
/// at 10^8 events, with the builder's own state).
pub const GRAPH_BYTES_PER_EVENT: u64 = 40;

/// A graph to find the global critical path of `path` in, with the lengths of `lanes`:
/// the whole graph (`file::load_with_lanes`, one pass) where it would take at most
/// `budget` bytes, else the path's own ([`critical_path`], two passes) where it can be
/// made without the whole graph. A trace without an index (its size unknown) and a
/// stream are read whole.
pub fn path_graph(
    path: &str,
    mode: Mode,
    lanes: &[CpOptions],
    budget: u64,
    feedback: &dyn Feedback,
) -> Result<(Pag, Option<Distances>)> {
    match trace_file(path)? {
        Some(reader) if graph_bytes(&reader).is_some_and(|b| b > budget) => {
            match critical_path_from(reader, &|| open(path), mode, lanes, feedback)? {
                Some((pag, walk)) => Ok((pag, Some(walk))),
                None => crate::file::load_with_lanes(path, mode, lanes, feedback),
            }
        }
        Some(reader) => build::build_inner(reader, mode, true, lanes, feedback, None),
        None => crate::file::load_with_lanes(path, mode, lanes, feedback),
    }
}

/// What the whole graph takes in memory at the least, bytes a node (measured: 33 to 35
/// an event at 10^8 events, with the builder's own state).
pub const GRAPH_BYTES_AT_LEAST: u64 = 32;

/// The least the whole graph of the trace or PAG file at `path` takes in memory, known
/// before it is read: from a trace's event count (its end chunk), or a PAG file's node
/// count (its END chunk, when the file could hold that many); `None` for a stream, a
/// trace without its end chunk and the text form. What keeps the graph whole can refuse
/// at once a trace whose graph cannot fit, rather than stopping once memory runs out.
pub fn least_graph_bytes(path: &str) -> Result<Option<u64>> {
    if spoor_format::is_stream(path) {
        return Ok(None);
    }
    let nodes = if crate::file::is_pag_file(path)? {
        crate::file::node_count(path)?
    } else {
        // The end chunk alone (the file's last bytes), not a scan of every chunk header,
        // which the stage's own reading does next.
        let file =
            std::fs::File::open(path).map_err(|e| crate::Error::Format(spoor_format::Error::io(path, &e)))?;
        spoor_format::binary::End::events_in(&file)
    };
    Ok(nodes.map(|n| n.saturating_mul(GRAPH_BYTES_AT_LEAST)))
}

/// What the whole graph of the trace file `reader` reads would take in memory; from the
/// file's size where it has no index (a damaged tail), reckoning its events generously;
/// `None` for a trace in the text form (small: it is read whole).
pub fn graph_bytes(reader: &TraceReader) -> Option<u64> {
    let events = match (reader.end(), reader.header()) {
        (Some(end), _) => end.events,
        (None, Some(_)) => {
            std::fs::metadata(reader.name()).ok()?.len() / spoor_format::binary::LEAST_BYTES_PER_EVENT
        }
        (None, None) => return None,
    };
    Some(events.saturating_mul(GRAPH_BYTES_PER_EVENT))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The coded list answers every search as a plain list of the same winners does,
    /// at the ends of each field's range.
    #[test]
    fn coded_winners_answer_as_a_plain_list() {
        let own = 7;
        let mut plain: Vec<Winner> = Vec::new();
        let mut list = WinnerList::default();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut to, mut arc) = (3u32, 0u32);
        for k in 0..1000 {
            to += 1 + (next() % if k % 97 == 0 { 1 << 30 } else { 5000 }) as u32 / 4;
            arc += (next() % 3000) as u32;
            let from = if k % 11 == 0 { 0 } else { to - 1 - (next() % u64::from(to - 1)) as u32 };
            let from_loc = match k % 5 {
                0 => NONE,
                1 => 0,
                2 => NONE - 1,
                _ => (next() % 64) as u32,
            };
            let w = Winner { to, from, from_loc, arc };
            list.push(w, own);
            // A later arc into the same node replaces the one before.
            if k % 7 == 0 {
                let again = Winner { arc: arc + 1, from: to - 1, ..w };
                list.push(again, own);
                arc += 1;
                plain.push(again);
            } else {
                plain.push(w);
            }
        }
        list.seal(own);
        assert_eq!(list.at_or_before(plain[0].to - 1, own), None);
        for (k, w) in plain.iter().enumerate() {
            assert_eq!(list.at_or_before(w.to, own), Some(*w), "entry {k}");
            let gap = plain.get(k + 1).map_or(u32::MAX, |n| n.to - 1);
            assert_eq!(list.at_or_before(gap, own), Some(*w), "after entry {k}");
        }
    }
}
