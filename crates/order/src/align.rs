//! spoor-align: every location on one time base.
//!
//! Clocks are per process (the threads of a process share its clock). Three steps:
//!
//! 1. **Offset interpolation** (`samples`): a process with `clock_offset` samples
//!    against another process gets θ(t) interpolated linearly between its samples
//!    (extrapolated from the first and last two; one sample is a constant offset), and
//!    composed with its reference's own correction.
//! 2. **Offset and drift from messages** (`messages`): for processes without samples, a
//!    line θ(t) = a + b·t fitted with the convex hull method (`hull`) over the
//!    messages exchanged in both directions with an already aligned process, growing a
//!    spanning tree from the reference process along the pairs with the most messages
//!    (collectives count as messages between neighbouring ranks).
//! 3. **Controlled logical clock** (Rabenseifner; Becker et al.): a forward replay in
//!    causal order moves every receive (and collective end, lock acquisition, spawned
//!    begin) to no earlier than what it waits for plus the minimum latency, letting later
//!    events of the location catch up with their own clock at rate 1 − γ; then a backward
//!    amortization spreads each such jump over the interval before it (back to the
//!    previous jump) so that no single local interval absorbs it, never moving a send
//!    past what its receive allows.
//!
//! Violations (a receive before its send plus the minimum latency, a collective end
//! before a begin it waits for plus the minimum latency, an acquisition before the
//! release it follows) are counted before, after steps 1-2, and at the end.

use crate::describe;
use crate::fasthash::FxHashMap as HashMap;
use crate::hull::{self, Line};
use crate::input::Input;
use crate::matching::{self, Message, Shape, Sync};
use crate::replay::{describe_cycle, Engine, Head, Via};
use crate::scan::{self, Keep, Rec, Scan};
use crate::times::{Times, Walls};
use crate::{Error, Result};
use rayon::prelude::*;
use serde::Serialize;
use spoor_format::binary::flags;
use spoor_format::varint::{get_u64, put_i64, unzigzag};
use spoor_format::{TraceWriter, WriterOptions};
use spoor_model::{Definitions, Event, EventRef, Feedback, LocId, ProcId, Silent};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::io::Write;

/// How offsets and drifts are found before the controlled logical clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Samples where a process has them, messages for the others.
    Auto,
    /// Clock-offset samples only.
    Samples,
    /// Messages only (samples are ignored).
    Messages,
    /// No offsets: only the controlled logical clock (if enabled).
    None,
}

#[derive(Clone, Debug)]
pub struct AlignOptions {
    pub method: Method,
    /// Run the controlled logical clock after offsets and drifts.
    pub clc: bool,
    /// The location whose clock is the reference, by number or name (default: the root
    /// of the samples' references, else location 0).
    pub reference: Option<String>,
    /// The minimum latency of a message, ns: a receive earlier than its send plus this
    /// is a violation.
    pub min_latency: i64,
    /// The controlled logical clock's γ in (0, 1]: after a jump, a location's clock
    /// runs at γ of its speed until it meets its own time again.
    pub gamma: f64,
    /// The largest drift (as a fraction, 1e-3 = 1000 ppm) that message fitting considers.
    pub max_drift: f64,
    /// Events per block of the output; `None`: the writers' default for the input's
    /// form (`spoor_format::GLOBAL_ORDER_BLOCK_EVENTS` for a trace in global order).
    pub block_events: Option<usize>,
    /// Replay the controlled logical clock over every event even where it provably
    /// changes nothing (the result is the same; for tests of that proof).
    pub force_replay: bool,
}

impl AlignOptions {
    /// Events per block of an output in global order (`global`) or not.
    fn block_events_for(&self, global: bool) -> usize {
        let default = if global {
            spoor_format::GLOBAL_ORDER_BLOCK_EVENTS
        } else {
            WriterOptions::default().block_events
        };
        self.block_events.unwrap_or(default).max(1)
    }
}

impl Default for AlignOptions {
    fn default() -> Self {
        AlignOptions {
            method: Method::Auto,
            clc: true,
            reference: None,
            min_latency: 0,
            gamma: 0.99,
            max_drift: 1e-3,
            block_events: None,
            force_replay: false,
        }
    }
}

/// Clock-condition violations.
pub use spoor_model::ClockViolations as Violations;

/// The correction applied to one location.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Correction {
    pub location: LocId,
    pub name: String,
    /// `reference`, `samples`, `messages`, or `none`.
    pub method: &'static str,
    /// The process whose clock this one was aligned against (samples or messages).
    pub against: Option<ProcId>,
    /// θ at the location's first and last events: corrected = local + θ.
    pub offset_start_ns: i64,
    pub offset_end_ns: i64,
    /// (θ_end − θ_start) / (t_end − t_start), in parts per million.
    pub drift_ppm: f64,
    /// Events the controlled logical clock moved, and the largest move, ns.
    pub clc_moved: u64,
    pub clc_max_ns: i64,
    /// Why the correction is what it is, where that is not plain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The clocks the controlled logical clock starts from: the recorded ones corrected by
/// the offsets and drifts found, unless those break the clock condition more often than
/// the recorded clocks do (then the recorded clocks, as they are).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Choice {
    /// `offsets` or `recorded`.
    pub clocks: &'static str,
    /// The violations the offsets and drifts found leave (applied or not).
    pub violations_with_offsets: Violations,
    pub reason: String,
}

impl Choice {
    /// The better of the offsets (`with`) and the recorded clocks (`recorded`): the
    /// offsets unless they leave more violations.
    fn between(with: Violations, recorded: Violations) -> Choice {
        let (a, b) = (with.total(), recorded.total());
        let (clocks, reason) = if a > b {
            (
                "recorded",
                format!("the offsets would leave {a} violations, more than the {b} of the recorded clocks"),
            )
        } else if a == b {
            ("offsets", format!("the offsets leave {a} violations, as many as the recorded clocks"))
        } else {
            ("offsets", format!("the offsets leave {a} violations, the recorded clocks {b}"))
        };
        Choice { clocks, violations_with_offsets: with, reason }
    }

    fn keeps_recorded(&self) -> bool {
        self.clocks == "recorded"
    }
}

/// What spoor-align did.
#[derive(Clone, Debug, Serialize)]
pub struct AlignReport {
    pub method: Method,
    pub reference: Option<LocId>,
    pub min_latency_ns: i64,
    pub events: u64,
    pub messages: usize,
    pub violations_before: Violations,
    pub violations_after_offsets: Violations,
    pub violations_after: Violations,
    /// Whether the offsets were applied, and why.
    pub choice: Choice,
    pub locations: Vec<Correction>,
    /// Processes that neither samples nor messages could align (left as they were).
    pub unaligned: Vec<ProcId>,
    /// Spawn waits let go to avoid a cycle during the controlled logical clock.
    pub released_spawns: usize,
    #[serde(skip)]
    pub defs: Definitions,
}

impl AlignReport {
    /// The report as text for standard error.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let v = |x: &Violations| {
            format!(
                "{} (messages {}, collectives {}, locks {})",
                x.total(),
                x.messages,
                x.collectives,
                x.locks
            )
        };
        let reference = self.reference.map_or("none".into(), |r| self.defs.location_described(r));
        s.push_str(&format!(
            "reference clock: {reference}; {} events, {} messages; minimum latency {}\n",
            self.events,
            self.messages,
            describe::time(self.min_latency_ns)
        ));
        s.push_str(&format!("violations before:             {}\n", v(&self.violations_before)));
        s.push_str(&format!("violations after offsets:      {}\n", v(&self.violations_after_offsets)));
        s.push_str(&format!("violations after (final):      {}\n", v(&self.violations_after)));
        s.push_str(&format!(
            "clocks: {} ({})\n",
            if self.choice.keeps_recorded() { "recorded, offsets not applied" } else { "offsets applied" },
            self.choice.reason
        ));
        if !self.unaligned.is_empty() {
            let names: Vec<String> =
                self.unaligned.iter().map(|&p| describe::process(&self.defs, p)).collect();
            s.push_str(&format!(
                "not aligned (no samples, no messages both ways with an aligned process): {}\n",
                names.join(", ")
            ));
        }
        s.push_str(&format!(
            "{:>5} {:<24} {:<9} {:>16} {:>16} {:>12} {:>10} {:>14}\n",
            "loc",
            "name",
            "method",
            "offset at start",
            "offset at end",
            "drift ppm",
            "clc moved",
            "clc max shift"
        ));
        for c in &self.locations {
            s.push_str(&format!(
                "{:>5} {:<24} {:<9} {:>16} {:>16} {:>12.3} {:>10} {:>14}\n",
                c.location,
                c.name,
                c.method,
                describe::time(c.offset_start_ns),
                describe::time(c.offset_end_ns),
                c.drift_ppm,
                c.clc_moved,
                describe::time(c.clc_max_ns)
            ));
        }
        for c in self.locations.iter().filter(|c| c.note.is_some()) {
            s.push_str(&format!("{:>5} {}\n", c.location, c.note.as_deref().unwrap_or("")));
        }
        s
    }
}

// ---------------------------------------------------------------------------
// Clock maps
// ---------------------------------------------------------------------------

