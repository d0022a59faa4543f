//! A location's call path over time, 8 bytes a run: the root causes read how long each
//! call path ran between two moments, and at 10^8 events the runs are most of what the
//! fold keeps.

use crate::causes::partition_near;
use std::cell::Cell;

/// Runs in a block at most (64 KiB).
const BLOCK_MAX: usize = 8192;
/// Runs in a location's first block: blocks double up to [`BLOCK_MAX`], so a location
/// with few runs holds little.
const BLOCK_MIN: usize = 16;

/// The runs of one location, in its order: (from, call path), a run per change.
#[derive(Default)]
pub(crate) struct Runs {
    blocks: Vec<Block>,
}

/// Consecutive runs whose times fit 32 bits above the first one's. A block is never
/// grown past the capacity it was made with, so runs are never copied.
struct Block {
    base: i64,
    /// (time - base, call path).
    runs: Vec<(u32, u32)>,
}

/// A place among the runs: (block, run within it).
#[derive(Clone, Copy)]
pub(crate) struct Cursor {
    block: usize,
    run: usize,
}

impl Runs {
    pub(crate) fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    pub(crate) fn push(&mut self, time: i64, path: u32) {
        if let Some(b) = self.blocks.last_mut() {
            if b.runs.len() < b.runs.capacity() {
                if let Some(off) = time.checked_sub(b.base).and_then(|d| u32::try_from(d).ok()) {
                    b.runs.push((off, path));
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
        let cap = self.blocks.last().map_or(BLOCK_MIN, |b| (b.runs.capacity() * 2).min(BLOCK_MAX));
        let mut runs = Vec::with_capacity(cap);
        runs.push((0, path));
        self.blocks.push(Block { base: time, runs });
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

    /// The run at `c`: (from, call path).
    #[inline]
    pub(crate) fn get(&self, c: Cursor) -> Option<(i64, u32)> {
        let b = self.blocks.get(c.block)?;
        b.runs.get(c.run).map(|&(off, path)| (b.base + i64::from(off), path))
    }

    /// The place after `c`.
    #[inline]
    pub(crate) fn next(&self, c: Cursor) -> Cursor {
        if c.run + 1 < self.blocks.get(c.block).map_or(0, |b| b.runs.len()) {
            Cursor { block: c.block, run: c.run + 1 }
        } else {
            Cursor { block: c.block + 1, run: 0 }
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
        let mut c = runs.at(i64::MIN, &Default::default());
        for want in &plain {
            assert_eq!(runs.get(c), Some(*want));
            c = runs.next(c);
        }
        assert_eq!(runs.get(c), None);
        for probe in [-10, -5, -4, 0, 1, 33, 70_000, 119_000, t - 5_000_000_001, t - 3, t, t + 9] {
            let want = plain.partition_point(|r| r.0 <= probe).saturating_sub(1);
            for h in [0, 1, 3, 7, 1000] {
                let c = runs.at(probe, &[Cell::new(h), Cell::new(h)]);
                assert_eq!(runs.get(c), Some(plain[want]), "time {probe} hint {h}");
            }
        }
    }
}
