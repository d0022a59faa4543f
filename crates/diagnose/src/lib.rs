//! The automated search for why, where and when a program is slow, and what to fix first
//! (formats/diagnose.md).
//!
//! [`diagnose`] reads an ordered trace twice. The first pass folds it, with its wait
//! states and their root causes, into a [`cube`] of times by location, procedure, metric
//! and time bin. The [`search`] (Paradyn's W3 search, steered by Karavanic's
//! [`directives`]) tests hypotheses at foci over windows of the run against thresholds and
//! keeps the Search History Graph; the [`peers`] (Enterprise) annotate processes that
//! stray from their peers. The second pass builds the CPU-mode Program Activity Graph,
//! on which each cause found gets the gain the model machine predicts for removing it
//! ([`fixes`]), and the fixes are sorted by that gain.

pub mod cube;
pub mod directives;
pub mod fixes;
pub mod focus;
pub mod hypothesis;
pub mod peers;
pub mod render;
pub mod search;

use cube::{Cube, CubeFold};
pub use directives::Directives;
pub use focus::Resources;
use spoor_format::{binary::flags, ReadOptions, TraceReader};
use spoor_model::{Definitions, Event, Feedback};

pub use fixes::Fix;
pub use hypothesis::Hypothesis;
pub use peers::{Annotation, PeerOptions};
pub use search::{SearchOptions, Shg, State};

/// Why a diagnosis could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Format(#[from] spoor_format::Error),
    #[error(transparent)]
    Graph(#[from] spoor_graph::Error),
    /// The trace is not spoor-order's output.
    #[error("{0}")]
    NotOrdered(String),
    /// A directive names what does not exist (the message names the file and line).
    #[error("{0}")]
    Directives(String),
    /// The options do not fit the input.
    #[error("{0}")]
    Usage(String),
    /// What was spilled could not be written (the disk full).
    #[error(transparent)]
    Spill(std::io::Error),
}

/// What the diagnosis does besides its defaults.
#[derive(Clone, Debug)]
pub struct Options {
    pub search: SearchOptions,
    pub peers: PeerOptions,
    /// The most delays turned into fixes.
    pub top: usize,
    /// Where the wait states keep what grows with the trace: a spill file, or memory
    /// (`None`; [`spoor_waits::Waits::new_in`]).
    pub spill: Option<std::sync::Arc<spoor_format::spill::Arena>>,
    /// Where the whole graph goes where the fixes' lengths need it (a slow link,
    /// processors shared, spawns): a spill file, or memory (`None`).
    pub graph_spill: Option<std::sync::Arc<spoor_format::spill::Arena>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            search: SearchOptions::default(),
            peers: PeerOptions::default(),
            top: 10,
            spill: None,
            graph_spill: None,
        }
    }
}

/// Everything the diagnosis found.
pub struct Diagnosis {
    /// The trace's name as given.
    pub trace: String,
    pub defs: Definitions,
    pub events: u64,
    /// The run's span (ns): its earliest and latest activity event.
    pub span: (i64, i64),
    pub shg: Shg,
    /// The most precise true nodes at the whole run, largest value first.
    pub bottlenecks: Vec<usize>,
    /// Largest predicted gain first; upper bounds last.
    pub fixes: Vec<Fix>,
    pub annotations: Vec<Annotation>,
    /// The CPU-mode critical path of the run as recorded (ns).
    pub length_ns: i64,
    /// What the user should know about the answer (clock violations, unjudged waits).
    pub warnings: Vec<String>,
}

/// What the first pass over a trace gives: its final definitions, its event count, the
/// metric cube and the wait states.
pub type Folded = (Definitions, u64, Cube, spoor_waits::WaitStates);

/// Folds the ordered trace at `path` into the metric cube and its wait states.
pub fn fold(path: &str, feedback: &dyn Feedback) -> Result<Folded, Error> {
    fold_observed(path, feedback, &mut NoObserver, true, None)
}

struct NoObserver;

