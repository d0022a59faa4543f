//! Root causes of wait states: the delay analysis of Böhme et al. A wait on location w,
//! caused by an event on location d, is charged to what d did more than w since the two
//! last synchronized: the excess time of each call path of d (a *delay*), and the excess
//! time d itself spent waiting, which passes the charge on to d's own waits and so on
//! back along the chain (formats/waits.md, "Root causes").

use crate::detect::{Detector, Peer};
use crate::{Instance, Pattern};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;
use spoor_format::spill::{Arena, SpillVec};
use spoor_model::LocId;
use std::cell::Cell;
use std::sync::Arc;

/// Work of one call path on one location that made others wait.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Delay {
    pub loc: LocId,
    pub callpath: u32,
    /// The waits it caused directly (ns).
    pub short_term_ns: f64,
    /// The waits it caused further along the chain, through the waits it caused (ns).
    pub long_term_ns: f64,
}

impl Delay {
    pub fn cost_ns(&self) -> f64 {
        self.short_term_ns + self.long_term_ns
    }
}

/// How one wait came about and what it caused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct WaitCause {
    /// The part of the wait charged to the other side's own waiting (0: a direct wait,
    /// caused by work alone).
    pub indirect_ns: f64,
    /// The waits further along that it caused (0: a terminal wait).
    pub propagated_ns: f64,
}

impl WaitCause {
    pub fn direct(&self) -> bool {
        self.indirect_ns <= 0.0
    }
    pub fn propagating(&self) -> bool {
        self.propagated_ns > 0.0
    }
}

/// The root causes of every wait.
#[derive(Clone, Debug, Default)]
pub struct RootCauses {
    /// Largest cost first.
    pub delays: Vec<Delay>,
    /// By instance (the same order as `WaitStates::instances`); `None` for waits that no
    /// delay causes (the completions of collectives and of MPI_Init).
    pub waits: SpillVec<Option<WaitCause>>,
    /// Waiting time no work could be found for (nothing ran on the other side since the
    /// last synchronization).
    pub unattributed_ns: f64,
}

/// Whether a pattern's waits are caused by another location being late.
pub fn caused_by_delay(p: Pattern) -> bool {
    !matches!(
        p,
        Pattern::BarrierCompletion
            | Pattern::NxNCompletion
            | Pattern::InitCompletion
            | Pattern::FinalizeCompletion
    )
}

/// A delay-caused wait as an interval query reads it (under a third of an [`Instance`],
/// whose array is too large for the caches these queries walk through).
#[derive(Clone, Copy)]
struct Span {
    start: i64,
    end: i64,
    idx: u32,
    callpath: u32,
}

/// What caused a delay-caused wait: the location and time of the event it waited for
/// (location [`NO_CAUSE`] when none is known: such a wait is not charged). Kept beside
/// the spans, so that neither taking the waits in their order nor charging them reads
/// the instances, whose lines each wait would miss.
#[derive(Clone, Copy)]
struct Cause {
    time: i64,
    loc: LocId,
}

const NO_CAUSE: LocId = LocId::MAX;

/// A delay-caused wait inside a queried interval: its place among the spans, its call
/// path and its overlap.
#[derive(Clone, Copy)]
struct Overlap {
    span: u32,
    callpath: u32,
    ov: i64,
}

/// A wait to charge, taken from its span and cause in the order the waits are charged.
#[derive(Clone, Copy)]
struct ToCharge {
    end: i64,
    start: i64,
    loc: LocId,
    idx: u32,
    cause: Cause,
}

/// The waits and work of the locations, indexed for interval queries.
struct Timelines<'a> {
    d: &'a Detector,
    /// The delay-caused waits, by location, then start.
    spans: &'a [Span],
    /// The range of each location's waits in `spans`.
    by_loc: &'a [std::ops::Range<usize>],
    /// Per location, where its last query into its runs, its waits and its
    /// synchronizations ended: the waits are charged latest first, so the next query
    /// is near, and a search from there touches a few cache lines, not a whole array's.
    hints: Vec<Hints>,
}