/// A correction θ of a clock: corrected time = local time + θ(local time).
#[derive(Clone, Debug, PartialEq)]
pub enum ClockMap {
    Identity,
    Linear(Line),
    /// (local time, θ) sorted by time; linear between them, extrapolated from the
    /// first and last two; one sample is a constant.
    Samples(Vec<(i64, f64)>),
    /// θ(t) = own(t) + then(t + own(t)): samples against a reference that is itself corrected.
    Chain(Box<ClockMap>, Box<ClockMap>),
}

impl ClockMap {
    pub fn theta(&self, t: i64) -> f64 {
        match self {
            ClockMap::Identity => 0.0,
            ClockMap::Linear(l) => l.at(t),
            ClockMap::Samples(s) => interpolate(s, t),
            ClockMap::Chain(own, then) => {
                let o = own.theta(t);
                o + then.theta(t.saturating_add(o.round() as i64))
            }
        }
    }

    /// Whether [`ClockMap::apply`] leaves every time from `lo` to `hi` as it is: θ
    /// rounds to 0 over the whole range. θ is monotonic (in floating point too) along a
    /// line and along each piece of the samples, so its ends and the samples' corners
    /// bound it. Chains are not looked into (`false`).
    pub fn moves_none(&self, lo: i64, hi: i64) -> bool {
        let zero = |t: i64| self.theta(t).abs() < 0.5;
        match self {
            ClockMap::Identity => true,
            ClockMap::Linear(_) => zero(lo) && zero(hi),
            ClockMap::Samples(s) => {
                zero(lo)
                    && zero(hi)
                    && s.iter().filter(|&&(x, _)| x > lo && x <= hi).all(|&(x, _)| zero(x) && zero(x - 1))
            }
            ClockMap::Chain(..) => false,
        }
    }

    pub fn apply(&self, t: i64) -> i64 {
        match self {
            ClockMap::Identity => t,
            _ => t.saturating_add(self.theta(t).round() as i64),
        }
    }
}

fn interpolate(s: &[(i64, f64)], t: i64) -> f64 {
    match s.len() {
        0 => 0.0,
        1 => s[0].1,
        n => {
            let i = s.partition_point(|&(x, _)| x <= t);
            let (a, b) = if i == 0 {
                (s[0], s[1])
            } else if i >= n {
                (s[n - 2], s[n - 1])
            } else {
                (s[i - 1], s[i])
            };
            let dx = (b.0 as f64) - (a.0 as f64);
            if dx == 0.0 {
                return (a.1 + b.1) / 2.0;
            }
            a.1 + (b.1 - a.1) * ((t as f64) - (a.0 as f64)) / dx
        }
    }
}

/// A location by number or by name.
pub fn find_location(defs: &Definitions, spec: &str) -> Result<LocId> {
    if let Ok(l) = spec.parse::<LocId>() {
        if (l as usize) < defs.locations.len() {
            return Ok(l);
        }
        return Err(Error::Usage(format!(
            "--reference {l}: the trace defines {} locations",
            defs.locations.len()
        )));
    }
    defs.locations
        .iter()
        .position(|l| defs.strings.get(l.name) == Some(spec))
        .map(|l| l as LocId)
        .ok_or_else(|| Error::Usage(format!("--reference {spec}: no location of that name")))
}

fn proc_of(defs: &Definitions, loc: LocId) -> Option<ProcId> {
    defs.locations.get(loc as usize).map(|l| l.process)
}

#[derive(Clone, Debug)]
struct Resolved {
    map: ClockMap,
    method: &'static str,
    against: Option<ProcId>,
    /// Why the correction is what it is, where that is not plain.
    note: Option<String>,
}

/// Per process, its clock-offset samples (local time, offset) by the process they are
/// against (none unless the method uses samples).
type Samples = Vec<BTreeMap<ProcId, Vec<(i64, i64)>>>;

/// The clock-offset samples of the records of `scan`, what [`clock_maps`] needs of them
/// (so that matching can take the records and free them).
fn offset_samples(scan: &Scan, opts: &AlignOptions) -> Samples {
    let defs = &scan.defs;
    let mut samples: Samples = vec![BTreeMap::new(); defs.processes.len()];
    // Most traces have none: then no pass over the records.
    if !matches!(opts.method, Method::Auto | Method::Samples) || scan.clock_offsets == 0 {
        return samples;
    }
    // Each location's in parallel, added in location order.
    let found: Vec<Vec<(ProcId, ProcId, i64, i64)>> = scan
        .records
        .par_iter()
        .enumerate()
        .map(|(loc, recs)| {
            let Some(p) = proc_of(defs, loc as LocId) else { return Vec::new() };
            let mut v = Vec::new();
            for r in recs {
                if let Rec::Offset { reference, offset, .. } = r.rec() {
                    match proc_of(defs, reference) {
                        Some(q) if q != p => v.push((p, q, r.wall, offset)),
                        _ => {}
                    }
                }
            }
            v
        })
        .collect();
    for (p, q, wall, offset) in found.into_iter().flatten() {
        samples[p as usize].entry(q).or_default().push((wall, offset));
    }
    samples
}

/// Messages per ordered pair of processes.
type Pairs = HashMap<(ProcId, ProcId), PairPoints>;

/// The messages one process sent another, as (send wall, receive wall): each send as
/// the difference from the one before and each receive as the difference from its send,
/// varint coded, a few bytes where the pair of times takes 16 (a trace has one for
/// every message). The fits take hulls of them, so their order does not matter.
#[derive(Default)]
struct PairPoints {
    bytes: Vec<u8>,
    len: usize,
    last_send: i64,
}

impl PairPoints {
    fn push(&mut self, send: i64, recv: i64) {
        put_i64(&mut self.bytes, send.wrapping_sub(self.last_send));
        put_i64(&mut self.bytes, recv.wrapping_sub(send));
        self.last_send = send;
        self.len += 1;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn iter(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        let (mut at, mut send) = (0usize, 0i64);
        (0..self.len).map(move |_| {
            send = send.wrapping_add(unzigzag(get_u64(&self.bytes, &mut at)));
            (send, send.wrapping_add(unzigzag(get_u64(&self.bytes, &mut at))))
        })
    }
}

/// Whether the clock fits read messages (the method is not samples or none alone).
fn wants_pairs(opts: &AlignOptions) -> bool {
    matches!(opts.method, Method::Auto | Method::Messages)
}

/// Corrections per process; `pairs` are the messages between processes when
/// [`wants_pairs`], else empty.
fn clock_maps(
    scan: &Scan,
    samples: &Samples,
    pairs: &Pairs,
    opts: &AlignOptions,
) -> Result<(Vec<Option<Resolved>>, Option<LocId>)> {
    let defs = &scan.defs;
    let np = defs.processes.len();
    let mut res: Vec<Option<Resolved>> = vec![None; np];
    if np == 0 {
        return Ok((res, None));
    }
    // Samples per process, against the process most of them name.
    let sample_ref: Vec<Option<ProcId>> = samples
        .iter()
        .map(|m| m.iter().max_by_key(|(q, v)| (v.len(), Reverse(**q))).map(|(q, _)| *q))
        .collect();
    let reference_loc = match &opts.reference {
        Some(r) => Some(find_location(defs, r)?),
        None => default_reference(defs, &sample_ref),
    };
    let Some(reference) = reference_loc else { return Ok((res, None)) };
    let Some(rp) = proc_of(defs, reference) else { return Ok((res, None)) };
    res[rp as usize] =
        Some(Resolved { map: ClockMap::Identity, method: "reference", against: None, note: None });
    if opts.method == Method::None {
        return Ok((res, Some(reference)));
    }

    let process_range = process_ranges(scan, np);
    let mut neighbours: BTreeMap<ProcId, Vec<ProcId>> = BTreeMap::new();
    for &(a, b) in pairs.keys() {
        if a < b && pairs.contains_key(&(b, a)) {
            neighbours.entry(a).or_default().push(b);
            neighbours.entry(b).or_default().push(a);
        }
    }
    loop {
        resolve_from_samples(&mut res, &sample_ref, samples);
        let Some((a, b)) = heaviest_edge(&res, &neighbours, pairs) else { break };
        let fa = res[a as usize].clone().map(|r| r.map).unwrap_or(ClockMap::Identity);
        res[b as usize] = Some(fit_from_messages(defs, opts, pairs, process_range[b as usize], fa, a, b));
    }
    Ok((res, Some(reference)))
}

/// The most named reference that has no samples itself, else location 0.
fn default_reference(defs: &Definitions, sample_ref: &[Option<ProcId>]) -> Option<LocId> {
    let mut named: BTreeMap<ProcId, usize> = BTreeMap::new();
    for q in sample_ref.iter().flatten() {
        if sample_ref[*q as usize].is_none() {
            *named.entry(*q).or_default() += 1;
        }
    }
    let root = named.iter().max_by_key(|(q, n)| (**n, Reverse(**q))).map(|(q, _)| *q);
    match root {
        Some(q) => defs.locations.iter().position(|l| l.process == q).map(|l| l as LocId),
        None if defs.locations.is_empty() => None,
        None => Some(0),
    }
}

/// Each process's time range, on its own clock.
fn process_ranges(scan: &Scan, np: usize) -> Vec<(i64, i64)> {
    let mut process_range = vec![(i64::MAX, i64::MIN); np];
    for (l, r) in scan.ranges.iter().enumerate() {
        if let (Some(r), Some(p)) = (r, proc_of(&scan.defs, l as LocId)) {
            let e = &mut process_range[p as usize];
            *e = (e.0.min(r.min), e.1.max(r.max));
        }
    }
    process_range
}

/// Adds a message from `from` to `to`, sent at `send` and received at `recv`, to the
/// pair of their processes (messages within a process say nothing of its clock).
fn add_pair(pairs: &mut Pairs, defs: &Definitions, (from, to): (LocId, LocId), send: i64, recv: i64) {
    if let (Some(a), Some(b)) = (proc_of(defs, from), proc_of(defs, to)) {
        if a != b {
            pairs.entry((a, b)).or_default().push(send, recv);
        }
    }
}

/// The hand-offs collectives imply between their members, as messages.
fn add_collective_pairs(pairs: &mut Pairs, defs: &Definitions, instances: &[matching::Instance]) {
    let mut add = |from: LocId, to: LocId, s: i64, r: i64| add_pair(pairs, defs, (from, to), s, r);
    for inst in instances {
        let ms = &inst.members;
        match inst.shape {
            Shape::AllToAll | Shape::Prefix => {
                for w in ms.windows(2) {
                    add(w[0].loc, w[1].loc, w[0].begin_wall, w[1].end_wall);
                    if inst.shape == Shape::AllToAll {
                        add(w[1].loc, w[0].loc, w[1].begin_wall, w[0].end_wall);
                    }
                }
            }
            Shape::OneToAll { root } => {
                let r = &ms[root as usize];
                for m in ms {
                    add(r.loc, m.loc, r.begin_wall, m.end_wall);
                }
            }
            Shape::AllToOne { root } => {
                let r = &ms[root as usize];
                for m in ms {
                    add(m.loc, r.loc, m.begin_wall, r.end_wall);
                }
            }
        }
    }
}

/// What the alignment of a trace whose times stay needs of its matched messages, each
/// read once as matching finds it (a trace has one for every message, 56 bytes each,
/// and none is kept): how many, how many arrive before their send plus the minimum
/// latency, whether every one arrives late enough for the controlled logical clock to
/// leave it ([`late_enough`]), and the points of each pair of processes.
struct MessageFacts {
    count: usize,
    violations: u64,
    late_enough: bool,
    pairs: Pairs,
}

impl MessageFacts {
    fn new() -> MessageFacts {
        MessageFacts { count: 0, violations: 0, late_enough: true, pairs: Pairs::default() }
    }

