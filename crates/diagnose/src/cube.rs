//! The metric cube the search asks: time by location × procedure × metric × time bin
//! (and, for messages and their waits, × partner process), folded from one pass over an
//! ordered trace together with its wait states. A procedure is charged inclusively (the
//! time of everything it calls is its time too, as a Paradyn code focus is) but for
//! computing, which is its own time only; every location is also charged under [`ALL`]. Bins come from spoor-report's folding grid:
//! at most [`BINS`] of them over the run, so a window is exact to a bin's width.

use rustc_hash::FxHashMap;
use spoor_model::{Definitions, Event, Kind, LocId, ProcId, StrId};
use spoor_report::grid::Grid;
use spoor_waits::{CallPaths, Instance, Pattern, SyncObject, OUTSIDE};

/// The procedure "any procedure": the whole location.
pub const ALL: StrId = StrId::MAX - 1;

/// Whom or what a series is about besides its location and procedure: nobody, the
/// partner process of messages, or a synchronization object (a communicator, or one tag
/// on it). A series has one of them: the cube keeps no cross product.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Other {
    None,
    Partner(ProcId),
    Object(SyncObject),
}

/// No partner and no synchronization object.
pub const NO_PARTNER: Other = Other::None;
/// The most time bins of the run.
pub const BINS: usize = 128;

/// What a series measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// Wall time (a location's time in the run, or inside a procedure).
    Time,
    /// Time outside communication and I/O calls (the innermost procedure's only).
    Compute,
    /// Time inside communication calls (MPI, PVM), waiting included.
    Comm,
    /// Time inside I/O calls.
    Io,
    /// Time inside blocking receives, by the partner that sent and by communicator and
    /// tag.
    Recv,
    /// Time inside collective operations, by communicator.
    Coll,
    /// Time in one wait-state pattern.
    Wait(Pattern),
}

/// A series' key: location, procedure ([`ALL`], [`OUTSIDE`] or a name), metric, other.
type Key = (LocId, StrId, Metric, Other);

/// How the fold classes a procedure by its name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// MPI_Init and MPI_Finalize: the library starting and stopping, neither computing
    /// nor communicating (their waits are wait states of their own).
    Setup,
    Comm,
    Io,
    Other,
}

fn class_of(name: &str) -> Class {
    // POSIX and C stream I/O, and MPI-IO (MPI_File_*: the MPI library, but I/O work).
    const IO: [&str; 16] = [
        "read",
        "write",
        "pread",
        "pwrite",
        "readv",
        "writev",
        "open",
        "close",
        "fsync",
        "fread",
        "fwrite",
        "fopen",
        "fclose",
        "fflush",
        "lseek",
        "fdatasync",
    ];
    let lower = name.to_ascii_lowercase();
    let lower = lower.trim_end_matches('_');
    if ["mpi_init", "mpi_init_thread", "mpi_finalize", "pmpi_init", "pmpi_init_thread", "pmpi_finalize"]
        .contains(&lower)
    {
        Class::Setup
    } else if IO.contains(&lower) || lower.starts_with("mpi_file_") || lower.starts_with("pmpi_file_") {
        Class::Io
    } else if lower.starts_with("mpi_") || lower.starts_with("pmpi_") || lower.starts_with("pvm_") {
        Class::Comm
    } else {
        Class::Other
    }
}

#[derive(Default)]
struct LocFold {
    /// Open procedures and the call path each opened.
    stack: Vec<(StrId, u32)>,
    /// Per call path: 1 + the index in `CubeFold::charges` of the series an interval
    /// under it goes to on this location (0: not made yet).
    charges: Vec<u32>,
    last: Option<i64>,
    recv_begin: Option<i64>,
    coll_begin: Option<i64>,
}

impl LocFold {
    fn path(&self) -> u32 {
        self.stack.last().map_or(0, |f| f.1)
    }

    fn procs(&self) -> Vec<StrId> {
        self.stack.iter().map(|f| f.0).collect()
    }
}

