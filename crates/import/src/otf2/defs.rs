//! Global definitions (`traces.def`), local definitions (`traces/<id>.def`:
//! mapping tables and clock offsets), and their conversion to spoor's
//! [`Definitions`].
//!
//! Definition files are chunked like event files; each record is a type
//! byte, a length (one byte, or 0xFF and 8 bytes) and its fields. Fields added
//! by later OTF2 versions come last: a record is read up to the fields this
//! reader needs and skipped to its announced end, and an older record without
//! the trailing fields gets their defaults.

use super::buf::{chunk_header, record_len, Bad, Cursor, CHUNK_HEADER_LEN, END_OF_CHUNK, END_OF_FILE, R};
use spoor_model::{CommId, Definitions, LocId, MetricId};
use std::collections::HashMap;

/// OTF2's undefined reference.
pub const UNDEF: u32 = u32::MAX;
/// A missing entry in a [`Lookup`].
pub const NONE: u32 = u32::MAX;

/// A map from u32 ids to u32 values: dense for small ids, sparse beyond.
#[derive(Clone, Debug, Default)]
pub struct Lookup {
    dense: Vec<u32>,
    sparse: HashMap<u32, u32>,
}

const DENSE_LIMIT: u32 = 1 << 20;

impl Lookup {
    #[inline(always)]
    pub fn get(&self, id: u32) -> u32 {
        match self.dense.get(id as usize) {
            Some(&v) => v,
            None => self.get_sparse(id),
        }
    }

    #[cold]
    fn get_sparse(&self, id: u32) -> u32 {
        if self.sparse.is_empty() {
            NONE
        } else {
            self.sparse.get(&id).copied().unwrap_or(NONE)
        }
    }

    pub fn insert(&mut self, id: u32, v: u32) {
        if id < DENSE_LIMIT {
            if self.dense.len() <= id as usize {
                self.dense.resize(id as usize + 1, NONE);
            }
            self.dense[id as usize] = v;
        } else {
            self.sparse.insert(id, v);
        }
    }
}

/// Calls `f` for every record of a chunked definitions file: its type, its
/// offset, and a cursor over its fields. Positions are offsets in `d`.
pub fn walk(d: &[u8], chunk_size: usize, mut f: impl FnMut(u8, usize, &mut Cursor) -> R<()>) -> R<()> {
    let mut start = 0;
    loop {
        if start >= d.len() {
            return Err(Bad::new(d.len(), "truncated: the file ends without an end-of-file marker"));
        }
        let end = (start + chunk_size).min(d.len());
        let h = chunk_header(&d[start..end], true).map_err(|b| Bad::new(start + b.at, b.msg))?;
        let mut p = start + CHUNK_HEADER_LEN;
        loop {
            if p >= end {
                return Err(Bad::new(p, "truncated: the chunk ends without an end-of-chunk marker"));
            }
            let t = d[p];
            let at = p;
            p += 1;
            match t {
                END_OF_CHUNK => break,
                END_OF_FILE => return Ok(()),
                _ => {
                    let len = if h.big_endian {
                        record_len::<true>(&d[..end], &mut p)?
                    } else {
                        record_len::<false>(&d[..end], &mut p)?
                    };
                    if len > end - p {
                        return Err(Bad::new(
                            at,
                            format!("record of {len} bytes runs past the end of its chunk"),
                        ));
                    }
                    let mut c = Cursor::new(d, p, p + len, h.big_endian);
                    f(t, at, &mut c)?;
                    p += len;
                }
            }
        }
        start += chunk_size;
    }
}

// Global definition record types.
const CLOCK_PROPERTIES: u8 = 5;
const STRING: u8 = 10;
const SYSTEM_TREE_NODE: u8 = 12;
const LOCATION_GROUP: u8 = 13;
const LOCATION: u8 = 14;
const REGION: u8 = 15;
const GROUP: u8 = 18;
const METRIC_MEMBER: u8 = 19;
const METRIC_CLASS: u8 = 20;
const METRIC_INSTANCE: u8 = 21;
const COMM: u8 = 22;

// Group types (OTF2 >= 1.2).
const GROUP_LOCATIONS: u8 = 1;
const GROUP_COMM_LOCATIONS: u8 = 4;
const GROUP_COMM_GROUP: u8 = 5;
const GROUP_COMM_SELF: u8 = 6;
const PARADIGM_MPI: u8 = 4;

