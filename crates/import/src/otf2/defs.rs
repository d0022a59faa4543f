//! Global definitions (`traces.def`) and local definitions (`traces/N.def`).
//!
//! Record layouts (OTF2 1.0 attributes in order, then the attributes each
//! later version appended; a reader takes what it knows and jumps to the
//! record's announced end, which skips later additions):
//!
//! | id | record | fields read here |
//! |---|---|---|
//! | 5 | ClockProperties | resolution (c64), global offset (c64), length (c64) |
//! | 10 | String | id (c32), text (NUL-terminated) |
//! | 12 | SystemTreeNode | id, name, class, parent (c32 each) |
//! | 13 | LocationGroup | id, name (c32), type (u8), system tree parent (c32) |
//! | 14 | Location | id (c64), name (c32), type (u8), #events (c64), group (c32) |
//! | 15 | Region | id, name, description (c32), pre-1.1 type (u8), file, begin, end (c32); since 1.1: canonical name (c32), role, paradigm (u8), flags (c32) |
//! | 18 | Group | id, name (c32), pre-1.2 type (u8), n (c32), n members (c64); since 1.2: type, paradigm (u8), flags (c32) |
//! | 19 | MetricMember | id, name, description (c32), metric type, mode, value type, base (u8), exponent (c64 signed), unit (c32) |
//! | 20 | MetricClass | id (c32), n (u8), n members (c32), occurrence (u8), ... |
//! | 21 | MetricInstance | id, class (c32), recorder (c64), scope type (u8), scope (c64) |
//! | 22 | Comm | id, name, group, parent (c32); since 3.0: flags |
//!
//! Local definitions: 5 MappingTable (type u8, map: count c64, mode u8
//! (0 dense, 1 sparse), then global ids or local/global pairs as c64) and
//! 6 ClockOffset (time u64 full, offset c64 signed, standard deviation f64).

use super::buf::{Chunked, Cursor, END_OF_BUFFER, END_OF_CHUNK, END_OF_FILE};
use spoor_format::Error;
use std::collections::HashMap;

pub const UNDEF32: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub struct Clock {
    pub resolution: u64,
    pub global_offset: u64,
    pub length: u64,
}

#[derive(Clone, Debug)]
pub struct SystemTreeNode {
    pub id: u32,
    pub name: u32,
}

#[derive(Clone, Debug)]
pub struct LocationGroup {
    pub id: u32,
    pub name: u32,
    pub parent: u32,
    pub offset: usize,
}

#[derive(Clone, Debug)]
pub struct Location {
    pub id: u64,
    pub name: u32,
    pub events: u64,
    pub group: u32,
    pub offset: usize,
}

#[derive(Clone, Debug)]
pub struct Region {
    pub id: u32,
    pub name: u32,
}

/// OTF2 group types (1.2 numbering).
pub mod group_type {
    pub const COMM_LOCATIONS: u8 = 4;
    pub const COMM_GROUP: u8 = 5;
    pub const COMM_SELF: u8 = 6;
}

#[derive(Clone, Debug)]
pub struct Group {
    pub kind: u8,
    pub paradigm: u8,
    pub members: Vec<u64>,
    pub offset: usize,
}

#[derive(Clone, Debug)]
pub struct MetricMember {
    pub id: u32,
    pub name: u32,
    pub base: u8,
    pub exponent: i64,
    pub unit: u32,
}

#[derive(Clone, Debug)]
pub struct Comm {
    pub id: u32,
    pub name: u32,
    pub group: u32,
    pub offset: usize,
}

/// The global definitions as OTF2 states them, before conversion.
#[derive(Default)]
pub struct RawDefs {
    pub clock: Option<Clock>,
    pub strings: HashMap<u32, String>,
    pub system_tree: Vec<SystemTreeNode>,
    pub location_groups: Vec<LocationGroup>,
    pub locations: Vec<Location>,
    pub regions: Vec<Region>,
    pub groups: HashMap<u32, Group>,
    pub metric_members: Vec<MetricMember>,
    /// Metric class id -> its member ids.
    pub metric_classes: HashMap<u32, Vec<u32>>,
    /// Metric instance id -> its class id.
    pub metric_instances: HashMap<u32, u32>,
    pub comms: Vec<Comm>,
    /// How many definition records of each type id were read.
    pub counts: HashMap<u8, u64>,
}