/// The fold over the events (one [`spoor_report::Observer`]).
pub struct CubeFold {
    grid: Grid,
    series: FxHashMap<Key, usize>,
    locs: Vec<LocFold>,
    /// Call paths as a tree (path 0: outside every procedure; each path is a procedure
    /// under its parent path, found through `path_ids`): per path, the metric an
    /// interval under it is charged to besides time (`None` inside set-up calls).
    paths: Vec<Option<Metric>>,
    path_ids: CallPaths,
    /// Series lists: where an interval of a (location, call path) pair is charged, and
    /// where each key of `lists` is.
    charges: Vec<Box<[usize]>>,
    /// The series lists of charges other than a location's plain intervals.
    lists: FxHashMap<ListKey, usize>,
    /// Per series list, the grid series its intervals are summed in during the pass
    /// (one add an interval, not one a series of the list), spread over the list at the
    /// end.
    charge_sums: Vec<usize>,
    /// Each procedure's class, by string id (`None`: not yet looked up).
    classes: Vec<Option<Class>>,
    phases: FxHashMap<StrId, (i64, i64)>,
    has_io: bool,
    /// Whether another location spawned a process or thread (see [`Cube::spawns`]).
    spawns: bool,
    /// The earliest and latest activity event.
    span: Option<(i64, i64)>,
}

impl CubeFold {
    pub fn new(defs: &Definitions) -> CubeFold {
        let mut locs = Vec::new();
        locs.resize_with(defs.locations.len(), LocFold::default);
        CubeFold {
            grid: Grid::new(BINS),
            series: FxHashMap::default(),
            locs,
            paths: vec![Some(Metric::Compute)],
            path_ids: CallPaths::default(),
            charges: Vec::new(),
            charge_sums: Vec::new(),
            lists: FxHashMap::default(),
            classes: Vec::new(),
            phases: FxHashMap::default(),
            has_io: false,
            spawns: false,
            span: None,
        }
    }

    fn class(&mut self, defs: &Definitions, proc: StrId) -> Class {
        let i = proc as usize;
        if let Some(Some(c)) = self.classes.get(i) {
            return *c;
        }
        let c = class_of(&defs.strings.name(proc));
        if i < defs.strings.len() {
            if i >= self.classes.len() {
                self.classes.resize(i + 1, None);
            }
            self.classes[i] = Some(c);
        }
        c
    }

    /// The series of `key`, made if new.
    fn series_of(&mut self, key: Key) -> usize {
        if let Some(&s) = self.series.get(&key) {
            return s;
        }
        let s = self.grid.add_series();
        self.series.insert(key, s);
        s
    }

    /// The series of `metric` for `loc` as a whole and every distinct procedure of
    /// `procs` (outermost first; none: outside every procedure).
    fn series_list(
        &mut self,
        loc: LocId,
        procs: &[StrId],
        metric: Metric,
        partner: Other,
        out: &mut Vec<usize>,
    ) {
        out.push(self.series_of((loc, ALL, metric, partner)));
        if procs.is_empty() {
            out.push(self.series_of((loc, OUTSIDE, metric, partner)));
        }
        for (k, &p) in procs.iter().enumerate() {
            if !procs[..k].contains(&p) {
                out.push(self.series_of((loc, p, metric, partner)));
            }
        }
    }

    /// Charges `[t0, t1)` of what `key` names to its location as a whole and to every
    /// distinct procedure of its call path (`procs` gives them, outermost first, the
    /// first time the key is seen): one add to the key's sum, spread at the end.
    fn charge(&mut self, key: ListKey, procs: impl FnOnce(&Self) -> Vec<StrId>, t0: i64, t1: i64) {
        if t1 <= t0 {
            return;
        }
        let k = match self.lists.get(&key) {
            Some(&k) => k,
            None => {
                let procs = procs(self);
                let mut list = Vec::new();
                for o in key.others() {
                    self.series_list(key.loc, &procs, key.metric, o, &mut list);
                }
                let k = self.new_list(list);
                self.lists.insert(key, k);
                k
            }
        };
        self.grid.add_interval(self.charge_sums[k], t0, t1, (t1 - t0) as f64);
    }

    /// A new series list, with the grid series its charges are summed in.
    fn new_list(&mut self, list: Vec<usize>) -> usize {
        self.charges.push(list.into_boxed_slice());
        let sum = self.grid.add_series();
        self.charge_sums.push(sum);
        self.charges.len() - 1
    }

