//! Time histograms that fold as the run grows (Paradyn's time histograms keep a fixed
//! number of buckets): every series shares one grid of at most `max_bins` bins of width
//! `2^k` ns aligned on multiples of the width. When a time falls outside, the width
//! doubles (adjacent bins merge) until the whole range seen fits. The final grid is the
//! narrowest power of two that holds the range, whatever order the times came in.

#[derive(Clone, Debug)]
pub struct Grid {
    max_bins: usize,
    /// Bin width in ns (a power of two), and its log2: a time's bin is a shift away, not a
    /// division (the hot paths take one per event).
    width: i64,
    shift: u32,
    /// Grid index (time / width) of bin 0.
    k0: i64,
    min_t: i64,
    max_t: i64,
    empty: bool,
    series: Vec<Vec<f64>>,
    /// The bin most adds go to (times mostly rise), its values of every series side by
    /// side here, where the series' own slots hold 0: a fold touches one cache line for
    /// a few series, not one for each.
    hot_bin: Option<usize>,
    hot: Vec<f64>,
}

impl Grid {
    pub fn new(max_bins: usize) -> Grid {
        Grid {
            max_bins: max_bins.max(2),
            width: 1,
            shift: 0,
            k0: 0,
            min_t: 0,
            max_t: 0,
            empty: true,
            series: Vec::new(),
            hot_bin: None,
            hot: Vec::new(),
        }
    }

    /// How many series there are.
    pub fn series_count(&self) -> usize {
        self.series.len()
    }

    /// Adds a series (all zero); returns its index.
    pub fn add_series(&mut self) -> usize {
        self.series.push(vec![0.0; self.max_bins]);
        self.hot.push(0.0);
        self.series.len() - 1
    }

    /// Makes `[t0, t1]` fit in the grid.
    #[inline]
    pub fn cover(&mut self, t0: i64, t1: i64) {
        if !self.empty && t0 >= self.min_t && t1 <= self.max_t {
            return;
        }
        // A trace's times mostly rise: a later time that still falls in the bins there are
        // moves only the end (the first bin and the width stay).
        if !self.empty && t0 >= self.min_t && t1 >= t0 && (t1 >> self.shift) - self.k0 < self.max_bins as i64
        {
            self.max_t = t1;
            return;
        }
        self.grow(t0.min(t1), t0.max(t1));
    }

    /// Where `series` keeps bin `b`; a later bin than the hot one becomes the hot one.
    #[inline]
    fn slot(&mut self, series: usize, b: usize) -> &mut f64 {
        match self.hot_bin {
            Some(h) if h == b => {}
            Some(h) if h > b => return &mut self.series[series][b],
            _ => self.heat(b),
        }
        &mut self.hot[series]
    }

    /// Makes `b` the hot bin: its values move out of the series.
    fn heat(&mut self, b: usize) {
        self.cool();
        for (s, v) in self.series.iter_mut().zip(&mut self.hot) {
            *v = std::mem::take(&mut s[b]);
        }
        self.hot_bin = Some(b);
    }

    /// Puts the hot bin's values back into the series.
    fn cool(&mut self) {
        if let Some(h) = self.hot_bin.take() {
            for (s, v) in self.series.iter_mut().zip(&mut self.hot) {
                s[h] = std::mem::take(v);
            }
        }
    }

    fn grow(&mut self, lo: i64, hi: i64) {
        self.cool();
        if self.empty {
            self.empty = false;
            self.min_t = lo;
            self.max_t = hi;
            self.k0 = lo;
        } else {
            self.min_t = self.min_t.min(lo);
            self.max_t = self.max_t.max(hi);
        }
        let mut w = self.width;
        while (self.max_t.div_euclid(w) - self.min_t.div_euclid(w)) as i128 >= self.max_bins as i128 {
            w *= 2;
        }
        let k0 = self.min_t.div_euclid(w);
        if w == self.width && k0 == self.k0 {
            return;
        }
        let factor = w / self.width;
        for s in &mut self.series {
            let mut out = vec![0.0; self.max_bins];
            for (i, v) in s.iter().enumerate() {
                if *v != 0.0 {
                    let g = (self.k0 + i as i64).div_euclid(factor) - k0;
                    out[g as usize] += *v;
                }
            }
            *s = out;
        }
        self.width = w;
        self.shift = w.trailing_zeros();
        self.k0 = k0;
    }

    /// Adds `amount` at time `t`.
    #[inline]
    pub fn add_point(&mut self, series: usize, t: i64, amount: f64) {
        self.cover(t, t);
        let i = ((t >> self.shift) - self.k0) as usize;
        *self.slot(series, i) += amount;
    }

    /// Spreads `amount` uniformly over `[t0, t1)` (all of it at `t0` when the interval is empty).
    #[inline]
    pub fn add_interval(&mut self, series: usize, t0: i64, t1: i64, amount: f64) {
        if t1 <= t0 {
            self.add_point(series, t0, amount);
            return;
        }
        self.cover(t0, t1);
        let w = self.width;
        let first = t0 >> self.shift;
        let last = (t1 - 1) >> self.shift;
        if first == last {
            *self.slot(series, (first - self.k0) as usize) += amount;
            return;
        }
        let len = (t1 - t0) as f64;
        for g in first..=last {
            let a = (g * w).max(t0);
            let b = ((g + 1) * w).min(t1);
            *self.slot(series, (g - self.k0) as usize) += amount * ((b - a) as f64 / len);
        }
    }