impl spoor_report::Observer for NoObserver {
    fn event(&mut self, _: &Definitions, _: &Event) {}
    fn events(&mut self, _: &Definitions, _: &[Event]) {}
}

/// [`fold`], with `extra` seeing every event of the same pass, and the waits' root causes
/// only when `causes`. The wait states fold on a thread of their own, beside the cube and
/// `extra` (they need nothing of each other; `spoor_report::fold_blocks`).
pub fn fold_observed(
    path: &str,
    feedback: &dyn Feedback,
    extra: &mut dyn spoor_report::Observer,
    causes: bool,
    spill: Option<std::sync::Arc<spoor_format::spill::Arena>>,
) -> Result<Folded, Error> {
    let reader = TraceReader::open(path, ReadOptions::default())?;
    let name = reader.name().to_owned();
    let not_ordered = || {
        Error::NotOrdered(format!(
            "{name}: a diagnosis needs matched messages in causal order; run the trace through spoor-order first"
        ))
    };
    let (defs, events, mut cube, waits) = match reader.header().map(|h| h.flags) {
        None => {
            let (defs, evs) = reader.read_all()?;
            let partnerless = |e: &Event| {
                matches!(e.kind, spoor_model::Kind::RecvEnd { .. } | spoor_model::Kind::IrecvComplete { .. })
                    && e.ann.partner.is_none()
            };
            if evs.iter().any(partnerless) {
                return Err(not_ordered());
            }
            let (mut cube, mut waits) = (CubeFold::new(&defs), spoor_waits::Waits::new_in(&defs, spill));
            for e in &evs {
                cube.event(&defs, e);
                waits.event(&defs, e);
                extra.event(&defs, e);
            }
            let events = evs.len() as u64;
            (defs, events, cube, waits)
        }
        Some(fl) => {
            if fl & (flags::MATCHED | flags::GLOBAL_ORDER) != flags::MATCHED | flags::GLOBAL_ORDER {
                return Err(not_ordered());
            }
            let defs0 = reader.defs().clone();
            let mut cube = CubeFold::new(&defs0);
            let total = reader.end().map(|e| e.events);
            let observers: &mut [&mut dyn spoor_report::Observer] = &mut [&mut cube, extra];
            let waits = spoor_waits::Waits::new_in(&defs0, spill);
            let folded = spoor_report::fold_blocks(reader, &defs0, observers, Some(waits), feedback, total)?;
            let waits = folded.waits.expect("asked for");
            // A later definitions chunk may name what the first did not.
            (folded.reader.defs().clone(), folded.events, cube, waits)
        }
    };
    let add_waits = |instances: &[spoor_waits::Instance], paths: &spoor_waits::CallPaths| {
        cube.add_waits(&defs, instances, paths)
    };
    let waits = waits.finish_beside(&defs, &name, causes, feedback, add_waits).map_err(|e| match e {
        spoor_waits::Error::Format(f) => Error::Format(f),
        spoor_waits::Error::NotOrdered(m) => Error::NotOrdered(m),
        spoor_waits::Error::Spill(e) => Error::Spill(e),
    })?;
    let cube = cube.finish();
    Ok((defs, events, cube, waits))
}

/// Diagnoses the ordered trace at `path` (a file: it is read twice). `directives` is the
/// text of a directives file and its name for errors.
pub fn diagnose(
    path: &str,
    directives: Option<(&str, &str)>,
    opts: &Options,
    feedback: &dyn Feedback,
) -> Result<Diagnosis, Error> {
    diagnose_named(path, path, directives, opts, feedback)
}

