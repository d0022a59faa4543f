//! spoor-align: put every location of a trace on one time base (the spoor-order crate's
//! `align`).

use clap::{CommandFactory, Parser, ValueEnum};
use spoor_cli::Output;
use spoor_order::align::{self, AlignOptions, Method};
use spoor_order::Input;
use std::path::PathBuf;

const ABOUT_ALIGN: &str = "\
Clocks are per process. (a) A process with clock_offset samples gets its offset interpolated
linearly between them (Score-P, Scalasca). (b) Processes without samples get an offset and a
drift from the messages they exchange both ways with an aligned process (convex hull method),
along a spanning tree from the reference. (c) The controlled logical clock (Rabenseifner; Becker
et al.) then moves every receive to no earlier than its send plus the minimum latency, and
amortizes each jump backwards over the interval before it. Violations before and after, and the
correction of each location, go to standard error (or --report FILE as JSON). The output has
flag ALIGNED; an event whose time changed keeps the recorded one in its raw_wall annotation.";

#[derive(Clone, Copy, ValueEnum)]
enum MethodArg {
    /// Samples where a process has them, messages for the others.
    Auto,
    /// Clock-offset samples only.
    Samples,
    /// Offset and drift from messages only.
    Messages,
    /// No offsets: only the controlled logical clock.
    None,
}

/// Put every location of a trace on one time base and repair clock-condition violations.
#[derive(Parser)]
#[command(name = "spoor-align", version, after_long_help = ABOUT_ALIGN)]
struct Args {
    /// The trace to read; `-` for standard input (copied to a temporary file: it is read twice).
    #[arg(default_value = "-")]
    input: String,
    /// How offsets and drifts are found.
    #[arg(long, value_enum, default_value = "auto")]
    method: MethodArg,
    /// Skip the controlled logical clock.
    #[arg(long)]
    no_clc: bool,
    /// The reference clock: a location's number or name [default: the root of the samples'
    /// references, else location 0].
    #[arg(long, value_name = "LOC")]
    reference: Option<String>,
    /// Minimum message latency: a receive earlier than its send plus this is a violation
    /// (2500, 2.5us, 1ms).
    #[arg(long, value_name = "TIME", default_value = "0", value_parser = spoor_order::describe::parse_time)]
    min_latency: i64,
    /// The controlled logical clock's gamma, in (0, 1]: after a jump a clock runs at this
    /// fraction of its speed until it meets its own time again.
    #[arg(long, value_name = "G", default_value_t = 0.99)]
    gamma: f64,
    /// The largest clock drift considered when fitting messages, in parts per million.
    #[arg(long, value_name = "PPM", default_value_t = 1000.0)]
    max_drift: f64,
    /// Write the report as JSON to this file instead of as text to standard error.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Events per block of the output.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    block_events: usize,
    /// No report on standard error.
    #[arg(short, long)]
    quiet: bool,
    /// Replay the controlled logical clock over every event even where it provably
    /// changes nothing (same output; for testing).
    #[arg(long, hide = true)]
    force_replay: bool,
}

fn into_anyhow(e: spoor_order::Error) -> anyhow::Error {
    match e {
        spoor_order::Error::Format(f) => anyhow::Error::new(f),
        spoor_order::Error::Write(io) => anyhow::Error::new(io).context("writing the output"),
        other => anyhow::Error::new(other),
    }
}

fn main() {
    let args = Args::parse();
    if !(args.gamma > 0.0 && args.gamma <= 1.0) {
        Args::command()
            .error(
                clap::error::ErrorKind::ValueValidation,
                format!("--gamma {}: expected a number in (0, 1]", args.gamma),
            )
            .exit();
    }
    if !(args.max_drift >= 0.0 && args.max_drift.is_finite()) {
        Args::command()
            .error(clap::error::ErrorKind::ValueValidation, "--max-drift: expected a non-negative number")
            .exit();
    }
    spoor_cli::run("spoor-align", || {
        let opts = AlignOptions {
            method: match args.method {
                MethodArg::Auto => Method::Auto,
                MethodArg::Samples => Method::Samples,
                MethodArg::Messages => Method::Messages,
                MethodArg::None => Method::None,
            },
            clc: !args.no_clc,
            reference: args.reference.clone(),
            min_latency: args.min_latency,
            gamma: args.gamma,
            max_drift: args.max_drift * 1e-6,
            block_events: args.block_events.max(1),
            force_replay: args.force_replay,
        };
        let input = Input::open(&args.input).map_err(into_anyhow)?;
        let mut out = Output::create(args.output.as_deref())?;
        let report = match align::align(&input, &opts, &mut out) {
            Ok(r) => r,
            Err(spoor_order::Error::Usage(m)) => {
                drop(out);
                Args::command().error(clap::error::ErrorKind::ValueValidation, m).exit()
            }
            Err(e) => return Err(into_anyhow(e)),
        };
        out.commit()?;
        if let Some(path) = &args.report {
            let mut r = Output::create(Some(path))?;
            serde_json::to_writer_pretty(&mut r, &report)?;
            std::io::Write::write_all(&mut r, b"\n")?;
            r.commit()?;
        } else if !args.quiet {
            eprint!("{}", report.to_text());
        }
        Ok(())
    })
}
