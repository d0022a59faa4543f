//! Synthetic workload traces with known answers (design.md, spoor-synth).
//!
//! A [`Spec`] names a [`Workload`] and its parameters. [`definitions`] gives the
//! trace's definitions; [`generate`] simulates the workload and hands its events to
//! a [`EventSink`], step by step, with memory proportional to the number of processes
//! (never to the number of steps), so traces of 10^9 events stream through a
//! writer as easily as traces of 10^3. The library does not depend on any trace
//! writer: the caller's sink decides where events go.
//!
//! # The simulation
//!
//! All clocks share one time base starting at 0 (no clock offsets, no drift).
//! Each process has a wall clock and a CPU clock, in nanoseconds:
//!
//! * Computing for `d` advances both clocks by exactly `d`; so does the overhead of
//!   every MPI-like call (`call_ns`, half before the call's operation event and half
//!   after it).
//! * Waiting (inside a blocking receive, a wait for requests, a collective) advances
//!   the wall clock only, so the CPU clock is constant from a `recv_begin` to its
//!   `recv_end`, from a `coll_begin` to its `coll_end`, and across the completions
//!   of a wait; CPU time never exceeds wall time.
//! * Sends are eager: a send (blocking or not) never waits for its receiver, and a
//!   non-blocking send completes as soon as it is waited for.
//! * A message sent at `t` arrives at `t + latency_ns + ceil(bytes / bandwidth)`; a
//!   receive ends at the later of its begin and the arrival (a request completes
//!   at the later of the time its wait reached it and the arrival).
//! * A collective ends for every member at the latest begin over its members plus a
//!   cost: `ceil(log2 P)` rounds of one transfer for a barrier (0 bytes), two
//!   rounds per doubling for an allreduce of 8 bytes.
//! * Machines are placement labels: processes are placed block-wise on them, but
//!   each process is simulated as if it had a processor of its own, and transfer
//!   time does not depend on placement.
//! * Compute times are `mean * (1 + imbalance * u)` with `u` uniform in [-1, 1),
//!   drawn from a stateless hash of (seed, application, what, rank or task, step),
//!   rounded to whole nanoseconds.
//!
//! Every message has exactly one matching receive with the same communicator, tag
//! and size, and messages between two processes on one tag are received in the
//! order sent (MPI's non-overtaking rule). Each application's communicator
//! `MPI_COMM_WORLD` has the id of its application and its locations as members in
//! rank order.

use spoor_format::EventSink;
use spoor_model::{CommId, Definitions, LocId};
use std::fmt;
use std::io;

pub mod rng;
mod sim;
mod workloads;

#[cfg(test)]
mod tests;

/// The synthetic programs spoor-synth can simulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    Spa,
    Ring,
    Stencil,
    MasterWorker,
    Pipeline,
    Barrier,
}

impl Workload {
    pub const ALL: [Workload; 6] = [
        Workload::Spa,
        Workload::Ring,
        Workload::Stencil,
        Workload::MasterWorker,
        Workload::Pipeline,
        Workload::Barrier,
    ];

