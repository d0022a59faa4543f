//! What `spoor exp add` derives from a trace, once (formats/exp.md, "What a run keeps"):
//! its identity, the attributes the trace knows, its resource hierarchies, metrics per
//! focus, the critical-path profile, the wait-state totals, the POP model's inputs and the
//! diagnosis (the Search History Graph and its bottlenecks).

use crate::store::{Finding, ShgRow};
use crate::Error;
use rustc_hash::FxHashMap;
use spoor_diagnose::cube::{Cube, Metric as CubeMetric, ALL, NO_PARTNER};
use spoor_diagnose::focus::Place;
use spoor_diagnose::{search, Resources, State};
use spoor_graph::profile::Level as CpLevel;
use spoor_model::{Definitions, Event, Feedback, Kind, LocId, StrId};
use spoor_report::Observer;
use spoor_waits::OUTSIDE;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// A run as derived from its trace, ready to store.
#[derive(Clone, Debug, Default)]
pub struct Derived {
    /// The trace's path, absolute where it can be made so.
    pub trace: String,
    /// Its content hash (XXH3, 128 bits, hex) and size and modification time.
    pub hash: String,
    pub size: u64,
    pub mtime_ns: i64,
    pub events: u64,
    /// From the earliest to the latest activity event.
    pub elapsed_ns: i64,
    /// What the trace says of itself (`procs`, `threads`, `machines`, its properties).
    pub attrs: Vec<(String, String)>,
    /// Resource names (`/Code/solve`, `/Process/rank 3`, `/SyncObject/MPI_COMM_WORLD`).
    pub resources: Vec<String>,
    /// (focus, metric, value), metrics named in formats/exp.md.
    pub metrics: Vec<(String, String, f64)>,
    pub shg: Vec<ShgRow>,
    pub findings: Vec<Finding>,
    /// What the user should know about the derived figures.
    pub warnings: Vec<String>,
}

/// The file's identity: content hash, size, modification time (ns since 1970).
pub fn identity(path: &Path) -> Result<(String, u64, i64), Error> {
    let name = path.display();
    let io = |e: std::io::Error| Error::Usage(format!("{name}: {e}"));
    let mut f = std::fs::File::open(path).map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(Error::Usage(format!("{name}: is a directory, expected a trace file")));
    }
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok((format!("{:032x}", h.digest128()), meta.len(), mtime_ns))
}

/// What the flat metrics need besides the cube: each location's span, CPU time and
/// messages sent, and each procedure's calls and messages sent (innermost procedure).
#[derive(Default)]
struct Flat {
    locs: Vec<FlatLoc>,
    procs: FxHashMap<StrId, [u64; 3]>,
}

#[derive(Clone, Default)]
struct FlatLoc {
    span: Option<(i64, i64)>,
    cpu: Option<(i64, i64)>,
    messages: u64,
    bytes: u64,
    stack: Vec<StrId>,
}

impl Observer for Flat {
    fn event(&mut self, _: &Definitions, e: &Event) {
        let l = e.loc as usize;
        if l >= self.locs.len() {
            self.locs.resize(l + 1, FlatLoc::default());
        }
        let loc = &mut self.locs[l];
        loc.span = Some(loc.span.map_or((e.wall, e.wall), |(a, b)| (a.min(e.wall), b.max(e.wall))));
        if let Some(c) = e.cpu {
            loc.cpu = Some(loc.cpu.map_or((c, c), |(a, b)| (a.min(c), b.max(c))));
        }
        match e.kind {
            Kind::Enter { proc } => {
                loc.stack.push(proc);
                self.procs.entry(proc).or_default()[0] += 1;
            }
            Kind::Leave { .. } => {
                loc.stack.pop();
            }
            Kind::Send { bytes, .. } | Kind::Isend { bytes, .. } => {
                loc.messages += 1;
                loc.bytes += bytes;
                let p = self.procs.entry(loc.stack.last().copied().unwrap_or(OUTSIDE)).or_default();
                p[1] += 1;
                p[2] += bytes;
            }
            _ => {}
        }
    }
}

/// Derives a run from the ordered trace at `path` (read twice: the report's pass with the
/// wait states and the cube, then the Program Activity Graph).
pub fn derive(path: &str, feedback: &dyn Feedback) -> Result<Derived, Error> {
    derive_within(path, u64::MAX, None, feedback)
}

