//! A reader for Paraver traces (BSC's Extrae writes them): the `.prv` records
//! (plain or gzip-ed, detected by the gzip magic), the `.pcf` names and the
//! `.row` object names, found beside the `.prv` (`x.prv` or `x.prv.gz` ->
//! `x.pcf`, `x.row`).
//!
//! # What becomes what
//!
//! Definitions: one application per Paraver application (named by the `.row`'s
//! `APPL` level, else after the file); one machine per node (`.row` `NODE`
//! names, else `node N`); one process per task (`TASK` names, else
//! `task A.T`), its rank the task number minus one, on the node of its task;
//! one location per thread (`THREAD` names, else `THREAD A.T.H`), thread
//! number minus one. Each `c:` line becomes a communicator (members: the first
//! thread of each listed task, in the order listed). Point-to-point records
//! carry no communicator, so each application also has a `world`
//! communicator (all its tasks in order) for them; a `c:` communicator with
//! exactly those members is used as it. Properties `paraver.*` give the date,
//! the header's runtime in ns and the time unit. The CPUs the records name
//! (their `cpu` field, numbered from 1 over the header's nodes in order) give
//! each task's recorded placement on its node (`cpus_allowed:` and `cpus_used:`,
//! formats/trace.md): Paraver says where threads ran, not where they could.
//!
//! Records (times converted from the header's unit to ns; `cpu` is `None`:
//! Paraver has no CPU time):
//!
//! | Paraver | spoor |
//! |---|---|
//! | event of an MPI type (50000001..=50000005), value v != 0 | `Enter` of the MPI call the `.pcf` names v (an MPI call still open is left first) |
//! | same, value 0 | `Leave` of the open MPI call |
//! | event of a region type ([`DEFAULT_REGION_TYPES`]: OpenMP outlined 60000018, user functions 60000019, task functions 60000023; more with [`ParaverOptions::region_types`]) | `Enter` (value != 0) / `Leave` (value 0), nested per location |
//! | MPI call named `MPI_Barrier`, `MPI_Bcast`, `MPI_Allreduce`, ... | also `CollBegin` right after its `Enter` and `CollEnd` right before its `Leave`: communicator from event 50100004 (a `c:` id), bytes from 50100001 (sent) and 50100002 (received); `root` is the location whose matching call (same communicator, same position in its sequence of collectives there) carries 50100003 = 1 |
//! | communication record `3` | `Send` on the sender at the logical send time (to = receiver location, tag, size); on the receiver, see below |
//! | event [`APPLICATION`] (40000001), value 1 / 0 | `ProcessBegin` (no parent) / `ProcessEnd` of the thread's location (regions still open are left first) |
//! | state record `1` | `PhaseBegin` and `PhaseEnd` named after the state (`Running`, `Waiting a message`, ...; `state N` without a `.pcf`), cut to the thread's application begin and end; a state outside them, or "Not created" (2), is not imported. Also counted per state in [`ParaverStats::states`] (records and total ns) |
//! | event of a counter type ([`COUNTERS`]: 42000000..=42999999, PAPI) | `Metric` sample of the metric named by the type's `.pcf` label up to ` [` (`PAPI_TOT_INS`; `counter T` without one), unit `count since the previous sample` (Extrae writes the increase since the thread's last reading) |
//! | event of Extrae's activity types ([`EXTRAE_ACTIVITIES`]: trace initialization 40000002, flushing 40000003) | `Enter` (value != 0) / `Leave` (value 0) of a region named by the type's label |
//! | any other event type | not an event: counted per type in [`ParaverStats::other_types`] and listed in [`ParaverTrace::skipped`] |
//!
//! States become phases rather than procedures because they change inside user
//! functions and MPI calls (a procedure must nest); at one time, a state's phase begins or ends
//! after the calls that end there and after the application's begin, before everything else.
//!
//! The receiving side of a communication record: when the physical receive
//! falls in an MPI call that also holds the logical receive (the time the
//! receive was posted) and that is not a wait or test (`MPI_Wait*`,
//! `MPI_Test*`), the receive was blocking (`MPI_Recv`, `MPI_Sendrecv`, ...):
//! `RecvBegin` at the logical receive time and `RecvEnd` at the physical one.
//! Otherwise it was non-blocking (Extrae's logical receive is then the end of
//! the `MPI_Irecv`): `IrecvRequest` at the logical receive time and
//! `IrecvComplete` at the physical one, with a request id made up per location
//! (1, 2, ...). Paraver records the actual source and tag only, so
//! `RecvBegin` and `IrecvRequest` carry those, never a wildcard. Sends are
//! always `Send`: Paraver says neither which request a non-blocking send used
//! nor when it completed.
//!
//! Events of one location are ordered by time (stable); at equal times an
//! event that belongs to an MPI call is placed inside it: `Send`,
//! `RecvBegin`, `CollBegin` right after the call's `Enter`, `RecvEnd`,
//! `IrecvComplete`, `CollEnd` right before its `Leave`. The returned events
//! are in time order over all locations (ties by location).
//!
//! Degraded input: without a `.pcf`, names are `event T value V` (and no
//! collective can be recognised); without a `.row`, names come from numbers;
//! regions left open at the end of the trace are closed at their location's
//! last event time. Each such case adds a line to [`ParaverTrace::warnings`].
//! Malformed records are errors naming the file and line.

mod header;
mod pcf;
mod row;

pub use header::{Header, TaskSpec, MAX_THREADS};
pub use pcf::{EventType, Pcf};
pub use row::Row;