/// Converts an OTF2 pre-1.2 group type to the 1.2 numbering (type, paradigm).
fn group_type_pre_1_2(t: u8) -> (u8, u8) {
    const MPI: u8 = 4;
    match t {
        1 => (1, 0),
        2 | 3 => (2, 0),
        4 => (group_type::COMM_GROUP, MPI),
        5 => (group_type::COMM_SELF, MPI),
        6 => (group_type::COMM_LOCATIONS, MPI),
        _ => (0, 0),
    }
}

/// Reads `n` compressed integers after checking that they can fit in the
/// record (each takes at least one byte): no allocation sized by an
/// unchecked count.
fn checked_count(r: &Cursor, n: u64, at: usize, what: &str) -> Result<usize, Error> {
    if n > r.remaining() as u64 {
        return Err(
            r.err(at, format!("{n} {what} cannot fit in the {} bytes left in the record", r.remaining()))
        );
    }
    Ok(n as usize)
}

pub fn parse_global(data: &[u8], file: &str, chunk_size: u64) -> Result<RawDefs, Error> {
    let mut d = RawDefs::default();
    let mut ch = Chunked::new(data, file, chunk_size)?;
    loop {
        let at = ch.cur.pos;
        let t = ch.record_type()?;
        match t {
            END_OF_CHUNK => {
                ch.next_chunk(at)?;
                continue;
            }
            END_OF_FILE | END_OF_BUFFER => break,
            _ => {}
        }
        let mut r = ch.cur.record("a definition")?;
        *d.counts.entry(t).or_insert(0) += 1;
        match t {
            5 => {
                let resolution = r.u64("the timer resolution")?;
                let global_offset = r.u64("the global offset")?;
                let length = r.u64("the trace length")?;
                if resolution == 0 {
                    return Err(r.err(at, "clock properties with a timer resolution of 0 ticks per second"));
                }
                d.clock = Some(Clock { resolution, global_offset, length });
            }
            10 => {
                let id = r.u32("a string id")?;
                let s = r.string("a string definition")?;
                d.strings.insert(id, s);
            }
            12 => d.system_tree.push(SystemTreeNode {
                id: r.u32("a system tree node id")?,
                name: r.u32("a system tree node name")?,
            }),
            13 => d.location_groups.push(LocationGroup {
                id: r.u32("a location group id")?,
                name: r.u32("a location group name")?,
                parent: {
                    r.u8("a location group type")?;
                    r.u32("a location group's system tree parent")?
                },
                offset: at,
            }),
            14 => d.locations.push(Location {
                id: r.u64("a location id")?,
                name: r.u32("a location name")?,
                events: {
                    r.u8("a location type")?;
                    r.u64("a location's number of events")?
                },
                group: r.u32("a location's group")?,
                offset: at,
            }),
            15 => {
                let id = r.u32("a region id")?;
                let name = r.u32("a region name")?;
                d.regions.push(Region { id, name });
            }
            18 => {
                let id = r.u32("a group id")?;
                r.u32("a group name")?;
                let pre12 = r.u8("a group type")?;
                let cat = r.pos;
                let n = r.u32("a group's number of members")?;
                let n = checked_count(&r, n as u64, cat, "group members")?;
                let mut members = Vec::with_capacity(n);
                for _ in 0..n {
                    members.push(r.u64("a group member")?);
                }
                let (kind, paradigm) = if !r.at_end() {
                    (r.u8("a group type")?, r.u8("a group paradigm")?)
                } else {
                    group_type_pre_1_2(pre12)
                };
                d.groups.insert(id, Group { kind, paradigm, members, offset: at });
            }
            19 => {
                let id = r.u32("a metric member id")?;
                let name = r.u32("a metric member name")?;
                r.u32("a metric member description")?;
                r.u8("a metric type")?;
                r.u8("a metric mode")?;
                r.u8("a metric value type")?;
                let base = r.u8("a metric base")?;
                let exponent = r.i64("a metric exponent")?;
                let unit = r.u32("a metric unit")?;
                d.metric_members.push(MetricMember { id, name, base, exponent, unit });
            }
            20 => {
                let id = r.u32("a metric class id")?;
                let cat = r.pos;
                let n = r.u8("a metric class's number of members")?;
                let n = checked_count(&r, n as u64, cat, "metric members")?;
                let mut members = Vec::with_capacity(n);
                for _ in 0..n {
                    members.push(r.u32("a metric class member")?);
                }
                d.metric_classes.insert(id, members);
            }
            21 => {
                let id = r.u32("a metric instance id")?;
                let class = r.u32("a metric instance's class")?;
                d.metric_instances.insert(id, class);
            }
            22 => d.comms.push(Comm {
                id: r.u32("a communicator id")?,
                name: r.u32("a communicator name")?,
                group: r.u32("a communicator's group")?,
                offset: at,
            }),
            _ => {}
        }
    }
    Ok(d)
}

