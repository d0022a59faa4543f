//! The command line of spoor-align, shared with `spoor man` and `spoor completions`.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;

pub const ABOUT_ALIGN: &str = "\
Clocks are per process. (a) A process with clock_offset samples gets its offset interpolated
linearly between them (Score-P, Scalasca). (b) Processes without samples get an offset and a
drift from the messages they exchange both ways with an aligned process (convex hull method),
along a spanning tree from the reference. (c) The controlled logical clock (Rabenseifner; Becker
et al.) then moves every receive to no earlier than its send plus the minimum latency, and
amortizes each jump backwards over the interval before it. Violations before and after, and the
correction of each location, go to standard error (or --report FILE as JSON). The output has
flag ALIGNED; an event whose time changed keeps the recorded one in its raw_wall annotation.";

#[derive(Clone, Copy, ValueEnum)]
pub enum MethodArg {
    /// Samples where a process has them, messages for the others.
    Auto,
    /// Clock-offset samples only.
    Samples,
    /// Offset and drift from messages only.
    Messages,
    /// No offsets: only the controlled logical clock.
    None,
}

pub const EXAMPLES: &str = "\
Examples:
  spoor-align merged.spoor -o aligned.spoor
  spoor-align --method samples --report align.json run.spoor -o aligned.spoor
  spoor-align --reference rank0 --min-latency 1us run.spoor -o aligned.spoor
  spoor-merge traces/ | spoor-align -q | spoor-order -q -o run.o";

/// Put every location of a trace on one time base and repair clock-condition violations.
#[derive(Parser)]
#[command(name = "spoor-align", version, after_help = EXAMPLES, after_long_help = format!("{ABOUT_ALIGN}\n\n{EXAMPLES}"))]
pub struct Args {
    /// The trace to read; `-` for standard input (copied into the spill directory, --tmpdir: it is read twice).
    #[arg(default_value = "-")]
    pub input: String,
    /// How offsets and drifts are found.
    #[arg(long, value_enum, default_value = "auto")]
    pub method: MethodArg,
    /// Skip the controlled logical clock.
    #[arg(long)]
    pub no_clc: bool,
    /// The reference clock: a location's number or name [default: the root of the samples'
    /// references, else location 0].
    #[arg(long, value_name = "LOC")]
    pub reference: Option<String>,
    /// Minimum message latency: a receive earlier than its send plus this is a violation
    /// (2500, 2.5us, 1ms).
    #[arg(long, value_name = "TIME", default_value = "0", value_parser = spoor_order::describe::parse_time)]
    pub min_latency: i64,
    /// The controlled logical clock's gamma, in (0, 1]: after a jump a clock runs at this
    /// fraction of its speed until it meets its own time again.
    #[arg(long, value_name = "G", default_value_t = 0.99)]
    pub gamma: f64,
    /// The largest clock drift considered when fitting messages, in parts per million.
    #[arg(long, value_name = "PPM", default_value_t = 1000.0)]
    pub max_drift: f64,
    /// Write the report as JSON to this file instead of as text to standard error.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Events per block of the output [default: 4096; 16384 for a trace in global order]
    #[arg(long, value_name = "N")]
    pub block_events: Option<usize>,
    /// No report on standard error.
    #[arg(short, long)]
    pub quiet: bool,
    /// Replay the controlled logical clock over every event even where it provably
    /// changes nothing (same output; for testing).
    #[arg(long, hide = true)]
    pub force_replay: bool,
    /// Keep what goes to disk (standard input, read twice) in a directory of its own
    /// inside DIR, removed at the end [default: $TMPDIR, else /tmp].
    #[arg(long, value_name = "DIR")]
    pub tmpdir: Option<PathBuf>,
    /// At the end, print the peak resident memory and the disk used to spare memory on standard error.
    #[arg(short, long)]
    pub verbose: bool,
}
