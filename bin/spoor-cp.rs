//! spoor-cp: critical paths of a trace or PAG, with profiles, zeroing and near-critical
//! paths (the spoor-graph crate; formats/pag.md).

use anyhow::anyhow;
use clap::Parser;
use spoor_cli::{usage, Console, Output};
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

/// `--window T0..T1`: times from the first activity event (`span.0`), or absolute with a
/// leading `@`; a malformed window, or one that holds no activity event, is a usage error
/// (the latter saying where the trace begins and ends).
fn window(spec: &str, pag: &spoor_graph::Pag) -> anyhow::Result<(i64, i64)> {
    let parse = |s: &str| {
        spoor_format::text::parse_duration(s).ok_or_else(|| {
            usage(format!("--window {spec}: `{s}` is not a time (like 2ms, 1.5s, 300us or 1500)"))
        })
    };
    let (absolute, times) = match spec.strip_prefix('@') {
        Some(rest) => (true, rest),
        None => (false, spec),
    };
    let (a, b) = times
        .split_once("..")
        .ok_or_else(|| usage(format!("--window {spec}: expected T0..T1 or @T0..T1")))?;
    let (a, b) = (parse(a)?, parse(b)?);
    if b < a {
        return Err(usage(format!("--window {spec}: the end is before the start")));
    }
    let Some(span) = pag.activity_span() else {
        return Err(usage(format!("--window {spec}: the trace has no events")));
    };
    let base = if absolute { 0 } else { span.0 };
    let (a, b) = (a.saturating_add(base), b.saturating_add(base));
    if pag.activity_in(a, b) == 0 {
        return Err(usage(format!(
            "--window {spec} holds no event: the trace runs from 0 to {} after its first event (@{}..{} in ns)",
            spoor_order::describe::time(span.1 - span.0),
            span.0,
            span.1
        )));
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
        let console = Console::new("spoor-cp", args.quiet);
        let (pag, made) = spoor_graph::file::load_with_distances(
            &args.input,
            mode,
            args.net.as_deref().map(|t| (t, args.local)),
            &console,
        )?;
        let scope = match (args.scope, &args.app) {
            (ScopeArg::Global, None) => Scope::Global,
            (ScopeArg::Global, Some(_)) => return Err(usage("--app needs --scope intra or inter")),
            (_, None) => return Err(usage("--scope intra and inter need --app NAME")),
            (ScopeArg::Intra, Some(a)) => Scope::Intra(pag.app_id(a)?),
            (ScopeArg::Inter, Some(a)) => Scope::Inter(pag.app_id(a)?),
        };
        let window = match (&args.phase, &args.window) {
            (Some(_), Some(_)) => return Err(usage("give --phase or --window, not both")),
            (Some(p), None) => Some(pag.phase_window(p).ok_or_else(|| {
                let names = pag.phase_names();
                usage(if names.is_empty() {
                    format!("no phase `{p}`: the trace has no phases")
                } else {
                    format!("no phase `{p}` with a begin and an end; the trace has: {}", names.join(", "))
                })
            })?),
            (None, Some(w)) => Some(window(w, &pag)?),
            (None, None) => None,
        };
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
