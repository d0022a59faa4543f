//! The command line of spoor-pag, shared with `spoor man` and `spoor completions`.

use clap::Parser;
use spoor_graph::Mode;

pub const ABOUT: &str = "\
Nodes are the trace's events in causal order (plus a virtual node per collective instance);
each has the local arc from its location's previous event, weighed by process time (cpu mode:
waiting weighs nothing) or elapsed time (wall mode). Remote arcs join sends to receives,
collective begins to ends, lock releases to acquisitions, parents to spawned processes.
formats/pag.md gives the cost model and the file format. spoor-cp reads the result.";

pub const EXAMPLES: &str = "\
Examples:
  spoor-pag run.o -o run.pag && spoor-cp run.pag
  spoor-pag --weight wall --net host.csv -o wall.pag run.o
  spoor-pag --dump run.o | less";

/// Build the Program Activity Graph of an ordered trace.
#[derive(Parser)]
#[command(name = "spoor-pag", version, after_help = EXAMPLES, after_long_help = format!("{ABOUT}\n\n{EXAMPLES}"))]
pub struct Args {
    /// An ordered trace (spoor-order's output); `-` for standard input.
    #[arg(default_value = "-")]
    pub input: String,
    /// Local-arc weights: process time (cpu: waiting weighs nothing) or elapsed time (wall).
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
    /// Print the graph as text, one node or arc a line, instead of writing the PAG file.
    #[arg(long)]
    pub dump: bool,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    pub output: Option<std::path::PathBuf>,
    /// Say nothing on standard error unless something is wrong.
    #[arg(short, long)]
    pub quiet: bool,
    /// At the end, print the peak resident memory on standard error.
    #[arg(short, long)]
    pub verbose: bool,
}
