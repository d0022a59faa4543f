//! What to fix first: each cause the search and the root causes found, with the gain the
//! model machine predicts for removing it (the CPU-mode critical path of the PAG with the
//! change made: formats/diagnose.md, "What to fix first").
//!
//! - A delay (Böhme et al.): the work of one procedure on some locations that made
//!   others wait. The fix brings that procedure on those locations down to its mean on
//!   the other locations of the application (zero where they never run it, or where
//!   every location has the delay: a serialization, a hot lock).
//! - A load imbalance in a procedure: the same fix, for the locations above the mean.
//! - A slow link (its messages more than twice the median transfer time): its messages
//!   at the median; communication everywhere (true at the whole program): an ideal
//!   network (every transfer free).
//! - A procedure that the program is CPU bound in: the gain if it took no time, an
//!   upper bound (no change names how much faster it could be), ranked after the rest.

use crate::cube::{Cube, Metric, NO_PARTNER};
use crate::focus::{Place, Resources};
use crate::hypothesis::Hypothesis;
use crate::search::{Shg, State};
use rayon::prelude::*;
use serde::Serialize;
use spoor_graph::build::Messages;
use spoor_graph::pag::ArcKind;
use spoor_graph::{cp, CpOptions, Pag, Scale};
use spoor_model::{LocId, StrId};
use spoor_waits::WaitStates;
use std::collections::BTreeMap;

/// One thing to change, with what it would give.
#[derive(Clone, Debug, Serialize)]
pub struct Fix {
    /// What it is, as a sentence: `extra work in foo on rank 3 causes 31 % of all waiting`.
    pub finding: String,
    /// The change the prediction makes.
    pub change: String,
    /// Kind: `delay`, `imbalance`, `link`, `network` or `cpu_bound`.
    pub kind: &'static str,
    /// The procedure and the processes it concerns.
    pub procedure: Option<String>,
    pub processes: Vec<String>,
    /// The critical path (CPU mode) now and with the change (ns).
    pub length_ns: i64,
    pub predicted_ns: i64,
    /// The predicted gain as a share of the path now (0.083: 8.3 % faster).
    pub gain: f64,
    /// An upper bound rather than a prediction (the cpu_bound kind).
    pub bound: bool,
    /// The numbers behind the finding.
    pub evidence: Vec<String>,
    /// Where to look at them in detail.
    pub commands: Vec<String>,
    /// The paths its gain is the difference of, until they are found ([`fixes`] finds
    /// those of every fix at once, in parallel).
    #[serde(skip)]
    plan: Option<Plan>,
}

/// A fix's gain to be found: the base path less one path, or one path less another.
#[derive(Clone, Debug)]
enum Plan {
    Path(CpOptions),
    Difference(CpOptions, CpOptions),
}

/// What the fixes are made from (and the PAG, for their gains: [`predict`]).
pub struct Inputs<'a> {
    pub trace: &'a str,
    pub cube: &'a Cube,
    pub res: &'a Resources<'a>,
    /// The delays by procedure ([`delay_groups`]) and every wait's time, summed (ns).
    pub delays: &'a [DelayGroup],
    pub total_wait_ns: f64,
    pub shg: &'a Shg,
    /// Told how far the sweeps that predict the gains have got.
    pub feedback: &'a dyn spoor_model::Feedback,
}

/// The root causes' delays in one procedure: the procedure, the locations whose delay in
/// it is at least a tenth of the largest, and the waits they caused (ns).
pub type DelayGroup = (StrId, Vec<LocId>, f64);

