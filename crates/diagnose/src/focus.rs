//! The where axis: resource hierarchies and foci (formats/diagnose.md, "Foci").
//!
//! Four hierarchies: the code (`/Code/PROCEDURE`), the places (`/Machine/M/P/T`:
//! machine, process, thread), the message partners (`/Partner/P`) and the
//! synchronization objects (`/SyncObject/COMM/tag T`: communicator, then tag). A focus
//! picks one node of each, but a partner and a synchronization object not both (the cube
//! keeps no cross product); `/` is the root of all. A hierarchy level that tells nothing new is
//! skipped, as Karavanic's general prunes do: machines when each holds one process,
//! threads when a process has one.

use crate::cube::{Cube, Metric, ALL, NO_PARTNER};
use spoor_waits::SyncObject;

/// The share of a place's time above which a procedure is not a code focus of its own.
const PASS_THROUGH: f64 = 0.95;
use serde::Serialize;
use spoor_model::{Definitions, LocId, MachineId, ProcId, StrId};
use spoor_waits::OUTSIDE;

/// A node of the place hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Place {
    All,
    Machine(MachineId),
    Process(ProcId),
    Thread(LocId),
}

/// One node of each hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Focus {
    pub code: Option<StrId>,
    pub place: Place,
    pub partner: Option<ProcId>,
    pub object: Option<SyncObject>,
}

impl Focus {
    pub const ROOT: Focus = Focus { code: None, place: Place::All, partner: None, object: None };

    pub fn is_root(&self) -> bool {
        *self == Focus::ROOT
    }

    /// The procedure the cube charges (`ALL` at the code root).
    pub fn proc(&self) -> StrId {
        self.code.unwrap_or(ALL)
    }
}

/// The hierarchies of one trace: names and the tree.
pub struct Resources<'a> {
    defs: &'a Definitions,
    /// Locations of each process.
    locs_of: Vec<Vec<LocId>>,
    /// Processes of each machine.
    procs_on: Vec<Vec<ProcId>>,
    /// Whether the machine level tells something (some machine holds two processes).
    machines_matter: bool,
    /// Procedures spanning nearly all of the program's time, sorted.
    pass_through: Vec<StrId>,
    /// The communicators seen, and the tags seen on each (sorted): a level with one
    /// node tells nothing new and is skipped.
    comms: Vec<spoor_model::CommId>,
    tags: Vec<SyncObject>,
}