    /// Adds message `m`, with its points when `pairs` (the fits read them).
    fn add(&mut self, defs: &Definitions, m: &Message, min_latency: i64, pairs: bool) {
        self.count += 1;
        self.violations += u64::from(violates(m.send_wall, m.recv_wall, min_latency));
        self.late_enough &= late_enough(m.recv_wall, m.send_wall, min_latency);
        if pairs {
            add_pair(&mut self.pairs, defs, (m.send.loc, m.recv.loc), m.send_wall, m.recv_wall);
        }
    }
}

/// Whether a message received at `recv` came earlier than its send at `send` plus
/// `min_latency` (a clock-condition violation).
fn violates(send: i64, recv: i64, min_latency: i64) -> bool {
    recv < send.saturating_add(min_latency)
}

/// Whether what waits (at `dst`) is strictly later than what it waits for (at `src`) and
/// no earlier than that plus `latency`: then the controlled logical clock leaves it.
fn late_enough(dst: i64, src: i64, latency: i64) -> bool {
    dst > src && dst >= src.saturating_add(latency)
}

/// Aligns, until none is left, every process whose samples' reference is aligned.
fn resolve_from_samples(res: &mut [Option<Resolved>], sample_ref: &[Option<ProcId>], samples: &Samples) {
    let mut progress = true;
    while progress {
        progress = false;
        for p in 0..res.len() {
            if res[p].is_some() {
                continue;
            }
            let Some(q) = sample_ref[p] else { continue };
            let Some(rq) = res[q as usize].clone() else { continue };
            let own = ClockMap::Samples(mean_per_time(&samples[p][&q]));
            let map = match rq.map {
                ClockMap::Identity => own,
                other => ClockMap::Chain(Box::new(own), Box::new(other)),
            };
            res[p] = Some(Resolved { map, method: "samples", against: Some(q), note: None });
            progress = true;
        }
    }
}

/// The samples sorted by time, those at the same time replaced by their mean.
fn mean_per_time(samples: &[(i64, i64)]) -> Vec<(i64, f64)> {
    let mut pts = samples.to_vec();
    pts.sort_unstable();
    let mut merged: Vec<(i64, f64)> = Vec::new();
    let mut i = 0;
    while i < pts.len() {
        let mut j = i;
        let mut sum = 0.0;
        while j < pts.len() && pts[j].0 == pts[i].0 {
            sum += pts[j].1 as f64;
            j += 1;
        }
        merged.push((pts[i].0, sum / (j - i) as f64));
        i = j;
    }
    merged
}

/// The next process to align from messages: the heaviest edge from an aligned process
/// to one that is not (and has no usable samples, unless nothing else is left).
fn heaviest_edge(
    res: &[Option<Resolved>],
    neighbours: &BTreeMap<ProcId, Vec<ProcId>>,
    pairs: &Pairs,
) -> Option<(ProcId, ProcId)> {
    let weight = |a: ProcId, b: ProcId| {
        pairs.get(&(a, b)).map_or(0, PairPoints::len).min(pairs.get(&(b, a)).map_or(0, PairPoints::len))
    };
    let mut best: Option<(usize, ProcId, ProcId)> = None;
    for (&a, ns) in neighbours {
        if res[a as usize].is_none() {
            continue;
        }
        for &b in ns {
            if res[b as usize].is_some() {
                continue;
            }
            let w = weight(a, b);
            let better = match best {
                None => true,
                Some((bw, ba, bb)) => w > bw || (w == bw && (a, b) < (ba, bb)),
            };
            if better {
                best = Some((w, a, b));
            }
        }
    }
    best.map(|(_, a, b)| (a, b))
}

/// `b`'s correction from its messages with `a`, whose correction is `fa`; `range` is
/// `b`'s time range.
fn fit_from_messages(
    defs: &Definitions,
    opts: &AlignOptions,
    pairs: &Pairs,
    range: (i64, i64),
    fa: ClockMap,
    a: ProcId,
    b: ProcId,
) -> Resolved {
    // Lower points from a -> b, upper from b -> a, in a's corrected time.
    let lower: Vec<(i64, i64)> =
        pairs[&(a, b)].iter().map(|(s, r)| (r, fa.apply(s).saturating_sub(r))).collect();
    let upper: Vec<(i64, i64)> =
        pairs[&(b, a)].iter().map(|(s, r)| (s, fa.apply(r).saturating_sub(s))).collect();
    // A drift is carried over the whole run: it needs messages spread over at least
    // half of it, or a few noisy latencies in a short stretch tilt the line far
    // off at the ends.
    let xs = lower.iter().chain(&upper).map(|p| p.0);
    let span = xs.clone().max().unwrap_or(0) as i128 - xs.min().unwrap_or(0) as i128;
    let (lo, hi) = range;
    let run = (hi as i128 - lo as i128).max(0);
    let drift = 2 * span >= run;
    let note = (!drift).then(|| {
        format!(
            "no drift fitted: the messages with {} span {:.3} % of the process's time (a drift needs half)",
            describe::process(defs, a),
            100.0 * span as f64 / run as f64
        )
    });
    let map = match hull::fit_with(&lower, &upper, opts.max_drift, drift) {
        Some(f) => ClockMap::Linear(f.line),
        None => ClockMap::Identity,
    };
    Resolved { map, method: "messages", against: Some(a), note }
}

// ---------------------------------------------------------------------------
// Violations
// ---------------------------------------------------------------------------

/// Counts clock-condition violations of times `w` (per location, per event).
pub fn violations<W: Walls + ?Sized>(sync: &Sync, w: &W, min_latency: i64) -> Violations {
    let mut v = Violations::default();
    for m in &sync.messages {
        if w.wall(m.recv) < w.wall(m.send).saturating_add(min_latency) {
            v.messages += 1;
        }
    }
    for inst in &sync.instances {
        for (m, mem) in inst.members.iter().enumerate() {
            let need = (0..inst.members.len())
                .filter(|&j| inst.depends(m, j))
                .map(|j| w.wall(inst.members[j].begin))
                .max();
            if let Some(need) = need {
                if w.wall(mem.end) < need.saturating_add(min_latency) {
                    v.collectives += 1;
                }
            }
        }
    }
    for h in &sync.handoffs {
        if w.wall(h.acquire) < w.wall(h.release) {
            v.locks += 1;
        }
    }
    v
}

/// Faster than [`violations`] for large all-to-all collectives: the largest begin
/// other than a member's own, from the two largest. The messages are read from the
/// points ([`Sync::messages_by_points`]), so they need not be collected.
fn violations_fast<W: Walls + ?Sized>(sync: &Sync, w: &W, min_latency: i64) -> Violations {
    let mut v =
        Violations { messages: message_violations(sync, |e| w.wall(e), min_latency), ..Default::default() };
    for inst in &sync.instances {
        if inst.shape != Shape::AllToAll {
            let one = Sync { instances: vec![inst.clone()], ..Sync::default() };
            v.collectives += violations(&one, w, min_latency).collectives;
            continue;
        }
        let mut top: [(i64, usize); 2] = [(i64::MIN, usize::MAX); 2];
        for (j, mem) in inst.members.iter().enumerate() {
            let b = w.wall(mem.begin);
            if b > top[0].0 {
                top[1] = top[0];
                top[0] = (b, j);
            } else if b > top[1].0 {
                top[1] = (b, j);
            }
        }
        for (m, mem) in inst.members.iter().enumerate() {
            let need = if top[0].1 == m { top[1].0 } else { top[0].0 };
            if need != i64::MIN && w.wall(mem.end) < need.saturating_add(min_latency) {
                v.collectives += 1;
            }
        }
    }
    for h in &sync.handoffs {
        if w.wall(h.acquire) < w.wall(h.release) {
            v.locks += 1;
        }
    }
    v
}

/// The messages (from the points) received before their send plus `min_latency`, at
/// the times `wall` gives.
fn message_violations(sync: &Sync, wall: impl Fn(EventRef) -> i64, min_latency: i64) -> u64 {
    sync.messages_by_points().filter(|&(send, recv)| violates(wall(send), wall(recv), min_latency)).count()
        as u64
}

/// The violations of the collectives and lock hand-offs at the times the matching
/// recorded (those of its records).
fn violations_recorded_but_messages(sync: &Sync, min_latency: i64) -> Violations {
    let mut v = Violations::default();
    for inst in &sync.instances {
        for (m, need) in inst.awaited_begins().into_iter().enumerate() {
            if need.is_some_and(|need| inst.members[m].end_wall < need.saturating_add(min_latency)) {
                v.collectives += 1;
            }
        }
    }
    for h in &sync.handoffs {
        if h.acquire_wall < h.release_wall {
            v.locks += 1;
        }
    }
    v
}

/// Whether the controlled logical clock provably leaves every time as recorded (and
/// finds no cycle): no spawns; every location's times sorted, spanning less than 2^53
/// ns (so that γ·Δt never exceeds Δt in floating point); every receive, collective end
/// and lock acquisition strictly later than what it waits for and no earlier than that
/// plus its latency. Then, in any causal order, every event's forward time is its own
/// (by induction: c(p) + γΔt ≤ t(e), and what it waits for is no later than t(e) − L);
/// no interval is stretched, so the backward amortization moves nothing; and a cycle
/// of happened-before would have to go forward in time around, so there is none.
///
/// Whether every message arrives late enough ([`late_enough`]) is `messages_late_enough`:
/// the caller knows it of the messages it read ([`MessageFacts`]), which `sync` need not
/// hold.
fn clc_is_identity(scan: &Scan, sync: &Sync, messages_late_enough: bool, min_latency: i64) -> bool {
    if !messages_late_enough || !sync.spawns.is_empty() {
        return false;
    }
    let span_ok = |r: &scan::WallRange| r.sorted && (r.max as i128 - r.min as i128) < (1i128 << 53);
    if !scan.ranges.iter().flatten().all(span_ok) {
        return false;
    }
    let after = late_enough;
    sync.handoffs.iter().all(|h| after(h.acquire_wall, h.release_wall, 0))
        && sync.instances.iter().all(|inst| {
            inst.awaited_begins()
                .into_iter()
                .enumerate()
                .all(|(m, need)| need.is_none_or(|need| after(inst.members[m].end_wall, need, min_latency)))
        })
}

// ---------------------------------------------------------------------------
// Controlled logical clock
// ---------------------------------------------------------------------------

struct Clc {
    times: Vec<Times>,
    released_spawns: usize,
}

fn kind_at(scan: &Scan, r: EventRef) -> &'static str {
    let recs = scan.records.get(r.loc as usize).map(|l| l.iter());
    recs.and_then(|mut l| l.find(|x| x.index >= r.index))
        .filter(|x| x.index == r.index)
        .map_or("event", |x| x.rec().kind_name())
}

