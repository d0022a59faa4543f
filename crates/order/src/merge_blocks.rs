//! The merge of memory-mapped binary traces, block by block and in parallel (a run as
//! spoor-record writes it: a file per process).
//!
//! Every input is read in its own order by one task at a time on the thread pool: its
//! blocks decoded, its events given the output's ids and encoded again into the output
//! blocks of their locations. Only finished output blocks leave a task, each with the
//! place it takes in the output: after every block whose last event is earlier (shifted
//! wall time), then by input, then by position in the input. This thread writes them in
//! that order, holding at most [`AHEAD`] finished blocks per input, so memory holds a
//! few encoded blocks per input whatever the length of the inputs. Each location's
//! blocks are those that writing its events one by one gives; where every input's
//! events are in time order, so is the output, byte for byte that of the event by event
//! merge.

use crate::merge::{names_defined, remap, IdCounts, InputMap, MergeInput, Names, Unifier};
use crate::{Error, Result};
use spoor_format::binary::{flags, BlockEncoder};
use spoor_format::raw::{decode_block_canonical, EncodedBlock};
use spoor_format::{NextBlock, ReadOptions, TraceReader, TraceWriter, WriterOptions};
use spoor_model::{Definitions, Event, Feedback, LocId};
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Finished blocks an input may hold before this thread writes them.
const AHEAD: usize = 2;

/// An input location whose output block is not made yet.
const NO_BLOCK: u32 = u32::MAX;

/// An output block finished by an input, and its place: (shifted wall time of its last
/// event, input, position of that event in the input).
struct Finished {
    key: (i64, usize, u64),
    block: EncodedBlock,
}

/// One input and the output blocks being filled from it.
struct Feed {
    input: usize,
    file: String,
    reader: TraceReader,
    map: InputMap,
    /// The input's ids where the map leaves them as they are: then a full block of one
    /// location, canonical, that starts an output block of its own is that output
    /// block as it is, not encoded again.
    identity: Option<IdCounts>,
    /// Events read per input location (for messages).
    seen: Vec<u64>,
    /// Events read in all.
    pos: u64,
    /// The output locations this input fills, each with its block so far, and per
    /// input location its place there (`NO_BLOCK`: none yet).
    filling: Vec<(LocId, BlockEncoder)>,
    block_of: Vec<u32>,
    done: bool,
}

/// What the tasks share: which input each output location's events come from (input +
/// 1; 0: none yet), the shift of each output location's application, events per block.
struct Shared<'a> {
    owner: Vec<AtomicUsize>,
    shift: Vec<i64>,
    block_events: u64,
    inputs: &'a [MergeInput],
    defs: &'a Definitions,
}

thread_local! {
    /// Each thread's room for a decoded block.
    static DECODED: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
}

impl Feed {
    /// Reads on until `AHEAD` blocks are finished or the input ends; the finished blocks.
    fn advance(&mut self, sh: &Shared) -> Result<Vec<Finished>> {
        let mut out = Vec::new();
        while out.len() < AHEAD && !self.done {
            match self.reader.next_raw_block().map_err(Error::Format)? {
                None => self.done = true,
                Some(NextBlock::Raw(raw)) => DECODED.with(|d| -> Result<()> {
                    let mut events = d.borrow_mut();
                    events.clear();
                    let n = self.reader.location_count();
                    let Some(ids) = self.identity else {
                        spoor_format::binary::decode_block(&raw.payload, raw.form(), n, |e| events.push(e))
                            .map_err(|e| Error::Format(raw.error(&self.file, e)))?;
                        for ev in events.drain(..) {
                            self.take(ev, sh, &mut out)?;
                        }
                        return Ok(());
                    };
                    let mut defined = true;
                    let facts = decode_block_canonical(&raw.payload, raw.form(), n, |e| {
                        defined &= names_defined(ids, &e);
                        events.push(e);
                    })
                    .map_err(|e| Error::Format(raw.error(&self.file, e)))?;
                    let whole = defined && facts.canonical && facts.count == sh.block_events;
                    match facts.loc.filter(|_| whole) {
                        Some(loc) if self.starts_a_block(loc, sh)? => {
                            let last = events.last().map_or(0, |e| e.wall);
                            self.seen[loc as usize] += facts.count;
                            self.pos += facts.count;
                            let block = EncodedBlock {
                                loc: Some(loc),
                                count: facts.count,
                                min_wall: facts.min_wall,
                                max_wall: facts.max_wall,
                                payload: raw.payload,
                            };
                            out.push(Finished { key: (last, self.input, self.pos), block });
                        }
                        _ => {
                            for ev in events.drain(..) {
                                self.take(ev, sh, &mut out)?;
                            }
                        }
                    }
                    Ok(())
                })?,
                Some(NextBlock::Decoded(b)) => {
                    for ev in b.events {
                        self.take(ev, sh, &mut out)?;
                    }
                }
            }
        }
        Ok(out)
    }