/// The delays of `waits` grouped by the innermost procedure of their call path, the
/// largest cost first.
pub fn delay_groups(waits: &WaitStates) -> Vec<DelayGroup> {
    let mut by_proc: BTreeMap<StrId, BTreeMap<LocId, f64>> = BTreeMap::new();
    for d in &waits.causes.delays {
        let p = waits.callpaths.proc(d.callpath);
        *by_proc.entry(p).or_default().entry(d.loc).or_default() += d.cost_ns();
    }
    let mut v: Vec<DelayGroup> = by_proc
        .into_iter()
        .map(|(p, locs)| {
            let max = locs.values().copied().fold(0.0, f64::max);
            let chosen: Vec<LocId> = locs.iter().filter(|(_, &c)| c >= 0.1 * max).map(|(&l, _)| l).collect();
            let cost = chosen.iter().map(|l| locs[l]).sum();
            (p, chosen, cost)
        })
        .collect();
    v.sort_by(|a, b| b.2.total_cmp(&a.2));
    v
}

/// The smallest predicted gain (a share of the path) a fix is listed with.
pub const MIN_GAIN: f64 = 0.001;

/// Names as a short list: runs of names that differ only in a trailing number, the
/// numbers consecutive, written as one range (`rank2, rank5-11, rank13`).
pub fn name_list(names: &[String]) -> String {
    let split = |n: &str| -> (String, Option<u64>) {
        let digits = n.len() - n.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (head, tail) = n.split_at(n.len() - digits);
        (head.to_owned(), tail.parse().ok().filter(|_| !tail.starts_with('0') || tail == "0"))
    };
    let mut out: Vec<String> = Vec::new();
    let mut run: Option<(String, u64, u64)> = None;
    let flush = |run: &mut Option<(String, u64, u64)>, out: &mut Vec<String>| {
        if let Some((h, a, b)) = run.take() {
            out.push(if a == b { format!("{h}{a}") } else { format!("{h}{a}-{b}") });
        }
    };
    for n in names {
        match split(n) {
            (h, Some(k)) => match &mut run {
                Some((rh, _, b)) if *rh == h && *b + 1 == k => *b = k,
                _ => {
                    flush(&mut run, &mut out);
                    run = Some((h, k, k));
                }
            },
            _ => {
                flush(&mut run, &mut out);
                out.push(n.clone());
            }
        }
    }
    flush(&mut run, &mut out);
    out.join(", ")
}

/// A share as a percentage: `31.0 %`.
pub(crate) fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

