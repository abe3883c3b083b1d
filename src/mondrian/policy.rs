//! Split policies: what a block of a Mondrian tree on data does when its split time comes.
//!
//! Every policy keeps the Mondrian *time*: a block with parent time t splits at t + E,
//! E ~ Exp(linear dimension of its data box), unless that exceeds the lifetime, so λ means
//! the same in every model. A policy decides the rest:
//! - whether a block pauses for a reason of the model (the sampler itself pauses blocks with
//!   fewer than `min_samples_split` points or with identical points);
//! - where the cut goes.
//!
//! The sampler and the online extension are generic over the policy (static dispatch, no cost
//! for the label-blind trees). Policies:
//! - [`PureMondrian`]: label-blind; dimension ∝ extent, location uniform (Roy & Teh 2009).
//! - [`PausePureBlocks`]: the same cuts, and a block whose points all share one class label
//!   pauses until online updates bring another label (Lakshminarayanan et al., NIPS 2014, §3).

use crate::rng::{uniform, weighted_index, TreeRng};

/// A block about to split: its data box and its training points (ids, and their rows in the
/// same order, `lower.len()` values each).
#[derive(Debug, Clone, Copy)]
pub struct Block<'a> {
    pub lower: &'a [f64],
    pub upper: &'a [f64],
    /// Σ_d (upper_d − lower_d) > 0.
    pub linear_dimension: f64,
    pub points: &'a [u32],
    pub rows: &'a [f64],
}

/// What a block does at its split time (module docs).
pub trait SplitPolicy: Sync {
    /// Whether a block holding the training points `points` pauses for a reason of the model.
    fn pauses(&self, points: &[u32]) -> bool;

    /// The cut `(dimension, location)` of a block that splits, with
    /// `lower[dimension] <= location < upper[dimension]` so both sides receive a point.
    fn cut(&self, rng: &mut TreeRng, block: &Block<'_>) -> (usize, f64);
}

/// The label-blind Mondrian process: never pauses for the model, cuts ∝ extent.
#[derive(Debug, Clone, Copy, Default)]
pub struct PureMondrian;

impl SplitPolicy for PureMondrian {
    #[inline]
    fn pauses(&self, _points: &[u32]) -> bool {
        false
    }

    #[inline]
    fn cut(&self, rng: &mut TreeRng, block: &Block<'_>) -> (usize, f64) {
        mondrian_cut(rng, block.lower, block.upper, block.linear_dimension)
    }
}

/// Mondrian cuts, and blocks whose points share one class label pause (NIPS 2014, §3).
#[derive(Debug, Clone, Copy)]
pub struct PausePureBlocks<'a> {
    /// The class of every training point.
    pub labels: &'a [u32],
}

impl SplitPolicy for PausePureBlocks<'_> {
    fn pauses(&self, points: &[u32]) -> bool {
        let mut classes = points.iter().map(|&i| self.labels[i as usize]);
        match classes.next() {
            None => true,
            Some(first) => classes.all(|c| c == first),
        }
    }

    #[inline]
    fn cut(&self, rng: &mut TreeRng, block: &Block<'_>) -> (usize, f64) {
        mondrian_cut(rng, block.lower, block.upper, block.linear_dimension)
    }
}

/// The Mondrian cut of the box `[lower, upper]` (linear dimension `total` > 0): dimension ∝
/// extent, location uniform in it, `lower[dim] <= cut < upper[dim]`.
pub fn mondrian_cut(rng: &mut TreeRng, lower: &[f64], upper: &[f64], total: f64) -> (usize, f64) {
    let dim = weighted_index(rng, lower.iter().zip(upper).map(|(l, u)| u - l), total);
    (dim, uniform_in(rng, lower[dim], upper[dim]))
}

/// A location uniform in `[a, b)` (a < b), drawn as a convex combination so that it cannot
/// overflow even when b − a would; redrawn in the rare case rounding lands on b.
pub fn uniform_in(rng: &mut TreeRng, a: f64, b: f64) -> f64 {
    loop {
        let w = uniform(rng);
        let c = (1.0 - w) * a + w * b;
        if c >= a && c < b {
            return c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::tree_rng;

    #[test]
    fn pure_blocks_pause_and_mixed_ones_do_not() {
        let labels = [0, 0, 1, 0];
        let policy = PausePureBlocks { labels: &labels };
        assert!(policy.pauses(&[0, 1, 3]));
        assert!(!policy.pauses(&[0, 2]));
        assert!(!PureMondrian.pauses(&[0, 2]));
    }

    #[test]
    fn cuts_fall_inside_the_box_in_proportion_to_extent() {
        // Extents 1 and 3: dimension 1 is drawn with probability 3/4 (sd of the frequency
        // over n draws: sqrt(3/16 / n); 5 of them is a false alarm once in 3.5 million).
        let mut rng = tree_rng(5, 0);
        let (lower, upper) = ([0.0, -1.0], [1.0, 2.0]);
        let n = 20_000;
        let mut in_dim1 = 0;
        for _ in 0..n {
            let (dim, cut) = mondrian_cut(&mut rng, &lower, &upper, 4.0);
            assert!(cut >= lower[dim] && cut < upper[dim]);
            in_dim1 += dim;
        }
        let freq = in_dim1 as f64 / n as f64;
        assert!((freq - 0.75).abs() < 5.0 * (0.1875 / n as f64).sqrt());
        assert!(uniform_in(&mut rng, -f64::MAX, f64::MAX).is_finite());
    }
}