    /// Whether the next event of `loc` (an input location the map leaves as it is)
    /// would start an output block, not shifted: its output block so far is empty.
    /// Claims `loc` as `take` would.
    fn starts_a_block(&mut self, loc: LocId, sh: &Shared) -> Result<bool> {
        if sh.shift.get(loc as usize) != Some(&0) {
            return Ok(false);
        }
        let k = self.filling_of(loc, loc, sh)?;
        Ok(self.filling[k].1.count == 0)
    }

    /// The place among the blocks being filled of input location `from`, which is
    /// output location `loc`: made, and `loc` claimed, at its first event.
    fn filling_of(&mut self, from: LocId, loc: LocId, sh: &Shared) -> Result<usize> {
        Ok(match self.block_of[from as usize] {
            NO_BLOCK => {
                self.claim(loc, sh)?;
                self.filling.push((loc, BlockEncoder::default()));
                self.block_of[from as usize] = self.filling.len() as u32 - 1;
                self.filling.len() - 1
            }
            k => k as usize,
        })
    }

    /// One event of the input into the block of its output location.
    #[inline]
    fn take(&mut self, ev: Event, sh: &Shared, out: &mut Vec<Finished>) -> Result<()> {
        let from = ev.loc as usize;
        let index = self.seen.get(from).copied().unwrap_or(0);
        if let Some(c) = self.seen.get_mut(from) {
            *c += 1;
        }
        let mut ev = remap(&self.file, Names::File(&self.file), &self.map, ev, index)?;
        let loc = ev.loc;
        ev.wall = ev.wall.saturating_add(sh.shift[loc as usize]);
        self.pos += 1;
        // Remapped, the event's location is defined, so `from` has a place in `block_of`.
        let k = self.filling_of(from as LocId, loc, sh)?;
        let enc = &mut self.filling[k].1;
        enc.push(&ev, false);
        if enc.count == sh.block_events {
            let block = enc.take_block(Some(loc));
            out.push(Finished { key: (ev.wall, self.input, self.pos), block });
        }
        Ok(())
    }

    /// Output location `loc` takes its events from this input: an error if another
    /// input has events of it, named the same way whichever input came first.
    fn claim(&self, loc: LocId, sh: &Shared) -> Result<()> {
        let me = self.input + 1;
        match sh.owner[loc as usize].compare_exchange(0, me, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => Ok(()),
            Err(other) => {
                let (first, second) = (other.min(me) - 1, other.max(me) - 1);
                let path = |i: usize| sh.inputs[i].path.clone();
                Err(Error::input(
                    &path(second),
                    format!(
                        "{} also has events in {}: one location cannot come from two inputs \
                         (name separate runs with --app NAME=FILES)",
                        sh.defs.location_described(loc),
                        path(first)
                    ),
                ))
            }
        }
    }
}

/// An input for the block by block merge: `None` unless it is a memory-mapped binary
/// trace with its end (whose final definitions are known when opened) and, in
/// comparison mode, its index (which gives its start).
fn open_mapped(inp: &MergeInput, compare: bool) -> Option<TraceReader> {
    let r = TraceReader::open(&inp.path, ReadOptions::default()).ok()?;
    let mapped = r.header().is_some() && r.end().is_some() && (!compare || r.index().is_some());
    mapped.then_some(r)
}

