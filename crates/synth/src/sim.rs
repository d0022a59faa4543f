//! The simulation engine: per-process clocks and the MPI-like operations every
//! workload is built from. Each operation emits its events at once, at the
//! process's current clock, so a location's events always leave in time order.

use crate::{rng, MachineClock, Spec, Workload};
use spoor_format::EventSink;
use spoor_model::{CollOp, CommId, Definitions, Event, Kind, LocId, StrId};
use std::io;

/// Procedure names, by their index in `Names::ids`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum P {
    Main,
    Send,
    Recv,
    Isend,
    Irecv,
    Waitall,
    Allreduce,
    Barrier,
    /// The workload's main compute procedure.
    Work,
    /// spa: servBusy1; master-worker: assignTask.
    Work1,
    /// spa: servBusy2.
    Work2,
}

const N_NAMES: usize = 11;

fn mpi_name(p: P) -> &'static str {
    match p {
        P::Main => "main",
        P::Send => "MPI_Send",
        P::Recv => "MPI_Recv",
        P::Isend => "MPI_Isend",
        P::Irecv => "MPI_Irecv",
        P::Waitall => "MPI_Waitall",
        P::Allreduce => "MPI_Allreduce",
        P::Barrier => "MPI_Barrier",
        P::Work | P::Work1 | P::Work2 => unreachable!("workload procedures are named per workload"),
    }
}