/// Where a location's last queries ended: in its runs (a block and a run within it), its
/// waits and its synchronizations.
#[derive(Default)]
struct Hints {
    runs: [Cell<usize>; 2],
    waits: Cell<usize>,
    syncs: Cell<usize>,
}

/// Elements a search steps over one at a time before it starts doubling its steps.
const STEPS: usize = 8;

/// [`slice::partition_point`] searched outwards from `hint` (then set to the answer): the
/// root causes' queries mostly end a few places from where the last one did, where
/// stepping one element at a time takes one mispredicted branch, not one a probe.
pub(crate) fn partition_near<T>(v: &[T], hint: &Cell<usize>, pred: impl Fn(&T) -> bool) -> usize {
    let n = v.len();
    let h = hint.get().min(n);
    let (i, found) = if h < n && pred(&v[h]) {
        // The answer is past h.
        let end = (h + 1 + STEPS).min(n);
        let mut i = h + 1;
        while i < end && pred(&v[i]) {
            i += 1;
        }
        (i, i < end || i == n)
    } else {
        // The answer is h or before.
        let end = h.saturating_sub(STEPS);
        let mut i = h;
        while i > end && !pred(&v[i - 1]) {
            i -= 1;
        }
        (i, i > end || i == 0)
    };
    hint.set(i);
    if found {
        return i;
    }
    partition_doubling(v, hint, pred)
}

/// [`slice::partition_point`] searched outwards from `hint` in doubling steps (then set
/// to the answer).
fn partition_doubling<T>(v: &[T], hint: &Cell<usize>, pred: impl Fn(&T) -> bool) -> usize {
    let n = v.len();
    let h = hint.get().min(n);
    let at = if h < n && pred(&v[h]) {
        // The answer is past h: double the step until past it.
        let (mut lo, mut step) = (h + 1, 1);
        loop {
            let probe = lo + step - 1;
            if probe >= n {
                break lo + v[lo..].partition_point(&pred);
            }
            if !pred(&v[probe]) {
                break lo + v[lo..probe].partition_point(&pred);
            }
            lo = probe + 1;
            step *= 2;
        }
    } else {
        // The answer is h or before.
        let (mut hi, mut step) = (h, 1);
        loop {
            if hi == 0 {
                break 0;
            }
            let lo = hi.saturating_sub(step);
            if pred(&v[lo]) {
                break lo + 1 + v[lo + 1..hi].partition_point(&pred);
            }
            hi = lo;
            step *= 2;
        }
    };
    hint.set(at);
    at
}

/// Time per call path on a location in an interval: a sparse set (each path's place in
/// `paths` is `slot[path]` when that place holds it), so that it needs no clearing and a
/// path is found in one step.
#[derive(Default)]
struct Work {
    paths: Vec<(u32, i64)>,
    slot: Vec<u32>,
}

impl Work {
    fn find(&self, path: u32) -> Option<usize> {
        let s = *self.slot.get(path as usize)? as usize;
        (self.paths.get(s)?.0 == path).then_some(s)
    }

    fn get(&self, path: u32) -> i64 {
        self.find(path).map_or(0, |s| self.paths[s].1)
    }

    fn add(&mut self, path: u32, t: i64) {
        match self.find(path) {
            Some(s) => self.paths[s].1 += t,
            None => {
                let p = path as usize;
                if p >= self.slot.len() {
                    self.slot.resize(p + 1, 0);
                }
                self.slot[p] = self.paths.len() as u32;
                self.paths.push((path, t));
            }
        }
    }
}

