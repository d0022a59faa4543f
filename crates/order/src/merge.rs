//! spoor-merge: a k-way merge of traces into one, unifying their definitions.
//!
//! Every input is read by a thread of its own, block by block (a text-form input,
//! whose definitions are complete only at its end, is read whole first), so inputs are
//! decoded in parallel and memory holds a few blocks per input plus the writer's
//! block per location, whatever the number of events. Events go out in the order of
//! their (shifted) wall times across inputs; each input's own order is kept.
//!
//! Definitions are unified by name (formats/merge.md): strings are interned again;
//! applications are the same when their names are (or the name `--app` gives); machines
//! when their names are, so all applications share one physical tree; processes when
//! application, name and rank are; locations when process and thread number are;
//! communicators when name and member locations are; metrics when name and unit are.
//! Entities that repeat a key within one input stay distinct (numbered by occurrence).
//! A location that receives events from two inputs is an error.

use crate::describe;
use crate::fasthash::FxHashMap;
use crate::{Error, Result};
use spoor_format::binary::flags;
use spoor_format::{ReadOptions, TraceReader, TraceWriter, WriterOptions};
use spoor_model::*;
use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, HashMap};
use std::io::Write;

/// One input of a merge: a trace file (or `-`), optionally put into a named application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeInput {
    pub path: String,
    /// With `--app NAME=FILES`: every application of this input becomes NAME.
    pub app: Option<String>,
}

#[derive(Clone, Debug)]
pub struct MergeOptions {
    /// Applications in comparison mode: their time base is shifted so that they start
    /// together with the others (IPS-2's comparison mode).
    pub compare: Vec<String>,
    /// Events per block of the output.
    pub block_events: usize,
}

impl Default for MergeOptions {
    fn default() -> Self {
        MergeOptions { compare: Vec::new(), block_events: WriterOptions::default().block_events }
    }
}

/// What a merge did.
#[derive(Clone, Debug, Default)]
pub struct MergeSummary {
    pub defs: Definitions,
    pub inputs: usize,
    pub events: u64,
    /// Per application of the output: its name and the shift applied to its times.
    pub shifts: Vec<(String, i64)>,
    /// Conflicts resolved by keeping the first definition.
    pub warnings: Vec<String>,
}

/// The files of a directory argument (sorted, hidden files left out), or the path itself.
pub fn expand(path: &str) -> Result<Vec<String>> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(_) => return Ok(vec![path.to_owned()]),
    };
    if !meta.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let rd = std::fs::read_dir(path).map_err(|err| Error::Io { file: path.to_owned(), err })?;
    let mut files = Vec::new();
    for e in rd {
        let e = e.map_err(|err| Error::Io { file: path.to_owned(), err })?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !e.path().is_file() {
            continue;
        }
        files.push(e.path().to_string_lossy().into_owned());
    }
    files.sort();
    Ok(files)
}

// ---------------------------------------------------------------------------
// Unified definitions
// ---------------------------------------------------------------------------

/// How one input's ids map to the output's.
#[derive(Clone, Debug, Default)]
pub(crate) struct InputMap {
    strings: Vec<StrId>,
    apps: Vec<AppId>,
    procs: Vec<ProcId>,
    locs: Vec<LocId>,
    comms: Vec<CommId>,
    metrics: Vec<MetricId>,
}

#[derive(Default)]
pub(crate) struct Unifier {
    pub(crate) defs: Definitions,
    apps: HashMap<String, AppId>,
    machines: HashMap<String, MachineId>,
    /// By application, name (the output's string id), rank and occurrence.
    procs: FxHashMap<(AppId, StrId, u32, u32), ProcId>,
    locs: FxHashMap<(ProcId, u32, u32), LocId>,
    comms: HashMap<(String, Vec<LocId>, u32), CommId>,
    metrics: HashMap<(String, String), MetricId>,
    warnings: Vec<String>,
    /// The last input's definitions, application and map, when adding them warned of
    /// nothing: per-process inputs often define the whole run alike, and one compare
    /// costs far less than unifying a thousand processes again.
    last: Option<(Definitions, Option<String>, InputMap)>,
}

/// The occurrence number of `key` among the keys seen so far in one input.
fn occurrence<K: std::hash::Hash + Eq, S: std::hash::BuildHasher>(
    seen: &mut HashMap<K, u32, S>,
    key: K,
) -> u32 {
    let n = seen.entry(key).or_insert(0);
    *n += 1;
    *n - 1
}

impl Unifier {
    /// What the merge of `inputs` inputs did, having written `events` events with the
    /// applications' `shifts`.
    pub(crate) fn into_summary(self, inputs: usize, events: u64, shifts: &[i64]) -> MergeSummary {
        let shifts = (self.defs.apps.iter().enumerate())
            .map(|(a, app)| {
                (self.defs.strings.name(app.name).into_owned(), shifts.get(a).copied().unwrap_or(0))
            })
            .collect();
        MergeSummary { defs: self.defs, inputs, events, shifts, warnings: self.warnings }
    }