    /// The name on the command line and in application names.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Spa => "spa",
            Workload::Ring => "ring",
            Workload::Stencil => "stencil",
            Workload::MasterWorker => "master-worker",
            Workload::Pipeline => "pipeline",
            Workload::Barrier => "barrier",
        }
    }

    pub fn from_name(s: &str) -> Option<Workload> {
        Self::ALL.iter().copied().find(|w| w.name() == s)
    }

    /// One paragraph saying what the workload does and what a step is.
    pub fn about(self) -> &'static str {
        match self {
            Workload::Spa => {
                "client/server as in the LBF paper's synthetic parallel application: rank 0 is a server, \
                 the other ranks are clients. Client 1 sends class-1 requests (tag 1), served by servBusy1; \
                 the other clients send class-2 requests (tag 2), served by servBusy2. A client computes \
                 (clientWork), sends a request and blocks for the reply; the server receives from any \
                 source, in arrival order, computes in servBusy1/servBusy2 (mean compute/2) and replies. \
                 A step is one request per client."
            }
            Workload::Ring => {
                "SPMD ring shift: every step each rank computes (ringWork), sends to rank r+1 and then \
                 receives from rank r-1 (all ranks shift at once; sends are eager, so nobody deadlocks)."
            }
            Workload::Stencil => {
                "SPMD 2-D stencil on a near-square process grid (not periodic): every step each rank \
                 computes (stencilUpdate), posts MPI_Irecv and MPI_Isend to its up to 4 neighbours, waits \
                 for all of them (MPI_Waitall) and joins an 8-byte MPI_Allreduce."
            }
            Workload::MasterWorker => {
                "rank 0 hands tasks to workers: it sends each worker a task, then receives results from \
                 any source in arrival order, does a little bookkeeping (assignTask, mean compute/10) and \
                 sends that worker the next task, or a stop message (tag 3, 0 bytes) when none is left. \
                 Workers receive, compute (workerTask) and return a result. A step is one task per worker."
            }
            Workload::Pipeline => {
                "pipeline: for each item (step), rank r receives it from rank r-1, computes (stageWork) \
                 and sends it to rank r+1; rank 0 produces items, the last rank consumes them."
            }
            Workload::Barrier => {
                "barrier loop like IPS-2's psim: every step each rank computes (simulateCycle) and then \
                 waits in MPI_Barrier."
            }
        }
    }

    /// The fewest processes per application the workload needs.
    pub fn min_procs(self) -> u32 {
        match self {
            Workload::Spa | Workload::Ring | Workload::MasterWorker => 2,
            Workload::Stencil | Workload::Pipeline | Workload::Barrier => 1,
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that determines a synthetic trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub workload: Workload,
    /// Processes per application (for spa and master-worker, including the server or master).
    pub procs: u32,
    /// Iterations (ring, stencil, barrier), items (pipeline), requests per client (spa),
    /// tasks per worker (master-worker).
    pub steps: u64,
    /// Mean compute time per step, ns.
    pub compute_ns: u64,
    /// Relative spread of compute times, 0..=1.
    pub imbalance: f64,
    /// Size of every point-to-point message, bytes.
    pub bytes: u64,
    pub seed: u64,
    /// Independent applications in the trace, each with `procs` processes.
    pub apps: u32,
    /// Machines the processes are placed on, block-wise; `None`: one machine per rank.
    pub machines: Option<u32>,
    /// Fixed cost of a message transfer, ns.
    pub latency_ns: u64,
    /// Bytes per ns.
    pub bandwidth: f64,
    /// CPU and wall time of every MPI-like call outside its waiting, ns.
    pub call_ns: u64,
    /// The workload's main compute procedure split into this many, called in turn
    /// (`NAME_1` .. `NAME_K`), the i-th taking a share of each compute time proportional
    /// to K + 1 - i; 1 keeps the one procedure. Times and every other event are the same
    /// for any K: only the procedures inside the compute change.
    pub kernels: u32,
    /// Bottlenecks injected with known answers: extra work in a procedure of its own on
    /// some ranks, after each of their main computes.
    pub extra: Vec<ExtraWork>,
    /// barrier only: each step, before the barrier, the ranks pass a token in rank order,
    /// each doing this many ns in procedure `serial` while holding it (a serialization
    /// point: rank r waits for the r before it); 0: none.
    pub serial_ns: u64,
    /// barrier only: each step, before the barrier, every rank takes lock 1 and holds it
    /// this many ns in procedure `critical` (a hot lock); 0: none.
    pub hot_lock_ns: u64,
    /// A slow link: every point-to-point message between these two ranks (either way)
    /// takes this many ns more to arrive.
    pub slow_link: Option<SlowLink>,
    /// Clocks that disagree: every machine but machine 0 reads its time off by an offset
    /// drawn in [-`clock_offset_ns`, `clock_offset_ns`] and runs fast or slow by a drift
    /// drawn in [-`clock_drift_ppm`, `clock_drift_ppm`] parts per million
    /// ([`Spec::clock_of`]); the processes of a machine share its clock. 0 and 0: one
    /// time base.
    pub clock_offset_ns: u64,
    pub clock_drift_ppm: f64,
}

/// How a machine's clock reads a moment of the simulation's time base.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MachineClock {
    /// Its reading at time 0, ns.
    pub offset_ns: i64,
    /// How much faster than the time base it runs (2e-5: 20 ppm fast).
    pub drift: f64,
}

