//! Portable, per-tree random streams.
//!
//! Tree `m` of a forest seeded with `seed` draws from its own xoshiro256++ stream whose state is
//! derived from `(seed, m)` by SplitMix64, so results never depend on the number of threads.
//! The state lives inside the tree and advances with every draw (online updates included).

use rand::{Rng, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator every tree owns.
pub type TreeRng = Xoshiro256PlusPlus;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The stream of tree `index` in a forest seeded with `seed`.
pub fn tree_rng(seed: u64, index: u64) -> TreeRng {
    let mut state = seed ^ splitmix64(&mut index.wrapping_mul(0xD1B5_4A32_D192_ED03));
    let mut bytes = [0u8; 32];
    for chunk in bytes.chunks_exact_mut(8) {
        chunk.copy_from_slice(&splitmix64(&mut state).to_le_bytes());
    }
    TreeRng::from_seed(bytes)
}

/// Uniform draw in [0, 1).
#[inline]
pub fn uniform(rng: &mut TreeRng) -> f64 {
    rng.random::<f64>()
}

/// Exp(rate) draw; `rate == 0` gives +inf (an empty box never splits).
#[inline]
pub fn exponential(rng: &mut TreeRng, rate: f64) -> f64 {
    if rate <= 0.0 {
        return f64::INFINITY;
    }
    // 1 - U lies in (0, 1], so the logarithm is finite.
    -(1.0 - uniform(rng)).ln() / rate
}

/// Index `d` drawn with probability `weights[d] / sum(weights)`; `total` is that sum (> 0).
#[inline]
pub fn weighted_index(rng: &mut TreeRng, weights: impl Iterator<Item = f64>, total: f64) -> usize {
    let target = uniform(rng) * total;
    let mut acc = 0.0;
    let mut last_positive = 0;
    for (d, w) in weights.enumerate() {
        if w > 0.0 {
            last_positive = d;
            acc += w;
            if target < acc {
                return d;
            }
        }
    }
    // Rounding can leave `target` just above the accumulated sum.
    last_positive
}

/// Raw 64 random bits (used to derive seeds).
#[inline]
pub fn next_u64(rng: &mut TreeRng) -> u64 {
    rng.next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_and_repeat() {
        let a: Vec<u64> = (0..4).map(|m| next_u64(&mut tree_rng(7, m))).collect();
        let b: Vec<u64> = (0..4).map(|m| next_u64(&mut tree_rng(7, m))).collect();
        assert_eq!(a, b);
        for i in 0..4 {
            for j in 0..i {
                assert_ne!(a[i], a[j]);
            }
        }
    }

    #[test]
    fn exponential_mean_matches_rate() {
        // Mean of n Exp(2) draws: 0.5 with standard error 0.5/sqrt(n).
        let mut rng = tree_rng(1, 0);
        let n = 200_000;
        let mean: f64 = (0..n).map(|_| exponential(&mut rng, 2.0)).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 5.0 * 0.5 / (n as f64).sqrt());
        assert!(exponential(&mut rng, 0.0).is_infinite());
    }
}