impl Timelines<'_> {
    /// Time per call path on `loc` in `[a, b]`, the delay-caused waits (`waits`, from
    /// [`Timelines::waits_in`] over the same interval) taken out; into `out`.
    fn work(&self, loc: LocId, a: i64, b: i64, waits: &[Overlap], out: &mut Work) {
        out.paths.clear();
        let Some(st) = self.d.locs.get(loc as usize) else { return };
        let runs = &st.runs;
        let at = runs.at(a, &self.hints[loc as usize].runs);
        runs.each_until(at, b, st.last, |s, e, path| {
            let len = e.min(b) - s.max(a);
            if len > 0 {
                out.add(path, len);
            }
        });
        for w in waits {
            if let Some(k) = out.find(w.callpath) {
                out.paths[k].1 = (out.paths[k].1 - w.ov).max(0);
            }
        }
    }

    /// The delay-caused waits on `loc` that overlap `[a, b]`, with the overlap; into `out`.
    fn waits_in(&self, loc: LocId, a: i64, b: i64, out: &mut Vec<Overlap>) {
        out.clear();
        let Some(r) = self.by_loc.get(loc as usize) else { return };
        // A location's waits do not overlap, so their ends rise with their starts.
        let mine = &self.spans[r.clone()];
        let first = partition_near(mine, &self.hints[loc as usize].waits, |w| w.end <= a);
        for (k, w) in mine[first..].iter().enumerate() {
            if w.start >= b {
                break;
            }
            let ov = w.end.min(b) - w.start.max(a);
            if ov > 0 {
                out.push(Overlap { span: (r.start + first + k) as u32, callpath: w.callpath, ov });
            }
        }
    }

    /// When `w` (before `tw`) and `d` (before `td`) last synchronized: where each one's
    /// interval starts (the later side of the synchronization, within the intervals);
    /// their first events when they never did.
    fn last_sync(&self, w: LocId, tw: i64, d: LocId, td: i64) -> (i64, i64) {
        let start = |l: LocId| self.d.locs.get(l as usize).and_then(|s| s.runs.first_time()).unwrap_or(0);
        let Some(st) = self.d.locs.get(w as usize) else { return (start(w), start(d)) };
        let upto = partition_near(&st.syncs, &self.hints[w as usize].syncs, |s| s.at <= tw);
        for s in st.syncs[..upto].iter().rev() {
            let peer_time = match st.peer(s) {
                Peer::Loc(x, t) if x == d => Some(t),
                Peer::Loc(..) | Peer::Unknown => None,
                Peer::Coll(id) => {
                    let ends = &self.d.coll_ends[id as usize];
                    member_end(ends, d)
                }
            };
            // Both sides start from the later of the two moments: before it, one of
            // them was still on its way (a message in transit, a lock left free).
            if let Some(t) = peer_time.filter(|&t| t <= td) {
                let from = s.at.max(t);
                return (from.min(tw), from.min(td));
            }
        }
        (start(w), start(d))
    }
}

/// When `d` ended the collective instance whose members' ends (sorted by location) are
/// `ends`; `None` if it was not a member. Where the members are consecutive locations (a
/// communicator of whole processes in order, as most are) `d`'s place is known at once,
/// and a search through the instance's lines is left for the rest.
#[inline]
fn member_end(ends: &[(LocId, i64)], d: LocId) -> Option<i64> {
    let first = ends.first()?.0;
    match ends.get(d.wrapping_sub(first) as usize) {
        Some(&(l, t)) if l == d => Some(t),
        _ => ends.binary_search_by_key(&d, |e| e.0).ok().map(|k| ends[k].1),
    }
}

/// What a wait is charged to, found from its interval and its cause's alone (so the
/// waits can be looked at in parallel): the excess work per call path of the cause's
/// location (`parts`), and its excess waiting, spread over its waits (`edges`).
struct Charge {
    cause_loc: LocId,
    parts: std::ops::Range<usize>,
    /// The cause's waits in its interval.
    edges: std::ops::Range<usize>,
    waited: f64,
    sum: f64,
}

/// The charges of the waits `order[range]`, with the spans they index.
#[derive(Default)]
struct Charges {
    charges: Vec<Charge>,
    parts: Vec<(u32, f64)>,
    edges: Vec<Overlap>,
}

