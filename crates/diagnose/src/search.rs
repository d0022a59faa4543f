//! The W3 search (Paradyn's Performance Consultant, offline): a hypothesis is tested at a
//! focus over a window of time against its threshold; a true one is refined one step
//! along the why axis (its refinements), the where axis (one hierarchy one level down)
//! and, at the whole program, the when axis (phases and time slices); a false one is not
//! refined. What was tested, and how it came out, is the Search History Graph.

use crate::cube::{Bins, Cube, Metric, Other, NO_PARTNER};
use crate::directives::{Directives, Priority};
use crate::focus::{Focus, Resources};
use crate::hypothesis::{Hypothesis, TOP};
use rustc_hash::FxHashMap;
use serde::Serialize;
use spoor_model::LocId;
use spoor_waits::Pattern;
use std::collections::BinaryHeap;

/// A stretch of the run the search looks at.
#[derive(Clone, Debug, Serialize)]
pub struct Window {
    /// `whole run`, `phase NAME` or `slice I/K`.
    pub name: String,
    #[serde(skip)]
    pub bins: Bins,
    /// Its start and end (ns, the trace's clock).
    pub start: i64,
    pub end: i64,
}

/// How a node came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    True,
    False,
    /// A directive prunes it: never tested.
    Pruned,
    /// The search stopped (its test budget spent) before testing it.
    NotTested,
    /// Nothing to test: no time in the focus, or one location for an imbalance.
    NotApplicable,
}

/// One node of the Search History Graph.
#[derive(Clone, Debug, Serialize)]
pub struct Node {
    pub id: usize,
    pub hypothesis: Hypothesis,
    #[serde(skip)]
    pub focus: Focus,
    /// The focus as text (formats/diagnose.md, "Foci").
    #[serde(rename = "focus")]
    pub focus_name: String,
    /// Index into [`Shg::windows`].
    pub window: usize,
    pub state: State,
    /// The share of the focus's time (`None` untested).
    pub value: Option<f64>,
    /// The time that share is of the focus's time (ns; `None` untested): what ranks
    /// bottlenecks.
    pub amount_ns: Option<f64>,
    pub threshold: f64,
    /// The nodes whose refinement it is.
    pub parents: Vec<usize>,
    pub priority: Priority,
}

/// The Search History Graph.
#[derive(Clone, Debug, Serialize)]
pub struct Shg {
    pub windows: Vec<Window>,
    pub nodes: Vec<Node>,
    /// Hypothesis-focus-window triples tested (what directives save).
    pub tested: usize,
    pub max_tests: usize,
}

impl Shg {
    /// The children of each node.
    pub fn children(&self) -> Vec<Vec<usize>> {
        let mut c = vec![Vec::new(); self.nodes.len()];
        for n in &self.nodes {
            for &p in &n.parents {
                c[p].push(n.id);
            }
        }
        c
    }

    pub fn count(&self, s: State) -> usize {
        self.nodes.iter().filter(|n| n.state == s).count()
    }
}

/// How the search runs.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// Equal time slices the when axis splits the run into.
    pub slices: usize,
    /// The most hypothesis-focus-window triples tested.
    pub max_tests: usize,
    /// Thresholds by hypothesis (before the directives' own).
    pub thresholds: Vec<(Hypothesis, f64)>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { slices: 4, max_tests: 20_000, thresholds: Vec::new() }
    }
}

/// Values of hypotheses at foci, from the cube.
pub struct Evaluator<'a> {
    pub cube: &'a Cube,
    pub res: &'a Resources<'a>,
}

const WAITS: [Pattern; 13] = Pattern::ALL;