/// [`derive()`], its critical path found without keeping the graph (two passes) where the
/// graph would take more than `budget` bytes (`spoor_graph::streamed::path_graph`), and
/// its wait states kept in `waits_in`'s spill file when given one
/// ([`spoor_waits::Waits::new_in`]).
pub fn derive_within(
    path: &str,
    budget: u64,
    waits_in: Option<std::sync::Arc<spoor_format::spill::Arena>>,
    feedback: &dyn Feedback,
) -> Result<Derived, Error> {
    if spoor_format::is_stream(path) {
        return Err(Error::Usage(format!(
            "{path}: a run is kept with its trace's path: give a file, not standard input or a pipe"
        )));
    }
    let (hash, size, mtime_ns) = identity(Path::new(path))?;
    let mut flat = Flat::default();
    let (defs, events, cube, waits) =
        spoor_diagnose::fold_observed(path, feedback, &mut flat, false, waits_in).map_err(|e| match e {
            spoor_diagnose::Error::NotOrdered(m) => Error::NotOrdered(m),
            spoor_diagnose::Error::Format(f) => Error::Format(f),
            spoor_diagnose::Error::Spill(e) => Error::Report(spoor_report::Error::Io(e)),
            e => Error::Usage(e.to_string()),
        })?;
    let defs = &defs;
    let res = Resources::new(defs, &cube);
    let mut d = Derived {
        trace: std::fs::canonicalize(path).map_or_else(|_| path.to_owned(), |p| p.display().to_string()),
        hash,
        size,
        mtime_ns,
        events,
        elapsed_ns: cube.span.1 - cube.span.0,
        ..Default::default()
    };
    d.warnings.extend(waits.warnings());
    d.attrs = trace_attrs(defs, &d);
    d.resources = resources(defs, &res, &cube);
    let mut m = Metrics::default();
    flat_metrics(&mut m, defs, &flat, &cube, &res, d.elapsed_ns);
    wait_metrics(&mut m, defs, &waits, &res);
    drop(waits);
    pop_inputs(&mut m, &cube, &res);

    let shg = search::search(&cube, &res, &spoor_diagnose::Directives::default(), &Default::default());
    for n in &shg.nodes {
        d.shg.push(ShgRow {
            hypothesis: n.hypothesis.name().to_owned(),
            focus: n.focus_name.clone(),
            window: shg.windows[n.window].name.clone(),
            state: state_name(n.state).to_owned(),
            value: n.value,
            threshold: n.threshold,
        });
    }
    for b in search::bottlenecks(&shg) {
        let n = &shg.nodes[b];
        d.findings.push(Finding {
            hypothesis: n.hypothesis.name().to_owned(),
            focus: n.focus_name.clone(),
            value: n.value.unwrap_or(0.0),
            amount_ns: n.amount_ns.unwrap_or(0.0),
            threshold: n.threshold,
        });
    }
    drop(cube);

    // The ideal network's path length is made while the graph is built, else a forward
    // pass of its own beside the profiles.
    let ideal = spoor_graph::CpOptions { message_weight: Some(0), ..Default::default() };
    let (pag, made) = spoor_graph::streamed::path_graph(
        path,
        spoor_graph::Mode::Cpu,
        std::slice::from_ref(&ideal),
        budget,
        feedback,
    )?;
    let ideal_ns = match made.as_ref().and_then(|d| d.lanes()).and_then(|l| l.first().copied()) {
        Some(ns) => {
            cp_metrics(&mut m, &pag, made.as_ref(), defs, &res);
            ns
        }
        None => std::thread::scope(|scope| {
            let ideal = scope.spawn(|| spoor_graph::cp::length(&pag, &ideal));
            cp_metrics(&mut m, &pag, made.as_ref(), defs, &res);
            ideal.join().expect("the ideal network's path does not panic")
        }),
    };
    m.put("/", "ideal_network", ideal_ns as f64);
    d.metrics = m.0.into_iter().map(|((f, k), v)| (f, k, v)).collect();
    Ok(d)
}