impl MachineClock {
    /// The reading of true time `t`: `t + offset + round(drift * t)`.
    pub fn read(&self, t: i64) -> i64 {
        t + self.offset_ns + (self.drift * t as f64).round() as i64
    }
}

/// The largest clock offset spoor-synth draws from, ns (an hour).
pub const MAX_CLOCK_OFFSET_NS: u64 = 3_600_000_000_000;
/// The largest clock drift it draws from, ppm (what spoor-align's fits consider).
pub const MAX_CLOCK_DRIFT_PPM: f64 = 1000.0;

/// A link between two ranks made slower by a fixed time per message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowLink {
    pub a: u32,
    pub b: u32,
    pub ns: u64,
}

impl SlowLink {
    /// `A-B:NS`.
    pub fn parse(s: &str) -> Result<SlowLink, SpecError> {
        let bad = || {
            SpecError(format!("--slow-link takes A-B:NS (two ranks and the extra ns a message), not `{s}`"))
        };
        let (pair, ns) = s.split_once(':').ok_or_else(bad)?;
        let (a, b) = pair.split_once('-').ok_or_else(bad)?;
        let num = |t: &str| t.trim().parse::<u64>().map_err(|_| bad());
        let (a, b, ns) = (num(a)?, num(b)?, num(ns)?);
        let rank = |x: u64| u32::try_from(x).map_err(|_| bad());
        Ok(SlowLink { a: rank(a)?, b: rank(b)?, ns })
    }
}

/// Extra work injected into a workload: after each main compute of the ranks named,
/// `ns` more in procedure `proc` (the rest of the trace as without it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtraWork {
    pub proc: String,
    pub ranks: Vec<u32>,
    pub ns: u64,
}

impl ExtraWork {
    /// `PROC:RANKS:NS`, RANKS a comma-separated list of ranks and ranges (`0,3-5`).
    pub fn parse(s: &str) -> Result<ExtraWork, SpecError> {
        let bad = |why: &str| {
            SpecError(format!("--extra-work takes PROC:RANKS:NS (e.g. late:0,3-5:2000000), not `{s}`: {why}"))
        };
        let mut it = s.splitn(3, ':');
        let (Some(proc), Some(ranks), Some(ns)) = (it.next(), it.next(), it.next()) else {
            return Err(bad("three parts separated by `:`"));
        };
        if proc.is_empty() {
            return Err(bad("the procedure needs a name"));
        }
        let mut list = Vec::new();
        for part in ranks.split(',') {
            let num = |t: &str| t.trim().parse::<u32>().map_err(|_| bad(&format!("`{t}` is not a rank")));
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if a > b || b - a >= 1 << 24 {
                        return Err(bad(&format!("`{part}` is not a range of ranks")));
                    }
                    list.extend(a..=b);
                }
                None => list.push(num(part)?),
            }
        }
        list.sort_unstable();
        list.dedup();
        let ns = ns.trim().parse().map_err(|_| bad(&format!("`{ns}` is not a number of ns")))?;
        Ok(ExtraWork { proc: proc.to_owned(), ranks: list, ns })
    }

    /// As spoor-synth takes it.
    pub fn describe(&self) -> String {
        let ranks: Vec<String> = self.ranks.iter().map(|r| r.to_string()).collect();
        format!("{}:{}:{}", self.proc, ranks.join(","), self.ns)
    }
}

/// A spec that cannot be simulated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

/// The most procedures the main compute procedure may be split into.
pub const MAX_KERNELS: u32 = 4096;

/// The most locations a synthetic trace may have.
pub const MAX_LOCATIONS: u64 = 1 << 24;