    pub(crate) fn add(&mut self, file: &str, d: &Definitions, app: Option<&str>) -> Result<InputMap> {
        if let Some((defs, last_app, map)) = &self.last {
            if defs == d && last_app.as_deref() == app {
                return Ok(map.clone());
            }
        }
        let warned = self.warnings.len();
        let map = self.add_new(file, d, app)?;
        self.last = (self.warnings.len() == warned).then(|| (d.clone(), app.map(str::to_owned), map.clone()));
        Ok(map)
    }

    fn add_new(&mut self, file: &str, d: &Definitions, app: Option<&str>) -> Result<InputMap> {
        d.check().map_err(|e| Error::input(file, format!("bad definitions: {e}")))?;
        let s = |id: StrId| d.strings.get(id).unwrap_or("");
        let mut m = InputMap {
            strings: d.strings.iter().map(|t| self.defs.strings.intern(t)).collect(),
            ..InputMap::default()
        };
        for a in &d.apps {
            let name = app.unwrap_or(s(a.name)).to_owned();
            let id = match self.apps.get(&name) {
                Some(&id) => id,
                None => {
                    let id = self.defs.add_app(&name);
                    self.apps.insert(name, id);
                    id
                }
            };
            m.apps.push(id);
        }
        let mut machines = Vec::with_capacity(d.machines.len());
        for mach in &d.machines {
            let name = s(mach.name).to_owned();
            let id = match self.machines.get(&name) {
                Some(&id) => id,
                None => {
                    let id = self.defs.add_machine(&name);
                    self.machines.insert(name, id);
                    id
                }
            };
            machines.push(id);
        }
        m.procs = self.add_processes(file, d, &m.apps, &machines, &m.strings);
        let mut seen = FxHashMap::default();
        for l in &d.locations {
            let proc = m.procs[l.process as usize];
            let occ = occurrence(&mut seen, (proc, l.thread));
            let key = (proc, l.thread, occ);
            let id = match self.locs.get(&key) {
                Some(&id) => id,
                None => {
                    let id = self.defs.add_location(s(l.name), proc, l.thread);
                    self.locs.insert(key, id);
                    id
                }
            };
            m.locs.push(id);
        }
        let mut seen = HashMap::new();
        for c in &d.comms {
            let members: Vec<LocId> = c.members.iter().map(|&x| m.locs[x as usize]).collect();
            let name = s(c.name).to_owned();
            // A PVM group is one communicator, keyed by its name alone, with every member
            // any task saw.
            let group = name.starts_with(PVM_GROUP_PREFIX);
            let key_members = if group { Vec::new() } else { members.clone() };
            let occ = occurrence(&mut seen, (name.clone(), key_members.clone()));
            let key = (name, key_members, occ);
            let id = match self.comms.get(&key) {
                Some(&id) => {
                    if group {
                        self.defs.comms[id as usize].add_members(members);
                    }
                    id
                }
                None => {
                    let id = self.defs.add_comm(&key.0, members);
                    self.comms.insert(key, id);
                    id
                }
            };
            m.comms.push(id);
        }
        for x in &d.metrics {
            let key = (s(x.name).to_owned(), s(x.unit).to_owned());
            let id = match self.metrics.get(&key) {
                Some(&id) => id,
                None => {
                    let id = self.defs.add_metric(&key.0, &key.1);
                    self.metrics.insert(key, id);
                    id
                }
            };
            m.metrics.push(id);
        }
        for &(k, v) in &d.properties {
            if self.defs.property(s(k)).is_none() {
                self.defs.set_property(s(k), s(v));
            }
        }
        Ok(m)
    }

    /// The processes of `d` (whose applications and machines are `apps` and
    /// `machines`): one of the same application, name, rank and occurrence is the
    /// same process; a warning when two inputs put it on different machines.
    fn add_processes(
        &mut self,
        file: &str,
        d: &Definitions,
        apps: &[AppId],
        machines: &[MachineId],
        strings: &[StrId],
    ) -> Vec<ProcId> {
        let s = |id: StrId| d.strings.get(id).unwrap_or("");
        let mut seen = FxHashMap::default();
        let mut procs = Vec::with_capacity(d.processes.len());
        for p in &d.processes {
            let app = apps[p.app as usize];
            // The same name has the same id in the output's strings.
            let name = strings.get(p.name as usize).copied().unwrap_or(StrId::MAX);
            let occ = occurrence(&mut seen, (app, name, p.rank));
            let machine = machines[p.machine as usize];
            let key = (app, name, p.rank, occ);
            let id = match self.procs.get(&key) {
                Some(&id) => {
                    let have = self.defs.processes[id as usize].machine;
                    if have != machine {
                        let mname = |m: MachineId| {
                            self.defs.strings.name(self.defs.machines[m as usize].name).into_owned()
                        };
                        self.warnings.push(format!(
                            "{file}: process {} (rank {}) runs on {}, an earlier input put it on {}; keeping {}",
                            s(p.name),
                            key.2,
                            mname(machine),
                            mname(have),
                            mname(have)
                        ));
                    }
                    id
                }
                None => {
                    let id = self.defs.add_process(s(p.name), app, machine, p.rank);
                    self.procs.insert(key, id);
                    id
                }
            };
            procs.push(id);
        }
        procs
    }
}

// ---------------------------------------------------------------------------
// Reading inputs
// ---------------------------------------------------------------------------

