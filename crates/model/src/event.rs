use crate::defs::{CommId, LocId, MetricId, StrId};
use serde::Serialize;

/// The collective operations spoor distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CollOp {
    /// MPI_Barrier.
    Barrier,
    /// MPI_Bcast.
    Bcast,
    /// MPI_Reduce.
    Reduce,
    /// MPI_Allreduce.
    Allreduce,
    /// MPI_Gather.
    Gather,
    /// MPI_Gatherv.
    Gatherv,
    /// MPI_Scatter.
    Scatter,
    /// MPI_Scatterv.
    Scatterv,
    /// MPI_Allgather.
    Allgather,
    /// MPI_Allgatherv.
    Allgatherv,
    /// MPI_Alltoall.
    Alltoall,
    /// MPI_Alltoallv.
    Alltoallv,
    /// MPI_Scan.
    Scan,
    /// MPI_Reduce_scatter (and its block form).
    ReduceScatter,
    /// Any other collective (MPI_Alltoallw, MPI_Exscan, ...).
    Other,
}

impl CollOp {
    /// Every operation, in code order.
    pub const ALL: [CollOp; 15] = [
        CollOp::Barrier,
        CollOp::Bcast,
        CollOp::Reduce,
        CollOp::Allreduce,
        CollOp::Gather,
        CollOp::Gatherv,
        CollOp::Scatter,
        CollOp::Scatterv,
        CollOp::Allgather,
        CollOp::Allgatherv,
        CollOp::Alltoall,
        CollOp::Alltoallv,
        CollOp::Scan,
        CollOp::ReduceScatter,
        CollOp::Other,
    ];

    /// The operation's code in the binary format (its position in [`CollOp::ALL`]).
    pub fn code(self) -> u8 {
        Self::ALL.iter().position(|&o| o == self).unwrap_or(14) as u8
    }

    /// The operation of a binary-format code, if it is one.
    pub fn from_code(c: u8) -> Option<CollOp> {
        Self::ALL.get(c as usize).copied()
    }

    /// The operation's name in the text form and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            CollOp::Barrier => "barrier",
            CollOp::Bcast => "bcast",
            CollOp::Reduce => "reduce",
            CollOp::Allreduce => "allreduce",
            CollOp::Gather => "gather",
            CollOp::Gatherv => "gatherv",
            CollOp::Scatter => "scatter",
            CollOp::Scatterv => "scatterv",
            CollOp::Allgather => "allgather",
            CollOp::Allgatherv => "allgatherv",
            CollOp::Alltoall => "alltoall",
            CollOp::Alltoallv => "alltoallv",
            CollOp::Scan => "scan",
            CollOp::ReduceScatter => "reduce_scatter",
            CollOp::Other => "other",
        }
    }

    /// The operation of a name as `name` gives it.
    pub fn from_name(s: &str) -> Option<CollOp> {
        Self::ALL.iter().copied().find(|o| o.name() == s)
    }
}