/// The merge of `inputs` block by block, or `None` when they are not all mapped binary
/// traces (then the event by event merge runs).
pub(crate) fn merge_mapped<W: Write>(
    inputs: &[MergeInput],
    opts: &crate::merge::MergeOptions,
    out: W,
    feedback: &dyn Feedback,
) -> Result<Option<crate::merge::MergeSummary>> {
    // Streams are read once, by the event by event merge.
    if inputs.len() < 2 || inputs.iter().any(|i| spoor_format::is_stream(&i.path)) {
        return Ok(None);
    }
    let mut uni = Unifier::default();
    let mut feeds = Vec::with_capacity(inputs.len());
    let mut starts = Vec::with_capacity(inputs.len());
    let mut all_matched = true;
    for (i, inp) in inputs.iter().enumerate() {
        let Some(mut reader) = open_mapped(inp, !opts.compare.is_empty()) else { return Ok(None) };
        let map = uni.add(&inp.path, reader.defs(), inp.app.as_deref())?;
        // Each input may define every process of the run: only the map is kept, so
        // that a thousand inputs do not hold a thousand copies of the run's names.
        drop(reader.take_defs());
        all_matched &= reader.header().is_some_and(|h| h.flags & flags::MATCHED != 0);
        starts.push(crate::merge::index_start(&reader));
        let locations = reader.location_count();
        feeds.push(Feed {
            input: i,
            file: inp.path.clone(),
            reader,
            identity: map.identity(),
            map,
            seen: vec![0; locations],
            pos: 0,
            filling: Vec::new(),
            block_of: vec![NO_BLOCK; locations],
            done: false,
        });
    }
    let maps: Vec<&InputMap> = feeds.iter().map(|f| &f.map).collect();
    let app_shift = crate::merge::app_shifts(opts, &uni, &maps, &starts)?;
    let shift = (0..uni.defs.locations.len() as LocId)
        .map(|l| uni.defs.process_of(l).map_or(0, |p| app_shift.get(p.app as usize).copied().unwrap_or(0)))
        .collect();
    let wopts = WriterOptions {
        block_events: opts.block_events.max(1),
        global_order: false,
        index: true,
        flags: if all_matched { flags::MATCHED } else { 0 },
    };
    let mut w = TraceWriter::new(out, &uni.defs, wopts).map_err(Error::Write)?;
    let sh = Shared {
        owner: (0..uni.defs.locations.len()).map(|_| AtomicUsize::new(0)).collect(),
        shift,
        block_events: opts.block_events.max(1) as u64,
        inputs,
        defs: &uni.defs,
    };
    let total = feeds.iter().map(|f| f.reader.end().map(|e| e.events)).sum::<Option<u64>>();
    let feeds: Vec<Mutex<Feed>> = feeds.into_iter().map(Mutex::new).collect();
    write_in_order(&feeds, &sh, &mut w, &|n| feedback.progress("events", n, total))?;
    // What is left in each location's block goes out last, in the order of locations,
    // as the writer flushes it.
    for f in feeds {
        let f = f.into_inner().unwrap_or_else(|e| e.into_inner());
        for (loc, enc) in f.filling {
            if enc.count > 0 {
                w.write_encoded(loc, enc).map_err(Error::Write)?;
            }
        }
    }
    let written = w.events_written();
    feedback.progress("events", written, total);
    w.finish().map_err(Error::Write)?;
    Ok(Some(uni.into_summary(inputs.len(), written, &app_shift)))
}

/// What this thread knows of the inputs while it writes their blocks in order.
struct Order {
    /// Per input, its finished blocks not yet written; whether it has ended; whether a
    /// task of it is running.
    queue: Vec<VecDeque<Finished>>,
    done: Vec<bool>,
    running: Vec<bool>,
    /// Inputs whose next block is not known yet, though they have not ended: nothing
    /// is written while there are any, as theirs could come first.
    unknown: usize,
    /// The next block of each input whose next block is known.
    heap: BinaryHeap<Reverse<(i64, usize, u64)>>,
}