pub struct LocationDef {
    pub id: u64,
    pub name: u32,
    pub events: u64,
    pub group: u32,
    pub at: usize,
}

struct GroupDef {
    gtype: u8,
    paradigm: u8,
    members: Vec<u64>,
    at: usize,
}

/// The global definitions as read, before conversion.
#[derive(Default)]
pub struct Global {
    pub resolution: u64,
    pub global_offset: u64,
    pub trace_length: u64,
    strings: HashMap<u32, String>,
    nodes: Vec<(u32, u32)>,
    location_groups: Vec<(u32, u32, u32, usize)>,
    pub locations: Vec<LocationDef>,
    regions: Vec<(u32, u32)>,
    groups: HashMap<u32, GroupDef>,
    group_order: Vec<u32>,
    metric_members: Vec<(u32, u32, u32, usize)>,
    metric_classes: Vec<(u32, Vec<u32>, usize)>,
    metric_instances: Vec<(u32, u32, usize)>,
    comms: Vec<(u32, u32, u32, usize)>,
}

pub fn parse_global(d: &[u8], chunk_size: usize) -> R<Global> {
    let mut g = Global { resolution: 1, ..Global::default() };
    let mut have_clock = false;
    walk(d, chunk_size, |t, at, c| {
        match t {
            CLOCK_PROPERTIES => {
                g.resolution = c.u64c()?;
                g.global_offset = c.u64c()?;
                g.trace_length = c.u64c()?;
                if g.resolution == 0 || g.resolution == u64::MAX {
                    return Err(Bad::new(at, format!("invalid timer resolution {}", g.resolution)));
                }
                have_clock = true;
            }
            STRING => {
                let id = c.u32c()?;
                let s = c.string()?;
                g.strings.insert(id, s);
            }
            SYSTEM_TREE_NODE => {
                let id = c.u32c()?;
                let name = c.u32c()?;
                g.nodes.push((id, name));
            }
            LOCATION_GROUP => {
                let id = c.u32c()?;
                let name = c.u32c()?;
                let _type = c.u8()?;
                let parent = c.u32c()?;
                g.location_groups.push((id, name, parent, at));
            }
            LOCATION => {
                let id = c.u64c()?;
                let name = c.u32c()?;
                let _type = c.u8()?;
                let events = c.u64c()?;
                let group = c.u32c()?;
                g.locations.push(LocationDef { id, name, events, group, at });
            }
            REGION => {
                let id = c.u32c()?;
                let name = c.u32c()?;
                g.regions.push((id, name));
            }
            GROUP => {
                let (id, group) = group(c, at)?;
                g.group_order.push(id);
                g.groups.insert(id, group);
            }
            METRIC_MEMBER => g.metric_members.push(metric_member(c, at)?),
            METRIC_CLASS => {
                let id = c.u32c()?;
                let n = c.u8()?;
                let mut members = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    members.push(c.u32c()?);
                }
                g.metric_classes.push((id, members, at));
            }
            METRIC_INSTANCE => {
                let id = c.u32c()?;
                let class = c.u32c()?;
                g.metric_instances.push((id, class, at));
            }
            COMM => {
                let id = c.u32c()?;
                let name = c.u32c()?;
                let group = c.u32c()?;
                g.comms.push((id, name, group, at));
            }
            _ => {}
        }
        Ok(())
    })?;
    if !have_clock {
        return Err(Bad::new(0, "the global definitions have no CLOCK_PROPERTIES record"));
    }
    Ok(g)
}

/// A GROUP record: its id and definition.
fn group(c: &mut Cursor, at: usize) -> R<(u32, GroupDef)> {
    let id = c.u32c()?;
    let _name = c.u32c()?;
    let pre12 = c.u8()?;
    let n = c.u32c()?;
    if n as usize > c.remaining() {
        return Err(Bad::new(at, format!("group of {n} members does not fit in its record")));
    }
    let mut members = Vec::with_capacity(n as usize);
    for _ in 0..n {
        members.push(c.u64c()?);
    }
    let (gtype, paradigm) = if !c.at_end() {
        (c.u8()?, c.u8()?)
    } else {
        // Before OTF2 1.2: MPI groups had their own types.
        match pre12 {
            4 => (GROUP_COMM_GROUP, PARADIGM_MPI),
            5 => (GROUP_COMM_SELF, PARADIGM_MPI),
            6 => (GROUP_COMM_LOCATIONS, PARADIGM_MPI),
            t => (t, 0),
        }
    };
    Ok((id, GroupDef { gtype, paradigm, members, at }))
}