/// Nanoseconds as milliseconds: `8.300 ms`.
pub(crate) fn ms(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

impl Inputs<'_> {
    fn proc_name(&self, p: StrId) -> String {
        spoor_waits::proc_name(self.res.defs(), p)
    }

    fn process_names(&self, locs: &[LocId]) -> Vec<String> {
        let defs = self.res.defs();
        let mut procs: Vec<u32> =
            locs.iter().filter_map(|&l| defs.locations.get(l as usize).map(|x| x.process)).collect();
        procs.sort_unstable();
        procs.dedup();
        procs
            .iter()
            .map(|&p| {
                defs.processes
                    .get(p as usize)
                    .map_or_else(String::new, |q| defs.strings.name(q.name).into_owned())
            })
            .collect()
    }

    /// `proc`'s own computing time on a location (the whole run): what the PAG's
    /// exclusive arcs of it weigh.
    fn work(&self, proc: StrId, l: LocId) -> f64 {
        self.cube.sum(l, proc, Metric::Compute, NO_PARTNER, self.cube.whole())
    }

    /// The scaling that brings `proc` on `locs` down to its mean on the other locations
    /// of their applications (all of them, where `locs` are every one that runs it).
    fn rebalance(&self, proc: StrId, locs: &[LocId]) -> Vec<Scale> {
        let defs = self.res.defs();
        locs.iter()
            .map(|&l| {
                let app = defs.process_of(l).map(|p| p.app);
                let in_app: Vec<LocId> = (0..defs.locations.len() as LocId)
                    .filter(|&o| defs.process_of(o).map(|p| p.app) == app)
                    .collect();
                let others: Vec<LocId> = in_app.iter().copied().filter(|o| !locs.contains(o)).collect();
                let peers = if others.is_empty() { in_app } else { others };
                let mean = peers.iter().map(|&o| self.work(proc, o)).sum::<f64>() / peers.len().max(1) as f64;
                let own = self.work(proc, l);
                let factor = if own > 0.0 { (mean / own).min(1.0) } else { 1.0 };
                Scale { loc: l, proc, factor }
            })
            .collect()
    }

    /// Whether no location outside `locs` runs `proc` (extra work of its own there).
    fn only_here(&self, proc: StrId, locs: &[LocId]) -> bool {
        let n = self.res.defs().locations.len() as LocId;
        (0..n).filter(|o| !locs.contains(o)).all(|o| self.work(proc, o) <= 0.0)
    }

    /// Whether `proc` on `locs` is serialized work: every location that runs it is among
    /// them and the waits it causes exceed half of its time there (each piece of it
    /// holds others up, as a token or a hot lock does). Removing it is then the fix.
    fn serialized(&self, proc: StrId, locs: &[LocId], cost: f64) -> bool {
        let work: f64 = locs.iter().map(|&l| self.work(proc, l)).sum();
        self.only_here(proc, locs) && cost >= 0.5 * work
    }

    /// A fix whose gain is the base path less the path under `plan` (or the difference of
    /// two paths), found later by [`predict`].
    fn fix(&self, kind: &'static str, finding: String, change: String, plan: Plan) -> Fix {
        Fix {
            finding,
            change,
            kind,
            procedure: None,
            processes: Vec::new(),
            length_ns: 0,
            predicted_ns: 0,
            gain: 0.0,
            bound: false,
            evidence: Vec::new(),
            commands: Vec::new(),
            plan: Some(plan),
        }
    }

    /// The lengths of `paths`: one sweep of `pag` per thread, each finding its share
    /// of them (each is a forward pass over the same graph, independent of the others).
    fn swept(&self, pag: &Pag, paths: &[CpOptions]) -> Vec<i64> {
        if paths.is_empty() {
            return Vec::new();
        }
        let wanted: Vec<&CpOptions> = paths.iter().collect();
        let per = wanted.len().div_ceil(rayon::current_num_threads().max(1)).max(1);
        let arcs_out = pag.remote_arcs_out();
        let total = (pag.nodes() * wanted.len().div_ceil(per)) as u64;
        let done = std::sync::atomic::AtomicU64::new(0);
        let swept = |n: u64| {
            let d = done.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
            self.feedback.progress("predicting the gains: nodes", d, Some(total));
        };
        let lengths = wanted
            .par_chunks(per)
            .map(|run| cp::lengths_observed(pag, run, &arcs_out, &swept).ns)
            .collect::<Vec<_>>()
            .concat();
        self.feedback.finish();
        lengths
    }
}

/// The paths the fixes' gains need, in order.
fn paths(fixes: &[Fix]) -> Vec<CpOptions> {
    let mut out = Vec::new();
    for f in fixes {
        match &f.plan {
            Some(Plan::Path(o)) => out.push(o.clone()),
            Some(Plan::Difference(a, b)) => out.extend([a.clone(), b.clone()]),
            None => {}
        }
    }
    out
}

/// Gives each fix its gain against the path `base` long, from `lengths` (those of
/// [`paths`] of the fixes).
fn assign(fixes: &mut [Fix], base: i64, lengths: Vec<i64>) {
    let mut next = lengths.into_iter();
    let mut length = || next.next().expect("a length for every path asked for");
    for f in fixes {
        let gain_ns = match f.plan.take() {
            Some(Plan::Path(_)) => base - length(),
            Some(Plan::Difference(..)) => (length() - length()).max(0),
            None => continue,
        };
        f.length_ns = base;
        f.predicted_ns = base - gain_ns;
        f.gain = if base > 0 { gain_ns as f64 / base as f64 } else { 0.0 };
    }
}

/// The fixes known before the PAG is built (all but the slow links, which are read off
/// its message arcs), their gains still to find: [`Planned::paths`] asks the build for
/// their lengths, [`predict`] gives the gains.
pub struct Planned {
    fixes: Vec<Fix>,
    /// Where the slow links go among them, and where the upper bounds begin.
    links_at: usize,
    bounds_at: usize,
}

