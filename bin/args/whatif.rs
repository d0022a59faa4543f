//! The command line of spoor-whatif, shared with `spoor man` and `spoor completions`.

use clap::{Parser, Subcommand, ValueEnum};

pub const ABOUT: &str = "\
Three modes, one subcommand each: `scenarios` predicts every combination of a scenario file's
placements, networks, procedure moves and zeroings; `procedure` sets procedure LBF beside
critical-path zeroing; `search` looks for a good placement on K processors. Each reads an
ordered trace or a PAG file in cpu mode; times are integer nanoseconds (formats/scenarios.md).
Every mode predicts the stretch --phase or --window names (spoor-cp's options), and its measured
time is that stretch's; without them, an MPI run is predicted from the last MPI_Init's return to
the last MPI_Finalize's entry, as start-up and shutdown are no model's to predict.";

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// A header line, then one row per scenario, procedure or strategy.
    Csv,
    /// An array of objects with the same names.
    Json,
}

pub const EXAMPLES: &str = "\
Examples:
  spoor-whatif scenarios sweep.toml run.o           every combination in the file
  spoor-whatif procedure servBusy2 run.o            move it to the clients, or zero it
  spoor-whatif procedure solve --place-by block:2 run.o
  spoor-whatif search 4 --net host.csv -f json run.o
  spoor-whatif scenarios sweep.toml --window 2s..5s run.o   from 2 s to 5 s after the start";

pub const SCENARIOS_ABOUT: &str = "\
Every combination of the file's placements, networks (communication-cost tables), procedure
moves and zeroings is predicted (process LBF on the Group Activity Graph, NF, procedure LBF,
critical-path zeroing of a procedure with everything it calls): one row each with the
predicted time and its change against the measured time (the run's elapsed time) and the ideal
time (the cpu-mode critical path). The trace is read once; scenarios run in parallel.
Placements and networks come from the file alone.";

pub const SCENARIOS_EXAMPLES: &str = "\
Examples:
  spoor-whatif scenarios sweep.toml run.o
  spoor-whatif scenarios sweep.toml              the trace the file names as `input`
  spoor-whatif scenarios sweep.toml -f json -o rows.json run.o";

pub const PROCEDURE_ABOUT: &str = "\
Procedure LBF (the procedure moved from the sending to the receiving side of every message it
precedes) beside critical-path zeroing of it, as the LBF paper's Figure 10: exclusive (its own
time) and inclusive (with everything it calls, which a move carries along), and the move's
saving as a share of the inclusive zeroing's. One row per procedure.";

pub const PROCEDURE_EXAMPLES: &str = "\
Examples:
  spoor-whatif procedure servBusy2 run.o
  spoor-whatif procedure servBusy1,servBusy2 run.o     one row each
  spoor-whatif procedure solve --place-by block:2 run.o";

pub const SEARCH_ABOUT: &str = "\
A placement of the processes on K processors: greedy, then local search from it, beside block
and cyclic placement, each with its predicted time (process LBF on the Group Activity Graph).";

pub const SEARCH_EXAMPLES: &str = "\
Examples:
  spoor-whatif search 2 run.o
  spoor-whatif search 4 --net host.csv -f json run.o
  spoor-whatif search 8 --rounds 50 run.o";

/// What-if predictions: scenario sweeps, procedure LBF, placement search.
#[derive(Parser)]
#[command(name = "spoor-whatif", version, after_help = EXAMPLES, after_long_help = format!("{ABOUT}\n\n{EXAMPLES}"))]
pub struct Args {
    #[command(subcommand)]
    pub mode: Mode,
    /// Output form.
    #[arg(short, long, value_enum, default_value = "csv", global = true)]
    pub format: Format,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long, global = true)]
    pub output: Option<std::path::PathBuf>,
    /// The memory the graph may take (bytes, or with K, M or G; 0: none). A trace or PAG
    /// whose graph would take more keeps it in a file in --tmpdir instead, the same
    /// results more slowly, its pages let go as the passes over it move on. Default: half
    /// of what this machine (or its cgroup, or SPOOR_MEMORY_LIMIT) has available.
    #[arg(long, value_name = "SIZE", value_parser = spoor_cli::memory_arg, global = true)]
    pub memory: Option<u64>,
    /// Where a graph larger than --memory is kept, in a directory of its own removed
    /// however the command ends. Default: $TMPDIR, else /tmp.
    #[arg(long, value_name = "DIR", global = true)]
    pub tmpdir: Option<std::path::PathBuf>,
    /// Worker threads (default: all cores); results do not depend on it.
    #[arg(long, value_name = "N", global = true)]
    pub threads: Option<usize>,
    /// Say nothing on standard error unless something is wrong.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Predict only this phase: from its first begin to its last end.
    #[arg(long, value_name = "NAME", global = true)]
    pub phase: Option<String>,
    /// Predict only the events within T0..T1, times from the trace's first event (like 2ms,
    /// 1.5s, 300us, or nanoseconds); @T0..T1 for absolute times (the trace's own clock).
    /// Without --window or --phase, an MPI run is predicted from the last MPI_Init's return
    /// to the last MPI_Finalize's entry (said on standard error).
    #[arg(long, value_name = "[@]T0..T1", global = true)]
    pub window: Option<String>,
    /// What a process waiting for a message or collective does on a shared processor:
    /// `yield` it (the LBF paper's model), or `spin` on it, taking its share, as MPI
    /// libraries do (formats/placement.md, "Waiting").
    #[arg(long, value_name = "yield|spin", global = true, default_value = "yield")]
    pub waits: spoor_whatif::Waits,
    /// Which message a blocking receive for any source takes: the one it took when the
    /// trace was recorded, or, in a server loop (each request served and answered
    /// before the next), the first request to arrive, its service moving with it
    /// (formats/placement.md, "Requests from any source").
    #[arg(long, value_name = "recorded|arrival", default_value = "recorded", global = true)]
    pub wildcards: spoor_whatif::Wildcards,
    /// How the runnable processes of one processor share it: `equal`ly at every instant
    /// (the LBF paper's model), or one at a time in `slices` of CPU time, as a
    /// time-sharing kernel runs them (`slices:6ms`, the default slice; formats/placement.md,
    /// "Sharing").
    #[arg(long, value_name = "equal|slices[:T]", default_value = "equal", global = true)]
    pub sharing: spoor_whatif::Sharing,
    /// At the end, print the peak resident memory and the disk used to spare memory on standard error.
    #[arg(short, long)]
    pub verbose: bool,
}