    /// The index in `charges` of where an interval on `l` under its current call path
    /// goes: time to the location and every procedure on the stack; computing to the
    /// innermost procedure only (what a rebalance or a faster kernel changes),
    /// communication and I/O to every caller too (`exchange` calls MPI).
    fn charges_of(&mut self, l: usize) -> usize {
        let path = self.locs[l].path() as usize;
        if let Some(&k) = self.locs[l].charges.get(path).filter(|&&k| k > 0) {
            return k as usize - 1;
        }
        let procs = self.locs[l].procs();
        let mut list = Vec::new();
        self.series_list(l as LocId, &procs, Metric::Time, NO_PARTNER, &mut list);
        if let Some(class) = self.paths[path] {
            let own =
                if class == Metric::Compute { &procs[procs.len().saturating_sub(1)..] } else { &procs[..] };
            self.series_list(l as LocId, own, class, NO_PARTNER, &mut list);
        }
        let k = self.new_list(list);
        let c = &mut self.locs[l].charges;
        if c.len() <= path {
            c.resize(path + 1, 0);
        }
        c[path] = k as u32 + 1;
        k
    }

    fn interval(&mut self, l: usize, t0: i64, t1: i64) {
        if t1 <= t0 {
            return;
        }
        let k = self.charges_of(l);
        self.grid.add_interval(self.charge_sums[k], t0, t1, (t1 - t0) as f64);
    }

    fn enter(&mut self, defs: &Definitions, l: usize, proc: StrId) {
        let parent = self.locs[l].path();
        let next = self.paths.len() as u32;
        let path = self.path_ids.child(parent, proc);
        if path == next {
            let class = self.class(defs, proc);
            self.has_io |= class == Class::Io;
            // Set-up beats communication, which beats I/O, which beats computing.
            let class = match (self.paths[parent as usize], class) {
                (None, _) | (_, Class::Setup) => None,
                (Some(Metric::Comm), _) | (_, Class::Comm) => Some(Metric::Comm),
                (Some(Metric::Io), _) | (_, Class::Io) => Some(Metric::Io),
                _ => Some(Metric::Compute),
            };
            self.paths.push(class);
        }
        self.locs[l].stack.push((proc, path));
    }

    fn leave(&mut self, l: usize, proc: StrId) {
        // Close up to the matching frame (a missing leave closes inner frames).
        let st = &mut self.locs[l];
        if let Some(pos) = st.stack.iter().rposition(|f| f.0 == proc) {
            st.stack.truncate(pos);
        }
    }

    /// Takes one event (each location's in its order).
    pub fn event(&mut self, defs: &Definitions, e: &Event) {
        // Clock-offset samples carry no activity.
        if matches!(e.kind, Kind::ClockOffset { .. }) {
            return;
        }
        self.span = Some(self.span.map_or((e.wall, e.wall), |(a, b)| (a.min(e.wall), b.max(e.wall))));
        let l = e.loc as usize;
        if l >= self.locs.len() {
            self.locs.resize_with(l + 1, LocFold::default);
        }
        if let Some(t0) = self.locs[l].last {
            self.interval(l, t0, e.wall);
        }
        self.locs[l].last = Some(self.locs[l].last.map_or(e.wall, |t| t.max(e.wall)));
        match &e.kind {
            Kind::Enter { proc } => self.enter(defs, l, *proc),
            Kind::Leave { proc } => self.leave(l, *proc),
            Kind::RecvBegin { .. } => self.locs[l].recv_begin = Some(e.wall),
            Kind::RecvEnd { comm, tag, .. } => {
                let begin = self.locs[l].recv_begin.take();
                let partner =
                    e.ann.partner.and_then(|p| defs.locations.get(p.loc as usize)).map(|p| p.process);
                if let (Some(b), Some(p)) = (begin, partner) {
                    let object = Some(SyncObject { comm: *comm, tag: Some(*tag) });
                    let key = ListKey::of_pass(e.loc, self.locs[l].path(), Metric::Recv, Some(p), object);
                    self.charge(key, |c| c.locs[l].procs(), b, e.wall);
                }
            }
            Kind::CollBegin { .. } => self.locs[l].coll_begin = Some(e.wall),
            Kind::CollEnd { comm, .. } => {
                if let Some(b) = self.locs[l].coll_begin.take() {
                    let object = Some(SyncObject { comm: *comm, tag: None });
                    let key = ListKey::of_pass(e.loc, self.locs[l].path(), Metric::Coll, None, object);
                    self.charge(key, |c| c.locs[l].procs(), b, e.wall);
                }
            }
            Kind::PhaseBegin { name } => {
                let span = self.phases.entry(*name).or_insert((e.wall, e.wall));
                span.0 = span.0.min(e.wall);
            }
            Kind::PhaseEnd { name } => {
                let span = self.phases.entry(*name).or_insert((e.wall, e.wall));
                span.1 = span.1.max(e.wall);
            }
            Kind::ProcessBegin { parent: Some(_) } | Kind::ThreadBegin { parent: Some(_) } => {
                self.spawns |= e.ann.partner.is_some();
            }
            _ => {}
        }
    }

