//! The hierarchical Gaussian prior of the regression forest and its hyper-parameters: the
//! prior's variance increments, and the closed-form heuristic of
//! Lakshminarayanan, Roy & Teh (AISTATS 2016, §3.2 and the authors' code) from running
//! statistics of the targets, and the values a caller fixes instead.
//!
//! μ_H = mean(y), v = var(y) (population), K = min(2N, 500), σ_y² = v/K, γ₁ = 2vK/(K + 2),
//! γ₂ = D / (2 log₂ N) — the authors' code's default divisor; the paper's text says 20, which
//! on our measurements (benches/RESULTS.md) gives worse NLPD and RMSE and a predictive std
//! that barely depends on the distance to the data.

use crate::error::{string_options, Error, Result};
use serde::{Deserialize, Serialize};

/// Hyper-parameters of the hierarchical Gaussian prior.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GaussianPrior {
    /// Prior mean μ_H of the root.
    pub mean: f64,
    /// Scale γ₁ of the prior variance.
    pub gamma1: f64,
    /// Time scale γ₂ of the sigmoid.
    pub gamma2: f64,
    /// Label noise variance σ_y².
    pub noise_variance: f64,
}

impl GaussianPrior {
    /// Checks that every value is finite and the variances positive.
    pub fn new(mean: f64, gamma1: f64, gamma2: f64, noise_variance: f64) -> Result<Self> {
        let bad = |name: &'static str, v: f64| Error::InvalidParameter {
            name,
            reason: format!("must be finite and > 0, got {v}"),
        };
        if !mean.is_finite() {
            return Err(Error::InvalidParameter {
                name: "prior_mean",
                reason: format!("must be finite, got {mean}"),
            });
        }
        for (name, v) in [
            ("gamma1", gamma1),
            ("gamma2", gamma2),
            ("noise_variance", noise_variance),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(name, v));
            }
        }
        Ok(Self {
            mean,
            gamma1,
            gamma2,
            noise_variance,
        })
    }

    /// Prior variance gained between times `t_from <= t_to`: γ₁ (σ(γ₂ t_to) − σ(γ₂ t_from)),
    /// written as γ₁ e^{−a} (1 − e^{−(b−a)}) / ((1 + e^{−a})(1 + e^{−b})) with a = γ₂ t_from,
    /// b = γ₂ t_to, so that late, close times do not cancel to zero.
    #[inline]
    pub fn increment(&self, t_from: f64, t_to: f64) -> f64 {
        let (a, b) = (self.gamma2 * t_from, self.gamma2 * t_to);
        let ea = (-a).exp();
        if b.is_infinite() {
            return self.gamma1 * ea / (1.0 + ea);
        }
        let eb = (-b).exp();
        self.gamma1 * ea * -(-(b - a)).exp_m1() / ((1.0 + ea) * (1.0 + eb))
    }
}

/// γ₂ = D / (GAMMA2_DIVISOR · log₂ N): the authors' code's default (the paper's text says 20).
pub const GAMMA2_DIVISOR: f64 = 2.0;

/// Below this many rows, targets that are all equal are taken as the first rows of a stream
/// rather than as constant targets (see [`heuristic_prior`]).
pub const FEW_ROWS: u64 = 10;

/// How σ_y² is chosen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub enum NoiseVariance {
    /// The paper's heuristic v/K, K = min(2N, 500).
    #[default]
    Heuristic,
    /// Pooled within-leaf variance over all trees: Σ_leaves Σ(y − ȳ_leaf)² / Σ_trees (N − L).
    WithinLeaf,
    /// A fixed value.
    Fixed(f64),
}

// A number > 0 is the parameter's other kind of value.
string_options!(NoiseVariance, "noise_variance", [
    "heuristic" => Heuristic,
    "within_leaf" => WithinLeaf,
]);

/// Caller-fixed hyper-parameters of the Gaussian prior (`None`: the heuristic).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PriorOverrides {
    pub mean: Option<f64>,
    pub gamma1: Option<f64>,
    pub gamma2: Option<f64>,
    pub noise_variance: NoiseVariance,
}

impl PriorOverrides {
    /// Whether every fixed value lies in its domain (checked on deserialised models; users'
    /// values are checked by the estimators' parameter tables).
    pub fn is_valid(&self) -> bool {
        let noise = match self.noise_variance {
            NoiseVariance::Fixed(v) => Some(v),
            _ => None,
        };
        self.mean.is_none_or(f64::is_finite)
            && [self.gamma1, self.gamma2, noise]
                .iter()
                .all(|v| v.is_none_or(|v| v.is_finite() && v > 0.0))
    }
}

/// Rows, total weight, weighted mean and weighted centred sum of squares of the targets seen
/// so far (West's weighted form of Welford's update, so online steps cost O(new points) and
/// large offsets do not cancel; with unit weights it is Welford's, operation for operation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetStats {
    pub count: u64,
    /// Σw (the count, with unit weights).
    pub weight: f64,
    pub mean: f64,
    pub centred_squares: f64,
}

