//! Wait states: where the processes of a run waited, for what and how long, after
//! Scalasca's patterns (formats/waits.md defines each one).
//!
//! [`analyze`] folds an ordered trace (spoor-order's output) into [`WaitStates`]: every
//! instance with its location, procedure, call path, start and duration, and the event
//! that ended the wait (its cause), and totals by pattern × procedure × process. The
//! fold (`detect::Detector`) takes one event at a time and keeps only what is in
//! flight (sends not yet received, collective instances not yet complete), so it can be
//! one observer of any pass over a trace.

mod causes;
mod detect;
mod pattern;
mod runs;

pub use causes::{caused_by_delay, Delay, RootCauses, WaitCause};

pub use pattern::Pattern;

use rustc_hash::FxHashMap;
use serde::Serialize;
use spoor_format::spill::{Arena, SpillVec};
use spoor_format::{binary::flags, TraceReader};
use spoor_model::{CommId, Definitions, Event, EventRef, LocId, ProcId, StrId};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The procedure of time spent outside every procedure.
pub const OUTSIDE: StrId = StrId::MAX;

/// One wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Instance {
    pub pattern: Pattern,
    /// The location that waited.
    pub loc: LocId,
    /// The innermost procedure it waited in ([`OUTSIDE`] if none).
    pub proc: StrId,
    /// Its call path: an index into [`WaitStates::callpaths`].
    pub callpath: u32,
    /// When the wait began (ns, the trace's clock) and how long it lasted.
    pub start: i64,
    pub duration: i64,
    /// The event the location waited for: the late send, the late receive's posting, the
    /// last member's entry, the root's entry, the lock's release, the first exit.
    pub cause: Option<EventRef>,
    /// When the cause happened (ns, on its location; 0 without a cause).
    pub cause_time: i64,
    /// The communicator it waited on, with the message's tag for point-to-point waits
    /// (`None` for locks, MPI_Init and MPI_Finalize).
    pub object: Option<SyncObject>,
}

/// A synchronization object: a communicator, or one tag of messages on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct SyncObject {
    pub comm: CommId,
    pub tag: Option<u32>,
}

/// Call paths as a tree: each path is its last procedure under its parent path; path 0
/// is the empty one (outside every procedure).
#[derive(Clone, Debug)]
pub struct CallPaths {
    /// (parent, procedure) of each path; path 0's entry is unused.
    nodes: Vec<(u32, StrId)>,
    index: FxHashMap<(u32, StrId), u32>,
}

impl Default for CallPaths {
    fn default() -> Self {
        CallPaths { nodes: vec![(0, OUTSIDE)], index: FxHashMap::default() }
    }
}

impl CallPaths {
    /// The path of `proc` called under `parent`.
    pub fn child(&mut self, parent: u32, proc: StrId) -> u32 {
        let next = self.nodes.len() as u32;
        let id = *self.index.entry((parent, proc)).or_insert(next);
        if id == next {
            self.nodes.push((parent, proc));
        }
        id
    }

    /// The innermost procedure of path `id` ([`OUTSIDE`] for the empty path).
    pub fn proc(&self, id: u32) -> StrId {
        if id == 0 {
            OUTSIDE
        } else {
            self.nodes.get(id as usize).map_or(OUTSIDE, |n| n.1)
        }
    }

    /// The procedures of call path `id`, outermost first.
    pub fn get(&self, id: u32) -> Vec<StrId> {
        let mut v = Vec::new();
        let mut at = id;
        while at != 0 && (at as usize) < self.nodes.len() {
            v.push(self.nodes[at as usize].1);
            at = self.nodes[at as usize].0;
        }
        v.reverse();
        v
    }

    /// Call path `id` as `main > solve > MPI_Recv`.
    pub fn render(&self, defs: &Definitions, id: u32) -> String {
        let names: Vec<String> = self.get(id).iter().map(|&p| proc_name(defs, p)).collect();
        if names.is_empty() {
            proc_name(defs, OUTSIDE)
        } else {
            names.join(" > ")
        }
    }
}

/// A procedure's name, `(outside any procedure)` for [`OUTSIDE`].
pub fn proc_name(defs: &Definitions, p: StrId) -> String {
    if p == OUTSIDE {
        spoor_model::OUTSIDE_ANY_PROCEDURE.into()
    } else {
        defs.strings.name(p).into_owned()
    }
}

/// The waits of one pattern, procedure and process, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Total {
    pub count: u64,
    pub time_ns: i64,
}

