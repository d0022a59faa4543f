//! A native reader for OTF2 archives (Score-P's trace format), versions 1.x
//! to 3.x, with no C library at run time.
//!
//! An archive is an anchor file (`traces.otf2`), the global definitions
//! (`traces.def`) and, per location (thread), local definitions
//! (`traces/<id>.def`: mapping tables from local to global ids, clock offsets)
//! and events (`traces/<id>.evt`). [`Otf2Archive::open`] reads the anchor and
//! the global definitions and converts them to spoor [`Definitions`];
//! [`Otf2Archive::read_location`] decodes one location's events,
//! [`Otf2Archive::read_all`] all of them in parallel.
//!
//! # What becomes what
//!
//! Definitions: one application (named after the archive's directory); a
//! machine per system tree node that holds location groups (the node level,
//! e.g. a host); a process per location group, its rank the MPI world rank
//! when the group's locations are in the MPI `COMM_LOCATIONS` group, else the
//! group's index; a location per OTF2 location (thread number = its index in
//! its group); a communicator per OTF2 communicator, its members the spoor
//! locations of its ranks (`MPI_COMM_SELF`-like communicators have no members:
//! rank 0 is resolved to the location the event belongs to); a metric per
//! metric member; properties `otf2.*` (version, creator, clock resolution,
//! global offset, ...) and the anchor's own properties.
//!
//! Events (times converted from ticks to ns since the global offset):
//!
//! | OTF2 | spoor |
//! |---|---|
//! | ENTER / LEAVE | `Enter` / `Leave` (region name) |
//! | MPI_SEND / MPI_ISEND | `Send` / `Isend` (receiver rank mapped to its location) |
//! | MPI_ISEND_COMPLETE | `IsendComplete` |
//! | MPI_IRECV_REQUEST | `IrecvRequest` with the communicator, source and tag of its completion (OTF2 records only the request id); dropped if it never completes |
//! | MPI_IRECV | `IrecvComplete` |
//! | MPI_RECV | `RecvEnd`, plus a synthesized `RecvBegin` (see below) |
//! | MPI_COLLECTIVE_BEGIN / END | `CollBegin` / `CollEnd` (the begin takes the operation and communicator of its end) |
//! | METRIC | one `Metric` per value, scaled by base^exponent |
//! | PROGRAM_BEGIN / END | `ProcessBegin` / `ProcessEnd` |
//! | THREAD_BEGIN / END | `ThreadBegin` (parent found by [`Otf2Archive::read_all`] from THREAD_CREATE) / `ThreadEnd` |
//! | CLOCK_OFFSET (local definition) | `ClockOffset` against location 0, in [`ClockMode::Raw`] |
//! | anything else | counted in [`LocationEvents::skipped`] by its `otf2-print` name |
//!
//! OTF2 has no receive-begin record. With [`Otf2Options::recv_begin`] (the
//! default), a `RecvBegin { from, comm, tag }` carrying the receive's actual
//! source and tag is inserted right after the `Enter` of the innermost open
//! region when that region is a blocking receive (`MPI_Recv`, `MPI_Sendrecv`,
//! `MPI_Sendrecv_replace`, `MPI_Mrecv`), at the Enter's time, so that later
//! stages see the time spent waiting. A receive outside such a region gets no
//! `RecvBegin`. OTF2 events carry no CPU time: `cpu` is always `None`.
//!
//! Skipped (counted): THREAD_FORK / JOIN / TEAM_BEGIN / TEAM_END / CREATE /
//! WAIT, the OpenMP, lock, task, RMA, I/O, calling-context and parameter
//! records, MPI_REQUEST_TEST / CANCELLED, the 3.0 non-blocking collective and
//! communicator create/destroy records, BUFFER_FLUSH, MEASUREMENT_ON_OFF,
//! attribute lists (`"ATTRIBUTE_LIST"`), and records of types this reader does
//! not know (`"UNKNOWN_<type>"`, skipped by their record length).
//!
//! Local mapping tables are applied to region, communicator and metric ids.
//! Metric samples of a metric instance are attributed to the recording location.
//! In [`ClockMode::Raw`] the ClockOffset events carry whole ns: a sample loses
//! less than half a ns, which extrapolation far outside the sampled interval
//! can multiply (a few ns per second of extrapolation on the real archives).
//!
//! # Errors
//!
//! Every error names the file and, for bad content, the byte offset and what
//! was expected; no input panics, and no allocation is sized by a count read
//! from disk before the count has been checked against the bytes that remain.
//! A missing events file is an I/O error naming the location; a missing local
//! definitions file means no mapping tables and no clock offsets. An anchor
//! of a newer OTF2 major version than 3, a zlib-compressed or SION archive is
//! an [`spoor_format::ErrorKind::Version`] error (exit code 3). Events that
//! refer to an undefined region, or to a rank outside their communicator, are
//! errors; events on an undefined communicator (e.g. an OTF2 3.0
//! inter-communicator) are skipped and counted as `"<NAME>(undefined communicator)"`.
//! Each chunk's header announces how many events it holds; a chunk that ends
//! with another number (a truncated or spliced file) is an error.