impl Planned {
    /// The paths the planned fixes' gains need, in order: what
    /// `spoor_graph::file::load_with_lanes` can make while it builds the PAG.
    pub fn paths(&self) -> Vec<CpOptions> {
        paths(&self.fixes)
    }
}

/// The fixes the search and the root causes name (at most `top` delays), before the
/// PAG is built.
pub fn plan(x: &Inputs, top: usize) -> Planned {
    let mut out = Vec::new();
    let total_wait = x.total_wait_ns;
    let mut seen_procs = Vec::new();
    for &(proc, ref locs, cost) in x.delays.iter().take(top) {
        if total_wait <= 0.0 || cost < 0.01 * total_wait {
            continue;
        }
        let names = x.process_names(locs);
        let finding = format!(
            "extra work in {} on {} causes {} of all waiting ({})",
            x.proc_name(proc),
            name_list(&names),
            pct(cost / total_wait),
            ms(cost)
        );
        let scale = if x.serialized(proc, locs, cost) {
            locs.iter().map(|&loc| Scale { loc, proc, factor: 0.0 }).collect()
        } else {
            x.rebalance(proc, locs)
        };
        let change = if scale.iter().all(|s| s.factor == 0.0) {
            format!("{} removed on {}", x.proc_name(proc), name_list(&names))
        } else {
            format!("{} on {} brought down to its mean elsewhere", x.proc_name(proc), name_list(&names))
        };
        let mut f = x.fix("delay", finding, change, Plan::Path(CpOptions { scale, ..CpOptions::default() }));
        f.procedure = Some(x.proc_name(proc));
        f.processes = names;
        f.evidence.push(format!("waiting caused by it: {} of {} in all", ms(cost), ms(total_wait)));
        f.commands.push(format!("spoor-report -t waits {}", x.trace));
        seen_procs.push(proc);
        out.push(f);
    }
    out.extend(imbalances(x, &seen_procs));
    let links_at = out.len();
    out.extend(network(x));
    let bounds_at = out.len();
    out.extend(cpu_bound(x));
    Planned { fixes: out, links_at, bounds_at }
}

/// The fixes with their predicted gains, largest first (upper bounds last): `planned`,
/// with the lengths of its paths made while the PAG was built (`made`; else swept now),
/// and the slow links of its `messages`; `base` is its critical path (CPU mode). The
/// PAG itself (`pag`) is needed only for what must be swept: `None` is an error then.
pub fn predict(
    x: &Inputs,
    planned: Planned,
    messages: &Messages,
    pag: Option<&Pag>,
    base: i64,
    made: Option<&[i64]>,
) -> Result<Vec<Fix>, Planned> {
    let wanted = paths(&planned.fixes);
    let made = made.filter(|l| l.len() == wanted.len());
    let mut links = slow_links(x, messages, base);
    // What is not made yet is swept, over the graph.
    let sweep = |paths: &[CpOptions]| pag.map(|pag| x.swept(pag, paths));
    let Some(lengths) = made.map(<[i64]>::to_vec).or_else(|| sweep(&wanted)) else { return Err(planned) };
    let link_lengths = if links.is_empty() { Some(Vec::new()) } else { sweep(&paths(&links)) };
    let Some(link_lengths) = link_lengths else { return Err(planned) };
    let Planned { mut fixes, links_at, bounds_at } = planned;
    assign(&mut fixes, base, lengths);
    assign(&mut links, base, link_lengths);
    let predictions = bounds_at + links.len();
    fixes.splice(links_at..links_at, links);
    let mut bounds = fixes.split_off(predictions);
    fixes.sort_by(|a, b| b.gain.total_cmp(&a.gain));
    bounds.sort_by(|a, b| b.gain.total_cmp(&a.gain));
    fixes.extend(bounds);
    // A change the model says gains nothing is not a fix (its bottleneck stays listed).
    fixes.retain(|f| f.gain >= MIN_GAIN);
    Ok(fixes)
}

