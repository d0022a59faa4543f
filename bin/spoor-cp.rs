//! spoor-cp: critical paths of a trace or PAG, with profiles, zeroing and near-critical
//! paths (the spoor-graph crate; formats/pag.md).

use anyhow::anyhow;
use clap::Parser;
use spoor_cli::{ordering, usage, Console, Output, SpillDir};
use spoor_format::binary::flags;
use spoor_format::brief::Brief;
use spoor_graph::cp::Distances;
use spoor_graph::profile::Level;
use spoor_graph::show::{self, CpReport};
use spoor_graph::streamed::GRAPH_BYTES_PER_EVENT;
use spoor_graph::{build, cp, whatif, CpOptions, Pag, Scope};
use spoor_order::order::{self, BoxError, Sink};

#[path = "args/cp.rs"]
mod args;
use args::*;

fn levels(spec: &str) -> anyhow::Result<Vec<Level>> {
    match spec {
        "none" => Ok(Vec::new()),
        "all" => Ok(Level::ALL.to_vec()),
        _ => spec
            .split(',')
            .map(|s| {
                Level::from_name(s.trim()).ok_or_else(|| {
                    let names: Vec<&str> = Level::ALL.iter().map(|l| l.name()).collect();
                    anyhow!("no profile level `{s}`; there are: {}, all, none", names.join(", "))
                })
            })
            .collect(),
    }
}

/// A trace ordered first: its graph, built as it was ordered, or the ordered trace in the
/// spill directory.
enum Ordered {
    Built(Box<(Pag, Option<Distances>)>),
    Copied(spoor_order::Input),
}

/// Orders (and with --align, aligns) the input first, as spoor-order would, saying what
/// that found on standard error. With `fed` (the memory budget), where the graph and the
/// ordering's own state fit in it, the ordered events go straight into the graph.
fn order_first(
    args: &Args,
    spill: &SpillDir,
    mode: spoor_graph::Mode,
    fed: Option<u64>,
    console: &Console,
) -> anyhow::Result<Ordered> {
    let input = ordering::open_traces("spoor-cp", std::slice::from_ref(&args.input), spill, args.quiet)?;
    let prepared = ordering::prepare(&input, args.align, spill, console, args.quiet)?;
    let need = prepared.events().saturating_mul(GRAPH_BYTES_PER_EVENT + order::BYTES_PER_EVENT);
    let (ordered, summary) = match fed.is_some_and(|budget| need <= budget) {
        true => {
            let defs = prepared.defs().clone();
            let aligned = prepared.flags() & flags::ALIGNED != 0;
            let events = Some(prepared.events());
            let (pag, made, summary) = build::build_fed(&args.input, &defs, aligned, events, mode, |add| {
                let mut hand_on = |briefs: &[Brief]| add(briefs).map_err(BoxError::from);
                prepared.order(Sink::briefs(&mut hand_on), console).map_err(anyhow::Error::from)
            })?;
            (Ordered::Built(Box::new((pag, made))), summary)
        }
        false => {
            let (copy, summary) = spoor_order::Input::write_temporary(&args.input, spill.path()?, |w| {
                prepared.order(Sink::Trace(w, &order::OrderOptions::default()), console)
            })?;
            spill.wrote(copy.spooled_bytes());
            (Ordered::Copied(copy), summary)
        }
    };
    // Clock-condition violations are the graph's to say, as for an ordered trace.
    ordering::warn_ordered("spoor-cp", &summary, input.name(), console);
    Ok(ordered)
}

