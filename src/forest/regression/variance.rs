//! Variance reduction of a candidate cut, the regression counterpart of the classifier's
//! information gain for label-guided splits (CART's criterion): the sum of squared deviations
//! of the block's targets minus those of its two sides.

use super::prior::TargetStats;
use crate::forest::weights::RowWeights;
use crate::mondrian::guided::Impurity;

/// Sets of weighted training points summarised as (Σw, Σwz), z = (y − mean) / sd the
/// standardised targets: standardising keeps Σwz² = Σw, so the squared sums below cannot
/// overflow and lose no precision to a large mean.
pub struct TargetVariance<'a> {
    y: &'a [f64],
    weights: &'a RowWeights,
    mean: f64,
    inverse_sd: f64,
}

impl<'a> TargetVariance<'a> {
    /// The targets `y` and weights of every stored point, standardised by their running
    /// statistics.
    pub fn new(y: &'a [f64], weights: &'a RowWeights, stats: &TargetStats) -> Self {
        let sd = stats.variance().sqrt();
        Self {
            y,
            weights,
            mean: stats.mean,
            inverse_sd: if sd > 0.0 && sd.is_finite() {
                1.0 / sd
            } else {
                1.0
            },
        }
    }
}

/// (Σz)² / n, 0 for an empty set.
#[inline]
fn explained(n: f64, sum: f64) -> f64 {
    if n > 0.0 {
        sum * sum / n
    } else {
        0.0
    }
}

impl Impurity for TargetVariance<'_> {
    fn width(&self) -> usize {
        2
    }

    #[inline]
    fn label(&self, point: u32) -> f64 {
        (self.y[point as usize] - self.mean) * self.inverse_sd
    }

    #[inline]
    fn weight(&self, point: u32) -> f64 {
        self.weights.of(point)
    }

    #[inline]
    fn add(&self, stats: &mut [f64], label: f64, weight: f64) {
        stats[0] += weight;
        stats[1] += weight * label;
    }

    /// SSE(both) − SSE(left) − SSE(right) = S_L²/n_L + S_R²/n_R − S²/n (the Σwz² terms cancel;
    /// n the Σw of a side).
    fn score(&self, left: &[f64], both: &[f64]) -> f64 {
        let (n_right, sum_right) = (both[0] - left[0], both[1] - left[1]);
        explained(left[0], left[1]) + explained(n_right, sum_right) - explained(both[0], both[1])
    }

    /// Σwz² of the block, which bounds each S²/n term (Cauchy–Schwarz).
    fn magnitude(&self, labels: &[f64], weights: &[f64], _: &[f64]) -> f64 {
        labels.iter().zip(weights).map(|(z, w)| w * z * z).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_equals_the_drop_in_squared_deviations() {
        let y = [1.0, 2.0, 10.0, 12.0, 3.0];
        let stats = TargetStats::default()
            .with(y.iter().map(|&v| (v, 1.0)))
            .unwrap();
        let unit = RowWeights::default();
        let v = TargetVariance::new(&y, &unit, &stats);
        let z: Vec<f64> = (0..5).map(|i| v.label(i)).collect();
        let sse = |s: &[f64]| {
            let m = s.iter().sum::<f64>() / s.len() as f64;
            s.iter().map(|a| (a - m).powi(2)).sum::<f64>()
        };
        let (mut left, mut both) = (vec![0.0; 2], vec![0.0; 2]);
        for (i, &label) in z.iter().enumerate() {
            v.add(&mut both, label, 1.0);
            if [0, 1, 4].contains(&i) {
                v.add(&mut left, label, 1.0);
            }
        }
        let direct = sse(&z) - sse(&[z[0], z[1], z[4]]) - sse(&[z[2], z[3]]);
        assert!((v.score(&left, &both) - direct).abs() < 1e-12);
        assert!(v.score(&[0.0, 0.0], &both).abs() < 1e-12);
        assert!((z.iter().map(|a| a * a).sum::<f64>() - 5.0).abs() < 1e-12);
    }
}