    /// Charges in the wait states of the same trace (`WaitStates::instances` and their
    /// call paths), before [`CubeFold::finish`].
    pub fn add_waits(&mut self, defs: &Definitions, instances: &[Instance], paths: &CallPaths) {
        for i in instances {
            self.wait(defs, paths, i);
        }
    }

    /// The cube, the wait states charged in ([`CubeFold::add_waits`]).
    pub fn finish(self) -> Cube {
        let extent = self.grid.extent().unwrap_or((0, 1, 0));
        // Each series' bins: its own charges, then the sums of the lists that hold it.
        let mut values: Vec<Vec<f64>> = vec![Vec::new(); self.grid.series_count()];
        for &s in self.series.values() {
            values[s] = self.grid.values(s);
        }
        for (list, &sum) in self.charges.iter().zip(&self.charge_sums) {
            let add = self.grid.values(sum);
            for &s in list.iter() {
                values[s].iter_mut().zip(&add).for_each(|(v, a)| *v += a);
            }
        }
        let prefix = values
            .iter()
            .map(|v| {
                let mut acc = 0.0;
                std::iter::once(0.0)
                    .chain(v.iter().map(|x| {
                        acc += x;
                        acc
                    }))
                    .collect()
            })
            .collect();
        let mut procs_of: Vec<Vec<StrId>> = vec![Vec::new(); self.locs.len()];
        let mut partners_of: Vec<Vec<ProcId>> = vec![Vec::new(); self.locs.len()];
        let mut objects_of: Vec<Vec<SyncObject>> = vec![Vec::new(); self.locs.len()];
        for &(l, p, _, other) in self.series.keys() {
            if p != ALL && !procs_of[l as usize].contains(&p) {
                procs_of[l as usize].push(p);
            }
            match other {
                Other::Partner(q) if !partners_of[l as usize].contains(&q) => partners_of[l as usize].push(q),
                Other::Object(o) if !objects_of[l as usize].contains(&o) => objects_of[l as usize].push(o),
                _ => {}
            }
        }
        procs_of.iter_mut().for_each(|v| v.sort_unstable());
        partners_of.iter_mut().for_each(|v| v.sort_unstable());
        objects_of.iter_mut().for_each(|v| v.sort_unstable());
        let mut phases: Vec<(StrId, i64, i64)> =
            self.phases.into_iter().map(|(n, (a, b))| (n, a, b)).collect();
        phases.sort_unstable();
        Cube {
            start: extent.0,
            width: extent.1,
            bins: extent.2,
            series: self.series,
            prefix,
            procs_of,
            partners_of,
            objects_of,
            phases,
            has_io: self.has_io,
            spawns: self.spawns,
            span: self.span.unwrap_or((0, 0)),
        }
    }

    fn wait(&mut self, defs: &Definitions, paths: &CallPaths, i: &Instance) {
        let partner = if point_to_point(i.pattern) {
            i.cause.and_then(|c| defs.locations.get(c.loc as usize)).map(|p| p.process)
        } else {
            None
        };
        let key = ListKey {
            loc: i.loc,
            path: i.callpath,
            of_waits: true,
            metric: Metric::Wait(i.pattern),
            partner,
            object: i.object,
        };
        self.charge(key, |_| paths.get(i.callpath), i.start, i.start + i.duration);
    }
}

/// What a charge goes to: a location under a call path (the wait states' call paths, or
/// the fold's own), a metric, and whom or what it is about.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ListKey {
    loc: LocId,
    path: u32,
    of_waits: bool,
    metric: Metric,
    partner: Option<ProcId>,
    object: Option<SyncObject>,
}

