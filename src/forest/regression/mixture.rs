//! Mixtures of Gaussians: the predictive distribution of a regression forest is the
//! equal-weight mixture over trees of each tree's branch-off mixture (AISTATS 2016, eq. 3–5).
//! Running folds give its mean and variance and its log density at a target; its quantiles
//! are in `quantiles`.

use super::belief::Gaussian;
use crate::error::{Error, Result};

/// One Gaussian of a predictive mixture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Component {
    pub weight: f64,
    pub mean: f64,
    pub var: f64,
}

/// Running mean and variance of an equal-weight mixture over trees, fed one component at a
/// time. Moments are taken about `reference` (the prior mean) so that the variance does not
/// cancel when the mean is large against the spread. The within-component variances are
/// summed apart from the spread of the means, so that the forest's predictive can scale the
/// spread ([`spread_about_mean`]): its variance is E\[var\] + ρ² (E\[(mean − m̄)²\]).
#[derive(Debug, Clone, Copy)]
pub struct MomentsFold {
    reference: f64,
    weighted_offset: f64,
    weighted_square: f64,
    weighted_var: f64,
}

/// Running sums of a [`MomentsFold`]: Σ w (mean − reference), Σ w (mean − reference)², Σ w var.
pub type MomentSums = (f64, f64, f64);

impl MomentsFold {
    /// A fold that has already taken components summing to `sums` (from [`Self::sums`]):
    /// the trees of one forest may be folded in several processes, one after another.
    pub fn resume(reference: f64, (offset, square, var): MomentSums) -> Self {
        Self {
            reference,
            weighted_offset: offset,
            weighted_square: square,
            weighted_var: var,
        }
    }

    /// The running sums.
    pub fn sums(&self) -> MomentSums {
        (
            self.weighted_offset,
            self.weighted_square,
            self.weighted_var,
        )
    }

    #[inline]
    pub fn add(&mut self, c: &Component) {
        let offset = c.mean - self.reference;
        self.weighted_offset += c.weight * offset;
        self.weighted_square += c.weight * offset * offset;
        self.weighted_var += c.weight * c.var;
    }

    /// (mean, variance) once all `n_trees` trees' components (weights summing to 1 per
    /// tree) have been added, the spread of the component means scaled by `spread` (ρ).
    pub fn finish(self, n_trees: usize, spread: f64) -> (f64, f64) {
        let m = n_trees as f64;
        let offset = self.weighted_offset / m;
        let between = (self.weighted_square / m - offset * offset).max(0.0);
        (
            self.reference + offset,
            self.weighted_var / m + spread * spread * between,
        )
    }
}

/// The forest's predictive from its trees' components (AISTATS 2016, eq. 4, with a spread
/// factor ρ): every component mean μ is moved to m̄ + ρ (μ − m̄), m̄ = (1/M) Σ w μ the mixture's
/// mean (M = `n_trees`); variances and weights are kept. ρ = 1 leaves the components as they
/// are (the equal mixture over trees); ρ < 1 narrows the spread of the trees' means about
/// their average, which carries the randomness of the partitions as well as uncertainty
/// about y.
pub fn spread_about_mean(comps: &mut [Component], n_trees: usize, spread: f64) {
    if spread == 1.0 {
        return;
    }
    let centre = comps.iter().map(|c| c.weight * c.mean).sum::<f64>() / n_trees as f64;
    for c in comps {
        c.mean = centre + spread * (c.mean - centre);
    }
}

/// Running log of Σ_components weight · N(y; mean, var), by streaming log-sum-exp.
#[derive(Debug, Clone, Copy)]
pub struct LogDensityFold {
    max: f64,
    scaled_sum: f64,
}

impl Default for LogDensityFold {
    fn default() -> Self {
        Self {
            max: f64::NEG_INFINITY,
            scaled_sum: 0.0,
        }
    }
}

impl LogDensityFold {
    #[inline]
    pub fn add(&mut self, c: &Component, y: f64) {
        if c.weight <= 0.0 {
            return;
        }
        let log = c.weight.ln()
            + Gaussian {
                mean: c.mean,
                var: c.var,
            }
            .log_pdf(y);
        if log > self.max {
            self.scaled_sum = self.scaled_sum * (self.max - log).exp() + 1.0;
            self.max = log;
        } else {
            self.scaled_sum += (log - self.max).exp();
        }
    }

    /// The fold of both folds' components.
    pub fn merge(self, other: Self) -> Self {
        let max = self.max.max(other.max);
        if max == f64::NEG_INFINITY {
            return self;
        }
        Self {
            max,
            scaled_sum: self.scaled_sum * (self.max - max).exp()
                + other.scaled_sum * (other.max - max).exp(),
        }
    }

    /// log p(y) under the equal-weight mixture of `n_trees` trees.
    pub fn finish(self, n_trees: usize) -> f64 {
        self.max + self.scaled_sum.ln() - (n_trees as f64).ln()
    }
}

