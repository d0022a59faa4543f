//! Longest paths through a PAG: the forward diffusion and the backward walk of
//! IPS-2's critical-path algorithm, for every scope (formats/pag.md, "Critical paths").

use crate::inflight::InFlight;
use crate::pag::{ArcKind, Pag, Reach, CLOCK_OFFSET, NONE};
use crate::window::share_after;
use rustc_hash::FxHashMap;
use spoor_format::spill::SpillVec;
use spoor_model::{LocId, StrId};

/// "Not reached" (a node outside the scope, or reached only by the secondary diffusion).
pub(crate) const NEG: i64 = i64::MIN / 4;

/// Which arcs and nodes a critical path may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every application.
    Global,
    /// One application's own PAG: other applications' nodes and arcs are ignored.
    Intra(u32),
    /// The longest path that begins and ends in one application, through other
    /// applications only where they lead back to it (the primary diffusion).
    Inter(u32),
}

/// What a critical path covers: scope, window, zeroed procedures.
#[derive(Clone, Debug, Default)]
pub struct CpOptions {
    /// Whose path; `None` for the whole run.
    pub scope: Option<Scope>,
    /// Only events with `t0 <= wall <= t1` (local clocks, nanoseconds).
    pub window: Option<(i64, i64)>,
    /// Procedures whose time counts as zero: critical-path zeroing. Exclusive time
    /// (arcs in which they are the innermost procedure) unless `zero_inclusive`.
    pub zero: Vec<StrId>,
    /// Zero the procedures with everything they call (arcs with one of them anywhere
    /// on the call stack).
    pub zero_inclusive: bool,
    /// Local arcs whose innermost procedure is `proc` on location `loc` weigh `factor`
    /// times as much (a procedure rebalanced or removed on some locations only).
    pub scale: Vec<Scale>,
    /// Message arcs between these two locations (either way) weigh this much: a link
    /// made as fast as the others; `None`: the whole time from the send to the receive's
    /// end (the transfer as measured when the receiver waited for it, rather than the
    /// part of it after both sides were ready).
    pub links: Vec<(LocId, LocId, Option<i64>)>,
    /// Every message arc weighs this much (an ideal network: 0); before `links`.
    pub message_weight: Option<i64>,
}

/// One procedure's local arcs on one location, scaled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    /// The location.
    pub loc: LocId,
    /// The procedure (its exclusive time: arcs where it is the innermost one).
    pub proc: StrId,
    /// What its arcs' weights are multiplied by (0: removed).
    pub factor: f64,
}

/// How a node was reached on its longest path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pred {
    /// From the graph's source (the location's first event, or the first in the window).
    Source,
    /// The local arc from the location's previous event.
    Local(u32),
    /// A remote arc (index into the PAG's arcs).
    Arc(u32),
}

/// One arc of a critical path: into `node`, from `pred`, weighing `weight`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The node the arc leads to.
    pub node: u32,
    /// Where it comes from.
    pub pred: Pred,
    /// Its weight on the path (0 where zeroed).
    pub weight: i64,
}

impl Step {
    /// The node the arc comes from (`NONE` for the source).
    pub fn from(&self, pag: &Pag) -> u32 {
        match self.pred {
            Pred::Source => NONE,
            Pred::Local(p) => p,
            Pred::Arc(a) => pag.arc_from[a as usize],
        }
    }
}

/// A critical path: its length and its arcs from the source to the last node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CriticalPath {
    /// The path's length: the sum of its weights.
    pub length: i64,
    /// Its arcs, source first.
    pub steps: Vec<Step>,
}

/// One forward pass's setting: the scope's masks and the zeroed contexts.
pub(crate) struct Pass<'a> {
    pag: &'a Pag,
    scope: Scope,
    window: Option<(i64, i64)>,
    /// Per location: in the scope's application.
    in_app: Vec<bool>,
    /// Per calling context: its time counts as zero.
    zero_ctx: Vec<bool>,
    /// Per (location, calling context) scaled: the factor (`CpOptions::scale`).
    scaled: FxHashMap<(u32, u32), f64>,
    /// Per calling context: scaled on some location (so that most nodes skip the map).
    scaled_ctx: Vec<bool>,
    /// Per (from, to) location pair: the weight of its message arcs (`CpOptions::links`).
    links: FxHashMap<(u32, u32), Option<i64>>,
    message_weight: Option<i64>,
}