impl Evaluator<'_> {
    /// The sum of metric `m` over the focus's locations and procedure; about its partner
    /// or synchronization object when `scoped`.
    fn sum(&self, locs: &[LocId], f: &Focus, m: Metric, scoped: bool, bins: Bins) -> f64 {
        let other = match (scoped, f.partner, f.object) {
            (true, Some(p), _) => Other::Partner(p),
            (true, None, Some(o)) => Other::Object(o),
            _ => NO_PARTNER,
        };
        locs.iter().map(|&l| self.cube.sum(l, f.proc(), m, other, bins)).sum()
    }

    /// The time of the focus's locations in the window (the values' denominator).
    pub fn time(&self, locs: &[LocId], bins: Bins) -> f64 {
        locs.iter().map(|&l| self.cube.sum(l, crate::cube::ALL, Metric::Time, NO_PARTNER, bins)).sum()
    }

    /// The value of `h` at `f` over `bins`, a share of the focus's time, and the time it
    /// is of it (`None`: nothing to test).
    pub fn value(&self, h: Hypothesis, f: &Focus, bins: Bins) -> Option<(f64, f64)> {
        let locs = self.res.locations(f.place);
        let time = self.time(&locs, bins);
        if time <= 0.0 {
            return None;
        }
        let waits = |scoped: bool| -> f64 {
            WAITS.iter().map(|&p| self.sum(&locs, f, Metric::Wait(p), scoped, bins)).sum()
        };
        // At a partner or a synchronization object, what is charged about it.
        let scoped = f.partner.is_some() || f.object.is_some();
        let num = match h {
            Hypothesis::CpuBound => self.sum(&locs, f, Metric::Compute, false, bins),
            Hypothesis::IoBlocking => self.sum(&locs, f, Metric::Io, false, bins),
            Hypothesis::SyncWaiting => waits(f.object.is_some()),
            Hypothesis::Wait(Pattern::LateSender) => {
                self.sum(&locs, f, Metric::Wait(Pattern::LateSender), scoped, bins)
                    + self.sum(&locs, f, Metric::Wait(Pattern::LateSenderWrongOrder), scoped, bins)
            }
            Hypothesis::Wait(pat) => self.sum(&locs, f, Metric::Wait(pat), scoped, bins),
            Hypothesis::Communication if scoped => {
                let calls = self.sum(&locs, f, Metric::Recv, true, bins)
                    + self.sum(&locs, f, Metric::Coll, true, bins);
                (calls - waits(true)).max(0.0)
            }
            Hypothesis::Communication => {
                (self.sum(&locs, f, Metric::Comm, false, bins) - waits(false)).max(0.0)
            }
            Hypothesis::LoadImbalance => {
                if locs.len() < 2 {
                    return None;
                }
                let work: Vec<f64> = locs
                    .iter()
                    .map(|&l| self.cube.sum(l, f.proc(), Metric::Compute, NO_PARTNER, bins))
                    .collect();
                let max = work.iter().copied().fold(0.0, f64::max);
                let mean = work.iter().sum::<f64>() / work.len() as f64;
                return Some(((max - mean) / (time / locs.len() as f64), max - mean));
            }
        };
        Some((num / time, num))
    }

    /// Whether `h` can be tested at all in this trace.
    fn applicable(&self, h: Hypothesis) -> bool {
        h != Hypothesis::IoBlocking || self.cube.has_io
    }
}

/// The windows of the when axis: the whole run, each phase, then equal slices.
pub fn windows(cube: &Cube, res: &Resources, slices: usize) -> Vec<Window> {
    let mk = |name: String, bins: Bins| {
        let (start, end) = cube.time_of(bins);
        Window { name, bins, start, end }
    };
    let mut w = vec![mk("whole run".into(), cube.whole())];
    for &(name, t0, t1) in &cube.phases {
        let n = res.defs().strings.name(name).into_owned();
        w.push(mk(format!("phase {n}"), cube.bins_of(t0, t1)));
    }
    let k = slices.min(cube.bins);
    if k > 1 {
        for i in 0..k {
            let bins = Bins(i * cube.bins / k, (i + 1) * cube.bins / k);
            w.push(mk(format!("slice {}/{k}", i + 1), bins));
        }
    }
    w
}

/// A node waiting to be tested: soonest first (priority, then the order found).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Queued(std::cmp::Reverse<(Priority, usize)>, usize);

struct Search<'a> {
    ev: Evaluator<'a>,
    dirs: &'a Directives,
    opts: &'a SearchOptions,
    windows: Vec<Window>,
    nodes: Vec<Node>,
    index: FxHashMap<(Hypothesis, Focus, usize), usize>,
    queue: BinaryHeap<Queued>,
    seq: usize,
    tested: usize,
}

