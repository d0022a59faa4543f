//! spoor-report: what a performance engineer reads (formats/report.md).
//!
//! [`analyze`] folds a trace in one pass into an [`Analysis`]; its methods make the
//! tables (metric, profile, call graph, NPT, utilization, message transactions, time
//! histograms), [`svg`] draws the time histograms and the space-time diagram, [`html`]
//! puts everything in one self-contained page, `chrome` writes the Chrome trace-event
//! export during the pass, and `compare` sets several runs side by side. A path to
//! draw over the pictures (the critical path) comes in as an [`Overlay`].

mod analyze;
mod chrome;
mod compare;
pub mod grid;
pub mod html;
mod metric;
mod overlay;
pub mod render;
mod summary;
pub mod svg;
pub mod table;
mod tables;
mod waits;

pub use analyze::{
    fold_all, fold_blocks, Folded, LocStats, Message, Messages, MinAvgMax, Observer, ProcStats,
};
pub use metric::{Level, Metric};
pub use overlay::{Mark, Overlay, OverlayProfile, PathArc, Segment};
pub use render::{render, render_compare, Format, Selection};
pub use table::{Cell, Column, Table, Unit};
pub use tables::TableKind;

use analyze::{Counts, Pass, PassOptions};
use spoor_format::{binary::flags, ReadOptions, TraceReader};
use spoor_model::{Definitions, Feedback, Silent};
use std::io::Write;

/// Why a report could not be made.
#[derive(Debug)]
pub enum Error {
    /// The trace could not be read (names the file and where).
    Format(spoor_format::Error),
    /// A metric, level, table, focus or phase that does not exist (the message lists
    /// those that do), or a table the input cannot give (the message says what to run).
    Bad(String),
    Io(std::io::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Format(e) => write!(f, "{e}"),
            Error::Bad(m) => f.write_str(m),
            Error::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<spoor_format::Error> for Error {
    fn from(e: spoor_format::Error) -> Error {
        Error::Format(e)
    }
}
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io(e)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// What to analyze and how finely.
#[derive(Clone, Debug)]
pub struct Options {
    /// Restrict tables, histograms and the space-time diagram to these nodes
    /// (level, name); empty: every location. Procedure is not a focus level.
    pub focus: Vec<(Level, String)>,
    /// Count only what happens inside this phase (`phase_begin` .. `phase_end`).
    pub phase: Option<String>,
    /// Metrics of the time histograms.
    pub hist: Vec<Metric>,
    /// Most bins of a time histogram and most time columns of the space-time diagram.
    pub bins: usize,
    /// Most lines of the space-time diagram; more locations are grouped.
    pub rows: usize,
    /// Most message lines drawn in the space-time diagram (the longest transits).
    pub arrows: usize,
    /// Rows of the longest-transit message table and of the largest waits.
    pub top: usize,
    /// Find the wait states too (an ordered trace only; formats/waits.md).
    pub waits: bool,
    /// Where the wait states keep what grows with the trace: a spill file, or memory
    /// (`None`; [`spoor_waits::Waits::new_in`]).
    pub spill: Option<std::sync::Arc<spoor_format::spill::Arena>>,
    /// Compute the statistics: every table but the wait states, the histograms and the
    /// space-time diagram (off: the wait states alone, a good deal faster; a text trace
    /// always gets them).
    pub stats: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            focus: Vec::new(),
            phase: None,
            hist: vec![Metric::Busy, Metric::Wait],
            bins: 500,
            rows: 64,
            arrows: 500,
            top: 10,
            waits: false,
            spill: None,
            stats: true,
        }
    }
}

/// A trace folded into what the report shows.
pub struct Analysis {
    /// The input's name (path, or `<stdin>`).
    pub name: String,
    pub defs: Definitions,
    /// Events in one global time order (GLOBAL_ORDER, or a text trace whose times never
    /// go back): NPT is available.
    pub ordered: bool,
    /// Message events carry their partners (MATCHED, or a text trace where they all do):
    /// the message transaction summary is available.
    pub matched: bool,
    pub focus: Vec<bool>,
    pub opts: Options,
    /// The statistics were computed ([`Options::stats`]).
    stats: bool,
    counts: Counts,
    pass: Pass,
    /// The wait states, when asked for and the trace allows them; else why not.
    waits: std::result::Result<spoor_waits::WaitStates, String>,
}