use crate::files::{Disk, TraceFiles};
use crate::mpi::{mpi_collective, Warnings};
use spoor_format::text::MAX_LINE;
use spoor_format::Error;
use spoor_model::placement::{self, cpu_list};
use spoor_model::{CollOp, CommId, Definitions, Event, Kind, LocId, MetricId, StrId};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Extrae's MPI call event types: point-to-point, collective, other, one-sided, I/O.
pub const MPI_TYPES: std::ops::RangeInclusive<u64> = 50000001..=50000005;
/// Bytes sent by this task in a collective.
pub const GLOBAL_OP_SENDSIZE: u64 = 50100001;
/// Bytes received by this task in a collective.
pub const GLOBAL_OP_RECVSIZE: u64 = 50100002;
/// 1 when this task is the collective's root.
pub const GLOBAL_OP_ROOT: u64 = 50100003;
/// The communicator (a `c:` id) of a collective.
pub const GLOBAL_OP_COMM: u64 = 50100004;
/// Event types read as region entries and exits besides the MPI types:
/// OpenMP outlined functions, user functions, task functions.
pub const DEFAULT_REGION_TYPES: [u64; 3] = [60000018, 60000019, 60000023];
/// Extrae's application event: value 1 at its begin, 0 at its end.
pub const APPLICATION: u64 = 40000001;
/// Extrae's own activities, value 1 at their begin and 0 at their end, read as regions
/// named by the type's label: trace initialization, flushing the trace buffers.
pub const EXTRAE_ACTIVITIES: [u64; 2] = [40000002, 40000003];
/// Hardware counters (Extrae: PAPI presets from 42000000, native counters from
/// 42001000); each value is the count since the thread's previous reading.
pub const COUNTERS: std::ops::RangeInclusive<u64> = 42000000..=42999999;
/// Paraver's "Not created" state: the thread does not exist yet (or any more).
pub const STATE_NOT_CREATED: u64 = 2;

/// How to read a trace.
#[derive(Clone, Debug)]
pub struct ParaverOptions {
    /// The `.pcf` to use instead of the one beside the `.prv`.
    pub pcf: Option<PathBuf>,
    /// The `.row` to use instead of the one beside the `.prv`.
    pub row: Option<PathBuf>,
    /// Event types whose values enter (value != 0) and leave (value 0)
    /// regions, besides the MPI types.
    pub region_types: Vec<u64>,
    /// The most threads, and the most nodes, the header may declare
    /// ([`MAX_THREADS`] by default).
    pub max_threads: u64,
}

impl Default for ParaverOptions {
    fn default() -> Self {
        ParaverOptions {
            pcf: None,
            row: None,
            region_types: DEFAULT_REGION_TYPES.to_vec(),
            max_threads: header::MAX_THREADS,
        }
    }
}

/// Time spent in one state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateTotal {
    /// The state's name in the `.pcf` (`state N` without one).
    pub name: String,
    pub records: u64,
    pub ns: u64,
}

/// What the reader saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParaverStats {
    /// Records of type 1 (states).
    pub state_records: u64,
    /// Records of type 2 (events).
    pub event_records: u64,
    /// Records of type 3 (communications).
    pub comm_records: u64,
    /// `c:` lines (communicators).
    pub comm_lines: u64,
    /// `type:value` pairs in event records.
    pub event_pairs: u64,
    /// MPI calls entered.
    pub mpi_calls: u64,
    /// Entries into other regions (user functions, ...).
    pub region_entries: u64,
    /// Application begins and ends (event 40000001), which became `ProcessBegin` and `ProcessEnd`.
    pub app_events: u64,
    /// Counter values, which became `Metric` samples.
    pub metric_samples: u64,
    /// State records that became a phase.
    pub states_imported: u64,
    /// State records not imported: "Not created", or wholly outside the application's
    /// begin and end on their thread.
    pub states_outside: u64,
    /// Per state value, its name, record count and total time.
    pub states: BTreeMap<u64, StateTotal>,
    /// Event types not turned into spoor events nor used as collective attributes, with their pair counts.
    pub other_types: BTreeMap<u64, u64>,
}

impl ParaverStats {
    /// What was not imported, by record type: (count, what), as spoor-import reports it.
    pub fn skipped(&self, pcf: &Pcf) -> Vec<(u64, String)> {
        let mut v = Vec::new();
        if self.states_outside > 0 {
            v.push((
                self.states_outside,
                "state records outside their thread's application begin and end".into(),
            ));
        }
        for (&ty, &n) in &self.other_types {
            let label = pcf.types.get(&ty).map_or("", |t| t.label.as_str());
            let what = if label.is_empty() {
                format!("values of event type {ty}")
            } else {
                format!("values of event type {ty} ({label})")
            };
            v.push((n, what));
        }
        v
    }
}

/// A trace read by [`read_paraver_with`].
#[derive(Clone, Debug)]
pub struct ParaverTrace {
    pub defs: Definitions,
    /// Every event, in time order over all locations (ties by location).
    pub events: Vec<Event>,
    pub header: Header,
    pub stats: ParaverStats,
    /// What was missing or repaired, one line per kind of problem with its count.
    pub warnings: Vec<String>,
    /// What was not imported, by record type: (count, what).
    pub skipped: Vec<(u64, String)>,
}