impl ListKey {
    /// A charge made during the pass, under the fold's own call path.
    fn of_pass(
        loc: LocId,
        path: u32,
        metric: Metric,
        partner: Option<ProcId>,
        object: Option<SyncObject>,
    ) -> ListKey {
        ListKey { loc, path, of_waits: false, metric, partner, object }
    }

    /// The series it charges about: its partner, its communicator and its tag on it, and
    /// for a wait also nobody (a wait counts in the location's own waiting).
    fn others(&self) -> Vec<Other> {
        let mut v: Vec<Other> = self.partner.map(Other::Partner).into_iter().collect();
        if let Some(o) = self.object {
            v.push(Other::Object(SyncObject { comm: o.comm, tag: None }));
            if o.tag.is_some() {
                v.push(Other::Object(o));
            }
        }
        if self.of_waits {
            v.push(Other::None);
        }
        v
    }
}

impl spoor_report::Observer for CubeFold {
    fn event(&mut self, defs: &Definitions, e: &Event) {
        CubeFold::event(self, defs, e);
    }
}

/// Patterns of one sender and one receiver: their waits have a partner.
pub fn point_to_point(p: Pattern) -> bool {
    matches!(p, Pattern::LateSender | Pattern::LateSenderWrongOrder | Pattern::LateReceiver)
}

/// A range of time bins, `[b0, b1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bins(pub usize, pub usize);

/// The folded metrics, with prefix sums over the bins.
pub struct Cube {
    /// The first bin's start and every bin's width (ns), and the number of bins.
    pub start: i64,
    pub width: i64,
    pub bins: usize,
    series: FxHashMap<Key, usize>,
    prefix: Vec<Vec<f64>>,
    /// The procedures (and [`OUTSIDE`]) seen on each location, and the partners.
    pub procs_of: Vec<Vec<StrId>>,
    pub partners_of: Vec<Vec<ProcId>>,
    /// The synchronization objects (communicators and their tags) seen on each location.
    pub objects_of: Vec<Vec<SyncObject>>,
    /// Each phase's name and its earliest begin and latest end.
    pub phases: Vec<(StrId, i64, i64)>,
    /// Whether any I/O call was seen.
    pub has_io: bool,
    /// Whether another location spawned a process or thread (a begin with its parent's
    /// event as partner): the PAG then has spawn arcs, found only once it is whole.
    pub spawns: bool,
    /// The earliest and latest activity event (ns).
    pub span: (i64, i64),
}

impl Cube {
    /// The sum of one series over `bins` (0 for a series never charged).
    pub fn sum(&self, loc: LocId, proc: StrId, metric: Metric, partner: Other, bins: Bins) -> f64 {
        match self.series.get(&(loc, proc, metric, partner)) {
            Some(&s) => {
                let p = &self.prefix[s];
                let (a, b) = (bins.0.min(self.bins), bins.1.min(self.bins));
                if b > a {
                    p[b] - p[a]
                } else {
                    0.0
                }
            }
            None => 0.0,
        }
    }

    /// Every bin.
    pub fn whole(&self) -> Bins {
        Bins(0, self.bins)
    }

    /// The bins that `[t0, t1]` falls in.
    pub fn bins_of(&self, t0: i64, t1: i64) -> Bins {
        let at =
            |t: i64| ((t - self.start).div_euclid(self.width.max(1))).clamp(0, self.bins as i64) as usize;
        Bins(at(t0), (at(t1) + 1).min(self.bins))
    }

    /// The time `[start, end)` of `bins`, within the run (the first and the last bin may
    /// reach past its ends: bins are aligned on multiples of their width).
    pub fn time_of(&self, bins: Bins) -> (i64, i64) {
        let (a, b) = (self.start + bins.0 as i64 * self.width, self.start + bins.1 as i64 * self.width);
        let (first, last) = self.span;
        (a.clamp(first, last), b.clamp(first, last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procedures_are_classed_by_name() {
        for (name, class) in [
            ("MPI_Recv", Class::Comm),
            ("MPI_Init", Class::Setup),
            ("mpi_finalize_", Class::Setup),
            ("pmpi_allreduce_", Class::Comm),
            ("pvm_send", Class::Comm),
            ("MPI_File_write_all", Class::Io),
            ("fwrite", Class::Io),
            ("read", Class::Io),
            ("readInput", Class::Other),
            ("main", Class::Other),
        ] {
            assert!(class_of(name) == class, "{name}");
        }
    }
}