/// Load imbalances the search found true in a procedure at the whole run.
fn imbalances(x: &Inputs, skip: &[StrId]) -> Vec<Fix> {
    let mut out = Vec::new();
    for n in &x.shg.nodes {
        let (Some(proc), true) = (n.focus.code, n.state == State::True && n.window == 0) else { continue };
        if n.hypothesis != Hypothesis::LoadImbalance || n.focus.place != Place::All || skip.contains(&proc) {
            continue;
        }
        let all = x.res.locations(Place::All);
        let work: Vec<f64> = all.iter().map(|&l| x.work(proc, l)).collect();
        let mean = work.iter().sum::<f64>() / work.len().max(1) as f64;
        let max = work.iter().copied().fold(0.0, f64::max);
        let over: Vec<LocId> = all
            .iter()
            .zip(&work)
            .filter(|(_, &w)| w - mean >= 0.5 * (max - mean) && w > mean)
            .map(|(&l, _)| l)
            .collect();
        if over.is_empty() {
            continue;
        }
        let names = x.process_names(&over);
        let finding = format!(
            "load imbalance in {}: {} of the time ({} above its mean on {})",
            x.proc_name(proc),
            pct(n.value.unwrap_or(0.0)),
            ms(max - mean),
            name_list(&names)
        );
        let change =
            format!("{} on {} brought down to its mean elsewhere", x.proc_name(proc), name_list(&names));
        let scale = x.rebalance(proc, &over);
        let mut f =
            x.fix("imbalance", finding, change, Plan::Path(CpOptions { scale, ..CpOptions::default() }));
        f.procedure = Some(x.proc_name(proc));
        f.processes = names;
        f.evidence.push(evidence(n));
        f.commands.push(format!("spoor-report -t profile {}", x.trace));
        out.push(f);
    }
    out
}

/// A search node as evidence: `load_imbalance at /Code/f: 25.0 % > 10.0 %`.
fn evidence(n: &crate::search::Node) -> String {
    format!(
        "{} at {}: {} > {}",
        n.hypothesis.name(),
        n.focus_name,
        pct(n.value.unwrap_or(0.0)),
        pct(n.threshold)
    )
}

/// The message arcs of `pag` as (from location, to location, weight).
pub fn messages(pag: &Pag) -> Messages {
    (0..pag.arcs())
        .into_par_iter()
        .filter(|&a| pag.arc_kind[a] == ArcKind::Message)
        .map(|a| (pag.loc[pag.arc_from[a] as usize], pag.loc[pag.arc_to[a] as usize], pag.arc_weight[a]))
        .collect()
}

/// The messages' median weight (the transfer time of a typical message).
fn median_message(messages: &Messages) -> i64 {
    let mut w: Vec<i64> = messages.par_iter().map(|m| m.2).collect();
    if w.is_empty() {
        return 0;
    }
    let k = w.len() / 2;
    *w.select_nth_unstable(k).1
}

