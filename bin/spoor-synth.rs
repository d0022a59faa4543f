//! spoor-synth: synthetic workload traces with known answers (the spoor-synth crate).

use anyhow::Context;
use clap::builder::PossibleValue;
use clap::{CommandFactory, Parser, ValueEnum};
use spoor_cli::{Output, Progress};
use spoor_format::{text, TraceWriter, WriterOptions};
use spoor_model::{Definitions, Event};
use spoor_synth::{ExtraWork, Sink, Spec, SpecError, Workload};
use std::io::{self, Write};
use std::path::PathBuf;

/// A workload on the command line, described by the library's own text.
#[derive(Clone, Copy)]
struct WorkloadArg(Workload);

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

const SIMULATION: &str = "\
Simulation: one time base from 0 (no clock offsets). Computing and the --call-cost of each MPI
call advance wall and CPU time alike; waiting in a receive, a wait or a collective advances wall
time only. Sends are eager. A message sent at t arrives at t + latency + ceil(bytes / bandwidth);
a receive ends at the later of its begin and the arrival. A collective ends for all members at
the latest begin plus ceil(log2 P) transfer rounds (two per round for the 8-byte allreduce).
Compute times are mean * (1 + imbalance * u), u uniform in [-1, 1) from the seed. Each
application has its own processes and communicator MPI_COMM_WORLD; all share the machines,
on which ranks are placed block-wise (machines only label placement: every process is simulated
with a processor of its own). The same options always give the same bytes.";

/// Write a synthetic trace: client/server (the LBF paper's SPA), SPMD ring and stencil,
/// master/worker, pipeline or barrier loop, at any size, with known answers.
#[derive(Parser)]
#[command(name = "spoor-synth", version, after_long_help = SIMULATION)]
struct Args {
    /// The program to simulate.
    #[arg(value_enum)]
    workload: WorkloadArg,
    /// Processes per application (spa and master-worker: including the server or master).
    #[arg(short, long, default_value_t = 4)]
    procs: u32,
    /// Steps: iterations (ring, stencil, barrier), items (pipeline), requests per client
    /// (spa), tasks per worker (master-worker).
    #[arg(short, long, default_value_t = 10, conflicts_with = "events")]
    steps: u64,
    /// Choose the number of steps that gives about this many events in all.
    #[arg(short, long)]
    events: Option<u64>,
    /// Mean compute time per step, ns.
    #[arg(long, value_name = "NS", default_value_t = 1_000_000)]
    compute: u64,
    /// Relative spread of compute times, 0 to 1, drawn per process and step.
    #[arg(long, value_name = "F", default_value_t = 0.1)]
    imbalance: f64,
    /// Size of every point-to-point message, bytes.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    bytes: u64,
    /// Seed of the deterministic random draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Independent applications in the trace, named WORKLOAD-0, WORKLOAD-1, ...
    #[arg(long, default_value_t = 1)]
    apps: u32,
    /// Machines the ranks are placed on, block-wise [default: one per rank].
    #[arg(long)]
    machines: Option<u32>,
    /// Fixed cost of a message transfer, ns.
    #[arg(long, value_name = "NS", default_value_t = 2_000)]
    latency: u64,
    /// Transfer rate, bytes per ns.
    #[arg(long, value_name = "B", default_value_t = 1.0)]
    bandwidth: f64,
    /// Time of each MPI call outside its waiting, ns (CPU and wall).
    #[arg(long, value_name = "NS", default_value_t = 200)]
    call_cost: u64,
    /// Split the main compute procedure into K procedures called in turn, NAME_1 to
    /// NAME_K, the i-th taking a share of each compute time proportional to K + 1 - i
    /// (more procedures for profiles and zeroing; times are the same for any K).
    #[arg(long, value_name = "K", default_value_t = 1)]
    kernels: u32,
    /// Inject extra work with a known answer: after each main compute of RANKS, NS more
    /// in procedure PROC (repeatable; RANKS like `0,3-5`). Not for master-worker.
    #[arg(long, value_name = "PROC:RANKS:NS")]
    extra_work: Vec<String>,
    /// barrier only: a serialization point before each barrier, the ranks passing a token
    /// in rank order and each working NS in procedure `serial` while holding it.
    #[arg(long, value_name = "NS", default_value_t = 0)]
    serialize: u64,
    /// barrier only: a hot lock before each barrier, every rank holding lock 1 for NS in
    /// procedure `critical`.
    #[arg(long, value_name = "NS", default_value_t = 0)]
    hot_lock: u64,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Write the text form instead of the binary format.
    #[arg(long)]
    text: bool,
    /// Events per block of the binary format.
    #[arg(long, value_name = "N", default_value_t = WriterOptions::default().block_events)]
    block_events: usize,
    /// Leave out the binary format's trailing index of blocks.
    #[arg(long)]
    no_index: bool,
}

