//! The command line of spoor-whatif, shared with `spoor man` and `spoor completions`.

use clap::{Parser, ValueEnum};

pub const ABOUT: &str = "\
--scenarios FILE (formats/scenarios.md): every combination of the file's placements, networks
(communication-cost tables), procedure moves and zeroings is predicted (process LBF on the
Group Activity Graph, NF, procedure LBF, critical-path zeroing of a procedure with everything
it calls): one row each with the
predicted time and its change against the measured time (the run's elapsed time) and the ideal
time (the cpu-mode critical path). The trace is read once; scenarios run in parallel.
--procedure F: procedure LBF (F moved from the sending to the receiving side of every message
it precedes) beside critical-path zeroing of F, as the LBF paper's Figure 10: exclusive (F's
own time) and inclusive (F with everything it calls, which a move carries along), and the
move's saving as a share of the inclusive zeroing's.
--search K: a placement of the processes on K processors, greedy then local search, beside
block and cyclic placement.";

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// A header line, then one row per scenario, procedure or strategy.
    Csv,
    /// An array of objects with the same names.
    Json,
}

pub const EXAMPLES: &str = "\
Examples:
  spoor-whatif --scenarios sweep.toml run.o         every combination in the file
  spoor-whatif --procedure servBusy2 run.o          move it to the clients, or zero it
  spoor-whatif --procedure solve --place-by block:2 run.o
  spoor-whatif --search 4 --net host.csv -f json run.o";

/// What-if predictions: scenario sweeps, procedure LBF, placement search.
#[derive(Parser)]
#[command(name = "spoor-whatif", version, after_help = EXAMPLES, after_long_help = format!("{ABOUT}\n\n{EXAMPLES}"))]
pub struct Args {
    /// An ordered trace or a PAG file in cpu mode; `-` for standard input (default: the
    /// scenario file's `input`, else standard input).
    pub input: Option<String>,
    /// A scenario file (TOML, formats/scenarios.md).
    #[arg(long, value_name = "FILE")]
    pub scenarios: Option<String>,
    /// Procedure LBF of this procedure (moved from the sending to the receiving side of
    /// its messages) beside its zeroing, exclusive and inclusive. Repeatable.
    #[arg(long, value_name = "NAME")]
    pub procedure: Vec<String>,
    /// Search a placement of the processes on K processors (at least 1).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub search: Option<u32>,
    /// Rounds of local search at most (for --search).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub rounds: u32,
    /// For --procedure: the placement to predict on, as processes per processor `a,b;c,d`
    /// (default: one processor per process, the cpu-mode critical path).
    #[arg(long, value_name = "SPEC")]
    pub place: Option<String>,
    /// For --procedure: the placement from a file (formats/placement.md).
    #[arg(long, value_name = "FILE")]
    pub place_file: Option<String>,
    /// For --procedure: the placement by a rule: process, machine, block:K or cyclic:K.
    #[arg(long, value_name = "RULE")]
    pub place_by: Option<String>,
    /// For --search: message-arc weights from this communication-cost table
    /// (formats/nettable.md).
    #[arg(long, value_name = "TABLE")]
    pub net: Option<String>,
    /// Output form.
    #[arg(short, long, value_enum, default_value = "csv")]
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
}
