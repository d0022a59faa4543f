//! Offset and drift between two clocks from the messages they exchange (the convex
//! hull method: Duda et al.; Jezequel; as used by trace tools since).
//!
//! Let θ(x) be the correction of clock B at its local time x (reference time = x + θ(x)),
//! modelled as a line. A message from the reference side sent at reference time s and
//! received at B's local time r says θ(r) ≥ s − r: a *lower* point (r, s − r). A message
//! from B sent at local s and received at reference time r says θ(s) ≤ r − s: an *upper*
//! point (s, r − s). Every line between the upper hull of the lower points and the lower
//! hull of the upper points is consistent with every message. [`fit`] takes the slope at
//! which the two hulls are furthest apart (vertically) and the line halfway between them:
//! the line that leaves every message the most room, which is the true correction when
//! latencies are alike both ways. When the messages do not determine the slope (the widest
//! gap would be at the drift bound) it takes the consistent slope nearest 0. When no line
//! separates the hulls (latencies too noisy, drift not linear) the same rule gives the line
//! that comes closest.

/// θ(x) = a + b·(x − x0), in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    pub x0: i64,
    pub a: f64,
    pub b: f64,
}

impl Line {
    pub fn at(&self, x: i64) -> f64 {
        self.a + self.b * (x as f64 - self.x0 as f64)
    }
}

/// A line fitted between lower and upper points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    pub line: Line,
    /// Half the vertical gap between the hulls at the chosen slope: how far the line may
    /// move up or down and still respect every message (negative: it cannot).
    pub margin: f64,
    /// The slopes of lines that respect every message (`None` when there are none).
    pub slopes: Option<(f64, f64)>,
}

/// Points relative to an origin, so that f64 keeps nanoseconds exact.
type P = (i64, i64);

fn cross(o: P, a: P, b: P) -> i128 {
    (a.0 as i128 - o.0 as i128) * (b.1 as i128 - o.1 as i128)
        - (a.1 as i128 - o.1 as i128) * (b.0 as i128 - o.0 as i128)
}

/// The upper convex hull, left to right (one point per x, the highest).
fn upper_hull(mut pts: Vec<P>) -> Vec<P> {
    pts.sort_unstable_by(|p, q| p.0.cmp(&q.0).then(q.1.cmp(&p.1)));
    pts.dedup_by_key(|p| p.0);
    let mut h: Vec<P> = Vec::new();
    for p in pts {
        while h.len() >= 2 && cross(h[h.len() - 2], h[h.len() - 1], p) >= 0 {
            h.pop();
        }
        h.push(p);
    }
    h
}

/// The lower convex hull, left to right (one point per x, the lowest).
fn lower_hull(mut pts: Vec<P>) -> Vec<P> {
    pts.sort_unstable();
    pts.dedup_by_key(|p| p.0);
    let mut h: Vec<P> = Vec::new();
    for p in pts {
        while h.len() >= 2 && cross(h[h.len() - 2], h[h.len() - 1], p) <= 0 {
            h.pop();
        }
        h.push(p);
    }
    h
}

fn slopes(h: &[P]) -> impl Iterator<Item = f64> + '_ {
    h.windows(2).map(|w| (w[1].1 as f64 - w[0].1 as f64) / (w[1].0 as f64 - w[0].0 as f64))
}

/// `fit_with` allowing drift: the tests' shorthand.
#[cfg(test)]
pub fn fit(lower: &[(i64, i64)], upper: &[(i64, i64)], max_slope: f64) -> Option<Fit> {
    fit_with(lower, upper, max_slope, true)
}