/// Rows' predictive mixtures prepared to be scored with every variance multiplied by c and
/// the means spread by ρ about their centre, as [`spread_about_mean`] spreads them.
///
/// Multiplying γ₁ and σ_y² by c leaves every posterior mean of a tree unchanged and
/// multiplies every variance of its predictive by c (the messages' precisions all scale by
/// 1/c), so a search over that scale and ρ scores one set of components, without belief
/// propagation. With m̄ the centre, d_k = μ_k − m̄, r_k = y − m̄ − ρ d_k, q_k = r_k² / (c v_k)
/// and π_k the responsibilities: log p(y) = log Σ_k w_k N(y; m̄ + ρ d_k, c v_k) − log M,
/// ∂/∂ log c = Σ π_k (q_k − 1) / 2 and ∂/∂ρ = Σ π_k r_k d_k / (c v_k); the Hessian is
/// Σ π_k (H_k + g_k g_kᵀ) − g gᵀ, with g_k those per component, g their average and
/// H_k = [[−q_k/2, −r_k d_k/(c v_k)], [·, −d_k²/(c v_k)]].
#[derive(Debug, Clone)]
pub struct ScaledMixtures {
    /// Row i's components are `offsets[i]..offsets[i + 1]` of the per-component arrays.
    offsets: Vec<usize>,
    /// log w_k − ½ log(2π v_k), d_k and 1 / v_k per component.
    log_norm: Vec<f64>,
    offset: Vec<f64>,
    precision: Vec<f64>,
    /// y − m̄ and the row's weight, per row.
    residual: Vec<f64>,
    row_weight: Vec<f64>,
    log_trees: f64,
}

impl ScaledMixtures {
    /// Row i's components `rows[i]` (each tree's weights summing to 1) of `n_trees` trees,
    /// its target `y[i]` and weight `weights[i]`.
    pub fn new(
        rows: &[Vec<Component>],
        y: &[f64],
        weights: &[f64],
        n_trees: usize,
    ) -> Result<Self> {
        let n = y.len();
        if rows.len() != n || weights.len() != n || n_trees == 0 {
            return Err(Error::InvalidInput(
                "mixtures, targets and weights do not describe the same rows".into(),
            ));
        }
        let k = rows.iter().map(Vec::len).sum();
        let mut out = Self {
            offsets: Vec::with_capacity(n + 1),
            log_norm: Vec::with_capacity(k),
            offset: Vec::with_capacity(k),
            precision: Vec::with_capacity(k),
            residual: Vec::with_capacity(n),
            row_weight: weights.to_vec(),
            log_trees: (n_trees as f64).ln(),
        };
        out.offsets.push(0);
        for (row, &target) in rows.iter().zip(y) {
            let centre = row.iter().map(|c| c.weight * c.mean).sum::<f64>() / n_trees as f64;
            out.residual.push(target - centre);
            for c in row {
                let log_norm = c.weight.ln() - 0.5 * (2.0 * std::f64::consts::PI * c.var).ln();
                out.log_norm.push(log_norm);
                out.offset.push(c.mean - centre);
                out.precision.push(1.0 / c.var);
            }
            out.offsets.push(out.log_norm.len());
        }
        Ok(out)
    }

    /// Σ_i w_i of log p(y_i) and of its gradient and Hessian in (log c, ρ), at scale
    /// c = exp(`log_scale`) and `spread` ρ.
    pub fn score(&self, log_scale: f64, spread: f64) -> MixtureScore {
        let inverse_scale = (-log_scale).exp();
        let mut total = MixtureScore::default();
        let mut logs = Vec::new();
        for (i, bounds) in self.offsets.windows(2).enumerate() {
            let range = bounds[0]..bounds[1];
            let (y, w) = (self.residual[i], self.row_weight[i]);
            let residual = |k: usize| y - spread * self.offset[k];
            logs.clear();
            logs.extend(range.clone().map(|k| {
                let r = residual(k);
                self.log_norm[k] - 0.5 * (log_scale + r * r * self.precision[k] * inverse_scale)
            }));
            let max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            // Σ p, Σ p g and Σ p (H + g gᵀ) of the components (p ∝ responsibility).
            let (mut sum, mut g, mut h) = (0.0, [0.0; 2], [0.0; 3]);
            for (k, &log) in range.zip(&logs) {
                let p = (log - max).exp();
                let r = residual(k);
                let scaled_precision = self.precision[k] * inverse_scale;
                let half_q = 0.5 * r * r * scaled_precision;
                let d = self.offset[k];
                let (g_scale, g_spread) = (half_q - 0.5, r * d * scaled_precision);
                sum += p;
                g[0] += p * g_scale;
                g[1] += p * g_spread;
                h[0] += p * (g_scale * g_scale - half_q);
                h[1] += p * (g_scale * g_spread - g_spread);
                h[2] += p * (g_spread * g_spread - d * d * scaled_precision);
            }
            let (g0, g1) = (g[0] / sum, g[1] / sum);
            total.value += w * (max + sum.ln() - self.log_trees);
            total.gradient[0] += w * g0;
            total.gradient[1] += w * g1;
            total.hessian[0] += w * (h[0] / sum - g0 * g0);
            total.hessian[1] += w * (h[1] / sum - g0 * g1);
            total.hessian[2] += w * (h[2] / sum - g1 * g1);
        }
        total
    }
}

/// A weighted sum of log densities with its gradient and Hessian in (log c, ρ) (the Hessian
/// as its entries (log c, log c), (log c, ρ), (ρ, ρ)).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MixtureScore {
    pub value: f64,
    pub gradient: [f64; 2],
    pub hessian: [f64; 3],
}