/// The forward pass and the backward amortization over times `t`.
fn controlled_logical_clock(
    scan: &Scan,
    input: &Input,
    sync: &Sync,
    t: &[Times],
    opts: &AlignOptions,
    feedback: &dyn Feedback,
) -> Result<Clc> {
    let mut fwd = clc_forward(scan, input, sync, t, opts, feedback)?;
    clc_backward(sync, t, &mut fwd, opts.min_latency);
    Ok(Clc { times: fwd.c, released_spawns: fwd.released })
}

/// What the forward pass gives.
struct Forward {
    /// Per location, every event's corrected time.
    c: Vec<Times>,
    /// The spawn edges met.
    spawn_edges: Vec<(EventRef, EventRef)>,
    /// The number of released spawn waits.
    released: usize,
    /// Per location, the largest jump: how much longer than recorded a local interval
    /// became (0 if none did). The backward amortization moves no event further.
    max_stretch: Vec<i64>,
}

/// The forward pass: each event's corrected time, in an order that respects every
/// dependence.
fn clc_forward(
    scan: &Scan,
    input: &Input,
    sync: &Sync,
    t: &[Times],
    opts: &AlignOptions,
    feedback: &dyn Feedback,
) -> Result<Forward> {
    let n = t.len();
    let lmin = opts.min_latency;
    let gamma = opts.gamma.clamp(0.0, 1.0);
    // Corrected times are mostly as far apart as recorded ones: room for as many bytes.
    let mut c: Vec<Times> = t.iter().map(Times::with_room_of).collect();
    // Per location: its times read in order, the first not yet given a corrected time
    // (its head), and the last that was, with its corrected time.
    let mut reading: Vec<crate::times::Iter> = t.iter().map(Times::iter).collect();
    let mut head: Vec<Option<i64>> = reading.iter_mut().map(Iterator::next).collect();
    let mut prev: Vec<Option<(i64, i64)>> = vec![None; n];
    let mut max_stretch = vec![0i64; n];
    let mut engine = Engine::new(sync, n);
    let mut heap: BinaryHeap<Reverse<(i64, LocId)>> = BinaryHeap::new();
    // Without spawns (whose waits look at how far the parent got), the corrected times
    // and a cycle's report do not depend on the order ready events are taken in: then
    // a stack replaces the heap, and a location runs on while it is ready.
    let any_order = sync.spawns.is_empty();
    let mut stack: Vec<LocId> = Vec::new();
    let mut in_heap = vec![false; n];
    let mut pending: Vec<LocId> = (0..n as LocId).filter(|&l| !t[l as usize].is_empty()).collect();
    let mut woken = Vec::new();
    let mut left: u64 = t.iter().map(Times::len).sum();
    let total = left;
    let mut spawn_edges: Vec<(EventRef, EventRef)> = Vec::new();
    let mut released = 0;
    let mut rescanned = false;
    loop {
        for loc in pending.drain(..) {
            let l = loc as usize;
            debug_assert_eq!(engine.next_index(loc), c[l].len(), "the head is the engine's next event");
            let Some(tl) = head[l].filter(|_| !in_heap[l]) else { continue };
            let heads = |p: LocId| match head[p as usize] {
                Some(w) => Head::At(w),
                None => Head::Finished,
            };
            if engine.check(loc, tl, &heads) {
                if any_order {
                    stack.push(loc);
                } else {
                    heap.push(Reverse((tl, loc)));
                }
                in_heap[l] = true;
            }
        }
        let next = if any_order { stack.pop() } else { heap.pop().map(|Reverse((_, loc))| loc) };
        let Some(loc) = next else {
            if left == 0 {
                break;
            }
            if !rescanned {
                rescanned = true;
                pending.extend((0..n as LocId).filter(|&l| head[l as usize].is_some()));
                continue;
            }
            if let Some(child) = engine.release_spawn() {
                released += 1;
                pending.push(child);
                continue;
            }
            return Err(clc_cycle(scan, input, t, &c, &engine));
        };
        let l = loc as usize;
        in_heap[l] = false;
        rescanned = false;
        let i = c[l].len();
        let ti = head[l].expect("a location taken has an event left");
        let mut ci = ti;
        if let Some((tp, cp)) = prev[l] {
            let dt = ti.saturating_sub(tp);
            ci = ci.max(cp.saturating_add((gamma * dt as f64) as i64)).max(cp);
        }
        if let Some(inc) = engine.incoming(loc) {
            let lat = match inc.via {
                Via::Message | Via::Collective => lmin,
                Via::Lock | Via::Spawn => 0,
            };
            ci = ci.max(inc.value.saturating_add(lat));
            if inc.via == Via::Spawn {
                spawn_edges.push((inc.from, EventRef { loc, index: i }));
            }
        }
        if let Some((tp, cp)) = prev[l] {
            let orig = ti.saturating_sub(tp).max(0);
            max_stretch[l] = max_stretch[l].max(ci.saturating_sub(cp).saturating_sub(orig));
        }
        c[l].push(ci);
        prev[l] = Some((ti, ci));
        head[l] = reading[l].next();
        engine.emit(loc, ti, ci, &mut woken);
        pending.append(&mut woken);
        pending.push(loc);
        left -= 1;
        // Told once every 2^16 events: the loop is the replay's hot path.
        if left & 0xffff == 0 {
            feedback.progress("replaying: events", total - left, Some(total));
        }
    }
    c.iter_mut().for_each(Times::shrink_to_fit);
    Ok(Forward { c, spawn_edges, released, max_stretch })
}

