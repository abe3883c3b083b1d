//! Information gain of a candidate cut (the label-guided-splits poster, eq. 1–3): the entropy
//! of the block's class distribution minus the size-weighted entropies of its two sides.

use crate::forest::weights::RowWeights;
use crate::mondrian::guided::Impurity;

/// Class histograms (weighted counts) of sets of training points with classes `labels`
/// (`n_classes` classes) and weights `weights`.
pub struct ClassEntropy<'a> {
    pub labels: &'a [u32],
    pub weights: &'a RowWeights,
    pub n_classes: usize,
}

/// x log x (0 at 0), for counts x.
#[inline]
fn xlogx(c: f64) -> f64 {
    if c > 0.0 {
        c * c.ln()
    } else {
        0.0
    }
}

impl Impurity for ClassEntropy<'_> {
    fn width(&self) -> usize {
        self.n_classes
    }

    #[inline]
    fn label(&self, point: u32) -> f64 {
        f64::from(self.labels[point as usize])
    }

    #[inline]
    fn weight(&self, point: u32) -> f64 {
        self.weights.of(point)
    }

    #[inline]
    fn add(&self, stats: &mut [f64], label: f64, weight: f64) {
        stats[label as usize] += weight;
    }

    /// n · (information gain) = n H(both) − n_L H(left) − n_R H(right), with
    /// n · H(p) = n log n − Σ_k n_k log n_k for a histogram (natural logarithms).
    fn score(&self, left: &[f64], both: &[f64]) -> f64 {
        let (mut n, mut n_left, mut n_right) = (0.0, 0.0, 0.0);
        let (mut sum, mut sum_left, mut sum_right) = (0.0, 0.0, 0.0);
        for (&b, &l) in both.iter().zip(left) {
            let r = b - l;
            (n, n_left, n_right) = (n + b, n_left + l, n_right + r);
            (sum, sum_left, sum_right) =
                (sum + xlogx(b), sum_left + xlogx(l), sum_right + xlogx(r));
        }
        (xlogx(n) - sum) - (xlogx(n_left) - sum_left) - (xlogx(n_right) - sum_right)
    }

    /// |n log n| + n (n the block's Σw), which bounds every x log x term of a score.
    fn magnitude(&self, _: &[f64], _: &[f64], both: &[f64]) -> f64 {
        let n: f64 = both.iter().sum();
        xlogx(n).abs() + n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gain_of_a_perfect_split_is_the_entropy() {
        let labels = [0, 0, 1, 1];
        let e = ClassEntropy {
            labels: &labels,
            weights: &RowWeights::default(),
            n_classes: 2,
        };
        let mut both = vec![0.0; e.width()];
        (0..4).for_each(|i| e.add(&mut both, e.label(i), e.weight(i)));
        // Perfect split: 4 · ln 2; useless split (one of each on each side): 0.
        assert!((e.score(&[2.0, 0.0], &both) - 4.0 * 2f64.ln()).abs() < 1e-12);
        assert!(e.score(&[1.0, 1.0], &both).abs() < 1e-12);
    }
}
