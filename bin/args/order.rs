//! The command line of spoor-order, shared with `spoor man` and `spoor completions`.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;

pub const ABOUT_ORDER: &str = "\
Matching follows MPI: the k-th send from A to B on a communicator and tag goes to the k-th
receive B posted for it, wildcard receives counted under the source and tag they actually got
(recv_end, irecv_complete); requests are followed to their completion. The k-th collective of
each member of a communicator is one instance. Lock sections hand over in the order of their
acquisitions. The output is in GLOBAL_ORDER with flag MATCHED: every event carries its Lamport
clock, and message, request, collective, lock and spawn events their partner (formats/order.md).
Problems (unmatched sends or receives, size mismatches, ...) are reported on standard error;
with --check they are listed on standard output and the exit code is 1 when there are any.";

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// One problem a line.
    Text,
    /// One JSON object with every problem.
    Json,
}

pub const EXAMPLES: &str = "\
Examples:
  spoor-order run.spoor -o run.o
  spoor-order --check run.spoor                     list what does not match
  spoor-order --check --format json run.spoor > problems.json
  spoor-order --align traces/ -o run.o              a run's per-process traces, merged and aligned
  spoor-synth ring | spoor-order -q > ring.o";

/// Match sends and receives and write the events in a causally consistent total order.
#[derive(Parser)]
#[command(name = "spoor-order", version, after_help = EXAMPLES, after_long_help = format!("{ABOUT_ORDER}\n\n{EXAMPLES}"))]
pub struct Args {
    /// The trace to read; `-` for standard input (copied into the spill directory, --tmpdir:
    /// it is read twice). Several traces, or a directory of them (a run as spoor-record
    /// writes it), are first merged there as spoor-merge does.
    #[arg(default_value = "-")]
    pub inputs: Vec<String>,
    /// Only check: list unmatched sends and receives, size mismatches, inconsistent
    /// collectives and locks, and cycles; exit 1 if there are any. Writes no trace.
    #[arg(long)]
    pub check: bool,
    /// Align the clocks first, as spoor-align does with its defaults, and print its report
    /// unless --quiet: the same trace as `spoor-align -q | spoor-order`. Where the alignment
    /// moves nothing, in less time (the trace is read and matched once less); where clocks
    /// move, in a little more (the aligned copy goes to the spill directory). For other
    /// alignment settings, pipe spoor-align into spoor-order.
    #[arg(long, conflicts_with = "check")]
    pub align: bool,
    /// Form of the --check report.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Events per block of the output.
    #[arg(long, value_name = "N", default_value_t = spoor_format::GLOBAL_ORDER_BLOCK_EVENTS)]
    pub block_events: usize,
    /// Say nothing on standard error unless something is wrong.
    #[arg(short, long)]
    pub quiet: bool,
    /// Keep what goes to disk (standard input, read twice) in a directory of its own
    /// inside DIR, removed at the end [default: $TMPDIR, else /tmp].
    #[arg(long, value_name = "DIR")]
    pub tmpdir: Option<PathBuf>,
    /// At the end, print the peak resident memory and the disk used to spare memory on standard error.
    #[arg(short, long)]
    pub verbose: bool,
}
