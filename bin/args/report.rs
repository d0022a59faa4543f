//! The command line of spoor-report, shared with `spoor man` and `spoor completions`.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum)]
pub enum Form {
    /// Human tables and sparklines.
    Text,
    /// The tables as CSV (several: each after a `# NAME` line).
    Csv,
    /// One JSON document with every table and histogram.
    Json,
    /// The space-time diagram (default) or the histograms (`--table histogram`).
    Svg,
    /// One self-contained HTML page with every table and picture.
    Html,
    /// Chrome trace-event JSON for Perfetto and chrome://tracing.
    Chrome,
}

pub const EXAMPLES: &str = "\
Examples:
  spoor-report run.o                                every table the trace allows
  spoor-report -t profile -l procedure -m busy run.o
  spoor-report -f html --critical-path wall -o run.html run.o
  spoor-report -f svg -t spacetime -o run.svg run.o
  spoor-report -f chrome -o run.json run.o          for ui.perfetto.dev
  spoor-report -f html --annotate -o run.html run.o  processes straying from their peers marked
  spoor-report --focus machine=node1 --phase solve run.o
  spoor-report -t waits run.o                       wait states and their root causes
  spoor-report run.o --compare old.o";

/// Tables, profiles and pictures of a trace (ideally the output of spoor-order).
#[derive(Parser)]
#[command(name = "spoor-report", version, after_help = EXAMPLES)]
pub struct Args {
    /// The trace; `-` for standard input.
    #[arg(default_value = "-")]
    pub input: String,
    /// Other runs to set beside INPUT (IPS-2's comparison mode): a column per run and the
    /// differences from INPUT.
    #[arg(long, num_args = 1.., value_name = "RUN")]
    pub compare: Vec<String>,
    /// Output form.
    #[arg(short, long, value_enum, default_value = "text")]
    pub format: Form,
    /// Only these tables (repeatable): metrics, profile, callgraph, npt, utilization,
    /// messages, transactions, histogram, spacetime, waits (wait states: by pattern,
    /// procedure and process, the largest, and their root causes). Default: all that the
    /// input allows.
    #[arg(short, long = "table", value_name = "TABLE")]
    pub tables: Vec<String>,
    /// Level of the metric and profile tables: application, machine, process, thread, procedure.
    #[arg(short, long)]
    pub level: Option<String>,
    /// The metric of the profile table (adds it to the full report).
    #[arg(short, long)]
    pub metric: Option<String>,
    /// Metrics of the time histograms (repeatable; default busy and wait).
    #[arg(long = "hist", value_name = "METRIC")]
    pub hist: Vec<String>,
    /// Only these locations (repeatable, united): LEVEL=NAME with LEVEL application,
    /// machine, process or thread.
    #[arg(long, value_name = "LEVEL=NAME")]
    pub focus: Vec<String>,
    /// Count only what happens inside this phase.
    #[arg(long)]
    pub phase: Option<String>,
    /// Most bins of a time histogram (and columns of the space-time diagram).
    #[arg(long, default_value_t = 500)]
    pub bins: usize,
    /// Most lines of the space-time diagram; more locations are grouped into rows.
    #[arg(long, default_value_t = 64)]
    pub rows: usize,
    /// Most message lines in the space-time diagram (the longest transits).
    #[arg(long, default_value_t = 500)]
    pub arrows: usize,
    /// Rows of the longest-transit message table, of the largest waits and of their root
    /// causes (also the waits outlined in the space-time diagram).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Draw the critical path (spoor-cp's, global scope, in this weight mode) over the
    /// space-time diagram, the HTML report and the Chrome export. Needs an ordered trace
    /// (read twice: standard input is copied to disk first, --tmpdir).
    #[arg(long, value_enum, value_name = "MODE")]
    pub critical_path: Option<CpMode>,
    /// Mark the processes that stray from their peers (spoor-diagnose's peer annotations,
    /// formats/diagnose.md) on the space-time diagram, the HTML report and the Chrome
    /// export. Needs an ordered trace (read twice: standard input is copied to disk
    /// first, --tmpdir).
    #[arg(long)]
    pub annotate: bool,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// The memory the wait states may take (bytes, or with K, M or G; 0: none). A trace
    /// whose wait states would take more (about 24 bytes an event) has them kept in a
    /// file in --tmpdir: the same results, in memory bounded by what is in flight.
    /// Default: half of what this machine (or its cgroup, or SPOOR_MEMORY_LIMIT) has
    /// available.
    #[arg(long, value_name = "SIZE", value_parser = spoor_cli::memory_arg)]
    pub memory: Option<u64>,
    /// Keep what goes to disk (standard input, when --critical-path, --annotate or the
    /// HTML summary read it twice; the wait states, past --memory) in a directory of its
    /// own inside DIR, removed at the end [default: $TMPDIR, else /tmp].
    #[arg(long, value_name = "DIR")]
    pub tmpdir: Option<std::path::PathBuf>,
    /// At the end, print the peak resident memory and the disk used to spare memory on standard error.
    #[arg(short, long)]
    pub verbose: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum CpMode {
    /// Local arcs weigh process time; waiting weighs nothing.
    Cpu,
    /// Local arcs weigh elapsed time: the path that determined the end time.
    Wall,
}