impl Spec {
    /// The defaults: 4 processes, 10 steps, 1 ms compute, 10 % imbalance, 1 KiB
    /// messages, seed 1, one application, one machine per rank, 2 µs latency,
    /// 1 byte/ns, 200 ns per call.
    pub fn new(workload: Workload) -> Spec {
        Spec {
            workload,
            procs: 4,
            steps: 10,
            compute_ns: 1_000_000,
            imbalance: 0.1,
            bytes: 1024,
            seed: 1,
            apps: 1,
            machines: None,
            latency_ns: 2_000,
            bandwidth: 1.0,
            call_ns: 200,
            kernels: 1,
            extra: Vec::new(),
            serial_ns: 0,
            hot_lock_ns: 0,
            slow_link: None,
            clock_offset_ns: 0,
            clock_drift_ppm: 0.0,
        }
    }

    /// The clock of `machine`: machine 0's reads the time base; the others are off by
    /// an offset and a drift drawn from the seed within [`Spec::clock_offset_ns`] and
    /// [`Spec::clock_drift_ppm`] (the same for every application, which share the
    /// machines).
    pub fn clock_of(&self, machine: u32) -> MachineClock {
        if machine == 0 {
            return MachineClock { offset_ns: 0, drift: 0.0 };
        }
        let u = |what: u64| {
            2.0 * rng::unit(rng::hash(self.seed, &[sim::Draw::Clock as u64, machine as u64, what])) - 1.0
        };
        MachineClock {
            offset_ns: (self.clock_offset_ns as f64 * u(0)).round() as i64,
            drift: self.clock_drift_ppm * 1e-6 * u(1),
        }
    }

    pub fn validate(&self) -> Result<(), SpecError> {
        let err = |s: String| Err(SpecError(s));
        let w = self.workload;
        if self.procs < w.min_procs() {
            return err(format!("{w} needs at least {} processes, not {}", w.min_procs(), self.procs));
        }
        if self.apps == 0 {
            return err("there must be at least one application".into());
        }
        let locs = self.procs as u64 * self.apps as u64;
        if locs > MAX_LOCATIONS {
            return err(format!("{locs} processes in all is more than the limit of {MAX_LOCATIONS}"));
        }
        match self.machines {
            Some(0) => return err("there must be at least one machine".into()),
            Some(m) if m as u64 > MAX_LOCATIONS => {
                return err(format!("{m} machines is more than the limit of {MAX_LOCATIONS}"))
            }
            _ => {}
        }
        if !(1..=MAX_KERNELS).contains(&self.kernels) {
            return err(format!("kernels must be between 1 and {MAX_KERNELS}, not {}", self.kernels));
        }
        for x in &self.extra {
            if let Some(&r) = x.ranks.iter().find(|&&r| r >= self.procs) {
                return err(format!(
                    "extra work `{}` names rank {r}; the ranks are 0 to {}",
                    x.proc,
                    self.procs - 1
                ));
            }
            if w == Workload::MasterWorker {
                return err("extra work needs ranks that compute every step; master-worker's tasks go to whichever worker is free".into());
            }
        }
        if let Some(l) = self.slow_link {
            if l.a >= self.procs || l.b >= self.procs || l.a == l.b {
                return err(format!(
                    "a slow link joins two different ranks from 0 to {}, not {} and {}",
                    self.procs - 1,
                    l.a,
                    l.b
                ));
            }
        }
        if (self.serial_ns > 0 || self.hot_lock_ns > 0) && w != Workload::Barrier {
            return err(
                "a serialization point and a hot lock are injected into the barrier workload only".into()
            );
        }
        if self.clock_offset_ns > MAX_CLOCK_OFFSET_NS {
            return err(format!(
                "a clock offset of at most {MAX_CLOCK_OFFSET_NS} ns (an hour), not {}",
                self.clock_offset_ns
            ));
        }
        if !(0.0..=MAX_CLOCK_DRIFT_PPM).contains(&self.clock_drift_ppm) {
            return err(format!(
                "a clock drift between 0 and {MAX_CLOCK_DRIFT_PPM} ppm, not {}",
                self.clock_drift_ppm
            ));
        }
        if !(0.0..=1.0).contains(&self.imbalance) {
            return err(format!("imbalance must be between 0 and 1, not {}", self.imbalance));
        }
        if !(self.bandwidth.is_finite() && self.bandwidth > 0.0) {
            return err(format!(
                "bandwidth must be a positive number of bytes per ns, not {}",
                self.bandwidth
            ));
        }
        // Keep every clock far from i64 overflow: a generous bound on the end time.
        let p = self.procs as u128;
        let extra: u128 = self.extra.iter().map(|x| x.ns as u128).sum();
        let per_step = 2 * (self.compute_ns as u128 + extra)
            + 2 * p * (self.serial_ns as u128 + self.hot_lock_ns as u128)
            + 16 * self.call_ns as u128
            + 8 * (self.latency_ns as u128
                + self.slow_link.map_or(0, |l| l.ns as u128)
                + (self.bytes as f64 / self.bandwidth).ceil() as u128
                + 8);
        let bound = (self.steps as u128 + 1).saturating_mul(p * p).saturating_mul(per_step + 1);
        if bound >= 1u128 << 62 {
            return err("the simulated run would last longer than the clocks can count; \
                 use fewer steps or processes, or shorter times"
                .into());
        }
        Ok(())
    }