/// What happened, with what it needs. Peers are locations; `None` for a
/// receive's source or tag means a wildcard (MPI_ANY_SOURCE, MPI_ANY_TAG).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// A process starts; `parent` is the location that spawned it (spawn arc).
    ProcessBegin {
        /// The spawning location, if any.
        parent: Option<LocId>,
    },
    /// A process ends.
    ProcessEnd,
    /// A thread starts; `parent` is the location that forked it.
    ThreadBegin {
        /// The forking location, if known.
        parent: Option<LocId>,
    },
    /// A thread ends.
    ThreadEnd,
    /// A procedure is entered.
    Enter {
        /// The procedure's name.
        proc: StrId,
    },
    /// A procedure is left.
    Leave {
        /// The procedure's name.
        proc: StrId,
    },
    /// A blocking send starts.
    Send {
        /// The destination.
        to: LocId,
        /// The communicator.
        comm: CommId,
        /// The message tag.
        tag: u32,
        /// The message size.
        bytes: u64,
    },
    /// A blocking receive starts waiting.
    RecvBegin {
        /// The source; `None` for any source.
        from: Option<LocId>,
        /// The communicator.
        comm: CommId,
        /// The tag; `None` for any tag.
        tag: Option<u32>,
    },
    /// A blocking receive completes: the actual source, tag and size.
    RecvEnd {
        /// The actual source.
        from: LocId,
        /// The communicator.
        comm: CommId,
        /// The actual tag.
        tag: u32,
        /// The message size.
        bytes: u64,
    },
    /// A non-blocking send is posted.
    Isend {
        /// The destination.
        to: LocId,
        /// The communicator.
        comm: CommId,
        /// The message tag.
        tag: u32,
        /// The message size.
        bytes: u64,
        /// The request's id, unique per location while open.
        request: u64,
    },
    /// The non-blocking send `request` completes (its wait or test returned).
    IsendComplete {
        /// The request's id.
        request: u64,
    },
    /// A non-blocking receive is posted.
    IrecvRequest {
        /// The source; `None` for any source.
        from: Option<LocId>,
        /// The communicator.
        comm: CommId,
        /// The tag; `None` for any tag.
        tag: Option<u32>,
        /// The request's id, unique per location while open.
        request: u64,
    },
    /// The non-blocking receive `request` completes: the actual source, tag and size.
    IrecvComplete {
        /// The request's id.
        request: u64,
        /// The actual source.
        from: LocId,
        /// The communicator.
        comm: CommId,
        /// The actual tag.
        tag: u32,
        /// The message size.
        bytes: u64,
    },
    /// A collective operation starts on this location.
    CollBegin {
        /// The operation.
        op: CollOp,
        /// The communicator.
        comm: CommId,
    },
    /// `root` is a location for rooted operations; `sent` and `received` are this location's bytes.
    CollEnd {
        /// The operation.
        op: CollOp,
        /// The communicator.
        comm: CommId,
        /// The root, for rooted operations.
        root: Option<LocId>,
        /// Bytes this location sent.
        sent: u64,
        /// Bytes this location received.
        received: u64,
    },
    /// A lock is asked for (the wait for it starts).
    LockRequest {
        /// The lock's id.
        lock: u64,
    },
    /// A lock is taken.
    LockAcquire {
        /// The lock's id.
        lock: u64,
    },
    /// A lock is released.
    LockRelease {
        /// The lock's id.
        lock: u64,
    },
    /// A named phase of the program starts.
    PhaseBegin {
        /// The phase's name.
        name: StrId,
    },
    /// A named phase ends.
    PhaseEnd {
        /// The phase's name.
        name: StrId,
    },
    /// A sample of external data.
    Metric {
        /// Which metric.
        metric: MetricId,
        /// The sampled value.
        value: f64,
    },
    /// A measured offset of this location's clock against `reference`'s:
    /// reference time = local time + `offset`, within ± `error` (half the round trip).
    ClockOffset {
        /// The location whose clock is the reference.
        reference: LocId,
        /// Reference time minus local time, ns.
        offset: i64,
        /// The bound on the offset's error, ns.
        error: u64,
    },
}

/// Each kind's code in the binary format (formats/trace.md), for decoders that work on
/// codes rather than on [`Kind`]s; spoor-format re-exports them as `binary::kind`.
pub mod kind_code {
    /// `Kind::ProcessBegin`.
    pub const PROCESS_BEGIN: u8 = 0;
    /// `Kind::ProcessEnd`.
    pub const PROCESS_END: u8 = 1;
    /// `Kind::ThreadBegin`.
    pub const THREAD_BEGIN: u8 = 2;
    /// `Kind::ThreadEnd`.
    pub const THREAD_END: u8 = 3;
    /// `Kind::Enter`.
    pub const ENTER: u8 = 4;
    /// `Kind::Leave`.
    pub const LEAVE: u8 = 5;
    /// `Kind::Send`.
    pub const SEND: u8 = 6;
    /// `Kind::RecvBegin`.
    pub const RECV_BEGIN: u8 = 7;
    /// `Kind::RecvEnd`.
    pub const RECV_END: u8 = 8;
    /// `Kind::Isend`.
    pub const ISEND: u8 = 9;
    /// `Kind::IsendComplete`.
    pub const ISEND_COMPLETE: u8 = 10;
    /// `Kind::IrecvRequest`.
    pub const IRECV_REQUEST: u8 = 11;
    /// `Kind::IrecvComplete`.
    pub const IRECV_COMPLETE: u8 = 12;
    /// `Kind::CollBegin`.
    pub const COLL_BEGIN: u8 = 13;
    /// `Kind::CollEnd`.
    pub const COLL_END: u8 = 14;
    /// `Kind::LockRequest`.
    pub const LOCK_REQUEST: u8 = 15;
    /// `Kind::LockAcquire`.
    pub const LOCK_ACQUIRE: u8 = 16;
    /// `Kind::LockRelease`.
    pub const LOCK_RELEASE: u8 = 17;
    /// `Kind::PhaseBegin`.
    pub const PHASE_BEGIN: u8 = 18;
    /// `Kind::PhaseEnd`.
    pub const PHASE_END: u8 = 19;
    /// `Kind::Metric`.
    pub const METRIC: u8 = 20;
    /// `Kind::ClockOffset`.
    pub const CLOCK_OFFSET: u8 = 21;
}