/// The trace at `path` (`-`: standard input), read as a stream (files too: chunk by
/// chunk, not mapped, so memory stays a few blocks whatever the length), and its event
/// count when its end chunk says it (a file).
fn open(path: &str) -> Result<(TraceReader, Option<u64>)> {
    let opts = ReadOptions::default();
    if path == "-" {
        return Ok((TraceReader::from_reader("<stdin>", Box::new(std::io::stdin()), opts)?, None));
    }
    let file = std::fs::File::open(path).map_err(|e| spoor_format::Error::io(path, &e))?;
    let meta = file.metadata().map_err(|e| spoor_format::Error::io(path, &e))?;
    if meta.is_dir() {
        let e = std::io::Error::other("is a directory, expected a trace file");
        return Err(spoor_format::Error::io(path, &e).into());
    }
    let events = spoor_format::binary::End::of_file(&file).map(|e| e.events);
    Ok((TraceReader::from_reader(path, Box::new(file), opts)?, events))
}

/// The locations each focus names select, or an error listing the names of its level.
pub fn resolve_focus(defs: &Definitions, focus: &[(Level, String)]) -> Result<Vec<bool>> {
    let n = defs.locations.len();
    if focus.is_empty() {
        return Ok(vec![true; n]);
    }
    let mut sel = vec![false; n];
    for (level, name) in focus {
        let names: Vec<String> = match level {
            Level::Application => defs.apps.iter().map(|a| defs.strings.name(a.name).into_owned()).collect(),
            Level::Machine => defs.machines.iter().map(|m| defs.strings.name(m.name).into_owned()).collect(),
            Level::Process => defs.processes.iter().map(|p| defs.strings.name(p.name).into_owned()).collect(),
            Level::Thread => defs.locations.iter().map(|l| defs.strings.name(l.name).into_owned()).collect(),
            Level::Procedure => {
                return Err(Error::Bad(
                    "a focus selects locations: application, machine, process or thread, not procedure"
                        .into(),
                ))
            }
        };
        let ids: Vec<usize> = names.iter().enumerate().filter(|(_, s)| *s == name).map(|(i, _)| i).collect();
        if ids.is_empty() {
            let mut list: Vec<&str> = names.iter().map(String::as_str).collect();
            list.sort_unstable();
            list.dedup();
            let more = list.len().saturating_sub(20);
            list.truncate(20);
            let tail = if more > 0 { format!(", and {more} more") } else { String::new() };
            return Err(Error::Bad(format!(
                "no {} named `{name}`; the {}s are: {}{tail}",
                level.name(),
                level.name(),
                list.join(", ")
            )));
        }
        for (l, loc) in defs.locations.iter().enumerate() {
            let Some(p) = defs.processes.get(loc.process as usize) else { continue };
            let hit = match level {
                Level::Application => ids.contains(&(p.app as usize)),
                Level::Machine => ids.contains(&(p.machine as usize)),
                Level::Process => ids.contains(&(loc.process as usize)),
                Level::Thread => ids.contains(&l),
                Level::Procedure => false,
            };
            sel[l] |= hit;
        }
    }
    Ok(sel)
}

/// Reads the trace at `path` once and folds it, telling `feedback` how many events are
/// read. `chrome`, when given, receives the Chrome trace-event export as the events go
/// by, with `overlay` added as its own track.
pub fn analyze(
    path: &str,
    opts: &Options,
    chrome: Option<Box<dyn Write>>,
    overlay: Option<&Overlay>,
    feedback: &dyn Feedback,
) -> Result<Analysis> {
    let (reader, events) = open(path)?;
    analyze_inner(reader, opts, chrome, overlay, None, (feedback, events))
}

