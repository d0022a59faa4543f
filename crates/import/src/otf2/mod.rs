//! A native reader for OTF2 archives (Score-P's trace format, versions 1.x to
//! 3.x), with no C library at run time.
//!
//! An archive is an anchor file (`traces.otf2`), the global definitions
//! (`traces.def`) and, per location (a thread), local definitions
//! (`traces/<id>.def`: mapping tables from local to global ids, clock-offset
//! samples) and events (`traces/<id>.evt`). [`Otf2Archive::open`] reads the
//! anchor, the global and the local definitions and converts them to spoor's
//! [`Definitions`]; [`Otf2Archive::read_location`] decodes one location's
//! events and [`Otf2Archive::read_all`] all of them, in parallel (rayon, over
//! memory-mapped files, largest first; with fewer locations than threads, a
//! spare thread faults in a location's output while it is decoded). The
//! chunk headers' event numbers size the output up front.
//! [`Otf2Archive::for_each_block`] (what `spoor-import` uses) keeps no
//! location's events: each is decoded through a small window and encoded in
//! the binary format's blocks by the thread that decodes it, the blocks
//! handed on in location order; memory stays bounded whatever the size of
//! the archive.
//!
//! [`Otf2Archive::open`] reads the files of the file system;
//! [`Otf2Archive::open_from`] those of any [`TraceFiles`] (e.g. [`MemFiles`](crate::MemFiles),
//! whose events files are read as they are held, not mapped).
//!
//! # Definitions
//!
//! One application, named after the archive's directory; a machine per
//! system-tree node that holds location groups; a process per location group
//! (its rank: the position of its first location in the MPI `COMM_LOCATIONS`
//! group, else its index); a location per OTF2 location, in definition order
//! (thread number: its index in its group); a communicator per OTF2
//! communicator, its members the locations of its ranks, except that a
//! communicator over a `COMM_SELF` group (`MPI_COMM_SELF`) becomes one
//! communicator per location with that location as its only member; a metric
//! per metric member; the properties `import.format` = `otf2` and `otf2.*`
//! (version, creator, timer, the anchor's properties as `otf2.property.NAME`).
//! Every region name is in the string table.
//!
//! # Events
//!
//! Times are ns since the global offset, `floor((ticks - offset) * 1e9 /
//! resolution)`; in [`ClockMode::Corrected`] the ticks are first corrected
//! the way OTF2 3.x's reader (and so `otf2-print`) does: between two
//! CLOCK_OFFSET samples the offset is interpolated linearly (outside them,
//! extrapolated from the first or last pair), rounded to a whole tick and
//! added; a location with fewer than two samples is not corrected. OTF2
//! events carry no CPU time: `cpu` is `None`.
//!
//! | OTF2 record | spoor event |
//! |---|---|
//! | ENTER, LEAVE | `Enter`, `Leave` (region name) |
//! | MPI_SEND, MPI_ISEND | `Send`, `Isend` (rank mapped to a location through the communicator) |
//! | MPI_ISEND_COMPLETE | `IsendComplete` |
//! | MPI_IRECV_REQUEST | `IrecvRequest`, with source, tag and communicator of its completion (MPI_IRECV with the same request id); without one: wildcards and the largest communicator; dropped (and counted) if MPI_REQUEST_CANCELLED cancels it first |
//! | MPI_IRECV | `IrecvComplete` |
//! | MPI_RECV | `RecvEnd`, and a synthesized `RecvBegin` (below) |
//! | MPI_COLLECTIVE_BEGIN, _END | `CollBegin`, `CollEnd`; the begin takes its end's operation and communicator (a begin without an end is dropped and counted) |
//! | METRIC | a `Metric` per value (raw values, as otf2-print prints them) |
//! | PROGRAM_BEGIN, _END | `ProcessBegin`, `ProcessEnd` |
//! | THREAD_BEGIN, _END | `ThreadBegin` (its parent: the location of the THREAD_CREATE with the same contingent and sequence number, found by [`Otf2Archive::read_all`] and [`Otf2Archive::for_each_block`]), `ThreadEnd` |
//! | CLOCK_OFFSET (local definitions) | in [`ClockMode::Raw`], `ClockOffset` against location 0 (offset and standard deviation in ns, rounded), placed after the events of its time |
//! | anything else | skipped, counted in [`LocationEvents::skipped`] by its otf2-print name (attribute lists as `ATTRIBUTE_LIST`, unknown record types as `UNKNOWN_<type>`) |
//!
//! OTF2 has no receive-begin record. With [`Otf2Options::recv_begin`], each
//! MPI_RECV also gives a `RecvBegin { from, comm, tag }` (its actual source
//! and tag) placed right after the Enter of the innermost open blocking
//! receive region (`MPI_Recv`, `MPI_Sendrecv`, `MPI_Sendrecv_replace`,
//! `MPI_Mrecv`), at that Enter's time; a receive outside such a region gets
//! its `RecvBegin` just before its `RecvEnd`.
//!
//! # Errors
//!
//! Errors name the file and the byte offset. A missing local definitions
//! file means no mapping tables and no clock offsets, as for OTF2. A missing
//! events file (of a location with events), a truncated chunk or file, a chunk whose event
//! count differs from its header's, a bad record length or compressed
//! integer, an undefined region or metric, a rank outside its communicator:
//! [`ErrorKind::Corrupt`](spoor_format::ErrorKind) or `Io`. A newer OTF2 major
//! version than 3, or a zlib-compressed or SIONlib archive:
//! [`ErrorKind::Version`](spoor_format::ErrorKind). Records on an undefined
//! communicator (e.g. an OTF2 3.0 inter-communicator) are skipped and
//! counted as `"<RECORD> (undefined communicator)"`. No input panics, and no
//! allocation is sized by a count read from disk before the count is checked
//! against the bytes that hold it.

