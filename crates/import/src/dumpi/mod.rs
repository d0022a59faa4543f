//! A reader for SST DUMPI traces: the `.meta` file (`numprocs`, `fileprefix`)
//! and one binary `.bin` per rank ([`bin`] has the layout; every MPI-2 call
//! record is decoded, [`layout`] lists their arguments).
//!
//! # What becomes what
//!
//! Definitions: one application (named after `fileprefix`); a machine per
//! distinct host name in the ranks' headers; a process per rank (`rank r`,
//! rank r); a location per thread id seen in the rank's records (thread 0
//! always, `rank r thread t`); communicators `MPI_COMM_WORLD`,
//! `MPI_COMM_SELF` (no members: rank 0 is the location itself) and those
//! reconstructed from the creating calls (see [`comms`]); properties
//! `dumpi.*` from the `.meta` and `dumpi.wall_offset_s`.
//!
//! Times: wall times in ns since `dumpi.wall_offset_s` (the earliest rank's
//! wall-time bias, in whole seconds since the epoch; add it back to get
//! DUMPI's absolute times); `cpu` is DUMPI's process CPU time in ns
//! (getrusage user + system), made non-decreasing per location (a value below
//! the previous one is raised to it, counted in the warnings). DUMPI stores
//! seconds modulo 65536 after the bias; they are unwrapped (a jump back of
//! more than 32768 s is a wrap).
//!
//! Every call record becomes `Enter` (entry wall and CPU time) and `Leave`
//! (exit times) of its MPI name (`MPI_Send`, ...); profiled functions
//! (`-finstrument-functions` records) become `Enter`/`Leave` of their names
//! (or `0x<address>`). Between a call's `Enter` and `Leave`:
//!
//! | call | events |
//! |---|---|
//! | `MPI_Send`, `Bsend`, `Ssend`, `Rsend` | `Send` at entry: destination rank translated through the communicator to its main-thread location, tag, count × datatype size |
//! | `MPI_Recv` | `RecvBegin` at entry (source and tag as given, `None` for `MPI_ANY_SOURCE`/`MPI_ANY_TAG`), `RecvEnd` at exit (the status's source, tag and byte count where recorded, else the arguments' and count × size) |
//! | `MPI_Sendrecv`, `MPI_Sendrecv_replace` | `Send` and `RecvBegin` at entry, `RecvEnd` at exit |
//! | `MPI_Isend`, `Ibsend`, `Issend`, `Irsend` | `Isend` at entry with DUMPI's request id |
//! | `MPI_Irecv` | `IrecvRequest` at entry with DUMPI's request id |
//! | `MPI_*send_init`, `MPI_Recv_init` + `MPI_Start`, `MPI_Startall` | `Isend` / `IrecvRequest` at the start's entry |
//! | `MPI_Wait`, `Waitany`, `Waitall`, `Waitsome`, and `MPI_Test*` that report completion | `IsendComplete` / `IrecvComplete` at exit for each completed request (receives: source, tag and bytes from the status where recorded, else from the posting call) |
//! | `MPI_Barrier`, `Bcast`, `Reduce`, `Allreduce`, `Gather(v)`, `Scatter(v)`, `Allgather(v)`, `Alltoall(v,w)`, `Scan`, `Exscan`, `Reduce_scatter` | `CollBegin` at entry, `CollEnd` at exit: communicator, root (translated), bytes this rank's buffers hold (sent: the send buffer, received: the receive buffer; e.g. Allgather received = recvcount × size × communicator size) |
//!
//! Not translated (the call keeps its `Enter`/`Leave`, the message event is
//! left out and the case counted in the warnings): peers on communicators
//! that could not be reconstructed, negative ranks (`MPI_PROC_NULL`),
//! receives whose source or tag is a wildcard with no status recorded,
//! completions of requests never posted in the trace, cancelled receives.
//! Message sizes use the datatype size table each `.bin` carries; a datatype
//! outside it counts 0 bytes (warned). For a multi-threaded rank, peers are
//! the ranks' main-thread locations (DUMPI does not say which thread
//! receives).
//!
//! Events of one location are in record order, then stably sorted by wall
//! time; the returned events are in time order over all locations (ties by
//! location). A missing rank `.bin` is an error naming it; a truncated or
//! corrupt `.bin` is an error naming the file and byte offset.

pub mod bin;
pub mod comms;
pub mod layout;
pub mod meta;