mod anchor;
mod buf;
mod defs;
mod events;
mod names;

use defs::{group_type, RawDefs, UNDEF32};
use spoor_format::Error;
use spoor_model::{CommId, Definitions, Event, LocId, MetricId, StrId};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

pub use names::event_name;

/// What event times mean.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClockMode {
    /// Each location's own clock, as recorded; the CLOCK_OFFSET samples of the
    /// local definitions become `ClockOffset` events for spoor-align.
    #[default]
    Raw,
    /// Corrected the way OTF2's reader (and `otf2-print`) does: offsets
    /// interpolated linearly between samples (extrapolated outside them) and
    /// added to each timestamp. No `ClockOffset` events are emitted, as the
    /// correction is already applied.
    Corrected,
}

/// How to read an archive.
#[derive(Clone, Debug)]
pub struct Otf2Options {
    pub clock: ClockMode,
    /// Synthesize `RecvBegin` events for blocking receives (see the module docs).
    pub recv_begin: bool,
}

impl Default for Otf2Options {
    fn default() -> Self {
        Otf2Options { clock: ClockMode::Raw, recv_begin: true }
    }
}

/// The archive's timer: `resolution` ticks per second; event times are
/// converted to `(ticks - global_offset) * 1e9 / resolution` ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockInfo {
    pub resolution: u64,
    pub global_offset: u64,
    pub length: u64,
}

impl ClockInfo {
    /// Ticks to ns since the global offset, rounded to the nearest ns.
    #[inline]
    pub fn ticks_to_ns(&self, ticks: u64) -> i64 {
        let d = ticks as i128 - self.global_offset as i128;
        let ns = if self.resolution == 1_000_000_000 {
            d
        } else {
            let r = self.resolution as i128;
            (d * 2_000_000_000 + r).div_euclid(2 * r)
        };
        ns.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// A duration in ticks to ns.
    pub fn span_to_ns(&self, ticks: f64) -> f64 {
        ticks * 1e9 / self.resolution as f64
    }
}

/// One location's decoded events.
#[derive(Clone, Debug, Default)]
pub struct LocationEvents {
    /// The spoor location (index into [`Definitions::locations`]).
    pub loc: LocId,
    /// The events, in the order of the events file.
    pub events: Vec<Event>,
    /// OTF2 records that were read but not converted, counted by their
    /// `otf2-print` name (`"MPI_REQUEST_TEST"`, `"ATTRIBUTE_LIST"`, ...; a
    /// suffix in parentheses says why a record of a converted type was dropped).
    pub skipped: BTreeMap<String, u64>,
    /// OTF2 event records read (converted or not; attribute lists excluded).
    pub records: u64,
    /// THREAD_CREATE records (global thread contingent, sequence count).
    thread_creates: Vec<(u32, u64)>,
    /// THREAD_BEGIN records, in the order of the ThreadBegin events.
    thread_begins: Vec<(u32, u64)>,
}

#[derive(Clone, Debug)]
struct RegionInfo {
    name: StrId,
    blocking_recv: bool,
}

#[derive(Clone, Copy, Debug)]
struct CommInfo {
    id: CommId,
    is_self: bool,
}

#[derive(Clone, Copy, Debug)]
struct MetricSlot {
    id: MetricId,
    scale: f64,
}

/// A table indexed by OTF2 id: a vector when the ids are dense, a hash map otherwise.
#[derive(Debug)]
enum IdTable<T> {
    Dense(Vec<Option<T>>),
    Sparse(HashMap<u32, T>),
}

impl<T> IdTable<T> {
    fn build(items: Vec<(u32, T)>) -> Self {
        let max = items.iter().map(|p| p.0 as usize).max();
        match max {
            Some(m) if m < 2 * items.len() + 1024 => {
                let mut v: Vec<Option<T>> = (0..=m).map(|_| None).collect();
                for (id, t) in items {
                    v[id as usize] = Some(t);
                }
                IdTable::Dense(v)
            }
            None => IdTable::Dense(Vec::new()),
            Some(_) => IdTable::Sparse(items.into_iter().collect()),
        }
    }