fn shape(d: &Definitions) -> [usize; 7] {
    [
        d.strings.len(),
        d.apps.len(),
        d.machines.len(),
        d.processes.len(),
        d.locations.len(),
        d.comms.len(),
        d.metrics.len(),
    ]
}

/// Progress is told after every so many events of the event by event merge.
const PROGRESS_EVERY: u64 = 1 << 16;

/// The first wall time of a binary input, as its index gives it.
pub(crate) fn index_start(r: &TraceReader) -> Option<i64> {
    r.index().and_then(|ix| ix.iter().filter(|e| e.count > 0).map(|e| e.min_wall).min())
}

/// Events of a text-form input go to the merge in pieces of this many.
const TEXT_PIECE: usize = 4096;

enum Reading {
    /// A binary trace, read a block at a time.
    Binary(Box<TraceReader>),
    /// The text form, whose definitions may come anywhere: read whole when opened.
    Text(Box<Definitions>, std::vec::IntoIter<Event>),
}

/// One input of the merge: its reader and the block being merged. Blocks are read only
/// when the merge needs them, so memory holds one block per input whatever the number
/// of inputs or events.
struct Source {
    file: String,
    reading: Reading,
    map: InputMap,
    app: Option<String>,
    /// The current block, and the position of its next event.
    block: Vec<Event>,
    pos: usize,
    /// The shape of the definitions the map was made from.
    shape: [usize; 7],
    /// Events seen per input location (for messages).
    seen: Vec<u64>,
    done: bool,
}

impl Source {
    /// Opens `inp`; its definitions and flags, and its first wall time where its index
    /// gives it.
    fn open(inp: &MergeInput, uni: &mut Unifier) -> Result<(Source, u64, Option<i64>)> {
        let file = if inp.path == "-" { "<stdin>".to_owned() } else { inp.path.clone() };
        let r = TraceReader::open(&inp.path, ReadOptions::default()).map_err(Error::Format)?;
        let (reading, flags, index_start) = if r.header().is_none() {
            let (defs, events) = r.read_all().map_err(Error::Format)?;
            let start = events.iter().map(|e| e.wall).min();
            (Reading::Text(Box::new(defs), events.into_iter()), 0, start)
        } else {
            let start = index_start(&r);
            let flags = r.header().map_or(0, |h| h.flags);
            (Reading::Binary(Box::new(r)), flags, start)
        };
        let mut s = Source {
            file,
            reading,
            map: InputMap::default(),
            app: inp.app.clone(),
            block: Vec::new(),
            pos: 0,
            shape: [0; 7],
            seen: Vec::new(),
            done: false,
        };
        s.map = uni.add(&s.file, s.defs(), s.app.as_deref())?;
        s.shape = shape(s.defs());
        s.seen = vec![0; s.defs().locations.len()];
        Ok((s, flags, index_start))
    }

    fn defs(&self) -> &Definitions {
        match &self.reading {
            Reading::Binary(r) => r.defs(),
            Reading::Text(d, _) => d,
        }
    }

    /// The next block; false at the end of the input. Definitions that a later chunk
    /// replaced are unified again (`defs_changed`).
    fn refill(&mut self, uni: &mut Unifier, defs_changed: &mut bool) -> Result<bool> {
        let mut room = std::mem::take(&mut self.block);
        room.clear();
        self.pos = 0;
        loop {
            match &mut self.reading {
                Reading::Binary(r) => match r.next_block_into(room).map_err(Error::Format)? {
                    Some(b) => room = b.events,
                    None => {
                        self.done = true;
                        return Ok(false);
                    }
                },
                Reading::Text(_, events) => {
                    room.extend(events.by_ref().take(TEXT_PIECE));
                    if room.is_empty() {
                        self.done = true;
                        return Ok(false);
                    }
                }
            }
            if shape(self.defs()) != self.shape {
                self.map = uni.add(&self.file, self.defs(), self.app.as_deref())?;
                self.shape = shape(self.defs());
                self.seen.resize(self.defs().locations.len(), 0);
                *defs_changed = true;
            }
            if !room.is_empty() {
                self.block = room;
                return Ok(true);
            }
        }
    }

    /// The input's events, where it says.
    fn total(&self) -> Option<u64> {
        match &self.reading {
            Reading::Binary(r) => r.end().map(|e| e.events),
            Reading::Text(_, events) => Some((events.len() + self.block.len()) as u64),
        }
    }

    fn head(&self) -> Option<&Event> {
        self.block.get(self.pos)
    }
}

/// Merges `inputs` into one trace written to `out`.
pub fn merge(inputs: &[MergeInput], opts: &MergeOptions, out: impl Write) -> Result<MergeSummary> {
    merge_with_feedback(inputs, opts, out, &Silent)
}

/// [`merge`], telling `feedback` how many events are written (of how many, where the
/// inputs say) as it goes.
pub fn merge_with_feedback(
    inputs: &[MergeInput],
    opts: &MergeOptions,
    mut out: impl Write,
    feedback: &dyn Feedback,
) -> Result<MergeSummary> {
    let r = merge_any(inputs, opts, &mut out, feedback);
    feedback.finish();
    r
}

