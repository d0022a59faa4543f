//! Critical-path profiles (IPS-2): the path's time summed by application, machine,
//! process, thread, procedure, and by the machines its message arcs join.

use crate::cp::{CriticalPath, Pred};
use crate::pag::{ArcKind, Pag, Reach, NONE};
use std::collections::BTreeMap;

/// What a profile sums the critical path by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Applications.
    Application,
    /// Machines.
    Machine,
    /// Processes.
    Process,
    /// Threads (locations).
    Thread,
    /// The innermost procedure of each local arc.
    Procedure,
    /// Every procedure on the call stack of each local arc, once.
    Inclusive,
    /// Remote arcs by the machines they join.
    Message,
    /// The imbalance impact of each procedure (Scalasca's critical-path profile): its
    /// time on the path less its mean time per process, where positive.
    Imbalance,
}

impl Level {
    /// Every level, in the order reports list them.
    pub const ALL: [Level; 8] = [
        Level::Application,
        Level::Machine,
        Level::Process,
        Level::Thread,
        Level::Procedure,
        Level::Inclusive,
        Level::Message,
        Level::Imbalance,
    ];

    /// The level's name in options and reports.
    pub fn name(self) -> &'static str {
        match self {
            Level::Application => "application",
            Level::Machine => "machine",
            Level::Process => "process",
            Level::Thread => "thread",
            Level::Procedure => "procedure",
            Level::Inclusive => "inclusive",
            Level::Message => "message",
            Level::Imbalance => "imbalance",
        }
    }

    /// The level `name` gives, if any.
    pub fn from_name(s: &str) -> Option<Level> {
        Self::ALL.iter().copied().find(|l| l.name() == s)
    }
}

/// One row of a profile: an entity and the critical-path time attributed to it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Row {
    /// The entity.
    pub name: String,
    /// Its time on the path, ns.
    pub time_ns: i64,
}

/// The label of remote-arc time in profiles of entities (it belongs to none of them).
fn arc_label(kind: ArcKind) -> &'static str {
    match kind {
        ArcKind::Message => "(messages)",
        ArcKind::CollIn | ArcKind::CollOut => "(collectives)",
        ArcKind::Lock => "(lock hand-offs)",
        ArcKind::Spawn => "(spawns)",
    }
}

/// The profile of a path at one level, sorted by time (largest first, then by name).
/// Rows with no time are left out; at every level but `Inclusive` and `Message` the
/// rows add up to the path's length.
pub fn profile(pag: &Pag, path: &CriticalPath, level: Level) -> Vec<Row> {
    if level == Level::Imbalance {
        return imbalance(pag, path);
    }
    let mut acc: BTreeMap<String, i64> = BTreeMap::new();
    let name = |id: Option<spoor_model::StrId>| {
        id.map_or_else(|| "?".to_owned(), |n| pag.defs.strings.name(n).into_owned())
    };
    let app_name = |l: u32| name(pag.defs.apps.get(pag.app_of(l) as usize).map(|x| x.name));
    let machine_name = |l: u32| name(pag.defs.machines.get(pag.machine_of(l) as usize).map(|x| x.name));
    let process_name = |l: u32| name(pag.defs.processes.get(pag.process_of(l) as usize).map(|x| x.name));
    for (k, s) in path.steps.iter().enumerate() {
        if s.weight == 0 {
            continue;
        }
        let l = pag.loc[s.node as usize];
        match s.pred {
            Pred::Source | Pred::Local(_) => {
                let ctx = pag.ctx[s.node as usize];
                match level {
                    Level::Application => *acc.entry(app_name(l)).or_default() += s.weight,
                    Level::Machine => *acc.entry(machine_name(l)).or_default() += s.weight,
                    Level::Process => *acc.entry(process_name(l)).or_default() += s.weight,
                    Level::Thread => *acc.entry(pag.defs.location_name(l)).or_default() += s.weight,
                    Level::Procedure => {
                        *acc.entry(pag.proc_name(pag.proc_of_ctx(ctx))).or_default() += s.weight
                    }
                    Level::Inclusive => {
                        let mut seen = on_stack(pag, ctx);
                        if seen.is_empty() {
                            seen.push(NONE);
                        }
                        for p in seen {
                            *acc.entry(pag.proc_name(p)).or_default() += s.weight;
                        }
                    }
                    Level::Message | Level::Imbalance => {}
                }
            }
            Pred::Arc(a) => {
                let kind = pag.arc_kind[a as usize];
                if level == Level::Message {
                    // A collective's arc comes from its virtual node: name the begin before it.
                    let mut from = pag.arc_from[a as usize];
                    if pag.loc[from as usize] == NONE && k > 0 {
                        from = path.steps[k - 1].from(pag);
                    }
                    let fl = if from == NONE { NONE } else { pag.loc[from as usize] };
                    let what = match kind {
                        ArcKind::Message => "message",
                        ArcKind::CollIn | ArcKind::CollOut => "collective",
                        ArcKind::Lock => "lock",
                        ArcKind::Spawn => "spawn",
                    };
                    let from_m = if fl == NONE { "?".to_owned() } else { machine_name(fl) };
                    *acc.entry(format!("{what} {from_m} -> {}", machine_name(l))).or_default() += s.weight;
                } else {
                    *acc.entry(arc_label(kind).to_owned()).or_default() += s.weight;
                }
            }
        }
    }
    let mut rows: Vec<Row> = acc.into_iter().map(|(name, time_ns)| Row { name, time_ns }).collect();
    rows.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then_with(|| a.name.cmp(&b.name)));
    rows
}

