//! spoor-diagnose: the automated search for bottlenecks, peer annotations and what to fix
//! first (the spoor-diagnose crate; formats/diagnose.md).

use clap::Parser;
use spoor_cli::{usage, Console, Output};
use spoor_diagnose::{render, Hypothesis, Options, PeerOptions, SearchOptions};
use std::io::Write;

#[path = "args/diagnose.rs"]
mod args;
use args::*;

/// `--threshold HYPOTHESIS=SHARE`.
fn threshold(spec: &str) -> anyhow::Result<(Hypothesis, f64)> {
    let (h, v) = spec
        .split_once('=')
        .ok_or_else(|| usage(format!("--threshold {spec}: expected HYPOTHESIS=SHARE")))?;
    let h = Hypothesis::parse(h.trim()).map_err(usage)?;
    let v: f64 = v
        .trim()
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| usage(format!("--threshold {spec}: `{v}` is not a share (like 0.15)")))?;
    Ok((h, v))
}

/// `--peer-group NAME=P,Q,...`.
fn peer_group(spec: &str) -> anyhow::Result<(String, Vec<String>)> {
    let (name, members) = spec
        .split_once('=')
        .filter(|(n, m)| !n.trim().is_empty() && !m.trim().is_empty())
        .ok_or_else(|| usage(format!("--peer-group {spec}: expected NAME=PROCESS,PROCESS,...")))?;
    Ok((name.trim().to_owned(), members.split(',').map(|m| m.trim().to_owned()).collect()))
}

fn main() {
    let args = Args::parse();
    // Its phases free large tables that the next one allocates again.
    spoor_format::mem::keep_freed_memory();
    spoor_cli::run_stage("spoor-diagnose", args.verbose, || {
        if let Some(n) = args.threads {
            rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global()?;
        }
        if !(0.0..=args.peer_enter).contains(&args.peer_leave) {
            return Err(usage("--peer-leave must be between 0 and --peer-enter (hysteresis)"));
        }
        let thresholds = args.threshold.iter().map(|s| threshold(s)).collect::<anyhow::Result<_>>()?;
        let opts = Options {
            search: SearchOptions { slices: args.slices, max_tests: args.max_tests, thresholds },
            peers: PeerOptions {
                windows: args.peer_windows,
                enter: args.peer_enter,
                leave: args.peer_leave,
                named: args.peer_groups.iter().map(|g| peer_group(g)).collect::<anyhow::Result<_>>()?,
            },
            top: args.top,
            ..Options::default()
        };
        let directives = match &args.directives {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
                Some((p.display().to_string(), text))
            }
            None => None,
        };
        let console = Console::new("spoor-diagnose", args.quiet);
        // Read twice: standard input is copied into the spill directory first.
        let spill = spoor_cli::SpillDir::new("spoor-diagnose", args.tmpdir.as_deref());
        let input = spoor_cli::open_input(&args.input, &spill)?;
        let path = input.file().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        let opts = Options {
            spill: spoor_cli::spill::wait_state_arena(&path, args.memory, &spill)?,
            graph_spill: spoor_cli::spill::graph_arena(&path, args.memory, &spill)?,
            ..opts
        };
        let d = spoor_diagnose::diagnose_named(
            &path,
            &args.input,
            directives.as_ref().map(|(f, t)| (f.as_str(), t.as_str())),
            &opts,
            &console,
        )
        .map_err(|e| match e {
            spoor_diagnose::Error::Usage(m) => usage(m),
            // Standard input's copy (or a pipe's) is named as what it is a copy of.
            e => spoor_cli::spill::named_as_given(Some(&input), e.into()),
        })?;
        for w in &d.warnings {
            eprintln!("spoor-diagnose: warning: {w}");
        }
        let text = match args.format {
            Format::Text => render::text(&d, args.top, args.tree),
            Format::Json => render::json(&d),
            Format::Dot => render::dot(&d),
            Format::Html => render::html(&d, args.top),
        };
        let mut out = Output::create(args.output.as_deref())?;
        out.write_all(text.as_bytes())?;
        out.commit()
    })
}