/// [`merge_with_feedback`] with the default options into a file in `dir` (removed with the
/// input returned), for a stage that reads the merged trace twice: spoor-order given a
/// run's per-process traces. The input is named after `name`; a failure to write names
/// `dir`.
pub fn merge_to_temporary(
    inputs: &[MergeInput],
    name: &str,
    dir: &std::path::Path,
    feedback: &dyn Feedback,
) -> Result<(crate::Input, MergeSummary)> {
    crate::Input::write_temporary(name, dir, |w| {
        merge_with_feedback(inputs, &MergeOptions::default(), w, feedback)
    })
}

fn merge_any(
    inputs: &[MergeInput],
    opts: &MergeOptions,
    mut out: impl Write,
    feedback: &dyn Feedback,
) -> Result<MergeSummary> {
    if inputs.is_empty() {
        return Err(Error::Usage("no input to merge".into()));
    }
    if let [one] = inputs {
        if let Some(summary) = merge_single(one, opts, &mut out, feedback)? {
            return Ok(summary);
        }
    }
    if let Some(summary) = crate::merge_blocks::merge_mapped(inputs, opts, &mut out, feedback)? {
        return Ok(summary);
    }
    let mut uni = Unifier::default();
    let opened = open_sources(inputs, &mut uni)?;
    let maps: Vec<&InputMap> = opened.sources.iter().map(|s| &s.map).collect();
    let shifts = app_shifts(opts, &uni, &maps, &opened.starts)?;
    let fl = if inputs.len() == 1 { opened.single_flags & flags::ALIGNED } else { 0 }
        | if opened.all_matched { flags::MATCHED } else { 0 };
    let wopts =
        WriterOptions { block_events: opts.block_events.max(1), global_order: false, index: true, flags: fl };
    let mut w = TraceWriter::new(out, &uni.defs, wopts).map_err(Error::Write)?;
    let mut sources = opened.sources;
    let total = sources.iter().map(Source::total).sum::<Option<u64>>();
    let events = merge_events(&mut sources, &mut uni, &mut w, &shifts, inputs, &|n| {
        feedback.progress("events", n, total)
    })?;
    w.finish().map_err(Error::Write)?;
    Ok(uni.into_summary(inputs.len(), events, &shifts))
}

/// The inputs opened, their definitions unified and their first blocks read.
struct Opened {
    sources: Vec<Source>,
    /// Every input's events are matched.
    all_matched: bool,
    /// The last input's flags (the output keeps a single input's alignment).
    single_flags: u64,
    /// Each input's first wall time, from its index or its first block.
    starts: Vec<Option<i64>>,
}

/// Definitions first, in input order, so that ids follow the inputs' order.
fn open_sources(inputs: &[MergeInput], uni: &mut Unifier) -> Result<Opened> {
    let mut sources = Vec::with_capacity(inputs.len());
    let mut all_matched = true;
    let mut single_flags = 0;
    let mut starts = Vec::with_capacity(inputs.len());
    for inp in inputs {
        let (s, fl, index_start) = Source::open(inp, uni)?;
        all_matched &= fl & flags::MATCHED != 0;
        single_flags = fl;
        sources.push(s);
        starts.push(index_start);
    }
    // The writer starts with the definitions as they stand after the first blocks.
    let mut defs_changed = false;
    for (i, s) in sources.iter_mut().enumerate() {
        s.refill(uni, &mut defs_changed)?;
        if starts[i].is_none() {
            starts[i] = s.block.iter().map(|e| e.wall).min();
        }
    }
    Ok(Opened { sources, all_matched, single_flags, starts })
}

/// Comparison mode: the shift of each application, moving the named ones to start
/// with the others (0 for the others).
pub(crate) fn app_shifts(
    opts: &MergeOptions,
    uni: &Unifier,
    maps: &[&InputMap],
    starts: &[Option<i64>],
) -> Result<Vec<i64>> {
    let mut compared = vec![false; uni.defs.apps.len()];
    for name in &opts.compare {
        match uni.apps.get(name) {
            Some(&a) => compared[a as usize] = true,
            None => {
                let mut have: Vec<&str> = uni.apps.keys().map(String::as_str).collect();
                have.sort_unstable();
                return Err(Error::Usage(format!(
                    "--compare {name}: no application of that name (the inputs have: {})",
                    have.join(", ")
                )));
            }
        }
    }
    let mut app_start: Vec<Option<i64>> = vec![None; uni.defs.apps.len()];
    for (m, start) in maps.iter().zip(starts) {
        let Some(t) = *start else { continue };
        for &a in &m.apps {
            let e = &mut app_start[a as usize];
            *e = Some(e.map_or(t, |x| x.min(t)));
        }
    }
    let base = {
        let others = app_start.iter().zip(&compared).filter(|(_, &c)| !c).filter_map(|(s, _)| *s).min();
        others.or_else(|| app_start.iter().filter_map(|s| *s).min()).unwrap_or(0)
    };
    Ok(app_start
        .iter()
        .zip(&compared)
        .map(|(s, &c)| match (s, c) {
            (Some(t), true) => base.saturating_sub(*t),
            _ => 0,
        })
        .collect())
}