use crate::files::{Disk, TraceFiles};
use crate::mpi::{mpi_collective, Warnings};
use bin::{BinFile, Call, Status};
use comms::CommTable;
use rayon::prelude::*;
use spoor_format::Error;
use spoor_model::{CollOp, CommId, Definitions, Event, Kind, LocId, StrId};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// True if `first_bytes` look like DUMPI: a `.bin` (its magic) or a `.meta`
/// (`key=value` text with `numprocs=` and `fileprefix=`).
pub fn looks_like(first_bytes: &[u8]) -> bool {
    if first_bytes.starts_with(&bin::MAGIC) {
        return true;
    }
    let Ok(text) =
        std::str::from_utf8(first_bytes).or_else(|e| std::str::from_utf8(&first_bytes[..e.valid_up_to()]))
    else {
        return false;
    };
    // The last line may be cut short by the caller's buffer: judge complete lines.
    let complete = if text.ends_with('\n') { text } else { text.rsplit_once('\n').map_or("", |(a, _)| a) };
    let has = |k: &str| text.lines().any(|l| l.trim_start().starts_with(k));
    complete.lines().filter(|l| !l.trim().is_empty()).all(|l| l.contains('='))
        && has("numprocs=")
        && has("fileprefix=")
}

/// Per rank, what was read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankStats {
    pub file: String,
    pub version: (u8, u8, u8),
    /// Call records decoded (MPI calls and profiled function entries and exits).
    pub records: u64,
    /// MPI call records per function name.
    pub calls: BTreeMap<String, u64>,
    /// The footer's count of MPI calls per function name, if the file has a footer.
    pub footer_calls: Option<BTreeMap<String, u64>>,
}

/// A trace read by [`read_dumpi_full`].
#[derive(Clone, Debug)]
pub struct DumpiTrace {
    pub defs: Definitions,
    /// Every event, in time order over all locations (ties by location).
    pub events: Vec<Event>,
    /// Per rank.
    pub ranks: Vec<RankStats>,
    /// Seconds since the epoch that wall time 0 stands for.
    pub wall_offset_s: u64,
    /// What could not be translated or was repaired, one line per kind with its count.
    pub warnings: Vec<String>,
}

/// Reads a DUMPI trace from its `.meta`; see the module docs.
pub fn read_dumpi(meta: &Path) -> Result<(Definitions, Vec<Event>), Error> {
    read_dumpi_full(meta).map(|t| (t.defs, t.events))
}

/// Reads a DUMPI trace from its `.meta`, with statistics and warnings.
pub fn read_dumpi_full(meta_path: &Path) -> Result<DumpiTrace, Error> {
    read_dumpi_from(&Disk, meta_path)
}

/// [`read_dumpi_full`] over the files of `files` (e.g. [`MemFiles`](crate::MemFiles)):
/// the `.meta` at `meta_path` and the rank files beside it.
pub fn read_dumpi_from(files: &impl TraceFiles, meta_path: &Path) -> Result<DumpiTrace, Error> {
    let meta_name = meta_path.display().to_string();
    let text = files.read(meta_path).map_err(|e| Error::io(&meta_name, &e))?;
    let meta = meta::parse(&meta_name, &String::from_utf8_lossy(&text))?;
    let paths = meta::rank_files_from(files, meta_path, &meta)?;
    let bins: Vec<BinFile> = paths
        .par_iter()
        .map(|f| {
            let name = f.display().to_string();
            let data = files.read(f).map_err(|e| Error::io(&name, &e))?;
            bin::parse(&name, &data)
        })
        .collect::<Result<_, _>>()?;
    let mut warnings = Warnings::default();
    let mut defs = Definitions::new();
    let app_name = Path::new(&meta.fileprefix)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| meta.fileprefix.clone());
    defs.add_app(&app_name);
    defs.set_property("import.format", "dumpi");
    for (k, v) in &meta.pairs {
        defs.set_property(&format!("dumpi.{k}"), v);
    }
    let (locs, main_loc) = define_ranks(&mut defs, &meta, &bins);
    let wall_offset_s = bins.iter().map(|b| b.wall_bias as u64).min().unwrap_or(0);
    defs.set_property("dumpi.wall_offset_s", &wall_offset_s.to_string());
    let calls: Vec<&[Call]> = bins.iter().map(|b| b.calls.as_slice()).collect();
    let table = comms::reconstruct(&mut defs, &calls, &main_loc, &mut warnings);
    let (label_names, func_names) = intern_names(&mut defs, &bins);
    let ctx = Ctx {
        defs: &defs,
        table: &table,
        label_names: &label_names,
        base_ns: wall_offset_s as i128 * 1_000_000_000,
    };
    let per_rank: Vec<(Vec<Event>, Warnings)> = bins
        .par_iter()
        .enumerate()
        .map(|(r, b)| ctx.rank(r, b, &locs[r], main_loc[r], &func_names[r]))
        .collect();
    let mut events = Vec::with_capacity(per_rank.iter().map(|(e, _)| e.len()).sum());
    for (ev, w) in per_rank {
        events.extend(ev);
        warnings.merge(w);
    }
    events.sort_by_key(|e| (e.wall, e.loc));
    let ranks = bins.iter().zip(&paths).map(|(b, f)| rank_stats(b, f)).collect();
    Ok(DumpiTrace { defs, events, ranks, wall_offset_s, warnings: warnings.into_vec() })
}