    #[inline]
    fn get(&self, id: u32) -> Option<&T> {
        match self {
            IdTable::Dense(v) => v.get(id as usize).and_then(Option::as_ref),
            IdTable::Sparse(m) => m.get(&id),
        }
    }
}

/// What decoding events needs from the definitions, shared by all threads.
#[derive(Debug)]
struct Context {
    clock: ClockInfo,
    /// OTF2 location id of each spoor location.
    otf2_ids: Vec<u64>,
    /// Number of events each location announces (a capacity hint only).
    announced: Vec<u64>,
    regions: IdTable<RegionInfo>,
    comms: IdTable<CommInfo>,
    metrics: IdTable<Vec<MetricSlot>>,
}

/// An OTF2 archive opened for reading.
#[derive(Debug)]
pub struct Otf2Archive {
    anchor_path: PathBuf,
    /// `<dir>/<name>`, the prefix of `.def` and of the location directory.
    stem: PathBuf,
    anchor: anchor::Anchor,
    defs: Definitions,
    options: Otf2Options,
    ctx: Context,
}

fn display(p: &Path) -> String {
    p.display().to_string()
}

/// Reads a whole file into memory through a memory map.
pub(crate) struct Mapped {
    map: Option<memmap2::Mmap>,
}

impl Mapped {
    fn open(path: &Path, name: &str) -> Result<Self, Error> {
        let f = std::fs::File::open(path).map_err(|e| Error::io(name, &e))?;
        let len = f.metadata().map_err(|e| Error::io(name, &e))?.len();
        if len == 0 {
            return Ok(Mapped { map: None });
        }
        // SAFETY: the file is opened read-only and only read through the map;
        // a concurrent writer truncating it would be a misuse of the archive
        // (as with any reader of it).
        let map = unsafe { memmap2::Mmap::map(&f) }.map_err(|e| Error::io(name, &e))?;
        Ok(Mapped { map: Some(map) })
    }

    fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}

const BLOCKING_RECEIVES: [&str; 4] = ["mpi_recv", "mpi_sendrecv", "mpi_sendrecv_replace", "mpi_mrecv"];

impl Otf2Archive {
    /// Opens the archive whose anchor file is `anchor` with the default options.
    pub fn open(anchor: &Path) -> Result<Self, Error> {
        Self::open_with(anchor, Otf2Options::default())
    }