/// The k-way merge by (shifted) wall time, each input's order kept; the number of events.
fn merge_events<W: Write>(
    sources: &mut [Source],
    uni: &mut Unifier,
    w: &mut TraceWriter<W>,
    shifts: &[i64],
    inputs: &[MergeInput],
    progress: &dyn Fn(u64),
) -> Result<u64> {
    let mut defs_changed = false;
    let mut owner: Vec<Option<usize>> = vec![None; uni.defs.locations.len()];
    let shift_of = |defs: &Definitions, loc: LocId| -> i64 {
        defs.process_of(loc).map_or(0, |p| shifts.get(p.app as usize).copied().unwrap_or(0))
    };
    // Each input's next event by its (shifted) wall time, then the input's number.
    let key = |s: &Source, i: usize, defs: &Definitions| {
        s.head().map(|h| {
            let out_loc = s.map.locs.get(h.loc as usize).copied().unwrap_or(0);
            Reverse((h.wall.saturating_add(shift_of(defs, out_loc)), i))
        })
    };
    let mut heap: BinaryHeap<Reverse<(i64, usize)>> =
        sources.iter().enumerate().filter_map(|(i, s)| key(s, i, &uni.defs)).collect();
    let mut events = 0u64;
    while let Some(mut top) = heap.peek_mut() {
        let i = top.0 .1;
        let s = &mut sources[i];
        let ev = s.block[s.pos].clone();
        s.pos += 1;
        let index = s.seen.get(ev.loc as usize).copied().unwrap_or(0);
        if let Some(c) = s.seen.get_mut(ev.loc as usize) {
            *c += 1;
        }
        let mut ev = remap(&s.file, Names::Defs(s.defs()), &s.map, ev, index)?;
        claim_location(&mut owner, ev.loc, i, &s.file, &uni.defs, inputs)?;
        ev.wall = ev.wall.saturating_add(shift_of(&uni.defs, ev.loc));
        if defs_changed {
            w.set_definitions(&uni.defs).map_err(Error::Write)?;
            defs_changed = false;
        }
        w.write(&ev).map_err(Error::Write)?;
        events += 1;
        if events.is_multiple_of(PROGRESS_EVERY) {
            progress(events);
        }
        let s = &mut sources[i];
        if s.head().is_none() && !s.done {
            s.refill(uni, &mut defs_changed)?;
        }
        // The input's next event replaces it at the top: one sift.
        match key(s, i, &uni.defs) {
            Some(k) => *top = k,
            None => {
                PeekMut::pop(top);
            }
        }
    }
    if defs_changed {
        w.set_definitions(&uni.defs).map_err(Error::Write)?;
    }
    progress(events);
    Ok(events)
}

/// Records that output location `loc` comes from input `i`: an error if another input had it.
fn claim_location(
    owner: &mut Vec<Option<usize>>,
    loc: LocId,
    i: usize,
    file: &str,
    defs: &Definitions,
    inputs: &[MergeInput],
) -> Result<()> {
    let l = loc as usize;
    if owner.len() <= l {
        owner.resize(l + 1, None);
    }
    match owner[l] {
        None => owner[l] = Some(i),
        Some(o) if o == i => {}
        Some(o) => {
            return Err(Error::input(
                file,
                format!(
                    "{} also has events in {}: one location cannot come from two inputs \
                     (name separate runs with --app NAME=FILES)",
                    defs.location_described(loc),
                    inputs[o].path
                ),
            ))
        }
    }
    Ok(())
}

/// The merge of a single memory-mapped binary trace whose ids the unified definitions
/// keep (the usual case: one trace, or per-location blocks merged already). Its order
/// is the output's, so every full canonical block is copied instead of encoded again;
/// the output is byte for byte that of the general merge. `None` when it does not
/// apply (then the general merge runs, and reports any error).
fn merge_single<W: Write>(
    inp: &MergeInput,
    opts: &MergeOptions,
    out: &mut W,
    feedback: &dyn Feedback,
) -> Result<Option<MergeSummary>> {
    // A stream is read once, by the general merge.
    if spoor_format::is_stream(&inp.path) {
        return Ok(None);
    }
    let Ok(mut r) = TraceReader::open(&inp.path, ReadOptions::default()) else { return Ok(None) };
    // Only a mapped file has its end (and final definitions) at hand when opened.
    if r.header().is_none() || r.end().is_none() {
        return Ok(None);
    }
    let file = inp.path.clone();
    let defs = r.defs().clone();
    let mut uni = Unifier::default();
    let Ok(map) = uni.add(&file, &defs, inp.app.as_deref()) else { return Ok(None) };
    let identity = |v: &[u32]| v.iter().enumerate().all(|(i, &x)| x as usize == i);
    if !(identity(&map.strings) && identity(&map.locs) && identity(&map.comms) && identity(&map.metrics)) {
        return Ok(None);
    }
    if opts.compare.iter().any(|name| !uni.apps.contains_key(name)) {
        return Ok(None);
    }
    // One input: every application starts with the others, so nothing is shifted.
    let fl = r.header().map_or(0, |h| h.flags);
    let wopts = WriterOptions {
        block_events: opts.block_events.max(1),
        global_order: false,
        index: true,
        flags: (fl & flags::ALIGNED) | (fl & flags::MATCHED),
    };
    let full = wopts.block_events as u64;
    let mut w = TraceWriter::new(out, &uni.defs, wopts).map_err(Error::Write)?;
    // Events seen per location, copied blocks included (for messages).
    let seen = std::cell::RefCell::new(vec![0u64; defs.locations.len()]);
    let ids = IdCounts::of(&defs);
    let keep = |ev: &Event| names_defined(ids, ev);
    let written = crate::passthrough::Written::new(feedback, "events", r.end().map(|e| e.events));
    let mut each = |w: &mut TraceWriter<&mut W>, ev: Event| -> Result<()> {
        written.add(1);
        let index = {
            let mut seen = seen.borrow_mut();
            let i = seen.get(ev.loc as usize).copied().unwrap_or(0);
            if let Some(c) = seen.get_mut(ev.loc as usize) {
                *c += 1;
            }
            i
        };
        let ev = remap(&file, Names::Defs(&defs), &map, ev, index)?;
        w.write(&ev).map_err(Error::Write)
    };
    let mut copied = |f: &spoor_format::raw::BlockFacts| {
        written.add(f.count);
        if let Some(c) = f.loc.and_then(|l| seen.borrow_mut().get(l as usize).copied()) {
            seen.borrow_mut()[f.loc.unwrap_or(0) as usize] = c + f.count;
        }
    };
    let events = crate::passthrough::copy_through(&mut r, &mut w, &keep, &mut each, &mut copied, full)?;
    w.finish().map_err(Error::Write)?;
    let shifts = uni.defs.apps.iter().map(|a| (uni.defs.strings.name(a.name).into_owned(), 0)).collect();
    Ok(Some(MergeSummary { defs: uni.defs, inputs: 1, events, shifts, warnings: uni.warnings }))
}