/// A machine per host name, and per rank a process with a location per thread (thread 0
/// at least): per rank, its locations by thread and its main thread's.
fn define_ranks(
    defs: &mut Definitions,
    meta: &meta::Meta,
    bins: &[BinFile],
) -> (Vec<HashMap<u16, LocId>>, Vec<LocId>) {
    let meta_host = meta.pairs.iter().find(|(k, _)| k == "hostname").map(|(_, v)| v.clone());
    let mut machines: HashMap<String, u32> = HashMap::new();
    let mut locs: Vec<HashMap<u16, LocId>> = Vec::with_capacity(bins.len());
    let mut main_loc = Vec::with_capacity(bins.len());
    for (r, b) in bins.iter().enumerate() {
        let host = if b.hostname.is_empty() {
            meta_host.clone().unwrap_or_else(|| "unknown host".into())
        } else {
            b.hostname.clone()
        };
        let m = *machines.entry(host.clone()).or_insert_with(|| defs.add_machine(&host));
        let p = defs.add_process(&format!("rank {r}"), 0, m, r as u32);
        let mut threads: Vec<u16> = b.calls.iter().map(|c| c.thread).collect();
        threads.push(0);
        threads.sort_unstable();
        threads.dedup();
        let mut map = HashMap::new();
        for t in threads {
            map.insert(t, defs.add_location(&format!("rank {r} thread {t}"), p, t as u32));
        }
        main_loc.push(map[&0]);
        locs.push(map);
    }
    (locs, main_loc)
}

/// Names, interned before the parallel part: the calls' by label, and per rank the
/// profiled functions' by address.
#[allow(clippy::type_complexity)]
fn intern_names(defs: &mut Definitions, bins: &[BinFile]) -> (HashMap<u16, StrId>, Vec<HashMap<u64, StrId>>) {
    let mut label_names: HashMap<u16, StrId> = HashMap::new();
    let mut func_names: Vec<HashMap<u64, StrId>> = Vec::with_capacity(bins.len());
    for b in bins {
        let mut f = HashMap::new();
        for c in &b.calls {
            if c.label == layout::FUNCTION_ENTER || c.label == layout::FUNCTION_EXIT {
                let addr = c.int("fn").unwrap_or(0) as u64;
                f.entry(addr).or_insert_with(|| {
                    let name = b.functions.get(&addr).filter(|n| !n.is_empty() && *n != "<none>");
                    defs.strings.intern(&name.cloned().unwrap_or_else(|| format!("{addr:#x}")))
                });
            } else if let Some((name, _)) = layout::layout(c.label) {
                label_names.entry(c.label).or_insert_with(|| defs.strings.intern(name));
            }
        }
        func_names.push(f);
    }
    (label_names, func_names)
}

/// A rank file's statistics: its calls by name, as read and as its footer counts them.
fn rank_stats(b: &BinFile, f: &Path) -> RankStats {
    let mut calls = BTreeMap::new();
    for c in &b.calls {
        if c.label < layout::ALL_FUNCTIONS {
            *calls.entry(layout::layout(c.label).map_or("?", |l| l.0).to_string()).or_insert(0) += 1;
        }
    }
    let footer_calls = b.footer_counts.as_ref().map(|counts| {
        counts
            .iter()
            .enumerate()
            .filter(|&(l, &n)| n > 0 && l < layout::ALL_FUNCTIONS as usize)
            .map(|(l, &n)| {
                let name = layout::layout(l as u16).map_or_else(|| format!("label {l}"), |x| x.0.to_string());
                (name, n as u64)
            })
            .collect()
    });
    RankStats {
        file: f.display().to_string(),
        version: b.version,
        records: b.calls.len() as u64,
        calls,
        footer_calls,
    }
}