/// The critical path's length and profiles: by procedure (remote arcs as the program's
/// `cp.messages` and the like), by process, and its imbalance impact.
fn cp_metrics(
    m: &mut Metrics,
    pag: &spoor_graph::Pag,
    made: Option<&spoor_graph::cp::Distances>,
    defs: &Definitions,
    res: &Resources,
) {
    let pag = &pag;
    let plain = spoor_graph::CpOptions::default();
    let cp = spoor_graph::cp::critical_path_with(pag, &plain, made);
    m.put("/", "cp", cp.length as f64);
    for row in spoor_graph::profile::profile(pag, &cp, CpLevel::Procedure) {
        // Remote arcs are time on no procedure: the program's `cp.messages` and the like.
        match arc_metric(&row.name) {
            Some(metric) => m.add("/", metric, row.time_ns as f64),
            None => m.add(&format!("/Code/{}", row.name), "cp", row.time_ns as f64),
        }
    }
    for (k, _) in defs.processes.iter().enumerate() {
        m.ensure(&res.place_name(Place::Process(k as u32)), "cp");
    }
    for row in spoor_graph::profile::profile(pag, &cp, CpLevel::Process) {
        if let Some(p) = defs.processes.iter().position(|q| defs.strings.name(q.name) == row.name) {
            m.add(&res.place_name(Place::Process(p as u32)), "cp", row.time_ns as f64);
        }
    }
    let imbalance: i64 =
        spoor_graph::profile::profile(pag, &cp, CpLevel::Imbalance).iter().map(|r| r.time_ns).sum();
    m.put("/", "cp.imbalance", imbalance as f64);
}

/// The program metric of a profile's remote-arc row, `None` for a procedure's.
fn arc_metric(row: &str) -> Option<&'static str> {
    match row {
        "(messages)" => Some("cp.messages"),
        "(collectives)" => Some("cp.collectives"),
        "(lock hand-offs)" => Some("cp.locks"),
        "(spawns)" => Some("cp.spawns"),
        _ => None,
    }
}

/// The name the search's JSON gives a state.
pub fn state_name(s: State) -> &'static str {
    match s {
        State::True => "true",
        State::False => "false",
        State::Pruned => "pruned",
        State::NotTested => "not_tested",
        State::NotApplicable => "not_applicable",
    }
}

#[derive(Default)]
struct Metrics(BTreeMap<(String, String), f64>);

impl Metrics {
    fn add(&mut self, focus: &str, metric: &str, v: f64) {
        *self.0.entry((focus.to_owned(), metric.to_owned())).or_default() += v;
    }

    fn put(&mut self, focus: &str, metric: &str, v: f64) {
        self.0.insert((focus.to_owned(), metric.to_owned()), v);
    }

    /// A metric that is 0 where nothing was charged (a process never on the path).
    fn ensure(&mut self, focus: &str, metric: &str) {
        self.add(focus, metric, 0.0);
    }
}

fn trace_attrs(defs: &Definitions, d: &Derived) -> Vec<(String, String)> {
    let mut a = vec![
        ("procs".to_owned(), defs.processes.len().to_string()),
        ("threads".to_owned(), defs.locations.len().to_string()),
        ("machines".to_owned(), defs.machines.len().to_string()),
        ("events".to_owned(), d.events.to_string()),
        ("elapsed_ns".to_owned(), d.elapsed_ns.to_string()),
    ];
    if let Some(app) = defs.apps.first() {
        a.push(("program".to_owned(), defs.strings.name(app.name).into_owned()));
    }
    for &(k, v) in &defs.properties {
        let key = defs.strings.name(k).into_owned();
        if !a.iter().any(|(x, _)| *x == key) {
            a.push((key, defs.strings.name(v).into_owned()));
        }
    }
    a
}

/// Every resource: code, places (as the search names them), sync objects.
fn resources(defs: &Definitions, res: &Resources, cube: &Cube) -> Vec<String> {
    let mut out = Vec::new();
    let mut procs: Vec<String> = Vec::new();
    for p in cube.procs_of.iter().flatten() {
        procs.push(format!("/Code/{}", spoor_waits::proc_name(defs, *p)));
    }
    out.extend(procs);
    out.extend(places(res).into_iter().map(|p| res.place_name(p)));
    for c in &defs.comms {
        out.push(format!("/SyncObject/{}", defs.strings.name(c.name)));
    }
    // The tags messages carried, under their communicators.
    out.extend(cube.objects_of.iter().flatten().map(|&o| res.object_name(o)));
    out.sort();
    out.dedup();
    out
}