/// A mapping table from local to global ids (identity for ids it lacks).
#[derive(Clone, Debug)]
pub enum IdMap {
    Dense(Vec<u64>),
    /// Sorted by local id.
    Sparse(Vec<(u64, u64)>),
}

impl IdMap {
    #[inline]
    pub fn map(&self, local: u64) -> u64 {
        match self {
            IdMap::Dense(v) => usize::try_from(local).ok().and_then(|i| v.get(i)).copied().unwrap_or(local),
            IdMap::Sparse(v) => match v.binary_search_by_key(&local, |p| p.0) {
                Ok(i) => v[i].1,
                Err(_) => local,
            },
        }
    }
}

/// OTF2 mapping types this reader applies.
pub mod mapping {
    pub const REGION: u8 = 3;
    pub const METRIC: u8 = 5;
    pub const COMM: u8 = 6;
    pub const COUNT: usize = 16;
}

#[derive(Clone, Debug)]
pub struct ClockOffset {
    pub time: u64,
    pub offset: i64,
    pub stddev: f64,
}

#[derive(Default)]
pub struct LocalDefs {
    pub maps: [Option<IdMap>; mapping::COUNT],
    pub clock_offsets: Vec<ClockOffset>,
}

impl LocalDefs {
    #[inline]
    pub fn map(&self, kind: u8, local: u32) -> u32 {
        match &self.maps[kind as usize] {
            // Global ids of 32-bit kinds fit in 32 bits; keep UNDEFINED as it is.
            Some(m) if local != UNDEF32 => m.map(local as u64) as u32,
            _ => local,
        }
    }
}

pub fn parse_local(data: &[u8], file: &str, chunk_size: u64) -> Result<LocalDefs, Error> {
    let mut d = LocalDefs::default();
    let mut ch = Chunked::new(data, file, chunk_size)?;
    loop {
        let at = ch.cur.pos;
        let t = ch.record_type()?;
        match t {
            END_OF_CHUNK => {
                ch.next_chunk(at)?;
                continue;
            }
            END_OF_FILE | END_OF_BUFFER => break,
            _ => {}
        }
        let mut r = ch.cur.record("a local definition")?;
        match t {
            5 => {
                let kind = r.u8("a mapping type")?;
                let cat = r.pos;
                let n = r.u64("the size of a mapping table")?;
                let mode = r.u8("the mode of a mapping table")?;
                let map = match mode {
                    0 => {
                        let n = checked_count(&r, n, cat, "mapping table entries")?;
                        let mut v = Vec::with_capacity(n);
                        for _ in 0..n {
                            v.push(r.u64("a mapping table entry")?);
                        }
                        IdMap::Dense(v)
                    }
                    1 => {
                        let n = checked_count(&r, n.saturating_mul(2), cat, "mapping table entries")? / 2;
                        let mut v = Vec::with_capacity(n);
                        for _ in 0..n {
                            let l = r.u64("a mapping table entry")?;
                            let g = r.u64("a mapping table entry")?;
                            v.push((l, g));
                        }
                        v.sort_by_key(|p| p.0);
                        IdMap::Sparse(v)
                    }
                    m => {
                        return Err(
                            r.err(cat, format!("mapping table mode {m}: expected 0 (dense) or 1 (sparse)"))
                        )
                    }
                };
                if let Some(slot) = d.maps.get_mut(kind as usize) {
                    *slot = Some(map);
                }
            }
            6 => {
                let time = r.u64_full("the time of a clock offset")?;
                let offset = r.i64("a clock offset")?;
                let stddev = r.f64("the standard deviation of a clock offset")?;
                if let Some(prev) = d.clock_offsets.last() {
                    if prev.time >= time {
                        return Err(r.err(
                            at,
                            format!(
                                "clock offset at time {time} does not follow the previous one at {}: expected \
                                 increasing times",
                                prev.time
                            ),
                        ));
                    }
                }
                d.clock_offsets.push(ClockOffset { time, offset, stddev });
            }
            _ => {}
        }
    }
    Ok(d)
}