struct Ctx<'a> {
    defs: &'a Definitions,
    table: &'a CommTable,
    label_names: &'a HashMap<u16, StrId>,
    base_ns: i128,
}

/// An outstanding request: what its completion will report.
#[derive(Clone, Debug)]
enum Req {
    Send {
        to: LocId,
        comm: CommId,
        tag: u32,
        bytes: u64,
    },
    Recv {
        from: Option<LocId>,
        comm: CommId,
        tag: Option<u32>,
        bytes: u64,
    },
    /// A send or receive whose peer could not be translated: completions are dropped.
    Untranslated,
}

struct ReqState {
    req: Req,
    persistent: bool,
    active: bool,
}

struct Rank<'a> {
    ctx: &'a Ctx<'a>,
    main: LocId,
    comms: HashMap<u16, CommId>,
    sizes: &'a [i64],
    reqs: HashMap<i64, ReqState>,
    warnings: Warnings,
}

impl Rank<'_> {
    fn comm(&mut self, c: &Call, field: &str) -> Option<CommId> {
        let h = c.int(field)? as u16;
        let id = self.comms.get(&h).copied();
        if id.is_none() {
            self.warnings.add("messages on an unknown communicator are not translated");
        }
        id
    }

    /// The location of rank `rank` of `comm`.
    fn peer(&mut self, comm: CommId, rank: i64) -> Option<LocId> {
        if rank < 0 {
            self.warnings.add("messages to or from a negative rank (MPI_PROC_NULL?) are not translated");
            return None;
        }
        if comm == self.ctx.table.self_comm {
            return (rank == 0).then_some(self.main);
        }
        let p = self.ctx.defs.comms.get(comm as usize)?.members.get(rank as usize).copied();
        if p.is_none() {
            self.warnings.add("a rank beyond its communicator's size is not translated");
        }
        p
    }

    fn comm_size(&self, comm: CommId) -> u64 {
        if comm == self.ctx.table.self_comm {
            1
        } else {
            self.ctx.defs.comms.get(comm as usize).map_or(1, |c| c.members.len() as u64)
        }
    }

    fn my_rank_in(&self, comm: CommId) -> Option<usize> {
        if comm == self.ctx.table.self_comm {
            return Some(0);
        }
        self.ctx.defs.comms.get(comm as usize)?.members.iter().position(|&m| m == self.main)
    }

    fn size(&mut self, count: Option<i64>, datatype: Option<i64>) -> u64 {
        let (Some(n), Some(dt)) = (count, datatype) else { return 0 };
        match self.sizes.get(dt as usize) {
            Some(&s) if s >= 0 => (n.max(0) as u64).saturating_mul(s as u64),
            _ => {
                self.warnings.add("message sizes of datatypes missing from the size table count 0 bytes");
                0
            }
        }
    }

    fn tag(&mut self, v: Option<i64>) -> Option<u32> {
        let t = v?;
        if t < 0 {
            return None;
        }
        u32::try_from(t).ok()
    }

    /// The events of call `c` (named `name`) after its `Enter` (`start`) and before its `Leave` (`end`).
    fn translate(&mut self, name: &str, c: &Call, start: &mut Vec<Kind>, end: &mut Vec<Kind>) {
        match name {
            "MPI_Send" | "MPI_Bsend" | "MPI_Ssend" | "MPI_Rsend" => {
                start.extend(self.send_kind(c, "count", "datatype", "tag"));
            }
            "MPI_Recv" => {
                if let Some((b, e)) = self.recv_kinds(c, "count", "datatype", "tag") {
                    start.push(b);
                    end.push(e);
                }
            }
            "MPI_Sendrecv" | "MPI_Sendrecv_replace" => {
                let (sc, sd, rc, rd) = if name == "MPI_Sendrecv" {
                    ("sendcount", "sendtype", "recvcount", "recvtype")
                } else {
                    ("count", "datatype", "count", "datatype")
                };
                start.extend(self.send_kind(c, sc, sd, "sendtag"));
                if let Some((b, e)) = self.recv_kinds(c, rc, rd, "recvtag") {
                    start.push(b);
                    end.push(e);
                }
            }
            "MPI_Isend" | "MPI_Ibsend" | "MPI_Issend" | "MPI_Irsend" | "MPI_Irecv" | "MPI_Send_init"
            | "MPI_Bsend_init" | "MPI_Ssend_init" | "MPI_Rsend_init" | "MPI_Recv_init" | "MPI_Start"
            | "MPI_Startall" | "MPI_Request_free" => self.requests(name, c, start),
            "MPI_Wait" | "MPI_Test" | "MPI_Waitany" | "MPI_Testany" | "MPI_Waitall" | "MPI_Testall"
            | "MPI_Waitsome" | "MPI_Testsome" => self.completions(name, c, end),
            _ => {
                if let Some(op) = mpi_collective(name) {
                    if let Some(k) = self.coll_end(op, c) {
                        if let Kind::CollEnd { comm, .. } = k {
                            start.push(Kind::CollBegin { op, comm });
                        }
                        end.push(k);
                    }
                }
            }
        }
    }

    /// Calls that create, start or free requests: non-blocking posts at their start.
    fn requests(&mut self, name: &str, c: &Call, start: &mut Vec<Kind>) {
        match name {
            "MPI_Isend" | "MPI_Ibsend" | "MPI_Issend" | "MPI_Irsend" | "MPI_Irecv" | "MPI_Send_init"
            | "MPI_Bsend_init" | "MPI_Ssend_init" | "MPI_Rsend_init" | "MPI_Recv_init" => {
                let Some(request) = c.int("request") else { return };
                let recv = name == "MPI_Irecv" || name == "MPI_Recv_init";
                let req = if recv { self.recv_req(c) } else { self.send_req(c) };
                let persistent = name.ends_with("_init");
                if !persistent {
                    start.extend(post_kind(&req, request));
                }
                self.reqs.insert(request, ReqState { req, persistent, active: !persistent });
            }
            "MPI_Start" | "MPI_Startall" => {
                let list: Vec<i64> = if name == "MPI_Start" {
                    c.int("request").into_iter().collect()
                } else {
                    c.ints("requests").to_vec()
                };
                for request in list {
                    match self.reqs.get_mut(&request) {
                        Some(s) if s.persistent => {
                            s.active = true;
                            start.extend(post_kind(&s.req, request));
                        }
                        _ => self.warnings.add("MPI_Start of a request not created in the trace: ignored"),
                    }
                }
            }
            "MPI_Request_free" => {
                if let Some(s) = c.int("request").and_then(|r| self.reqs.remove(&r)) {
                    if s.active && !s.persistent {
                        self.warnings.add("requests freed before completing have no completion event");
                    }
                }
            }
            _ => {}
        }
    }

    /// Waits and tests: the completions of the requests they complete, at their end.
    fn completions(&mut self, name: &str, c: &Call, end: &mut Vec<Kind>) {
        match name {
            "MPI_Wait" | "MPI_Test" => {
                if name == "MPI_Test" && c.int("flag").unwrap_or(0) == 0 {
                    return;
                }
                let st = c.statuses("status").first().copied();
                if let Some(r) = c.int("request") {
                    self.finish(r, st, end);
                }
            }
            "MPI_Waitany" | "MPI_Testany" => {
                if name == "MPI_Testany" && c.int("flag").unwrap_or(0) == 0 {
                    return;
                }
                let reqs = c.ints("requests");
                if let Some(&r) =
                    c.int("index").and_then(|i| usize::try_from(i).ok()).and_then(|i| reqs.get(i))
                {
                    let st = c.statuses("status").first().copied();
                    self.finish(r, st, end);
                }
            }
            "MPI_Waitall" | "MPI_Testall" => {
                if name == "MPI_Testall" && c.int("flag").unwrap_or(0) == 0 {
                    return;
                }
                let reqs = c.ints("requests");
                let sts = c.statuses("statuses");
                for (i, &r) in reqs.iter().enumerate() {
                    let st = if sts.len() == reqs.len() { Some(sts[i]) } else { None };
                    self.finish(r, st, end);
                }
            }
            "MPI_Waitsome" | "MPI_Testsome" => {
                let reqs = c.ints("requests");
                let sts = c.statuses("statuses");
                let out = c.int("outcount").unwrap_or(0).max(0) as usize;
                for (k, &i) in c.ints("indices").iter().take(out).enumerate() {
                    if let Some(&r) = usize::try_from(i).ok().and_then(|i| reqs.get(i)) {
                        self.finish(r, sts.get(k).copied(), end);
                    }
                }
            }
            _ => {}
        }
    }

    fn send_req(&mut self, c: &Call) -> Req {
        match self.send_kind(c, "count", "datatype", "tag") {
            Some(Kind::Send { to, comm, tag, bytes }) => Req::Send { to, comm, tag, bytes },
            _ => Req::Untranslated,
        }
    }

    fn recv_req(&mut self, c: &Call) -> Req {
        let Some(comm) = self.comm(c, "comm") else { return Req::Untranslated };
        let source = c.int("source").unwrap_or(-1);
        let from = if source == -1 {
            None
        } else {
            match self.peer(comm, source) {
                Some(l) => Some(l),
                None => return Req::Untranslated,
            }
        };
        let tag = self.tag(c.int("tag"));
        let bytes = self.size(c.int("count"), c.int("datatype"));
        Req::Recv { from, comm, tag, bytes }
    }

    fn send_kind(&mut self, c: &Call, count: &str, dt: &str, tag: &str) -> Option<Kind> {
        let comm = self.comm(c, "comm")?;
        let to = self.peer(comm, c.int("dest")?)?;
        let Some(t) = self.tag(c.int(tag)) else {
            self.warnings.add("sends with a negative tag are not translated");
            return None;
        };
        let bytes = self.size(c.int(count), c.int(dt));
        Some(Kind::Send { to, comm, tag: t, bytes })
    }

    /// A blocking receive's begin and end events, if its source and tag are known.
    fn recv_kinds(&mut self, c: &Call, count: &str, dt: &str, tag: &str) -> Option<(Kind, Kind)> {
        let comm = self.comm(c, "comm")?;
        let source = c.int("source")?;
        let want_tag = c.int(tag)?;
        let st = c.statuses("status").first().copied();
        let actual_source = st.map(|s| s.source as i64).filter(|&s| s >= 0).unwrap_or(source);
        let actual_tag = st.and_then(|s| s.tag).map(|t| t as i64).filter(|&t| t >= 0).unwrap_or(want_tag);
        if actual_source == -1 || actual_tag < 0 {
            self.warnings
                .add("receives with a wildcard source or tag and no recorded status are not translated");
            return None;
        }
        let from = self.peer(comm, actual_source)?;
        let actual_tag = u32::try_from(actual_tag).ok()?;
        let bytes = match st {
            Some(s) if s.bytes >= 0 => s.bytes as u64,
            _ => self.size(c.int(count), c.int(dt)),
        };
        let begin_from = if source == -1 { None } else { Some(from) };
        let begin_tag = if want_tag == -1 { None } else { Some(actual_tag) };
        Some((
            Kind::RecvBegin { from: begin_from, comm, tag: begin_tag },
            Kind::RecvEnd { from, comm, tag: actual_tag, bytes },
        ))
    }

    fn finish(&mut self, request: i64, st: Option<Status>, end: &mut Vec<Kind>) {
        let Some(s) = self.reqs.get_mut(&request) else {
            if request > comms::COMM_NULL {
                self.warnings.add("completions of requests not posted in the trace are not translated");
            }
            return;
        };
        if !s.active {
            return;
        }
        let req = s.req.clone();
        if s.persistent {
            s.active = false;
        } else {
            self.reqs.remove(&request);
        }
        let id = request as u32 as u64;
        match req {
            Req::Send { .. } => end.push(Kind::IsendComplete { request: id }),
            Req::Recv { from, comm, tag, bytes } => {
                if st.is_some_and(|s| s.cancelled != 0) {
                    self.warnings.add("cancelled receives have no completion event");
                    return;
                }
                let from = match st.map(|s| s.source as i64).filter(|&s| s >= 0) {
                    Some(src) => self.peer(comm, src),
                    None => from,
                };
                let tag = st.and_then(|s| s.tag).and_then(|t| u32::try_from(t).ok()).or(tag);
                let bytes = st.map(|s| s.bytes).filter(|&b| b >= 0).map_or(bytes, |b| b as u64);
                match (from, tag) {
                    (Some(from), Some(tag)) => {
                        end.push(Kind::IrecvComplete { request: id, from, comm, tag, bytes })
                    }
                    _ => self.warnings.add(
                        "non-blocking receives with a wildcard source or tag and no recorded status have no completion event",
                    ),
                }
            }
            Req::Untranslated => {}
        }
    }

    fn coll_end(&mut self, op: CollOp, c: &Call) -> Option<Kind> {
        let comm = self.comm(c, "comm")?;
        let n = self.comm_size(comm);
        let me = self.my_rank_in(comm);
        let int = |f: &str| c.int(f);
        let root = match op {
            CollOp::Bcast
            | CollOp::Reduce
            | CollOp::Gather
            | CollOp::Gatherv
            | CollOp::Scatter
            | CollOp::Scatterv => match int("root") {
                Some(r) => self.peer(comm, r),
                None => None,
            },
            _ => None,
        };
        let is_root = root.is_some_and(|r| r == self.main);
        let (sent, received) = self.coll_bytes(op, c, n, me, is_root);
        Some(Kind::CollEnd { op, comm, root, sent, received })
    }

    /// The bytes a collective call sent and received, from its counts and datatypes;
    /// `n` members, this rank the `me`-th, `is_root` where it is the root.
    fn coll_bytes(&mut self, op: CollOp, c: &Call, n: u64, me: Option<usize>, is_root: bool) -> (u64, u64) {
        let int = |f: &str| c.int(f);
        let sum = |v: &[i64]| v.iter().map(|&x| x.max(0) as u64).fold(0u64, u64::saturating_add);
        match op {
            CollOp::Barrier => (0, 0),
            CollOp::Bcast => {
                let b = self.size(int("count"), int("datatype"));
                if is_root {
                    (b, 0)
                } else {
                    (0, b)
                }
            }
            CollOp::Reduce => {
                let b = self.size(int("count"), int("datatype"));
                (b, if is_root { b } else { 0 })
            }
            CollOp::Allreduce | CollOp::Scan => {
                let b = self.size(int("count"), int("datatype"));
                (b, b)
            }
            CollOp::Gather => {
                let s = self.size(int("sendcount"), int("sendtype"));
                let r =
                    if is_root { self.size(int("recvcount"), int("recvtype")).saturating_mul(n) } else { 0 };
                (s, r)
            }
            CollOp::Gatherv => {
                let s = self.size(int("sendcount"), int("sendtype"));
                let r = if is_root {
                    self.size(Some(sum(c.ints("recvcounts")) as i64), int("recvtype"))
                } else {
                    0
                };
                (s, r)
            }
            CollOp::Scatter => {
                let s =
                    if is_root { self.size(int("sendcount"), int("sendtype")).saturating_mul(n) } else { 0 };
                (s, self.size(int("recvcount"), int("recvtype")))
            }
            CollOp::Scatterv => {
                let s = if is_root {
                    self.size(Some(sum(c.ints("sendcounts")) as i64), int("sendtype"))
                } else {
                    0
                };
                (s, self.size(int("recvcount"), int("recvtype")))
            }
            CollOp::Allgather => {
                let s = self.size(int("sendcount"), int("sendtype"));
                (s, self.size(int("recvcount"), int("recvtype")).saturating_mul(n))
            }
            CollOp::Allgatherv => {
                let s = self.size(int("sendcount"), int("sendtype"));
                (s, self.size(Some(sum(c.ints("recvcounts")) as i64), int("recvtype")))
            }
            CollOp::Alltoall => (
                self.size(int("sendcount"), int("sendtype")).saturating_mul(n),
                self.size(int("recvcount"), int("recvtype")).saturating_mul(n),
            ),
            CollOp::Alltoallv => (
                self.size(Some(sum(c.ints("sendcounts")) as i64), int("sendtype")),
                self.size(Some(sum(c.ints("recvcounts")) as i64), int("recvtype")),
            ),
            CollOp::ReduceScatter => {
                let counts = c.ints("recvcounts");
                let s = self.size(Some(sum(counts) as i64), int("datatype"));
                let mine = me.and_then(|i| counts.get(i)).copied();
                (s, self.size(mine, int("datatype")))
            }
            CollOp::Other => {
                if let Some(count) = int("count") {
                    // MPI_Exscan.
                    let b = self.size(Some(count), int("datatype"));
                    (b, b)
                } else {
                    // MPI_Alltoallw: per-peer datatypes.
                    let (sc, st) = (c.ints("sendcounts").to_vec(), c.ints("sendtypes").to_vec());
                    let (rc, rt) = (c.ints("recvcounts").to_vec(), c.ints("recvtypes").to_vec());
                    let mut s = 0u64;
                    for (n, t) in sc.iter().zip(&st) {
                        s = s.saturating_add(self.size(Some(*n), Some(*t)));
                    }
                    let mut r = 0u64;
                    for (n, t) in rc.iter().zip(&rt) {
                        r = r.saturating_add(self.size(Some(*n), Some(*t)));
                    }
                    (s, r)
                }
            }
        }
    }
}