/// True if `first_bytes` (the start of a file, a few hundred bytes for a
/// gzip-ed one) look like a Paraver `.prv`: `#Paraver`, plain or gzip-ed.
pub fn looks_like(first_bytes: &[u8]) -> bool {
    const MAGIC: &[u8] = b"#Paraver";
    if first_bytes.starts_with(&[0x1f, 0x8b]) {
        let mut dec = flate2::read::GzDecoder::new(first_bytes);
        let mut buf = [0u8; 8];
        let mut got = 0;
        while got < buf.len() {
            match dec.read(&mut buf[got..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
        return &buf[..got] == MAGIC;
    }
    first_bytes.starts_with(MAGIC)
}

fn stem(prv: &Path) -> String {
    let name = prv.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    [".prv.gz", ".prv", ".gz"]
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .unwrap_or(&name)
        .to_string()
}

/// The `.pcf` and `.row` beside a `.prv` (`x.prv`, `x.prv.gz` -> `x.pcf`, `x.row`).
pub fn companion_paths(prv: &Path) -> (PathBuf, PathBuf) {
    let stem = stem(prv);
    (prv.with_file_name(format!("{stem}.pcf")), prv.with_file_name(format!("{stem}.row")))
}

/// Reads a Paraver trace with the default options; see the module docs.
pub fn read_paraver(prv: &Path) -> Result<(Definitions, Vec<Event>), Error> {
    read_paraver_with(prv, &ParaverOptions::default()).map(|t| (t.defs, t.events))
}

/// Reads a Paraver trace: the `.prv` at `prv` and its `.pcf` and `.row`.
pub fn read_paraver_with(prv: &Path, opts: &ParaverOptions) -> Result<ParaverTrace, Error> {
    read_paraver_from(&Disk, prv, opts)
}

/// [`read_paraver_with`] over the files of `files` (e.g. [`MemFiles`](crate::MemFiles)):
/// the `.prv` at `prv`, the `.pcf` and `.row` beside it or at the paths of `opts`.
pub fn read_paraver_from(
    files: &impl TraceFiles,
    prv: &Path,
    opts: &ParaverOptions,
) -> Result<ParaverTrace, Error> {
    let mut warnings = Warnings::default();
    let (pcf_path, row_path) = companion_paths(prv);
    let pcf_path = opts.pcf.clone().unwrap_or(pcf_path);
    let row_path = opts.row.clone().unwrap_or(row_path);
    let pcf = match read_text(files, &pcf_path)? {
        Some(text) => Some(pcf::parse(&pcf_path.display().to_string(), &text)?),
        None => {
            warnings.add(format!(
                "{}: not found: names are numbers and collectives are not recognised",
                pcf_path.display()
            ));
            None
        }
    };
    let row = match read_text(files, &row_path)? {
        Some(text) => Some(row::parse(&row_path.display().to_string(), &text)?),
        None => {
            warnings.add(format!("{}: not found: locations are named by number", row_path.display()));
            None
        }
    };
    let file = prv.display().to_string();
    let mut plain = files.open(prv).map_err(|e| Error::io(&file, &e))?;
    let gz = plain.fill_buf().map_err(|e| Error::io(&file, &e))?.starts_with(&[0x1f, 0x8b]);
    let input: Box<dyn BufRead> = if gz {
        Box::new(BufReader::with_capacity(1 << 16, flate2::bufread::MultiGzDecoder::new(plain)))
    } else {
        Box::new(plain)
    };
    let r = Reader::new(file, input, pcf.unwrap_or_default(), row, opts, stem(prv), &mut warnings)?;
    let (trace, pcf) = r.run()?;
    let skipped = trace.stats.skipped(&pcf);
    Ok(ParaverTrace { warnings: warnings.into_vec(), skipped, ..trace })
}

/// The file's text, `None` if it does not exist.
fn read_text(files: &impl TraceFiles, path: &Path) -> Result<Option<String>, Error> {
    match files.read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&path.display().to_string(), &e)),
    }
}

/// Attributes of a collective, from the events 5010000x at its entry.
#[derive(Clone, Copy, Debug, Default)]
struct CollAttrs {
    sent: Option<u64>,
    received: Option<u64>,
    is_root: bool,
    comm: Option<u64>,
}

/// One MPI call on a location.
struct Call {
    enter_t: i64,
    leave_t: i64,
    /// Positions of its Enter and Leave among the location's region events.
    enter_pos: usize,
    leave_pos: usize,
    op: Option<CollOp>,
    wait_like: bool,
    attrs: CollAttrs,
}

struct Open {
    ty: u64,
    name: StrId,
    call: Option<usize>,
}

#[derive(Default)]
struct LocState {
    /// Region entries and exits, application begin and end, counter samples, in record order.
    base: Vec<(i64, Kind)>,
    /// State records: begin, end, state value.
    states: Vec<(i64, i64, u64)>,
    /// The application's begin and end on this thread.
    app_begin: Option<i64>,
    app_end: Option<i64>,
    calls: Vec<Call>,
    open: Vec<Open>,
    last_t: i64,
    /// The CPUs (Paraver's numbers, from 1) the thread's records say it ran on.
    cpus: Vec<u64>,
    /// Boxed: a header may declare millions of threads, most never in a collective.
    pending: Option<Box<(i64, CollAttrs)>>,
}

struct CommRec {
    from: LocId,
    send_t: i64,
    to: LocId,
    recv_log: i64,
    recv_phys: i64,
    bytes: u64,
    tag: u32,
}

/// One location's events before ordering: (time, slot key, priority, kind).
type Item = (i64, u64, u8, Kind);

/// The communicators made at the end: the c: lines' by (application, id), and each
/// application's world.
struct Comms {
    ids: HashMap<(u32, u64), CommId>,
    world: Vec<CommId>,
}

impl Comms {
    /// The communicator of a collective call of application `app`.
    fn of(&self, app: u32, attrs: &CollAttrs) -> CommId {
        attrs.comm.and_then(|id| self.ids.get(&(app, id)).copied()).unwrap_or(self.world[app as usize])
    }
}

struct Reader<'a> {
    file: String,
    input: Box<dyn BufRead + 'a>,
    line: u64,
    header: Header,
    pcf: Pcf,
    region_types: Vec<u64>,
    defs: Definitions,
    /// Per application, per task, the location of its first thread.
    first_loc: Vec<Vec<LocId>>,
    /// Per location, its application.
    loc_app: Vec<u32>,
    locs: Vec<LocState>,
    comms: Vec<CommRec>,
    c_lines: Vec<(u32, u64, Vec<LocId>)>,
    names: HashMap<(u64, i64), StrId>,
    metrics: HashMap<u64, MetricId>,
    stats: ParaverStats,
    warnings: &'a mut Warnings,
}

