//! How sure a prediction is (formats/scenarios.md, "Intervals"): the run-to-run
//! variation of the recorded computation, seen within the one recording.
//!
//! A program repeats its computation: the same location runs the same stretch of code
//! again and again (an iteration's stencil update, a request's service), an arc of one
//! calling context between the same two kinds of event. Each instance is held against
//! its repeats' median, and the recording is cut into tenths of its time: a tenth whose
//! computation took 1.04 times what its instances usually take ran 4 % slow. Another run
//! of the program is taken to compute at a speed somewhere between the slowest and the
//! fastest tenth, and the interval is the prediction at those two speeds. Every
//! computation weighs more by a factor above 1 and the communication does not, so the
//! prediction grows by at most that factor, and shrinks by at most a factor below 1: the
//! interval bounds the prediction at each speed.

use spoor_graph::pag::{CLOCK_OFFSET, NONE};
use spoor_graph::Pag;

/// The tenths of a recording's time.
pub const SLICES: usize = 10;

/// The fewest instances of a group that count as repeated.
const REPEATS: u32 = 3;

/// The least share of the repeated computation a tenth must hold to count.
const SLICE_SHARE: f64 = 0.25 / SLICES as f64;

/// Tenths a spread needs to say anything.
const FEWEST_SLICES: usize = 3;

/// How the recorded computation's speed varied over the recording.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The time the fastest tenth's computation took against what it usually takes (at
    /// most 1).
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
    /// No computation repeats (no stretch of code runs three times on a location).
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
            "{} to {}: the tenths of the recording computed {:+.1} % to {:+.1} % off their usual speed ({} of \
             {SLICES} tenths; {:.0} % of the computation repeats)",
            fmt(lo),
            fmt(hi),
            100.0 * (self.fastest - 1.0),
            100.0 * (self.slowest - 1.0),
            self.slices,
            100.0 * self.repeated
        )
    }
}

/// The most instances of a group kept to find its median.
const SAMPLE: usize = 32;

/// How far from its group's median an instance counts: a single long instance (a rank's
/// one late start) says nothing of the machine's speed.
const CLAMP: f64 = 4.0;

/// A group of repeats: how many, and a sample of them (reservoir sampling, with a
/// generator of its own so that the sample depends on the PAG only).
struct Repeats {
    /// What tells it from the other groups of its location and context: the event that
    /// ends its arcs (its kind) and the context of the event they start from.
    ends: (u8, u32),
    /// The next group of the same location and context.
    next: u32,
    n: u32,
    rng: u64,
    sample: Vec<i64>,
}

impl Repeats {
    fn add(&mut self, w: i64) {
        self.n += 1;
        if self.sample.len() < SAMPLE {
            self.sample.push(w);
            return;
        }
        self.rng = self.rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // A place in 0..n without a division: the high half of a 32-bit draw times n.
        let j = (((self.rng >> 32) * self.n as u64) >> 32) as usize;
        if j < SAMPLE {
            self.sample[j] = w;
        }
    }

    /// The sample's median (the lower of the middle two), when the group repeats.
    fn median(&mut self) -> Option<f64> {
        if self.n < REPEATS {
            return None;
        }
        self.sample.sort_unstable();
        Some(self.sample[(self.sample.len() - 1) / 2] as f64)
    }
}

/// The groups of repeats, found by location and calling context (through a table when
/// it is small, as it is for nearly every trace, else a map), then along the list of
/// that pair's groups by the events around the arc.
struct Groups {
    contexts: usize,
    table: Option<Vec<u32>>,
    map: rustc_hash::FxHashMap<(u32, u32), u32>,
    groups: Vec<Repeats>,
}

impl Groups {
    fn new(locations: usize, contexts: usize) -> Self {
        let table = locations.checked_mul(contexts).filter(|&n| n <= 1 << 22).map(|n| vec![NONE; n]);
        Groups { contexts, table, map: Default::default(), groups: Vec::new() }
    }

    /// The first group of a location and context: its place, made when absent.
    fn head_mut(&mut self, (l, c): (u32, u32)) -> Option<&mut u32> {
        match &mut self.table {
            Some(t) => t.get_mut(l as usize * self.contexts + c as usize),
            None => Some(self.map.entry((l, c)).or_insert(NONE)),
        }
    }