impl TargetStats {
    /// The statistics with the targets and weights `(y, w)` added, or an error naming the
    /// problem if they overflow (targets so large that their variance is not a finite float64).
    pub fn with(&self, y: impl Iterator<Item = (f64, f64)>) -> Result<Self> {
        let mut s = *self;
        for (v, w) in y {
            s.count += 1;
            s.weight += w;
            let delta = v - s.mean;
            s.mean += delta * w / s.weight;
            s.centred_squares += w * delta * (v - s.mean);
        }
        if !(s.mean.is_finite() && s.centred_squares.is_finite()) {
            return Err(Error::InvalidInput(
                "y is too large: the (sample_weight-weighted) variance of the targets overflows \
                 float64; rescale y or sample_weight"
                    .into(),
            ));
        }
        Ok(s)
    }

    /// Population variance (weighted).
    pub fn variance(&self) -> f64 {
        self.centred_squares / if self.weight > 0.0 { self.weight } else { 1.0 }
    }

    /// Checks deserialised statistics.
    pub fn is_consistent(&self, n_rows: usize) -> bool {
        self.count == n_rows as u64
            && self.weight.is_finite()
            && (self.weight > 0.0 || n_rows == 0)
            && self.mean.is_finite()
            && self.centred_squares.is_finite()
            && self.centred_squares >= 0.0
    }
}

/// The prior for `n_features`-dimensional points from the target statistics, with the
/// caller's overrides; `within_leaf(total_var)` is called only when σ_y² is the pooled
/// within-leaf variance.
pub fn heuristic_prior(
    stats: &TargetStats,
    n_features: usize,
    overrides: &PriorOverrides,
    within_leaf: impl FnOnce(f64) -> f64,
) -> Result<GaussianPrior> {
    let n = stats.weight;
    let mean = stats.mean;
    // A stream's first rows, all with one target (one row, say), have no spread to measure:
    // the targets' own scale stands in, so the first predictions have a usable variance.
    // Constant targets beyond them: a variance tiny against their scale keeps the prior
    // proper.
    let spread = stats.variance();
    let var = if spread <= 0.0 && stats.count < FEW_ROWS {
        mean.powi(2).max(1.0)
    } else {
        spread.max(1e-12 * mean.abs().max(1.0).powi(2))
    }
    .min(f64::MAX);
    let k = (2.0 * n).min(500.0);
    let d = n_features as f64;
    GaussianPrior::new(
        overrides.mean.unwrap_or(mean),
        overrides.gamma1.unwrap_or(2.0 * var * (k / (k + 2.0))),
        overrides
            .gamma2
            .unwrap_or(d / (GAMMA2_DIVISOR * n.log2().max(1.0))),
        match overrides.noise_variance {
            NoiseVariance::Heuristic => var / k,
            NoiseVariance::WithinLeaf => within_leaf(var),
            NoiseVariance::Fixed(v) => v,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn increment_matches_sigmoid_difference_and_stays_positive() {
        let prior = GaussianPrior::new(0.0, 2.0, 0.7, 1.0).expect("valid");
        let sig = |t: f64| 1.0 / (1.0 + (-0.7 * t).exp());
        for (a, b) in [(0.0, 0.3), (0.5, 4.0), (2.0, 2.5), (0.0, f64::INFINITY)] {
            let naive = 2.0 * (if b == f64::INFINITY { 1.0 } else { sig(b) } - sig(a));
            assert!((prior.increment(a, b) - naive).abs() < 1e-14);
        }
        // Late and close: the naive difference is 0, the true value ≈ γ₁ e^{−a} γ₂ δ.
        let (a, delta) = (60.0, 1e-3);
        let exact = 2.0 * (-0.7f64 * a).exp() * 0.7 * delta;
        assert!((prior.increment(a, a + delta) / exact - 1.0).abs() < 1e-3);
    }

    #[test]
    fn welford_matches_two_pass_and_rejects_overflow() {
        let y = [1e9 + 1.0, 1e9 + 2.0, 1e9 + 4.0, 1e9 + 7.0];
        let s = TargetStats::default()
            .with(y[..2].iter().map(|&v| (v, 1.0)))
            .and_then(|s| s.with(y[2..].iter().map(|&v| (v, 1.0))))
            .expect("finite");
        let mean = y.iter().sum::<f64>() / 4.0;
        let var = y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 4.0;
        assert!((s.mean - mean).abs() < 1e-6);
        // Welford rounds the running mean at 1e9 · ε ≈ 1e-7, which moves the variance by ~1e-7.
        assert!((s.variance() - var).abs() < 1e-5 * var);
        assert!(TargetStats::default()
            .with([(1e300, 1.0), (-1e300, 1.0)].into_iter())
            .is_err());
    }

    #[test]
    fn heuristic_matches_the_papers_formulas() {
        let s = TargetStats::default()
            .with((0..1000).map(|i| ((i % 7) as f64, 1.0)))
            .expect("finite");
        let p =
            heuristic_prior(&s, 4, &PriorOverrides::default(), |_| unreachable!()).expect("valid");
        let (v, k) = (s.variance(), 500.0);
        assert!((p.gamma1 - 2.0 * v * k / (k + 2.0)).abs() < 1e-12);
        assert!((p.noise_variance - v / k).abs() < 1e-15);
        assert!((p.gamma2 - 4.0 / (2.0 * 1000f64.log2())).abs() < 1e-15);
    }
}