/// [`diagnose`], the trace named `name` in the findings and the commands they suggest
/// (standard input copied to a file: `-`).
pub fn diagnose_named(
    path: &str,
    name: &str,
    directives: Option<(&str, &str)>,
    opts: &Options,
    feedback: &dyn Feedback,
) -> Result<Diagnosis, Error> {
    if path == "-" {
        return Err(Error::Usage("the trace is read twice: give it a file, not standard input".into()));
    }
    let (folded, second) = std::thread::scope(|scope| {
        // The second pass's reader scans the file's chunks while the first one's does, on
        // the core that scan leaves idle.
        let second =
            scope.spawn(|| spoor_format::TraceReader::open(path, spoor_format::ReadOptions::default()));
        let folded = fold_observed(path, feedback, &mut NoObserver, true, opts.spill.clone());
        (folded, second.join().expect("opening a trace does not panic"))
    });
    let (defs, events, cube, waits) = folded?;
    let res = Resources::new(&defs, &cube);
    let dirs = match directives {
        Some((file, text)) => Directives::parse(file, text, &res).map_err(Error::Directives)?,
        None => Directives::default(),
    };
    peers::check_named(&res, &opts.peers).map_err(Error::Usage)?;
    let shg = search::search(&cube, &res, &dirs, &opts.search);
    let mut warnings = Vec::new();
    warnings.extend(waits.warnings());
    // What the fixes need of the wait states, so that they are gone before the PAG is built.
    let delays = fixes::delay_groups(&waits);
    let total_wait_ns: f64 = waits.instances.iter().map(|i| i.duration as f64).sum();
    drop(waits);
    let inputs = fixes::Inputs {
        trace: name,
        cube: &cube,
        res: &res,
        delays: &delays,
        total_wait_ns,
        shg: &shg,
        feedback,
    };
    // The fixes' paths are followed while the PAG is made, as its own path is; the graph
    // is kept only where a path must be swept over it (a slow link, a trace whose
    // lengths need the whole graph).
    let planned = fixes::plan(&inputs, opts.top);
    let reader = second?;
    let cpu = spoor_graph::Mode::Cpu;
    // Processes that shared processors have their arcs weighed again, and spawn arcs are
    // found, once the whole graph is read: a pass without the graph would find that it
    // needs one, and the trace would be read a third time.
    let made = if !spoor_graph::build::lengths_need_the_graph(&defs, cpu, cube.spawns) {
        spoor_graph::build::lengths_only(reader, cpu, &planned.paths(), feedback)?
    } else {
        None
    };
    let tried = match made {
        Some((made, messages)) => {
            fixes::predict(&inputs, planned, &messages, None, made.length(), made.lanes())
                .map(|fixes| (fixes, made.length()))
        }
        None => Err(planned),
    };
    let (fixes, length_ns) = match tried {
        Ok(done) => done,
        Err(planned) => {
            let lanes = planned.paths();
            let (pag, made) = spoor_graph::file::load_with_lanes_in(
                path,
                cpu,
                &lanes,
                feedback,
                opts.graph_spill.as_ref(),
            )?;
            let base = spoor_graph::cp::length_with(&pag, &spoor_graph::CpOptions::default(), made.as_ref());
            let messages = fixes::messages(&pag);
            let lanes = made.as_ref().and_then(|d| d.lanes());
            let fixes = fixes::predict(&inputs, planned, &messages, Some(&pag), base, lanes);
            (fixes.unwrap_or_else(|_| unreachable!("with the graph every path is swept")), base)
        }
    };
    let annotations = peers::annotate(&cube, &res, &opts.peers);
    if shg.tested >= opts.search.max_tests {
        warnings.push(format!(
            "the search stopped after {} tests (--max-tests): {} pairs were not tested",
            shg.tested,
            shg.count(State::NotTested)
        ));
    }
    let bottlenecks = search::bottlenecks(&shg);
    let span = cube.span;
    let elapsed = span.1 - span.0;
    if (length_ns as f64) < 0.8 * elapsed as f64 {
        warnings.push(format!(
            "the critical path in cpu mode ({}) is {:.0} % of the run's {}: the rest is time the model does not count (waiting for a processor, start-up, waits off the path); gains are shares of the path",
            fixes::ms(length_ns as f64),
            100.0 * length_ns as f64 / elapsed as f64,
            fixes::ms(elapsed as f64)
        ));
    }
    Ok(Diagnosis {
        trace: name.to_owned(),
        defs,
        events,
        span,
        shg,
        bottlenecks,
        fixes,
        annotations,
        length_ns,
        warnings,
    })
}