impl<'a> Resources<'a> {
    pub fn new(defs: &'a Definitions, cube: &Cube) -> Resources<'a> {
        let mut locs_of = vec![Vec::new(); defs.processes.len()];
        for (l, loc) in defs.locations.iter().enumerate() {
            if let Some(v) = locs_of.get_mut(loc.process as usize) {
                v.push(l as LocId);
            }
        }
        let mut procs_on = vec![Vec::new(); defs.machines.len()];
        for (p, proc) in defs.processes.iter().enumerate() {
            if let Some(v) = procs_on.get_mut(proc.machine as usize) {
                v.push(p as ProcId);
            }
        }
        let machines_matter = procs_on.len() > 1 && procs_on.iter().any(|v| v.len() > 1);
        let mut time: std::collections::BTreeMap<StrId, f64> = Default::default();
        for (l, procs) in cube.procs_of.iter().enumerate() {
            for &p in procs.iter().chain([&ALL]) {
                *time.entry(p).or_default() +=
                    cube.sum(l as LocId, p, Metric::Time, NO_PARTNER, cube.whole());
            }
        }
        let all = time.get(&ALL).copied().unwrap_or(0.0);
        let pass_through =
            time.iter().filter(|(&p, &t)| p != ALL && t >= PASS_THROUGH * all).map(|(&p, _)| p).collect();
        let mut objects: Vec<SyncObject> = cube.objects_of.iter().flatten().copied().collect();
        objects.sort_unstable();
        objects.dedup();
        let comms = objects.iter().filter(|o| o.tag.is_none()).map(|o| o.comm).collect();
        let tags = objects.into_iter().filter(|o| o.tag.is_some()).collect();
        Resources { defs, locs_of, procs_on, machines_matter, pass_through, comms, tags }
    }

    /// Whether communicator `comm` holds messages of more than one tag.
    fn tags_matter(&self, comm: spoor_model::CommId) -> bool {
        self.tags.iter().filter(|o| o.comm == comm).nth(1).is_some()
    }

    pub fn defs(&self) -> &Definitions {
        self.defs
    }

    /// The locations a place covers.
    pub fn locations(&self, place: Place) -> Vec<LocId> {
        match place {
            Place::All => (0..self.defs.locations.len() as LocId).collect(),
            Place::Machine(m) => self
                .procs_on
                .get(m as usize)
                .into_iter()
                .flatten()
                .flat_map(|&p| self.locs_of[p as usize].iter().copied())
                .collect(),
            Place::Process(p) => self.locs_of.get(p as usize).cloned().unwrap_or_default(),
            Place::Thread(l) => vec![l],
        }
    }

    /// The locations of process `p`.
    pub fn locations_of(&self, p: ProcId) -> &[LocId] {
        self.locs_of.get(p as usize).map_or(&[], Vec::as_slice)
    }

    /// The children of a place.
    pub fn place_children(&self, place: Place) -> Vec<Place> {
        match place {
            Place::All if self.machines_matter => (0..self.procs_on.len() as MachineId)
                .filter(|&m| !self.procs_on[m as usize].is_empty())
                .map(Place::Machine)
                .collect(),
            Place::All => (0..self.locs_of.len() as ProcId)
                .filter(|&p| !self.locs_of[p as usize].is_empty())
                .map(Place::Process)
                .collect(),
            Place::Machine(m) => {
                self.procs_on.get(m as usize).into_iter().flatten().map(|&p| Place::Process(p)).collect()
            }
            Place::Process(p) => match self.locs_of.get(p as usize) {
                Some(v) if v.len() > 1 => v.iter().map(|&l| Place::Thread(l)).collect(),
                _ => Vec::new(),
            },
            Place::Thread(_) => Vec::new(),
        }
    }

    /// What `per_loc` holds for the place's locations, sorted, once each.
    fn gathered<T: Copy + Ord>(&self, place: Place, per_loc: &[Vec<T>]) -> Vec<T> {
        let mut v: Vec<T> = self
            .locations(place)
            .iter()
            .flat_map(|&l| per_loc.get(l as usize).into_iter().flatten().copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The procedures seen on the place's locations, but those that span nearly all of
    /// the program's time (`main`): a focus on them says nothing a place does not.
    pub fn code_children(&self, cube: &Cube, place: Place) -> Vec<StrId> {
        let mut v = self.gathered(place, &cube.procs_of);
        v.retain(|p| self.pass_through.binary_search(p).is_err());
        v
    }

    /// The partners of the place's locations.
    pub fn partner_children(&self, cube: &Cube, place: Place) -> Vec<ProcId> {
        self.gathered(place, &cube.partners_of)
    }

    /// The synchronization objects below `object` on the place's locations: the
    /// communicators below none, a communicator's tags below it. A level that tells
    /// nothing new is skipped, as the machines are: below none, the tags of the only
    /// communicator there is; no tags when a communicator's messages have one.
    pub fn object_children(&self, cube: &Cube, place: Place, object: Option<SyncObject>) -> Vec<SyncObject> {
        let comm = match object {
            None if self.comms.len() > 1 => {
                let mut v = self.gathered(place, &cube.objects_of);
                v.retain(|o| o.tag.is_none());
                return v;
            }
            None => match self.comms.first() {
                Some(&c) => c,
                None => return Vec::new(),
            },
            Some(SyncObject { comm, tag: None }) => comm,
            Some(_) => return Vec::new(),
        };
        if !self.tags_matter(comm) {
            return Vec::new();
        }
        let mut v = self.gathered(place, &cube.objects_of);
        v.retain(|o| o.comm == comm && o.tag.is_some());
        v
    }

    fn comm_name(&self, c: spoor_model::CommId) -> String {
        self.defs
            .comms
            .get(c as usize)
            .map_or_else(|| format!("?{c}"), |q| self.defs.strings.name(q.name).into_owned())
    }

    /// A synchronization object's path: `/SyncObject/MPI_COMM_WORLD/tag 7`.
    pub fn object_name(&self, o: SyncObject) -> String {
        match o.tag {
            Some(t) => format!("/SyncObject/{}/tag {t}", self.comm_name(o.comm)),
            None => format!("/SyncObject/{}", self.comm_name(o.comm)),
        }
    }

    fn find_object(&self, path: &str) -> Result<SyncObject, String> {
        let (comm, tag) = match path.rsplit_once("/tag ") {
            Some((c, t)) => {
                let tag = t.parse::<u32>().map_err(|_| format!("`{path}`: `{t}` is not a tag (a number)"))?;
                (c, Some(tag))
            }
            None => (path, None),
        };
        let found = (0..self.defs.comms.len() as spoor_model::CommId).find(|&c| self.comm_name(c) == comm);
        let comm = found.ok_or_else(|| {
            let names: Vec<String> = (0..self.defs.comms.len().min(20) as spoor_model::CommId)
                .map(|c| self.comm_name(c))
                .collect();
            let list = if names.is_empty() { "the trace has none".to_owned() } else { names.join(", ") };
            format!("no communicator `{comm}`; the communicators are: {list}")
        })?;
        Ok(SyncObject { comm, tag })
    }

    fn proc_name(&self, p: StrId) -> String {
        spoor_waits::proc_name(self.defs, p)
    }

    fn process_name(&self, p: ProcId) -> String {
        self.defs
            .processes
            .get(p as usize)
            .map_or_else(|| format!("?{p}"), |q| self.defs.strings.name(q.name).into_owned())
    }

    fn machine_name(&self, m: MachineId) -> String {
        self.defs
            .machines
            .get(m as usize)
            .map_or_else(|| format!("?{m}"), |q| self.defs.strings.name(q.name).into_owned())
    }

    /// A place's path: `/Machine/node0/rank 3/thread 1` (machines only where they matter).
    pub fn place_name(&self, place: Place) -> String {
        let process_path = |p: ProcId| {
            let q = self.defs.processes.get(p as usize);
            match q {
                Some(q) if self.machines_matter => {
                    format!("/Machine/{}/{}", self.machine_name(q.machine), self.process_name(p))
                }
                _ => format!("/Process/{}", self.process_name(p)),
            }
        };
        match place {
            Place::All => "/".into(),
            Place::Machine(m) => format!("/Machine/{}", self.machine_name(m)),
            Place::Process(p) => process_path(p),
            Place::Thread(l) => {
                let p = self.defs.locations.get(l as usize).map_or(0, |x| x.process);
                format!("{}/{}", process_path(p), self.defs.location_name(l))
            }
        }
    }

    /// A focus as text: its non-root parts joined by `, ` (`/` for the root).
    pub fn focus_name(&self, f: &Focus) -> String {
        let mut parts = Vec::new();
        if let Some(c) = f.code {
            parts.push(format!("/Code/{}", self.proc_name(c)));
        }
        if f.place != Place::All {
            parts.push(self.place_name(f.place));
        }
        if let Some(p) = f.partner {
            parts.push(format!("/Partner/{}", self.process_name(p)));
        }
        if let Some(o) = f.object {
            parts.push(self.object_name(o));
        }
        if parts.is_empty() {
            "/".into()
        } else {
            parts.join(", ")
        }
    }

    /// The focus named `text` (as [`Resources::focus_name`] writes it), or why not.
    pub fn parse_focus(&self, text: &str) -> Result<Focus, String> {
        let text = text.trim();
        let mut f = Focus::ROOT;
        if text == "/" {
            return Ok(f);
        }
        for part in text.split(", ") {
            let part = part.trim();
            if let Some(name) = part.strip_prefix("/Code/") {
                f.code = Some(self.find_proc(name)?);
            } else if let Some(name) = part.strip_prefix("/Partner/") {
                f.partner = Some(self.find_process(name)?);
            } else if let Some(path) = part.strip_prefix("/SyncObject/") {
                f.object = Some(self.find_object(path)?);
            } else if part.starts_with("/Process/") || part.starts_with("/Machine/") {
                f.place = self.find_place(part)?;
            } else {
                return Err(format!(
                    "`{part}` names no resource: expected /, /Code/PROCEDURE, /Process/PROCESS[/THREAD], /Machine/MACHINE[/PROCESS[/THREAD]], /Partner/PROCESS or /SyncObject/COMMUNICATOR[/tag T]"
                ));
            }
        }
        if f.partner.is_some() && f.object.is_some() {
            return Err(format!("`{text}`: a focus names a partner or a synchronization object, not both"));
        }
        Ok(f)
    }

    fn find_proc(&self, name: &str) -> Result<StrId, String> {
        if name == spoor_model::OUTSIDE_ANY_PROCEDURE {
            return Ok(OUTSIDE);
        }
        self.defs.strings.lookup(name).ok_or_else(|| format!("no procedure `{name}` in the trace"))
    }

    fn find_process(&self, name: &str) -> Result<ProcId, String> {
        let found = (0..self.defs.processes.len() as ProcId).find(|&p| self.process_name(p) == name);
        found.ok_or_else(|| {
            let names: Vec<String> =
                (0..self.defs.processes.len().min(20) as ProcId).map(|p| self.process_name(p)).collect();
            format!(
                "no process `{name}`; the processes are: {}{}",
                names.join(", "),
                if self.defs.processes.len() > 20 { ", ..." } else { "" }
            )
        })
    }

    /// Every place's name is its path: the one whose path is `path`.
    fn find_place(&self, path: &str) -> Result<Place, String> {
        let mut todo = vec![Place::All];
        while let Some(p) = todo.pop() {
            if self.place_name(p) == path {
                return Ok(p);
            }
            todo.extend(self.place_children(p));
        }
        let example =
            self.place_children(Place::All).first().map(|&p| self.place_name(p)).unwrap_or_default();
        Err(format!("no place `{path}` in the trace (places are written like `{example}`)"))
    }

    /// Whether `f` is `within` or below it in every hierarchy.
    pub fn is_within(&self, f: &Focus, within: &Focus) -> bool {
        let code = within.code.is_none() || within.code == f.code;
        let partner = within.partner.is_none() || within.partner == f.partner;
        let object = match (within.object, f.object) {
            (None, _) => true,
            (Some(SyncObject { comm, tag: None }), Some(o)) => o.comm == comm,
            (Some(a), Some(b)) => a == b,
            (Some(_), None) => false,
        };
        let place = match (within.place, f.place) {
            (Place::All, _) => true,
            (a, b) if a == b => true,
            (Place::Machine(m), Place::Process(p)) => {
                self.defs.processes.get(p as usize).is_some_and(|q| q.machine == m)
            }
            (Place::Machine(m), Place::Thread(l)) => self.defs.process_of(l).is_some_and(|q| q.machine == m),
            (Place::Process(p), Place::Thread(l)) => {
                self.defs.locations.get(l as usize).is_some_and(|x| x.process == p)
            }
            _ => false,
        };
        code && partner && object && place
    }
}
