//! A small deterministic pseudo-random generator (SplitMix64).
//!
//! spoor-synth draws every random quantity from a *stateless* hash of the seed and
//! of what is being drawn (application, rank, step, purpose), so a value does not
//! depend on the order in which the generator visits processes, and the output for
//! a seed is the same on every platform and in every version that keeps this file.

/// The SplitMix64 finalizer: a bijective mix of 64 bits.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A hash of `seed` and `parts`, in order.
pub fn hash(seed: u64, parts: &[u64]) -> u64 {
    parts.iter().fold(mix(seed), |h, &p| mix(h ^ p))
}

/// A number in [0, 1) made of the 53 high bits of `x`.
pub fn unit(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A sequential SplitMix64 stream, for callers that want one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        let z = mix(self.state);
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z
    }

    /// A number in [0, 1).
    pub fn next_unit(&mut self) -> f64 {
        unit(self.next_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        // SplitMix64 from seed 0 (published reference outputs).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn unit_range() {
        assert_eq!(unit(0), 0.0);
        assert!(unit(u64::MAX) < 1.0);
        let mut r = SplitMix64::new(7);
        for _ in 0..1000 {
            let u = r.next_unit();
            assert!((0.0..1.0).contains(&u));
        }
    }

    #[test]
    fn hash_depends_on_every_part() {
        let a = hash(1, &[1, 2, 3]);
        assert_ne!(a, hash(2, &[1, 2, 3]));
        assert_ne!(a, hash(1, &[1, 2, 4]));
        assert_ne!(a, hash(1, &[2, 1, 3]));
        assert_eq!(a, hash(1, &[1, 2, 3]));
    }
}