/// How many locations, communicators, strings and metrics a trace defines: the ids its
/// events may name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IdCounts {
    locs: usize,
    comms: usize,
    strings: usize,
    metrics: usize,
}

impl IdCounts {
    fn of(d: &Definitions) -> IdCounts {
        IdCounts {
            locs: d.locations.len(),
            comms: d.comms.len(),
            strings: d.strings.len(),
            metrics: d.metrics.len(),
        }
    }
}

impl InputMap {
    /// The ids of the input, where the map gives every id an event may name back
    /// unchanged (as where every input defines the whole run alike).
    pub(crate) fn identity(&self) -> Option<IdCounts> {
        fn same<T: Copy + TryInto<usize>>(v: &[T]) -> bool {
            v.iter().enumerate().all(|(i, &x)| x.try_into().ok() == Some(i))
        }
        let ids = IdCounts {
            locs: self.locs.len(),
            comms: self.comms.len(),
            strings: self.strings.len(),
            metrics: self.metrics.len(),
        };
        (same(&self.locs) && same(&self.comms) && same(&self.strings) && same(&self.metrics)).then_some(ids)
    }
}

/// Whether every id `ev` names is among those `n` counts: then [`remap`] with an
/// identity map gives `ev` back unchanged (it fails exactly when this is false).
pub(crate) fn names_defined(n: IdCounts, ev: &Event) -> bool {
    let loc = |x: LocId| (x as usize) < n.locs;
    let comm = |x: CommId| (x as usize) < n.comms;
    let string = |x: StrId| (x as usize) < n.strings;
    let ok = match ev.kind {
        Kind::ProcessBegin { parent } | Kind::ThreadBegin { parent } => parent.is_none_or(loc),
        Kind::Enter { proc } | Kind::Leave { proc } => string(proc),
        Kind::PhaseBegin { name } | Kind::PhaseEnd { name } => string(name),
        Kind::Send { to, comm: c, .. } | Kind::Isend { to, comm: c, .. } => loc(to) && comm(c),
        Kind::RecvBegin { from, comm: c, .. } | Kind::IrecvRequest { from, comm: c, .. } => {
            from.is_none_or(loc) && comm(c)
        }
        Kind::RecvEnd { from, comm: c, .. } | Kind::IrecvComplete { from, comm: c, .. } => {
            loc(from) && comm(c)
        }
        Kind::CollBegin { comm: c, .. } => comm(c),
        Kind::CollEnd { comm: c, root, .. } => comm(c) && root.is_none_or(loc),
        Kind::Metric { metric, .. } => (metric as usize) < n.metrics,
        Kind::ClockOffset { reference, .. } => loc(reference),
        Kind::ProcessEnd
        | Kind::ThreadEnd
        | Kind::IsendComplete { .. }
        | Kind::LockRequest { .. }
        | Kind::LockAcquire { .. }
        | Kind::LockRelease { .. } => true,
    };
    ok && loc(ev.loc) && ev.ann.partner.is_none_or(|p| loc(p.loc))
}

/// `ev` of an input, in the output's ids. `index` is its position among its location's
/// events (for messages).
/// Where the names of an input's events come from, to say which event is wrong.
#[derive(Clone, Copy)]
pub(crate) enum Names<'a> {
    /// The input's definitions, at hand.
    Defs(&'a Definitions),
    /// Its file, read again when an event is wrong (its definitions were let go).
    File(&'a str),
}

impl Names<'_> {
    fn event(self, at: EventRef, kind: &str, wall: i64) -> String {
        match self {
            Names::Defs(d) => describe::event(d, at, kind, wall),
            Names::File(path) => match TraceReader::open(path, ReadOptions::default()) {
                Ok(r) => describe::event(r.defs(), at, kind, wall),
                Err(_) => describe::event(&Definitions::default(), at, kind, wall),
            },
        }
    }
}