impl<'a> Pass<'a> {
    pub(crate) fn new(pag: &'a Pag, opts: &CpOptions) -> Self {
        debug_assert!(pag.partial.is_none(), "a forward pass over a graph of one path's nodes");
        let scope = opts.scope.unwrap_or(Scope::Global);
        let in_app = (0..pag.defs.locations.len() as u32)
            .map(|l| match scope {
                Scope::Global => true,
                Scope::Intra(a) | Scope::Inter(a) => pag.app_of(l) == a,
            })
            .collect();
        let zero_ctx = pag.zeroed_contexts(&opts.zero, Reach::inclusive_if(opts.zero_inclusive));
        let mut scaled = FxHashMap::default();
        let mut scaled_ctx = vec![false; pag.contexts.len()];
        for s in &opts.scale {
            for (c, ctx) in pag.contexts.iter().enumerate() {
                if ctx.proc == s.proc {
                    scaled.insert((s.loc, c as u32), s.factor.max(0.0));
                    scaled_ctx[c] = true;
                }
            }
        }
        let links = opts.links.iter().flat_map(|&(a, b, w)| [((a, b), w), ((b, a), w)]).collect();
        Pass {
            pag,
            scope,
            window: opts.window,
            in_app,
            zero_ctx,
            scaled,
            scaled_ctx,
            links,
            message_weight: opts.message_weight,
        }
    }

    /// The weight of node `i`'s local arc under the zeroing and scaling asked for.
    #[inline(always)]
    fn local_weight(&self, i: usize) -> i64 {
        let g = self.pag;
        let c = g.ctx[i];
        if self.zero_ctx[c as usize] {
            0
        } else if !self.scaled_ctx.get(c as usize).copied().unwrap_or(false) {
            g.weight[i]
        } else {
            match self.scaled.get(&(g.loc[i], c)) {
                Some(f) => (g.weight[i] as f64 * f).round() as i64,
                None => g.weight[i],
            }
        }
    }

    /// The weight of remote arc `a` under the links asked for.
    #[inline(always)]
    fn arc_weight(&self, a: usize) -> i64 {
        let g = self.pag;
        if (self.links.is_empty() && self.message_weight.is_none()) || g.arc_kind[a] != ArcKind::Message {
            return g.arc_weight[a];
        }
        let (from, to) = (g.arc_from[a] as usize, g.arc_to[a] as usize);
        match self.links.get(&(g.loc[from], g.loc[to])) {
            Some(Some(w)) => *w,
            Some(None) => (g.wall[to] - g.wall[from]).max(0),
            None => self.message_weight.unwrap_or(g.arc_weight[a]),
        }
    }

    #[inline(always)]
    fn in_app(&self, l: u32) -> bool {
        self.in_app.get(l as usize).copied().unwrap_or(false)
    }

    #[inline(always)]
    fn in_window(&self, i: usize) -> bool {
        match self.window {
            None => true,
            Some((a, b)) => (a..=b).contains(&self.pag.wall[i]),
        }
    }

    /// May node `i` be on a path at all? (Never a clock-offset sample: it carries no
    /// activity.)
    #[inline(always)]
    fn node_ok(&self, i: usize) -> bool {
        let l = self.pag.loc[i];
        self.pag.kind[i] != CLOCK_OFFSET
            && self.in_window(i)
            && match self.scope {
                Scope::Intra(_) => l == NONE || self.in_app(l),
                _ => true,
            }
    }

    /// May a path start at location `l`?
    #[inline(always)]
    fn source_ok(&self, l: u32) -> bool {
        match self.scope {
            Scope::Global => true,
            _ => self.in_app(l),
        }
    }

    /// May a path end at node `i`?
    #[inline(always)]
    pub(crate) fn end_ok(&self, i: usize) -> bool {
        let l = self.pag.loc[i];
        l != NONE && self.node_ok(i) && self.source_ok(l)
    }