/// Fits θ with `lower` points (θ(x) ≥ y) and `upper` points (θ(x) ≤ z), slopes within
/// ±`max_slope`; `None` unless there is at least one point of each kind. Without
/// `drift`, the slope is the one nearest 0 that respects every message (0 when a
/// constant offset does, or when no line does): for messages that cover too short a
/// stretch for their slope to be carried beyond it.
pub fn fit_with(lower: &[(i64, i64)], upper: &[(i64, i64)], max_slope: f64, drift: bool) -> Option<Fit> {
    if lower.is_empty() || upper.is_empty() {
        return None;
    }
    let x0 = lower.iter().chain(upper).map(|p| p.0).min()?;
    let rel = |v: &[(i64, i64)]| -> Vec<P> { v.iter().map(|&(x, y)| (x.saturating_sub(x0), y)).collect() };
    let lo = upper_hull(rel(lower));
    let up = lower_hull(rel(upper));
    // g(b) = max over lower points of y − b·x; h(b) = min over upper points of z − b·x.
    let g = |b: f64| lo.iter().map(|&(x, y)| y as f64 - b * x as f64).fold(f64::NEG_INFINITY, f64::max);
    let h = |b: f64| up.iter().map(|&(x, z)| z as f64 - b * x as f64).fold(f64::INFINITY, f64::min);
    let gap = |b: f64| h(b) - g(b);
    let bound = max_slope.abs();
    // gap is concave and piecewise linear, with its breaks at the hulls' edge slopes.
    let mut cand: Vec<f64> =
        slopes(&lo).chain(slopes(&up)).filter(|s| s.is_finite() && s.abs() < bound).collect();
    cand.extend([-bound, 0.0, bound]);
    cand.sort_unstable_by(f64::total_cmp);
    cand.dedup();
    let vals: Vec<f64> = cand.iter().map(|&b| gap(b)).collect();
    let best = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let tol = 1e-9 * (1.0 + best.abs());
    // The widest gap (the line as far as possible from every message); among equally
    // wide ones, the slope nearest 0.
    let mut b = cand
        .iter()
        .zip(&vals)
        .filter(|(_, &v)| v >= best - tol)
        .map(|(&b, _)| b)
        .min_by(|x, y| x.abs().total_cmp(&y.abs()))?;
    // The slopes that respect every message (gap >= 0), an interval; its ends lie
    // between breaks, where gap is linear.
    let feasible = if best >= 0.0 {
        let first = vals.iter().position(|&v| v >= 0.0)?;
        let last = vals.iter().rposition(|&v| v >= 0.0)?;
        let root = |i: usize, j: usize| {
            let (bi, bj, vi, vj) = (cand[i], cand[j], vals[i], vals[j]);
            bj - vj * (bj - bi) / (vj - vi)
        };
        let lo_b = if first > 0 { root(first - 1, first) } else { cand[0] };
        let hi_b = if last + 1 < cand.len() { root(last + 1, last) } else { cand[last] };
        Some((lo_b, hi_b))
    } else {
        None
    };
    // A widest gap at the bound means the messages do not pin the drift down (a single
    // exchange, or all answers before all questions): take the slope nearest 0 that
    // respects every message.
    if b.abs() >= bound || !drift {
        b = match feasible {
            Some((lo_b, hi_b)) => 0.0f64.clamp(lo_b, hi_b),
            None if !drift => 0.0,
            None => b,
        };
    }
    let (gb, hb) = (g(b), h(b));
    Some(Fit { line: Line { x0, a: (gb + hb) / 2.0, b }, margin: (hb - gb) / 2.0, slopes: feasible })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages between a reference and a clock that runs `drift` fast with `offset`:
    /// local = true + offset + drift * true. Latency `lat` both ways.
    type Points = Vec<(i64, i64)>;

    fn exchange(offset: f64, drift: f64, lat: i64, n: i64) -> (Points, Points) {
        let local = |t: i64| t + (offset + drift * t as f64).round() as i64;
        let mut lower = Vec::new();
        let mut upper = Vec::new();
        for k in 0..n {
            let t = 1_000_000_000 + k * 10_000_000;
            // reference -> B: sent at t, arrives at t + lat (B reads local(t + lat)).
            let r = local(t + lat);
            lower.push((r, t - r));
            // B -> reference: sent at true t + 5 ms (local), arrives lat later.
            let s_true = t + 5_000_000;
            let s = local(s_true);
            upper.push((s, s_true + lat - s));
        }
        (lower, upper)
    }

    #[test]
    fn recovers_offset_and_drift() {
        for &(offset, drift) in &[(0.0, 0.0), (-3.5e6, 20e-6), (7e8, -50e-6), (123.0, 1e-7)] {
            let (lower, upper) = exchange(offset, drift, 3_000, 200);
            let f = fit(&lower, &upper, 1e-3).unwrap();
            assert!(f.margin >= 0.0, "{offset} {drift}: {f:?}");
            // The correction maps local to true: theta(local(t)) ~ -(offset + drift t).
            for t in [1_000_000_000i64, 1_500_000_000, 3_000_000_000] {
                let x = t + (offset + drift * t as f64).round() as i64;
                let got = x as f64 + f.line.at(x);
                assert!((got - t as f64).abs() < 50.0, "offset {offset} drift {drift} at {t}: {got} ({f:?})");
            }
        }
    }

    #[test]
    fn one_exchange_has_no_drift() {
        let f = fit(&[(100, -50)], &[(200, 50)], 1e-3).unwrap();
        assert!(f.line.b.abs() < 1e-12, "{f:?}");
        assert!((f.line.at(150)).abs() < 1e-6);
    }

    #[test]
    fn inconsistent_points_still_fit() {
        // Upper below lower: no line separates them; the fit splits the difference.
        let f = fit(&[(0, 10), (1000, 10)], &[(0, 0), (1000, 0)], 1e-3).unwrap();
        assert!(f.margin < 0.0);
        assert!((f.line.at(500) - 5.0).abs() < 1e-6, "{f:?}");
        assert!(f.slopes.is_none());
    }

    #[test]
    fn without_drift_the_slope_nearest_0_that_respects_every_message() {
        // Both bounds 10 ns higher at the end of a 20 us stretch than at its start: the
        // widest gap is at a slope of 500 ppm, although a constant offset fits too.
        let lower = [(0, -1000), (20_000, -990)];
        let upper = [(0, 1000), (20_000, 1010)];
        let f = fit(&lower, &upper, 1e-3).unwrap();
        assert!((f.line.b - 5e-4).abs() < 1e-9, "{f:?}");
        let f = fit_with(&lower, &upper, 1e-3, false).unwrap();
        assert_eq!(f.line.b, 0.0, "{f:?}");
        // Halfway between -990 and 1000.
        assert!((f.line.at(123_456) - 5.0).abs() < 1e-9, "{f:?}");
        // When only a drift fits, the smallest one that does.
        let f = fit_with(&[(0, 0), (1_000_000, 100)], &[(0, 10), (1_000_000, 120)], 1e-3, false).unwrap();
        assert!((f.line.b - 9e-5).abs() < 1e-9, "{f:?}");
    }

    #[test]
    fn needs_both_directions() {
        assert!(fit(&[(0, 1)], &[], 1e-3).is_none());
        assert!(fit(&[], &[(0, 1)], 1e-3).is_none());
    }
}