    /// Spreads `amount` uniformly over `[t0, t1)` in each of `series` (the bins found once
    /// for all of them).
    #[inline]
    pub fn add_interval_to(&mut self, series: &[usize], t0: i64, t1: i64, amount: f64) {
        if t1 <= t0 {
            for &s in series {
                self.add_point(s, t0, amount);
            }
            return;
        }
        self.cover(t0, t1);
        let w = self.width;
        let (first, last) = (t0 >> self.shift, (t1 - 1) >> self.shift);
        if first == last {
            let b = (first - self.k0) as usize;
            for &s in series {
                *self.slot(s, b) += amount;
            }
            return;
        }
        let len = (t1 - t0) as f64;
        for g in first..=last {
            let share = amount * ((((g + 1) * w).min(t1) - (g * w).max(t0)) as f64 / len);
            let b = (g - self.k0) as usize;
            for &s in series {
                *self.slot(s, b) += share;
            }
        }
    }

    /// The bins in use: `(start of the first bin, width, number of bins)`; `None` when
    /// nothing was added.
    pub fn extent(&self) -> Option<(i64, i64, usize)> {
        if self.empty {
            return None;
        }
        let n = (self.max_t.div_euclid(self.width) - self.k0 + 1) as usize;
        Some((self.k0 * self.width, self.width, n))
    }

    /// The values of a series over the bins in use.
    pub fn values(&self, series: usize) -> Vec<f64> {
        let n = self.extent().map_or(0, |e| e.2);
        let mut v = self.series[series][..n].to_vec();
        if let Some(h) = self.hot_bin.filter(|&h| h < n) {
            v[h] = self.hot[series];
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_added_to_several_series_is_added_to_each_as_alone() {
        let (mut one, mut many) = (Grid::new(8), Grid::new(8));
        let (a, b) = (one.add_series(), one.add_series());
        let (c, d) = (many.add_series(), many.add_series());
        for (t0, t1, v) in [(0, 10, 10.0), (3, 3, 1.0), (5, 40, 35.0), (-7, 2, 9.0)] {
            one.add_interval(a, t0, t1, v);
            one.add_interval(b, t0, t1, v);
            many.add_interval_to(&[c, d], t0, t1, v);
        }
        assert_eq!(one.extent(), many.extent());
        assert_eq!((one.values(a), one.values(b)), (many.values(c), many.values(d)));
    }

    #[test]
    fn intervals_spread_by_overlap_and_fold() {
        let mut g = Grid::new(4);
        let s = g.add_series();
        g.add_interval(s, 0, 4, 4.0);
        assert_eq!(g.extent(), Some((0, 2, 3)));
        // [0,4) at width 2 covers bins 0 and 1; the grid holds 0..=4 (max_t 4).
        assert_eq!(g.values(s), &[2.0, 2.0, 0.0]);
        g.add_interval(s, 4, 16, 12.0);
        // 0..=16 needs width 8 with 4 bins: bins [0,8) [8,16) [16,24).
        assert_eq!(g.extent(), Some((0, 8, 3)));
        assert_eq!(g.values(s), &[8.0, 8.0, 0.0]);
    }

    /// Whatever bin is hot, each series holds what spreading every interval at the final
    /// width gives: times rising, falling back into earlier bins, and growing the grid
    /// both ways while a bin is hot.
    #[test]
    fn the_hot_bin_loses_nothing() {
        let mut g = Grid::new(8);
        let series: Vec<usize> = (0..3).map(|_| g.add_series()).collect();
        let mut added = Vec::new();
        let mut x = 12345u64;
        for k in 0..400i64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let back = ((x >> 40) % 50) as i64;
            let t0 = k * 10 - back + if k == 200 { -5_000 } else { 0 };
            let t1 = t0 + ((x >> 20) % 40) as i64;
            let s = series[(x >> 60) as usize % 3];
            g.add_interval(s, t0, t1, (t1 - t0) as f64 + 1.0);
            added.push((s, t0, t1, (t1 - t0) as f64 + 1.0));
        }
        let (start, w, n) = g.extent().unwrap();
        for &s in &series {
            let mut want = vec![0.0; n];
            for &(_, t0, t1, v) in added.iter().filter(|a| a.0 == s) {
                if t1 <= t0 {
                    want[((t0 - start) / w) as usize] += v;
                    continue;
                }
                for (b, slot) in want.iter_mut().enumerate() {
                    let (a, e) = (start + b as i64 * w, start + (b as i64 + 1) * w);
                    let ov = e.min(t1) - a.max(t0);
                    if ov > 0 {
                        *slot += v * ov as f64 / (t1 - t0) as f64;
                    }
                }
            }
            let got = g.values(s);
            for (a, b) in got.iter().zip(&want) {
                assert!((a - b).abs() < 1e-6, "series {s}: {got:?} against {want:?}");
            }
        }
    }

    #[test]
    fn order_does_not_matter() {
        let spans = [(100i64, 250i64), (-40, 7), (900, 1000), (3, 3), (500, 800)];
        let mut a = Grid::new(16);
        let sa = a.add_series();
        for &(x, y) in &spans {
            a.add_interval(sa, x, y, (y - x) as f64);
        }
        let mut b = Grid::new(16);
        let sb = b.add_series();
        for &(x, y) in spans.iter().rev() {
            b.add_interval(sb, x, y, (y - x) as f64);
        }
        assert_eq!(a.extent(), b.extent());
        let (va, vb) = (a.values(sa), b.values(sb));
        for (x, y) in va.iter().zip(&vb) {
            assert!((x - y).abs() < 1e-9, "{va:?} {vb:?}");
        }
        let total: f64 = va.iter().sum();
        assert!((total - 597.0).abs() < 1e-9);
    }
}
