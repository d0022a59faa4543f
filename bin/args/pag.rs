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
    /// The memory the graph may take (bytes, or with K, M or G; 0: none). The PAG of a
    /// trace whose graph would take more is written as it is built, its nodes and arcs
    /// spilled to --tmpdir on the way: the same file, in about 1.1 bytes of memory an
    /// event (standard input, or a pipe, is first copied there too); with --dump or
    /// --net, the graph is kept in a file there. Default: half of what this machine (or its cgroup, or
    /// SPOOR_MEMORY_LIMIT) has available.
    #[arg(long, value_name = "SIZE", value_parser = spoor_cli::memory_arg)]
    pub memory: Option<u64>,
    /// Where the spilled nodes and arcs (or graph), and a copy of standard input, go (a directory
    /// of their own, removed however the command ends). Default: $TMPDIR, else /tmp.
    #[arg(long, value_name = "DIR")]
    pub tmpdir: Option<std::path::PathBuf>,
    /// Print the graph as text, one node or arc a line, instead of writing the PAG file.
    #[arg(long)]
    pub dump: bool,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    pub output: Option<std::path::PathBuf>,
    /// Say nothing on standard error unless something is wrong.
    #[arg(short, long)]
    pub quiet: bool,
    /// At the end, print the peak resident memory and the disk used to spare memory on standard error.
    #[arg(short, long)]
    pub verbose: bool,
}