pub(crate) fn remap(file: &str, d: Names, m: &InputMap, mut ev: Event, index: u64) -> Result<Event> {
    let at = EventRef { loc: ev.loc, index };
    let kind_name = ev.kind.name();
    let wall = ev.wall;
    let bad = |what: String| Error::input(file, format!("{}: {what}", d.event(at, kind_name, wall)));
    let loc = |x: LocId, what: &str| -> Result<LocId> {
        m.locs
            .get(x as usize)
            .copied()
            .ok_or_else(|| bad(format!("{what} location {x}, but {} locations are defined", m.locs.len())))
    };
    let comm = |x: CommId| -> Result<CommId> {
        m.comms.get(x as usize).copied().ok_or_else(|| {
            bad(format!("names communicator {x}, but {} communicators are defined", m.comms.len()))
        })
    };
    let string = |x: StrId| -> Result<StrId> {
        m.strings
            .get(x as usize)
            .copied()
            .ok_or_else(|| bad(format!("names string {x}, but the string table has {}", m.strings.len())))
    };
    ev.loc = loc(ev.loc, "belongs to")?;
    ev.kind = match ev.kind {
        Kind::ProcessBegin { parent } => {
            Kind::ProcessBegin { parent: parent.map(|p| loc(p, "names parent")).transpose()? }
        }
        Kind::ThreadBegin { parent } => {
            Kind::ThreadBegin { parent: parent.map(|p| loc(p, "names parent")).transpose()? }
        }
        Kind::Enter { proc } => Kind::Enter { proc: string(proc)? },
        Kind::Leave { proc } => Kind::Leave { proc: string(proc)? },
        Kind::Send { to, comm: c, tag, bytes } => {
            Kind::Send { to: loc(to, "sends to")?, comm: comm(c)?, tag, bytes }
        }
        Kind::RecvBegin { from, comm: c, tag } => {
            Kind::RecvBegin { from: from.map(|f| loc(f, "receives from")).transpose()?, comm: comm(c)?, tag }
        }
        Kind::RecvEnd { from, comm: c, tag, bytes } => {
            Kind::RecvEnd { from: loc(from, "receives from")?, comm: comm(c)?, tag, bytes }
        }
        Kind::Isend { to, comm: c, tag, bytes, request } => {
            Kind::Isend { to: loc(to, "sends to")?, comm: comm(c)?, tag, bytes, request }
        }
        Kind::IrecvRequest { from, comm: c, tag, request } => Kind::IrecvRequest {
            from: from.map(|f| loc(f, "receives from")).transpose()?,
            comm: comm(c)?,
            tag,
            request,
        },
        Kind::IrecvComplete { request, from, comm: c, tag, bytes } => {
            Kind::IrecvComplete { request, from: loc(from, "receives from")?, comm: comm(c)?, tag, bytes }
        }
        Kind::CollBegin { op, comm: c } => Kind::CollBegin { op, comm: comm(c)? },
        Kind::CollEnd { op, comm: c, root, sent, received } => Kind::CollEnd {
            op,
            comm: comm(c)?,
            root: root.map(|r| loc(r, "names root")).transpose()?,
            sent,
            received,
        },
        Kind::PhaseBegin { name } => Kind::PhaseBegin { name: string(name)? },
        Kind::PhaseEnd { name } => Kind::PhaseEnd { name: string(name)? },
        Kind::Metric { metric, value } => Kind::Metric {
            metric: m.metrics.get(metric as usize).copied().ok_or_else(|| {
                bad(format!("names metric {metric}, but {} metrics are defined", m.metrics.len()))
            })?,
            value,
        },
        Kind::ClockOffset { reference, offset, error } => {
            Kind::ClockOffset { reference: loc(reference, "names reference")?, offset, error }
        }
        k @ (Kind::ProcessEnd
        | Kind::ThreadEnd
        | Kind::IsendComplete { .. }
        | Kind::LockRequest { .. }
        | Kind::LockAcquire { .. }
        | Kind::LockRelease { .. }) => k,
    };
    if let Some(p) = ev.ann.partner {
        ev.ann.partner = Some(EventRef { loc: loc(p.loc, "names as partner")?, index: p.index });
    }
    Ok(ev)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `names_defined` says exactly when `remap` with the identity map succeeds.
    #[test]
    fn names_defined_agrees_with_remap() {
        let mut d = Definitions::new();
        let app = d.add_app("a");
        let mach = d.add_machine("m");
        let p = d.add_process("p", app, mach, 0);
        d.add_location("l0", p, 0);
        d.add_location("l1", p, 1);
        d.add_comm("world", vec![0, 1]);
        d.add_metric("x", "s");
        let mut uni = Unifier::default();
        let map = uni.add("f", &d, None).unwrap();
        let identity = map.identity().expect("a first input's ids are the output's");
        let ids = [0u32, 1, 2, 7, 100];
        let mut kinds = Vec::new();
        for &a in &ids {
            for &b in &ids {
                kinds.push(Kind::Send { to: a, comm: b, tag: 0, bytes: 1 });
                kinds.push(Kind::IrecvComplete { request: 1, from: a, comm: b, tag: 0, bytes: 1 });
                kinds.push(Kind::RecvBegin { from: Some(a), comm: b, tag: None });
                kinds.push(Kind::CollEnd { op: CollOp::Bcast, comm: a, root: Some(b), sent: 0, received: 0 });
            }
            kinds.push(Kind::Enter { proc: a });
            kinds.push(Kind::PhaseEnd { name: a });
            kinds.push(Kind::Metric { metric: a, value: 1.0 });
            kinds.push(Kind::ClockOffset { reference: a, offset: 0, error: 0 });
            kinds.push(Kind::ThreadBegin { parent: Some(a) });
            kinds.push(Kind::LockAcquire { lock: a as u64 });
        }
        let mut n = 0;
        for k in kinds {
            for &l in &[0u32, 1, 5] {
                for partner in [None, Some(1u32), Some(9)] {
                    let mut ev = Event::new(l, 0, None, k.clone());
                    ev.ann.partner = partner.map(|loc| EventRef { loc, index: 3 });
                    let ok = remap("f", Names::Defs(&d), &map, ev.clone(), 0).is_ok();
                    assert_eq!(names_defined(IdCounts::of(&d), &ev), ok, "{ev:?}");
                    assert_eq!(names_defined(identity, &ev), ok, "{ev:?}");
                    n += ok as usize;
                }
            }
        }
        assert!(n > 0);
    }

    /// Inputs that define the run alike map alike, and each one that puts a process on
    /// another machine is warned of, even right after an input defined alike.
    #[test]
    fn inputs_defined_alike_map_alike_and_each_conflict_is_warned_of() {
        let run = |machine: &str| {
            let mut d = Definitions::new();
            let app = d.add_app("a");
            let mach = d.add_machine(machine);
            for r in 0..3 {
                let p = d.add_process(&format!("rank {r}"), app, mach, r);
                d.add_location(&format!("rank {r}"), p, 0);
            }
            d.add_comm("world", vec![0, 1, 2]);
            d
        };
        let mut uni = Unifier::default();
        let first = uni.add("a", &run("m1"), None).unwrap();
        let again = uni.add("b", &run("m1"), None).unwrap();
        assert_eq!(
            (again.locs.clone(), again.comms.clone(), again.procs.clone()),
            (first.locs, first.comms, first.procs)
        );
        assert!(uni.warnings.is_empty());
        uni.add("c", &run("m2"), None).unwrap();
        uni.add("d", &run("m2"), None).unwrap();
        assert_eq!(uni.warnings.iter().filter(|w| w.starts_with("c: ")).count(), 3, "{:?}", uni.warnings);
        assert_eq!(uni.warnings.iter().filter(|w| w.starts_with("d: ")).count(), 3, "{:?}", uni.warnings);
        let renamed = uni.add("e", &run("m1"), Some("b")).unwrap();
        assert_ne!(renamed.apps, again.apps, "another application is other processes");
        assert_eq!(uni.defs.processes.len(), 6);
    }

    /// Each task of a PVM program defines the groups it saw, with the members it saw; the
    /// merge has one communicator a group, with every member, and keeps communicators of
    /// the same name with other members apart everywhere else.
    #[test]
    fn a_pvm_group_is_one_communicator_with_every_member_any_task_saw() {
        let task = |me: &str, others: &[&str], group: &[usize]| {
            let mut d = Definitions::new();
            let app = d.add_app("farm");
            let mach = d.add_machine("h");
            for name in std::iter::once(&me).chain(others) {
                let p = d.add_process(name, app, mach, name[1..].parse().unwrap());
                d.add_location(name, p, 0);
            }
            d.add_comm("pvm group g", group.iter().map(|&l| l as LocId).collect());
            d.add_comm("split", group.iter().map(|&l| l as LocId).collect());
            d
        };
        let mut uni = Unifier::default();
        let a = uni.add("a", &task("t1", &["t2"], &[0, 1]), None).unwrap();
        let b = uni.add("b", &task("t3", &["t1", "t2"], &[1, 2, 0]), None).unwrap();
        let c = uni.add("c", &task("t2", &["t3"], &[0]), None).unwrap();
        let d = &uni.defs;
        let names = |c: CommId| -> Vec<String> {
            d.comms[c as usize]
                .members
                .iter()
                .map(|&l| d.strings.name(d.locations[l as usize].name).into_owned())
                .collect()
        };
        assert_eq!((a.comms[0], b.comms[0], c.comms[0]), (a.comms[0], a.comms[0], a.comms[0]));
        assert_eq!(names(a.comms[0]), ["t1", "t2", "t3"]);
        assert_eq!(d.comms.iter().filter(|c| d.strings.name(c.name) == "pvm group g").count(), 1);
        assert_eq!(names(a.comms[1]), ["t1", "t2"]);
        assert_eq!(names(b.comms[1]), ["t1", "t2", "t3"]);
        assert_eq!(names(c.comms[1]), ["t2"]);
    }
}
