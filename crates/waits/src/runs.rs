//! A location's call path over time, 8 bytes a run: the root causes read how long each
//! call path ran between two moments, and at 10^8 events the runs are most of what the
//! fold keeps.

use crate::causes::partition_near;
use spoor_format::spill::{Arena, SpillVec};
use std::cell::Cell;
use std::sync::Arc;

/// Runs in a block at most (64 KiB).
const BLOCK_MAX: usize = 8192;
/// Runs in a location's first block: blocks double up to [`BLOCK_MAX`], so a location
/// with few runs holds little.
const BLOCK_MIN: usize = 16;

/// The runs of one location, in its order: (from, call path), a run per change.
#[derive(Default)]
pub(crate) struct Runs {
    blocks: Vec<Block>,
    /// Where the blocks' runs are kept when not in memory.
    arena: Option<Arc<Arena>>,
}

/// Consecutive runs whose times fit 32 bits above the first one's. A block is never
/// grown past the capacity it was made with, so runs are never copied.
struct Block {
    base: i64,
    /// (time - base, call path).
    runs: SpillVec<(u32, u32)>,
}

/// A place among the runs: (block, run within it).
#[derive(Clone, Copy)]
pub(crate) struct Cursor {
    block: usize,
    run: usize,
}

impl Runs {
    pub(crate) fn new_in(arena: Option<&Arc<Arena>>) -> Runs {
        Runs { blocks: Vec::new(), arena: arena.cloned() }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    pub(crate) fn push(&mut self, time: i64, path: u32) {
        if let Some(b) = self.blocks.last_mut() {
            if b.runs.len() < b.runs.capacity() {
                if let Some(off) = time.checked_sub(b.base).and_then(|d| u32::try_from(d).ok()) {
                    b.runs.push((off, path));
                    spoor_format::mem::prefetch(b.runs.as_ptr().wrapping_add(b.runs.len() + 8));
                    return;
                }
            }
        }
        self.push_block(time, path);
    }

    /// A run that starts a block: the last is full, or the time is not within 32 bits
    /// after its base (a gap of over 4 s, or a time that went back).
    #[cold]
    fn push_block(&mut self, time: i64, path: u32) {
        if self.arena.as_ref().is_some_and(|a| a.failed()) {
            // Its file is full: the result will be refused.
            return;
        }
        let cap = self.blocks.last().map_or(BLOCK_MIN, |b| (b.runs.capacity() * 2).min(BLOCK_MAX));
        let mut runs = SpillVec::with_capacity_in(cap, self.arena.as_ref());
        runs.push((0, path));
        // Empty only where its file is full.
        if !runs.is_empty() {
            self.blocks.push(Block { base: time, runs });
        }
    }

    /// When the first run began.
    pub(crate) fn first_time(&self) -> Option<i64> {
        self.blocks.first().map(|b| b.base)
    }

    /// The last run that began at or before `t` (the first run if none did), searched
    /// for from `hint` (a block and a run within it, then set to the answer): the root
    /// causes' queries move a little at a time.
    pub(crate) fn at(&self, t: i64, hint: &[Cell<usize>; 2]) -> Cursor {
        let [hint, run_hint] = hint;
        let n = self.blocks.len();
        let h = hint.get();
        let starts = |k: usize| self.blocks[k].base <= t;
        let block = if h < n && starts(h) && (h + 1 == n || !starts(h + 1)) {
            h
        } else {
            // Another block: the hint within it means nothing.
            run_hint.set(0);
            self.blocks.partition_point(|b| b.base <= t).saturating_sub(1)
        };
        hint.set(block);
        let Some(b) = self.blocks.get(block) else { return Cursor { block, run: 0 } };
        let run = match u32::try_from(t.saturating_sub(b.base)) {
            Ok(off) => partition_near(&b.runs, run_hint, |r| r.0 <= off).saturating_sub(1),
            Err(_) if t < b.base => 0,
            Err(_) => b.runs.len() - 1,
        };
        Cursor { block, run }
    }

    /// Calls `f(from, to, call path)` for each run from `c` on that begins before `until`,
    /// each ending where the next begins (the last at `last`).
    #[inline]
    pub(crate) fn each_until(&self, c: Cursor, until: i64, last: i64, mut f: impl FnMut(i64, i64, u32)) {
        // The run whose end is not known yet: its start and path.
        let mut open: Option<(i64, u32)> = None;
        for (k, b) in self.blocks.iter().enumerate().skip(c.block) {
            let from = if k == c.block { c.run } else { 0 };
            for &(off, path) in b.runs.get(from..).unwrap_or_default() {
                let s = b.base + i64::from(off);
                if let Some((os, op)) = open {
                    f(os, s, op);
                }
                if s >= until {
                    return;
                }
                open = Some((s, path));
            }
        }
        if let Some((os, op)) = open {
            f(os, last, op);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Runs;
    use std::cell::Cell;

    /// Every query answers as a search of the plain list would, from any hint, across
    /// blocks of every size and a gap that does not fit 32 bits.
    #[test]
    fn runs_answer_as_a_plain_list() {
        let mut plain: Vec<(i64, u32)> = Vec::new();
        let mut t = -5i64;
        for k in 0..40_000u32 {
            t += if k == 20_000 { 5_000_000_000 } else { i64::from(k % 7) };
            plain.push((t, k % 13));
        }
        let mut runs = Runs::default();
        for &(t, p) in &plain {
            runs.push(t, p);
        }
        assert_eq!(runs.first_time(), Some(plain[0].0));
        let last = t + 100;
        // Each run ends where the next begins, the last at `last`.
        let ends = |k: usize| plain.get(k + 1).map_or(last, |r| r.0);
        let mut seen = Vec::new();
        runs.each_until(runs.at(i64::MIN, &Default::default()), i64::MAX, last, |s, e, p| {
            seen.push((s, e, p))
        });
        let all: Vec<_> = plain.iter().enumerate().map(|(k, &(s, p))| (s, ends(k), p)).collect();
        assert_eq!(seen, all);
        for probe in [-10, -5, -4, 0, 1, 33, 70_000, 119_000, t - 5_000_000_001, t - 3, t, t + 9] {
            let want = plain.partition_point(|r| r.0 <= probe).saturating_sub(1);
            for h in [0, 1, 3, 7, 1000] {
                let c = runs.at(probe, &[Cell::new(h), Cell::new(h)]);
                let mut first = None;
                runs.each_until(c, i64::MAX, last, |s, _, p| {
                    first.get_or_insert((s, p));
                });
                assert_eq!(first, Some(plain[want]), "time {probe} hint {h}");
            }
            // Up to the probe: the runs that begin before it.
            let mut upto = Vec::new();
            runs.each_until(runs.at(i64::MIN, &Default::default()), probe, last, |s, e, p| {
                upto.push((s, e, p))
            });
            assert_eq!(upto, all[..plain.partition_point(|r| r.0 < probe)], "until {probe}");
        }
    }
}