impl Order {
    /// A task's result: its blocks queued.
    fn settle(&mut self, i: usize, r: Result<Vec<Finished>>, ended: bool) -> Result<()> {
        self.running[i] = false;
        let was_empty = self.queue[i].is_empty();
        self.queue[i].extend(r?);
        self.done[i] = ended;
        if was_empty {
            if let Some(b) = self.queue[i].front() {
                self.heap.push(Reverse(b.key));
                self.unknown -= 1;
            } else if ended {
                self.unknown -= 1;
            }
        }
        Ok(())
    }

    /// Whether input `i` is to be read on now (and is then marked running).
    fn read_on(&mut self, i: usize) -> bool {
        let go = !self.done[i] && !self.running[i] && self.queue[i].len() < AHEAD;
        self.running[i] |= go;
        go
    }
}

/// Runs the inputs' tasks on the thread pool and writes their finished blocks in their
/// order, telling `progress` the events written.
fn write_in_order<'a, W: Write>(
    feeds: &'a [Mutex<Feed>],
    sh: &'a Shared<'a>,
    w: &mut TraceWriter<W>,
    progress: &dyn Fn(u64),
) -> Result<()> {
    let n = feeds.len();
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Result<Vec<Finished>>, bool)>();
    let spawn = |s: &rayon::Scope<'a>, i: usize| {
        let tx = tx.clone();
        s.spawn(move |_| {
            let mut f = feeds[i].lock().unwrap_or_else(|e| e.into_inner());
            // A task that panics still answers, so that this thread stops waiting; the
            // scope then passes the panic on.
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.advance(sh))) {
                Ok(r) => {
                    let _ = tx.send((i, r, f.done));
                }
                Err(panic) => {
                    let stopped = Error::input(&f.file, "reading it stopped on an internal error");
                    let _ = tx.send((i, Err(stopped), true));
                    std::panic::resume_unwind(panic);
                }
            }
        });
    };
    // The scope ends when every task has: after an error too, as they hold the inputs.
    rayon::in_place_scope(|s| -> Result<()> {
        let mut o = Order {
            queue: (0..n).map(|_| VecDeque::new()).collect(),
            done: vec![false; n],
            running: vec![true; n],
            unknown: n,
            heap: BinaryHeap::new(),
        };
        for i in 0..n {
            spawn(s, i);
        }
        let mut events = 0u64;
        loop {
            // Wait while some input's next block could come first; take what else is
            // there, so that the tasks keep the inputs read ahead.
            while let Some((i, r, ended)) = receive(&rx, o.unknown > 0) {
                o.settle(i, r, ended)?;
                if o.read_on(i) {
                    spawn(s, i);
                }
            }
            let Some(Reverse((_, i, _))) = o.heap.pop() else { return Ok(()) };
            let b = o.queue[i].pop_front().expect("a queued block for each heap entry");
            events += b.block.count;
            w.write_block(&b.block).map_err(Error::Write)?;
            progress(events);
            match o.queue[i].front() {
                Some(next) => o.heap.push(Reverse(next.key)),
                None if !o.done[i] => o.unknown += 1,
                None => {}
            }
            if o.read_on(i) {
                spawn(s, i);
            }
        }
    })
}

/// The next message, waiting for one when `wait`. On a thread of the pool itself (a
/// caller inside a parallel job, or a pool of one thread that is this one), the tasks
/// waiting there run meanwhile: nobody else might run them.
fn receive<T>(rx: &std::sync::mpsc::Receiver<T>, wait: bool) -> Option<T> {
    use std::sync::mpsc::TryRecvError;
    loop {
        match rx.try_recv() {
            Ok(m) => return Some(m),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if !wait => return None,
            Err(TryRecvError::Empty) => {
                if rayon::current_thread_index().is_some()
                    && rayon::yield_now() == Some(rayon::Yield::Executed)
                {
                    continue;
                }
                return rx.recv().ok();
            }
        }
    }
}
