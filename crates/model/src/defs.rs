use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

/// Index into the string table.
pub type StrId = u32;

/// How reports name time spent outside every procedure.
pub const OUTSIDE_ANY_PROCEDURE: &str = "(outside any procedure)";
/// Index of a location (one thread of one process): the stream an event belongs to.
pub type LocId = u32;
/// Index of an application.
pub type AppId = u32;
/// Index of a machine.
pub type MachineId = u32;
/// Index of a process.
pub type ProcId = u32;
/// Index of a communicator.
pub type CommId = u32;
/// Index of a metric.
pub type MetricId = u32;

/// Interned names. Strings are unique: one id per distinct text, so a
/// name identifies its id and the text form can name strings instead of numbering them.
/// Each text is allocated once, shared by the id order and the lookup map: a
/// Paraver header may declare millions of threads, each named.
#[derive(Clone, Debug, Default)]
pub struct StringTable {
    strings: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, StrId>,
}

/// Tables are equal when their strings are, in id order (the lookup map follows from them).
impl PartialEq for StringTable {
    fn eq(&self, other: &Self) -> bool {
        self.strings == other.strings
    }
}

impl Eq for StringTable {}

impl StringTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `s`, adding it if it is new.
    pub fn intern(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.strings.len() as StrId;
        let text: Arc<str> = Arc::from(s);
        self.strings.push(Arc::clone(&text));
        self.ids.insert(text, id);
        id
    }

    /// Makes room for `additional` more strings.
    pub fn reserve(&mut self, additional: usize) {
        self.strings.reserve(additional);
        self.ids.reserve(additional);
    }

    /// The id of `s`, if the table holds it (without adding it).
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        self.ids.get(s).copied()
    }

    /// The text of `id`, if the table holds it.
    pub fn get(&self, id: StrId) -> Option<&str> {
        self.strings.get(id as usize).map(|s| &**s)
    }

    /// The text of `id`, or `"?<id>"` for an id the table does not hold.
    pub fn name(&self, id: StrId) -> std::borrow::Cow<'_, str> {
        match self.get(id) {
            Some(s) => s.into(),
            None => format!("?{id}").into(),
        }
    }

    /// How many strings the table holds (ids are `0..len`).
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// True when the table holds no string.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// The strings in id order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.strings.iter().map(|s| &**s)
    }
}

impl Serialize for StringTable {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// An application: a program run, with its own logical tree of processes (IPS-2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Application {
    /// The application's name.
    pub name: StrId,
}

/// A machine (node) of the physical tree, shared by all applications.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Machine {
    /// The machine's name (its host name where recorded).
    pub name: StrId,
}

/// A process of an application, placed on a machine. `rank` is its rank in
/// its application (the MPI world rank where there is one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Process {
    /// The process's name.
    pub name: StrId,
    /// The application it belongs to.
    pub app: AppId,
    /// The machine it ran on.
    pub machine: MachineId,
    /// Its rank in its application.
    pub rank: u32,
}

/// A location: one thread of a process. Every event belongs to one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The location's own name (the thread's).
    pub name: StrId,
    /// The process the thread belongs to.
    pub process: ProcId,
    /// Thread number within the process (0 is the main thread).
    pub thread: u32,
}

/// How a PVM group's communicator is named: this, then the group's name.
///
/// A group's members come and go while the program runs, and each task sees them at its
/// own moments, so a task's definition of a group may miss members; merging gives the
/// group one communicator with every member any task saw.
pub const PVM_GROUP_PREFIX: &str = "pvm group ";

/// A communicator: `members[i]` is the location of the communicator's rank `i`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Communicator {
    /// The communicator's name.
    pub name: StrId,
    /// The location of each rank, in rank order.
    pub members: Vec<LocId>,
}

impl Communicator {
    /// Appends the locations it does not list yet, in the order given: an open group's
    /// members as more of them are seen (`PVM_GROUP_PREFIX`).
    pub fn add_members(&mut self, locs: impl IntoIterator<Item = LocId>) {
        for loc in locs {
            if !self.members.contains(&loc) {
                self.members.push(loc);
            }
        }
    }
}

