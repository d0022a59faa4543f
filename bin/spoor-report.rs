//! spoor-report: metric and profile tables, the gprof call graph, NPT, utilization,
//! message transactions, time histograms, the space-time diagram, an HTML report, a
//! Chrome/Perfetto export, and several runs side by side (formats/report.md).

use anyhow::anyhow;
use clap::Parser;
use spoor_cli::Output;
use spoor_report::{
    Format, Level, Mark, Metric, Options, Overlay, OverlayProfile, PathArc, Segment, Selection, TableKind,
};
use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

#[path = "args/report.rs"]
mod args;
use args::*;

/// The output, shared with the Chrome export while the trace is read.
struct Shared(Rc<RefCell<Output>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

/// The critical path of the trace at `input` as a drawing for the report.
fn critical_path_overlay(input: &str, mode: CpMode) -> anyhow::Result<Overlay> {
    let mode = match mode {
        CpMode::Cpu => spoor_graph::Mode::Cpu,
        CpMode::Wall => spoor_graph::Mode::Wall,
    };
    let (pag, made) =
        spoor_graph::streamed::path_graph(input, mode, &[], spoor_cli::graph_budget(), &spoor_model::Silent)?;
    if let Some(w) = pag.clock_violations().warning() {
        eprintln!("spoor-report: warning: {w}");
    }
    let path = spoor_graph::cp::critical_path_with(&pag, &spoor_graph::CpOptions::default(), made.as_ref());
    let (segments, hops) = spoor_graph::cp::drawing(&pag, &path);
    let profiles = [spoor_graph::profile::Level::Procedure, spoor_graph::profile::Level::Process]
        .into_iter()
        .map(|level| OverlayProfile {
            level: level.name().into(),
            rows: spoor_graph::profile::profile(&pag, &path, level)
                .into_iter()
                .map(|r| (r.name, r.time_ns))
                .collect(),
        })
        .collect();
    Ok(Overlay {
        length: path.length,
        profiles,
        name: format!("critical path ({} mode)", mode.name()),
        segments: segments.into_iter().map(|(loc, start, end)| Segment { loc, start, end }).collect(),
        arcs: hops
            .into_iter()
            .map(|(from_loc, from_time, to_loc, to_time)| PathArc { from_loc, from_time, to_loc, to_time })
            .collect(),
        marks: Vec::new(),
    })
}

/// The processes straying from their peers (spoor-diagnose's peer annotations) as marks
/// on each of their locations.
fn peer_marks(input: &str) -> anyhow::Result<Vec<Mark>> {
    let (defs, _, cube, _) = spoor_diagnose::fold(input, &spoor_model::Silent).map_err(|e| match e {
        spoor_diagnose::Error::Format(f) => anyhow::Error::new(f),
        e => anyhow!(e),
    })?;
    let res = spoor_diagnose::Resources::new(&defs, &cube);
    let mut marks = Vec::new();
    for a in spoor_diagnose::peers::annotate(&cube, &res, &spoor_diagnose::PeerOptions::default()) {
        let label = format!("{} ({})", a.describe(), a.group);
        for &loc in res.locations_of(a.process) {
            marks.push(Mark { loc, start: a.start, end: a.end, label: label.clone() });
        }
    }
    Ok(marks)
}

/// Messages received before they were sent make transit and wait times wrong: said
/// whatever else is asked.
fn warn_clocks(a: &spoor_report::Analysis) {
    if let Some(w) = a.clock_violations().warning() {
        eprintln!("spoor-report: warning: {}: {w}", a.name);
    }
}

fn main() {
    // Its phases free large tables that the next one allocates again.
    spoor_format::mem::keep_freed_memory();
    let args = Args::parse();
    spoor_cli::run_stage("spoor-report", args.verbose, move || {
        let level = args.level.as_deref().map(Level::parse).transpose().map_err(|e| anyhow!(e))?;
        let hist = if args.hist.is_empty() {
            vec![Metric::Busy, Metric::Wait]
        } else {
            args.hist
                .iter()
                .map(|h| Metric::parse_histogram(h))
                .collect::<Result<_, _>>()
                .map_err(|e| anyhow!(e))?
        };
        let mut focus = Vec::new();
        for f in &args.focus {
            let (l, n) = f.split_once('=').ok_or_else(|| anyhow!("--focus takes LEVEL=NAME, not `{f}`"))?;
            focus.push((Level::parse(l).map_err(|e| anyhow!(e))?, n.to_owned()));
        }
        let tables = args
            .tables
            .iter()
            .map(|t| TableKind::parse(t))
            .collect::<Result<_, _>>()
            .map_err(|e| anyhow!(e))?;
        let opts = Options {
            focus,
            phase: args.phase.clone(),
            hist,
            bins: args.bins.max(2),
            rows: args.rows.max(1),
            arrows: args.arrows,
            top: args.top,
            // Wait states and their root causes take memory that grows with the trace:
            // only for the tables and pictures that show them.
            waits: args.tables.iter().any(|t| t == "waits")
                || matches!(args.format, Form::Svg | Form::Html | Form::Chrome),
            // Past --memory, in a spill file: set below, once the input is known.
            spill: None,
            // The wait-state tables alone need none of the statistics.
            stats: !(matches!(args.format, Form::Text | Form::Csv | Form::Json)
                && !args.tables.is_empty()
                && args.tables.iter().all(|t| t == "waits")
                && args.compare.is_empty()),
        };
        let mut sel = Selection { tables, level, metric: args.metric.clone(), no_path: None };
        // What reads the trace twice (a critical path or peer marks beside the report)
        // reads standard input, or a pipe, from a copy in the spill directory.
        let twice = args.critical_path.is_some()
            || args.annotate
            || (matches!(args.format, Form::Html) && args.compare.is_empty());
        let spill = spoor_cli::SpillDir::new("spoor-report", args.tmpdir.as_deref());
        let spooled = if twice { spoor_cli::spool_if_stream(&args.input, &spill)? } else { None };
        let input = spoor_cli::read_from(&args.input, spooled.as_ref());
        let spill_waits = match opts.waits {
            true => spoor_cli::spill::wait_state_arena(&input, args.memory, &spill)?,
            false => None,
        };
        let opts = Options { spill: spill_waits, ..opts };
        // Named as what it is a copy of.
        let named = |mut a: spoor_report::Analysis| {
            if let Some(i) = &spooled {
                a.name = i.name().to_owned();
            }
            a
        };
        let as_given = |e| spoor_cli::spill::named_as_given(spooled.as_ref(), e);
        let lib = |e: spoor_report::Error| {
            as_given(match e {
                spoor_report::Error::Format(f) => anyhow::Error::new(f),
                e => anyhow!(e),
            })
        };
        let mut overlay =
            args.critical_path.map(|m| critical_path_overlay(&input, m)).transpose().map_err(as_given)?;
        // The HTML summary opens with the wall-mode path when the input allows one.
        if overlay.is_none() && matches!(args.format, Form::Html) && args.compare.is_empty() {
            match critical_path_overlay(&input, CpMode::Wall) {
                Ok(o) => overlay = Some(o),
                Err(e) => sel.no_path = Some(format!("{:#}", as_given(e))),
            }
        }
        if args.annotate {
            let marks = peer_marks(&input).map_err(as_given)?;
            if marks.is_empty() {
                eprintln!("spoor-report: no process strays from its peers: nothing to mark");
            }
            overlay.get_or_insert_with(Overlay::default).marks = marks;
        }
        let mut out = Output::create(args.output.as_deref())?;
        // Progress only: on a terminal, and never in the report itself.
        let console = spoor_cli::Console::new("spoor-report", false);
        let format = match args.format {
            Form::Chrome => {
                if !args.compare.is_empty() {
                    return Err(anyhow!(
                        "--format chrome exports one run; --compare is for tables and histograms"
                    ));
                }
                // The export streams into the output as the trace is read.
                let shared = Rc::new(RefCell::new(out));
                let a = spoor_report::analyze(
                    &input,
                    &opts,
                    Some(Box::new(Shared(shared.clone()))),
                    overlay.as_ref(),
                    &console,
                )
                .map_err(lib)?;
                warn_clocks(&a);
                let out = Rc::try_unwrap(shared).map_err(|_| anyhow!("the export is still being written"))?;
                return out.into_inner().commit();
            }
            Form::Text => Format::Text,
            Form::Csv => Format::Csv,
            Form::Json => Format::Json,
            Form::Svg => Format::Svg,
            Form::Html => Format::Html,
        };
        if args.compare.is_empty() {
            let a =
                named(spoor_report::analyze(&input, &opts, None, overlay.as_ref(), &console).map_err(lib)?);
            warn_clocks(&a);
            spoor_report::render(&a, &sel, format, overlay.as_ref(), &mut out).map_err(lib)?;
        } else {
            let mut runs =
                vec![named(spoor_report::analyze(&input, &opts, None, None, &console).map_err(lib)?)];
            for r in &args.compare {
                runs.push(spoor_report::analyze(r, &opts, None, None, &console).map_err(lib)?);
            }
            runs.iter().for_each(warn_clocks);
            spoor_report::render_compare(&runs, &sel, format, &mut out).map_err(lib)?;
        }
        out.commit()
    })
}
