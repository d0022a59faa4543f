//! spoor-cp: critical paths of a trace or PAG, with profiles, zeroing and near-critical
//! paths (the spoor-graph crate; formats/pag.md).

use anyhow::{anyhow, bail};
use clap::{Parser, ValueEnum};
use spoor_cli::Output;
use spoor_graph::profile::Level;
use spoor_graph::show::{self, CpReport};
use spoor_graph::{cp, whatif, CpOptions, Mode, Scope};

const ABOUT: &str = "\
The critical path is the longest path through the Program Activity Graph (formats/pag.md).
In cpu mode local arcs weigh the process time between two events and waiting weighs nothing
(the run's time with one processor per process); in wall mode they weigh elapsed time and the
path is the chain of activities and waits that determined the end time (its length is the
measured elapsed time). Scopes: global (all applications); intra (--app A: A's own graph,
arcs from other applications ignored); inter (--app A: the longest path that begins and ends
in A, through other applications only where they lead back to A). The input is an ordered
trace (spoor-order's output) or a PAG file (spoor-pag's output).";

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum ScopeArg {
    Global,
    Intra,
    Inter,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Csv,
    Json,
}

/// Critical paths, critical-path profiles, zeroing and near-critical paths.
#[derive(Parser)]
#[command(name = "spoor-cp", version, after_long_help = ABOUT)]
struct Args {
    /// An ordered trace or a PAG file; `-` for standard input.
    #[arg(default_value = "-")]
    input: String,
    /// Arc weights when building from a trace (a PAG file keeps its own).
    #[arg(long, value_name = "cpu|wall", default_value = "cpu")]
    weight: Mode,
    /// Message-arc weights from this communication-cost table (formats/nettable.md).
    #[arg(long, value_name = "TABLE")]
    net: Option<String>,
    #[arg(long, value_enum, default_value = "global")]
    scope: ScopeArg,
    /// The application of --scope intra or inter.
    #[arg(long, value_name = "NAME")]
    app: Option<String>,
    /// Only the events within this phase (from its first begin to its last end).
    #[arg(long, value_name = "NAME")]
    phase: Option<String>,
    /// Only the events within T0..T1 (times like 2ms, 1.5s, 300us, or nanoseconds).
    #[arg(long, value_name = "T0..T1")]
    window: Option<String>,
    /// Profiles to print: a comma-separated list of application, machine, process,
    /// thread, procedure, inclusive, message; `all`; or `none`.
    #[arg(long, value_name = "LEVELS", default_value = "process,procedure")]
    profile: String,
    /// Rows per profile in the text form (0: all; CSV and JSON always have all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    rows: usize,
    /// Print the path itself, arc by arc.
    #[arg(long)]
    path: bool,
    /// Critical-path zeroing: the path's length with each of the top procedures' time set to zero.
    #[arg(long)]
    zeroing: bool,
    /// How many procedures --zeroing tries (those with the most time on the path).
    #[arg(long, value_name = "K", default_value_t = 16)]
    top: usize,
    /// The lengths of the K longest distinct paths.
    #[arg(long, value_name = "K")]
    near: Option<usize>,
    #[arg(short, long, value_enum, default_value = "text")]
    format: Format,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    output: Option<std::path::PathBuf>,
    /// Worker threads (default: all cores); results do not depend on it.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Say nothing on standard error unless something is wrong.
    #[arg(short, long)]
    quiet: bool,
}

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

fn window(spec: &str) -> anyhow::Result<(i64, i64)> {
    let parse = |s: &str| {
        spoor_format::text::parse_duration(s)
            .ok_or_else(|| anyhow!("--window {spec}: `{s}` is not a time (like 2ms, 1.5s, 300us or 1500)"))
    };
    let (a, b) = spec.split_once("..").ok_or_else(|| anyhow!("--window {spec}: expected T0..T1"))?;
    let (a, b) = (parse(a)?, parse(b)?);
    if b < a {
        bail!("--window {spec}: the end is before the start");
    }
    Ok((a, b))
}

fn main() {
    let args = Args::parse();
    spoor_cli::run("spoor-cp", || {
        if let Some(n) = args.threads {
            rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global()?;
        }
        let levels = levels(&args.profile)?;
        let mode = args.weight;
        let (pag, made) =
            spoor_graph::file::load_with_distances(&args.input, mode, args.net.as_deref(), args.quiet)?;
        let scope = match (args.scope, &args.app) {
            (ScopeArg::Global, None) => Scope::Global,
            (ScopeArg::Global, Some(_)) => bail!("--app needs --scope intra or inter"),
            (_, None) => bail!("--scope intra and inter need --app NAME"),
            (ScopeArg::Intra, Some(a)) => Scope::Intra(pag.app_id(a)?),
            (ScopeArg::Inter, Some(a)) => Scope::Inter(pag.app_id(a)?),
        };
        let window = match (&args.phase, &args.window) {
            (Some(_), Some(_)) => bail!("give --phase or --window, not both"),
            (Some(p), None) => Some(pag.phase_window(p).ok_or_else(|| {
                let names = pag.phase_names();
                if names.is_empty() {
                    anyhow!("no phase `{p}`: the trace has no phases")
                } else {
                    anyhow!("no phase `{p}` with a begin and an end; the trace has: {}", names.join(", "))
                }
            })?),
            (None, Some(w)) => Some(window(w)?),
            (None, None) => None,
        };
        let opts = CpOptions { scope: Some(scope), window, ..CpOptions::default() };
        let path = cp::critical_path_with(&pag, &opts, made.as_ref());
        let mut report = CpReport::new(&args.input, &pag, scope, window, &path);
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