#[derive(Subcommand)]
pub enum Mode {
    /// Predict every combination of a scenario file (formats/scenarios.md).
    #[command(long_about = SCENARIOS_ABOUT, after_help = SCENARIOS_EXAMPLES)]
    Scenarios(Scenarios),
    /// Procedure LBF of procedures beside their zeroing, exclusive and inclusive.
    #[command(long_about = PROCEDURE_ABOUT, after_help = PROCEDURE_EXAMPLES)]
    Procedure(Procedure),
    /// Search a placement of the processes on K processors.
    #[command(long_about = SEARCH_ABOUT, after_help = SEARCH_EXAMPLES)]
    Search(Search),
}

#[derive(clap::Args)]
pub struct Scenarios {
    /// The scenario file (TOML, formats/scenarios.md).
    #[arg(value_name = "FILE")]
    pub file: String,
    /// An ordered trace or a PAG file in cpu mode; `-` for standard input (default: the
    /// scenario file's `input`, else standard input).
    #[arg(value_name = "TRACE")]
    pub input: Option<String>,
}

#[derive(clap::Args)]
pub struct Procedure {
    /// The procedure, or several separated by commas (a name holding a comma is taken
    /// whole when the trace has a procedure of that name).
    #[arg(value_name = "NAMES")]
    pub names: String,
    /// An ordered trace or a PAG file in cpu mode; `-` for standard input.
    #[arg(value_name = "TRACE", default_value = "-")]
    pub input: String,
    /// The placement to predict on, as processes per processor `a,b;c,d` (default: one
    /// processor per process, the cpu-mode critical path).
    #[arg(long, value_name = "SPEC")]
    pub place: Option<String>,
    /// The placement from a file (formats/placement.md).
    #[arg(long, value_name = "FILE")]
    pub place_file: Option<String>,
    /// The placement by a rule: process, machine, block:K, cyclic:K or recorded (the placement the run was recorded under).
    #[arg(long, value_name = "RULE")]
    pub place_by: Option<String>,
}

#[derive(clap::Args)]
pub struct Search {
    /// The number of processors (at least 1).
    #[arg(value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub processors: u32,
    /// An ordered trace or a PAG file in cpu mode; `-` for standard input.
    #[arg(value_name = "TRACE", default_value = "-")]
    pub input: String,
    /// Rounds of local search at most.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub rounds: u32,
    /// The network: `ideal`, a model (FILE.toml, formats/network.md) or a communication-cost table (formats/nettable.md)
    #[arg(long, value_name = "TABLE")]
    pub net: Option<String>,
    /// Which messages take the table's local time: processor (both ends share a processor of the placement),
    /// machine (both ends on one machine) or never (every message remote). Default:
    /// processor.
    #[arg(long, value_name = "WHERE", requires = "net", value_parser = spoor_graph::Local::parse)]
    pub local: Option<spoor_graph::Local>,
}

/// The flags that chose the mode before the modes were subcommands, with what replaces
/// each: spoor-whatif names the new form instead of only refusing the old one.
pub const FORMER_FLAGS: [(&str, &str); 3] = [
    ("--scenarios", "spoor-whatif scenarios FILE [TRACE]"),
    ("--procedure", "spoor-whatif procedure NAME[,NAME...] [TRACE]"),
    ("--search", "spoor-whatif search K [TRACE]"),
];