impl Search<'_> {
    fn threshold(&self, h: Hypothesis, f: &Focus) -> f64 {
        let default =
            self.opts.thresholds.iter().rev().find(|t| t.0 == h).map_or(h.default_threshold(), |t| t.1);
        self.dirs.threshold(h, f, default)
    }

    /// The node of (h, f, w), made (and queued, unless pruned) if new; `parent` refines to it.
    fn reach(&mut self, h: Hypothesis, f: Focus, w: usize, parent: Option<usize>) {
        if let Some(&id) = self.index.get(&(h, f, w)) {
            if let Some(p) = parent {
                if !self.nodes[id].parents.contains(&p) {
                    self.nodes[id].parents.push(p);
                }
            }
            return;
        }
        let id = self.nodes.len();
        let pruned = self.dirs.pruned(self.ev.res, h, &f);
        let priority = self.dirs.priority(h, &f);
        self.nodes.push(Node {
            id,
            hypothesis: h,
            focus: f,
            focus_name: self.ev.res.focus_name(&f),
            window: w,
            state: if pruned { State::Pruned } else { State::NotTested },
            value: None,
            amount_ns: None,
            threshold: self.threshold(h, &f),
            parents: parent.into_iter().collect(),
            priority,
        });
        self.index.insert((h, f, w), id);
        if !pruned {
            self.seq += 1;
            self.queue.push(Queued(std::cmp::Reverse((priority, self.seq)), id));
        }
    }

    fn test(&mut self, id: usize) {
        let (h, f, w) = (self.nodes[id].hypothesis, self.nodes[id].focus, self.nodes[id].window);
        let value = if self.ev.applicable(h) { self.ev.value(h, &f, self.windows[w].bins) } else { None };
        self.tested += 1;
        let n = &mut self.nodes[id];
        n.value = value.map(|v| v.0);
        n.amount_ns = value.map(|v| v.1);
        n.state = match n.value {
            None => State::NotApplicable,
            Some(v) if v > n.threshold => State::True,
            Some(_) => State::False,
        };
        if n.state == State::True {
            self.refine(id, h, f, w);
        }
    }

    /// One step along each axis from a true node.
    fn refine(&mut self, id: usize, h: Hypothesis, f: Focus, w: usize) {
        for c in h.children() {
            self.reach(c, f, w, Some(id));
        }
        if f.code.is_none() {
            for c in self.ev.res.code_children(self.ev.cube, f.place) {
                self.reach(h, Focus { code: Some(c), ..f }, w, Some(id));
            }
        }
        if h.has_places() {
            for p in self.ev.res.place_children(f.place) {
                self.reach(h, Focus { place: p, ..f }, w, Some(id));
            }
        }
        if h.has_partners() && f.partner.is_none() && f.object.is_none() {
            for p in self.ev.res.partner_children(self.ev.cube, f.place) {
                self.reach(h, Focus { partner: Some(p), ..f }, w, Some(id));
            }
        }
        if h.has_objects() && f.partner.is_none() {
            for o in self.ev.res.object_children(self.ev.cube, f.place, f.object) {
                self.reach(h, Focus { object: Some(o), ..f }, w, Some(id));
            }
        }
        if w == 0 && f.is_root() {
            for k in 1..self.windows.len() {
                self.reach(h, f, k, Some(id));
            }
        }
    }
}

/// Runs the search.
pub fn search(cube: &Cube, res: &Resources, dirs: &Directives, opts: &SearchOptions) -> Shg {
    let mut s = Search {
        ev: Evaluator { cube, res },
        dirs,
        opts,
        windows: windows(cube, res, opts.slices),
        nodes: Vec::new(),
        index: FxHashMap::default(),
        queue: BinaryHeap::new(),
        seq: 0,
        tested: 0,
    };
    for h in TOP {
        s.reach(h, Focus::ROOT, 0, None);
    }
    // High-priority pairs start with the search, whatever their parents would give.
    for &(h, f, p) in &dirs.priorities {
        if p == Priority::High {
            for h in h.map_or_else(Hypothesis::all, |h| vec![h]) {
                s.reach(h, f, 0, None);
            }
        }
    }
    while let Some(Queued(_, id)) = s.queue.pop() {
        if s.tested >= opts.max_tests {
            break;
        }
        s.test(id);
    }
    Shg { windows: s.windows, nodes: s.nodes, tested: s.tested, max_tests: opts.max_tests }
}

/// Nodes true at the whole run whose refinements at the whole run are all false (the
/// most precise statement of each bottleneck), the most time first.
pub fn bottlenecks(shg: &Shg) -> Vec<usize> {
    let children = shg.children();
    let mut v: Vec<usize> = shg
        .nodes
        .iter()
        .filter(|n| n.state == State::True && n.window == 0)
        .filter(|n| {
            !children[n.id].iter().any(|&c| {
                let c = &shg.nodes[c];
                c.state == State::True && c.window == 0
            })
        })
        .map(|n| n.id)
        .collect();
    v.sort_by(|&a, &b| {
        let (x, y) = (&shg.nodes[a], &shg.nodes[b]);
        y.amount_ns.unwrap_or(0.0).total_cmp(&x.amount_ns.unwrap_or(0.0)).then(a.cmp(&b))
    });
    v
}
