//! The command line of spoor-synth, shared with `spoor man` and `spoor completions`.

use clap::builder::PossibleValue;
use clap::{Parser, ValueEnum};
use spoor_format::WriterOptions;
use spoor_synth::Workload;
use std::path::PathBuf;

/// A workload on the command line, described by the library's own text.
#[derive(Clone, Copy)]
pub struct WorkloadArg(pub Workload);

impl ValueEnum for WorkloadArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [WorkloadArg; 6] = [
            WorkloadArg(Workload::ALL[0]),
            WorkloadArg(Workload::ALL[1]),
            WorkloadArg(Workload::ALL[2]),
            WorkloadArg(Workload::ALL[3]),
            WorkloadArg(Workload::ALL[4]),
            WorkloadArg(Workload::ALL[5]),
        ];
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.0.about()))
    }
}

pub const SIMULATION: &str = "\
Simulation: one time base from 0, which every clock reads as it is but with --clock-offset and
--clock-drift (then machine m's clock reads t as t + offset_m + round(drift_m * t); machine 0's
as t). Computing and the --call-cost of each MPI call advance wall and CPU time alike; waiting in
a receive, a wait or a collective advances wall time only. Sends are eager. A message sent at t
arrives at t + latency + ceil(bytes / bandwidth); a receive ends at the later of its begin and
the arrival. A collective ends for all members at the latest begin plus ceil(log2 P) transfer
rounds (two per round for the 8-byte allreduce). Compute times are mean * (1 + imbalance * u),
u uniform in [-1, 1) from the seed. Each application has its own processes and communicator
MPI_COMM_WORLD; all share the machines, on which ranks are placed block-wise (machines label
placement and carry the clocks: every process is simulated with a processor of its own). The
same options always give the same bytes.";

pub const EXAMPLES: &str = "\
Examples:
  spoor-synth spa -o spa.spoor                      the LBF paper's client/server
  spoor-synth stencil --procs 64 --events 1000000 -o big.spoor
  spoor-synth ring --text --procs 3 --steps 2
  spoor-synth master-worker --apps 2 --machines 4 --kernels 8 -o mw.spoor
  spoor-synth stencil --procs 16 --extra-work late:5:2000000   rank 5 late by 2 ms a step
  spoor-synth barrier --serialize 1000000 --hot-lock 500000
  spoor-synth pipeline --procs 4 --slow-link 1-2:3000000
  spoor-synth stencil --procs 16 --clock-offset 50000 --clock-drift 20   clocks for spoor-align
  spoor-synth stencil --procs 1024 --events 100000000 --split run/   one file per process";

/// Write a synthetic trace: client/server (the LBF paper's SPA), SPMD ring and stencil,
/// master/worker, pipeline or barrier loop, at any size, with known answers.
#[derive(Parser)]
#[command(name = "spoor-synth", version, after_help = EXAMPLES, after_long_help = format!("{SIMULATION}\n\n{EXAMPLES}"))]
pub struct Args {
    /// The program to simulate.
    #[arg(value_enum)]
    pub workload: WorkloadArg,
    /// Processes per application (spa and master-worker: including the server or master).
    #[arg(short, long, default_value_t = 4)]
    pub procs: u32,
    /// Steps: iterations (ring, stencil, barrier), items (pipeline), requests per client
    /// (spa), tasks per worker (master-worker).
    #[arg(short, long, default_value_t = 10, conflicts_with = "events")]
    pub steps: u64,
    /// Choose the number of steps that gives about this many events in all.
    #[arg(short, long)]
    pub events: Option<u64>,
    /// Mean compute time per step, ns.
    #[arg(long, value_name = "NS", default_value_t = 1_000_000)]
    pub compute: u64,
    /// Relative spread of compute times, 0 to 1, drawn per process and step.
    #[arg(long, value_name = "F", default_value_t = 0.1)]
    pub imbalance: f64,
    /// Size of every point-to-point message, bytes.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub bytes: u64,
    /// Seed of the deterministic random draws.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Independent applications in the trace, named WORKLOAD-0, WORKLOAD-1, ...
    #[arg(long, default_value_t = 1)]
    pub apps: u32,
    /// Machines the ranks are placed on, block-wise [default: one per rank].
    #[arg(long)]
    pub machines: Option<u32>,
    /// Fixed cost of a message transfer, ns.
    #[arg(long, value_name = "NS", default_value_t = 2_000)]
    pub latency: u64,
    /// Transfer rate, bytes per ns.
    #[arg(long, value_name = "B", default_value_t = 1.0)]
    pub bandwidth: f64,
    /// Time of each MPI call outside its waiting, ns (CPU and wall).
    #[arg(long, value_name = "NS", default_value_t = 200)]
    pub call_cost: u64,
    /// Split the main compute procedure into K procedures called in turn, NAME_1 to
    /// NAME_K, the i-th taking a share of each compute time proportional to K + 1 - i
    /// (more procedures for profiles and zeroing; times are the same for any K).
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub kernels: u32,
    /// Inject extra work with a known answer: after each main compute of RANKS, NS more
    /// in procedure PROC (repeatable; RANKS like `0,3-5`). Not for master-worker.
    #[arg(long, value_name = "PROC:RANKS:NS")]
    pub extra_work: Vec<String>,
    /// barrier only: a serialization point before each barrier, the ranks passing a token
    /// in rank order and each working NS in procedure `serial` while holding it.
    #[arg(long, value_name = "NS", default_value_t = 0)]
    pub serialize: u64,
    /// barrier only: a hot lock before each barrier, every rank holding lock 1 for NS in
    /// procedure `critical`.
    #[arg(long, value_name = "NS", default_value_t = 0)]
    pub hot_lock: u64,
    /// A slow link: every message between ranks A and B (either way) takes NS more.
    #[arg(long, value_name = "A-B:NS")]
    pub slow_link: Option<String>,
    /// Clocks that disagree: every machine but the first reads its time off by an
    /// offset drawn from the seed within +-NS (at most an hour); its processes share it.
    #[arg(long, value_name = "NS", default_value_t = 0)]
    pub clock_offset: u64,
    /// Clocks that drift: every machine but the first runs fast or slow by a drift drawn
    /// from the seed within +-PPM parts per million (at most 1000).
    #[arg(long, value_name = "PPM", default_value_t = 0.0)]
    pub clock_drift: f64,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Write one trace per process into this directory instead (APP.RANK.spoor, as
    /// spoor-record writes a run: each with the whole program's definitions, its own
    /// events only), for spoor-merge to join. Made if missing; every file complete or
    /// none at all.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["output", "text"])]
    pub split: Option<PathBuf>,
    /// Write the text form instead of the binary format.
    #[arg(long)]
    pub text: bool,
    /// Events per block of the binary format.
    #[arg(long, value_name = "N", default_value_t = WriterOptions::default().block_events)]
    pub block_events: usize,
    /// Leave out the binary format's trailing index of blocks.
    #[arg(long)]
    pub no_index: bool,
}
