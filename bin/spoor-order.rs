//! spoor-order: match messages, group collectives, link lock hand-offs and spawns, and
//! write the trace in a causally consistent total order (the spoor-order crate's `order`).

use clap::Parser;
use spoor_cli::{Console, Output};
use spoor_model::Feedback;
use spoor_order::align::{self, AlignOptions};
use spoor_order::merge::{self, MergeInput};
use spoor_order::order::{self, OrderOptions, OrderSummary};
use std::io::Write;
use std::path::Path;

#[path = "args/order.rs"]
mod args;
use args::*;

fn counts(s: &OrderSummary) -> String {
    let mut by: Vec<(&str, usize)> = Vec::new();
    for p in &s.problems {
        match by.iter_mut().find(|(k, _)| *k == p.kind.label()) {
            Some(e) => e.1 += 1,
            None => by.push((p.kind.label(), 1)),
        }
    }
    by.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ")
}

/// Times that break the clock condition make every later time between locations wrong:
/// said whatever --quiet asks.
fn warn_clocks(s: &OrderSummary) {
    if let Some(w) = s.violations.warning() {
        eprintln!("spoor-order: warning: {w}");
    }
}

/// The trace to order: the one given, or the traces given merged into the spill directory.
fn open_inputs(args: &Args, spill: &spoor_cli::SpillDir) -> anyhow::Result<spoor_order::Input> {
    let mut files = Vec::new();
    for path in &args.inputs {
        let expanded = merge::expand(path)?;
        if expanded.is_empty() {
            anyhow::bail!("{path}: an empty directory");
        }
        files.extend(expanded.into_iter().map(|path| MergeInput { path, app: None }));
    }
    if let [one] = &args.inputs[..] {
        if files.len() == 1 && files[0].path == *one {
            return spoor_cli::open_input(one, spill);
        }
    }
    if files.iter().filter(|f| f.path == "-").count() > 1 {
        anyhow::bail!("standard input (`-`) can be read only once");
    }
    let console = Console::new("spoor-order", args.quiet);
    let name = args.inputs.join(" ");
    let (merged, summary) = merge::merge_to_temporary(&files, &name, spill.path()?, &console)?;
    spill.wrote(merged.spooled_bytes());
    for w in &summary.warnings {
        eprintln!("spoor-order: warning: {w}");
    }
    Ok(merged)
}

fn main() {
    let args = Args::parse();
    spoor_cli::run_stage("spoor-order", args.verbose, || {
        let spill = spoor_cli::SpillDir::new("spoor-order", args.tmpdir.as_deref());
        let input = open_inputs(&args, &spill)?;
        if args.check {
            let s = order::check(&input)?;
            let mut out = Output::create(args.output.as_deref())?;
            match args.format {
                Format::Json => writeln!(out, "{}", s.to_json())?,
                Format::Text => {
                    for p in &s.problems {
                        writeln!(out, "{}", p.describe(&s.defs))?;
                    }
                    writeln!(
                        out,
                        "{} events; {} messages, {} collectives, {} lock hand-offs, {} spawns matched; {}",
                        s.events,
                        s.messages,
                        s.collectives,
                        s.handoffs,
                        s.spawns,
                        if s.problems.is_empty() { "no problems".to_owned() } else { counts(&s) }
                    )?;
                }
            }
            out.commit()?;
            warn_clocks(&s);
            if s.error_count() > 0 {
                std::process::exit(spoor_cli::exit::BAD_INPUT);
            }
            return Ok(());
        }
        let mut out = Output::create(args.output.as_deref())?;
        let opts = OrderOptions { block_events: args.block_events.max(1) };
        let console = Console::new("spoor-order", args.quiet);
        let s = if args.align {
            let dir =
                || spill.path().map(Path::to_owned).map_err(|e| std::io::Error::other(format!("{e:#}")));
            let done =
                align::align_and_order(&input, &AlignOptions::default(), &opts, &dir, &mut out, &console)?;
            out.commit()?;
            if done.spooled_bytes > 0 {
                spill.wrote(done.spooled_bytes);
            }
            if !args.quiet {
                eprint!("{}", done.align.to_text());
            }
            done.order
        } else {
            let s = order::order_with_feedback(&input, &mut out, &opts, &console)?;
            out.commit()?;
            s
        };
        if !s.problems.is_empty() {
            eprintln!(
                "spoor-order: warning: {} in {} (spoor-order --check lists them all):",
                counts(&s),
                input.name()
            );
            for p in s.problems.iter().take(10) {
                eprintln!("  {}", p.describe(&s.defs));
            }
            if s.problems.len() > 10 {
                eprintln!("  ... and {} more", s.problems.len() - 10);
            }
        }
        warn_clocks(&s);
        if s.released_spawns > 0 {
            console.warn(&format!(
                "{} spawn(s) placed before their parent's clock allowed, to avoid a cycle",
                s.released_spawns
            ));
        }
        Ok(())
    })
}