impl<'a> Reader<'a> {
    fn new(
        file: String,
        mut input: Box<dyn BufRead + 'a>,
        pcf: Pcf,
        row: Option<Row>,
        opts: &ParaverOptions,
        app_base: String,
        warnings: &'a mut Warnings,
    ) -> Result<Self, Error> {
        let mut first = Vec::new();
        let n = read_line(&file, 1, &mut input, &mut first)?;
        if n == 0 {
            return Err(Error::at_line(&file, 1, "empty file: expected a #Paraver header"));
        }
        let text = std::str::from_utf8(&first)
            .map_err(|_| Error::at_line(&file, 1, "not a Paraver trace: the header is not text"))?;
        let header = header::parse(&file, text, opts.max_threads)?;
        let row = row.unwrap_or_default();
        let mut defs = Definitions::new();
        // A level's name of entry i, when the .row gives one.
        let level = |name: &str, i: usize| row.level(name).and_then(|l| l.get(i)).filter(|s| !s.is_empty());
        let napps = header.apps.len();
        for a in 0..napps {
            let name = match level("APPL", a) {
                Some(n) => n.clone(),
                None if napps == 1 => app_base.clone(),
                None => format!("{app_base} app {}", a + 1),
            };
            defs.add_app(&name);
        }
        for i in 0..header.nodes.len() {
            let name = level("NODE", i).cloned().unwrap_or_else(|| format!("node {}", i + 1));
            defs.add_machine(&name);
        }
        let mut unknown_machine = None;
        let total_threads: u64 = header.apps.iter().flatten().map(|t| t.threads as u64).sum();
        if let Some(l) = row.level("THREAD") {
            if l.len() as u64 != total_threads {
                warnings.add(format!(
                    "the .row names {} threads but the header declares {total_threads}: some threads are named by number",
                    l.len()
                ));
            }
        }
        let mut first_loc = Vec::new();
        let mut loc_app = Vec::with_capacity(total_threads as usize);
        defs.reserve_locations(total_threads as usize);
        // Looked up once: a header may declare millions of threads.
        let thread_names = row.level("THREAD").unwrap_or_default();
        let mut lname = String::new();
        let (mut task_index, mut thread_index) = (0usize, 0usize);
        for (a, tasks) in header.apps.iter().enumerate() {
            let mut firsts = Vec::new();
            for (t, spec) in tasks.iter().enumerate() {
                let machine = if spec.node >= 1 && (spec.node as usize) <= header.nodes.len() {
                    spec.node - 1
                } else {
                    *unknown_machine.get_or_insert_with(|| defs.add_machine("unknown node"))
                };
                let pname =
                    level("TASK", task_index).cloned().unwrap_or_else(|| format!("task {}.{}", a + 1, t + 1));
                task_index += 1;
                let p = defs.add_process(&pname, a as u32, machine, t as u32);
                firsts.push(defs.locations.len() as LocId);
                for h in 0..spec.threads {
                    lname.clear();
                    match thread_names.get(thread_index).filter(|s| !s.is_empty()) {
                        Some(n) => lname.push_str(n),
                        None => write!(lname, "THREAD {}.{}.{}", a + 1, t + 1, h + 1)
                            .expect("writing to a String"),
                    }
                    thread_index += 1;
                    defs.add_location(&lname, p, h);
                    loc_app.push(a as u32);
                }
            }
            first_loc.push(firsts);
        }
        defs.set_property("import.format", "paraver");
        defs.set_property("paraver.date", &header.date);
        defs.set_property("paraver.runtime_ns", &header.runtime_ns().to_string());
        defs.set_property("paraver.time_unit", &header.unit);
        let locs = (0..defs.locations.len()).map(|_| LocState::default()).collect();
        let mut region_types = opts.region_types.clone();
        region_types.retain(|t| !MPI_TYPES.contains(t));
        Ok(Reader {
            file,
            input,
            line: 1,
            header,
            pcf,
            region_types,
            defs,
            first_loc,
            loc_app,
            locs,
            comms: Vec::new(),
            c_lines: Vec::new(),
            names: HashMap::new(),
            metrics: HashMap::new(),
            stats: ParaverStats::default(),
            warnings,
        })
    }

    fn err(&self, msg: impl Into<String>) -> Error {
        Error::at_line(&self.file, self.line, msg)
    }

    fn num(&self, s: &str, what: &str) -> Result<u64, Error> {
        s.trim().parse::<u64>().map_err(|_| self.err(format!("expected {what}, found {s:?}")))
    }

    fn time(&self, s: &str, what: &str) -> Result<i64, Error> {
        let v = self.num(s, what)?;
        v.checked_mul(self.header.unit_ns)
            .and_then(|ns| i64::try_from(ns).ok())
            .ok_or_else(|| self.err(format!("{what} {v} overflows 64-bit nanoseconds")))
    }

    /// The task list of application `appl` (1-based field).
    fn app(&self, appl: &str) -> Result<(usize, &[TaskSpec]), Error> {
        let a = self.num(appl, "an application number")?;
        match a.checked_sub(1).and_then(|i| self.header.apps.get(i as usize)) {
            Some(tasks) => Ok((a as usize - 1, tasks)),
            None => Err(self.err(format!("application {a} is not in the header"))),
        }
    }

    /// The location of `appl:task:thread` (1-based fields).
    fn loc(&self, appl: &str, task: &str, thread: &str) -> Result<LocId, Error> {
        let (a, tasks) = self.app(appl)?;
        let t = self.num(task, "a task number")?;
        let h = self.num(thread, "a thread number")?;
        let spec = t
            .checked_sub(1)
            .and_then(|t| tasks.get(t as usize))
            .ok_or_else(|| self.err(format!("task {}.{t} is not in the header", a + 1)))?;
        if h == 0 || h > spec.threads as u64 {
            return Err(self.err(format!("thread {}.{t}.{h} is not in the header", a + 1)));
        }
        Ok(self.first_loc[a][t as usize - 1] + h as u32 - 1)
    }

