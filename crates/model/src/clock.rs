//! Clock-condition violations: what every stage that reads times counts and reports.

use serde::Serialize;

/// Events that come, by their wall times, before what they wait for (formats/order.md,
/// "spoor-align"): the clocks are not on one time base.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClockViolations {
    /// Receive completions earlier than their send (plus the minimum latency).
    pub messages: u64,
    /// Collective ends earlier than the latest begin they wait for (plus the latency).
    pub collectives: u64,
    /// Lock acquisitions earlier than the release they follow.
    pub locks: u64,
}

impl ClockViolations {
    /// Every violation, whatever its kind.
    pub fn total(&self) -> u64 {
        self.messages + self.collectives + self.locks
    }

    /// The warning a command prints when there are violations: how many of each and
    /// what to do; `None` when there are none.
    pub fn warning(&self) -> Option<String> {
        if self.total() == 0 {
            return None;
        }
        let one = |n: u64, one: &str, many: &str| {
            (n > 0).then(|| format!("{n} {}", if n == 1 { one } else { many }))
        };
        let parts: Vec<String> = [
            one(
                self.messages,
                "message is received before it is sent",
                "messages are received before they are sent",
            ),
            one(
                self.collectives,
                "collective end comes before a begin it waits for",
                "collective ends come before a begin they wait for",
            ),
            one(
                self.locks,
                "lock acquisition comes before the release it follows",
                "lock acquisitions come before the release they follow",
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        Some(format!(
            "{} (clock-condition violations): the clocks are not aligned, so times between \
             locations are wrong; run spoor-align first",
            parts.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warning_names_each_kind_and_spoor_align() {
        assert_eq!(ClockViolations::default().warning(), None);
        let w = ClockViolations { messages: 17, collectives: 0, locks: 1 }.warning().unwrap();
        assert_eq!(
            w,
            "17 messages are received before they are sent, 1 lock acquisition comes before the \
             release it follows (clock-condition violations): the clocks are not aligned, so times \
             between locations are wrong; run spoor-align first"
        );
        let w = ClockViolations { messages: 1, collectives: 2, locks: 0 }.warning().unwrap();
        assert!(
            w.starts_with("1 message is received before it is sent, 2 collective ends come before"),
            "{w}"
        );
    }
}
