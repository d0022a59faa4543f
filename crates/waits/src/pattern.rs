//! The wait-state patterns (formats/waits.md defines each).

use serde::Serialize;

/// A kind of wait. The point-to-point and lock patterns are charged to one waiting
/// event; the collective ones to each member of a collective instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// A receive (blocking, or a non-blocking one's completion call) waits for a send
    /// that starts after it.
    LateSender,
    /// A late sender while a message sent earlier, from another source or with another
    /// tag, was already on its way to the receiver and was received later.
    LateSenderWrongOrder,
    /// A send (blocking, or a non-blocking one's completion call) waits for the receive
    /// to be posted.
    LateReceiver,
    /// Time in a barrier before the last member entered it.
    WaitAtBarrier,
    /// Time in an N×N collective before the last member entered it.
    WaitAtNxN,
    /// A non-root member of a 1→N collective waits for the root to enter.
    LateBroadcast,
    /// The root of an N→1 collective waits for the first other member to enter.
    EarlyReduce,
    /// Time in a barrier after the first member left it.
    BarrierCompletion,
    /// Time in an N×N collective after the first member left it.
    NxNCompletion,
    /// Time in MPI_Init after the first process left it.
    InitCompletion,
    /// Time in MPI_Finalize before the last process entered it.
    WaitAtFinalize,
    /// Time in MPI_Finalize after the first process left it.
    FinalizeCompletion,
    /// A thread waits to acquire a lock that another holds.
    LockContention,
}

impl Pattern {
    pub const ALL: [Pattern; 13] = [
        Pattern::LateSender,
        Pattern::LateSenderWrongOrder,
        Pattern::LateReceiver,
        Pattern::WaitAtBarrier,
        Pattern::WaitAtNxN,
        Pattern::LateBroadcast,
        Pattern::EarlyReduce,
        Pattern::BarrierCompletion,
        Pattern::NxNCompletion,
        Pattern::InitCompletion,
        Pattern::WaitAtFinalize,
        Pattern::FinalizeCompletion,
        Pattern::LockContention,
    ];

    /// The pattern's name in tables, JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::LateSender => "late_sender",
            Pattern::LateSenderWrongOrder => "late_sender_wrong_order",
            Pattern::LateReceiver => "late_receiver",
            Pattern::WaitAtBarrier => "wait_at_barrier",
            Pattern::WaitAtNxN => "wait_at_nxn",
            Pattern::LateBroadcast => "late_broadcast",
            Pattern::EarlyReduce => "early_reduce",
            Pattern::BarrierCompletion => "barrier_completion",
            Pattern::NxNCompletion => "nxn_completion",
            Pattern::InitCompletion => "init_completion",
            Pattern::WaitAtFinalize => "wait_at_finalize",
            Pattern::FinalizeCompletion => "finalize_completion",
            Pattern::LockContention => "lock_contention",
        }
    }

    /// The pattern of `name`, or an error listing every name.
    pub fn parse(name: &str) -> Result<Pattern, String> {
        Self::ALL.iter().copied().find(|p| p.name() == name).ok_or_else(|| {
            let all: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
            format!("no wait-state pattern `{name}`; the patterns are: {}", all.join(", "))
        })
    }
}
