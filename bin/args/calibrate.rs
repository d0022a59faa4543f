//! The command line of spoor-calibrate, shared with `spoor man` and `spoor completions`.

use clap::{Parser, ValueEnum};

pub const ABOUT: &str = "\
Without --from-trace, --collectives or --mpi, ping-pong on this host: the local column over a UNIX
socket pair, the remote column over TCP on loopback, each the median of half the round trips
for every message size (the LBF paper's lookup table).

With --from-trace FILE, fitted from the trace's messages (local as --local says): a table of
the median measured transfer time per size class (powers of two), or with --form model (or an
output file ending in .toml) a network model (formats/network.md): latency + bytes / bandwidth
by least squares, remote and local apart. Both say how well that line fits (R^2, the median
relative error); the model warns when it fits poorly, and sets links_in = 1 and links_out = 1
when messages that overlapped another transfer on the same link took at least 1.5x as long a
byte as those that did not (the link was saturated).

With --collectives, MPI's collective operations timed for real (mpicc and mpirun on PATH):
barrier, bcast, reduce, allreduce, gather, scatter, allgather and alltoall for each process
count and size, the median of --reps repetitions of the slowest rank's time after a barrier,
as the collective table of formats/network.md (op,procs,bytes,ns).

With --mpi, the table measured with real MPI (mpicc and mpirun on PATH): an MPI_Send/MPI_Recv
ping-pong between ranks 0 and 1, half the median of --reps round trips per size after a few
warm-ups. The local column has both ranks on this host (mpirun -np 2); the remote column has
them on the two hosts of --hosts A,B (mpirun -np 2 --host A,B --preload-binary: Open MPI
copies the program there), or without --hosts repeats the local column, saying so.

spoor-pag, spoor-cp, spoor-gag and spoor-whatif read the results with --net.";

pub const EXAMPLES: &str = "\
Examples:
  spoor-calibrate -o host.csv                       ping-pong on this host
  spoor-calibrate --sizes 64,4096,65536 --reps 500 -o host.csv
  spoor-calibrate --from-trace run.o -o fitted.csv  a table fitted from the trace's messages
  spoor-calibrate --from-trace run.o -o net.toml    a network model fitted from them
  spoor-calibrate --from-trace run.o --local never -o net.toml
                                                    every message remote (network namespaces)
  spoor-calibrate --collectives --procs 2,4,8 -o coll.csv
  spoor-calibrate --mpi --hosts node1,node2 -o mpi.csv
                                                    MPI ping-pong, remote between two hosts
  spoor-gag --predict --place-by block:2 --net host.csv run.o";

/// What --from-trace writes.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Form {
    /// A communication-cost table (formats/nettable.md).
    Table,
    /// A network model (formats/network.md).
    Model,
}

/// Measure or fit a communication-cost table, a network model or a collective table.
#[derive(Parser)]
#[command(name = "spoor-calibrate", version, after_help = EXAMPLES, after_long_help = format!("{ABOUT}\n\n{EXAMPLES}"))]
pub struct Args {
    /// Fit the table or model from this ordered trace or PAG file instead of measuring.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["collectives", "mpi"])]
    pub from_trace: Option<String>,
    /// With --from-trace: which messages are local: processor (both ends in one process),
    /// machine (both ends on one machine) or never (every message remote). Default:
    /// machine.
    #[arg(long, value_name = "WHERE", requires = "from_trace", value_parser = spoor_graph::Local::parse)]
    pub local: Option<spoor_graph::Local>,
    /// With --from-trace: write a table or a model. Default: a model when the output file
    /// ends in .toml, otherwise a table.
    #[arg(long, value_enum, requires = "from_trace")]
    pub form: Option<Form>,
    /// Time MPI's collective operations (needs mpicc and mpirun) instead of ping-pong.
    #[arg(long, conflicts_with = "mpi")]
    pub collectives: bool,
    /// With --collectives: process counts, comma-separated. Default: 2,4.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        requires = "collectives",
        conflicts_with = "mpi"
    )]
    pub procs: Option<Vec<usize>>,
    /// Measure the table with an MPI_Send/MPI_Recv ping-pong (needs mpicc and mpirun).
    #[arg(long)]
    pub mpi: bool,
    /// With --mpi: the two hosts of the remote column, comma-separated (rank 0 on the
    /// first, rank 1 on the second). Default: none, the remote column repeats the local one.
    #[arg(long, value_name = "A,B", value_delimiter = ',', requires = "mpi")]
    pub hosts: Option<Vec<String>>,
    /// Message sizes in bytes, comma-separated (with --collectives, the most one process
    /// sends or receives; default 8,64,256,1024,4096,16384,65536).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub sizes: Option<Vec<usize>>,
    /// Round trips per size, after a few warm-ups (with --collectives: repetitions per operation and size).
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub reps: usize,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    pub output: Option<std::path::PathBuf>,
    /// Say nothing on standard error unless something is wrong.
    #[arg(short, long)]
    pub quiet: bool,
}