mod anchor;
mod buf;
mod clock;
mod defs;
mod events;
mod names;

use crate::files::{Contents, Disk, TraceFiles};
use anchor::{Anchor, AnchorError};
use buf::{chunk_header, Bad, ChunkHeader};
use clock::{Interval, TimeConv};
use events::{decode_chunk, scan_creates, ChunkEnd, DecState, LocCtx, Parents, Resolver, WINDOW};
use rayon::prelude::*;
use spoor_format::binary::BlockEncoder;
use spoor_format::{Error, ErrorKind};
use spoor_model::{CommId, Definitions, Event, Kind, LocId};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex, OnceLock};

pub use names::event_name;

/// Which clock event times are on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClockMode {
    /// Each location's own clock, as recorded; the CLOCK_OFFSET samples of
    /// the local definitions become `ClockOffset` events against location 0.
    #[default]
    Raw,
    /// Corrected as OTF2's reader and otf2-print do (see the module docs).
    /// No `ClockOffset` events.
    Corrected,
}

/// How to read an archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Otf2Options {
    pub clock: ClockMode,
    /// Synthesize a `RecvBegin` for each blocking receive (see the module docs).
    pub recv_begin: bool,
}

impl Default for Otf2Options {
    fn default() -> Self {
        Otf2Options { clock: ClockMode::Raw, recv_begin: true }
    }
}

/// The archive's timer (its CLOCK_PROPERTIES): `resolution` ticks per
/// second, times counted from `global_offset`, `length` ticks long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockInfo {
    pub resolution: u64,
    pub global_offset: u64,
    pub length: u64,
}

impl ClockInfo {
    /// Ticks to ns since the global offset, as event times are converted.
    pub fn ticks_to_ns(&self, ticks: u64) -> i64 {
        TimeConv::new(self.resolution, self.global_offset).ns(ticks)
    }
}

/// One location's events.
#[derive(Clone, Debug, PartialEq)]
pub struct LocationEvents {
    pub loc: LocId,
    pub events: Vec<Event>,
    /// Records not converted, by their otf2-print name.
    pub skipped: BTreeMap<String, u64>,
    /// Event records read (converted or skipped).
    pub records: u64,
}

struct LocalData {
    local: defs::Local,
    intervals: Vec<Interval>,
    samples: Vec<Event>,
}

/// An open OTF2 archive: its definitions, ready to decode events; its
/// files are read through `F` (by default the file system).
pub struct Otf2Archive<F = Disk> {
    files: F,
    anchor_path: PathBuf,
    /// `<dir>/<name>`: location files are `<dir>/<name>/<id>.evt`.
    base: PathBuf,
    anchor: Anchor,
    clock: ClockInfo,
    conv: TimeConv,
    opts: Otf2Options,
    built: defs::Built,
    locals: Vec<LocalData>,
}

fn corrupt(file: &Path, base: usize, b: Bad) -> Error {
    Error::corrupt(&file.display().to_string(), (base + b.at) as u64, b.msg)
}

fn read_file<'f>(files: &'f impl TraceFiles, path: &Path) -> Result<std::borrow::Cow<'f, [u8]>, Error> {
    files.read(path).map_err(|e| Error::io(&path.display().to_string(), &e))
}

impl Otf2Archive {
    /// Opens the archive of `anchor` (its `.otf2` file) with default options.
    pub fn open(anchor: &Path) -> Result<Self, Error> {
        Self::open_with(anchor, Otf2Options::default())
    }

    pub fn open_with(anchor_path: &Path, opts: Otf2Options) -> Result<Self, Error> {
        Self::open_from(Disk, anchor_path, opts)
    }
}

