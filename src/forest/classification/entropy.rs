//! Information gain of a candidate cut (the label-guided-splits poster, eq. 1–3): the entropy
//! of the block's class distribution minus the size-weighted entropies of its two sides.

use crate::mondrian::guided::Impurity;

/// Class histograms of sets of training points with classes `labels` (`n_classes` classes).
pub struct ClassEntropy<'a> {
    pub labels: &'a [u32],
    pub n_classes: usize,
}

/// n · H(p) = n log n − Σ_k n_k log n_k for the histogram `counts` (natural logarithms).
fn scaled_entropy(counts: &[u32]) -> f64 {
    let n: u32 = counts.iter().sum();
    let xlogx = |c: u32| {
        if c > 0 {
            f64::from(c) * f64::from(c).ln()
        } else {
            0.0
        }
    };
    xlogx(n) - counts.iter().map(|&c| xlogx(c)).sum::<f64>()
}

impl Impurity for ClassEntropy<'_> {
    type Stats = Vec<u32>;

    fn empty(&self) -> Vec<u32> {
        vec![0; self.n_classes]
    }

    #[inline]
    fn add(&self, stats: &mut Vec<u32>, point: u32) {
        stats[self.labels[point as usize] as usize] += 1;
    }

    fn merge(&self, into: &mut Vec<u32>, from: &Vec<u32>) {
        into.iter_mut().zip(from).for_each(|(a, b)| *a += b);
    }

    /// n · (information gain) = n H(both) − n_L H(left) − n_R H(right).
    fn score(&self, left: &Vec<u32>, both: &Vec<u32>) -> f64 {
        let right: Vec<u32> = both.iter().zip(left).map(|(b, l)| b - l).collect();
        scaled_entropy(both) - scaled_entropy(left) - scaled_entropy(&right)
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
            n_classes: 2,
        };
        let mut both = e.empty();
        (0..4).for_each(|i| e.add(&mut both, i));
        // Perfect split: 4 · ln 2; useless split (one of each on each side): 0.
        assert!((e.score(&vec![2, 0], &both) - 4.0 * 2f64.ln()).abs() < 1e-12);
        assert!(e.score(&vec![1, 1], &both).abs() < 1e-12);
    }
}
