//! Ticks to nanoseconds, and OTF2's clock correction.

use super::defs::ClockSample;

/// Converts ticks to ns since the global offset: `floor((t - offset) * 1e9 / resolution)`,
/// exactly, without a division on the common path.
#[derive(Clone, Copy, Debug)]
pub struct TimeConv {
    offset: u64,
    /// 1e9 / resolution as the reduced fraction p / q.
    p: i64,
    q: i64,
    inv_q: f64,
    /// |ticks - offset| up to which the fast path is exact: |(t - offset) * p| <= 2^50.
    fast: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl TimeConv {
    pub fn new(resolution: u64, offset: u64) -> Self {
        let res = resolution.max(1);
        let g = gcd(1_000_000_000, res);
        let (p, q) = ((1_000_000_000 / g) as i64, (res / g).min(i64::MAX as u64) as i64);
        TimeConv { offset, p, q, inv_q: 1.0 / q as f64, fast: (1u64 << 50) / p as u64 }
    }

    #[inline(always)]
    pub fn ns(&self, ticks: u64) -> i64 {
        let d = ticks.wrapping_sub(self.offset) as i64;
        // Within 2^50 / p ticks of the offset (years at GHz rates), the
        // product is exact in an f64 and the quotient estimate off by less
        // than one: two compares make it the exact floor.
        if d.unsigned_abs() <= self.fast && (ticks >= self.offset) == (d >= 0) {
            let x = d * self.p;
            if self.q == 1 {
                return x;
            }
            let mut y = (x as f64 * self.inv_q) as i64;
            let mut r = x - y * self.q;
            if r < 0 {
                y -= 1;
                r += self.q;
            }
            if r >= self.q {
                y += 1;
            }
            return y;
        }
        self.ns_wide(ticks)
    }

    #[cold]
    fn ns_wide(&self, ticks: u64) -> i64 {
        let x = (ticks as i128 - self.offset as i128) * self.p as i128;
        x.div_euclid(self.q as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// A tick difference (an offset or a deviation) in ns, rounded to the nearest.
    pub fn delta_ns(&self, ticks: f64) -> f64 {
        (ticks * self.p as f64 / self.q as f64).round()
    }
}

/// One interval of OTF2's piecewise-linear clock correction.
#[derive(Clone, Copy, Debug)]
pub struct Interval {
    begin: u64,
    end: u64,
    offset: i64,
    slope: f64,
}

/// The correction intervals between consecutive CLOCK_OFFSET samples, as
/// OTF2's reader builds them; `Err` names the first sample out of order.
/// One sample (or none) gives no intervals: no correction.
pub fn intervals(samples: &[ClockSample]) -> Result<Vec<Interval>, usize> {
    let mut v = Vec::with_capacity(samples.len().saturating_sub(1));
    for (i, w) in samples.windows(2).enumerate() {
        let (a, b) = (w[0], w[1]);
        if a.time >= b.time {
            return Err(i + 1);
        }
        // The differences, not the values, are converted: no precision is lost.
        let slope = (b.offset as i128 - a.offset as i128) as f64 / (b.time - a.time) as f64;
        v.push(Interval { begin: a.time, end: b.time, offset: a.offset, slope });
    }
    Ok(v)
}

/// Applies the correction to a timestamp as OTF2's 3.x reader does: the
/// interval is searched forward from `cursor` (timestamps of a location never
/// decrease), times past the last interval use the last one, times before the
/// first use the first; the interpolated part of the offset is rounded to a
/// whole tick (ties to even) and the offset added.
#[inline]
pub fn correct(iv: &[Interval], cursor: &mut usize, t: u64) -> u64 {
    if iv.is_empty() {
        return t;
    }
    while *cursor + 1 < iv.len() && t > iv[*cursor].end {
        *cursor += 1;
    }
    let i = &iv[*cursor];
    let diff = if t >= i.begin { (t - i.begin) as f64 } else { -((i.begin - t) as f64) };
    let offset = i.offset.wrapping_add((i.slope * diff).round_ties_even() as i64);
    t.wrapping_add(offset as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_to_ns_is_the_exact_floor() {
        for (res, off) in
            [(1_000_000_000, 5), (2_500_000_000, 1_000_001), (2_095_197_216, 7), (3, 0), (1, 10)]
        {
            let c = TimeConv::new(res, off);
            for t in [0u64, 1, 2, off, off + 1, off + 12345, off + 987_654_321_012, u64::MAX / 3, u64::MAX] {
                let want = ((t as i128 - off as i128) * 1_000_000_000).div_euclid(res as i128);
                let want = want.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
                assert_eq!(c.ns(t), want, "res {res} off {off} t {t}");
            }
        }
    }

    #[test]
    fn correction_interpolates_and_extrapolates() {
        let s = |time, offset| ClockSample { time, offset, stddev: 0.0 };
        let iv = intervals(&[s(100, 0), s(200, 10), s(300, 10)]).unwrap();
        let mut c = 0;
        assert_eq!(correct(&iv, &mut c, 50), 45);
        assert_eq!(correct(&iv, &mut c, 150), 155);
        assert_eq!(correct(&iv, &mut c, 250), 260);
        assert_eq!(correct(&iv, &mut c, 400), 410);
        // Only the interpolated part is rounded: 0.55 ticks -> 1 tick.
        let iv = intervals(&[s(0, 0), s(20, 11)]).unwrap();
        assert_eq!(correct(&iv, &mut 0, 1), 2);
        assert!(intervals(&[s(100, 0), s(100, 1)]).is_err());
        assert!(intervals(&[s(100, 0)]).unwrap().is_empty());
    }
}