/// Finds the charge of each wait in `order`, latest first (the order its hints follow).
fn charges(d: &Detector, spans: &[Span], by_loc: &[std::ops::Range<usize>], order: &[ToCharge]) -> Charges {
    let hints = (0..by_loc.len()).map(|_| Default::default()).collect();
    let t = Timelines { d, spans, by_loc, hints };
    let mut out = Charges { charges: Vec::with_capacity(order.len()), ..Default::default() };
    // The cause's side, kept while consecutive waits share it (the members of one
    // collective instance wait for the same last member over the same interval).
    let mut d_side: Option<(LocId, i64, i64)> = None;
    let (mut work_d, mut work_w) = (Work::default(), Work::default());
    let (mut waits_d, mut waits_w) = (Vec::new(), Vec::new());
    for w in order {
        let (dl, c) = (w.cause.loc, w.cause.time);
        let (tw, td) = t.last_sync(w.loc, w.start, dl, c);
        if d_side != Some((dl, td, c)) {
            t.waits_in(dl, td, c, &mut waits_d);
            t.work(dl, td, c, &waits_d, &mut work_d);
            // Its parts in call path order, as their sum adds them.
            work_d.paths.sort_unstable_by_key(|x| x.0);
            d_side = Some((dl, td, c));
        }
        t.waits_in(w.loc, tw, w.start, &mut waits_w);
        t.work(w.loc, tw, w.start, &waits_w, &mut work_w);
        let wait_d: i64 = waits_d.iter().map(|x| x.ov).sum();
        let wait_w: i64 = waits_w.iter().map(|x| x.ov).sum();
        // The excess of d over w, per call path and in waiting; d's whole interval when it
        // did nothing more than w (the wait then came from elsewhere in the interval).
        let first = out.parts.len();
        out.parts.extend(
            work_d.paths.iter().map(|&(p, v)| (p, (v - work_w.get(p)).max(0) as f64)).filter(|x| x.1 > 0.0),
        );
        let mut waited = (wait_d - wait_w).max(0) as f64;
        if out.parts.len() == first && waited == 0.0 {
            out.parts.extend(work_d.paths.iter().map(|&(p, v)| (p, v as f64)).filter(|x| x.1 > 0.0));
            waited = wait_d as f64;
        }
        let sum: f64 = out.parts[first..].iter().map(|x| x.1).sum::<f64>() + waited;
        let edge = out.edges.len();
        if waited > 0.0 && sum > 0.0 {
            out.edges.extend_from_slice(&waits_d);
        }
        out.charges.push(Charge {
            cause_loc: dl,
            parts: first..out.parts.len(),
            edges: edge..out.edges.len(),
            waited,
            sum,
        });
    }
    out
}

/// Waits whose charges a thread finds before they are applied: enough that a thread's
/// hints stay near, few enough that the charges' memory stays small.
pub(crate) const STRETCH_PER_THREAD: usize = 1 << 17;

/// The charges applied in order: what each wait passes on to earlier ones, the delays'
/// costs, and the result.
struct Flow<'a> {
    incoming: SpillVec<f64>,
    out: RootCauses,
    delays: FxHashMap<(LocId, u32), (f64, f64)>,
    spans: &'a [Span],
    causes: &'a [Cause],
}

/// Where a wait comes in the order the waits are charged: latest end first, then latest
/// start, then highest location (unique, as a location's waits do not overlap), then
/// lowest instance (so that even waits that do are in one order on any number of
/// threads).
fn charge_key(w: &ToCharge) -> (i64, i64, LocId, std::cmp::Reverse<u32>) {
    (w.end, w.start, w.loc, std::cmp::Reverse(w.idx))
}