/// The error for a forward pass stuck in a cycle, naming its events.
fn clc_cycle(scan: &Scan, input: &Input, t: &[Times], c: &[Times], engine: &Engine) -> Error {
    let start = (0..t.len()).find(|&l| c[l].len() < t[l].len()).unwrap_or(0) as LocId;
    let cycle = engine.cycle(start);
    // The records were let go to save memory: read them again to name the events.
    let again = match scan::scan(input, Keep::Records) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let what = |r: EventRef| t.get(r.loc as usize)?.get(r.index).map(|w| (kind_at(&again, r), w));
    Error::input(&scan.name, describe_cycle(&scan.defs, &cycle, &what))
}

/// The backward amortization: events before a jump move forward too, as far as
/// their dependents' corrected times allow.
fn clc_backward(sync: &Sync, t: &[Times], fwd: &mut Forward, lmin: i64) {
    let Forward { c, spawn_edges, max_stretch, .. } = fwd;
    if max_stretch.iter().all(|&most| most == 0) {
        // No interval was stretched: nothing to spread.
        return;
    }
    // How far each source may move: its dependents' times; per location, the room to
    // each dependent (the least room of a source is kept below). No event moves further
    // than its location's largest jump (exactly so below 2^53 ns, where the shares are
    // computed without rounding up), so only a room less than that can bind: a location
    // without a jump keeps none.
    let binds = |most: i64, room: i64| room < most || most >= 1 << 53;
    let mut caps: Vec<Rooms> =
        t.iter().zip(&*max_stretch).map(|(tl, &most)| Rooms::new(tl.len(), most)).collect();
    let mut limit = |src: EventRef, dep: EventRef, lat: i64| {
        let l = src.loc as usize;
        if max_stretch[l] == 0 {
            return;
        }
        let room = c.wall(dep).saturating_sub(lat).saturating_sub(c.wall(src)).max(0);
        if binds(max_stretch[l], room) {
            caps[l].push(src.index, room);
        }
    };
    for (send, recv) in sync.messages_by_points() {
        limit(send, recv, lmin);
    }
    for h in &sync.handoffs {
        limit(h.release, h.acquire, 0);
    }
    for &(p, ch) in spawn_edges.iter() {
        limit(p, ch, 0);
    }
    for inst in &sync.instances {
        let ms = &inst.members;
        match inst.shape {
            Shape::AllToAll => {
                // The earliest end other than the member's own bounds its begin.
                let mut low: [(i64, usize); 2] = [(i64::MAX, usize::MAX); 2];
                for (j, m) in ms.iter().enumerate() {
                    let e = c.wall(m.end);
                    if e < low[0].0 {
                        low[1] = low[0];
                        low[0] = (e, j);
                    } else if e < low[1].0 {
                        low[1] = (e, j);
                    }
                }
                for (j, m) in ms.iter().enumerate() {
                    let other = if low[0].1 == j { low[1] } else { low[0] };
                    if other.1 != usize::MAX {
                        limit(m.begin, ms[other.1].end, lmin);
                    }
                }
            }
            _ => {
                for (m, mem) in ms.iter().enumerate() {
                    for (j, other) in ms.iter().enumerate() {
                        if inst.depends(m, j) {
                            limit(other.begin, mem.end, lmin);
                        }
                    }
                }
            }
        }
    }
    // A location at a time per thread, its times decoded while it is amortized.
    c.par_iter_mut().zip(t).zip(caps).zip(&*max_stretch).for_each(|(((cl, tl), rooms), &most)| {
        if most == 0 {
            return;
        }
        let capl = rooms.least_by_index();
        let tv: Vec<i64> = tl.iter().collect();
        let mut cv: Vec<i64> = cl.iter().collect();
        amortize(&tv, &mut cv, &capl);
        *cl = cv.into_iter().collect();
    });
}

/// A location's rooms (event index, how far it may move), as pushed: packed in 8
/// bytes, index above room, where both fit in 32 bits (every room kept is less than the
/// location's largest jump), else 16.
enum Rooms {
    Narrow(Vec<u64>),
    Wide(Vec<(u64, i64)>),
}

impl Rooms {
    /// Rooms for a location of `events` events whose rooms are all less than `most`.
    fn new(events: u64, most: i64) -> Rooms {
        if events <= 1 << 32 && most <= 1 << 32 {
            Rooms::Narrow(Vec::new())
        } else {
            Rooms::Wide(Vec::new())
        }
    }

    fn push(&mut self, index: u64, room: i64) {
        match self {
            Rooms::Narrow(v) => v.push(index << 32 | room as u64),
            Rooms::Wide(v) => v.push((index, room)),
        }
    }

    /// Each index once, with its least room, by index.
    fn least_by_index(self) -> Vec<(u64, i64)> {
        let mut v = match self {
            Rooms::Narrow(mut v) => {
                v.sort_unstable();
                v.into_iter().map(|x| (x >> 32, (x & u64::from(u32::MAX)) as i64)).collect()
            }
            Rooms::Wide(mut v) => {
                v.sort_unstable();
                v
            }
        };
        v.dedup_by_key(|x| x.0);
        v
    }
}

/// Spreads every jump of `c` (a local interval longer than in `t`) over the events
/// since the previous jump, in proportion to their corrected times, each source moved at
/// most its cap (and never more than the sources after it may move).
fn amortize(t: &[i64], c: &mut [i64], caps: &[(u64, i64)]) {
    let n = c.len();
    let mut anchor = 0usize;
    let mut shifts: Vec<i64> = Vec::new();
    for k in 1..n {
        let orig = t[k].saturating_sub(t[k - 1]).max(0);
        let stretch = c[k].saturating_sub(c[k - 1]).saturating_sub(orig);
        if stretch <= 0 {
            continue;
        }
        let a = anchor;
        anchor = k;
        if k - a < 2 {
            continue;
        }
        let ca = c[a];
        let denom = c[k - 1].saturating_add(orig).saturating_sub(ca);
        if denom <= 0 {
            continue;
        }
        shifts.clear();
        shifts.extend((a + 1..k).map(|j| {
            let f = c[j].saturating_sub(ca) as f64 / denom as f64;
            (stretch as f64 * f).floor() as i64
        }));
        // Caps, carried backwards so that shifts never decrease along the location.
        let mut running = i64::MAX;
        let mut ci = caps.partition_point(|&(i, _)| (i as usize) < k);
        for j in (a + 1..k).rev() {
            while ci > 0 && caps[ci - 1].0 as usize >= j {
                ci -= 1;
                if caps[ci].0 as usize == j {
                    running = running.min(caps[ci].1);
                }
            }
            let s = &mut shifts[j - a - 1];
            *s = (*s).min(running).max(0);
        }
        for j in a + 1..k {
            c[j] = c[j].saturating_add(shifts[j - a - 1]);
        }
    }
}

// ---------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------

/// The numbers of an alignment, for its report.
struct Counts {
    messages: usize,
    before: Violations,
    after_offsets: Violations,
    after: Violations,
    released: usize,
    choice: Choice,
}

/// The report of an alignment: `moved` gives the events of a location the controlled
/// logical clock moved and the largest move.
fn make_report(
    scan: &Scan,
    opts: &AlignOptions,
    maps: &[Option<Resolved>],
    reference: Option<LocId>,
    moved: &dyn Fn(usize) -> (u64, i64),
    counts: Counts,
) -> AlignReport {
    let defs = &scan.defs;
    let mut locations = Vec::new();
    for (l, r) in scan.ranges.iter().enumerate() {
        // Each location's first and last recorded times.
        let (first, last) = r.map_or((0, 0), |r| (r.first, r.last));
        let loc = l as LocId;
        let res = proc_of(defs, loc).and_then(|p| maps[p as usize].as_ref());
        let kept = counts.choice.keeps_recorded();
        let theta = |x: i64| res.filter(|_| !kept).map_or(0.0, |r| r.map.theta(x));
        let (o0, o1) = (theta(first), theta(last));
        let drift = if last != first { (o1 - o0) / (last as f64 - first as f64) * 1e6 } else { 0.0 };
        let (moved, max) = moved(l);
        locations.push(Correction {
            location: loc,
            name: defs.location_own_name(loc).unwrap_or("").to_owned(),
            method: match res {
                Some(r) if !kept || r.method == "reference" => r.method,
                _ => "none",
            },
            against: res.filter(|_| !kept).and_then(|r| r.against),
            offset_start_ns: o0.round() as i64,
            offset_end_ns: o1.round() as i64,
            drift_ppm: drift,
            clc_moved: moved,
            clc_max_ns: max,
            note: res.filter(|_| !kept).and_then(|r| r.note.clone()),
        });
    }
    let unaligned: Vec<ProcId> = (0..defs.processes.len())
        .filter(|&p| maps[p].is_none() && defs.locations.iter().any(|l| l.process as usize == p))
        .map(|p| p as ProcId)
        .collect();
    AlignReport {
        method: opts.method,
        reference,
        min_latency_ns: opts.min_latency,
        events: scan.total_events(),
        messages: counts.messages,
        violations_before: counts.before,
        violations_after_offsets: counts.after_offsets,
        violations_after: counts.after,
        choice: counts.choice,
        locations,
        unaligned,
        released_spawns: counts.released,
        defs: scan.defs.clone(),
    }
}

