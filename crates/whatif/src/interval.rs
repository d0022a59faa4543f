//! How sure a prediction is (formats/scenarios.md, "Intervals"): the run-to-run
//! variation of the recorded computation, seen within the one recording.
//!
//! A program repeats its computation: the same location runs the same calling context
//! again and again (an iteration's stencil update, a request's service). Each instance
//! is held against the average of its repeats, and the recording is cut into tenths of
//! its time: a tenth whose computation took 1.04 times its repeats' average ran 4 %
//! slow. Another run of the program is taken to compute at a speed somewhere between
//! the slowest and the fastest tenth, and the interval is the prediction at those two
//! speeds. Every computation weighs more by a factor above 1 and the communication does
//! not, so the prediction grows by at most that factor, and shrinks by at most a factor
//! below 1: the interval bounds the prediction at each speed.

use spoor_graph::pag::{CLOCK_OFFSET, NONE};
use spoor_graph::Pag;

/// The tenths of a recording's time.
pub const SLICES: usize = 10;

/// The fewest instances of a calling context on a location that count as repeated.
const REPEATS: u32 = 3;

/// The least share of the repeated computation a tenth must hold to count.
const SLICE_SHARE: f64 = 0.25 / SLICES as f64;

/// Tenths a spread needs to say anything.
const FEWEST_SLICES: usize = 3;

/// How the recorded computation's speed varied over the recording.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The time the fastest tenth's computation took against its repeats' average
    /// (at most 1).
    pub fastest: f64,
    /// The same for the slowest tenth (at least 1).
    pub slowest: f64,
    /// How many tenths held enough repeated computation to count.
    pub slices: usize,
    /// The share of the recorded computation that repeats.
    pub repeated: f64,
}

/// Why a recording gives no spread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoSpread {
    /// No computation repeats (every context runs fewer than three times a location).
    NoRepeats,
    /// The repeated computation falls in fewer than three tenths of the time.
    TooFewSlices,
}

impl std::fmt::Display for NoSpread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NoSpread::NoRepeats => "no computation of the recording repeats, so its variation is unknown",
            NoSpread::TooFewSlices => {
                "the recording's repeated computation falls in fewer than 3 tenths of its time, too few to \
                 see its variation"
            }
        })
    }
}

impl Spread {
    /// The interval of a prediction of `ns`: the prediction at the fastest and at the
    /// slowest tenth's speed.
    pub fn interval(&self, ns: i64) -> (i64, i64) {
        ((ns as f64 * self.fastest).round() as i64, (ns as f64 * self.slowest).round() as i64)
    }

    /// The interval as a sentence for a prediction of `ns`, after a time's formatting.
    pub fn describe(&self, ns: i64, fmt: impl Fn(i64) -> String) -> String {
        let (lo, hi) = self.interval(ns);
        format!(
            "{} to {}: the recorded computation ran {:+.1} % to {:+.1} % against its average over the tenths \
             of its time ({} of {SLICES}; {:.0} % of it repeats)",
            fmt(lo),
            fmt(hi),
            100.0 * (self.fastest - 1.0),
            100.0 * (self.slowest - 1.0),
            self.slices,
            100.0 * self.repeated
        )
    }
}

/// The computation's spread over the PAG's tenths (a cpu-mode PAG's local weights).
pub fn spread(pag: &Pag) -> Result<Spread, NoSpread> {
    let computes = |i: usize| pag.loc[i] != NONE && pag.weight[i] > 0 && pag.kind[i] != CLOCK_OFFSET;
    // Repeats by location and calling context: a table when it is small, as it is for
    // nearly every trace, else a map.
    let contexts = pag.contexts.len().max(1);
    let locations = pag.defs.locations.len();
    let dense = locations.checked_mul(contexts).filter(|&n| n <= 1 << 22);
    let mut table: Vec<(i64, u32)> = vec![(0, 0); dense.unwrap_or(0)];
    let mut map: rustc_hash::FxHashMap<(u32, u32), (i64, u32)> = Default::default();
    let key = |i: usize| (pag.loc[i], pag.ctx[i]);
    let slot = |(l, c): (u32, u32)| l as usize * contexts + c as usize;
    let mut total = 0i64;
    for i in (0..pag.nodes()).filter(|&i| computes(i)) {
        let k = key(i);
        let e = match dense {
            Some(_) => table.get_mut(slot(k)),
            None => Some(map.entry(k).or_default()),
        };
        if let Some(e) = e {
            e.0 += pag.weight[i];
            e.1 += 1;
        }
        total += pag.weight[i];
    }
    let mean = |k: (u32, u32)| {
        let e = match dense {
            Some(_) => table.get(slot(k)).copied(),
            None => map.get(&k).copied(),
        };
        e.filter(|e| e.1 >= REPEATS).map(|e| e.0 as f64 / e.1 as f64)
    };
    let Some((first, last)) = pag.activity_span() else { return Err(NoSpread::NoRepeats) };
    let (from, span) = (first.min(pag.t0), (last - first.min(pag.t0)).max(1) as i128);
    let mut took = [0f64; SLICES];
    let mut expected = [0f64; SLICES];
    for i in (0..pag.nodes()).filter(|&i| computes(i)) {
        if let Some(m) = mean(key(i)) {
            let s = ((pag.wall[i] - from).max(0) as i128 * SLICES as i128 / span).min(SLICES as i128 - 1)
                as usize;
            took[s] += pag.weight[i] as f64;
            expected[s] += m;
        }
    }
    let repeated: f64 = expected.iter().sum();
    if repeated <= 0.0 {
        return Err(NoSpread::NoRepeats);
    }
    let speeds: Vec<f64> = (0..SLICES)
        .filter(|&s| expected[s] >= SLICE_SHARE * repeated)
        .map(|s| took[s] / expected[s])
        .collect();
    if speeds.len() < FEWEST_SLICES {
        return Err(NoSpread::TooFewSlices);
    }
    let fastest = speeds.iter().copied().fold(1.0, f64::min);
    let slowest = speeds.iter().copied().fold(1.0, f64::max);
    Ok(Spread { fastest, slowest, slices: speeds.len(), repeated: repeated / total.max(1) as f64 })
}
