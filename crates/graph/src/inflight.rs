//! A map for what a pass over the graph in node order holds only while it is in flight
//! (origins whose remote arcs have not all been read): keys close together in the
//! graph's order.

use crate::pag::NONE;
use rustc_hash::FxHashMap;

/// A map from keys that are close together to values: a table indexed by a key's low
/// bits, where nearly all of them fit, and a map for those whose place is taken.
pub struct InFlight<V> {
    /// The key in each place, `NONE` when it is free.
    keys: Vec<u32>,
    vals: Vec<V>,
    /// How many keys in `more` have each place.
    in_more: Vec<u32>,
    more: FxHashMap<u32, V>,
    /// What a free place holds.
    blank: V,
}

/// The most places an `InFlight` grows to.
const MAX_PLACES: usize = 1 << 20;

impl<V: Copy> InFlight<V> {
    /// An empty map whose free places hold `blank`.
    pub fn new(blank: V) -> Self {
        InFlight::with_places(1 << 12, blank)
    }

    /// An empty map of `n` places (a power of two) to begin with.
    pub fn with_places(n: usize, blank: V) -> Self {
        InFlight {
            keys: vec![NONE; n],
            vals: vec![blank; n],
            in_more: vec![0; n],
            more: FxHashMap::default(),
            blank,
        }
    }

    #[inline(always)]
    fn place(&self, x: u32) -> usize {
        x as usize & (self.keys.len() - 1)
    }

    /// The value of key `x`.
    #[inline(always)]
    pub fn get_mut(&mut self, x: u32) -> Option<&mut V> {
        let i = self.place(x);
        if self.keys[i] == x {
            return Some(&mut self.vals[i]);
        }
        if self.in_more[i] == 0 {
            return None;
        }
        self.more.get_mut(&x)
    }

    /// The value of key `x`.
    #[inline(always)]
    pub fn get(&self, x: u32) -> Option<V> {
        let i = self.place(x);
        if self.keys[i] == x {
            return Some(self.vals[i]);
        }
        if self.in_more[i] == 0 {
            return None;
        }
        self.more.get(&x).copied()
    }

    /// Adds key `x`, which has no value.
    #[inline(always)]
    pub fn insert(&mut self, x: u32, v: V) {
        let i = self.place(x);
        if self.keys[i] == NONE {
            self.keys[i] = x;
            self.vals[i] = v;
        } else {
            self.insert_more(x, v);
        }
    }

    #[cold]
    fn insert_more(&mut self, x: u32, v: V) {
        let i = self.place(x);
        self.in_more[i] += 1;
        self.more.insert(x, v);
        if self.more.len() > self.keys.len() / 8 && self.keys.len() < MAX_PLACES {
            let mut bigger = InFlight::with_places(self.keys.len() * 2, self.blank);
            for (i, &k) in self.keys.iter().enumerate() {
                if k != NONE {
                    bigger.insert(k, self.vals[i]);
                }
            }
            for (&k, &v) in &self.more {
                bigger.insert(k, v);
            }
            *self = bigger;
        }
    }

    /// Removes key `x`, if it is there.
    #[inline(always)]
    pub fn remove(&mut self, x: u32) {
        let i = self.place(x);
        if self.keys[i] == x {
            self.keys[i] = NONE;
        } else if self.more.remove(&x).is_some() {
            self.in_more[i] -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table against a map on a random mix of insertions, look-ups, updates and
    /// removals of keys spread wider than its places, through its growth.
    #[test]
    fn in_flight_behaves_like_a_map() {
        let mut table = InFlight::with_places(16, 0u8);
        let mut model: FxHashMap<u32, u8> = FxHashMap::default();
        let mut rng = 777u64;
        for n in 0..300_000u32 {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Mostly recent keys, sometimes far ones that collide in the table.
            let x = if (rng >> 60) < 3 {
                (rng >> 20) as u32 % 5_000_000
            } else {
                n / 2 + (rng >> 40) as u32 % 64
            };
            let v = (rng >> 8) as u8 | 1;
            match (rng >> 33) % 3 {
                0 => {
                    if let std::collections::hash_map::Entry::Vacant(e) = model.entry(x) {
                        table.insert(x, v);
                        e.insert(v);
                    }
                }
                1 => {
                    if let Some(t) = table.get_mut(x) {
                        *t = v;
                    }
                    if let Some(m) = model.get_mut(&x) {
                        *m = v;
                    }
                }
                _ => {
                    table.remove(x);
                    model.remove(&x);
                }
            }
            assert_eq!(table.get(x), model.get(&x).copied(), "key {x} at step {n}");
            assert_eq!(table.get_mut(x).copied(), model.get(&x).copied(), "key {x} at step {n}");
        }
        assert!(table.keys.len() > 16, "the table grew");
        for (&x, &m) in &model {
            assert_eq!(table.get_mut(x).copied(), Some(m));
        }
        let held = table.keys.iter().filter(|&&k| k != NONE).count() + table.more.len();
        assert_eq!(held, model.len());
        assert_eq!(table.in_more.iter().map(|&c| c as usize).sum::<usize>(), table.more.len());
    }
}