/// Links whose messages take more than twice the median transfer time, enough to
/// matter (their excess at least 1 % of the path): each gets its messages at the median.
pub fn slow_links(x: &Inputs, messages: &Messages, base: i64) -> Vec<Fix> {
    let typical = median_message(messages);
    let process: Vec<u32> = x.res.defs().locations.iter().map(|q| q.process).collect();
    let process = |l: u32| process.get(l as usize).copied().unwrap_or(u32::MAX);
    // Every message read once, in parallel: integer sums, so the same on any number of
    // threads (and in the order of the processes at the end).
    type Links = rustc_hash::FxHashMap<(u32, u32), (u64, i64)>;
    let links: BTreeMap<(u32, u32), (u64, i64)> = messages
        .par_iter()
        .fold(Links::default, |mut links, &(from, to, weight)| {
            let (p, q) = (process(from), process(to));
            let link = links.entry((p.min(q), p.max(q))).or_default();
            link.0 += 1;
            link.1 += weight;
            links
        })
        .reduce(Links::default, |mut a, b| {
            for (k, (n, t)) in b {
                let link = a.entry(k).or_default();
                link.0 += n;
                link.1 += t;
            }
            a
        })
        .into_iter()
        .collect();
    let mut out = Vec::new();
    for ((p, q), (count, total)) in links {
        let excess = total - typical * count as i64;
        if p == q || total <= 2 * typical.max(1) * count as i64 || (excess as f64) < 0.01 * base as f64 {
            continue;
        }
        let (lp, lq) = (x.res.locations_of(p), x.res.locations_of(q));
        let pairs = |w: Option<i64>| -> Vec<(LocId, LocId, Option<i64>)> {
            lp.iter().flat_map(|&a| lq.iter().map(move |&b| (a, b, w))).collect()
        };
        let mut names = x.process_names(lp);
        names.extend(x.process_names(lq));
        let finding = format!(
            "slow link between {}: {} messages at {} each against a median of {}",
            names.join(" and "),
            count,
            ms(total as f64 / count as f64),
            ms(typical as f64)
        );
        let change = format!("messages between {} at the median transfer time", names.join(" and "));
        // The link's messages at their whole measured transfer, then at the median: the
        // difference is the gain (the path's own weights keep only the part of a transfer
        // after both sides were ready, which misses a receiver that was still busy).
        let measured = CpOptions { links: pairs(None), ..CpOptions::default() };
        let mended = CpOptions { links: pairs(Some(typical)), ..CpOptions::default() };
        let mut f = x.fix("link", finding, change, Plan::Difference(measured, mended));
        f.processes = names;
        f.evidence.push(format!(
            "transfers over the link: {} in all, {} more than at the median",
            ms(total as f64),
            ms(excess as f64)
        ));
        f.commands.push(format!("spoor-report -t messages {}", x.trace));
        out.push(f);
    }
    out
}

/// Communication everywhere, where the search found it true at the whole program.
fn network(x: &Inputs) -> Vec<Fix> {
    let mut out = Vec::new();
    for n in &x.shg.nodes {
        if n.hypothesis == Hypothesis::Communication
            && n.state == State::True
            && n.window == 0
            && n.focus.is_root()
        {
            let value = n.value.unwrap_or(0.0);
            let finding = format!("communication (not waiting) takes {} of the time", pct(value));
            let change = "an ideal network (every transfer free)".to_owned();
            let mut f = x.fix(
                "network",
                finding,
                change,
                Plan::Path(CpOptions { message_weight: Some(0), ..CpOptions::default() }),
            );
            f.evidence.push(evidence(n));
            f.commands.push(format!("spoor-report -t messages {}", x.trace));
            out.push(f);
        }
    }
    out
}

/// Procedures the program is CPU bound in (at the whole program), with the gain if they
/// took no time: an upper bound.
fn cpu_bound(x: &Inputs) -> Vec<Fix> {
    let mut out: Vec<Fix> = Vec::new();
    for n in &x.shg.nodes {
        let (Some(proc), true) = (n.focus.code, n.state == State::True && n.window == 0) else { continue };
        if n.hypothesis != Hypothesis::CpuBound || n.focus.place != Place::All {
            continue;
        }
        let name = x.proc_name(proc);
        let finding = format!("the program computes in {} {} of its time", name, pct(n.value.unwrap_or(0.0)));
        let mut f = x.fix(
            "cpu_bound",
            finding,
            format!("{name} taking no time (an upper bound)"),
            Plan::Path(CpOptions { zero: vec![proc], ..CpOptions::default() }),
        );
        f.bound = true;
        f.procedure = Some(name);
        f.evidence.push(evidence(n));
        f.commands.push(format!("spoor-cp --zeroing {}", x.trace));
        out.push(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::name_list;

    #[test]
    fn names_with_consecutive_numbers_are_ranges() {
        let names: Vec<String> =
            ["rank2", "rank5", "rank6", "rank7", "rank9", "server", "MPI Rank 0", "MPI Rank 1", "r01"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        assert_eq!(name_list(&names), "rank2, rank5-7, rank9, server, MPI Rank 0-1, r01");
    }
}