/// Aligns `input` and writes it to `out` (flag ALIGNED, original times in `raw_wall`
/// where they changed).
pub fn align(input: &Input, opts: &AlignOptions, out: impl Write) -> Result<AlignReport> {
    align_with_feedback(input, opts, out, &Silent)
}

/// [`align`], telling `feedback` how many of the input's events are written so far.
pub fn align_with_feedback(
    input: &Input,
    opts: &AlignOptions,
    mut out: impl Write,
    feedback: &dyn Feedback,
) -> Result<AlignReport> {
    let first = first_reading(input, opts, feedback, false)?;
    let report = if !opts.force_replay && first.untouched(opts) {
        align_untouched(input, opts, first, &mut out, feedback)?
    } else {
        align_replay(input, opts, first.fitted(), out, feedback)?
    };
    feedback.finish();
    Ok(report)
}

/// What a first reading of a trace gives, from its synchronization records alone (no
/// per-event times kept): the clock corrections fitted to the recorded times, and what
/// decides whether they and the controlled logical clock leave every time as it is.
struct FirstReading {
    scan: Scan,
    sync: Sync,
    facts: MessageFacts,
    maps: Vec<Option<Resolved>>,
    reference: Option<LocId>,
    /// The clock-condition violations of the recorded times.
    before: Violations,
}

/// What the replay takes of a [`FirstReading`].
struct Fitted {
    defs: Definitions,
    maps: Vec<Option<Resolved>>,
    reference: Option<LocId>,
    before: Violations,
}

/// `for_replay`: match with the partners and points spoor-order's replay reads.
fn first_reading(
    input: &Input,
    opts: &AlignOptions,
    feedback: &dyn Feedback,
    for_replay: bool,
) -> Result<FirstReading> {
    let mut scan = scan::scan_with(input, Keep::Records, feedback)?;
    // Matching takes the records and frees them as it reads them: nothing else here
    // needs them but the clock-offset samples.
    let samples = offset_samples(&scan, opts);
    let records = std::mem::take(&mut scan.records);
    let mut facts = MessageFacts::new();
    let (defs, want_pairs) = (&scan.defs, wants_pairs(opts));
    let each = |m: Message| facts.add(defs, &m, opts.min_latency, want_pairs);
    let sync = match for_replay {
        true => matching::match_events_uncollected_each(defs, records, each),
        false => matching::match_events_each(defs, records, each),
    };
    if want_pairs {
        add_collective_pairs(&mut facts.pairs, defs, &sync.instances);
    }
    let (maps, reference) = clock_maps(&scan, &samples, &facts.pairs, opts)?;
    facts.pairs = Pairs::default();
    // The pairs are many small buffers, which glibc keeps for this thread unless asked.
    spoor_format::mem::return_freed_memory();
    let before = Violations {
        messages: facts.violations,
        ..violations_recorded_but_messages(&sync, opts.min_latency)
    };
    Ok(FirstReading { scan, sync, facts, maps, reference, before })
}

impl FirstReading {
    /// Whether no offset moves an event ([`ClockMap::moves_none`]) and the controlled
    /// logical clock changes nothing ([`clc_is_identity`]).
    fn untouched(&self, opts: &AlignOptions) -> bool {
        let defs = &self.scan.defs;
        let moves = self.scan.ranges.iter().enumerate().any(|(l, r)| {
            let map = proc_of(defs, l as LocId).and_then(|p| self.maps[p as usize].as_ref()).map(|r| &r.map);
            r.is_some_and(|r| map.is_some_and(|m| !m.moves_none(r.min, r.max)))
        });
        !moves
            && (!opts.clc
                || clc_is_identity(&self.scan, &self.sync, self.facts.late_enough, opts.min_latency))
    }

    /// The report of an alignment that leaves every time as it is.
    fn untouched_report(&self, opts: &AlignOptions) -> AlignReport {
        let v = self.before;
        let choice = Choice::between(v, v);
        let counts =
            Counts { messages: self.facts.count, before: v, after_offsets: v, after: v, released: 0, choice };
        make_report(&self.scan, opts, &self.maps, self.reference, &|_| (0, 0), counts)
    }

    fn fitted(self) -> Fitted {
        Fitted { defs: self.scan.defs, maps: self.maps, reference: self.reference, before: self.before }
    }
}

/// The alignment of a trace whose times it provably leaves as they are
/// ([`FirstReading::untouched`]): the output is the input's blocks, copied where they
/// are canonical.
fn align_untouched<W: Write>(
    input: &Input,
    opts: &AlignOptions,
    first: FirstReading,
    out: &mut W,
    feedback: &dyn Feedback,
) -> Result<AlignReport> {
    let report = first.untouched_report(opts);
    let FirstReading { scan, sync, .. } = first;
    drop(sync);

    let global = scan.flags & flags::GLOBAL_ORDER != 0;
    let wopts = WriterOptions {
        block_events: opts.block_events_for(global),
        global_order: global,
        index: true,
        flags: (scan.flags & 0xffff_ffff) | flags::ALIGNED,
    };
    let full = wopts.block_events as u64;
    let mut w = TraceWriter::new(out, &scan.defs, wopts).map_err(Error::Write)?;
    let mut reader = input.reader()?;
    let seen = std::cell::RefCell::new(vec![0u64; scan.counts.len()]);
    let written = crate::passthrough::Written::new(feedback, "writing: events", Some(scan.total_events()));
    let count = |loc: LocId, k: u64| -> Result<()> {
        let mut seen = seen.borrow_mut();
        match seen.get_mut(loc as usize) {
            Some(c) if *c + k <= scan.counts[loc as usize] => {
                *c += k;
                written.add(k);
                Ok(())
            }
            _ => Err(more_events_than_counted(input, loc)),
        }
    };
    let mut each = |w: &mut TraceWriter<&mut W>, ev: Event| -> Result<()> {
        count(ev.loc, 1)?;
        w.write(&ev).map_err(Error::Write)
    };
    let mut copied_err = None;
    let mut copied = |f: &spoor_format::raw::BlockFacts| {
        if let Some(l) = f.loc {
            if let Err(e) = count(l, f.count) {
                copied_err.get_or_insert(e);
            }
        }
    };
    crate::passthrough::copy_through(&mut reader, &mut w, &|_| true, &mut each, &mut copied, full).map_err(
        |e| match e {
            Error::Format(f) => input.rename(f),
            e => e,
        },
    )?;
    if let Some(e) = copied_err {
        return Err(e);
    }
    w.finish().map_err(Error::Write)?;
    Ok(report)
}

/// What [`align_and_order`] did.
pub struct AlignedOrder {
    pub align: AlignReport,
    pub order: crate::order::OrderSummary,
    /// The size of the aligned trace written to disk (0: it needed none).
    pub spooled_bytes: u64,
}

/// spoor-align, then spoor-order, in one: the same bytes as [`crate::order::order`] of what
/// [`align`] writes, and the same reports. Where the alignment provably leaves every time
/// as it is ([`FirstReading::untouched`]), the trace is read once less and matched once:
/// the replay orders the input's own events. Otherwise the aligned trace goes to a file
/// in the directory `tmpdir` gives (asked for only then; the file is removed when done),
/// which is ordered.
pub fn align_and_order(
    input: &Input,
    opts: &AlignOptions,
    order: &crate::order::OrderOptions,
    tmpdir: &dyn Fn() -> std::io::Result<std::path::PathBuf>,
    out: impl Write,
    feedback: &dyn Feedback,
) -> Result<AlignedOrder> {
    align_and_order_to(input, opts, tmpdir, crate::order::Sink::Trace(out, order), feedback)
}

/// [`align_and_order`], the ordered events going to `sink` (written, or handed on as a
/// graph's briefs).
pub fn align_and_order_to<W: Write>(
    input: &Input,
    opts: &AlignOptions,
    tmpdir: &dyn Fn() -> std::io::Result<std::path::PathBuf>,
    sink: crate::order::Sink<W>,
    feedback: &dyn Feedback,
) -> Result<AlignedOrder> {
    let (align, prepared) = align_to_order(input, opts, tmpdir, feedback)?;
    let spooled_bytes = prepared.spooled_bytes();
    let order = prepared.order(sink, feedback)?;
    Ok(AlignedOrder { align, order, spooled_bytes })
}