    /// Opens the archive whose anchor file is `anchor`: reads the anchor and
    /// the global definitions.
    pub fn open_with(anchor_path: &Path, options: Otf2Options) -> Result<Self, Error> {
        let anchor_name = display(anchor_path);
        let anchor = anchor::read(anchor_path, &anchor_name)?;
        let dir = anchor_path.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = anchor_path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "traces".into());
        let stem = dir.join(&name);
        let def_path = stem.with_extension("def");
        let def_name = display(&def_path);
        let mapped = Mapped::open(&def_path, &def_name)?;
        let raw = defs::parse_global(mapped.bytes(), &def_name, anchor.chunk_size_defs)?;
        let app_name = std::fs::canonicalize(&dir)
            .ok()
            .and_then(|d| d.file_name().map(|s| s.to_string_lossy().into_owned()))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "otf2".into());
        let (mut defs, ctx) = build(&raw, &anchor, &app_name, &def_name)?;
        let mode = match options.clock {
            ClockMode::Raw => "raw: each location's own clock; CLOCK_OFFSET samples as clock_offset events",
            ClockMode::Corrected => "corrected: OTF2's interpolated clock offsets applied",
        };
        defs.set_property("otf2.clock.mode", mode);
        Ok(Otf2Archive { anchor_path: anchor_path.to_path_buf(), stem, anchor, defs, options, ctx })
    }

    /// The spoor definitions: strings, application, machines, processes,
    /// locations, communicators, metrics, properties.
    pub fn definitions(&self) -> &Definitions {
        &self.defs
    }

    pub fn location_count(&self) -> usize {
        self.ctx.otf2_ids.len()
    }

    /// The OTF2 id of spoor location `index` (what `otf2-print` shows and
    /// what names its files).
    pub fn otf2_location_id(&self, index: usize) -> Option<u64> {
        self.ctx.otf2_ids.get(index).copied()
    }

    /// The archive's OTF2 version (major, minor, bugfix).
    pub fn version(&self) -> (u8, u8, u8) {
        self.anchor.version
    }

    pub fn clock(&self) -> ClockInfo {
        self.ctx.clock
    }

    pub fn options(&self) -> &Otf2Options {
        &self.options
    }

    pub fn anchor_path(&self) -> &Path {
        &self.anchor_path
    }

    /// The events file of location `index`.
    pub fn events_path(&self, index: usize) -> Option<PathBuf> {
        let id = self.otf2_location_id(index)?;
        Some(self.stem.join(format!("{id}.evt")))
    }

    /// The local definitions file of location `index` (it may not exist).
    pub fn local_defs_path(&self, index: usize) -> Option<PathBuf> {
        let id = self.otf2_location_id(index)?;
        Some(self.stem.join(format!("{id}.def")))
    }

    /// Decodes one location: its local definitions (mapping tables, clock
    /// offsets; a missing file means none) and its events file (required).
    pub fn read_location(&self, index: usize) -> Result<LocationEvents, Error> {
        let (Some(evt_path), Some(def_path)) = (self.events_path(index), self.local_defs_path(index)) else {
            return Err(Error::corrupt(
                &display(&self.anchor_path),
                0,
                format!("location index {index}: the archive defines {} locations", self.location_count()),
            ));
        };
        let def_name = display(&def_path);
        let local = match std::fs::metadata(&def_path) {
            Ok(_) => {
                let m = Mapped::open(&def_path, &def_name)?;
                defs::parse_local(m.bytes(), &def_name, self.anchor.chunk_size_defs)?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => defs::LocalDefs::default(),
            Err(e) => return Err(Error::io(&def_name, &e)),
        };
        let evt_name = display(&evt_path);
        let m = Mapped::open(&evt_path, &evt_name).map_err(|mut e| {
            e.message = format!(
                "the events file of location {} (OTF2 location {}) cannot be read: {}",
                index, self.ctx.otf2_ids[index], e.message
            );
            e
        })?;
        events::decode(self, index as LocId, m.bytes(), &evt_name, &local)
    }

    /// Decodes all locations in parallel (rayon), returned in location order,
    /// with thread parents linked (THREAD_CREATE to THREAD_BEGIN).
    pub fn read_all(&self) -> Result<Vec<LocationEvents>, Error> {
        use rayon::prelude::*;
        let mut all: Vec<LocationEvents> = (0..self.location_count())
            .into_par_iter()
            .map(|i| self.read_location(i))
            .collect::<Result<_, _>>()?;
        link_threads(&mut all);
        Ok(all)
    }
}

/// Sets the parent of each ThreadBegin to the location whose THREAD_CREATE
/// has the same thread contingent and sequence count.
fn link_threads(all: &mut [LocationEvents]) {
    let mut creators: HashMap<(u32, u64), LocId> = HashMap::new();
    for l in all.iter() {
        for &k in &l.thread_creates {
            creators.entry(k).or_insert(l.loc);
        }
    }
    if creators.is_empty() {
        return;
    }
    for l in all.iter_mut() {
        let mut begins = l.thread_begins.iter();
        for e in l.events.iter_mut() {
            if let spoor_model::Kind::ThreadBegin { parent } = &mut e.kind {
                if let Some(k) = begins.next() {
                    *parent = creators.get(k).copied();
                }
            }
        }
    }
}