impl Args {
    fn spec(&self) -> Result<Spec, SpecError> {
        let mut spec = Spec {
            workload: self.workload.0,
            procs: self.procs,
            steps: self.steps,
            compute_ns: self.compute,
            imbalance: self.imbalance,
            bytes: self.bytes,
            seed: self.seed,
            apps: self.apps,
            machines: self.machines,
            latency_ns: self.latency,
            bandwidth: self.bandwidth,
            call_ns: self.call_cost,
            kernels: self.kernels,
            extra: self.extra_work.iter().map(|x| ExtraWork::parse(x)).collect::<Result<_, _>>()?,
            serial_ns: self.serialize,
            hot_lock_ns: self.hot_lock,
        };
        if let Some(n) = self.events {
            spec.steps = spec.steps_for_events(n);
        }
        spec.validate()?;
        Ok(spec)
    }
}

/// Writes each event in the chosen form and counts it on the progress bar.
struct WriteSink<'a, W: Write> {
    out: Form<'a, W>,
    progress: &'a Progress,
}

enum Form<'a, W: Write> {
    Binary(TraceWriter<W>),
    Text(W, &'a Definitions),
}

impl<W: Write> Sink for WriteSink<'_, W> {
    fn event(&mut self, ev: Event) -> io::Result<()> {
        self.progress.add(1);
        match &mut self.out {
            Form::Binary(w) => w.write(&ev),
            Form::Text(out, defs) => text::write_event(out, defs, &ev),
        }
    }
}

fn main() {
    let args = Args::parse();
    let spec = args
        .spec()
        .unwrap_or_else(|e| Args::command().error(clap::error::ErrorKind::ValueValidation, e).exit());
    spoor_cli::run("spoor-synth", || {
        let defs = spoor_synth::definitions(&spec);
        let mut out = Output::create(args.output.as_deref())?;
        let progress = Progress::new("events", Some(spec.event_count()));
        let form = if args.text {
            text::write_header(&mut out)?;
            text::write_definitions(&mut out, &defs)?;
            Form::Text(&mut out, &defs)
        } else {
            let opts = WriterOptions {
                block_events: args.block_events.max(1),
                index: !args.no_index,
                ..WriterOptions::default()
            };
            Form::Binary(TraceWriter::new(&mut out, &defs, opts).context("writing the trace")?)
        };
        let mut sink = WriteSink { out: form, progress: &progress };
        spoor_synth::generate(&spec, &mut sink).context("writing the trace")?;
        if let Form::Binary(w) = sink.out {
            w.finish().context("writing the trace")?;
        }
        progress.finish();
        out.commit()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_library() {
        for w in Workload::ALL {
            let args = Args::try_parse_from(["spoor-synth", w.name()]).unwrap();
            assert_eq!(args.spec().unwrap(), Spec::new(w));
        }
    }

    #[test]
    fn cli_is_consistent() {
        Args::command().debug_assert();
    }
}