/// The alignment of [`align_and_order`], and the aligned trace read once to be ordered:
/// the input itself where nothing moves, else the aligned copy in `tmpdir`'s directory.
pub fn align_to_order<'a>(
    input: &'a Input,
    opts: &AlignOptions,
    tmpdir: &dyn Fn() -> std::io::Result<std::path::PathBuf>,
    feedback: &dyn Feedback,
) -> Result<(AlignReport, crate::order::Prepared<'a>)> {
    let first = first_reading(input, opts, feedback, true)?;
    if !opts.force_replay && first.untouched(opts) {
        let align = first.untouched_report(opts);
        let FirstReading { mut scan, sync, .. } = first;
        // What spoor-align would have written: the same events, flagged ALIGNED.
        scan.flags = (scan.flags & 0xffff_ffff) | flags::ALIGNED;
        let matched = crate::order::Matching::Done(sync);
        return Ok((align, crate::order::Prepared::new(crate::order::Held::Given(input), scan, matched)));
    }
    let dir = tmpdir().map_err(|err| Error::Io {
        file: format!("{}: its clocks move, the aligned copy goes to disk", input.name()),
        err,
    })?;
    let (aligned, report) = Input::write_temporary(input.name(), &dir, |w| {
        align_replay(input, opts, first.fitted(), w, feedback)
    })?;
    feedback.finish();
    let prepared = crate::order::prepare_held(crate::order::Held::Made(aligned), feedback)?;
    Ok((report, prepared))
}

/// Refuses an input whose locations have other event counts on a later reading.
fn same_counts(input: &Input, first: &Scan, again: &Scan) -> Result<()> {
    match first.counts.iter().zip(&again.counts).position(|(a, b)| a != b) {
        None if first.counts.len() == again.counts.len() => Ok(()),
        at => Err(Error::input(
            input.name(),
            format!(
                "location {} has another number of events than the first reading counted: did the trace change?",
                at.unwrap_or(first.counts.len().min(again.counts.len()))
            ),
        )),
    }
}

/// The error for an input that has more events of `loc` on its second reading.
fn more_events_than_counted(input: &Input, loc: LocId) -> Error {
    Error::input(
        input.name(),
        format!("location {loc} has more events than the first reading counted: did the trace change?"),
    )
}

/// Aligns `input` replaying the controlled logical clock over every event, with the
/// corrections of its first reading.
fn align_replay(
    input: &Input,
    opts: &AlignOptions,
    fitted: Fitted,
    out: impl Write,
    feedback: &dyn Feedback,
) -> Result<AlignReport> {
    let Fitted { defs, maps, reference, before } = fitted;
    let lmin = opts.min_latency;
    let map_of = |l: usize| {
        proc_of(&defs, l as LocId)
            .and_then(|p| maps[p as usize].as_ref())
            .map(|r| &r.map)
            .filter(|m| **m != ClockMap::Identity)
    };
    // The records at the corrected times (lock hand-offs follow time), matched once, and
    // the messages' violations at those times counted as they are matched; matched again
    // at the recorded times only where the corrections are dropped.
    let corrected = |l: LocId, w: i64| map_of(l as usize).map_or(w, |m| m.apply(w));
    let (mut scan, moved_sync) = scan::scan_at(input, Keep::Records, &corrected, feedback)?;
    let records = std::mem::take(&mut scan.records);
    let defs = &scan.defs;
    let mut late = 0u64;
    let fitted = matching::match_events_points(defs, records, |m| {
        late += u64::from(violates(m.send_wall, m.recv_wall, lmin))
    });
    let (sync, choice) = if moved_sync {
        let with_offsets = Violations { messages: late, ..violations_recorded_but_messages(&fitted, lmin) };
        let choice = Choice::between(with_offsets, before);
        if choice.keeps_recorded() {
            drop(fitted);
            let again = scan::scan_with(input, Keep::Records, feedback)?;
            same_counts(input, &scan, &again)?;
            (matching::match_events_points(defs, again.records, |_| {}), choice)
        } else {
            (fitted, choice)
        }
    } else {
        (fitted, Choice::between(before, before))
    };
    let after_offsets = if choice.keeps_recorded() { before } else { choice.violations_with_offsets };
    // Every event's time, read once more now that the records are let go, corrected
    // unless the corrections are dropped.
    let walls = if choice.keeps_recorded() {
        scan::scan_with(input, Keep::Walls, feedback)?
    } else {
        scan::scan_at(input, Keep::Walls, &corrected, feedback)?.0
    };
    same_counts(input, &scan, &walls)?;
    let t1 = walls.walls;
    let (clc, released) = if opts.clc {
        let clc = controlled_logical_clock(&scan, input, &sync, &t1, opts, feedback)?;
        (Some(clc.times), clc.released_spawns)
    } else {
        (None, 0)
    };
    let t2 = clc.as_deref().unwrap_or(&t1);
    let after = violations_fast(&sync, t2, lmin);
    let messages = sync.message_count;
    drop(sync);

    // The report.
    let moved = |l: usize| {
        let mut moved = 0;
        let mut max = 0i64;
        for (a, b) in t1[l].iter().zip(t2[l].iter()) {
            if a != b {
                moved += 1;
                max = max.max(b.saturating_sub(a).saturating_abs());
            }
        }
        (moved, max)
    };
    let counts = Counts { messages, before, after_offsets, after, released, choice };
    let report = make_report(&scan, opts, &maps, reference, &moved, counts);
    // Only the final times are needed from here on.
    let t2 = match clc {
        Some(c) => {
            drop(t1);
            spoor_format::mem::return_freed_memory();
            c
        }
        None => t1,
    };

    // The second pass: the same events with their new times.
    let global = scan.flags & flags::GLOBAL_ORDER != 0;
    let wopts = WriterOptions {
        block_events: opts.block_events_for(global),
        global_order: global,
        index: true,
        flags: (scan.flags & 0xffff_ffff) | flags::ALIGNED,
    };
    let mut w = TraceWriter::new(out, &scan.defs, wopts).map_err(Error::Write)?;
    let reader = input.reader()?;
    let mut next: Vec<crate::times::Iter> = t2.iter().map(Times::iter).collect();
    let (total, mut written) = (scan.total_events(), 0);
    // Blocks are decoded on another thread while this one rewrites and encodes.
    for b in reader.read_ahead(8) {
        let b = b.map_err(|e| input.rename(e))?;
        written += b.events.len() as u64;
        rewrite(b, &mut next, input, &mut w)?;
        feedback.progress("writing: events", written, Some(total));
    }
    w.finish().map_err(Error::Write)?;
    Ok(report)
}

