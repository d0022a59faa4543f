//! The command line of spoor-gag, shared with `spoor man` and `spoor completions`.

use clap::Parser;

pub const ABOUT: &str = "\
The events of every process placed on one processor run there in the order the LBF paper's
algorithm gives them: runnable processes share the processor equally (round robin with an
infinitely small quantum), a receive ends at the later of its local readiness and its send's
time plus the transfer time, and collectives, locks and spawns wait for their remote arcs the
same way. The output is a PAG file (formats/pag.md) whose locations are the processors: its
cpu-mode critical path (spoor-cp) is the predicted time. With --net, message arcs weigh the
table's time, local when both ends share a processor (the networking factor).
Placements: --place 'a,b;c,d' (processes by name, processors separated by `;`), a file
(formats/placement.md), or a rule: process (one processor each), machine (as recorded),
block:K, cyclic:K, recorded (where the run was recorded).
The prediction covers the stretch --phase or --window names (spoor-cp's options: the events
within it, each process starting with its share of the arc that crosses the stretch's start);
without them, an MPI run is predicted from the last MPI_Init's return to the last
MPI_Finalize's entry, as start-up and shutdown are no model's to predict.
Every prediction has an interval: the prediction at the speed of the fastest and the slowest
tenth of the recording's repeated computation (formats/scenarios.md, \"Intervals\").";

pub const EXAMPLES: &str = "\
Examples:
  spoor-gag --predict --place 'server;client1,client2,client3' run.o
  spoor-gag --predict --place-by block:4 --net host.csv run.o
  spoor-gag --predict --place-by block:4 --net tcp.csv --local never run.o   TCP even within a node
  spoor-gag --predict --place-by process --phase solve run.o      the phase `solve` only
  spoor-gag --place-file nodes.txt -o run.gag run.o && spoor-cp run.gag";

/// Predict a run on another placement of its processes: the Group Activity Graph.
#[derive(Parser)]
#[command(name = "spoor-gag", version, after_help = EXAMPLES, after_long_help = format!("{ABOUT}\n\n{EXAMPLES}"))]
pub struct Args {
    /// An ordered trace or a PAG file in cpu mode; `-` for standard input.
    #[arg(default_value = "-")]
    pub input: String,
    /// Processes per processor: `a,b;c,d`.
    #[arg(long, value_name = "SPEC")]
    pub place: Option<String>,
    /// A placement file (formats/placement.md).
    #[arg(long, value_name = "FILE")]
    pub place_file: Option<String>,
    /// process, machine, block:K, cyclic:K or recorded (the placement the run was recorded under).
    #[arg(long, value_name = "RULE")]
    pub place_by: Option<String>,
    /// The network: `ideal`, a model (FILE.toml, formats/network.md) or a communication-cost table (formats/nettable.md)
    #[arg(long, value_name = "TABLE")]
    pub net: Option<String>,
    /// Which messages take the table's local time: processor (both ends share a processor of the placement),
    /// machine (both ends on one machine) or never (every message remote). Default:
    /// processor.
    #[arg(long, value_name = "WHERE", requires = "net", value_parser = spoor_graph::Local::parse)]
    pub local: Option<spoor_graph::Local>,
    /// Predict only this phase: from its first begin to its last end.
    #[arg(long, value_name = "NAME")]
    pub phase: Option<String>,
    /// Predict only the events within T0..T1, times from the trace's first event (like 2ms,
    /// 1.5s, 300us, or nanoseconds); @T0..T1 for absolute times (the trace's own clock).
    /// Without --window or --phase, an MPI run is predicted from the last MPI_Init's return
    /// to the last MPI_Finalize's entry (said on standard error).
    #[arg(long, value_name = "[@]T0..T1")]
    pub window: Option<String>,
    /// What a process waiting for a message or collective does on a shared processor:
    /// `yield` it (the LBF paper's model), or `spin` on it, taking its share, as MPI
    /// libraries do (formats/placement.md, "Waiting").
    #[arg(long, value_name = "yield|spin", default_value = "yield")]
    pub waits: spoor_whatif::Waits,
    /// Which message a blocking receive for any source takes: the one it took when the
    /// trace was recorded, or, in a server loop (each request served and answered
    /// before the next), the first request to arrive, its service moving with it
    /// (formats/placement.md, "Requests from any source").
    #[arg(long, value_name = "recorded|arrival", default_value = "recorded")]
    pub wildcards: spoor_whatif::Wildcards,
    /// How the runnable processes of one processor share it: `equal`ly at every instant
    /// (the LBF paper's model), or one at a time in `slices` of CPU time, as a
    /// time-sharing kernel runs them (`slices:6ms`, the default slice; formats/placement.md,
    /// "Sharing").
    #[arg(long, value_name = "equal|slices[:T]", default_value = "equal")]
    pub sharing: spoor_whatif::Sharing,
    /// Print the predicted time instead of writing the GAG.
    #[arg(long)]
    pub predict: bool,
    /// Print the GAG as text, one node or arc a line, instead of writing it.
    #[arg(long)]
    pub dump: bool,
    /// The memory the graph may take (bytes, or with K, M or G; 0: none). A trace or PAG
    /// whose graph would take more keeps it in a file in --tmpdir instead, the same
    /// results more slowly, its pages let go as the passes over it move on. Default: half
    /// of what this machine (or its cgroup, or SPOOR_MEMORY_LIMIT) has available.
    #[arg(long, value_name = "SIZE", value_parser = spoor_cli::memory_arg)]
    pub memory: Option<u64>,
    /// Where a graph larger than --memory is kept, in a directory of its own removed
    /// however the command ends. Default: $TMPDIR, else /tmp.
    #[arg(long, value_name = "DIR")]
    pub tmpdir: Option<std::path::PathBuf>,
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
