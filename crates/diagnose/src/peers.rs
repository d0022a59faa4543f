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
}

impl Default for PeerOptions {
    fn default() -> Self {
        PeerOptions { windows: 8, enter: 0.25, leave: 0.10 }
    }
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

/// The peer groups: the processes of an application with the same procedures (outside
/// communication), groups of three or more.
pub fn groups(cube: &Cube, res: &Resources) -> Vec<(String, Vec<ProcId>)> {
    let defs = res.defs();
    let mut by_role: std::collections::BTreeMap<(u32, Vec<StrId>), Vec<ProcId>> = Default::default();
    for (p, proc) in defs.processes.iter().enumerate() {
        let mut procs: Vec<StrId> = res
            .locations_of(p as ProcId)
            .iter()
            .flat_map(|&l| cube.procs_of.get(l as usize).into_iter().flatten().copied())
            .filter(|&s| {
                let name = spoor_waits::proc_name(defs, s).to_ascii_lowercase();
                !(name.starts_with("mpi_") || name.starts_with("pvm_"))
            })
            .collect();
        procs.sort_unstable();
        procs.dedup();
        by_role.entry((proc.app, procs)).or_default().push(p as ProcId);
    }
    let mut roles_per_app: std::collections::BTreeMap<u32, usize> = Default::default();
    for (app, _) in by_role.keys() {
        *roles_per_app.entry(*app).or_default() += 1;
    }
    by_role
        .into_iter()
        .filter(|(_, v)| v.len() >= 3)
        .map(|((app, _), members)| {
            let app_name = defs
                .apps
                .get(app as usize)
                .map_or_else(|| format!("app {app}"), |a| defs.strings.name(a.name).into_owned());
            let name = if roles_per_app[&app] > 1 {
                let first = &members[0];
                let first_name = defs
                    .processes
                    .get(*first as usize)
                    .map_or_else(String::new, |q| defs.strings.name(q.name).into_owned());
                format!("{app_name} (like {first_name})")
            } else {
                app_name
            };
            (name, members)
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
    for (group, members) in groups(cube, res) {
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
            let mut open: Option<(usize, f64, &'static str)> = None;
            for (wi, d) in dist.iter().map(|v| v[m]).enumerate() {
                open = match open {
                    None if d.abs() >= opts.enter => {
                        Some((wi, d.abs(), if d > 0.0 { "overworked" } else { "underworked" }))
                    }
                    Some((s, peak, kind)) if d.abs() >= opts.leave && (d > 0.0) == (kind == "overworked") => {
                        Some((s, peak.max(d.abs()), kind))
                    }
                    Some((s, peak, kind)) => {
                        out.push(annotation(cube, res, &group, p, kind, windows[s], windows[wi - 1], peak));
                        // A swing straight to the other side starts a new stretch.
                        (d.abs() >= opts.enter)
                            .then(|| (wi, d.abs(), if d > 0.0 { "overworked" } else { "underworked" }))
                    }
                    None => None,
                };
            }
            if let Some((s, peak, kind)) = open {
                out.push(annotation(cube, res, &group, p, kind, windows[s], windows[k - 1], peak));
            }
        }
    }
    out.sort_by(|a, b| (a.process, a.start).cmp(&(b.process, b.start)));
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
