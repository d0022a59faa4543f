//! Human descriptions of times, locations and events for reports and error messages.

use spoor_model::{Definitions, EventRef};

/// A time in nanoseconds in the largest fitting unit, exact (trailing zeros trimmed):
/// `10.08 ms`, `250 ns`, `-1.5 us`, `3.000000001 s` (its home is spoor-format, beside
/// `parse_duration`).
pub use spoor_format::text::describe_duration as time;

/// A process's name, or `process 3` when it has none.
pub fn process(defs: &Definitions, p: spoor_model::ProcId) -> String {
    match defs.processes.get(p as usize).and_then(|x| defs.strings.get(x.name)) {
        Some(n) if !n.is_empty() => n.to_owned(),
        _ => format!("process {p}"),
    }
}

/// `rank1 (location 1) event 17 (recv_end at 10.08 ms)`.
pub fn event(defs: &Definitions, at: EventRef, kind: &str, wall: i64) -> String {
    format!("{} event {} ({kind} at {})", defs.location_described(at.loc), at.index, time(wall))
}

/// `rank1 (location 1) event 17`, for an event whose kind and time are not at hand.
pub fn event_ref(defs: &Definitions, at: EventRef) -> String {
    format!("{} event {}", defs.location_described(at.loc), at.index)
}

/// The name of communicator `comm`, or its number.
pub fn comm(defs: &Definitions, comm: u32) -> String {
    match defs.comms.get(comm as usize).and_then(|c| defs.strings.get(c.name)) {
        Some(n) if !n.is_empty() => n.to_owned(),
        _ => format!("communicator {comm}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(time(0), "0 ns");
        assert_eq!(time(999), "999 ns");
        assert_eq!(time(1_500), "1.5 us");
        assert_eq!(time(10_080_000), "10.08 ms");
        assert_eq!(time(-2_000_000), "-2 ms");
        assert_eq!(time(3_000_000_001), "3.000000001 s");
        assert_eq!(time(i64::MIN), "-9223372036.854775808 s");
    }
}

/// Parses a duration as the command line gives it: `2500`, `2500ns`, `2.5us`, `1ms`, `0.5s`.
pub fn parse_time(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let (num, mult) = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        .iter()
        .find_map(|&(u, m)| t.strip_suffix(u).map(|n| (n.trim(), m)))
        .unwrap_or((t, 1.0));
    if let Ok(v) = num.parse::<i64>() {
        if mult == 1.0 {
            return Ok(v);
        }
    }
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && (v * mult).abs() < 9.2e18 => Ok((v * mult).round() as i64),
        _ => Err(format!("expected a time such as 2500, 2.5us, 1ms or 0.5s, found `{s}`")),
    }
}

#[cfg(test)]
mod parse_tests {
    use super::parse_time;

    #[test]
    fn parses() {
        assert_eq!(parse_time("2500"), Ok(2500));
        assert_eq!(parse_time("2.5us"), Ok(2500));
        assert_eq!(parse_time("1ms"), Ok(1_000_000));
        assert_eq!(parse_time("0.5s"), Ok(500_000_000));
        assert_eq!(parse_time("-3ns"), Ok(-3));
        assert!(parse_time("fast").is_err());
        assert!(parse_time("1e30s").is_err());
    }
}