    /// Every way into node `i` whose origin is reached: `f(distance through it, pred)`,
    /// the local arc (or the source) first, then the remote arcs in order.
    #[inline(always)]
    pub(crate) fn each_candidate(
        &self,
        i: usize,
        dist: &[i64],
        arcs: std::ops::Range<usize>,
        f: impl FnMut(i64, Pred),
    ) {
        let g = self.pag;
        self.each_candidate_by(i, arcs, |p| dist[p as usize], |a| dist[g.arc_from[a] as usize], f);
    }

    /// `each_candidate` with the distances wherever the caller keeps them: of the local
    /// predecessor (`prev_dist(p)`), and of remote arc `a`'s origin (`arc_dist(a)`).
    #[inline(always)]
    fn each_candidate_by(
        &self,
        i: usize,
        arcs: std::ops::Range<usize>,
        prev_dist: impl Fn(u32) -> i64,
        arc_dist: impl Fn(usize) -> i64,
        mut f: impl FnMut(i64, Pred),
    ) {
        let g = self.pag;
        let l = g.loc[i];
        if l != NONE {
            let w = self.local_weight(i);
            let p = g.prev[i];
            if p == NONE || !self.in_window(p as usize) {
                // A location's first node, or the first in the window: its arc's share
                // inside the window (the sub-PAG of a stretch weighs it the same).
                if self.source_ok(l) {
                    f(
                        match self.window {
                            Some((t0, _)) => share_after(g, i, w, t0),
                            None => w,
                        },
                        Pred::Source,
                    );
                }
            } else {
                let dp = prev_dist(p);
                if dp > NEG {
                    f(dp + w, Pred::Local(p));
                }
            }
        }
        for a in arcs {
            let df = arc_dist(a);
            if df > NEG {
                f(df + self.arc_weight(a), Pred::Arc(a as u32));
            }
        }
    }

    /// The longest distance to node `i` given the distances of its predecessors, and
    /// the predecessor that gives it. Ties go to a remote arc over the local one (the
    /// wait's cause); among remote arcs, to the first.
    #[inline]
    pub(crate) fn relax(&self, i: usize, dist: &[i64], arcs: std::ops::Range<usize>) -> (i64, Option<Pred>) {
        let mut best = NEG;
        let mut pred: Option<Pred> = None;
        self.each_candidate(i, dist, arcs, |c, p| {
            let wins =
                c > best || (c == best && matches!(p, Pred::Arc(_)) && !matches!(pred, Some(Pred::Arc(_))));
            if wins {
                best = c;
                pred = Some(p);
            }
        });
        (best, pred)
    }

    /// The forward diffusion: the longest distance from the source to every node,
    /// and the node where the longest path that may end ends.
    pub(crate) fn forward(&self) -> (SpillVec<i64>, Option<usize>) {
        // Beside the graph: in its file where it has one.
        let mut dist = SpillVec::new_in(self.pag.arena());
        let end = self.forward_into(&mut dist);
        (dist, end)
    }

    /// `forward` into `dist`, whose memory is reused: pages already mapped cost nothing
    /// to fill again, where fresh ones cost the kernel as much as a pass.
    pub(crate) fn forward_into(&self, dist: &mut SpillVec<i64>) -> Option<usize> {
        let g = self.pag;
        let n = g.nodes();
        // Filled in order (every predecessor comes first), so never pre-filled.
        dist.clear();
        dist.reserve(n);
        if dist.capacity() < n {
            // The graph's file is full (its error is kept, `Pag::spill_error`): memory.
            *dist = SpillVec::with_capacity_in(n, None);
        }
        let mut cursor = 0;
        let mut end: Option<usize> = None;
        for i in 0..n {
            let start = cursor;
            while cursor < g.arc_to.len() && g.arc_to[cursor] as usize == i {
                cursor += 1;
            }
            if !self.node_ok(i) {
                dist.push(NEG);
                continue;
            }
            let (d, _) = self.relax(i, dist, start..cursor);
            dist.push(d);
            if d > NEG && self.end_ok(i) && end.is_none_or(|e| d >= dist[e]) {
                end = Some(i);
            }
        }
        end
    }

    /// The path to `end`, walked backwards by the same rule that chose each distance.
    pub(crate) fn backward(&self, dist: &[i64], end: usize) -> Vec<Step> {
        let g = self.pag;
        walk_back(g, end, |i| {
            let (d, pred) = self.relax(i, dist, g.arcs_into(i as u32));
            debug_assert_eq!(d, dist[i]);
            let pred = pred?;
            let before = match pred {
                Pred::Source => 0,
                Pred::Local(p) => dist[p as usize],
                Pred::Arc(a) => dist[g.arc_from[a as usize] as usize],
            };
            Some((pred, d - before))
        })
    }
}