/// The procedures a workload uses, with their names, in interning order.
fn procedures(w: Workload) -> Vec<(P, &'static str)> {
    let mut v: Vec<(P, &'static str)> = Vec::new();
    let mpi = |v: &mut Vec<(P, &'static str)>, ps: &[P]| {
        for &p in ps {
            v.push((p, mpi_name(p)));
        }
    };
    mpi(&mut v, &[P::Main]);
    match w {
        Workload::Spa => {
            v.extend([(P::Work, "clientWork"), (P::Work1, "servBusy1"), (P::Work2, "servBusy2")]);
            mpi(&mut v, &[P::Send, P::Recv]);
        }
        Workload::Ring => {
            v.push((P::Work, "ringWork"));
            mpi(&mut v, &[P::Send, P::Recv]);
        }
        Workload::Stencil => {
            v.push((P::Work, "stencilUpdate"));
            mpi(&mut v, &[P::Irecv, P::Isend, P::Waitall, P::Allreduce]);
        }
        Workload::MasterWorker => {
            v.extend([(P::Work, "workerTask"), (P::Work1, "assignTask")]);
            mpi(&mut v, &[P::Send, P::Recv]);
        }
        Workload::Pipeline => {
            v.push((P::Work, "stageWork"));
            mpi(&mut v, &[P::Send, P::Recv]);
        }
        Workload::Barrier => {
            v.push((P::Work, "simulateCycle"));
            mpi(&mut v, &[P::Barrier]);
        }
    }
    v
}

/// String ids of the procedures of one workload.
#[derive(Clone, Debug)]
pub(crate) struct Names {
    ids: [StrId; N_NAMES],
    /// The main compute procedure's parts, when it is split (`Spec::kernels` > 1).
    kernels: Vec<StrId>,
    /// Injected extra work: procedure, ranks (by rank), ns.
    extra: Vec<(StrId, Vec<bool>, i64)>,
    /// The procedures of the injected serialization point and hot lock.
    pub(crate) serial: StrId,
    pub(crate) critical: StrId,
}

impl Names {
    pub(crate) fn get(&self, p: P) -> StrId {
        let id = self.ids[p as usize];
        debug_assert!(id != StrId::MAX, "{p:?} is not a procedure of this workload");
        id
    }
}

/// Process names: server/client for spa, master/worker for master-worker, rank otherwise.
fn process_name(w: Workload, rank: u32) -> String {
    match (w, rank) {
        (Workload::Spa, 0) => "server".into(),
        (Workload::Spa, r) => format!("client{r}"),
        (Workload::MasterWorker, 0) => "master".into(),
        (Workload::MasterWorker, r) => format!("worker{r}"),
        (_, r) => format!("rank{r}"),
    }
}

/// The definitions of `spec` and the ids of its procedure names.
pub(crate) fn build(spec: &Spec) -> (Definitions, Names) {
    let mut defs = Definitions::new();
    let mut ids = [StrId::MAX; N_NAMES];
    let mut work = "";
    for (p, name) in procedures(spec.workload) {
        ids[p as usize] = defs.strings.intern(name);
        if p == P::Work {
            work = name;
        }
    }
    // Interned after the others, so that the ids of one kernel's trace stay as they were.
    let kernels = match spec.kernels {
        0 | 1 => Vec::new(),
        k => (1..=k).map(|i| defs.strings.intern(&format!("{work}_{i}"))).collect(),
    };
    let extra = spec
        .extra
        .iter()
        .map(|x| {
            let mut on = vec![false; spec.procs as usize];
            for &r in &x.ranks {
                if let Some(b) = on.get_mut(r as usize) {
                    *b = true;
                }
            }
            (defs.strings.intern(&x.proc), on, x.ns as i64)
        })
        .collect();
    // Interned only when injected, so that other traces keep their string tables.
    let mut name = |n: &str, used: bool| if used { defs.strings.intern(n) } else { StrId::MAX };
    let serial = name("serial", spec.serial_ns > 0);
    let critical = name("critical", spec.hot_lock_ns > 0);
    if spec.serial_ns > 0 {
        for p in [P::Send, P::Recv] {
            if ids[p as usize] == StrId::MAX {
                ids[p as usize] = defs.strings.intern(mpi_name(p));
            }
        }
    }
    defs.set_property("creator", "spoor-synth");
    defs.set_property("workload", spec.workload.name());
    defs.set_property("synth.spec", &spec.describe());
    for m in 0..spec.machine_count() {
        defs.add_machine(&format!("node{m}"));
    }
    for app in 0..spec.apps {
        let app_name = spec.app_name(app);
        let a = defs.add_app(&app_name);
        let mut members = Vec::with_capacity(spec.procs as usize);
        for rank in 0..spec.procs {
            let pname = process_name(spec.workload, rank);
            let p = defs.add_process(&pname, a, spec.machine_of(rank), rank);
            let l = defs.add_location(&format!("{app_name}/{pname}"), p, 0);
            debug_assert_eq!(l, spec.location(app, rank));
            members.push(l);
        }
        let c = defs.add_comm("MPI_COMM_WORLD", members);
        debug_assert_eq!(c, spec.world(app));
    }
    (defs, Names { ids, kernels, extra, serial, critical })
}

/// The clocks of one process.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Clock {
    pub wall: i64,
    pub cpu: i64,
    /// The next request id of the location.
    pub req: u64,
}

/// What a random draw is for (part of its hash key).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Draw {
    Work = 1,
    Serve = 2,
    Assign = 3,
    /// A machine's clock offset and drift.
    Clock = 4,
}

