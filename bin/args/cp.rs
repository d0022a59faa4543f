//! The command line of spoor-cp, shared with `spoor man` and `spoor completions`.

use clap::{Parser, ValueEnum};
use spoor_graph::Mode;

pub const ABOUT: &str = "\
The critical path is the longest path through the Program Activity Graph (formats/pag.md).
In cpu mode local arcs weigh the process time between two events and waiting weighs nothing
(the run's time with one processor per process); in wall mode they weigh elapsed time and the
path is the chain of activities and waits that determined the end time (its length is the
measured elapsed time). Scopes: global (all applications); intra (--app A: A's own graph,
arcs from other applications ignored); inter (--app A: the longest path that begins and ends
in A, through other applications only where they lead back to A). The input is an ordered
trace (spoor-order's output) or a PAG file (spoor-pag's output); a trace not yet ordered, or a
recorded run's directory, is ordered first (--align: aligned too).";

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub enum ScopeArg {
    /// Every application.
    Global,
    /// One application's own graph (--app), other applications' arcs ignored.
    Intra,
    /// The longest path that begins and ends in one application (--app).
    Inter,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// Human tables.
    Text,
    /// One table: section,name,time_ns,share,detail (formats/pag.md).
    Csv,
    /// One JSON object.
    Json,
}

pub const EXAMPLES: &str = "\
Examples:
  spoor-cp run.o                                    the path, by process and procedure
  spoor-cp --align traces/                          a run's per-process traces, merged, aligned, ordered
  spoor-cp --zeroing --top 8 run.o                  what each procedure's time costs
  spoor-cp --weight wall --profile all --path run.o
  spoor-cp --scope inter --app clientA run.o
  spoor-cp --phase solve -f csv -o cp.csv run.o
  spoor-cp --weight wall --window 2s..3s run.o      the second after the first two
  spoor-pag run.o -o run.pag && spoor-cp --near 5 run.pag";

/// Critical paths, critical-path profiles, zeroing and near-critical paths.
#[derive(Parser)]
#[command(name = "spoor-cp", version, after_help = EXAMPLES, after_long_help = format!("{ABOUT}\n\n{EXAMPLES}"))]
pub struct Args {
    /// An ordered trace or a PAG file; `-` for standard input (read as it is). A trace
    /// file not yet ordered, or a directory of per-process traces (a run as spoor-record
    /// writes it), is ordered first as spoor-order does (merged first, as spoor-merge does):
    /// the same results as spoor-order's output gives, without writing it where the graph
    /// fits in memory (--memory), else through a copy in --tmpdir.
    #[arg(default_value = "-")]
    pub input: String,
    /// Align the clocks of a trace that is ordered first, as spoor-align does with its
    /// defaults, and print its report unless --quiet: the same results as
    /// `spoor-order --align`'s output gives.
    #[arg(long)]
    pub align: bool,
    /// Arc weights when building from a trace (a PAG file keeps its own).
    #[arg(long, value_name = "cpu|wall", default_value = "cpu")]
    pub weight: Mode,
    /// The network: `ideal`, a model (FILE.toml, formats/network.md) or a communication-cost table (formats/nettable.md)
    #[arg(long, value_name = "TABLE")]
    pub net: Option<String>,
    /// Which messages take the table's local time: processor (both ends in one process),
    /// machine (both ends on one machine) or never (every message remote). Default:
    /// machine.
    #[arg(long, value_name = "WHERE", requires = "net", value_parser = spoor_graph::Local::parse)]
    pub local: Option<spoor_graph::Local>,
    /// Which applications the path may run through.
    #[arg(long, value_enum, default_value = "global")]
    pub scope: ScopeArg,
    /// The application of --scope intra or inter.
    #[arg(long, value_name = "NAME")]
    pub app: Option<String>,
    /// Only the events within this phase (from its first begin to its last end).
    #[arg(long, value_name = "NAME")]
    pub phase: Option<String>,
    /// Only the events within T0..T1, times from the trace's first event (like 2ms, 1.5s,
    /// 300us, or nanoseconds); @T0..T1 for absolute times (the trace's own clock). A window
    /// that holds no event is an error saying where the trace begins and ends.
    #[arg(long, value_name = "[@]T0..T1")]
    pub window: Option<String>,
    /// Profiles to print: a comma-separated list of application, machine, process,
    /// thread, procedure, inclusive, message, imbalance (each procedure's time on the
    /// path beyond its mean per process); `all`; or `none`.
    #[arg(long, value_name = "LEVELS", default_value = "process,procedure")]
    pub profile: String,
    /// Rows per profile in the text form (0: all; CSV and JSON always have all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub rows: usize,
    /// Print the path itself, arc by arc.
    #[arg(long)]
    pub path: bool,
    /// Critical-path zeroing: the path's length with each of the top procedures' own
    /// time set to zero (exclusive), and with everything it calls too (inclusive).
    #[arg(long)]
    pub zeroing: bool,
    /// How many procedures --zeroing tries: the K with the most exclusive time on the
    /// path and the K with the most inclusive time.
    #[arg(long, value_name = "K", default_value_t = 16)]
    pub top: usize,
    /// The memory the graph may take (bytes, or with K, M or G; 0: none). A trace whose
    /// graph would take more has its global path found in two passes without the
    /// graph: the same results in about 1.5 times the time (standard input, or a pipe,
    /// is first copied to --tmpdir for them); with options that read the graph, the
    /// graph is kept in a file in --tmpdir. Default: half of what this
    /// machine (or its cgroup, or SPOOR_MEMORY_LIMIT) has available.
    #[arg(long, value_name = "SIZE", value_parser = spoor_cli::memory_arg)]
    pub memory: Option<u64>,
    /// Where standard input (or a pipe) is copied to be read twice, and a graph past
    /// --memory kept, in a directory of its own removed however the command ends. Default: $TMPDIR, else /tmp.
    #[arg(long, value_name = "DIR")]
    pub tmpdir: Option<std::path::PathBuf>,
    /// The lengths of the K longest distinct paths.
    #[arg(long, value_name = "K")]
    pub near: Option<usize>,
    /// Output form.
    #[arg(short, long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    pub output: Option<std::path::PathBuf>,
    /// Worker threads (default: all cores); results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Say nothing on standard error unless something is wrong.
    #[arg(short, long)]
    pub quiet: bool,
    /// At the end, print the peak resident memory and the disk used to spare memory on standard error.
    #[arg(short, long)]
    pub verbose: bool,
}