/// The steps of a path, from the source to `end`: `way_in(i)` says how node `i` was
/// reached and what the arc weighs (`None`: it was not).
fn walk_back(pag: &Pag, end: usize, mut way_in: impl FnMut(usize) -> Option<(Pred, i64)>) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut i = end;
    while let Some((pred, weight)) = way_in(i) {
        steps.push(Step { node: i as u32, pred, weight });
        match pred {
            Pred::Source => break,
            Pred::Local(p) => i = p as usize,
            Pred::Arc(a) => i = pag.arc_from[a as usize] as usize,
        }
    }
    steps.reverse();
    steps
}

/// The forward diffusion of the global scope without window or zeroing, as
/// `build::build_with_distances` makes it while reading the trace: what the backward
/// walk needs of it, without a distance for every node.
pub struct Distances {
    /// The critical path's length and last node.
    pub(crate) length: i64,
    pub(crate) end: Option<usize>,
    /// (node, remote arc) of every node whose longest way in is that remote arc, by
    /// node; every other node's is its local arc, or the source.
    pub(crate) remote: SpillVec<(u32, u32)>,
    /// The nodes of the graph this was made for.
    pub(crate) nodes: usize,
    /// The lengths of the other weightings asked for while building (`None`: they
    /// could not be made there), in the order asked.
    pub(crate) lanes: Option<Vec<i64>>,
}

impl Distances {
    /// The critical path's length (0 when no node was reached), as `length_with` gives it.
    pub fn length(&self) -> i64 {
        self.end.map_or(0, |_| self.length)
    }

    /// The lengths of the weightings asked for while building
    /// (`file::load_with_lanes`), in their order; `None` where they could not be made
    /// there (a scope or a window asked for, wall mode).
    pub fn lanes(&self) -> Option<&[i64]> {
        self.lanes.as_deref()
    }

    /// The path to `end`, walked back along the recorded longest ways in: the path
    /// `Pass::backward` finds with the same distances.
    fn walk(&self, pag: &Pag, end: usize) -> Vec<Step> {
        walk_back(pag, end, |i| {
            let won = self.remote.binary_search_by_key(&(i as u32), |r| r.0).ok().map(|k| self.remote[k].1);
            Some(match (won, pag.prev[i]) {
                (Some(a), _) => (Pred::Arc(a), pag.arc_weight[a as usize]),
                (None, NONE) => (Pred::Source, pag.weight[i]),
                (None, p) => (Pred::Local(p), pag.weight[i]),
            })
        })
    }
}

/// The critical path of a PAG under the given options.
pub fn critical_path(pag: &Pag, opts: &CpOptions) -> CriticalPath {
    critical_path_with(pag, opts, None)
}

/// `critical_path`, reusing the distances the build made when the options ask for
/// exactly those (global scope, no window, no zeroing).
pub fn critical_path_with(pag: &Pag, opts: &CpOptions, made: Option<&Distances>) -> CriticalPath {
    if let Some(d) = made.filter(|d| is_plain(opts) && d.nodes == pag.nodes()) {
        return match d.end {
            None => CriticalPath::default(),
            Some(e) => CriticalPath { length: d.length, steps: d.walk(pag, e) },
        };
    }
    let pass = Pass::new(pag, opts);
    let (dist, end) = pass.forward();
    match end {
        None => CriticalPath::default(),
        Some(e) => CriticalPath { length: dist[e], steps: pass.backward(&dist, e) },
    }
}

/// Only the length of the critical path (no walk back).
pub fn length(pag: &Pag, opts: &CpOptions) -> i64 {
    length_with(pag, opts, None)
}

/// Each location's last nodes whose distances a sweep keeps.
const RECENT: usize = 4;

/// The critical-path lengths of a sweep (`lengths`), and how many of them needed the
/// full pass.
#[derive(Debug)]
pub struct Lengths {
    /// One length per option, in their order.
    pub ns: Vec<i64>,
    /// How many lengths the sweep could not find (the graph was not as it needs).
    pub full_passes: usize,
}