/// A METRIC_MEMBER record: id, name, unit and where it is.
fn metric_member(c: &mut Cursor, at: usize) -> R<(u32, u32, u32, usize)> {
    let id = c.u32c()?;
    let name = c.u32c()?;
    let _descr = c.u32c()?;
    let _type = c.u8()?;
    let _mode = c.u8()?;
    let _value_type = c.u8()?;
    let _base = c.u8()?;
    let _exponent = c.i64c()?;
    let unit = c.u32c()?;
    Ok((id, name, unit, at))
}

// Local definition record types and mapping types.
const MAPPING_TABLE: u8 = 5;
const CLOCK_OFFSET: u8 = 6;
const MAPPING_REGION: u8 = 3;
const MAPPING_METRIC: u8 = 5;
const MAPPING_COMM: u8 = 6;

/// A CLOCK_OFFSET sample: at local `time` (ticks), global time = local + `offset`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockSample {
    pub time: u64,
    pub offset: i64,
    pub stddev: f64,
}

/// A location's local definitions.
#[derive(Default)]
pub struct Local {
    pub regions: Option<Lookup>,
    pub comms: Option<Lookup>,
    pub metrics: Option<Lookup>,
    pub clock: Vec<ClockSample>,
}

pub fn parse_local(d: &[u8], chunk_size: usize) -> R<Local> {
    let mut l = Local::default();
    walk(d, chunk_size, |t, at, c| {
        match t {
            MAPPING_TABLE => {
                let kind = c.u8()?;
                let n = c.u64c()?;
                let mode = c.u8()?;
                let per = if mode == 0 { 1 } else { 2 };
                if n > (c.remaining() / per) as u64 {
                    return Err(Bad::new(
                        at,
                        format!("mapping table of {n} entries does not fit in its record"),
                    ));
                }
                let mut m = Lookup::default();
                for i in 0..n {
                    let local = if mode == 0 { i } else { c.u64c()? };
                    let global = c.u64c()?;
                    if matches!(kind, MAPPING_REGION | MAPPING_COMM | MAPPING_METRIC) {
                        let (Ok(local), Ok(global)) = (u32::try_from(local), u32::try_from(global)) else {
                            return Err(Bad::new(at, "mapping table entry out of the 32-bit id range"));
                        };
                        m.insert(local, global);
                    }
                }
                match kind {
                    MAPPING_REGION => l.regions = Some(m),
                    MAPPING_COMM => l.comms = Some(m),
                    MAPPING_METRIC => l.metrics = Some(m),
                    _ => {}
                }
            }
            CLOCK_OFFSET => {
                let time = c.full_u64()?;
                let offset = c.i64c()?;
                let stddev = c.f64()?;
                l.clock.push(ClockSample { time, offset, stddev });
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(l)
}

/// The region names whose regions are blocking receives (a `RecvBegin` is
/// synthesized at their Enter).
const RECV_REGIONS: [&str; 4] = ["MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Mrecv"];

pub fn is_recv_region(name: &str) -> bool {
    RECV_REGIONS.iter().any(|r| r.eq_ignore_ascii_case(name))
}

/// Set in a region lookup value when the region is a blocking receive.
pub const RECV_FLAG: u32 = 1 << 31;
/// Set in a communicator lookup value for self-like communicators: the low
/// bits index the location's own copy of it.
pub const SELF_FLAG: u32 = 1 << 31;

/// Global definitions converted to spoor's, with the tables event decoding needs.
pub struct Built {
    pub defs: Definitions,
    /// OTF2 location id and announced event count, per spoor location.
    pub locations: Vec<(u64, u64)>,
    /// Global region id -> StrId | RECV_FLAG.
    pub regions: Lookup,
    /// Global communicator id -> spoor CommId, or SELF_FLAG | index into `self_comms`.
    pub comms: Lookup,
    /// Per location, its own copy of each self-like communicator.
    pub self_comms: Vec<Vec<CommId>>,
    /// Global metric class or instance id -> index into `metric_sets`.
    pub metrics: Lookup,
    pub metric_sets: Vec<Vec<MetricId>>,
    /// The communicator of IrecvRequests whose completion is never seen.
    pub default_comm: CommId,
}

pub fn build(g: &Global, app: &str) -> R<Built> {
    let mut defs = Definitions::new();
    defs.add_app(app);
    // Regions first: all their names are in the string table.
    let regions = build_regions(g, &mut defs);
    let loc_group = build_processes(g, &mut defs)?;

    // Locations, in definition order; the thread number is the index in the group.
    let mut loc_of = HashMap::new();
    let mut threads = vec![0u32; g.location_groups.len()];
    let mut locations = Vec::with_capacity(g.locations.len());
    for l in &g.locations {
        let gi = loc_group[&l.id];
        let id = defs.add_location(g.str(l.name), gi as u32, threads[gi]);
        threads[gi] += 1;
        loc_of.insert(l.id, id);
        locations.push((l.id, l.events));
    }

    let (comms, selves) = build_comms(g, &mut defs, &loc_of)?;
    // A copy of each self-like communicator per location.
    if selves.len().saturating_mul(locations.len()) > 1 << 24 {
        return Err(Bad::new(
            0,
            format!("{} self communicators for {} locations: too many", selves.len(), locations.len()),
        ));
    }
    let self_comms = (0..locations.len() as LocId)
        .map(|l| selves.iter().map(|&name| defs.add_comm(g.str(name), vec![l])).collect())
        .collect();
    let default_comm = (0..defs.comms.len())
        .max_by_key(|&c| (defs.comms[c].members.len(), usize::MAX - c))
        .unwrap_or(0) as CommId;
    let (metrics, metric_sets) = build_metrics(g, &mut defs)?;
    Ok(Built { defs, locations, regions, comms, self_comms, metrics, metric_sets, default_comm })
}

impl Global {
    /// The string `id`, empty when it is not defined.
    fn str(&self, id: u32) -> &str {
        self.strings.get(&id).map(String::as_str).unwrap_or("")
    }

    /// The first group of MPI locations (`COMM_LOCATIONS`) of `paradigm`.
    fn comm_locations(&self, paradigm: u8) -> Option<&GroupDef> {
        self.group_order
            .iter()
            .map(|id| &self.groups[id])
            .find(|gr| gr.gtype == GROUP_COMM_LOCATIONS && gr.paradigm == paradigm)
    }
}

/// Global region id -> StrId | RECV_FLAG.
fn build_regions(g: &Global, defs: &mut Definitions) -> Lookup {
    let mut regions = Lookup::default();
    for &(id, name) in &g.regions {
        let text = g.str(name);
        let sid = defs.strings.intern(text);
        let recv = is_recv_region(text);
        regions.insert(id, sid | if recv { RECV_FLAG } else { 0 });
    }
    regions
}

/// Machines and processes (one per location group); OTF2 location id -> its group's index.
fn build_processes(g: &Global, defs: &mut Definitions) -> R<HashMap<u64, usize>> {
    // Machines: the system tree nodes that hold location groups.
    let node_name: HashMap<u32, u32> = g.nodes.iter().copied().collect();
    let mut machine_of_node = HashMap::new();
    for &(nid, _) in &g.nodes {
        if g.location_groups.iter().any(|lg| lg.2 == nid) && !machine_of_node.contains_key(&nid) {
            machine_of_node.insert(nid, defs.add_machine(g.str(node_name[&nid])));
        }
    }
    let mut unknown_machine = None;

    // Location -> group, for ranks.
    let mut group_index = HashMap::new();
    for (i, lg) in g.location_groups.iter().enumerate() {
        if group_index.insert(lg.0, i).is_some() {
            return Err(Bad::new(lg.3, format!("location group {} is defined twice", lg.0)));
        }
    }
    let mut loc_group = HashMap::new();
    for l in &g.locations {
        let Some(&gi) = group_index.get(&l.group) else {
            return Err(Bad::new(
                l.at,
                format!("location {} is in location group {}, which is not defined", l.id, l.group),
            ));
        };
        if loc_group.insert(l.id, gi).is_some() {
            return Err(Bad::new(l.at, format!("location {} is defined twice", l.id)));
        }
    }
    // Ranks: the position in the MPI COMM_LOCATIONS group.
    let mut rank = vec![None; g.location_groups.len()];
    if let Some(world) = g.comm_locations(PARADIGM_MPI) {
        for (r, lid) in world.members.iter().enumerate() {
            if let Some(&gi) = loc_group.get(lid) {
                rank[gi].get_or_insert(r as u32);
            }
        }
    }
    for (i, lg) in g.location_groups.iter().enumerate() {
        let machine = match machine_of_node.get(&lg.2) {
            Some(&m) => m,
            None => *unknown_machine.get_or_insert_with(|| defs.add_machine("unknown node")),
        };
        defs.add_process(g.str(lg.1), 0, machine, rank[i].unwrap_or(i as u32));
    }
    Ok(loc_group)
}

/// Communicators: global id -> CommId, or SELF_FLAG | index among the self-like
/// communicators, whose names come second.
fn build_comms(g: &Global, defs: &mut Definitions, loc_of: &HashMap<u64, LocId>) -> R<(Lookup, Vec<u32>)> {
    let to_locs = |ids: &[u64], at: usize| -> R<Vec<LocId>> {
        ids.iter()
            .map(|lid| {
                loc_of
                    .get(lid)
                    .copied()
                    .ok_or_else(|| Bad::new(at, format!("group member {lid} is not a location")))
            })
            .collect()
    };
    let mut comms = Lookup::default();
    let mut selves = Vec::new();
    for &(id, name, group, _) in &g.comms {
        let members = match g.groups.get(&group) {
            None => Vec::new(),
            Some(gr) => match gr.gtype {
                GROUP_COMM_SELF => {
                    comms.insert(id, SELF_FLAG | selves.len() as u32);
                    selves.push(name);
                    continue;
                }
                GROUP_COMM_GROUP => to_locs(&comm_group_members(g, gr)?, gr.at)?,
                GROUP_COMM_LOCATIONS | GROUP_LOCATIONS => to_locs(&gr.members, gr.at)?,
                _ => Vec::new(),
            },
        };
        comms.insert(id, defs.add_comm(g.str(name), members));
    }
    Ok((comms, selves))
}

/// The OTF2 locations of a communicator group, whose members are ranks in the
/// COMM_LOCATIONS group of its paradigm (or else the first such group).
fn comm_group_members(g: &Global, gr: &GroupDef) -> R<Vec<u64>> {
    let comm_locations = g
        .comm_locations(gr.paradigm)
        .or_else(|| g.group_order.iter().map(|id| &g.groups[id]).find(|x| x.gtype == GROUP_COMM_LOCATIONS));
    let Some(world) = comm_locations else {
        return Err(Bad::new(gr.at, "a communicator group without a COMM_LOCATIONS group"));
    };
    gr.members
        .iter()
        .map(|&r| {
            world.members.get(r as usize).copied().ok_or_else(|| {
                Bad::new(gr.at, format!("group member rank {r} is not in the COMM_LOCATIONS group"))
            })
        })
        .collect()
}

/// Metrics: one spoor metric per member; classes and instances are sets of members.
fn build_metrics(g: &Global, defs: &mut Definitions) -> R<(Lookup, Vec<Vec<MetricId>>)> {
    let mut member_of = HashMap::new();
    for &(id, name, unit, _) in &g.metric_members {
        let unit = if unit == UNDEF { "" } else { g.str(unit) };
        member_of.insert(id, defs.add_metric(g.str(name), unit));
    }
    let mut metrics = Lookup::default();
    let mut metric_sets = Vec::new();
    let mut class_set = HashMap::new();
    for (id, members, at) in &g.metric_classes {
        let set = members
            .iter()
            .map(|m| {
                member_of
                    .get(m)
                    .copied()
                    .ok_or_else(|| Bad::new(*at, format!("metric class {id}: member {m} is not defined")))
            })
            .collect::<R<Vec<_>>>()?;
        class_set.insert(*id, metric_sets.len() as u32);
        metrics.insert(*id, metric_sets.len() as u32);
        metric_sets.push(set);
    }
    for &(id, class, at) in &g.metric_instances {
        let Some(&set) = class_set.get(&class) else {
            return Err(Bad::new(at, format!("metric instance {id}: class {class} is not defined")));
        };
        metrics.insert(id, set);
    }
    Ok((metrics, metric_sets))
}