/// Gives the events of `b` their times from `next` (each location's times in order)
/// and writes them.
fn rewrite<W: Write>(
    b: spoor_format::Block,
    next: &mut [crate::times::Iter],
    input: &Input,
    w: &mut TraceWriter<W>,
) -> Result<()> {
    for mut ev in b.events {
        let Some(nw) = next.get_mut(ev.loc as usize).and_then(Iterator::next) else {
            return Err(more_events_than_counted(input, ev.loc));
        };
        if nw != ev.wall {
            ev.ann.raw_wall = Some(ev.ann.raw_wall.unwrap_or(ev.wall));
            ev.wall = nw;
        }
        w.write(&ev).map_err(Error::Write)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdefs::ranks;
    use spoor_synth::{Spec, Workload};

    fn input(events: &[spoor_model::Event], defs: &Definitions) -> Input {
        let mut w = TraceWriter::new(Vec::new(), defs, WriterOptions::default()).unwrap();
        for e in events {
            w.write(e).unwrap();
        }
        Input::from_bytes("t", w.finish().unwrap())
    }

    /// The proof applies to a trace with perfect clocks, and not once one receive is
    /// moved before its send (or a location's times go back).
    #[test]
    fn the_proof_that_the_clock_changes_nothing() {
        let spec = Spec { procs: 4, steps: 6, ..Spec::new(Workload::Stencil) };
        let mut events = Vec::new();
        spoor_synth::generate(&spec, &mut events).unwrap();
        let defs = spoor_synth::definitions(&spec);
        let check = |evs: &[spoor_model::Event], lat: i64| {
            let scan = scan::scan(&input(evs, &defs), Keep::Records).unwrap();
            let sync = matching::match_events_with(&scan.defs, &scan.records, false);
            let messages = sync.messages.iter().all(|m| late_enough(m.recv_wall, m.send_wall, lat));
            clc_is_identity(&scan, &sync, messages, lat)
        };
        assert!(check(&events, 0));
        assert!(check(&events, 1000));
        assert!(!check(&events, 1 << 40), "a latency longer than the run");
        let mut late = events.clone();
        let i = late.iter().position(|e| matches!(e.kind, spoor_model::Kind::IrecvComplete { .. })).unwrap();
        let loc = late[i].loc;
        // Every event of that location from the receive on, 1 s earlier: still sorted.
        let start = late[i].wall;
        for e in late.iter_mut().filter(|e| e.loc == loc && e.wall >= start) {
            e.wall -= 1_000_000_000;
        }
        assert!(!check(&late, 0), "a receive before its send");
        let mut back = events.clone();
        let j = back.iter().rposition(|e| e.loc == 0).unwrap();
        back[j].wall = 0;
        assert!(!check(&back, 0), "times that go back");
    }

    /// The backward amortization moves a source no further than its nearest dependent
    /// allows: a broadcast's root begins 5 ns before one member's end and 200 ns before
    /// the other's, then a receive 500 ns too early makes its clock jump; spread back
    /// over the broadcast, the jump moves the root's begin, but at most to the nearer end.
    #[test]
    fn amortization_keeps_a_source_before_its_nearest_dependent() {
        use spoor_model::{CollOp, Kind};
        let mut defs = ranks("bcast", 3);
        defs.add_comm("world", vec![0, 1, 2]);
        let begin = Kind::CollBegin { op: CollOp::Bcast, comm: 0 };
        let end = Kind::CollEnd { op: CollOp::Bcast, comm: 0, root: Some(0), sent: 8, received: 8 };
        let ev = |loc: LocId, wall: i64, kind: &Kind| Event::new(loc, wall, None, kind.clone());
        let events = vec![
            // What the jump is spread over starts here.
            ev(0, 0, &Kind::ProcessBegin { parent: None }),
            ev(0, 100, &begin),
            ev(0, 110, &end),
            ev(0, 400, &Kind::RecvBegin { from: Some(2), comm: 0, tag: Some(0) }),
            ev(0, 500, &Kind::RecvEnd { from: 2, comm: 0, tag: 0, bytes: 8 }),
            ev(1, 90, &begin),
            ev(1, 105, &end),
            ev(2, 95, &begin),
            ev(2, 300, &end),
            ev(2, 1000, &Kind::Send { to: 0, comm: 0, tag: 0, bytes: 8 }),
        ];
        let opts = AlignOptions { method: Method::None, ..AlignOptions::default() };
        let mut out = Vec::new();
        let rep = align(&input(&events, &defs), &opts, &mut out).unwrap();
        assert_eq!(rep.violations_before.total(), 1, "{}", rep.to_text());
        assert_eq!(rep.violations_after.total(), 0, "{}", rep.to_text());
        let (_, aligned) = spoor_format::TraceReader::from_bytes("out", out, Default::default())
            .unwrap()
            .read_all()
            .unwrap();
        let root_begin =
            aligned.iter().find(|e| e.loc == 0 && matches!(e.kind, Kind::CollBegin { .. })).unwrap();
        assert!((101..=105).contains(&root_begin.wall), "{root_begin:?}\n{}", rep.to_text());
        let receive = aligned.iter().find(|e| e.loc == 0 && matches!(e.kind, Kind::RecvEnd { .. })).unwrap();
        assert!(receive.wall >= 1000, "{receive:?}");
    }

    /// Lock hand-offs follow the corrected times: process 1's clock reads 1 us behind,
    /// so as recorded it takes the lock first; corrected, process 0 holds it first and
    /// hands it on, and no time moves (matched at the recorded times, the hand-off would
    /// run the other way and push process 0's acquisition past process 1's release).
    #[test]
    fn lock_hand_offs_follow_the_corrected_times() {
        use spoor_model::Kind;
        let defs = ranks("locks", 2);
        let ev = |loc: LocId, wall: i64, kind: Kind| Event::new(loc, wall, None, kind);
        let (lock, behind) = (7, 1_000);
        let sample =
            |wall| ev(1, wall - behind, Kind::ClockOffset { reference: 0, offset: behind, error: 1 });
        let events = vec![
            ev(0, 0, Kind::ProcessBegin { parent: None }),
            ev(0, 90, Kind::LockRequest { lock }),
            ev(0, 100, Kind::LockAcquire { lock }),
            ev(0, 200, Kind::LockRelease { lock }),
            ev(0, 1_000, Kind::ProcessEnd),
            sample(0),
            ev(1, 250 - behind, Kind::LockRequest { lock }),
            ev(1, 300 - behind, Kind::LockAcquire { lock }),
            ev(1, 400 - behind, Kind::LockRelease { lock }),
            sample(1_000),
        ];
        let opts = AlignOptions { method: Method::Samples, ..AlignOptions::default() };
        let mut out = Vec::new();
        let rep = align(&input(&events, &defs), &opts, &mut out).unwrap();
        assert_eq!(rep.violations_after_offsets.total(), 0, "{}", rep.to_text());
        assert_eq!(rep.violations_after.total(), 0, "{}", rep.to_text());
        assert!(!rep.choice.keeps_recorded(), "{}", rep.to_text());
        let (_, aligned) = spoor_format::TraceReader::from_bytes("out", out, Default::default())
            .unwrap()
            .read_all()
            .unwrap();
        let walls = |loc: LocId| aligned.iter().filter(|e| e.loc == loc).map(|e| e.wall).collect::<Vec<_>>();
        assert_eq!(walls(0), [0, 90, 100, 200, 1_000]);
        assert_eq!(walls(1), [0, 250, 300, 400, 1_000]);
        // As recorded, process 1 held the lock first.
        let scan = scan::scan(&input(&events, &defs), Keep::Records).unwrap();
        let recorded = matching::match_events(&scan.defs, &scan.records);
        assert_eq!(recorded.handoffs.len(), 1);
        assert_eq!(recorded.handoffs[0].release.loc, 1);
    }

    /// Leaving out the rooms no smaller than a location's largest jump (as the backward
    /// amortization does) changes nothing: no event moves further than that jump.
    #[test]
    fn rooms_beyond_the_largest_jump_never_bind() {
        let mut rng = spoor_synth::rng::SplitMix64::new(7);
        let mut below = |n: u64| (rng.next_u64() % n) as i64;
        let mut bound = 0;
        for case in 0..500 {
            let n = 2 + below(60) as usize;
            let (mut t, mut c) = (Vec::with_capacity(n), Vec::with_capacity(n));
            let (mut tk, mut ck) = (0i64, 0i64);
            for _ in 0..n {
                let gap = below(1_000);
                tk += gap;
                ck = (ck + gap).max(tk);
                if below(4) == 0 {
                    ck += below(5_000);
                }
                t.push(tk);
                c.push(ck);
            }
            let most = (1..n).map(|k| c[k] - c[k - 1] - (t[k] - t[k - 1]).max(0)).max().unwrap_or(0);
            let mut caps: Vec<(u64, i64)> = (0..below(2 * n as u64) as usize)
                .map(|_| (below(n as u64) as u64, below(2 * most.max(1) as u64 + 10)))
                .collect();
            caps.sort_unstable();
            caps.dedup_by_key(|x| x.0);
            let kept: Vec<(u64, i64)> = caps.iter().copied().filter(|&(_, room)| room < most).collect();
            let (mut all, mut some, mut none) = (c.clone(), c.clone(), c.clone());
            amortize(&t, &mut all, &caps);
            amortize(&t, &mut some, &kept);
            amortize(&t, &mut none, &[]);
            assert_eq!(all, some, "case {case}: {t:?} {c:?} {caps:?}");
            bound += usize::from(all != none);
        }
        assert!(bound > 100, "the rooms kept bind in {bound} of 500 cases");
    }

    /// Packed rooms read back as wide ones do: by index, each with its least room, at
    /// the largest index and room that are packed.
    #[test]
    fn packed_rooms_read_back() {
        let mut rng = spoor_synth::rng::SplitMix64::new(3);
        let top = u64::from(u32::MAX);
        let (mut narrow, mut wide) = (Rooms::new(1 << 32, 1 << 32), Rooms::new(1 << 32, (1 << 32) + 1));
        assert!(matches!((&narrow, &wide), (Rooms::Narrow(_), Rooms::Wide(_))));
        for i in 0..1_000 {
            let index = if i % 100 == 0 { top } else { rng.next_u64() % 300 };
            let room = if i % 77 == 0 { top } else { rng.next_u64() % 1_000 };
            narrow.push(index, room as i64);
            wide.push(index, room as i64);
        }
        let least = narrow.least_by_index();
        assert_eq!(least, wide.least_by_index());
        assert!(least.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(least.last().map(|x| x.0), Some(top));
    }

    /// A pair's points read back as pushed, at the extremes of time too.
    #[test]
    fn pair_points_read_back() {
        let points =
            [(0, 5), (i64::MAX, i64::MIN), (i64::MIN, i64::MAX), (-3, -3), (1_000_000_007, 1_000_000_000)];
        let mut pair = PairPoints::default();
        for &(s, r) in &points {
            pair.push(s, r);
        }
        assert_eq!(pair.len(), points.len());
        assert_eq!(pair.iter().collect::<Vec<_>>(), points);
    }

    #[test]
    fn maps_that_move_nothing() {
        let line = |a: f64, b: f64| ClockMap::Linear(Line { x0: 0, a, b });
        assert!(ClockMap::Identity.moves_none(i64::MIN, i64::MAX));
        assert!(line(0.4, 0.0).moves_none(0, 1_000_000));
        assert!(!line(0.5, 0.0).moves_none(0, 1_000_000));
        assert!(line(0.0, 1e-7).moves_none(0, 4_000_000));
        assert!(!line(0.0, 1e-7).moves_none(0, 5_000_000));
        let s = ClockMap::Samples(vec![(0, 0.0), (100, 0.49), (200, 0.0)]);
        assert!(s.moves_none(0, 200));
        let s = ClockMap::Samples(vec![(0, 0.0), (100, 0.6), (200, 0.0)]);
        assert!(!s.moves_none(0, 200));
        for m in [line(0.3, -2e-9), ClockMap::Samples(vec![(10, -0.2), (90, 0.45)])] {
            assert_eq!(m.moves_none(0, 100), (0..=100).all(|t| m.apply(t) == t), "{m:?}");
        }
    }
}