    /// The number of machines the processes are placed on.
    pub fn machine_count(&self) -> u32 {
        self.machines.unwrap_or(self.procs).max(1)
    }

    /// The machine rank `rank` runs on: ranks are split block-wise, in order, into
    /// as many blocks as machines (rank r on machine r when there are enough).
    pub fn machine_of(&self, rank: u32) -> u32 {
        let m = self.machine_count() as u64;
        let p = self.procs as u64;
        if m >= p {
            rank
        } else {
            (rank as u64 * m / p) as u32
        }
    }

    /// The name of application `app`, e.g. "stencil-0".
    pub fn app_name(&self, app: u32) -> String {
        format!("{}-{app}", self.workload.name())
    }

    /// The location of rank `rank` of application `app`.
    pub fn location(&self, app: u32, rank: u32) -> LocId {
        app * self.procs + rank
    }

    /// The world communicator of application `app`.
    pub fn world(&self, app: u32) -> CommId {
        app
    }

    /// Rows and columns of the stencil's process grid: the most nearly square
    /// factorization of `procs`, rows <= columns; rank r is at (r / cols, r % cols).
    pub fn grid(&self) -> (u32, u32) {
        let p = self.procs.max(1);
        let mut rows = 1;
        let mut r = 1;
        while r as u64 * r as u64 <= p as u64 {
            if p.is_multiple_of(r) {
                rows = r;
            }
            r += 1;
        }
        (rows, p / rows)
    }

    /// Transfer time of a message of `bytes`: latency plus size over bandwidth, rounded up.
    pub fn transfer_ns(&self, bytes: u64) -> i64 {
        self.latency_ns as i64 + (bytes as f64 / self.bandwidth).ceil() as i64
    }

