//! Peer-group annotations (Enterprise): processes of one role are compared with their
//! peers window by window; a process whose busy share of a window (time not in a wait
//! state) strays from the group's median by more than `enter` (points of the window's
//! time) is annotated, and stays annotated until it comes back within `leave`
//! (hysteresis, so an annotation does not flicker).

use crate::cube::{Bins, Cube, Metric, ALL, NO_PARTNER};
use crate::focus::Resources;
use serde::Serialize;
use spoor_model::{ProcId, StrId};
use spoor_waits::Pattern;

/// How peers are compared.
#[derive(Clone, Debug)]
pub struct PeerOptions {
    /// Windows the run is split into.
    pub windows: usize,
    /// Distance from the median busy share that starts an annotation, and that ends it.
    pub enter: f64,
    pub leave: f64,
    /// Groups the user names: (name, process names). Their members are compared with each
    /// other; the processes of no named group keep the roles found for them.
    pub named: Vec<(String, Vec<String>)>,
}

impl Default for PeerOptions {
    fn default() -> Self {
        PeerOptions { windows: 8, enter: 0.25, leave: 0.10, named: Vec::new() }
    }
}

/// The named groups' members, or why not (an unknown process, one named in two groups, a
/// group of fewer than two).
fn named_groups(
    res: &Resources,
    named: &[(String, Vec<String>)],
) -> Result<Vec<(String, Vec<ProcId>)>, String> {
    let defs = res.defs();
    let mut taken: Vec<ProcId> = Vec::new();
    let mut out = Vec::new();
    for (name, members) in named {
        let mut ids = Vec::new();
        for m in members {
            let id = defs.processes.iter().position(|q| defs.strings.name(q.name) == m.as_str()).ok_or_else(
                || {
                    let known: Vec<String> = defs
                        .processes
                        .iter()
                        .take(8)
                        .map(|q| defs.strings.name(q.name).into_owned())
                        .collect();
                    let more = if defs.processes.len() > 8 { ", ..." } else { "" };
                    format!(
                        "peer group {name}: no process named `{m}`; the processes are {}{more}",
                        known.join(", ")
                    )
                },
            )? as ProcId;
            if taken.contains(&id) {
                return Err(format!("peer group {name}: {m} is in another group already"));
            }
            taken.push(id);
            ids.push(id);
        }
        if ids.len() < 2 {
            return Err(format!("peer group {name}: a group needs two processes or more"));
        }
        out.push((name.clone(), ids));
    }
    Ok(out)
}

/// Checks the named groups against the trace's processes (the message says what is wrong).
pub fn check_named(res: &Resources, opts: &PeerOptions) -> Result<(), String> {
    named_groups(res, &opts.named).map(|_| ())
}

/// One annotated stretch of one process.
#[derive(Clone, Debug, Serialize)]
pub struct Annotation {
    #[serde(skip)]
    pub process: ProcId,
    #[serde(rename = "process")]
    pub process_name: String,
    /// `overworked` or `underworked`.
    pub kind: &'static str,
    /// When (ns, the trace's clock): from the window it entered to the end of the last
    /// window it stayed in.
    pub start: i64,
    pub end: i64,
    /// The largest distance from the median busy share over the stretch (0.35: busy 35
    /// points of the window's time more than the median).
    pub peak: f64,
    /// The peer group's name (its application and role).
    pub group: String,
}

impl Annotation {
    /// What it says, as a label: `rank5 overworked by up to 67.6 points`.
    pub fn describe(&self) -> String {
        format!("{} {} by up to {:.1} points", self.process_name, self.kind, 100.0 * self.peak)
    }
}