impl Flow<'_> {
    /// Applies the charges `found` of the waits `stretch` (the next in the order).
    fn apply(&mut self, stretch: &[ToCharge], found: &[Charges]) {
        let charged = found.iter().flat_map(|c| c.charges.iter().map(move |x| (c, x)));
        for (w, (found, ch)) in stretch.iter().zip(charged) {
            let i = w.idx as usize;
            let own = (w.end - w.start) as f64;
            let passed = self.incoming[i];
            self.out.waits[i] = Some(WaitCause { indirect_ns: 0.0, propagated_ns: passed });
            if ch.sum <= 0.0 {
                self.out.unattributed_ns += own + passed;
                continue;
            }
            for &(p, x) in &found.parts[ch.parts.clone()] {
                let e = self.delays.entry((ch.cause_loc, p)).or_default();
                e.0 += own * x / ch.sum;
                e.1 += passed * x / ch.sum;
            }
            if ch.waited > 0.0 {
                let share = ch.waited / ch.sum;
                self.out.waits[i] = Some(WaitCause { indirect_ns: own * share, propagated_ns: passed });
                let onward = (own + passed) * share;
                let edges = &found.edges[ch.edges.clone()];
                let total_ov: i64 = edges.iter().map(|x| x.ov).sum();
                for e in edges {
                    let (to, part) = (&self.spans[e.span as usize], onward * e.ov as f64 / total_ov as f64);
                    let j = to.idx as usize;
                    let charged = self.causes[e.span as usize].loc != NO_CAUSE;
                    let later = (to.end, to.start, ch.cause_loc, std::cmp::Reverse(to.idx)) < charge_key(w);
                    if charged && later {
                        self.incoming[j] += part;
                    } else {
                        self.out.unattributed_ns += part;
                    }
                }
            }
        }
    }
}

/// One pass over the instances (sorted by location, then start) gathers what the
/// charging reads: each location's delay-caused waits (and their range) and their
/// causes, and how many of them have one (those are charged).
fn gather(
    instances: &SpillVec<Instance>,
    locations: usize,
    arena: Option<&Arc<Arena>>,
) -> (SpillVec<Span>, SpillVec<Cause>, Vec<std::ops::Range<usize>>, u64) {
    let n = instances.len();
    let (mut spans, mut causes) =
        (SpillVec::with_capacity_in(n, arena), SpillVec::with_capacity_in(n, arena));
    let (mut by_loc, mut charged) = (vec![0..0; locations], 0);
    for (i, w) in instances.iter().enumerate().filter(|(_, w)| caused_by_delay(w.pattern)) {
        let (end, idx) = (w.start + w.duration, i as u32);
        if let Some(r) = by_loc.get_mut(w.loc as usize) {
            if r.start == r.end {
                *r = spans.len()..spans.len();
            }
            r.end += 1;
        }
        spans.push(Span { start: w.start, end, idx, callpath: w.callpath });
        causes.push(Cause { time: w.cause_time, loc: w.cause.map_or(NO_CAUSE, |c| c.loc) });
        charged += u64::from(w.cause.is_some());
    }
    (spans, causes, by_loc, charged)
}

/// Stretches of waits sorted at once, at about.
const WINDOW_STRETCHES: usize = 2;
/// One wait in this many tells where the windows are cut.
const SAMPLE: usize = 64;

/// The waits to charge in the order they are charged ([`charge_key`]), a stretch at
/// a time. The waits are cut by their end times into windows of about
/// [`WINDOW_STRETCHES`] stretches (from a sample of their ends), the latest first; a window's waits, a range of each
/// location's spans, are gathered with their causes and sorted on every core. Only a
/// window of them is held at once, not a copy of every wait.
struct ChargeOrder<'a> {
    spans: &'a [Span],
    causes: &'a [Cause],
    by_loc: &'a [std::ops::Range<usize>],
    /// The lower bounds of the windows still to take, latest last.
    cuts: Vec<i64>,
    /// Per location, the end of its spans not yet taken (a place in `spans`).
    left: Vec<usize>,
    window: Vec<ToCharge>,
    at: usize,
}