/// [`analyze`] over a trace held in memory (any form).
pub fn analyze_bytes(name: &str, bytes: Vec<u8>, opts: &Options) -> Result<Analysis> {
    let r = TraceReader::from_reader(name, Box::new(std::io::Cursor::new(bytes)), ReadOptions::default())?;
    analyze_reader(r, opts, None, None)
}

fn pass_options(defs: &Definitions, opts: &Options, focus: Vec<bool>) -> PassOptions {
    let phase = opts.phase.as_deref().and_then(|p| defs.strings.lookup(p));
    PassOptions {
        focus,
        phase,
        phase_missing: opts.phase.is_some() && phase.is_none(),
        hist: opts.hist.clone(),
        bins: opts.bins,
        rows: opts.rows,
        keep_messages: opts.top.max(opts.arrows),
    }
}

pub fn analyze_reader(
    reader: TraceReader,
    opts: &Options,
    chrome: Option<Box<dyn Write>>,
    overlay: Option<&Overlay>,
) -> Result<Analysis> {
    analyze_inner(reader, opts, chrome, overlay, None, (&Silent, None))
}

/// [`analyze`] with one more fold over the same pass: `extra` sees every event, so an
/// analysis built on the report's (spoor-exp's) reads the trace once.
pub fn analyze_observed(path: &str, opts: &Options, extra: &mut dyn Observer) -> Result<Analysis> {
    analyze_inner(open(path)?.0, opts, None, None, Some(extra), (&Silent, None))
}

fn analyze_inner(
    reader: TraceReader,
    opts: &Options,
    chrome: Option<Box<dyn Write>>,
    overlay: Option<&Overlay>,
    extra: Option<&mut dyn Observer>,
    (feedback, events): (&dyn Feedback, Option<u64>),
) -> Result<Analysis> {
    let name = reader.name().to_owned();
    let flags = reader.header().map(|h| h.flags);
    // The text form: its definitions are complete only at its end; it is small.
    let (text, defs0) = match flags {
        None => {
            let (defs, events) = reader.read_all()?;
            (Ok((defs.clone(), events)), defs)
        }
        Some(_) => {
            let defs = reader.defs().clone();
            (Err(reader), defs)
        }
    };
    let focus = resolve_focus(&defs0, &opts.focus)?;
    // A text trace's order and partners are found by the statistics.
    let stats = opts.stats || text.is_ok();
    let mut counts = Counts::default();
    let mut pass = Pass::new(&defs0, pass_options(&defs0, opts, focus));
    let mut export = chrome.map(|w| chrome::ChromeExport::new(w, &defs0));
    let mut observers: Vec<&mut dyn Observer> = vec![&mut counts];
    if stats {
        observers.push(&mut pass);
    }
    if let Some(x) = &mut export {
        observers.push(x);
    }
    if let Some(x) = extra {
        observers.push(x);
    }
    let waits = opts.waits.then(|| spoor_waits::Waits::new_in(&defs0, opts.spill.clone()));
    let (defs, waits) = match text {
        Ok((defs, events)) => {
            let mut waits = waits;
            if let Some(w) = &mut waits {
                observers.push(w);
            }
            analyze::fold_all(&mut observers, &defs0, &events);
            drop(observers);
            (defs, waits)
        }
        Err(reader) => {
            let total = reader.end().map(|e| e.events).or(events);
            let folded = analyze::fold_blocks(reader, &defs0, &mut observers, waits, feedback, total)?;
            // A later definitions chunk may have named what the first did not.
            (folded.reader.defs().clone(), folded.waits)
        }
    };
    pass.finish_pass();
    let (ordered, matched) = match flags {
        None => (counts.backwards == 0, pass.missing_partners == 0),
        Some(fl) => (fl & flags::GLOBAL_ORDER != 0, fl & flags::MATCHED != 0),
    };
    let waits = match waits {
        None => Err("wait states were not asked for".to_owned()),
        Some(_) if !(ordered && matched) => {
            Err("wait states need matched messages in causal order; run the trace through spoor-order first"
                .to_owned())
        }
        Some(w) => match w.finish_observed(&defs, &name, true, feedback) {
            // A spill that failed leaves no report, not one without its wait states.
            Err(spoor_waits::Error::Spill(e)) => return Err(Error::Io(e)),
            r => r.map_err(|e| e.to_string()),
        },
    };
    if let Some(x) = export {
        let mut c = x.finish_pass(&defs);
        if let Ok(w) = &waits {
            c.waits(&defs, w);
        }
        if let Some(o) = overlay {
            c.overlay(&defs, o);
        }
        c.finish()?;
    }
    if let Some(ph) = &opts.phase {
        let known = defs.strings.lookup(ph).is_some_and(|id| pass.phases.contains(&id));
        if !known {
            let names: Vec<String> =
                pass.phases.iter().map(|&id| defs.strings.name(id).into_owned()).collect();
            let list = if names.is_empty() { "the trace has none".to_owned() } else { names.join(", ") };
            return Err(Error::Bad(format!("no phase named `{ph}`; the phases are: {list}")));
        }
    }
    let focus = resolve_focus(&defs, &opts.focus)?;
    Ok(Analysis { name, defs, ordered, matched, focus, opts: opts.clone(), stats, counts, pass, waits })
}

