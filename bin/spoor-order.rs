//! spoor-order: match messages, group collectives, link lock hand-offs and spawns, and
//! write the trace in a causally consistent total order (the spoor-order crate's `order`).

use clap::{Parser, ValueEnum};
use spoor_cli::Output;
use spoor_order::order::{self, OrderOptions, OrderSummary};
use spoor_order::Input;
use std::io::Write;
use std::path::PathBuf;

const ABOUT_ORDER: &str = "\
Matching follows MPI: the k-th send from A to B on a communicator and tag goes to the k-th
receive B posted for it, wildcard receives counted under the source and tag they actually got
(recv_end, irecv_complete); requests are followed to their completion. The k-th collective of
each member of a communicator is one instance. Lock sections hand over in the order of their
acquisitions. The output is in GLOBAL_ORDER with flag MATCHED: every event carries its Lamport
clock, and message, request, collective, lock and spawn events their partner (formats/order.md).
Problems (unmatched sends or receives, size mismatches, ...) are reported on standard error;
with --check they are listed on standard output and the exit code is 1 when there are any.";

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// Match sends and receives and write the events in a causally consistent total order.
#[derive(Parser)]
#[command(name = "spoor-order", version, after_long_help = ABOUT_ORDER)]
struct Args {
    /// The trace to read; `-` for standard input (copied to a temporary file: it is read twice).
    #[arg(default_value = "-")]
    input: String,
    /// Only check: list unmatched sends and receives, size mismatches, inconsistent
    /// collectives and locks, and cycles; exit 1 if there are any. Writes no trace.
    #[arg(long)]
    check: bool,
    /// Form of the --check report.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Events per block of the output.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    block_events: usize,
    /// Say nothing on standard error unless something is wrong.
    #[arg(short, long)]
    quiet: bool,
}

fn into_anyhow(e: spoor_order::Error) -> anyhow::Error {
    match e {
        spoor_order::Error::Format(f) => anyhow::Error::new(f),
        spoor_order::Error::Write(io) => anyhow::Error::new(io).context("writing the output"),
        other => anyhow::Error::new(other),
    }
}

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

fn main() {
    let args = Args::parse();
    spoor_cli::run("spoor-order", || {
        let input = Input::open(&args.input).map_err(into_anyhow)?;
        if args.check {
            let s = order::check(&input).map_err(into_anyhow)?;
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
        let opts = OrderOptions { block_events: args.block_events.max(1), progress: !args.quiet };
        let s = order::order(&input, &mut out, &opts).map_err(into_anyhow)?;
        out.commit()?;
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
        if s.released_spawns > 0 && !args.quiet {
            eprintln!(
                "spoor-order: warning: {} spawn(s) placed before their parent's clock allowed, to avoid a cycle",
                s.released_spawns
            );
        }
        Ok(())
    })
}