/// The lengths of `opts`' critical paths in one sweep over the graph, which holds only
/// what is in flight rather than a distance per node: each location's last few nodes
/// and the origins whose remote arcs are not all read, with one distance per option.
/// The graph's arrays are read once for all the options. `arcs_out`
/// (`Pag::remote_arcs_out`) is shared by every sweep of the graph. When the graph is not
/// as the sweep needs (a node whose local predecessor is not among its location's last
/// few, an arc whose origin comes after it), each length is found by the full pass
/// instead.
pub fn lengths(pag: &Pag, opts: &[&CpOptions], arcs_out: &[u8]) -> Lengths {
    lengths_observed(pag, opts, arcs_out, &|_| {})
}

/// [`lengths`], telling `swept` how many more nodes the sweep has passed, every
/// [`SWEPT_EVERY`] of them and at its end.
pub fn lengths_observed(
    pag: &Pag,
    opts: &[&CpOptions],
    arcs_out: &[u8],
    swept: &(dyn Fn(u64) + Sync),
) -> Lengths {
    let passes: Vec<Pass> = opts.iter().map(|o| Pass::new(pag, o)).collect();
    match sweep(pag, &passes, arcs_out, swept) {
        Some(ns) => Lengths { ns, full_passes: 0 },
        None => {
            let mut dist = SpillVec::new_in(pag.arena());
            let ns = passes.iter().map(|p| p.forward_into(&mut dist).map_or(0, |e| dist[e])).collect();
            Lengths { ns, full_passes: passes.len() }
        }
    }
}

/// Nodes a sweep passes between two reports of [`lengths_observed`].
pub const SWEPT_EVERY: u64 = 1 << 16;

/// The sweep of `lengths`; `None` when the graph is not as it needs.
fn sweep(pag: &Pag, passes: &[Pass], arcs_out: &[u8], swept: &(dyn Fn(u64) + Sync)) -> Option<Vec<i64>> {
    let k = passes.len();
    if k == 0 {
        return Some(Vec::new());
    }
    let g = pag;
    // Per location, its last nodes in a ring (`head`: the newest) and each one's
    // distance per pass.
    let locs = g.defs.locations.len();
    let mut recent = vec![[NONE; RECENT]; locs];
    let mut head = vec![0u8; locs];
    let mut recent_dist = vec![NEG; locs * RECENT * k];
    // Origins in flight: their slot of `k` distances and the arcs left to read.
    let mut held: InFlight<(u32, u8)> = InFlight::new((NONE, 0));
    let mut slots: Vec<i64> = Vec::new();
    let mut free: Vec<u32> = Vec::new();
    let mut done: Vec<u32> = Vec::new();
    // The slots of this node's arcs' origins, in arc order.
    let mut into: Vec<u32> = Vec::new();
    let mut d = vec![NEG; k];
    let mut best: Vec<Option<i64>> = vec![None; k];
    let mut cursor = 0;
    for i in 0..g.nodes() {
        if i > 0 && (i as u64).is_multiple_of(SWEPT_EVERY) {
            swept(SWEPT_EVERY);
        }
        let start = cursor;
        while cursor < g.arc_to.len() && g.arc_to[cursor] as usize == i {
            cursor += 1;
        }
        into.clear();
        for a in start..cursor {
            let from = g.arc_from[a];
            let (slot, left) = held.get_mut(from)?;
            let slot = *slot;
            if *left != u8::MAX {
                *left -= 1;
                if *left == 0 {
                    held.remove(from);
                    done.push(slot);
                }
            }
            into.push(slot);
        }
        let l = g.loc[i];
        // Where the local predecessor's distances are.
        let prev_at = match (l, g.prev[i]) {
            (NONE, _) | (_, NONE) => None,
            (l, p) => {
                let ring = recent.get(l as usize)?;
                Some((l as usize * RECENT + ring.iter().position(|&x| x == p)?) * k)
            }
        };
        for (n, pass) in passes.iter().enumerate() {
            let mut dn = NEG;
            if pass.node_ok(i) {
                pass.each_candidate_by(
                    i,
                    start..cursor,
                    |_| prev_at.map_or(NEG, |at| recent_dist[at + n]),
                    |a| slots[into[a - start] as usize * k + n],
                    |c, _| dn = dn.max(c),
                );
                if dn > NEG && pass.end_ok(i) && best[n].is_none_or(|b| dn >= b) {
                    best[n] = Some(dn);
                }
            }
            d[n] = dn;
        }
        if l != NONE {
            let h = (head[l as usize] as usize + 1) % RECENT;
            head[l as usize] = h as u8;
            recent[l as usize][h] = i as u32;
            let at = (l as usize * RECENT + h) * k;
            recent_dist[at..at + k].copy_from_slice(&d);
        }
        free.append(&mut done);
        let out = arcs_out.get(i).copied().unwrap_or(0);
        if out > 0 {
            let slot = match free.pop() {
                Some(s) => s,
                None => {
                    slots.resize(slots.len() + k, NEG);
                    (slots.len() / k - 1) as u32
                }
            };
            slots[slot as usize * k..][..k].copy_from_slice(&d);
            held.insert(i as u32, (slot, out));
        }
    }
    swept(match g.nodes() as u64 {
        0 => 0,
        n => n - (n - 1) / SWEPT_EVERY * SWEPT_EVERY,
    });
    Some(best.into_iter().map(|b| b.unwrap_or(0)).collect())
}

