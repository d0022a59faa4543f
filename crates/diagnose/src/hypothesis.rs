//! The why axis: hypotheses, their refinements and default thresholds
//! (formats/diagnose.md, "Hypotheses").

use serde::Serialize;
use spoor_waits::Pattern;

/// One kind of bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "String")]
pub enum Hypothesis {
    /// Time outside communication and I/O calls.
    CpuBound,
    /// Time in wait states, all patterns.
    SyncWaiting,
    /// Time in communication calls that is not a wait state (call costs, transfers).
    Communication,
    /// Time in I/O calls.
    IoBlocking,
    /// The largest computing time among the focus's locations above their mean.
    LoadImbalance,
    /// Time in one wait-state pattern (a refinement of [`Hypothesis::SyncWaiting`]; the
    /// wrong-order late sender refines the late sender).
    Wait(Pattern),
}

impl From<Hypothesis> for String {
    fn from(h: Hypothesis) -> String {
        h.name().to_owned()
    }
}

/// The top of the why axis, in the order the search tests them.
pub const TOP: [Hypothesis; 5] = [
    Hypothesis::SyncWaiting,
    Hypothesis::LoadImbalance,
    Hypothesis::Communication,
    Hypothesis::IoBlocking,
    Hypothesis::CpuBound,
];

impl Hypothesis {
    /// Every hypothesis: the top ones, then every pattern.
    pub fn all() -> Vec<Hypothesis> {
        TOP.iter().copied().chain(Pattern::ALL.iter().map(|&p| Hypothesis::Wait(p))).collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Hypothesis::CpuBound => "cpu_bound",
            Hypothesis::SyncWaiting => "sync_waiting",
            Hypothesis::Communication => "communication",
            Hypothesis::IoBlocking => "io_blocking",
            Hypothesis::LoadImbalance => "load_imbalance",
            Hypothesis::Wait(p) => p.name(),
        }
    }

    /// The hypothesis named `name`, or an error listing every name.
    pub fn parse(name: &str) -> Result<Hypothesis, String> {
        Hypothesis::all().into_iter().find(|h| h.name() == name).ok_or_else(|| {
            let all: Vec<&str> = Hypothesis::all().iter().map(|h| h.name()).collect();
            format!("no hypothesis `{name}`; the hypotheses are: {}", all.join(", "))
        })
    }

    /// Its threshold unless a directive or option says otherwise: a share of the focus's
    /// time (formats/diagnose.md).
    pub fn default_threshold(self) -> f64 {
        match self {
            Hypothesis::CpuBound => 0.2,
            Hypothesis::SyncWaiting => 0.1,
            Hypothesis::Communication => 0.1,
            Hypothesis::IoBlocking => 0.05,
            Hypothesis::LoadImbalance => 0.1,
            Hypothesis::Wait(_) => 0.05,
        }
    }

    /// The refinements along the why axis.
    pub fn children(self) -> Vec<Hypothesis> {
        match self {
            Hypothesis::SyncWaiting => Pattern::ALL
                .iter()
                .filter(|&&p| p != Pattern::LateSenderWrongOrder)
                .map(|&p| Hypothesis::Wait(p))
                .collect(),
            Hypothesis::Wait(Pattern::LateSender) => vec![Hypothesis::Wait(Pattern::LateSenderWrongOrder)],
            _ => Vec::new(),
        }
    }

    /// Whether it refines along the message partners.
    pub fn has_partners(self) -> bool {
        matches!(self, Hypothesis::Communication)
            || matches!(self, Hypothesis::Wait(p) if crate::cube::point_to_point(p))
    }

    /// Whether it refines along the synchronization objects (communicators, then tags):
    /// waiting and communicating in MPI, but not for locks, MPI_Init or MPI_Finalize.
    pub fn has_objects(self) -> bool {
        match self {
            Hypothesis::SyncWaiting | Hypothesis::Communication => true,
            Hypothesis::Wait(p) => !matches!(
                p,
                Pattern::LockContention
                    | Pattern::InitCompletion
                    | Pattern::WaitAtFinalize
                    | Pattern::FinalizeCompletion
            ),
            _ => false,
        }
    }

    /// Whether it refines along the machines, processes and threads (an imbalance is
    /// among several locations: it refines along the code only).
    pub fn has_places(self) -> bool {
        self != Hypothesis::LoadImbalance
    }

    /// What the hypothesis says, for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Hypothesis::CpuBound => "computing",
            Hypothesis::SyncWaiting => "waiting for other processes",
            Hypothesis::Communication => "communicating (not waiting)",
            Hypothesis::IoBlocking => "in I/O calls",
            Hypothesis::LoadImbalance => "load imbalance",
            Hypothesis::Wait(p) => match p {
                Pattern::LateSender => "waiting for late senders",
                Pattern::LateSenderWrongOrder => "waiting for late senders in the wrong order",
                Pattern::LateReceiver => "sends waiting for late receivers",
                Pattern::WaitAtBarrier => "waiting at barriers",
                Pattern::WaitAtNxN => "waiting at N×N collectives",
                Pattern::LateBroadcast => "waiting for late broadcast roots",
                Pattern::EarlyReduce => "reduction roots waiting",
                Pattern::BarrierCompletion => "completing barriers",
                Pattern::NxNCompletion => "completing N×N collectives",
                Pattern::InitCompletion => "completing MPI_Init",
                Pattern::WaitAtFinalize => "waiting at MPI_Finalize",
                Pattern::FinalizeCompletion => "completing MPI_Finalize",
                Pattern::LockContention => "waiting for locks",
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_valid_ones() {
        for h in Hypothesis::all() {
            assert_eq!(Hypothesis::parse(h.name()), Ok(h));
        }
        let e = Hypothesis::parse("slow").unwrap_err();
        assert!(e.contains("sync_waiting") && e.contains("late_sender_wrong_order"), "{e}");
    }

    #[test]
    fn every_pattern_is_reached_from_the_top() {
        let mut seen = Vec::new();
        let mut todo: Vec<Hypothesis> = TOP.to_vec();
        while let Some(h) = todo.pop() {
            seen.push(h);
            todo.extend(h.children());
        }
        for h in Hypothesis::all() {
            assert!(seen.contains(&h), "{}", h.name());
        }
    }
}