impl<'a> ChargeOrder<'a> {
    fn new(
        spans: &'a [Span],
        causes: &'a [Cause],
        by_loc: &'a [std::ops::Range<usize>],
        stretch: usize,
    ) -> Self {
        let mut sample: Vec<i64> = spans.iter().step_by(SAMPLE).map(|w| w.end).collect();
        sample.sort_unstable();
        let mut cuts = vec![i64::MIN];
        let every = (stretch * WINDOW_STRETCHES / SAMPLE).max(1);
        cuts.extend(sample.iter().skip(every).step_by(every));
        cuts.dedup();
        let left = by_loc.iter().map(|r| r.end).collect();
        ChargeOrder { spans, causes, by_loc, cuts, left, window: Vec::new(), at: 0 }
    }

    /// Takes the next window: the waits whose ends are at or after its lower bound, of
    /// those not yet taken, sorted. False when none is left.
    fn next_window(&mut self) -> bool {
        let Some(lo) = self.cuts.pop() else { return false };
        self.window.clear();
        self.at = 0;
        for (loc, r) in self.by_loc.iter().enumerate() {
            let upto = self.left[loc];
            // A location's waits do not overlap: their ends rise with their places.
            let from = r.start + self.spans[r.start..upto].partition_point(|w| w.end < lo);
            self.left[loc] = from;
            self.window.extend((from..upto).filter(|&k| self.causes[k].loc != NO_CAUSE).map(|k| {
                let w = &self.spans[k];
                ToCharge { end: w.end, start: w.start, loc: loc as LocId, idx: w.idx, cause: self.causes[k] }
            }));
        }
        sort_latest_first(&mut self.window);
        true
    }

    /// The next `n` waits to charge (fewer at the end), into `out`.
    fn fill(&mut self, out: &mut Vec<ToCharge>, n: usize) {
        out.clear();
        while out.len() < n {
            if self.at == self.window.len() && !self.next_window() {
                break;
            }
            let take = (n - out.len()).min(self.window.len() - self.at);
            out.extend_from_slice(&self.window[self.at..self.at + take]);
            self.at += take;
        }
    }
}

/// Waits to a bucket of [`sort_latest_first`], about.
const PER_BUCKET: usize = 32;

/// Sorts `waits` into the order they are charged ([`charge_key`], latest first): into
/// buckets of end times in place, in one sweep (about [`PER_BUCKET`] waits each, latest
/// first; each wait swapped straight into its bucket's next free place), then each
/// bucket by the whole key, in the cache. A comparison sort of the whole window took a
/// fifth of the charging.
fn sort_latest_first(waits: &mut [ToCharge]) {
    let Some(first) = waits.first() else { return };
    let (earliest, latest) =
        waits.iter().fold((first.end, first.end), |(lo, hi), w| (lo.min(w.end), hi.max(w.end)));
    let bits = 64 - (latest.wrapping_sub(earliest) as u64).leading_zeros();
    let bucket_bits = (waits.len() / PER_BUCKET).max(1).ilog2();
    let shift = bits.saturating_sub(bucket_bits);
    // Latest first: ascending in the time before the latest end.
    let bucket = |w: &ToCharge| (latest.wrapping_sub(w.end) as u64).checked_shr(shift).unwrap_or(0) as usize;
    let mut bounds = vec![0usize; (1 << bucket_bits) + 1];
    for w in waits.iter() {
        bounds[bucket(w)] += 1;
    }
    let mut sum = 0;
    for s in &mut bounds {
        (*s, sum) = (sum, sum + *s);
    }
    // The next free place of each bucket: a wait taken from one is swapped into its own
    // bucket's, and the one it displaces goes on until one belongs where the first was.
    let mut free = bounds.clone();
    for b in 0..bounds.len() - 1 {
        while free[b] < bounds[b + 1] {
            let mut w = waits[free[b]];
            loop {
                let to = bucket(&w);
                if to == b {
                    break;
                }
                std::mem::swap(&mut w, &mut waits[free[to]]);
                free[to] += 1;
            }
            waits[free[b]] = w;
            free[b] += 1;
        }
    }
    for b in bounds.windows(2) {
        if b[1] - b[0] > 1 {
            waits[b[0]..b[1]].sort_unstable_by_key(|w| std::cmp::Reverse(charge_key(w)));
        }
    }
}

