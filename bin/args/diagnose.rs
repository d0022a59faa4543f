//! The command line of spoor-diagnose, shared with `spoor man` and `spoor completions`.

use clap::{Parser, ValueEnum};

pub const ABOUT: &str = "\
The automated search for why, where and when a program is slow (formats/diagnose.md), after
Paradyn's Performance Consultant: hypotheses (sync_waiting and each wait-state pattern,
load_imbalance, communication, io_blocking, cpu_bound) are tested at foci (/Code/PROCEDURE,
/Process/P or /Machine/M/P/T, /Partner/P) over the whole run, its phases and time slices,
each against a threshold (a share of the focus's time); true ones are refined one step at a
time, false ones pruned. Processes straying from their peers are annotated (Enterprise),
and each cause found gets the gain the model machine predicts for removing it (the CPU-mode
critical path with the change made): what to fix first. The input is an ordered trace
(spoor-order's output), read twice: standard input is copied to disk first (--tmpdir).";

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// The findings, the bottlenecks, the annotations and the search's counts.
    Text,
    /// Everything, the whole Search History Graph included.
    Json,
    /// The Search History Graph for Graphviz.
    Dot,
    /// One self-contained page: the findings, the annotations on a time-line, the Search
    /// History Graph in SVG.
    Html,
}

pub const EXAMPLES: &str = "\
Examples:
  spoor-diagnose run.o                              what to fix first, and why
  spoor-diagnose --tree run.o                       with the search history's true nodes
  spoor-diagnose -f dot run.o | dot -Tsvg -o shg.svg
  spoor-diagnose --directives earlier.dirs run.o    steered by what earlier runs taught
  spoor-diagnose --threshold sync_waiting=0.2 -f json -o d.json run.o";

/// The automated search for bottlenecks, and what to fix first.
#[derive(Parser)]
#[command(name = "spoor-diagnose", version, after_help = EXAMPLES, after_long_help = format!("{ABOUT}\n\n{EXAMPLES}"))]
pub struct Args {
    /// An ordered trace; `-` for standard input (copied into the spill directory,
    /// --tmpdir: it is read twice).
    pub input: String,
    /// Search directives: prune, priority and threshold lines (formats/diagnose.md).
    #[arg(long, value_name = "FILE")]
    pub directives: Option<std::path::PathBuf>,
    /// A hypothesis's threshold at every focus, as a share of the focus's time
    /// (repeatable; a directive for a focus still wins there).
    #[arg(long, value_name = "HYPOTHESIS=SHARE")]
    pub threshold: Vec<String>,
    /// Equal time slices the when axis splits the run into (besides its phases).
    #[arg(long, value_name = "K", default_value_t = 4)]
    pub slices: usize,
    /// The most hypothesis-focus pairs tested.
    #[arg(long, value_name = "N", default_value_t = 20_000)]
    pub max_tests: usize,
    /// Findings, bottlenecks and annotations shown in the text form.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Time windows of the peer comparison.
    #[arg(long, value_name = "K", default_value_t = 8)]
    pub peer_windows: usize,
    /// Distance from the peers' median busy share that starts an annotation.
    #[arg(long, value_name = "SHARE", default_value_t = 0.25)]
    pub peer_enter: f64,
    /// Distance from the peers' median busy share under which an annotation ends (at most
    /// --peer-enter: hysteresis).
    #[arg(long, value_name = "SHARE", default_value_t = 0.10)]
    pub peer_leave: f64,
    /// A peer group of your own (repeatable): NAME=PROCESS,PROCESS,... (the trace's
    /// process names); its members are compared with each other, the other processes
    /// keep the roles found for them.
    #[arg(long = "peer-group", value_name = "NAME=PROCESSES")]
    pub peer_groups: Vec<String>,
    /// Print the Search History Graph's true nodes as a tree after the findings.
    #[arg(long)]
    pub tree: bool,
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
    /// The memory the wait states may take (bytes, or with K, M or G; 0: none). A trace
    /// whose wait states would take more (about 24 bytes an event) has them kept in a
    /// file in --tmpdir, as is the graph where a fix's gain needs it whole (about 32): the
    /// same results, in memory bounded by what is in flight.
    /// Default: half of what this machine (or its cgroup, or SPOOR_MEMORY_LIMIT) has
    /// available.
    #[arg(long, value_name = "SIZE", value_parser = spoor_cli::memory_arg)]
    pub memory: Option<u64>,
    /// Keep what goes to disk (standard input, read twice; the wait states and the
    /// graph, past --memory) in a directory of its own inside DIR, removed at the end [default:
    /// $TMPDIR, else /tmp].
    #[arg(long, value_name = "DIR")]
    pub tmpdir: Option<std::path::PathBuf>,
    /// At the end, print the peak resident memory and the disk used to spare memory on standard error.
    #[arg(short, long)]
    pub verbose: bool,
}