/// The peer groups: the processes of an application with much the same procedures
/// outside communication (at least half of the two sets shared: a master and its
/// workers are two roles, a worker with one procedure more is still a worker), groups of
/// three or more.
pub fn groups(cube: &Cube, res: &Resources) -> Vec<(String, Vec<ProcId>)> {
    let defs = res.defs();
    let procs_of = |p: ProcId| -> Vec<StrId> {
        let mut v: Vec<StrId> = res
            .locations_of(p)
            .iter()
            .flat_map(|&l| cube.procs_of.get(l as usize).into_iter().flatten().copied())
            .filter(|&s| {
                let name = spoor_waits::proc_name(defs, s).to_ascii_lowercase();
                !(name.starts_with("mpi_") || name.starts_with("pvm_"))
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let alike = |a: &[StrId], b: &[StrId]| {
        let shared = a.iter().filter(|x| b.binary_search(x).is_ok()).count();
        let union = a.len() + b.len() - shared;
        union == 0 || 2 * shared >= union
    };
    // (application, the first member's procedures, members), in process order.
    let mut roles: Vec<(u32, Vec<StrId>, Vec<ProcId>)> = Vec::new();
    for (p, proc) in defs.processes.iter().enumerate() {
        let mine = procs_of(p as ProcId);
        match roles.iter_mut().find(|r| r.0 == proc.app && alike(&r.1, &mine)) {
            Some(r) => r.2.push(p as ProcId),
            None => roles.push((proc.app, mine, vec![p as ProcId])),
        }
    }
    let name_of = |p: ProcId| {
        defs.processes.get(p as usize).map_or_else(String::new, |q| defs.strings.name(q.name).into_owned())
    };
    let roles_in = |app: u32| roles.iter().filter(|r| r.0 == app).count();
    roles
        .iter()
        .filter(|r| r.2.len() >= 3)
        .map(|(app, _, members)| {
            let app_name = defs
                .apps
                .get(*app as usize)
                .map_or_else(|| format!("app {app}"), |a| defs.strings.name(a.name).into_owned());
            let name = if roles_in(*app) > 1 {
                format!("{app_name} (like {})", name_of(members[0]))
            } else {
                app_name
            };
            (name, members.clone())
        })
        .collect()
}

/// The annotations of every peer group, by process then time.
pub fn annotate(cube: &Cube, res: &Resources, opts: &PeerOptions) -> Vec<Annotation> {
    let k = opts.windows.clamp(1, cube.bins.max(1));
    let windows: Vec<Bins> = (0..k).map(|i| Bins(i * cube.bins / k, (i + 1) * cube.bins / k)).collect();
    let busy = |p: ProcId, w: Bins| -> f64 {
        res.locations_of(p)
            .iter()
            .map(|&l| {
                let time = cube.sum(l, ALL, Metric::Time, NO_PARTNER, w);
                let waits: f64 =
                    Pattern::ALL.iter().map(|&pat| cube.sum(l, ALL, Metric::Wait(pat), NO_PARTNER, w)).sum();
                time - waits
            })
            .sum()
    };
    let mut out = Vec::new();
    // Named groups come first; the roles found are kept for the processes of none.
    let mut all = named_groups(res, &opts.named).unwrap_or_default();
    let named: Vec<ProcId> = all.iter().flat_map(|g| g.1.iter().copied()).collect();
    for (name, mut members) in groups(cube, res) {
        members.retain(|p| !named.contains(p));
        if members.len() >= 3 {
            all.push((name, members));
        }
    }
    for (group, members) in all {
        // Per window, each member's busy share of the window against the group's median
        // (a distance in points of the window's time: robust where the median is idle).
        let dist: Vec<Vec<f64>> = windows
            .iter()
            .map(|&w| {
                let share = |p: ProcId| {
                    let (t0, t1) = cube.time_of(w);
                    let len = ((t1 - t0) as f64 * res.locations_of(p).len() as f64).max(1.0);
                    busy(p, w) / len
                };
                let b: Vec<f64> = members.iter().map(|&p| share(p)).collect();
                let mut sorted = b.clone();
                sorted.sort_by(f64::total_cmp);
                let median = sorted[sorted.len() / 2];
                b.iter().map(|x| x - median).collect()
            })
            .collect();
        for (m, &p) in members.iter().enumerate() {
            let d: Vec<f64> = dist.iter().map(|v| v[m]).collect();
            for st in stretches(&d, opts.enter, opts.leave) {
                let kind = if st.over { "overworked" } else { "underworked" };
                out.push(annotation(
                    cube,
                    res,
                    &group,
                    p,
                    kind,
                    windows[st.first],
                    windows[st.last],
                    st.peak,
                ));
            }
        }
    }
    out.sort_by_key(|a| (a.process, a.start));
    out
}

/// One stretch of windows a member stays annotated over.
#[derive(Debug, PartialEq)]
struct Stretch {
    first: usize,
    last: usize,
    peak: f64,
    /// Above the median (else below).
    over: bool,
}

/// The stretches of a member's distances from the median, window by window: one starts
/// at a distance of `enter` or more and lasts while the distance stays at `leave` or more
/// on the same side (a swing to the other side ends it, and may start another).
fn stretches(dist: &[f64], enter: f64, leave: f64) -> Vec<Stretch> {
    let mut out = Vec::new();
    let mut open: Option<Stretch> = None;
    for (w, &d) in dist.iter().enumerate() {
        if let Some(st) = &mut open {
            if d.abs() >= leave && (d > 0.0) == st.over {
                st.last = w;
                st.peak = st.peak.max(d.abs());
                continue;
            }
            out.extend(open.take());
        }
        if d.abs() >= enter {
            open = Some(Stretch { first: w, last: w, peak: d.abs(), over: d > 0.0 });
        }
    }
    out.extend(open);
    out
}

#[allow(clippy::too_many_arguments)]
fn annotation(
    cube: &Cube,
    res: &Resources,
    group: &str,
    p: ProcId,
    kind: &'static str,
    first: Bins,
    last: Bins,
    peak: f64,
) -> Annotation {
    let defs = res.defs();
    Annotation {
        process: p,
        process_name: defs
            .processes
            .get(p as usize)
            .map_or_else(String::new, |q| defs.strings.name(q.name).into_owned()),
        kind,
        start: cube.time_of(first).0,
        end: cube.time_of(last).1,
        peak,
        group: group.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretches_start_above_enter_and_end_below_leave() {
        let st = |first, last, peak, over| Stretch { first, last, peak, over };
        // Enters at 0.3, stays through 0.15 (above leave), ends at 0.05; 0.2 never enters;
        // 0.3 enters again and a swing to -0.3 ends it and starts a stretch below.
        let d = [0.3, 0.15, 0.05, 0.2, 0.3, -0.3, -0.12];
        assert_eq!(
            stretches(&d, 0.25, 0.10),
            [st(0, 1, 0.3, true), st(4, 4, 0.3, true), st(5, 6, 0.3, false)]
        );
        // Without hysteresis (leave = enter) the first stretch would end at once.
        assert_eq!(stretches(&d[..2], 0.25, 0.25), [st(0, 0, 0.3, true)]);
        assert!(stretches(&[0.1, -0.2], 0.25, 0.1).is_empty());
    }
}