impl Analysis {
    /// Events read.
    /// Whether the statistics were computed ([`Options::stats`]).
    pub fn stats(&self) -> bool {
        self.stats
    }

    pub fn events(&self) -> u64 {
        self.counts.events
    }

    /// Per-location totals, indexed by location id.
    pub fn locations(&self) -> &[LocStats] {
        &self.pass.locs
    }

    /// The wait states (formats/waits.md), or why there are none.
    pub fn wait_states(&self) -> std::result::Result<&spoor_waits::WaitStates, &str> {
        self.waits.as_ref().map_err(|e| e.as_str())
    }

    /// Per-procedure totals of every location (one entry per procedure and location).
    pub fn procedure_stats(&self) -> &[ProcStats] {
        &self.pass.procs
    }

    pub fn messages(&self) -> &Messages {
        &self.pass.messages
    }

    /// The first and last moments of the run (every location), if it has events.
    pub fn span(&self) -> Option<(i64, i64)> {
        self.counts.span
    }

    /// Matched messages received before they were sent: their transit times (negative)
    /// and the waits they explain are wrong (formats/report.md).
    pub fn clock_violations(&self) -> spoor_model::ClockViolations {
        let messages = match (&self.waits, self.stats) {
            (Ok(w), false) => w.late_messages,
            _ => self.pass.late_messages,
        };
        spoor_model::ClockViolations { messages, ..Default::default() }
    }

    /// Lines about what the report could not count or show (without the statistics,
    /// only what concerns the wait states).
    pub fn notes(&self) -> Vec<String> {
        let p = &self.pass;
        let mut n: Vec<String> = self.clock_violations().warning().into_iter().collect();
        if !self.stats {
            return n;
        }
        if !self.ordered {
            n.push(
                "no NPT profile: it needs the events in one global time order; run spoor-order first".into(),
            );
        } else if self.counts.backwards > 0 {
            n.push(format!(
                "{} events earlier than one before them (clock-condition violations); NPT takes them at the latest time seen",
                self.counts.backwards
            ));
        }
        if !self.matched {
            n.push("no message transactions: they need matched messages; run spoor-order first".into());
        } else if p.messages.unmatched > 0 {
            n.push(format!("{} message events without a match", p.messages.unmatched));
        }
        if p.stray_leaves > 0 {
            n.push(format!("{} leave events matched no open procedure and were ignored", p.stray_leaves));
        }
        if p.implicit_leaves > 0 {
            n.push(format!(
                "{} procedure activations were closed without their leave (at an outer leave or at the location's last event)",
                p.implicit_leaves
            ));
        }
        n
    }
}