fn main() {
    let args = Args::parse();
    // Its phases free large tables that the next one allocates again.
    spoor_format::mem::keep_freed_memory();
    spoor_cli::run_stage("spoor-cp", args.verbose, || {
        if let Some(n) = args.threads {
            rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global()?;
        }
        let levels = levels(&args.profile)?;
        let mode = args.weight;
        let console = Console::new("spoor-cp", args.quiet);
        // The global path of a trace file, without a table, zeroing or near paths, is
        // found without keeping the graph.
        let plain = args.net.is_none()
            && matches!(args.scope, ScopeArg::Global)
            && args.app.is_none()
            && args.phase.is_none()
            && args.window.is_none()
            && !args.zeroing
            && args.near.is_none();
        let spill = SpillDir::new("spoor-cp", args.tmpdir.as_deref());
        let budget = args.memory.unwrap_or_else(spoor_cli::graph_budget);
        // A trace not yet ordered is ordered here: straight into the graph where both fit in
        // memory, else into a copy in the spill directory, read as an ordered trace is.
        let mut ordered_copy = None;
        let mut built = None;
        if ordering::needs_ordering(&args.input)? {
            let fed = plain.then_some(budget);
            match order_first(&args, &spill, mode, fed, &console)? {
                Ordered::Built(graph) => built = Some(*graph),
                Ordered::Copied(copy) => ordered_copy = Some(copy),
            }
        } else if args.align {
            return Err(usage(match spoor_format::is_stream(&args.input) {
                true => "--align needs a trace file or a run's directory: a stream is read as it is \
                         (pipe it through spoor-align and spoor-order)"
                    .to_owned(),
                false => {
                    format!("--align: {} is ordered already (clocks are aligned before ordering)", args.input)
                }
            }));
        }
        let source = spoor_cli::read_from(&args.input, ordered_copy.as_ref());
        let (pag, made) = match (built, plain) {
            (Some(built), _) => built,
            (None, true) => {
                // A stream whose graph would not fit is read twice: from a copy.
                let spooled = spoor_cli::spool_if_stream(&source, &spill)?;
                let input = spoor_cli::read_from(&source, spooled.as_ref());
                let named = spooled.as_ref().or(ordered_copy.as_ref());
                spoor_graph::streamed::path_graph(&input, mode, &[], budget, &console)
                    .map_err(|e| spoor_cli::spill::named_as_given(named, e.into()))?
            }
            (None, false) => {
                let arena = spoor_cli::spill::graph_arena(&source, args.memory, &spill)?;
                spoor_graph::file::load_with_distances_in(
                    &source,
                    mode,
                    args.net.as_deref().map(|t| (t, args.local)),
                    &console,
                    arena.as_ref(),
                )
                .map_err(|e| spoor_cli::spill::named_as_given(ordered_copy.as_ref(), e.into()))?
            }
        };
        let scope = match (args.scope, &args.app) {
            (ScopeArg::Global, None) => Scope::Global,
            (ScopeArg::Global, Some(_)) => return Err(usage("--app needs --scope intra or inter")),
            (_, None) => return Err(usage("--scope intra and inter need --app NAME")),
            (ScopeArg::Intra, Some(a)) => Scope::Intra(pag.app_id(a)?),
            (ScopeArg::Inter, Some(a)) => Scope::Inter(pag.app_id(a)?),
        };
        let window = spoor_graph::window::stretch(&pag, args.phase.as_deref(), args.window.as_deref())
            .map_err(|e| usage(e.to_string()))?;
        let opts = CpOptions { scope: Some(scope), window, ..CpOptions::default() };
        let path = cp::critical_path_with(&pag, &opts, made.as_ref());
        let mut report = CpReport::new(&args.input, &pag, scope, window, &path);
        if let Some(w) = &report.clock_warning {
            eprintln!("spoor-cp: warning: {w}");
        }
        report.add_profiles(&pag, &path, &levels);
        report.text_rows = args.rows;
        if args.zeroing {
            report.zeroing = Some(whatif::zeroing(&pag, &opts, &path, args.top));
        }
        if let Some(k) = args.near {
            report.near = Some(spoor_graph::near::longest_paths(&pag, &opts, k));
        }
        if args.path {
            report.add_path(&pag, &path);
        }
        let mut out = Output::create(args.output.as_deref())?;
        match args.format {
            Format::Text => show::write_text(&mut out, &report)?,
            Format::Csv => show::write_csv(&mut out, &report)?,
            Format::Json => show::write_json(&mut out, &report)?,
        }
        out.commit()
    })
}