impl<F: TraceFiles> Otf2Archive<F> {
    /// Opens the archive of `anchor_path` (its `.otf2` file) among `files`: the
    /// other files are found beside it as on disk (`traces.def`,
    /// `traces/<id>.def`, `traces/<id>.evt` for `traces.otf2`), and the
    /// application is named after its folder (`files.canonicalize`).
    pub fn open_from(files: F, anchor_path: &Path, opts: Otf2Options) -> Result<Self, Error> {
        let afile = anchor_path.display().to_string();
        let bytes = read_file(&files, anchor_path)?;
        let anchor = anchor::parse(&bytes).map_err(|e| match e {
            AnchorError::Corrupt(b) => corrupt(anchor_path, 0, b),
            AnchorError::Unsupported(at, message) => Error {
                kind: ErrorKind::Version,
                file: afile.clone(),
                offset: Some(at as u64),
                line: None,
                message,
            },
        })?;
        let name = anchor_path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let dir = match anchor_path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let base = dir.join(&name);
        let app = files
            .canonicalize(&dir)
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "otf2".into());

        let def_path = dir.join(format!("{name}.def"));
        let def_bytes = read_file(&files, &def_path)?;
        let global = defs::parse_global(&def_bytes, anchor.chunk_size_defs as usize)
            .map_err(|b| corrupt(&def_path, 0, b))?;
        let mut built = defs::build(&global, &app).map_err(|b| corrupt(&def_path, 0, b))?;
        let clock = ClockInfo {
            resolution: global.resolution,
            global_offset: global.global_offset,
            length: global.trace_length,
        };
        let conv = TimeConv::new(clock.resolution, clock.global_offset);
        set_properties(&mut built.defs, &anchor, &clock, opts.clock);