/// A metric whose samples are external data (IPS-2) attached to a location.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Metric {
    /// The metric's name.
    pub name: StrId,
    /// The unit its values are in.
    pub unit: StrId,
}

/// Everything events refer to by id.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Definitions {
    /// Every name the other definitions and the events refer to.
    pub strings: StringTable,
    /// Applications, indexed by `AppId`.
    pub apps: Vec<Application>,
    /// Machines, indexed by `MachineId`.
    pub machines: Vec<Machine>,
    /// Processes, indexed by `ProcId`.
    pub processes: Vec<Process>,
    /// Locations, indexed by `LocId`.
    pub locations: Vec<Location>,
    /// Communicators, indexed by `CommId`.
    pub comms: Vec<Communicator>,
    /// Metrics, indexed by `MetricId`.
    pub metrics: Vec<Metric>,
    /// Free-form key/value pairs about the run (creator, command line, clock source).
    pub properties: Vec<(StrId, StrId)>,
}

/// The kinds of definitions, to say which one is at fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefKind {
    /// An application.
    App,
    /// A machine.
    Machine,
    /// A process.
    Process,
    /// A location.
    Location,
    /// A communicator.
    Comm,
    /// A metric.
    Metric,
    /// A property.
    Property,
}

/// A definition that refers to an id that does not exist: the definition (its kind
/// and index in its list) and what it refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DanglingRef {
    /// The kind of the faulty definition.
    pub kind: DefKind,
    /// Its index in its list.
    pub index: usize,
    /// What it refers to that does not exist, in words.
    pub what: String,
}

impl std::fmt::Display for DanglingRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.what)
    }
}

impl Definitions {
    /// No definitions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an application; its id.
    pub fn add_app(&mut self, name: &str) -> AppId {
        let name = self.strings.intern(name);
        self.apps.push(Application { name });
        (self.apps.len() - 1) as AppId
    }

    /// Adds a machine; its id.
    pub fn add_machine(&mut self, name: &str) -> MachineId {
        let name = self.strings.intern(name);
        self.machines.push(Machine { name });
        (self.machines.len() - 1) as MachineId
    }

    /// Adds a process of `app` on `machine`; its id.
    pub fn add_process(&mut self, name: &str, app: AppId, machine: MachineId, rank: u32) -> ProcId {
        let name = self.strings.intern(name);
        self.processes.push(Process { name, app, machine, rank });
        (self.processes.len() - 1) as ProcId
    }

    /// Makes room for `additional` more locations, each with its own name.
    pub fn reserve_locations(&mut self, additional: usize) {
        self.locations.reserve(additional);
        self.strings.reserve(additional);
    }

    /// Adds thread `thread` of `process`; its location id.
    pub fn add_location(&mut self, name: &str, process: ProcId, thread: u32) -> LocId {
        let name = self.strings.intern(name);
        self.locations.push(Location { name, process, thread });
        (self.locations.len() - 1) as LocId
    }

    /// Adds a communicator of `members` (the location of each rank); its id.
    pub fn add_comm(&mut self, name: &str, members: Vec<LocId>) -> CommId {
        let name = self.strings.intern(name);
        self.comms.push(Communicator { name, members });
        (self.comms.len() - 1) as CommId
    }

    /// Adds a metric; its id.
    pub fn add_metric(&mut self, name: &str, unit: &str) -> MetricId {
        let name = self.strings.intern(name);
        let unit = self.strings.intern(unit);
        self.metrics.push(Metric { name, unit });
        (self.metrics.len() - 1) as MetricId
    }

    /// Sets `key` to `value`, replacing an earlier value.
    pub fn set_property(&mut self, key: &str, value: &str) {
        let k = self.strings.intern(key);
        let v = self.strings.intern(value);
        match self.properties.iter_mut().find(|(pk, _)| *pk == k) {
            Some(p) => p.1 = v,
            None => self.properties.push((k, v)),
        }
    }

    /// The value of `key`, if set.
    pub fn property(&self, key: &str) -> Option<&str> {
        let k = self.strings.lookup(key)?;
        let (_, v) = self.properties.iter().find(|(pk, _)| *pk == k)?;
        self.strings.get(*v)
    }

    /// The process a location belongs to, if both exist.
    pub fn process_of(&self, loc: LocId) -> Option<&Process> {
        let l = self.locations.get(loc as usize)?;
        self.processes.get(l.process as usize)
    }