/// The number of distinct kinds (their codes are 0..KIND_COUNT).
pub const KIND_COUNT: u8 = kind_code::CLOCK_OFFSET + 1;

impl Kind {
    /// The kind's code in the binary format.
    pub fn code(&self) -> u8 {
        match self {
            Kind::ProcessBegin { .. } => kind_code::PROCESS_BEGIN,
            Kind::ProcessEnd => kind_code::PROCESS_END,
            Kind::ThreadBegin { .. } => kind_code::THREAD_BEGIN,
            Kind::ThreadEnd => kind_code::THREAD_END,
            Kind::Enter { .. } => kind_code::ENTER,
            Kind::Leave { .. } => kind_code::LEAVE,
            Kind::Send { .. } => kind_code::SEND,
            Kind::RecvBegin { .. } => kind_code::RECV_BEGIN,
            Kind::RecvEnd { .. } => kind_code::RECV_END,
            Kind::Isend { .. } => kind_code::ISEND,
            Kind::IsendComplete { .. } => kind_code::ISEND_COMPLETE,
            Kind::IrecvRequest { .. } => kind_code::IRECV_REQUEST,
            Kind::IrecvComplete { .. } => kind_code::IRECV_COMPLETE,
            Kind::CollBegin { .. } => kind_code::COLL_BEGIN,
            Kind::CollEnd { .. } => kind_code::COLL_END,
            Kind::LockRequest { .. } => kind_code::LOCK_REQUEST,
            Kind::LockAcquire { .. } => kind_code::LOCK_ACQUIRE,
            Kind::LockRelease { .. } => kind_code::LOCK_RELEASE,
            Kind::PhaseBegin { .. } => kind_code::PHASE_BEGIN,
            Kind::PhaseEnd { .. } => kind_code::PHASE_END,
            Kind::Metric { .. } => kind_code::METRIC,
            Kind::ClockOffset { .. } => kind_code::CLOCK_OFFSET,
        }
    }

    /// The kind's name in the text form and in JSON.
    pub fn name(&self) -> &'static str {
        KIND_NAMES[self.code() as usize]
    }
}

/// Names of the kinds, indexed by code.
pub const KIND_NAMES: [&str; KIND_COUNT as usize] = [
    "process_begin",
    "process_end",
    "thread_begin",
    "thread_end",
    "enter",
    "leave",
    "send",
    "recv_begin",
    "recv_end",
    "isend",
    "isend_complete",
    "irecv_request",
    "irecv_complete",
    "coll_begin",
    "coll_end",
    "lock_request",
    "lock_acquire",
    "lock_release",
    "phase_begin",
    "phase_end",
    "metric",
    "clock_offset",
];

/// A reference to one event: its location and its index among that location's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct EventRef {
    /// The location.
    pub loc: LocId,
    /// The event's index among the location's events.
    pub index: u64,
}

/// What later pipeline stages add to an event. Absent unless a stage wrote it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Annotations {
    /// The matched partner of a message or request event (spoor-order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partner: Option<EventRef>,
    /// The Lamport clock of the event (spoor-order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lamport: Option<u64>,
    /// The wall time as recorded, before spoor-align corrected `wall`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_wall: Option<i64>,
}

impl Annotations {
    /// True when no stage annotated the event.
    pub fn is_empty(&self) -> bool {
        self.partner.is_none() && self.lamport.is_none() && self.raw_wall.is_none()
    }
}

/// One event of a trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Event {
    /// The location (thread) it happened on.
    pub loc: LocId,
    /// Wall-clock time in nanoseconds on the location's clock.
    pub wall: i64,
    /// CPU time consumed by the process so far, in nanoseconds, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<i64>,
    /// What happened.
    #[serde(flatten)]
    pub kind: Kind,
    /// What later stages added.
    #[serde(skip_serializing_if = "Annotations::is_empty", flatten)]
    pub ann: Annotations,
}

impl Event {
    /// An event without annotations.
    pub fn new(loc: LocId, wall: i64, cpu: Option<i64>, kind: Kind) -> Self {
        Event { loc, wall, cpu, kind, ann: Annotations::default() }
    }
}