    fn head(&self, (l, c): (u32, u32)) -> Option<u32> {
        match &self.table {
            Some(t) => t.get(l as usize * self.contexts + c as usize).copied(),
            None => self.map.get(&(l, c)).copied(),
        }
    }

    /// The group with ends `e` in the list that starts at `g`.
    fn find(&self, mut g: u32, e: (u8, u32)) -> Option<u32> {
        while let Some(r) = self.groups.get(g as usize) {
            if r.ends == e {
                return Some(g);
            }
            g = r.next;
        }
        None
    }

    /// Adds an instance of weight `w` to the group of `key` and `e`, made when absent.
    fn add(&mut self, key: (u32, u32), e: (u8, u32), w: i64) {
        let Some(&mut first) = self.head_mut(key) else { return };
        let g = match self.find(first, e) {
            Some(g) => g,
            None => {
                let rng = (key.0 as u64) << 32 ^ (key.1 as u64) << 8 ^ e.0 as u64 ^ (e.1 as u64) << 40;
                self.groups.push(Repeats { ends: e, next: first, n: 0, rng, sample: Vec::new() });
                let g = self.groups.len() as u32 - 1;
                if let Some(head) = self.head_mut(key) {
                    *head = g;
                }
                g
            }
        };
        self.groups[g as usize].add(w);
    }

    /// The group of `key` and `e`, if it was made.
    fn of(&self, key: (u32, u32), e: (u8, u32)) -> Option<u32> {
        self.find(self.head(key)?, e)
    }
}

/// The computation's spread over the PAG's tenths (a cpu-mode PAG's local weights).
///
/// An instance is held against its group's median, its ratio kept within a factor of 4
/// of it; a tenth's speed is the sum of its instances so bounded over the sum of their
/// medians, against the same ratio over the whole stretch.
pub fn spread(pag: &Pag) -> Result<Spread, NoSpread> {
    let computes = |i: usize| pag.loc[i] != NONE && pag.weight[i] > 0 && pag.kind[i] != CLOCK_OFFSET;
    let key = |i: usize| (pag.loc[i], pag.ctx[i]);
    // The events around the arc: the kind of its end, the context of its start.
    let ends = |i: usize| {
        let before = pag.prev[i];
        (pag.kind[i], if before == NONE { NONE } else { pag.ctx[before as usize] })
    };
    let mut groups = Groups::new(pag.defs.locations.len(), pag.contexts.len().max(1));
    let mut total = 0i64;
    for i in (0..pag.nodes()).filter(|&i| computes(i)) {
        groups.add(key(i), ends(i), pag.weight[i]);
        total += pag.weight[i];
    }
    let medians: Vec<Option<f64>> = groups.groups.iter_mut().map(Repeats::median).collect();
    let Some((first, last)) = pag.activity_span() else { return Err(NoSpread::NoRepeats) };
    let from = first.min(pag.t0);
    let per_ns = SLICES as f64 / (last - from).max(1) as f64;
    let mut took = [0f64; SLICES];
    let mut expected = [0f64; SLICES];
    let median_of = |i: usize| medians.get(groups.of(key(i), ends(i))? as usize).copied().flatten();
    let mut repeated_weight = 0i64;
    for i in (0..pag.nodes()).filter(|&i| computes(i)) {
        let Some(m) = median_of(i) else { continue };
        repeated_weight += pag.weight[i];
        let s = (((pag.wall[i] - from).max(0) as f64 * per_ns) as usize).min(SLICES - 1);
        took[s] += (pag.weight[i] as f64).clamp(m / CLAMP, m * CLAMP);
        expected[s] += m;
    }
    let repeated: f64 = expected.iter().sum();
    if repeated <= 0.0 {
        return Err(NoSpread::NoRepeats);
    }
    let overall = took.iter().sum::<f64>() / repeated;
    let speeds: Vec<f64> = (0..SLICES)
        .filter(|&s| expected[s] >= SLICE_SHARE * repeated)
        .map(|s| took[s] / expected[s] / overall)
        .collect();
    if speeds.len() < FEWEST_SLICES {
        return Err(NoSpread::TooFewSlices);
    }
    let fastest = speeds.iter().copied().fold(1.0, f64::min);
    let slowest = speeds.iter().copied().fold(1.0, f64::max);
    Ok(Spread {
        fastest,
        slowest,
        slices: speeds.len(),
        repeated: repeated_weight as f64 / total.max(1) as f64,
    })
}