/// Time, CPU, computing, communication, I/O, calls, messages and bytes of the program,
/// each place and each procedure (summed over its locations).
fn flat_metrics(
    m: &mut Metrics,
    defs: &Definitions,
    flat: &Flat,
    cube: &Cube,
    res: &Resources,
    elapsed: i64,
) {
    let whole = cube.whole();
    let kinds = [("compute", CubeMetric::Compute), ("comm", CubeMetric::Comm), ("io", CubeMetric::Io)];
    let known = places(res);
    let has = |p: Place| known.binary_search(&p).is_ok();
    let none = FlatLoc::default();
    for (l, loc) in defs.locations.iter().enumerate() {
        let mut foci = vec!["/".to_owned(), res.place_name(Place::Process(loc.process))];
        if has(Place::Thread(l as LocId)) {
            foci.push(res.place_name(Place::Thread(l as LocId)));
        }
        if let Some(p) = defs.processes.get(loc.process as usize).filter(|p| has(Place::Machine(p.machine))) {
            foci.push(res.place_name(Place::Machine(p.machine)));
        }
        let f = flat.locs.get(l).unwrap_or(&none);
        let mut values = vec![
            ("time", f.span.map_or(0, |(a, b)| b - a) as f64),
            ("messages", f.messages as f64),
            ("bytes", f.bytes as f64),
        ];
        if let Some((a, b)) = f.cpu {
            values.push(("cpu", (b - a) as f64));
        }
        for (name, k) in kinds {
            values.push((name, cube.sum(l as LocId, ALL, k, NO_PARTNER, whole)));
        }
        for p in &foci {
            for (name, v) in &values {
                m.add(p, name, *v);
            }
        }
    }
    for (l, procs) in cube.procs_of.iter().enumerate() {
        for &p in procs {
            let f = format!("/Code/{}", spoor_waits::proc_name(defs, p));
            m.add(&f, "time", cube.sum(l as LocId, p, CubeMetric::Time, NO_PARTNER, whole));
            for (name, k) in kinds {
                m.add(&f, name, cube.sum(l as LocId, p, k, NO_PARTNER, whole));
            }
        }
    }
    for (&p, [calls, messages, bytes]) in &flat.procs {
        let f = format!("/Code/{}", spoor_waits::proc_name(defs, p));
        m.add(&f, "calls", *calls as f64);
        m.add(&f, "messages", *messages as f64);
        m.add(&f, "bytes", *bytes as f64);
    }
    m.put("/", "elapsed", elapsed as f64);
}

/// Wait-state totals by pattern: of the program, each procedure and each process.
fn wait_metrics(m: &mut Metrics, defs: &Definitions, w: &spoor_waits::WaitStates, res: &Resources) {
    for (&(pattern, proc, process), t) in &w.totals {
        let metric = format!("waits.{}", pattern.name());
        let v = t.time_ns as f64;
        m.add("/", &metric, v);
        m.add(&format!("/Code/{}", spoor_waits::proc_name(defs, proc)), &metric, v);
        m.add(&res.place_name(Place::Process(process)), &metric, v);
        for f in [
            "/".to_owned(),
            format!("/Code/{}", spoor_waits::proc_name(defs, proc)),
            res.place_name(Place::Process(process)),
        ] {
            m.add(&f, "wait", v);
        }
    }
}

/// Useful computation per process (the POP model's, time outside MPI and I/O): the
/// largest, the mean and the sum over the processes that computed at all.
fn pop_inputs(m: &mut Metrics, cube: &Cube, res: &Resources) {
    let mut useful = Vec::new();
    for place in places(res).into_iter().filter(|p| matches!(p, Place::Process(_))) {
        let u: f64 = res
            .locations(place)
            .iter()
            .map(|&l| cube.sum(l, ALL, CubeMetric::Compute, NO_PARTNER, cube.whole()))
            .sum();
        m.put(&res.place_name(place), "useful", u);
        useful.push(u);
    }
    if useful.is_empty() {
        return;
    }
    let sum: f64 = useful.iter().sum();
    m.put("/", "useful", sum);
    m.put("/", "useful.max", useful.iter().cloned().fold(0.0, f64::max));
    m.put("/", "useful.mean", sum / useful.len() as f64);
}

/// Every place below the root, as the search names them (machines only where they
/// matter, threads only of processes with several), sorted.
fn places(res: &Resources) -> Vec<Place> {
    let mut out = Vec::new();
    let mut stack = vec![Place::All];
    while let Some(p) = stack.pop() {
        for c in res.place_children(p) {
            out.push(c);
            stack.push(c);
        }
    }
    out.sort();
    out
}