    fn run(mut self) -> Result<(ParaverTrace, Pcf), Error> {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let n = read_line(&self.file, self.line + 1, &mut self.input, &mut buf)?;
            if n == 0 {
                break;
            }
            self.line += 1;
            let text = std::str::from_utf8(&buf).map_err(|_| self.err("not UTF-8 text"))?;
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            if text.starts_with("#Paraver") {
                return Err(self.err("a second #Paraver header (concatenated traces are not supported)"));
            }
            if text.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = text.split(':').collect();
            match fields[0] {
                "1" => self.state(&fields)?,
                "2" => self.event(&fields)?,
                "3" => self.communication(&fields)?,
                "c" => self.communicator(&fields)?,
                other => return Err(self.err(format!("unknown record type {other:?}"))),
            }
        }
        Ok(self.finish())
    }

    fn state(&mut self, f: &[&str]) -> Result<(), Error> {
        if f.len() != 8 {
            return Err(self.err(format!(
                "a state record has 8 fields (1:cpu:appl:task:thread:begin:end:state), found {}",
                f.len()
            )));
        }
        let cpu = self.num(f[1], "a CPU number")?;
        let loc = self.loc(f[2], f[3], f[4])?;
        self.ran_on(loc, cpu);
        let begin = self.time(f[5], "a begin time")?;
        let end = self.time(f[6], "an end time")?;
        let state = self.num(f[7], "a state value")?;
        if end < begin {
            return Err(self.err(format!("state ends ({end} ns) before it begins ({begin} ns)")));
        }
        self.stats.state_records += 1;
        let name = self.pcf.states.get(&state).cloned();
        let s = self.stats.states.entry(state).or_insert_with(|| StateTotal {
            name: name.unwrap_or_else(|| format!("state {state}")),
            ..Default::default()
        });
        s.records += 1;
        s.ns = s.ns.saturating_add((end - begin) as u64);
        if state == STATE_NOT_CREATED {
            self.stats.states_outside += 1;
        } else {
            self.locs[loc as usize].states.push((begin, end, state));
        }
        Ok(())
    }

    fn name(&mut self, ty: u64, value: i64) -> StrId {
        if let Some(&id) = self.names.get(&(ty, value)) {
            return id;
        }
        let text = match (self.pcf.value_name(ty, value), self.pcf.types.get(&ty)) {
            (Some(n), _) if !n.is_empty() => n.to_string(),
            (_, Some(t)) if !t.label.is_empty() => format!("{} {value}", t.label),
            _ => format!("event {ty} value {value}"),
        };
        let id = self.defs.strings.intern(&text);
        self.names.insert((ty, value), id);
        id
    }

    /// The name of an event type as a whole: its label, or `event T`.
    fn label(&mut self, ty: u64) -> StrId {
        let text = match self.pcf.types.get(&ty) {
            Some(t) if !t.label.is_empty() => t.label.clone(),
            _ => format!("event {ty}"),
        };
        self.defs.strings.intern(&text)
    }

    fn event(&mut self, f: &[&str]) -> Result<(), Error> {
        if f.len() < 8 || !f.len().is_multiple_of(2) {
            return Err(self.err(format!(
                "an event record has 6 fields and type:value pairs (2:cpu:appl:task:thread:time:type:value...), found {} fields",
                f.len()
            )));
        }
        let cpu = self.num(f[1], "a CPU number")?;
        let loc = self.loc(f[2], f[3], f[4])?;
        self.ran_on(loc, cpu);
        let t = self.time(f[5], "a time")?;
        let l = loc as usize;
        if t < self.locs[l].last_t {
            return Err(self.err(format!(
                "event at {t} ns comes after one at {} ns on the same thread: records must be sorted by time",
                self.locs[l].last_t
            )));
        }
        self.locs[l].last_t = t;
        self.stats.event_records += 1;
        // The application's end closes the thread: after every other value of its record.
        let mut app_end = false;
        for pair in f[6..].chunks(2) {
            let ty = self.num(pair[0], "an event type")?;
            let v = pair[1].trim();
            let value = v
                .parse::<i64>()
                .or_else(|_| v.parse::<u64>().map(|u| u as i64))
                .map_err(|_| self.err(format!("expected an event value, found {v:?}")))?;
            self.stats.event_pairs += 1;
            if MPI_TYPES.contains(&ty) {
                self.mpi_event(l, t, ty, value);
            } else if self.region_types.contains(&ty) {
                self.region_event(l, t, ty, value);
            } else if (GLOBAL_OP_SENDSIZE..=GLOBAL_OP_COMM).contains(&ty) {
                self.global_op(l, t, ty, value);
            } else if EXTRAE_ACTIVITIES.contains(&ty) {
                self.region_event(l, t, ty, value);
            } else if COUNTERS.contains(&ty) {
                // Counts are unsigned: one above 2^63 must not read as negative.
                let count = v.parse::<u64>().map_or(value as f64, |u| u as f64);
                self.counter(l, t, ty, count);
            } else if ty == APPLICATION && value != 0 {
                self.app_begin(l, t);
            } else if ty == APPLICATION {
                app_end = true;
            } else {
                *self.stats.other_types.entry(ty).or_insert(0) += 1;
            }
        }
        if app_end {
            self.app_end(l, t);
        }
        Ok(())
    }

    fn app_begin(&mut self, l: usize, t: i64) {
        let st = &mut self.locs[l];
        if st.app_begin.is_some() || st.app_end.is_some() {
            self.warnings.add("an application begin after another begin or an end on a thread: ignored");
            return;
        }
        st.app_begin = Some(t);
        st.base.push((t, Kind::ProcessBegin { parent: None }));
        self.stats.app_events += 1;
    }

    fn app_end(&mut self, l: usize, t: i64) {
        if self.locs[l].app_end.is_some() {
            self.warnings.add("a second application end on a thread: ignored");
            return;
        }
        if !self.locs[l].open.is_empty() {
            self.warnings.add("regions still open at the application's end are left there");
            self.close_from(l, 0, t);
        }
        let st = &mut self.locs[l];
        st.app_end = Some(t);
        st.base.push((t, Kind::ProcessEnd));
        self.stats.app_events += 1;
    }

    /// A counter's value becomes a sample of the metric named by the type's label.
    fn counter(&mut self, l: usize, t: i64, ty: u64, value: f64) {
        let metric = match self.metrics.get(&ty) {
            Some(&m) => m,
            None => {
                // "PAPI_TOT_INS [Instr completed]" -> "PAPI_TOT_INS".
                let label = self.pcf.types.get(&ty).map_or("", |e| e.label.as_str());
                let name = label.split(" [").next().unwrap_or("").trim();
                let name = if name.is_empty() { format!("counter {ty}") } else { name.to_string() };
                let m = self.defs.add_metric(&name, "count since the previous sample");
                self.metrics.insert(ty, m);
                m
            }
        };
        self.locs[l].base.push((t, Kind::Metric { metric, value }));
        self.stats.metric_samples += 1;
    }

    /// Leaves the open regions from index `from` up, innermost first, at `t`.
    fn close_from(&mut self, l: usize, from: usize, t: i64) {
        let st = &mut self.locs[l];
        while st.open.len() > from {
            let Some(o) = st.open.pop() else { break };
            let pos = st.base.len();
            st.base.push((t, Kind::Leave { proc: o.name }));
            if let Some(c) = o.call {
                st.calls[c].leave_t = t;
                st.calls[c].leave_pos = pos;
            }
        }
    }

    fn mpi_event(&mut self, l: usize, t: i64, ty: u64, value: i64) {
        let open_mpi = self.locs[l].open.iter().rposition(|o| o.call.is_some());
        if value == 0 {
            match open_mpi {
                Some(i) => {
                    if i + 1 != self.locs[l].open.len() {
                        self.warnings.add(
                            "an MPI call ends while a region inside it is open: the region is left first",
                        );
                    }
                    self.close_from(l, i, t);
                }
                None => {
                    self.warnings.add(format!("end of MPI event type {ty} with no MPI call open: ignored"))
                }
            }
            return;
        }
        if let Some(i) = open_mpi {
            self.warnings.add("an MPI call starts while another is open: the open one is left first");
            self.close_from(l, i, t);
        }
        let name = self.name(ty, value);
        let text = self.defs.strings.name(name).into_owned();
        let st = &mut self.locs[l];
        let attrs = match st.pending.take().map(|p| *p) {
            Some((pt, a)) if pt == t => a,
            _ => CollAttrs::default(),
        };
        let pos = st.base.len();
        st.base.push((t, Kind::Enter { proc: name }));
        st.calls.push(Call {
            enter_t: t,
            leave_t: i64::MAX,
            enter_pos: pos,
            leave_pos: usize::MAX,
            op: mpi_collective(&text),
            wait_like: text.starts_with("MPI_Wait") || text.starts_with("MPI_Test"),
            attrs,
        });
        let call = Some(st.calls.len() - 1);
        st.open.push(Open { ty, name, call });
        self.stats.mpi_calls += 1;
    }

    fn region_event(&mut self, l: usize, t: i64, ty: u64, value: i64) {
        if value == 0 {
            match self.locs[l].open.iter().rposition(|o| o.ty == ty) {
                Some(i) => {
                    if i + 1 != self.locs[l].open.len() {
                        self.warnings
                            .add("a region ends while one inside it is open: the inner one is left first");
                    }
                    self.close_from(l, i, t);
                }
                None => {
                    self.warnings.add(format!("end of event type {ty} with no region of it open: ignored"))
                }
            }
            return;
        }
        let name = if EXTRAE_ACTIVITIES.contains(&ty) { self.label(ty) } else { self.name(ty, value) };
        let st = &mut self.locs[l];
        st.base.push((t, Kind::Enter { proc: name }));
        st.open.push(Open { ty, name, call: None });
        self.stats.region_entries += 1;
    }

    fn global_op(&mut self, l: usize, t: i64, ty: u64, value: i64) {
        let st = &mut self.locs[l];
        let open = st.open.iter().rev().find_map(|o| o.call);
        let attrs = match open {
            Some(c) => &mut st.calls[c].attrs,
            None => {
                if st.pending.as_ref().is_some_and(|p| p.0 != t) {
                    st.pending = None;
                }
                &mut st.pending.get_or_insert_with(|| Box::new((t, CollAttrs::default()))).1
            }
        };
        let v = value.max(0) as u64;
        match ty {
            GLOBAL_OP_SENDSIZE => attrs.sent = Some(v),
            GLOBAL_OP_RECVSIZE => attrs.received = Some(v),
            GLOBAL_OP_ROOT => attrs.is_root = value != 0,
            _ => attrs.comm = Some(v),
        }
    }

    fn communication(&mut self, f: &[&str]) -> Result<(), Error> {
        if f.len() != 15 {
            return Err(self.err(format!(
                "a communication record has 15 fields \
                 (3:cpu:appl:task:thread:lsend:psend:cpu:appl:task:thread:lrecv:precv:size:tag), found {}",
                f.len()
            )));
        }
        let cpu = self.num(f[1], "a CPU number")?;
        let from = self.loc(f[2], f[3], f[4])?;
        self.ran_on(from, cpu);
        let send_t = self.time(f[5], "a logical send time")?;
        self.time(f[6], "a physical send time")?;
        let cpu = self.num(f[7], "a CPU number")?;
        let to = self.loc(f[8], f[9], f[10])?;
        self.ran_on(to, cpu);
        let recv_log = self.time(f[11], "a logical receive time")?;
        let recv_phys = self.time(f[12], "a physical receive time")?;
        let bytes = self.num(f[13], "a message size")?;
        let tag = f[14].trim();
        let tag = tag
            .parse::<u32>()
            .map_err(|_| self.err(format!("expected a message tag (0 to 2^32-1), found {tag:?}")))?;
        self.stats.comm_records += 1;
        self.comms.push(CommRec { from, send_t, to, recv_log, recv_phys, bytes, tag });
        Ok(())
    }

    fn communicator(&mut self, f: &[&str]) -> Result<(), Error> {
        if f.len() < 4 {
            return Err(self.err("a communicator line is c:appl:id:ntasks:task..."));
        }
        let (a, tasks) = self.app(f[1])?;
        let ntasks = tasks.len() as u64;
        let id = self.num(f[2], "a communicator id")?;
        let n = self.num(f[3], "a task count")?;
        if n != (f.len() - 4) as u64 {
            return Err(self.err(format!("communicator {id} announces {n} tasks but lists {}", f.len() - 4)));
        }
        let mut members = Vec::with_capacity(f.len() - 4);
        for t in &f[4..] {
            let t = self.num(t, "a task number")?;
            if t == 0 || t > ntasks {
                return Err(self.err(format!("task {}.{t} is not in the header", a + 1)));
            }
            members.push(self.first_loc[a][t as usize - 1]);
        }
        let app = a as u32;
        if self.c_lines.iter().any(|(ca, cid, _)| *ca == app && *cid == id) {
            return Err(self.err(format!("communicator {id} of application {} defined twice", a + 1)));
        }
        self.c_lines.push((app, id, members));
        self.stats.comm_lines += 1;
        Ok(())
    }

    /// Notes that location `loc` ran on CPU `cpu` (0: not said).
    #[inline]
    fn ran_on(&mut self, loc: LocId, cpu: u64) {
        let cpus = &mut self.locs[loc as usize].cpus;
        if cpu > 0 && !cpus.contains(&cpu) {
            cpus.push(cpu);
        }
    }

    /// The recorded placement (formats/trace.md, "Recorded placement"): each task's CPUs
    /// on its node, from the CPUs its threads' records name. Paraver says where a
    /// thread ran, not where it was allowed to: both properties get those CPUs. A CPU
    /// outside the task's node is left out.
    fn recorded_placement(&mut self) {
        let mut first = vec![0u64; self.header.nodes.len() + 1];
        for (n, &c) in self.header.nodes.iter().enumerate() {
            first[n + 1] = first[n] + c as u64;
        }
        let mut by_process: Vec<Vec<u32>> = vec![Vec::new(); self.defs.processes.len()];
        for (l, state) in self.locs.iter().enumerate() {
            let p = self.defs.locations[l].process;
            let node = self.defs.processes[p as usize].machine as usize;
            let Some((&lo, &hi)) = first.get(node).zip(first.get(node + 1)) else { continue };
            by_process[p as usize]
                .extend(state.cpus.iter().filter(|&&c| c > lo && c <= hi).map(|&c| (c - lo - 1) as u32));
        }
        for (p, cpus) in by_process.iter().enumerate().filter(|(_, c)| !c.is_empty()) {
            let proc = &self.defs.processes[p];
            let app = self.defs.strings.name(self.defs.apps[proc.app as usize].name).into_owned();
            let name = self.defs.strings.name(proc.name).into_owned();
            let list = cpu_list(cpus);
            self.defs.set_property(&placement::key(placement::ALLOWED_KEY, &app, &name), &list);
            self.defs.set_property(&placement::key(placement::USED_KEY, &app, &name), &list);
        }
    }

    fn finish(mut self) -> (ParaverTrace, Pcf) {
        self.close_open_regions();
        self.recorded_placement();
        let comms = self.communicators();
        let (roots, coll_comm) = self.collective_roots(&comms);
        let mut items = self.location_items(&roots, &coll_comm);
        self.message_items(&mut items, &comms.world);
        // Order each location, then all of them by time.
        let total: usize = items.iter().map(Vec::len).sum();
        let mut events = Vec::with_capacity(total);
        for (l, mut v) in items.into_iter().enumerate() {
            v.sort_by_key(|&(_, key, prio, _)| (key, prio));
            v.sort_by_key(|&(t, ..)| t);
            events.extend(v.into_iter().map(|(t, _, _, k)| Event::new(l as LocId, t, None, k)));
        }
        events.sort_by_key(|e| e.wall);
        let trace = ParaverTrace {
            defs: self.defs,
            events,
            header: self.header,
            stats: self.stats,
            warnings: Vec::new(),
            skipped: Vec::new(),
        };
        (trace, self.pcf)
    }

    fn close_open_regions(&mut self) {
        for l in 0..self.locs.len() {
            if !self.locs[l].open.is_empty() {
                let t = self.locs[l].last_t;
                self.warnings
                    .add("regions still open at the end of the trace are left at their thread's last event");
                self.close_from(l, 0, t);
            }
        }
    }

    /// Communicators: the c: lines, then a world per application unless one of them is it.
    fn communicators(&mut self) -> Comms {
        let multi_app = self.header.apps.len() > 1;
        let mut comm_ids: HashMap<(u32, u64), CommId> = HashMap::new();
        for (app, id, members) in std::mem::take(&mut self.c_lines) {
            let name = if multi_app { format!("app {} comm {id}", app + 1) } else { format!("comm {id}") };
            let c = self.defs.add_comm(&name, members);
            comm_ids.insert((app, id), c);
        }
        let mut world = Vec::new();
        for (a, firsts) in self.first_loc.iter().enumerate() {
            let mut same: Vec<CommId> = comm_ids
                .iter()
                .filter(|(&(ca, _), &c)| ca == a as u32 && &self.defs.comms[c as usize].members == firsts)
                .map(|(_, &c)| c)
                .collect();
            same.sort_unstable();
            let id = match same.first() {
                Some(&c) => c,
                None => {
                    let name = if multi_app { format!("app {} world", a + 1) } else { "world".to_string() };
                    self.defs.add_comm(&name, firsts.clone())
                }
            };
            world.push(id);
        }
        Comms { ids: comm_ids, world }
    }

    /// Roots of rooted collectives: the member whose k-th collective on the communicator
    /// is flagged; per location, each collective call's (communicator, k).
    #[allow(clippy::type_complexity)]
    fn collective_roots(&self, comms: &Comms) -> (HashMap<(CommId, u64), LocId>, Vec<Vec<(CommId, u64)>>) {
        let mut roots: HashMap<(CommId, u64), LocId> = HashMap::new();
        let mut coll_comm: Vec<Vec<(CommId, u64)>> = Vec::with_capacity(self.locs.len());
        for (l, st) in self.locs.iter().enumerate() {
            let mut seq: HashMap<CommId, u64> = HashMap::new();
            let mut v = Vec::new();
            for call in st.calls.iter().filter(|c| c.op.is_some()) {
                let c = comms.of(self.loc_app[l], &call.attrs);
                let k = seq.entry(c).or_insert(0);
                if call.attrs.is_root {
                    roots.entry((c, *k)).or_insert(l as LocId);
                }
                v.push((c, *k));
                *k += 1;
            }
            coll_comm.push(v);
        }
        (roots, coll_comm)
    }

    /// Items per location: the region events, then collectives attached to calls.
    fn location_items(
        &mut self,
        roots: &HashMap<(CommId, u64), LocId>,
        coll_comm: &[Vec<(CommId, u64)>],
    ) -> Vec<Vec<Item>> {
        let mut phases: Vec<Vec<(i64, Kind)>> = (0..self.locs.len()).map(|l| self.state_phases(l)).collect();
        let mut items: Vec<Vec<Item>> = Vec::with_capacity(self.locs.len());
        for (l, st) in self.locs.iter_mut().enumerate() {
            let mut v = Vec::with_capacity(st.base.len() + 2 * st.calls.len() + phases[l].len());
            // A state's phase begins or ends after the calls that end at its time (and the
            // application's begin), before everything else there: states follow MPI calls.
            for (t, k) in std::mem::take(&mut phases[l]) {
                let mut p = st.base.partition_point(|&(bt, _)| bt < t);
                while st.base.get(p).is_some_and(|(bt, bk)| {
                    *bt == t && matches!(bk, Kind::Leave { .. } | Kind::ProcessBegin { .. })
                }) {
                    p += 1;
                }
                v.push((t, 3 * p as u64, 4, k));
            }
            for (i, (t, k)) in std::mem::take(&mut st.base).into_iter().enumerate() {
                v.push((t, 3 * i as u64 + 1, 0, k));
            }
            for (call, &(comm, seq)) in st.calls.iter().filter(|c| c.op.is_some()).zip(&coll_comm[l]) {
                let Some(op) = call.op else { continue };
                let rooted = matches!(
                    op,
                    CollOp::Bcast
                        | CollOp::Reduce
                        | CollOp::Gather
                        | CollOp::Gatherv
                        | CollOp::Scatter
                        | CollOp::Scatterv
                );
                let root = if rooted { roots.get(&(comm, seq)).copied() } else { None };
                v.push((call.enter_t, 3 * call.enter_pos as u64 + 2, 0, Kind::CollBegin { op, comm }));
                let sent = call.attrs.sent.unwrap_or(0);
                let received = call.attrs.received.unwrap_or(0);
                v.push((
                    call.leave_t,
                    3 * call.leave_pos as u64,
                    3,
                    Kind::CollEnd { op, comm, root, sent, received },
                ));
            }
            items.push(v);
        }
        items
    }

    /// The messages' sends and receives, attached to the calls they fall in.
    fn message_items(&self, items: &mut [Vec<Item>], world: &[CommId]) {
        let mut next_request = vec![0u64; self.locs.len()];
        for m in &self.comms {
            let comm = world[self.loc_app[m.from as usize] as usize];
            let s_calls = &self.locs[m.from as usize].calls;
            let key =
                start_anchor(s_calls, m.send_t).map_or(u64::MAX, |c| 3 * s_calls[c].enter_pos as u64 + 2);
            items[m.from as usize].push((
                m.send_t,
                key,
                1,
                Kind::Send { to: m.to, comm, tag: m.tag, bytes: m.bytes },
            ));
            let r_calls = &self.locs[m.to as usize].calls;
            let log = m.recv_log.min(m.recv_phys);
            let phys = end_anchor(r_calls, m.recv_phys);
            let blocking = match phys {
                Some(c) => r_calls[c].enter_t <= log && !r_calls[c].wait_like,
                None => true,
            };
            let end_key = phys.map_or(u64::MAX, |c| 3 * r_calls[c].leave_pos as u64);
            let (from, tag, bytes) = (m.from, m.tag, m.bytes);
            if blocking {
                let begin_key = match phys {
                    Some(c) => 3 * r_calls[c].enter_pos as u64 + 2,
                    None => {
                        start_anchor(r_calls, log).map_or(u64::MAX, |c| 3 * r_calls[c].enter_pos as u64 + 2)
                    }
                };
                let v = &mut items[m.to as usize];
                v.push((log, begin_key, 2, Kind::RecvBegin { from: Some(from), comm, tag: Some(tag) }));
                v.push((m.recv_phys, end_key, 1, Kind::RecvEnd { from, comm, tag, bytes }));
            } else {
                let r = &mut next_request[m.to as usize];
                *r += 1;
                let request = *r;
                let post_key = end_anchor(r_calls, log).map_or(u64::MAX, |c| 3 * r_calls[c].leave_pos as u64);
                let v = &mut items[m.to as usize];
                v.push((
                    log,
                    post_key,
                    0,
                    Kind::IrecvRequest { from: Some(from), comm, tag: Some(tag), request },
                ));
                v.push((m.recv_phys, end_key, 2, Kind::IrecvComplete { request, from, comm, tag, bytes }));
            }
        }
    }

    /// The phases of location `l`'s states, in time order: each state within the
    /// application's begin and end on the thread (clipped to them) becomes a
    /// `PhaseBegin` and a `PhaseEnd` named after the state.
    fn state_phases(&mut self, l: usize) -> Vec<(i64, Kind)> {
        let st = &mut self.locs[l];
        let lo = st.app_begin.unwrap_or(i64::MIN);
        let hi = st.app_end.unwrap_or(i64::MAX);
        let mut v = Vec::with_capacity(2 * st.states.len());
        for (begin, end, state) in std::mem::take(&mut st.states) {
            let (b, e) = (begin.max(lo), end.min(hi));
            // A state of no length is kept where it lies inside; a longer one needs some time inside.
            let inside = if begin == end { lo <= b && b <= hi } else { b < e };
            if !inside {
                self.stats.states_outside += 1;
                continue;
            }
            let name = match self.pcf.states.get(&state) {
                Some(n) if !n.is_empty() => self.defs.strings.intern(n),
                _ => self.defs.strings.intern(&format!("state {state}")),
            };
            v.push((b, Kind::PhaseBegin { name }));
            v.push((e, Kind::PhaseEnd { name }));
            self.stats.states_imported += 1;
        }
        // Record order keeps a state's end before the next one's begin at the same time.
        v.sort_by_key(|&(t, _)| t);
        v
    }
}