/// The procedures on a calling context's stack, innermost first, each once.
fn on_stack(pag: &Pag, ctx: u32) -> Vec<u32> {
    let mut seen = Vec::new();
    let mut c = ctx;
    while c != 0 && c != NONE {
        let p = pag.contexts[c as usize].proc;
        if !seen.contains(&p) {
            seen.push(p);
        }
        c = pag.contexts[c as usize].parent;
    }
    seen
}

/// The imbalance impact of each procedure on the path: its exclusive time on the path
/// less its mean exclusive time per process (over the whole graph, in the graph's
/// weights), where positive, largest first. Their sum is how much of the path is
/// imbalance: the time the path spends in a procedure beyond what an average process
/// spent in it.
pub fn imbalance(pag: &Pag, path: &CriticalPath) -> Vec<Row> {
    let (total, n) = match &pag.partial {
        Some(p) => (p.procedure_time.iter().copied().collect(), p.processes),
        None => procedure_time(pag),
    };
    let n = n.max(1) as i64;
    let mut on_path: BTreeMap<u32, i64> = BTreeMap::new();
    for s in &path.steps {
        if matches!(s.pred, Pred::Source | Pred::Local(_)) {
            *on_path.entry(pag.proc_of_ctx(pag.ctx[s.node as usize])).or_default() += s.weight;
        }
    }
    let mut rows: Vec<Row> = on_path
        .into_iter()
        .map(|(p, t)| Row {
            name: pag.proc_name(p),
            time_ns: (t - total.get(&p).copied().unwrap_or(0) / n).max(0),
        })
        .filter(|r| r.time_ns > 0)
        .collect();
    rows.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then_with(|| a.name.cmp(&b.name)));
    rows
}

/// Each procedure's exclusive time over the whole graph, and the processes with events.
fn procedure_time(pag: &Pag) -> (BTreeMap<u32, i64>, usize) {
    let mut total: BTreeMap<u32, i64> = BTreeMap::new();
    let mut processes = std::collections::BTreeSet::new();
    for i in 0..pag.nodes() {
        let l = pag.loc[i];
        if l == NONE {
            continue;
        }
        processes.insert(pag.process_of(l));
        *total.entry(pag.proc_of_ctx(pag.ctx[i])).or_default() += pag.weight[i];
    }
    (total, processes.len())
}

/// Critical-path time per procedure id, exclusive (innermost procedure) or inclusive
/// (anywhere on the call stack), for those that have some (for choosing what to
/// zero), largest first.
pub fn procedure_times(pag: &Pag, path: &CriticalPath, reach: Reach) -> Vec<(u32, i64)> {
    let mut acc: BTreeMap<u32, i64> = BTreeMap::new();
    for s in &path.steps {
        if matches!(s.pred, Pred::Source | Pred::Local(_)) {
            let ctx = pag.ctx[s.node as usize];
            let procs = match reach {
                Reach::Inclusive => on_stack(pag, ctx),
                Reach::Exclusive => vec![pag.proc_of_ctx(ctx)],
            };
            for p in procs.into_iter().filter(|&p| p != NONE) {
                *acc.entry(p).or_default() += s.weight;
            }
        }
    }
    // A procedure with no time on the path cannot shorten it.
    let mut v: Vec<(u32, i64)> = acc.into_iter().filter(|p| p.1 > 0).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| pag.proc_name(a.0).cmp(&pag.proc_name(b.0))));
    v
}