    /// A location's own name as its definition holds it; `None` when the location or
    /// its string is not defined. The forms below are built on it.
    pub fn location_own_name(&self, loc: LocId) -> Option<&str> {
        self.locations.get(loc as usize).and_then(|l| self.strings.get(l.name))
    }

    /// A location's own name for tables (`location N` for one not defined).
    pub fn location_name(&self, loc: LocId) -> String {
        match self.locations.get(loc as usize) {
            Some(l) => self.strings.name(l.name).into_owned(),
            None => format!("location {loc}"),
        }
    }

    /// A location for messages, its number always given: `rank1 (location 1)`, or
    /// `location 7` when it has no name.
    pub fn location_described(&self, loc: LocId) -> String {
        match self.location_own_name(loc) {
            Some(n) if !n.is_empty() => format!("{n} (location {loc})"),
            _ => format!("location {loc}"),
        }
    }

    /// A location as a reader knows it: its process's name, then the location's own
    /// name when it differs (`MPI Rank 3/Master thread`, `rank0`); `location N` when
    /// it is not defined.
    pub fn location_label(&self, loc: LocId) -> String {
        let Some(l) = self.locations.get(loc as usize) else { return format!("location {loc}") };
        let own = self.strings.name(l.name);
        match self.processes.get(l.process as usize).map(|p| self.strings.name(p.name)) {
            Some(p) if p != own && !own.is_empty() => format!("{p}/{own}"),
            Some(p) => p.into_owned(),
            None => own.into_owned(),
        }
    }

    /// Checks that every id a definition refers to exists.
    pub fn check(&self) -> Result<(), DanglingRef> {
        let n = self.strings.len() as u32;
        let bad = |kind: DefKind, index: usize, what: String| Err(DanglingRef { kind, index, what });
        // The context is named only on failure: checking costs no allocation.
        let s =
            |id: StrId, kind: DefKind, index: usize, ctx: &dyn Fn() -> String| -> Result<(), DanglingRef> {
                if id < n {
                    Ok(())
                } else {
                    bad(kind, index, format!("{} names string {id}, but the string table has {n}", ctx()))
                }
            };
        for (i, a) in self.apps.iter().enumerate() {
            s(a.name, DefKind::App, i, &|| format!("application {i}"))?;
        }
        for (i, m) in self.machines.iter().enumerate() {
            s(m.name, DefKind::Machine, i, &|| format!("machine {i}"))?;
        }
        for (i, p) in self.processes.iter().enumerate() {
            s(p.name, DefKind::Process, i, &|| format!("process {i}"))?;
            if p.app as usize >= self.apps.len() {
                let what = format!("process {i} belongs to application {}, which is not defined", p.app);
                return bad(DefKind::Process, i, what);
            }
            if p.machine as usize >= self.machines.len() {
                let what = format!("process {i} runs on machine {}, which is not defined", p.machine);
                return bad(DefKind::Process, i, what);
            }
        }
        for (i, l) in self.locations.iter().enumerate() {
            s(l.name, DefKind::Location, i, &|| format!("location {i}"))?;
            if l.process as usize >= self.processes.len() {
                let what = format!("location {i} belongs to process {}, which is not defined", l.process);
                return bad(DefKind::Location, i, what);
            }
        }
        for (i, c) in self.comms.iter().enumerate() {
            s(c.name, DefKind::Comm, i, &|| format!("communicator {i}"))?;
            if let Some(m) = c.members.iter().find(|&&m| m as usize >= self.locations.len()) {
                let what = format!("communicator {i} has member location {m}, which is not defined");
                return bad(DefKind::Comm, i, what);
            }
        }
        for (i, m) in self.metrics.iter().enumerate() {
            s(m.name, DefKind::Metric, i, &|| format!("metric {i}"))?;
            s(m.unit, DefKind::Metric, i, &|| format!("metric {i}"))?;
        }
        for (i, (k, v)) in self.properties.iter().enumerate() {
            s(*k, DefKind::Property, i, &|| "a property".into())?;
            s(*v, DefKind::Property, i, &|| "a property".into())?;
        }
        Ok(())
    }
}
