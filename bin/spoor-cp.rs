//! spoor-cp: critical paths of a trace or PAG, with profiles, zeroing and near-critical
//! paths (the spoor-graph crate; formats/pag.md).

use anyhow::anyhow;
use clap::Parser;
use spoor_cli::{usage, Console, Output, SpillDir};
use spoor_graph::profile::Level;
use spoor_graph::show::{self, CpReport};
use spoor_graph::{cp, whatif, CpOptions, Scope};

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
        let (pag, made) = match plain {
            true => {
                let budget = args.memory.unwrap_or_else(spoor_cli::graph_budget);
                // A stream whose graph would not fit is read twice: from a copy.
                let spooled = spoor_cli::spool_if_stream(&args.input, &spill)?;
                let input = spoor_cli::read_from(&args.input, spooled.as_ref());
                spoor_graph::streamed::path_graph(&input, mode, &[], budget, &console)
                    .map_err(|e| spoor_cli::spill::named_as_given(spooled.as_ref(), e.into()))?
            }
            false => {
                let arena = spoor_cli::spill::graph_arena(&args.input, args.memory, &spill)?;
                spoor_graph::file::load_with_distances_in(
                    &args.input,
                    mode,
                    args.net.as_deref().map(|t| (t, args.local)),
                    &console,
                    arena.as_ref(),
                )?
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