        // Local definitions, in parallel.
        let locals = built
            .locations
            .par_iter()
            .map(|&(id, _)| {
                let path = base.join(format!("{id}.def"));
                let local = match files.read(&path) {
                    Ok(d) => defs::parse_local(&d, anchor.chunk_size_defs as usize)
                        .map_err(|b| corrupt(&path, 0, b))?,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => defs::Local::default(),
                    Err(e) => return Err(Error::io(&path.display().to_string(), &e)),
                };
                Ok((path, local))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let locals = locals
            .into_iter()
            .map(|(path, local)| {
                let (mut intervals, mut samples) = (Vec::new(), Vec::new());
                match opts.clock {
                    ClockMode::Corrected => {
                        intervals = clock::intervals(&local.clock).map_err(|i| {
                            Error::corrupt(
                                &path.display().to_string(),
                                0,
                                format!("CLOCK_OFFSET sample {i} is not later than the one before it"),
                            )
                        })?;
                    }
                    ClockMode::Raw => {
                        for s in &local.clock {
                            let error = conv.delta_ns(s.stddev);
                            samples.push(Event::new(
                                0,
                                conv.ns(s.time),
                                None,
                                Kind::ClockOffset {
                                    reference: 0,
                                    offset: conv.delta_ns(s.offset as f64) as i64,
                                    error: if error > 0.0 { error as u64 } else { 0 },
                                },
                            ));
                        }
                    }
                }
                Ok(LocalData { local, intervals, samples })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Otf2Archive {
            files,
            anchor_path: anchor_path.to_owned(),
            base,
            anchor,
            clock,
            conv,
            opts,
            built,
            locals,
        })
    }

    pub fn definitions(&self) -> &Definitions {
        &self.built.defs
    }

    pub fn clock(&self) -> &ClockInfo {
        &self.clock
    }

    pub fn options(&self) -> Otf2Options {
        self.opts
    }

    /// The anchor file this archive was opened from.
    pub fn anchor_path(&self) -> &Path {
        &self.anchor_path
    }

    /// The OTF2 version that wrote the archive.
    pub fn version(&self) -> (u8, u8, u8) {
        self.anchor.version
    }

    pub fn location_count(&self) -> usize {
        self.built.locations.len()
    }

    /// The OTF2 id of spoor location `index` (its files are `<id>.def` and `<id>.evt`).
    pub fn otf2_location_id(&self, index: usize) -> Option<u64> {
        self.built.locations.get(index).map(|l| l.0)
    }

    /// Decodes the events of location `index` (`ThreadBegin` parents stay `None`).
    pub fn read_location(&self, index: usize) -> Result<LocationEvents, Error> {
        if index >= self.location_count() {
            return Err(Error::corrupt(
                &self.anchor_path.display().to_string(),
                0,
                format!("location {index} does not exist ({} locations)", self.location_count()),
            ));
        }
        Ok(self.decode_location(index, rayon::current_num_threads() > 1)?.0)
    }

    /// Decodes every location, in parallel; the result is in location order.
    pub fn read_all(&self) -> Result<Vec<LocationEvents>, Error> {
        let n = self.location_count();
        let few = n < rayon::current_num_threads();
        // Largest files first, one location per task: the threads stay busy to the end.
        let mut order: Vec<(u64, usize)> =
            (0..n).map(|i| (self.files.file_len(&self.evt_path(i)).unwrap_or(0), i)).collect();
        order.sort_by(|a, b| b.cmp(a));
        let mut done: Vec<(usize, Result<Decoded, Error>)> =
            order.par_iter().with_max_len(1).map(|&(_, i)| (i, self.decode_location(i, few))).collect();
        done.sort_by_key(|d| d.0);
        let mut out = Vec::with_capacity(n);
        let mut threads = Vec::new();
        for (i, r) in done {
            let (l, creates, begins) = r?;
            threads.push((i, creates, begins));
            out.push(l);
        }
        // Thread parents: the location that created the thread.
        if threads.iter().any(|t| !t.2.is_empty()) {
            let mut creator = HashMap::new();
            for (i, creates, _) in &threads {
                for &c in creates {
                    creator.entry(c).or_insert(*i as LocId);
                }
            }
            for (i, _, begins) in threads.iter().filter(|t| !t.2.is_empty()) {
                let mut b = begins.iter();
                for e in out[*i].events.iter_mut() {
                    if let Kind::ThreadBegin { parent } = &mut e.kind {
                        *parent = b.next().and_then(|k| creator.get(k).copied());
                    }
                }
            }
        }
        Ok(out)
    }

    fn evt_path(&self, i: usize) -> PathBuf {
        self.base.join(format!("{}.evt", self.built.locations[i].0))
    }

    fn ctx<'a>(&'a self, i: usize, creators: Option<&'a (dyn Parents + Sync)>) -> LocCtx<'a> {
        let l = &self.locals[i];
        LocCtx {
            regions: &self.built.regions,
            region_map: l.local.regions.as_ref(),
            comms: &self.built.comms,
            comm_map: l.local.comms.as_ref(),
            self_comms: &self.built.self_comms[i],
            comm_defs: &self.built.defs.comms,
            metrics: &self.built.metrics,
            metric_map: l.local.metrics.as_ref(),
            metric_sets: &self.built.metric_sets,
            conv: self.conv,
            intervals: &l.intervals,
            creators,
        }
    }

    /// Location `i`'s clock-offset samples as its events.
    fn samples(&self, i: usize) -> Vec<Event> {
        self.locals[i].samples.iter().map(|e| Event { loc: i as LocId, ..e.clone() }).collect()
    }

    /// Opens and maps location `i`'s events file and checks its chunk
    /// headers; `None` when there is no file and the location has no events.
    /// `windowed`: see [`EvtFile::window`].
    fn open_evt(&self, i: usize, windowed: bool) -> Result<Option<EvtFile<'_>>, Error> {
        let path = self.evt_path(i);
        let map = match self.files.map(&path, windowed) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && self.built.locations[i].1 == 0 => {
                return Ok(None)
            }
            Err(e) => return Err(Error::io(&path.display().to_string(), &e)),
        };
        let cs = self.anchor.chunk_size_events as usize;
        let mut f = EvtFile { path, map, cs, windowed, headers: Vec::new(), total: 0 };
        let data = f.data();
        if data.is_empty() {
            return Err(Error::corrupt(
                &f.path.display().to_string(),
                0,
                "empty events file: expected a chunk header",
            ));
        }
        let nch = data.len().div_ceil(cs);

        // Chunk headers: byte order, and the event numbers, which must follow on.
        let mut headers = Vec::with_capacity(nch);
        let mut next = 1u64;
        let mut total = 0usize;
        for k in 0..nch {
            let c = f.chunk(k);
            let h = chunk_header(c, true).map_err(|b| corrupt(&f.path, k * cs, b))?;
            let n = h.last_event.wrapping_sub(h.first_event).wrapping_add(1);
            if h.first_event != next || n > (c.len() / 2) as u64 {
                return Err(Error::corrupt(
                    &f.path.display().to_string(),
                    (k * cs + 2) as u64,
                    format!(
                        "chunk header announces events {} to {}, expected a range from event {next} that fits in the chunk",
                        h.first_event, h.last_event
                    ),
                ));
            }
            next = h.last_event.wrapping_add(1);
            total += n as usize;
            headers.push(h);
        }
        f.headers = headers;
        f.total = total;
        Ok(Some(f))
    }

    /// Decodes the chunks of `f` into `res`, calling `between` after each
    /// chunk (it returns false to stop: the result is then an empty state).
    fn decode_into(
        &self,
        ctx: &LocCtx,
        f: &EvtFile,
        res: &mut Resolver,
        between: &mut dyn FnMut(&mut Resolver) -> bool,
    ) -> Result<DecState, Error> {
        let nch = f.headers.len();
        let check = |k: usize, h: &ChunkHeader, got: u64, end: ChunkEnd| -> Result<(), Error> {
            let want = h.last_event.wrapping_sub(h.first_event).wrapping_add(1);
            let msg = if got != want {
                format!("chunk header announces {want} events, the chunk holds {got}")
            } else if end == ChunkEnd::File && k + 1 < nch {
                "end-of-file marker before the last chunk".to_string()
            } else if end == ChunkEnd::Chunk && k + 1 == nch {
                "truncated: the last chunk ends without an end-of-file marker".to_string()
            } else {
                return Ok(());
            };
            Err(Error::corrupt(&f.path.display().to_string(), (k * f.cs) as u64, msg))
        };
        let mut st = DecState::new(ctx);
        for (k, h) in f.headers.iter().enumerate() {
            f.window(k);
            let before = st.records;
            let end = if h.big_endian {
                decode_chunk::<true, _>(ctx, f.chunk(k), &mut st, res)
            } else {
                decode_chunk::<false, _>(ctx, f.chunk(k), &mut st, res)
            }
            .map_err(|b| corrupt(&f.path, k * f.cs, b))?;
            check(k, h, st.records - before, end)?;
            if !between(res) {
                return Ok(DecState::new(ctx));
            }
        }
        Ok(st)
    }