/// Charges every delay-caused wait to the delays behind it, latest wait first, so that
/// what a wait passes on to earlier waits is known before they are charged. What each
/// wait is charged to is found in parallel, over consecutive stretches of that order;
/// the charges then flow in order on one thread, so the result is the same on any
/// number of threads.
pub(crate) fn root_causes(
    d: &mut Detector,
    instances: &SpillVec<Instance>,
    stretch: usize,
    feedback: &dyn spoor_model::Feedback,
) -> RootCauses {
    // Each location's synchronizations sorted on the pool while this thread gathers.
    let locations = d.locs.len();
    let arena = d.arena.clone();
    let arena = arena.as_ref();
    let ((), (spans, causes, by_loc, total)) = rayon::join(
        || {
            // A few locations at a time, their pages let go after them.
            for some in d.locs.chunks_mut(64) {
                some.par_iter_mut().for_each(|st| st.syncs.sort_by_key(|s| s.at));
                arena.inspect(|a| a.release());
            }
        },
        || gather(instances, locations, arena),
    );
    let release = || arena.inspect(|a| a.release());
    release();
    let d = &*d;
    let n = instances.len();
    let mut flow = Flow {
        incoming: SpillVec::filled_in(n, 0.0, arena),
        out: RootCauses { waits: SpillVec::filled_in(n, None, arena), ..Default::default() },
        delays: FxHashMap::default(),
        spans: &spans,
        causes: &causes,
    };
    // The charges are found a stretch of the order at a time, one part of it a thread
    // of the pool (rayon's: the caller chooses how many), and applied while the next
    // stretch's are found, the stretch after it taken from the order on the way: what
    // they hold in memory is bounded by the stretch, not by the number of waits, and no
    // core idles while they are applied.
    let threads = rayon::current_num_threads().max(1);
    let find = |stretch: &[ToCharge]| -> Vec<Charges> {
        let part = stretch.len().div_ceil(threads).max(1);
        stretch.par_chunks(part).map(|part| charges(d, &spans, &by_loc, part)).collect()
    };
    let per = stretch * threads;
    let mut order = ChargeOrder::new(&spans, &causes, &by_loc, per);
    let (mut first, mut next) = (Vec::with_capacity(per), Vec::with_capacity(per));
    order.fill(&mut first, per);
    let mut found = (!first.is_empty()).then(|| {
        let charges = find(&first);
        (first, charges)
    });
    order.fill(&mut next, per);
    let mut charged = 0u64;
    while let Some((mut stretch, charges)) = found.take() {
        let ahead = std::mem::take(&mut next);
        let ((), after) = rayon::join(
            || {
                flow.apply(&stretch, &charges);
                charged += stretch.len() as u64;
                order.fill(&mut stretch, per);
            },
            || (!ahead.is_empty()).then(|| find(&ahead)).map(|c| (ahead, c)),
        );
        found = after;
        next = stretch;
        // What this stretch touched of the spilled arrays goes back to the file.
        release();
        feedback.progress("root causes: waits", charged, Some(total));
    }
    feedback.finish();
    let Flow { mut out, delays, .. } = flow;
    out.delays = delays
        .into_iter()
        .map(|((loc, callpath), (s, l))| Delay { loc, callpath, short_term_ns: s, long_term_ns: l })
        .collect();
    out.delays.sort_by(|a, b| {
        b.cost_ns().total_cmp(&a.cost_ns()).then_with(|| (a.loc, a.callpath).cmp(&(b.loc, b.callpath)))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::{
        charge_key, member_end, partition_doubling, partition_near, sort_latest_first, Cause, ToCharge,
    };
    use std::cell::Cell;

    /// The bucket sort gives the comparison sort's order: over wide and narrow spans of
    /// end times, with runs of equal ends (a collective's members), equal starts, the
    /// extremes of time, and every size from empty to many buckets.
    #[test]
    fn sort_latest_first_is_the_order_of_charging() {
        let mut rng = spoor_synth::rng::SplitMix64::new(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.next_u64();
        let check = |ends_starts: Vec<(i64, i64)>, what: &str| {
            let mut waits: Vec<ToCharge> = (ends_starts.iter().enumerate())
                .map(|(k, &(end, start))| {
                    let (loc, idx) = ((k * 7 % 64) as u32, k as u32);
                    ToCharge { end, start, loc, idx, cause: Cause { time: 0, loc: 0 } }
                })
                .collect();
            let mut want = waits.clone();
            want.sort_unstable_by_key(|w| std::cmp::Reverse(charge_key(w)));
            sort_latest_first(&mut waits);
            assert!(waits.iter().map(charge_key).eq(want.iter().map(charge_key)), "{what}");
        };
        for (n, span) in [
            (0, 1),
            (1, 1),
            (2, 1),
            (7, 3),
            (100, 1_000),
            (5_000, 1 << 40),
            (20_000, 50),
            (3_000, i64::MAX / 4),
        ] {
            let waits = (0..n)
                .map(|_| {
                    let end = (next() % span as u64) as i64 - span / 2;
                    (end, end - (next() % 4) as i64)
                })
                .collect();
            check(waits, &format!("{n} waits over {span} ns"));
        }
        for n in [3, 500] {
            let waits = (0..n).map(|k| [i64::MIN, i64::MAX, 0, -1][k % 4]).map(|t| (t, t)).collect();
            check(waits, &format!("{n} waits at the extremes of time"));
        }
    }

    /// A member's end is found whether the members are consecutive locations (from 0 or
    /// not) or scattered; a location that was not a member has none.
    #[test]
    fn member_end_finds_every_member_and_no_other() {
        let consecutive: Vec<(u32, i64)> = (0..8).map(|l| (l, 100 + i64::from(l))).collect();
        let shifted: Vec<(u32, i64)> = (5..9).map(|l| (l, 10 * i64::from(l))).collect();
        let scattered = vec![(1, 11), (4, 44), (6, 66), (30, 300)];
        for ends in [&consecutive, &shifted, &scattered] {
            for l in 0..40 {
                let want = ends.iter().find(|e| e.0 == l).map(|e| e.1);
                assert_eq!(member_end(ends, l), want, "location {l} of {ends:?}");
            }
            assert_eq!(member_end(ends, u32::MAX), None);
        }
        assert_eq!(member_end(&[], 0), None);
    }

    /// From every hint, the answer of `partition_point`, and the hint moves to it.
    #[test]
    fn partition_near_is_partition_point() {
        // Longer than the steps taken one at a time, both ways.
        let v: Vec<i64> = vec![
            1, 3, 3, 3, 7, 9, 12, 12, 20, 31, 40, 40, 41, 44, 50, 51, 52, 60, 61, 70, 71, 72, 80, 90, 91,
        ];
        for n in 0..=v.len() {
            let v = &v[..n];
            for x in -1..95 {
                let want = v.partition_point(|&y| y <= x);
                for h in 0..=n + 2 {
                    let hint = Cell::new(h);
                    assert_eq!(partition_near(v, &hint, |&y| y <= x), want, "n {n} x {x} hint {h}");
                    assert_eq!(hint.get(), want);
                    let hint = Cell::new(h);
                    assert_eq!(partition_doubling(v, &hint, |&y| y <= x), want, "n {n} x {x} hint {h}");
                    assert_eq!(hint.get(), want);
                }
            }
        }
    }
}