pub(crate) struct Ctx<'a> {
    pub spec: &'a Spec,
    names: Names,
    sink: &'a mut dyn EventSink,
    count: u64,
    /// Call overhead before and after a call's operation event.
    call_a: i64,
    call_b: i64,
    pub app: u32,
    base: LocId,
    pub comm: CommId,
    pub clk: Vec<Clock>,
    /// Per rank, how its machine's clock reads the time base.
    reads: Vec<MachineClock>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(spec: &'a Spec, names: Names, sink: &'a mut dyn EventSink) -> Self {
        let call = spec.call_ns as i64;
        Ctx {
            spec,
            names,
            sink,
            count: 0,
            call_a: call / 2,
            call_b: call - call / 2,
            app: 0,
            base: 0,
            comm: 0,
            clk: Vec::new(),
            reads: Vec::new(),
        }
    }

    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    pub(crate) fn procs(&self) -> u32 {
        self.spec.procs
    }

    /// Starts application `app`: every process begins and enters `main` at time 0.
    pub(crate) fn start_app(&mut self, app: u32) -> io::Result<()> {
        self.app = app;
        self.base = self.spec.location(app, 0);
        self.comm = self.spec.world(app);
        self.clk.clear();
        self.clk.resize(self.spec.procs as usize, Clock::default());
        self.reads = (0..self.spec.procs).map(|r| self.spec.clock_of(self.spec.machine_of(r))).collect();
        for r in 0..self.spec.procs {
            self.emit(r, Kind::ProcessBegin { parent: None })?;
            self.enter(r, P::Main)?;
        }
        Ok(())
    }

    /// Rank `r` leaves `main` and ends.
    pub(crate) fn finish(&mut self, r: u32) -> io::Result<()> {
        self.leave(r, P::Main)?;
        self.emit(r, Kind::ProcessEnd)
    }

    pub(crate) fn loc(&self, r: u32) -> LocId {
        self.base + r
    }

    fn emit(&mut self, r: u32, kind: Kind) -> io::Result<()> {
        let c = self.clk[r as usize];
        self.count += 1;
        let wall = self.reads[r as usize].read(c.wall);
        self.sink.event(Event::new(self.base + r, wall, Some(c.cpu), kind))
    }

    pub(crate) fn wall(&self, r: u32) -> i64 {
        self.clk[r as usize].wall
    }

    /// Busy for `d` ns: both clocks advance.
    fn busy(&mut self, r: u32, d: i64) {
        let c = &mut self.clk[r as usize];
        c.wall += d;
        c.cpu += d;
    }

    /// Blocked until `t`: only the wall clock advances.
    fn wait_until(&mut self, r: u32, t: i64) {
        let c = &mut self.clk[r as usize];
        c.wall = c.wall.max(t);
    }

    fn enter(&mut self, r: u32, p: P) -> io::Result<()> {
        let proc = self.names.get(p);
        self.emit(r, Kind::Enter { proc })
    }

    fn leave(&mut self, r: u32, p: P) -> io::Result<()> {
        let proc = self.names.get(p);
        self.emit(r, Kind::Leave { proc })
    }

    /// A compute time with mean `mean`, spread by the imbalance, for (what, who, step).
    pub(crate) fn draw(&self, mean: u64, what: Draw, who: u64, step: u64) -> i64 {
        let imb = self.spec.imbalance;
        if imb == 0.0 || mean == 0 {
            return mean as i64;
        }
        let h = rng::hash(self.spec.seed, &[self.app as u64, what as u64, who, step]);
        let u = 2.0 * rng::unit(h) - 1.0;
        (mean as f64 * (1.0 + imb * u)).round().max(0.0) as i64
    }

    /// Rank `r` computes for `d` ns inside procedure `p`; after the main compute, the
    /// extra work injected on `r`.
    pub(crate) fn compute(&mut self, r: u32, p: P, d: i64) -> io::Result<()> {
        self.compute_only(r, p, d)?;
        if p == P::Work {
            for k in 0..self.names.extra.len() {
                let (proc, on, ns) = &self.names.extra[k];
                if on.get(r as usize) == Some(&true) {
                    let (proc, ns) = (*proc, *ns);
                    self.work_in(r, proc, ns)?;
                }
            }
        }
        Ok(())
    }

    fn compute_only(&mut self, r: u32, p: P, d: i64) -> io::Result<()> {
        let k = self.names.kernels.len() as i64;
        if p != P::Work || k < 2 {
            self.enter(r, p)?;
            self.busy(r, d);
            return self.leave(r, p);
        }
        // Kernel i (from 0) gets (k - i) parts of k (k + 1) / 2; the last the rest.
        let parts = k * (k + 1) / 2;
        let mut left = d;
        for i in 0..k {
            let proc = self.names.kernels[i as usize];
            let share = if i + 1 == k { left } else { (d as i128 * (k - i) as i128 / parts as i128) as i64 };
            left -= share;
            self.emit(r, Kind::Enter { proc })?;
            self.busy(r, share);
            self.emit(r, Kind::Leave { proc })?;
        }
        Ok(())
    }

    /// Rank `r` works `d` ns in procedure `proc` (an injected one).
    pub(crate) fn work_in(&mut self, r: u32, proc: StrId, d: i64) -> io::Result<()> {
        self.emit(r, Kind::Enter { proc })?;
        self.busy(r, d);
        self.emit(r, Kind::Leave { proc })
    }

    /// A token passed from rank to rank in order, each holding it `hold` ns in
    /// procedure `serial` (a blocking receive from the rank before, a send to the next).
    pub(crate) fn token_round(&mut self, tag: u32, hold: i64) -> io::Result<()> {
        let p = self.procs();
        let mut arrival = 0;
        for r in 0..p {
            if r > 0 {
                self.recv(r, r - 1, tag, 0, arrival)?;
            }
            self.work_in(r, self.names.serial, hold)?;
            if r + 1 < p {
                arrival = self.send(r, r + 1, tag, 0)?;
            }
        }
        Ok(())
    }

    /// Every rank takes lock `lock` in the order it asks for it (ties: rank), holding it
    /// `hold` ns in procedure `critical`.
    pub(crate) fn lock_round(&mut self, lock: u64, hold: i64) -> io::Result<()> {
        let mut order: Vec<u32> = (0..self.procs()).collect();
        order.sort_by_key(|&r| (self.wall(r), r));
        let mut free = i64::MIN;
        for r in order {
            self.emit(r, Kind::LockRequest { lock })?;
            self.wait_until(r, free);
            self.emit(r, Kind::LockAcquire { lock })?;
            self.work_in(r, self.names.critical, hold)?;
            self.emit(r, Kind::LockRelease { lock })?;
            free = self.wall(r);
        }
        Ok(())
    }

    /// The arrival time of a message of `bytes` sent at `t` from rank `from` to `to`
    /// (later by the slow link's extra time when it joins the two).
    fn arrival(&self, from: u32, to: u32, t: i64, bytes: u64) -> i64 {
        let slow = match self.spec.slow_link {
            Some(l) if (l.a, l.b) == (from, to) || (l.b, l.a) == (from, to) => l.ns as i64,
            _ => 0,
        };
        t + self.spec.transfer_ns(bytes) + slow
    }

    /// A blocking (eager) send from `r` to rank `to`; returns the message's arrival time.
    pub(crate) fn send(&mut self, r: u32, to: u32, tag: u32, bytes: u64) -> io::Result<i64> {
        self.enter(r, P::Send)?;
        self.busy(r, self.call_a);
        let t = self.wall(r);
        let kind = Kind::Send { to: self.loc(to), comm: self.comm, tag, bytes };
        self.emit(r, kind)?;
        self.busy(r, self.call_b);
        self.leave(r, P::Send)?;
        Ok(self.arrival(r, to, t, bytes))
    }

    /// Rank `r` enters a blocking receive and starts waiting.
    pub(crate) fn recv_post(&mut self, r: u32, from: Option<u32>, tag: Option<u32>) -> io::Result<()> {
        self.enter(r, P::Recv)?;
        self.busy(r, self.call_a);
        let kind = Kind::RecvBegin { from: from.map(|f| self.loc(f)), comm: self.comm, tag };
        self.emit(r, kind)
    }

    /// The receive rank `r` posted gets the message from `from` that arrives at `arrival`.
    pub(crate) fn recv_complete(
        &mut self,
        r: u32,
        from: u32,
        tag: u32,
        bytes: u64,
        arrival: i64,
    ) -> io::Result<()> {
        self.wait_until(r, arrival);
        let kind = Kind::RecvEnd { from: self.loc(from), comm: self.comm, tag, bytes };
        self.emit(r, kind)?;
        self.busy(r, self.call_b);
        self.leave(r, P::Recv)
    }

    /// A blocking receive from rank `from` of a message arriving at `arrival`.
    pub(crate) fn recv(&mut self, r: u32, from: u32, tag: u32, bytes: u64, arrival: i64) -> io::Result<()> {
        self.recv_post(r, Some(from), Some(tag))?;
        self.recv_complete(r, from, tag, bytes, arrival)
    }

    fn next_request(&mut self, r: u32) -> u64 {
        let c = &mut self.clk[r as usize];
        c.req += 1;
        c.req
    }

    /// Posts a non-blocking receive from rank `from`; returns its request.
    pub(crate) fn irecv(&mut self, r: u32, from: u32, tag: u32) -> io::Result<u64> {
        self.enter(r, P::Irecv)?;
        self.busy(r, self.call_a);
        let request = self.next_request(r);
        let kind =
            Kind::IrecvRequest { from: Some(self.loc(from)), comm: self.comm, tag: Some(tag), request };
        self.emit(r, kind)?;
        self.busy(r, self.call_b);
        self.leave(r, P::Irecv)?;
        Ok(request)
    }

    /// Posts a non-blocking (eager) send to rank `to`; returns its request and the arrival time.
    pub(crate) fn isend(&mut self, r: u32, to: u32, tag: u32, bytes: u64) -> io::Result<(u64, i64)> {
        self.enter(r, P::Isend)?;
        self.busy(r, self.call_a);
        let request = self.next_request(r);
        let t = self.wall(r);
        let kind = Kind::Isend { to: self.loc(to), comm: self.comm, tag, bytes, request };
        self.emit(r, kind)?;
        self.busy(r, self.call_b);
        self.leave(r, P::Isend)?;
        Ok((request, self.arrival(r, to, t, bytes)))
    }

    /// Rank `r` enters MPI_Waitall.
    pub(crate) fn wait_enter(&mut self, r: u32) -> io::Result<()> {
        self.enter(r, P::Waitall)?;
        self.busy(r, self.call_a);
        Ok(())
    }

    /// Inside a wait: the send `request` completes.
    pub(crate) fn isend_complete(&mut self, r: u32, request: u64) -> io::Result<()> {
        self.emit(r, Kind::IsendComplete { request })
    }

    /// Inside a wait: the receive `request` completes with a message arriving at `arrival`.
    pub(crate) fn irecv_complete(
        &mut self,
        r: u32,
        request: u64,
        from: u32,
        tag: u32,
        bytes: u64,
        arrival: i64,
    ) -> io::Result<()> {
        self.wait_until(r, arrival);
        let kind = Kind::IrecvComplete { request, from: self.loc(from), comm: self.comm, tag, bytes };
        self.emit(r, kind)
    }

    /// Rank `r` leaves MPI_Waitall.
    pub(crate) fn wait_leave(&mut self, r: u32) -> io::Result<()> {
        self.busy(r, self.call_b);
        self.leave(r, P::Waitall)
    }

    fn coll_proc(op: CollOp) -> P {
        match op {
            CollOp::Barrier => P::Barrier,
            _ => P::Allreduce,
        }
    }

    /// Rank `r` enters collective `op` on the world; returns the time it began.
    pub(crate) fn coll_enter(&mut self, r: u32, op: CollOp) -> io::Result<i64> {
        self.enter(r, Self::coll_proc(op))?;
        self.busy(r, self.call_a);
        self.emit(r, Kind::CollBegin { op, comm: self.comm })?;
        Ok(self.wall(r))
    }

    /// The time a collective moving `bytes` per member ends, given its latest begin.
    pub(crate) fn coll_end_time(&self, op: CollOp, latest_begin: i64, bytes: u64) -> i64 {
        let rounds = 32 - (self.spec.procs.max(1) - 1).leading_zeros() as i64; // ceil(log2 P)
        let per_round = if op == CollOp::Allreduce { 2 } else { 1 };
        latest_begin + rounds * per_round * self.spec.transfer_ns(bytes)
    }

    /// Rank `r` leaves collective `op`, which ended at `end`.
    pub(crate) fn coll_leave(
        &mut self,
        r: u32,
        op: CollOp,
        end: i64,
        sent: u64,
        received: u64,
    ) -> io::Result<()> {
        self.wait_until(r, end);
        self.emit(r, Kind::CollEnd { op, comm: self.comm, root: None, sent, received })?;
        self.busy(r, self.call_b);
        self.leave(r, Self::coll_proc(op))
    }
}