/// Everything the analysis found.
#[derive(Clone, Debug, Default)]
pub struct WaitStates {
    /// Every wait, by location, then start, then pattern (in the spill file where the
    /// analysis was given one, [`Waits::new_in`]).
    pub instances: SpillVec<Instance>,
    pub callpaths: CallPaths,
    /// Totals by (pattern, procedure, process).
    pub totals: BTreeMap<(Pattern, StrId, ProcId), Total>,
    /// Receive completions without a partner (they could not be judged).
    pub unmatched: u64,
    /// Receive completions earlier than their send (clock-condition violations: their
    /// waits are wrong).
    pub late_messages: u64,
    /// Blocking sends and collective instances whose partners never came.
    pub open_sends: usize,
    pub open_collectives: usize,
    /// What caused the waits (formats/waits.md, "Root causes"); empty when not asked for
    /// ([`Waits::finish_with`]).
    pub causes: RootCauses,
}

impl WaitStates {
    /// The total of one pattern over every procedure and process.
    pub fn pattern_total(&self, p: Pattern) -> Total {
        self.totals.range((p, 0, 0)..=(p, StrId::MAX, ProcId::MAX)).fold(Total::default(), |a, (_, t)| {
            Total { count: a.count + t.count, time_ns: a.time_ns + t.time_ns }
        })
    }

    /// What the user must know before trusting the waits: receives that ended before their
    /// sends began (clock-condition violations), then what could not be judged.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.late_messages > 0 {
            w.push(format!(
                "{} receives end before their sends began (clock-condition violations): wait times are wrong; align the clocks with spoor-align",
                self.late_messages
            ));
        }
        w.extend(self.notes());
        w
    }

    /// Lines about what could not be judged.
    pub fn notes(&self) -> Vec<String> {
        let mut n = Vec::new();
        if self.unmatched > 0 {
            n.push(format!(
                "{} receive completions have no matched send and were not judged",
                self.unmatched
            ));
        }
        if self.open_sends > 0 {
            n.push(format!("{} blocking sends were never received and were not judged", self.open_sends));
        }
        if self.open_collectives > 0 {
            n.push(format!(
                "{} collective instances miss members and were not judged",
                self.open_collectives
            ));
        }
        n
    }
}

/// Why wait states could not be computed.
#[derive(Debug)]
pub enum Error {
    Format(spoor_format::Error),
    /// The trace is not spoor-order's output (or not in causal order).
    NotOrdered(String),
    /// What was spilled could not be written (the disk full).
    Spill(std::io::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Format(e) => e.fmt(f),
            Error::NotOrdered(m) => f.write_str(m),
            Error::Spill(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Format(e) => Some(e),
            Error::NotOrdered(_) => None,
            Error::Spill(e) => Some(e),
        }
    }
}

impl From<spoor_format::Error> for Error {
    fn from(e: spoor_format::Error) -> Self {
        Error::Format(e)
    }
}

/// The wait-state fold: one event at a time, then [`Waits::finish`]. Events of each
/// location come in that location's order, and every receive completion after its send
/// (spoor-order's causal order).
pub struct Waits {
    detect: detect::Detector,
    /// Waits a thread charges before they are applied ([`causes::STRETCH_PER_THREAD`]).
    stretch: usize,
}

impl Waits {
    pub fn new(defs: &Definitions) -> Waits {
        Waits::new_in(defs, None)
    }

    /// The fold keeping what grows with the trace (its timelines, synchronization points
    /// and waits, and the root causes' arrays) in `arena`'s file rather than in memory
    /// when given one: the same results, with the process's memory bounded by what is in
    /// flight.
    pub fn new_in(defs: &Definitions, arena: Option<Arc<Arena>>) -> Waits {
        Waits { detect: detect::Detector::new(defs, arena), stretch: causes::STRETCH_PER_THREAD }
    }

    /// The root causes charged `n` waits a thread at a time (at least one): the result is
    /// the same whatever `n`, which tests check with stretches far smaller than a
    /// trace's waits.
    #[doc(hidden)]
    pub fn with_stretch(mut self, n: usize) -> Waits {
        self.stretch = n.max(1);
        self
    }

    pub fn event(&mut self, defs: &Definitions, e: &Event) {
        self.detect.event(defs, e);
    }

    /// Tells the fold how many events the trace holds (its end chunk's count), before
    /// the first: it makes room for what they will leave.
    pub fn expect_events(&mut self, events: u64) {
        self.detect.expect_events(events);
    }

    /// [`Waits::event`] of each of `events` in turn.
    pub fn events(&mut self, defs: &Definitions, events: &[Event]) {
        spoor_format::mem::each_prefetched(events, |e| self.detect.event(defs, e));
    }

    /// The result; `defs` are the trace's final definitions (they name the processes).
    pub fn finish(self, defs: &Definitions, trace: &str) -> Result<WaitStates, Error> {
        self.finish_with(defs, trace, true)
    }

