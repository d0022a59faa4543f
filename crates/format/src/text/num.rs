//! Numbers and times as the text form writes them.

use super::CANONICAL_NAN;
use spoor_model::{EventRef, LocId};

pub(super) enum NumErr {
    /// Not the expected syntax.
    Syntax,
    /// Too large or too small for its field.
    Range(String),
    /// A time that is not a whole number of nanoseconds.
    Fraction,
}

fn parse_uint(s: &str, max: u64) -> Result<u64, NumErr> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(NumErr::Syntax);
    }
    let mut v: u64 = 0;
    for b in s.bytes() {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .filter(|&v| v <= max)
            .ok_or_else(|| NumErr::Range(format!("at most {max}")))?;
    }
    Ok(v)
}

pub(super) fn parse_u32(s: &str) -> Result<u32, NumErr> {
    parse_uint(s, u64::from(u32::MAX)).map(|v| v as u32)
}

pub(super) fn parse_u64(s: &str) -> Result<u64, NumErr> {
    parse_uint(s, u64::MAX)
}

/// A time as the text form writes it (`1500`, `1.5us`, `10ms`, `2s`) in nanoseconds,
/// for command-line options that take times; `None` when it is not one.
pub fn parse_duration(s: &str) -> Option<i64> {
    parse_time(s.trim()).ok().and_then(|v| i64::try_from(v).ok())
}

/// A time in nanoseconds in the largest fitting unit, exact (trailing zeros trimmed):
/// `10.08 ms`, `250 ns`, `-1.5 us`, `3.000000001 s`. Without its space it reads back
/// through [`parse_duration`].
pub fn describe_duration(ns: i64) -> String {
    let a = ns.unsigned_abs();
    let (unit, div, digits) = if a >= 1_000_000_000 {
        ("s", 1_000_000_000u64, 9)
    } else if a >= 1_000_000 {
        ("ms", 1_000_000, 6)
    } else if a >= 1_000 {
        ("us", 1_000, 3)
    } else {
        return format!("{ns} ns");
    };
    let sign = if ns < 0 { "-" } else { "" };
    let whole = a / div;
    let frac = a % div;
    if frac == 0 {
        return format!("{sign}{whole} {unit}");
    }
    let mut f = format!("{frac:0digits$}");
    while f.ends_with('0') {
        f.pop();
    }
    format!("{sign}{whole}.{f} {unit}")
}

/// A time in nanoseconds: `-`? DIGITS, or `-`? DIGITS (`.` DIGITS)? UNIT with
/// UNIT one of ns, us, ms, s; the value must be a whole number of nanoseconds.
fn parse_time(s: &str) -> Result<i128, NumErr> {
    let (neg, rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (num, scale) = if let Some(n) = rest.strip_suffix("ns") {
        (n, Some(0u32))
    } else if let Some(n) = rest.strip_suffix("us") {
        (n, Some(3))
    } else if let Some(n) = rest.strip_suffix("ms") {
        (n, Some(6))
    } else if let Some(n) = rest.strip_suffix('s') {
        (n, Some(9))
    } else {
        (rest, None)
    };
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (num, None),
    };
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || frac.is_some_and(|f| !digits(f)) || (frac.is_some() && scale.is_none()) {
        return Err(NumErr::Syntax);
    }
    let scale = scale.unwrap_or(0);
    let frac = frac.unwrap_or("").trim_end_matches('0');
    if frac.len() > scale as usize {
        return Err(NumErr::Fraction);
    }
    let range = || NumErr::Range("beyond 64 bits".into());
    let mut v: i128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        v = v.checked_mul(10).and_then(|v| v.checked_add(i128::from(b - b'0'))).ok_or_else(range)?;
        if v > i128::from(u64::MAX) * 1_000_000_000 {
            return Err(range());
        }
    }
    let shift = scale as usize - frac.len();
    for _ in 0..shift {
        v = v.checked_mul(10).ok_or_else(range)?;
    }
    Ok(if neg { -v } else { v })
}

pub(super) fn parse_i64_time(s: &str) -> Result<i64, NumErr> {
    let v = parse_time(s)?;
    i64::try_from(v).map_err(|_| NumErr::Range(format!("between {} and {}", i64::MIN, i64::MAX)))
}

pub(super) fn parse_u64_time(s: &str) -> Result<u64, NumErr> {
    let v = parse_time(s)?;
    u64::try_from(v).map_err(|_| NumErr::Range(format!("between 0 and {}", u64::MAX)))
}

pub(super) fn parse_f64(s: &str) -> Result<f64, NumErr> {
    if let Some(h) = s.strip_prefix("0x") {
        if h.is_empty() || h.len() > 16 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(NumErr::Syntax);
        }
        return u64::from_str_radix(h, 16).map(f64::from_bits).map_err(|_| NumErr::Syntax);
    }
    if s.eq_ignore_ascii_case("nan") {
        return Ok(f64::from_bits(CANONICAL_NAN));
    }
    s.parse::<f64>().map_err(|_| NumErr::Syntax)
}

pub(super) fn parse_loc_or_any(s: &str) -> Result<Option<u32>, NumErr> {
    if s == "any" {
        Ok(None)
    } else {
        parse_u32(s).map(Some)
    }
}

pub(super) fn parse_partner(s: &str) -> Result<EventRef, NumErr> {
    let (l, i) = s.split_once(':').ok_or(NumErr::Syntax)?;
    Ok(EventRef { loc: parse_u32(l)?, index: parse_u64(i)? })
}

pub(super) fn parse_members(s: &str) -> Result<Vec<LocId>, NumErr> {
    if s.is_empty() {
        return Ok(Vec::new());
    }
    s.split(',').map(parse_u32).collect()
}

/// A time given as a value where one is expected, for messages.
pub(super) const TIME_HINT: &str = "integer nanoseconds, or a number with unit ns, us, ms or s";

#[cfg(test)]
mod tests {
    use super::{describe_duration, parse_duration};

    #[test]
    fn durations_said_without_their_space_read_back() {
        for ns in [0, 999, 1_500, 43_000_000, 503_651_600, 3_000_000_001, -2_000_000, i64::MAX] {
            assert_eq!(parse_duration(&describe_duration(ns).replace(' ', "")), Some(ns), "{ns}");
        }
    }
}