/// The MPI call an event at `t` that starts something belongs to: the latest
/// call entered at or before `t` that has not ended before `t`.
fn start_anchor(calls: &[Call], t: i64) -> Option<usize> {
    let i = calls.partition_point(|c| c.enter_t <= t);
    (i > 0 && calls[i - 1].leave_t >= t).then(|| i - 1)
}

/// The MPI call an event at `t` that ends something belongs to: the earliest
/// call that ends at or after `t` and was entered at or before it.
fn end_anchor(calls: &[Call], t: i64) -> Option<usize> {
    let i = calls.partition_point(|c| c.leave_t < t);
    (i < calls.len() && calls[i].enter_t <= t).then_some(i)
}

/// Reads one line (without its end) into `buf`; 0 at the end of the input. A line
/// longer than [`MAX_LINE`] is an error, read no further (a small gzip file can inflate
/// to gigabytes without a newline).
fn read_line(file: &str, line: u64, input: &mut dyn BufRead, buf: &mut Vec<u8>) -> Result<usize, Error> {
    let limit = MAX_LINE as u64 + 2;
    let n = input.take(limit).read_until(b'\n', buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidInput
        | std::io::ErrorKind::InvalidData
        | std::io::ErrorKind::UnexpectedEof => {
            Error::at_line(file, line, format!("corrupt or truncated gzip data: {e}"))
        }
        _ => Error::io(file, &e),
    })?;
    if n as u64 == limit && buf.last() != Some(&b'\n') {
        return Err(Error::at_line(
            file,
            line,
            format!(
                "line longer than {MAX_LINE} bytes: expected a Paraver record line ending with a newline"
            ),
        ));
    }
    while buf.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
        buf.pop();
    }
    Ok(n)
}