fn post_kind(req: &Req, request: i64) -> Option<Kind> {
    let request = request as u32 as u64;
    match *req {
        Req::Send { to, comm, tag, bytes } => Some(Kind::Isend { to, comm, tag, bytes, request }),
        Req::Recv { from, comm, tag, .. } => Some(Kind::IrecvRequest { from, comm, tag, request }),
        Req::Untranslated => None,
    }
}

impl Ctx<'_> {
    fn rank(
        &self,
        r: usize,
        b: &BinFile,
        locs: &HashMap<u16, LocId>,
        main: LocId,
        funcs: &HashMap<u64, StrId>,
    ) -> (Vec<Event>, Warnings) {
        let mut st = Rank {
            ctx: self,
            main,
            comms: HashMap::from([
                (comms::COMM_WORLD, self.table.world),
                (comms::COMM_SELF, self.table.self_comm),
            ]),
            sizes: &b.datatype_sizes,
            reqs: HashMap::new(),
            warnings: Warnings::default(),
        };
        let mut per_loc: HashMap<LocId, Vec<Event>> = HashMap::new();
        let mut last_wall: HashMap<LocId, i64> = HashMap::new();
        let bindings = &self.table.bindings[r];
        let mut next_binding = 0;
        let rel = |t: i64| (t as i128 - self.base_ns).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        let (mut start, mut end) = (Vec::new(), Vec::new());
        for (i, c) in b.calls.iter().enumerate() {
            let loc = locs.get(&c.thread).copied().unwrap_or(main);
            let (ws, we) = match c.wall {
                Some((s, e)) => (rel(s), rel(e)),
                None => {
                    st.warnings.add("calls without wall time are placed at their thread's previous event");
                    let t = last_wall.get(&loc).copied().unwrap_or(0);
                    (t, t)
                }
            };
            last_wall.insert(loc, we.max(ws));
            let (cs, ce) = match c.cpu {
                Some((s, e)) => (Some(s), Some(e)),
                None => (None, None),
            };
            if c.label == layout::FUNCTION_ENTER || c.label == layout::FUNCTION_EXIT {
                let proc = funcs.get(&(c.int("fn").unwrap_or(0) as u64)).copied().unwrap_or(0);
                let kind = if c.label == layout::FUNCTION_ENTER {
                    Kind::Enter { proc }
                } else {
                    Kind::Leave { proc }
                };
                per_loc.entry(loc).or_default().push(Event::new(loc, ws, cs, kind));
            } else {
                let name = layout::layout(c.label).map_or("?", |l| l.0);
                let proc = self.label_names.get(&c.label).copied().unwrap_or(0);
                start.clear();
                end.clear();
                st.translate(name, c, &mut start, &mut end);
                let out = per_loc.entry(loc).or_default();
                out.push(Event::new(loc, ws, cs, Kind::Enter { proc }));
                out.extend(start.drain(..).map(|k| Event::new(loc, ws, cs, k)));
                out.extend(end.drain(..).map(|k| Event::new(loc, we, ce, k)));
                out.push(Event::new(loc, we, ce, Kind::Leave { proc }));
            }
            while next_binding < bindings.len() && bindings[next_binding].0 == i {
                let (_, h, comm) = bindings[next_binding];
                match comm {
                    Some(cm) => st.comms.insert(h, cm),
                    None => st.comms.remove(&h),
                };
                next_binding += 1;
            }
        }
        let mut out = Vec::new();
        let mut keys: Vec<LocId> = per_loc.keys().copied().collect();
        keys.sort_unstable();
        let mut raised = 0u64;
        for l in keys {
            let mut v = per_loc.remove(&l).unwrap_or_default();
            v.sort_by_key(|e| e.wall);
            let mut max_cpu = i64::MIN;
            for e in &mut v {
                if let Some(cpu) = e.cpu.as_mut() {
                    if *cpu < max_cpu {
                        *cpu = max_cpu;
                        raised += 1;
                    }
                    max_cpu = *cpu;
                }
            }
            out.extend(v);
        }
        if raised > 0 {
            st.warnings.add(format!(
                "rank {r}: {raised} CPU times below the previous one on their thread were raised to it"
            ));
        }
        (out, st.warnings)
    }
}