    /// [`Waits::finish`], with the root causes only when `causes` (they take about as
    /// long as the detection: what needs only the waits' totals goes without them).
    pub fn finish_with(self, defs: &Definitions, trace: &str, causes: bool) -> Result<WaitStates, Error> {
        self.finish_observed(defs, trace, causes, &spoor_model::Silent)
    }

    /// [`Waits::finish_with`], telling `feedback` how many waits the root causes have
    /// charged (as `root causes: waits`).
    pub fn finish_observed(
        self,
        defs: &Definitions,
        trace: &str,
        causes: bool,
        feedback: &dyn spoor_model::Feedback,
    ) -> Result<WaitStates, Error> {
        self.finish_beside(defs, trace, causes, feedback, |_, _| {})
    }

    /// [`Waits::finish_observed`], with `beside` given every wait (in the order of
    /// `WaitStates::instances`) and their call paths on a thread of its own while the root
    /// causes are found: a fold over the waits then fills the gaps those leave on the
    /// cores (their sorting), rather than following them.
    pub fn finish_beside(
        mut self,
        defs: &Definitions,
        trace: &str,
        causes: bool,
        feedback: &dyn spoor_model::Feedback,
        beside: impl FnOnce(&[Instance], &CallPaths) + Send,
    ) -> Result<WaitStates, Error> {
        let d = &mut self.detect;
        if let Some((recv, send)) = d.out_of_order {
            return Err(Error::NotOrdered(format!(
                "{trace}: the receive {}:{} comes before its send {}:{}: the trace is not in causal order; run it through spoor-order first",
                recv.loc, recv.index, send.loc, send.index
            )));
        }
        d.finish(defs);
        let (open_sends, open_collectives) = d.open();
        let instances = d.take_instances();
        let spill_error = |d: &detect::Detector| d.arena.as_ref().and_then(|a| a.error()).map(Error::Spill);
        if let Some(e) = spill_error(d) {
            return Err(e);
        }
        // Each location's waits, let go on the fold's thread as they were moved: their
        // pages back before the root causes take fresh ones.
        spoor_format::mem::return_freed_memory();
        let callpaths = std::mem::take(&mut d.callpaths);
        let (causes, totals) = std::thread::scope(|scope| {
            let aside = scope.spawn(|| {
                beside(&instances, &callpaths);
                // Few keys, many instances: summed in a hash map, ordered once.
                let mut totals: FxHashMap<(Pattern, StrId, ProcId), Total> = FxHashMap::default();
                for i in &instances {
                    let process = defs.locations.get(i.loc as usize).map_or(ProcId::MAX, |l| l.process);
                    let t = totals.entry((i.pattern, i.proc, process)).or_default();
                    t.count += 1;
                    t.time_ns += i.duration;
                }
                totals
            });
            let causes = if causes {
                causes::root_causes(d, &instances, self.stretch, feedback)
            } else {
                RootCauses::default()
            };
            (causes, aside.join().expect("the fold beside the root causes does not panic"))
        });
        if let Some(e) = spill_error(d) {
            return Err(e);
        }
        Ok(WaitStates {
            instances,
            callpaths,
            totals: totals.into_iter().collect(),
            unmatched: d.unmatched,
            late_messages: d.late_messages,
            open_sends,
            open_collectives,
            causes,
        })
    }
}

/// The wait states of an ordered trace (spoor-order's output: flags MATCHED and
/// GLOBAL_ORDER; a text-form trace must carry its partners). Returns the final
/// definitions with them.
pub fn analyze(mut reader: TraceReader) -> Result<(Definitions, WaitStates), Error> {
    let name = reader.name().to_owned();
    let not_ordered = || {
        Error::NotOrdered(format!(
            "{name}: wait states need matched messages in causal order; run the trace through spoor-order first"
        ))
    };
    let Some(h) = reader.header() else {
        // The text form: its definitions are complete only at its end; it is small.
        let (defs, events) = reader.read_all()?;
        if events.iter().any(|e| is_message_completion(e) && e.ann.partner.is_none()) {
            return Err(not_ordered());
        }
        let mut waits = Waits::new(&defs);
        for e in &events {
            waits.event(&defs, e);
        }
        let w = waits.finish(&defs, &name)?;
        return Ok((defs, w));
    };
    let need = flags::MATCHED | flags::GLOBAL_ORDER;
    if h.flags & need != need {
        return Err(not_ordered());
    }
    let defs0 = reader.defs().clone();
    let mut waits = Waits::new(&defs0);
    while let Some(b) = reader.next_block()? {
        waits.events(&defs0, &b.events);
    }
    // A later definitions chunk may name what the first did not.
    let defs = reader.defs().clone();
    let w = waits.finish(&defs, &name)?;
    Ok((defs, w))
}

fn is_message_completion(e: &Event) -> bool {
    matches!(e.kind, spoor_model::Kind::RecvEnd { .. } | spoor_model::Kind::IrecvComplete { .. })
}