    fn decode_location(&self, i: usize, prefault_output: bool) -> Result<Decoded, Error> {
        let loc = i as LocId;
        let Some(f) = self.open_evt(i, false)? else {
            let events = self.samples(i);
            return Ok((
                LocationEvents { loc, events, skipped: BTreeMap::new(), records: 0 },
                vec![],
                vec![],
            ));
        };
        let total = f.total;
        let ctx = self.ctx(i, None);
        let samples = self.samples(i);
        let capacity = total + samples.len() + total / 16 + 16;
        let mut res = Resolver::new(loc, capacity, self.opts.recv_begin, self.built.default_comm, samples);

        // With fewer locations than threads, a spare thread faults in the
        // output's pages while this one decodes: the page faults (the kernel
        // zeroing fresh memory) cost as much as the decoding. (Decoding the
        // chunks in parallel and joining them was measured slower: the join
        // copies every event, and faults in two buffers instead of one.)
        let st = if prefault_output && total >= 1 << 16 {
            let addr = res.events.as_ptr() as usize;
            let bytes = (total + total / 32).min(capacity) * std::mem::size_of::<Event>();
            rayon::scope(|s| {
                s.spawn(move |_| prefault(addr, bytes));
                self.decode_into(&ctx, &f, &mut res, &mut |_| true)
            })?
        } else {
            self.decode_into(&ctx, &f, &mut res, &mut |_| true)?
        };
        let (events, dropped, cancelled) = res.finish();
        let skipped = skipped_map(&st, dropped, cancelled);
        Ok((LocationEvents { loc, events, skipped, records: st.records }, st.creates, st.begins))
    }

    /// Location `i`'s THREAD_CREATE keys (contingent, sequence number), in
    /// order, from a quick pass over its events file that only parses record
    /// boundaries; a file that cannot be read adds nothing (decoding it
    /// reports the error).
    fn scan_creates(&self, i: usize) -> Vec<(CommId, u64)> {
        let mut creates = Vec::new();
        if let Ok(Some(f)) = self.open_evt(i, true) {
            let ctx = self.ctx(i, None);
            for (k, h) in f.headers.iter().enumerate() {
                f.window(k);
                let r = if h.big_endian {
                    scan_creates::<true>(&ctx, f.chunk(k), &mut creates)
                } else {
                    scan_creates::<false>(&ctx, f.chunk(k), &mut creates)
                };
                if !matches!(r, Ok(ChunkEnd::Chunk)) {
                    break;
                }
            }
        }
        creates
    }

    /// Decodes every location and encodes its events into blocks of
    /// `block_events` events (in the binary format, per location), calling
    /// `emit` with each block in the order [`TraceWriter::write`] would give
    /// them to the output when writing the events of [`Otf2Archive::read_all`]
    /// location by location: location 0's blocks, then location 1's, ...,
    /// each location's last block (possibly short) last;
    /// [`TraceWriter::write_encoded`] takes them. `ThreadBegin` parents are
    /// resolved when a location is a thread (`thread` > 0) of its process,
    /// as by [`Otf2Archive::read_all`]; otherwise they stay `None`, as by
    /// [`Otf2Archive::read_location`].
    ///
    /// Locations are decoded and encoded in parallel (one per thread of
    /// rayon's pool, taken in location order), each keeping a window of a few
    /// thousand decoded events, and a window of its mapped events file:
    /// memory holds the encoded blocks not yet emitted, which wait (up to
    /// about twice [`STREAM_BUFFER`] bytes) while an earlier location is
    /// being decoded or `emit` is slow. The first error in location order (of
    /// decoding or of `emit`) is returned; nothing after it is emitted.
    ///
    /// [`TraceWriter::write`]: spoor_format::TraceWriter::write
    /// [`TraceWriter::write_encoded`]: spoor_format::TraceWriter::write_encoded
    pub fn for_each_block<E: From<Error>>(
        &self,
        block_events: usize,
        emit: impl FnMut(LocId, BlockEncoder) -> Result<(), E>,
    ) -> Result<StreamSummary, E> {
        self.for_each_block_buffered(block_events, STREAM_BUFFER, emit)
    }