    /// The exact number of events [`generate`] produces for this spec.
    pub fn event_count(&self) -> u64 {
        let p = self.procs as u64;
        let s = self.steps;
        // Calls of the main compute procedure: each kernel after the first adds two events.
        let computes = match self.workload {
            Workload::Ring | Workload::Barrier | Workload::Pipeline | Workload::Stencil => p * s,
            Workload::Spa | Workload::MasterWorker => (p - 1) * s,
        };
        // Extra work: an enter and a leave after each main compute of its ranks.
        let computing = |r: u32| !(self.workload == Workload::Spa && r == 0);
        let extra: u64 = self
            .extra
            .iter()
            .map(|x| {
                let mut ranks: Vec<u32> = x.ranks.iter().copied().filter(|&r| computing(r)).collect();
                ranks.sort_unstable();
                ranks.dedup();
                2 * s * ranks.len() as u64
            })
            .sum();
        let per_app = 4 * p
            + extra
            + 2 * (self.kernels.max(1) as u64 - 1) * computes
            + match self.workload {
                Workload::Ring => 9 * p * s,
                Workload::Barrier => {
                    // The token: a receive (4 events) on every rank but the first, `serial`
                    // (2), a send (3) on every rank but the last; the lock: 5 a rank.
                    let serial = if self.serial_ns > 0 { 2 * p + 7 * (p - 1) } else { 0 };
                    let lock = if self.hot_lock_ns > 0 { 5 * p } else { 0 };
                    (6 * p + serial + lock) * s
                }
                Workload::Pipeline => s * (9 * p - 7),
                Workload::Spa => 18 * (p - 1) * s,
                Workload::MasterWorker => {
                    let w = p - 1;
                    18 * s * w + 7 * w
                }
                Workload::Stencil => {
                    let (rows, cols) = self.grid();
                    let (rows, cols) = (rows as u64, cols as u64);
                    let links = 2 * (rows - 1) * cols + 2 * rows * (cols - 1);
                    s * (8 * p + 8 * links)
                }
            };
        per_app.saturating_mul(self.apps as u64)
    }

    /// The number of steps that makes [`Spec::event_count`] closest to `events` (at least 1).
    pub fn steps_for_events(&self, events: u64) -> u64 {
        let fixed = Spec { steps: 0, ..self.clone() }.event_count();
        let per_step = Spec { steps: 1, ..self.clone() }.event_count() - fixed;
        if per_step == 0 {
            return 1;
        }
        let want = events.saturating_sub(fixed);
        ((want + per_step / 2) / per_step).max(1)
    }

    /// The spec as spoor-synth options, recorded in the trace's properties.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} --procs {} --steps {} --compute {} --imbalance {} --bytes {} --seed {} --apps {}",
            self.workload,
            self.procs,
            self.steps,
            self.compute_ns,
            self.imbalance,
            self.bytes,
            self.seed,
            self.apps
        );
        if let Some(m) = self.machines {
            s += &format!(" --machines {m}");
        }
        s += &format!(
            " --latency {} --bandwidth {} --call-cost {}",
            self.latency_ns, self.bandwidth, self.call_ns
        );
        if self.kernels != 1 {
            s += &format!(" --kernels {}", self.kernels);
        }
        for x in &self.extra {
            s += &format!(" --extra-work {}", x.describe());
        }
        if self.serial_ns > 0 {
            s += &format!(" --serialize {}", self.serial_ns);
        }
        if self.hot_lock_ns > 0 {
            s += &format!(" --hot-lock {}", self.hot_lock_ns);
        }
        if let Some(l) = self.slow_link {
            s += &format!(" --slow-link {}-{}:{}", l.a, l.b, l.ns);
        }
        s
    }
}

/// The definitions of the trace [`generate`] produces for `spec`: machines
/// "node0".., then per application its processes and locations (one thread each;
/// location id = app * procs + rank) and its world communicator (id = app), and
/// the properties creator, workload and synth.spec. Procedure names are interned
/// first, so their ids are the same for every spec of a workload.
pub fn definitions(spec: &Spec) -> Definitions {
    sim::build(spec).0
}

/// Simulates `spec` and sends its events to `sink`; returns how many it sent
/// (always [`Spec::event_count`]). Events of one location come in time order;
/// events of different locations are interleaved step by step.
pub fn generate(spec: &Spec, sink: &mut dyn EventSink) -> io::Result<u64> {
    spec.validate().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let (_, names) = sim::build(spec);
    let mut ctx = sim::Ctx::new(spec, names, sink);
    for app in 0..spec.apps {
        ctx.start_app(app)?;
        match spec.workload {
            Workload::Spa => workloads::spa(&mut ctx)?,
            Workload::Ring => workloads::ring(&mut ctx)?,
            Workload::Stencil => workloads::stencil(&mut ctx)?,
            Workload::MasterWorker => workloads::master_worker(&mut ctx)?,
            Workload::Pipeline => workloads::pipeline(&mut ctx)?,
            Workload::Barrier => workloads::barrier(&mut ctx)?,
        }
    }
    Ok(ctx.count())
}
