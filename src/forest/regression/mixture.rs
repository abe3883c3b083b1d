//! Mixtures of Gaussians: the predictive distribution of a regression forest is the
//! equal-weight mixture over trees of each tree's branch-off mixture (AISTATS 2016, eq. 3–5).
//! Running folds give its mean and variance and its log density at a target; its quantiles
//! are found by safeguarded Halley steps on the mixture CDF.

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
/// spread ([`spread_about_mean`]): its variance is E[var] + ρ² (E[(mean − m̄)²]).
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

/// Φ, the standard normal CDF.
#[inline]
fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// Φ⁻¹(p) for 0 < p < 1 to about 1e-9 relative (Acklam's rational approximation): only a
/// starting point for the Halley iteration below, which does not depend on its accuracy.
fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        let t = (-2.0 * q.ln()).sqrt();
        (((((C[0] * t + C[1]) * t + C[2]) * t + C[3]) * t + C[4]) * t + C[5])
            / ((((D[0] * t + D[1]) * t + D[2]) * t + D[3]) * t + 1.0)
    };
    if p < 0.02425 {
        tail(p)
    } else if p > 1.0 - 0.02425 {
        -tail(1.0 - p)
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// Beyond this many standard deviations a component's CDF is 0 or 1 and its density 0 in
/// double precision (Φ(−9) ≈ 1e-19), so it is not evaluated.
const NEGLIGIBLE_Z: f64 = 9.0;

/// The quantiles at `levels` (each in (0, 1), any order) of the equal-weight mixture over
/// `n_trees` trees of `comps`: the roots of F(y) = q, F the mixture CDF, by Halley steps
/// (F's first two derivatives cost one more sum) safeguarded by bisection on a bracket where
/// F crosses q. Exact to about 1e-12 relative.
///
/// The levels are solved in increasing order, each root bracketing the next from below (F is
/// increasing). The first starts from the quantile of the Gaussian with the mixture's mean and
/// variance, each next one from a Newton step off the root before it, so a level takes two or
/// three CDF evaluations.
pub fn mixture_quantiles(comps: &[Component], n_trees: usize, levels: &[f64]) -> Vec<f64> {
    let m = n_trees as f64;
    // (weight, mean, 1/sd) of the components that carry weight.
    let parts: Vec<(f64, f64, f64)> = (comps.iter())
        .filter(|c| c.weight > 0.0)
        .map(|c| (c.weight, c.mean, 1.0 / c.var.sqrt()))
        .collect();
    // F(y), F'(y) and F''(y).
    let cdf = |y: f64| -> (f64, f64, f64) {
        let (mut f, mut pdf, mut slope) = (0.0, 0.0, 0.0);
        for &(w, mean, inv_sd) in &parts {
            let z = (y - mean) * inv_sd;
            if z > NEGLIGIBLE_Z {
                f += w;
            } else if z >= -NEGLIGIBLE_Z {
                f += w * normal_cdf(z);
                let density = w * inv_sd * (-0.5 * z * z).exp();
                pdf += density;
                slope -= density * z * inv_sd;
            }
        }
        let norm = m * (2.0 * std::f64::consts::PI).sqrt();
        (f / m, pdf / norm, slope / norm)
    };
    // Φ(±40) is 0 and 1 in double precision, so F crosses every q inside this bracket.
    let (low, high) = parts.iter().fold(
        (f64::INFINITY, f64::NEG_INFINITY),
        |(lo, hi), &(_, mean, inv_sd)| (lo.min(mean - 40.0 / inv_sd), hi.max(mean + 40.0 / inv_sd)),
    );
    let centre = parts.iter().map(|&(w, mean, _)| w * mean).sum::<f64>() / m;
    let second = (parts.iter())
        .map(|&(w, mean, inv_sd)| w * ((mean - centre).powi(2) + 1.0 / (inv_sd * inv_sd)))
        .sum::<f64>()
        / m;
    let sd = second.max(0.0).sqrt();
    let narrowest = parts
        .iter()
        .map(|&(_, _, inv_sd)| 1.0 / inv_sd)
        .fold(f64::INFINITY, f64::min);
    let mut order: Vec<usize> = (0..levels.len()).collect();
    order.sort_by(|&a, &b| levels[a].total_cmp(&levels[b]));
    let mut out = vec![f64::NAN; levels.len()];
    let mut floor = low;
    // (level, root, density there) of the level solved last.
    let mut previous: Option<(f64, f64, f64)> = None;
    for k in order {
        let q = levels[k];
        let (mut lo, mut hi) = (floor, high);
        let guess = match previous {
            Some((q0, y0, pdf0)) if pdf0 > 0.0 => y0 + (q - q0) / pdf0,
            _ => centre + sd * normal_quantile(q),
        };
        let mut y = if guess.is_finite() {
            guess.clamp(lo, hi)
        } else {
            0.5 * (lo + hi)
        };
        let mut density = 0.0;
        for _ in 0..200 {
            let (f, pdf, slope) = cdf(y);
            density = pdf;
            if f < q {
                lo = y;
            } else {
                hi = y;
            }
            if hi - lo <= 1e-13 * (1.0 + y.abs()) || f == q {
                break;
            }
            let g = f - q;
            let halley = 2.0 * pdf * pdf - g * slope;
            let step = if halley > 0.0 {
                2.0 * g * pdf / halley
            } else {
                g / pdf
            };
            let next = y - step;
            // Cubic convergence: after a step this small y is exact to rounding (its error is
            // of the order of the step cubed over the narrowest component's variance; a step
            // small against y alone is not enough, as a narrow component's steep CDF takes
            // short steps far from the root). Tested before the bracket, which a step below
            // y's rounding unit leaves.
            if pdf > 0.0 && step.abs() <= (1e-4 * narrowest).max(1e-14 * (1.0 + y.abs())) {
                y = next.clamp(lo, hi);
                break;
            }
            if pdf > 0.0 && next > lo && next < hi {
                y = next;
            } else {
                y = 0.5 * (lo + hi);
            }
        }
        out[k] = y;
        floor = lo.min(y);
        previous = Some((q, y, density));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quantile by plain bisection of the mixture CDF (the reference).
    fn bisection(comps: &[Component], m: usize, q: f64) -> f64 {
        let f = |y: f64| {
            comps
                .iter()
                .map(|c| c.weight * normal_cdf((y - c.mean) / c.var.sqrt()))
                .sum::<f64>()
                / m as f64
        };
        let (mut lo, mut hi) = (-1e3, 1e3);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid) < q {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }

    #[test]
    fn quantiles_match_bisection_in_any_order() {
        // Two trees: a skewed, a bimodal and a near-degenerate mixture.
        let comps = [
            Component {
                weight: 0.7,
                mean: 0.0,
                var: 1.0,
            },
            Component {
                weight: 0.3,
                mean: 5.0,
                var: 0.01,
            },
            Component {
                weight: 0.5,
                mean: -3.0,
                var: 4.0,
            },
            Component {
                weight: 0.5,
                mean: 2.0,
                var: 1e-8,
            },
            Component {
                weight: 0.0,
                mean: 1e6,
                var: 1.0,
            },
        ];
        let levels = [
            0.95, 0.05, 0.5, 0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.4, 0.6, 0.001, 0.999,
        ];
        let fast = mixture_quantiles(&comps, 2, &levels);
        for (q, y) in levels.iter().zip(&fast) {
            let reference = bisection(&comps, 2, *q);
            assert!(
                (y - reference).abs() <= 1e-12 * (1.0 + reference.abs()),
                "{q}: {y} vs {reference}"
            );
        }
    }

    #[test]
    fn narrow_components_far_from_zero_reach_the_root() {
        // Steep CDF steps: small Halley steps far from the root must not stop the search.
        let comps: Vec<Component> = [1e6, 1e6 + 0.2, 1e6 + 0.4]
            .iter()
            .map(|&mean| Component {
                weight: 1.0,
                mean,
                var: 9e-10,
            })
            .collect();
        let levels = [0.05, 0.2, 0.45, 0.5, 0.72, 0.9];
        let fast = mixture_quantiles(&comps, 3, &levels);
        for (q, y) in levels.iter().zip(&fast) {
            let f = comps
                .iter()
                .map(|c| normal_cdf((y - c.mean) / c.var.sqrt()))
                .sum::<f64>()
                / 3.0;
            assert!((f - q).abs() < 1e-5, "{q}: F({y}) = {f}");
        }
    }

    #[test]
    fn normal_quantile_inverts_the_cdf() {
        for p in [1e-10, 0.01, 0.2, 0.5, 0.77, 0.99, 1.0 - 1e-10] {
            assert!((normal_cdf(normal_quantile(p)) - p).abs() < 1e-8 * p.min(1.0 - p) + 1e-15);
        }
    }
}