    /// [`Otf2Archive::for_each_block`], keeping at most about `buffer` bytes
    /// of encoded blocks of later locations.
    pub fn for_each_block_buffered<E: From<Error>>(
        &self,
        block_events: usize,
        buffer: usize,
        mut emit: impl FnMut(LocId, BlockEncoder) -> Result<(), E>,
    ) -> Result<StreamSummary, E> {
        let n = self.location_count();
        let parents = ThreadParents::new(self);
        let creators = self.built.defs.locations.iter().any(|l| l.thread > 0).then_some(&parents);
        let workers = rayon::current_num_threads().clamp(1, n.max(1));
        let next = AtomicUsize::new(0);
        let failed = AtomicUsize::new(usize::MAX);
        let gate = Gate::new(n, buffer);
        let (tx, rx) = mpsc::channel::<Msg>();
        let mut summary = StreamSummary::default();
        std::thread::scope(|s| {
            for _ in 0..workers {
                let (tx, next, failed, gate) = (tx.clone(), &next, &failed, &gate);
                s.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n || i > failed.load(Ordering::Relaxed) || gate.aborted() {
                        break;
                    }
                    let mut send = |blocks: Vec<BlockEncoder>| -> bool {
                        let bytes = blocks.iter().map(|b| b.buf.len()).sum();
                        gate.wait_room(i, bytes) && tx.send(Msg::Blocks(i, blocks, bytes)).is_ok()
                    };
                    let r = self.stream_location(i, block_events, creators, &mut send);
                    if r.is_err() {
                        failed.fetch_min(i, Ordering::Relaxed);
                    }
                    if tx.send(Msg::Done(i, r)).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            let r = self.emit_in_order(n, rx, &gate, &mut summary, &mut emit);
            if r.is_err() {
                gate.abort();
            }
            r
        })?;
        Ok(summary)
    }

    /// The receiving end of [`Otf2Archive::for_each_block`]: emits the blocks
    /// of location `head` as they come, keeping those of later locations
    /// until `head` is done.
    fn emit_in_order<E: From<Error>>(
        &self,
        n: usize,
        rx: mpsc::Receiver<Msg>,
        gate: &Gate,
        summary: &mut StreamSummary,
        emit: &mut impl FnMut(LocId, BlockEncoder) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut waiting: Vec<Vec<(Vec<BlockEncoder>, usize)>> = (0..n).map(|_| Vec::new()).collect();
        let mut done: Vec<Option<Result<LocSummary, Error>>> = (0..n).map(|_| None).collect();
        let mut head = 0;
        let mut put = |loc: usize, blocks: Vec<BlockEncoder>, bytes: usize| -> Result<(), E> {
            for b in blocks {
                if b.count > 0 {
                    emit(loc as LocId, b)?;
                }
            }
            gate.release(loc, bytes);
            Ok(())
        };
        while head < n {
            let Ok(msg) = rx.recv() else {
                // Every worker has stopped; only an abort makes them stop early.
                break;
            };
            match msg {
                Msg::Blocks(i, blocks, bytes) if i == head => put(i, blocks, bytes)?,
                Msg::Blocks(i, blocks, bytes) => waiting[i].push((blocks, bytes)),
                Msg::Done(i, r) => done[i] = Some(r),
            }
            while head < n {
                let Some(r) = done[head].take() else { break };
                let l = r?;
                for (what, k) in l.skipped {
                    *summary.skipped.entry(what).or_default() += k;
                }
                summary.records += l.records;
                head += 1;
                gate.set_head(head);
                if head < n {
                    for (blocks, bytes) in std::mem::take(&mut waiting[head]) {
                        put(head, blocks, bytes)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Decodes location `i` into blocks handed to `send` (a few at a time,
    /// the last one possibly short); `send` returns false to stop.
    fn stream_location(
        &self,
        i: usize,
        block_events: usize,
        creators: Option<&ThreadParents<'_, F>>,
        send: &mut dyn FnMut(Vec<BlockEncoder>) -> bool,
    ) -> Result<LocSummary, Error> {
        let loc = i as LocId;
        let Some(f) = self.open_evt(i, true)? else {
            // The samples as they were recorded, as read_location gives them.
            let mut res =
                Resolver::streaming(loc, block_events, WINDOW, false, self.built.default_comm, Vec::new());
            res.put_final(&self.samples(i));
            send(res.finish_streaming().0);
            return Ok(LocSummary::default());
        };
        let ctx = self.ctx(i, creators.map(|c| c as &(dyn Parents + Sync)));
        let mut res = Resolver::streaming(
            loc,
            block_events,
            WINDOW,
            self.opts.recv_begin,
            self.built.default_comm,
            self.samples(i),
        );
        let mut stopped = false;
        let st = self.decode_into(&ctx, &f, &mut res, &mut |res| {
            let blocks = res.take_blocks();
            stopped = !blocks.is_empty() && !send(blocks);
            !stopped
        })?;
        if stopped {
            return Ok(LocSummary::default());
        }
        drop(f);
        if let Some(c) = creators {
            c.decoded(i, st.creates.clone());
        }
        let (blocks, dropped, cancelled) = res.finish_streaming();
        send(blocks);
        Ok(LocSummary { skipped: skipped_map(&st, dropped, cancelled), records: st.records })
    }
}

/// A location's events, with its THREAD_CREATE and THREAD_BEGIN keys.
type Decoded = (LocationEvents, Vec<(CommId, u64)>, Vec<(CommId, u64)>);

/// THREAD_BEGIN parents while streaming: every location's THREAD_CREATE
/// keys, gathered the first time a THREAD_BEGIN is decoded, each from the
/// location's decoding if done by then, else from a quick pass over its file
/// ([`Otf2Archive::scan_creates`]). A key's parent is the first location
/// (in location order) that created it, as in [`Otf2Archive::read_all`].
struct ThreadParents<'a, F> {
    archive: &'a Otf2Archive<F>,
    creates: Vec<OnceLock<Vec<(CommId, u64)>>>,
    map: OnceLock<HashMap<(CommId, u64), LocId>>,
}

impl<'a, F: TraceFiles> ThreadParents<'a, F> {
    fn new(archive: &'a Otf2Archive<F>) -> Self {
        let creates = (0..archive.location_count()).map(|_| OnceLock::new()).collect();
        ThreadParents { archive, creates, map: OnceLock::new() }
    }

    /// Location `i`'s keys, from its (successful) decoding.
    fn decoded(&self, i: usize, creates: Vec<(CommId, u64)>) {
        let _ = self.creates[i].set(creates);
    }
}

impl<F: TraceFiles> Parents for ThreadParents<'_, F> {
    fn parent(&self, key: (CommId, u64)) -> Option<LocId> {
        let map = self.map.get_or_init(|| {
            let mut map = HashMap::new();
            for (i, c) in self.creates.iter().enumerate() {
                for &k in c.get_or_init(|| self.archive.scan_creates(i)) {
                    map.entry(k).or_insert(i as LocId);
                }
            }
            map
        });
        map.get(&key).copied()
    }
}

/// What [`Otf2Archive::for_each_block`] read besides the events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamSummary {
    /// Records not converted, by their otf2-print name, over all locations.
    pub skipped: BTreeMap<String, u64>,
    /// Event records read (converted or skipped).
    pub records: u64,
}

/// Bytes of an events file read between releases of their pages, when streaming.
const MAP_WINDOW: usize = 4 << 20;

/// How many bytes of encoded blocks [`Otf2Archive::for_each_block`] keeps
/// for locations after the one being emitted (and, for a slow output, of
/// that one) before their decoding waits.
pub const STREAM_BUFFER: usize = 64 << 20;

#[derive(Default)]
struct LocSummary {
    skipped: BTreeMap<String, u64>,
    records: u64,
}

/// From a streaming worker: encoded blocks of a location (and their bytes), or its end.
enum Msg {
    Blocks(usize, Vec<BlockEncoder>, usize),
    Done(usize, Result<LocSummary, Error>),
}

/// Bounds the encoded blocks sent and not yet emitted: the location being
/// emitted (`head`) waits while `limit` bytes of its own are (a slow output),
/// others while `limit` bytes of any location are; either sends when nothing
/// is waiting. So at most about twice `limit` bytes wait, and the head never
/// waits for blocks that only its end lets out.
struct Gate {
    state: Mutex<GateState>,
    cv: Condvar,
    limit: usize,
}

struct GateState {
    head: usize,
    /// Bytes sent and not yet emitted, in all and per location.
    bytes: usize,
    of: Vec<usize>,
    aborted: bool,
}

impl Gate {
    fn new(locations: usize, limit: usize) -> Self {
        let state = GateState { head: 0, bytes: 0, of: vec![0; locations], aborted: false };
        Gate { state: Mutex::new(state), cv: Condvar::new(), limit }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until blocks of `bytes` of location `loc` may be sent; false if aborted.
    fn wait_room(&self, loc: usize, bytes: usize) -> bool {
        let mut g = self.lock();
        loop {
            let waiting = if loc == g.head { g.of[loc] } else { g.bytes };
            if g.aborted || waiting == 0 || waiting + bytes <= self.limit {
                break;
            }
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        g.bytes += bytes;
        g.of[loc] += bytes;
        !g.aborted
    }

    fn release(&self, loc: usize, bytes: usize) {
        let mut g = self.lock();
        g.bytes -= bytes;
        g.of[loc] -= bytes;
        drop(g);
        self.cv.notify_all();
    }

    fn set_head(&self, head: usize) {
        self.lock().head = head;
        self.cv.notify_all();
    }

    fn abort(&self) {
        self.lock().aborted = true;
        self.cv.notify_all();
    }

    fn aborted(&self) -> bool {
        self.lock().aborted
    }
}

/// A location's events file, mapped (or in memory), with its checked chunk headers.
struct EvtFile<'a> {
    path: PathBuf,
    map: Contents<'a>,
    /// The chunk size.
    cs: usize,
    windowed: bool,
    headers: Vec<ChunkHeader>,
    /// Events announced by the chunk headers.
    total: usize,
}

impl EvtFile<'_> {
    fn data(&self) -> &[u8] {
        &self.map
    }

    /// Before chunk `k` is read, when the map is windowed: at the first
    /// chunk of each [`MAP_WINDOW`], the pages read so far are released and
    /// those of the window read in (in one call rather than a page fault
    /// each), so that the file's pages in memory stay within two windows.
    fn window(&self, k: usize) {
        let Some(m) = self.map.mapped().filter(|_| self.windowed) else { return };
        let per = (MAP_WINDOW / self.cs).max(1);
        if !k.is_multiple_of(per) {
            return;
        }
        let start = k * self.cs;
        let end = ((k + per) * self.cs).min(m.len());
        if k > 0 {
            let from = (k - per) * self.cs;
            // SAFETY: the map is read-only and backed by the file: released
            // pages are read back from it if touched again, unchanged.
            unsafe {
                let _ = m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, start - from);
            }
        }
        #[cfg(target_os = "linux")]
        let _ = m.advise_range(memmap2::Advice::PopulateRead, start, end - start);
        #[cfg(not(target_os = "linux"))]
        let _ = end;
    }

    fn chunk(&self, k: usize) -> &[u8] {
        let d = self.data();
        &d[k * self.cs..((k + 1) * self.cs).min(d.len())]
    }
}

/// Skipped records by their otf2-print name.
fn skipped_map(st: &DecState, dropped: u64, cancelled: u64) -> BTreeMap<String, u64> {
    let mut skipped = BTreeMap::new();
    for t in 0..256 {
        if st.skipped[t] > 0 {
            skipped.insert(event_name(t as u8), st.skipped[t]);
        }
        if st.no_comm[t] > 0 {
            skipped.insert(format!("{} (undefined communicator)", event_name(t as u8)), st.no_comm[t]);
        }
    }
    if dropped > 0 {
        skipped.insert("MPI_COLLECTIVE_BEGIN (without MPI_COLLECTIVE_END)".into(), dropped);
    }
    if cancelled > 0 {
        skipped.insert("MPI_IRECV_REQUEST (cancelled)".into(), cancelled);
    }
    skipped
}

/// A vector for `n` events. A large one asks for transparent huge pages: an
/// event is 120 bytes, and faulting in (and zeroing) a gigabyte of fresh
/// 4 KiB pages costs the kernel more than decoding the events costs us; with
/// 2 MiB pages it is a few hundred faults instead of a few hundred thousand.
///
/// `n` comes from chunk headers (checked against the chunk sizes, but a
/// hostile file can still announce far more events than it holds): when the
/// reservation fails, a small vector is returned and grows as needed.
pub(crate) fn alloc_events(n: usize) -> Vec<Event> {
    let mut v: Vec<Event> = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        v.reserve(n.min(1 << 16));
    }
    spoor_format::mem::ask_huge_pages(&v);
    v
}

/// Faults in the pages of `[addr, addr + bytes)`, writable, without touching them.
fn prefault(addr: usize, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        let start = addr.next_multiple_of(4096);
        let end = (addr + bytes) & !4095;
        if end > start {
            // SAFETY: MADV_POPULATE_WRITE only makes the kernel allocate the
            // (zero-filled) pages of the range, as the first write to each
            // would; it reads and writes no memory, so it cannot race with the
            // decoder filling the vector. Should the vector have been
            // reallocated meanwhile, the call fails or populates freed pages,
            // changing no contents.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_POPULATE_WRITE);
            }
        }
    }
}

fn set_properties(defs: &mut Definitions, a: &Anchor, c: &ClockInfo, mode: ClockMode) {
    defs.set_property("import.format", "otf2");
    defs.set_property("otf2.version", &format!("{}.{}.{}", a.version.0, a.version.1, a.version.2));
    for (k, v) in
        [("otf2.creator", &a.creator), ("otf2.description", &a.description), ("otf2.machine", &a.machine)]
    {
        if !v.is_empty() {
            defs.set_property(k, v);
        }
    }
    defs.set_property("otf2.trace_id", &format!("{:016x}", a.trace_id));
    defs.set_property("otf2.timer_resolution", &c.resolution.to_string());
    defs.set_property("otf2.global_offset", &c.global_offset.to_string());
    defs.set_property("otf2.trace_length", &c.length.to_string());
    defs.set_property("otf2.clock", if mode == ClockMode::Raw { "raw" } else { "corrected" });
    for (k, v) in &a.properties {
        defs.set_property(&format!("otf2.property.{k}"), v);
    }
}