fn string(raw: &RawDefs, id: u32) -> String {
    if id == UNDEF32 {
        return String::new();
    }
    match raw.strings.get(&id) {
        Some(s) => s.clone(),
        None => format!("?{id}"),
    }
}

/// Converts the OTF2 global definitions to spoor's and builds the decoding context.
fn build(
    raw: &RawDefs,
    anchor: &anchor::Anchor,
    app_name: &str,
    file: &str,
) -> Result<(Definitions, Context), Error> {
    let mut d = Definitions::new();
    let app = d.add_app(app_name);

    // Locations by OTF2 id; groups by OTF2 id.
    let mut loc_index: HashMap<u64, LocId> = HashMap::with_capacity(raw.locations.len());
    for (i, l) in raw.locations.iter().enumerate() {
        if loc_index.insert(l.id, i as LocId).is_some() {
            return Err(Error::corrupt(file, l.offset as u64, format!("location {} is defined twice", l.id)));
        }
    }
    let mut group_index: HashMap<u32, usize> = HashMap::new();
    for (i, g) in raw.location_groups.iter().enumerate() {
        if group_index.insert(g.id, i).is_some() {
            return Err(Error::corrupt(
                file,
                g.offset as u64,
                format!("location group {} is defined twice", g.id),
            ));
        }
    }

    // The MPI COMM_LOCATIONS group gives MPI world ranks.
    const MPI: u8 = 4;
    let comm_locations: HashMap<u8, &defs::Group> = {
        let mut ids: Vec<&u32> = raw.groups.keys().collect();
        ids.sort();
        let mut m = HashMap::new();
        for id in ids {
            let g = &raw.groups[id];
            if g.kind == group_type::COMM_LOCATIONS {
                m.insert(g.paradigm, g);
            }
        }
        m
    };
    let mut mpi_rank_of_group: HashMap<u32, u32> = HashMap::new();
    if let Some(g) = comm_locations.get(&MPI) {
        for (rank, lid) in g.members.iter().enumerate() {
            if let Some(&li) = loc_index.get(lid) {
                mpi_rank_of_group.entry(raw.locations[li as usize].group).or_insert(rank as u32);
            }
        }
    }

    // Machines: the system tree nodes that hold location groups.
    let nodes: HashMap<u32, &defs::SystemTreeNode> = raw.system_tree.iter().map(|n| (n.id, n)).collect();
    let mut machine_of_node: HashMap<u32, u32> = HashMap::new();
    let mut process_of_group: HashMap<u32, u32> = HashMap::new();
    for (gi, g) in raw.location_groups.iter().enumerate() {
        let machine = match machine_of_node.get(&g.parent) {
            Some(&m) => m,
            None => {
                let name = match nodes.get(&g.parent) {
                    Some(n) => string(raw, n.name),
                    None => "unknown".into(),
                };
                let m = d.add_machine(&name);
                machine_of_node.insert(g.parent, m);
                m
            }
        };
        let rank = mpi_rank_of_group.get(&g.id).copied().unwrap_or(gi as u32);
        let p = d.add_process(&string(raw, g.name), app, machine, rank);
        process_of_group.insert(g.id, p);
    }

    let mut threads: HashMap<u32, u32> = HashMap::new();
    for l in &raw.locations {
        let Some(&p) = process_of_group.get(&l.group) else {
            return Err(Error::corrupt(
                file,
                l.offset as u64,
                format!("location {} belongs to location group {}, which is not defined", l.id, l.group),
            ));
        };
        let t = threads.entry(l.group).or_insert(0);
        d.add_location(&string(raw, l.name), p, *t);
        *t += 1;
    }

    // Communicators.
    let mut comm_items = Vec::with_capacity(raw.comms.len());
    for c in &raw.comms {
        let Some(g) = raw.groups.get(&c.group) else {
            return Err(Error::corrupt(
                file,
                c.offset as u64,
                format!("communicator {} refers to group {}, which is not defined", c.id, c.group),
            ));
        };
        let mut is_self = false;
        let mut members = Vec::with_capacity(g.members.len());
        let loc_of = |lid: u64| -> Result<LocId, Error> {
            loc_index.get(&lid).copied().ok_or_else(|| {
                Error::corrupt(
                    file,
                    g.offset as u64,
                    format!("group {} has member location {lid}, which is not defined", c.group),
                )
            })
        };
        match g.kind {
            group_type::COMM_SELF => is_self = true,
            group_type::COMM_GROUP => {
                let Some(cl) = comm_locations.get(&g.paradigm) else {
                    return Err(Error::corrupt(
                        file,
                        g.offset as u64,
                        format!(
                            "group {} lists ranks, but its paradigm has no COMM_LOCATIONS group",
                            c.group
                        ),
                    ));
                };
                for &r in &g.members {
                    let Some(&lid) = usize::try_from(r).ok().and_then(|r| cl.members.get(r)) else {
                        return Err(Error::corrupt(
                            file,
                            g.offset as u64,
                            format!(
                                "group {} has rank {r}, but the COMM_LOCATIONS group of its paradigm has {} members",
                                c.group,
                                cl.members.len()
                            ),
                        ));
                    };
                    members.push(loc_of(lid)?);
                }
            }
            _ => {
                for &lid in &g.members {
                    members.push(loc_of(lid)?);
                }
            }
        }
        let mut name = string(raw, c.name);
        if name.is_empty() {
            name = format!("comm {}", c.id);
        }
        let id = d.add_comm(&name, members);
        comm_items.push((c.id, CommInfo { id, is_self }));
    }

    // Metrics: one per metric member; metric classes and instances list them.
    let mut member_slot: HashMap<u32, MetricSlot> = HashMap::new();
    for m in &raw.metric_members {
        let id = d.add_metric(&string(raw, m.name), &string(raw, m.unit));
        let base: f64 = if m.base == 0 { 2.0 } else { 10.0 };
        let scale = base.powi(m.exponent.clamp(-1000, 1000) as i32);
        member_slot.insert(m.id, MetricSlot { id, scale });
    }
    let slots_of = |class: u32| -> Vec<MetricSlot> {
        raw.metric_classes
            .get(&class)
            .map(|ms| ms.iter().filter_map(|m| member_slot.get(m).copied()).collect())
            .unwrap_or_default()
    };
    let mut metric_items: Vec<(u32, Vec<MetricSlot>)> =
        raw.metric_classes.keys().map(|&c| (c, slots_of(c))).collect();
    for (&inst, &class) in &raw.metric_instances {
        metric_items.push((inst, slots_of(class)));
    }

    // Regions.
    let region_items: Vec<(u32, RegionInfo)> = raw
        .regions
        .iter()
        .map(|r| {
            let name = string(raw, r.name);
            let blocking_recv = BLOCKING_RECEIVES.iter().any(|b| name.eq_ignore_ascii_case(b));
            (r.id, RegionInfo { name: d.strings.intern(&name), blocking_recv })
        })
        .collect();

    // Properties.
    let (ma, mi, bu) = anchor.version;
    d.set_property("otf2.version", &format!("{ma}.{mi}.{bu}"));
    d.set_property("otf2.creator", &anchor.creator);
    if !anchor.machine.is_empty() {
        d.set_property("otf2.machine", &anchor.machine);
    }
    if !anchor.description.is_empty() {
        d.set_property("otf2.description", &anchor.description);
    }
    if let Some(id) = anchor.trace_id {
        d.set_property("otf2.trace_id", &format!("{id:016x}"));
    }
    let clock = match &raw.clock {
        Some(c) => ClockInfo { resolution: c.resolution, global_offset: c.global_offset, length: c.length },
        None => {
            d.set_property("otf2.clock.missing", "no CLOCK_PROPERTIES definition: 1 tick taken as 1 ns");
            ClockInfo { resolution: 1_000_000_000, global_offset: 0, length: 0 }
        }
    };
    d.set_property("otf2.clock.resolution", &clock.resolution.to_string());
    d.set_property("otf2.clock.global_offset", &clock.global_offset.to_string());
    d.set_property("otf2.clock.length", &clock.length.to_string());
    for (k, v) in &anchor.properties {
        d.set_property(k, v);
    }

    let ctx = Context {
        clock,
        otf2_ids: raw.locations.iter().map(|l| l.id).collect(),
        announced: raw.locations.iter().map(|l| l.events).collect(),
        regions: IdTable::build(region_items),
        comms: IdTable::build(comm_items),
        metrics: IdTable::build(metric_items),
    };
    Ok((d, ctx))
}