/// `length`, reusing the build's distances as `critical_path_with` does.
pub fn length_with(pag: &Pag, opts: &CpOptions, made: Option<&Distances>) -> i64 {
    match made {
        Some(d) if is_plain(opts) && d.nodes == pag.nodes() => d.length(),
        _ => {
            let (dist, end) = Pass::new(pag, opts).forward();
            end.map_or(0, |e| dist[e])
        }
    }
}

/// The options whose forward diffusion the build makes: global scope, whole run, nothing zeroed.
fn is_plain(opts: &CpOptions) -> bool {
    matches!(opts.scope, None | Some(Scope::Global))
        && opts.window.is_none()
        && opts.zero.is_empty()
        && opts.scale.is_empty()
        && opts.links.is_empty()
        && opts.message_weight.is_none()
}

/// The remote arcs of a path by kind, for summaries.
pub fn arc_counts(pag: &Pag, path: &CriticalPath) -> [usize; 5] {
    let mut n = [0; 5];
    for s in &path.steps {
        if let Pred::Arc(a) = s.pred {
            n[pag.arc_kind[a as usize] as usize] += 1;
        }
    }
    n
}

/// The scope's name for reports.
pub fn scope_label(pag: &Pag, scope: Scope) -> String {
    let app = |a: u32| pag.defs.apps.get(a as usize).map(|x| pag.defs.strings.name(x.name).into_owned());
    match scope {
        Scope::Global => "global".to_owned(),
        Scope::Intra(a) => format!("intra-application {}", app(a).unwrap_or_default()),
        Scope::Inter(a) => format!("inter-application {}", app(a).unwrap_or_default()),
    }
}

/// A path laid out in time for drawing: segments `(location, start, end)` of its local
/// arcs and hops `(from location, from time, to location, to time)` of its remote arcs
/// (a collective's hop runs from the begin that fed its virtual node), all in wall time.
pub type Drawing = (Vec<(u32, i64, i64)>, Vec<(u32, i64, u32, i64)>);

/// The path laid out in time (see `Drawing`).
pub fn drawing(pag: &Pag, path: &CriticalPath) -> Drawing {
    let (mut segments, mut hops) = (Vec::new(), Vec::new());
    for (k, s) in path.steps.iter().enumerate() {
        let i = s.node as usize;
        match s.pred {
            Pred::Source => segments.push((pag.loc[i], (pag.wall[i] - s.weight).max(pag.t0), pag.wall[i])),
            Pred::Local(p) => segments.push((pag.loc[i], pag.wall[p as usize], pag.wall[i])),
            Pred::Arc(a) => {
                let mut from = pag.arc_from[a as usize];
                if pag.loc[from as usize] == NONE && k > 0 {
                    from = path.steps[k - 1].from(pag);
                }
                if pag.loc[i] != NONE && from != NONE && pag.loc[from as usize] != NONE {
                    hops.push((pag.loc[from as usize], pag.wall[from as usize], pag.loc[i], pag.wall[i]));
                }
            }
        }
    }
    (segments, hops)
}
