//! Mixtures of Gaussians: the predictive distribution of a regression forest is the
//! equal-weight mixture over trees of each tree's branch-off mixture (AISTATS 2016, eq. 3–5).
//! Running folds give its mean and variance and its log density at a target; its quantiles
//! are found by a safeguarded Newton iteration on the mixture CDF.

use super::belief::Gaussian;

/// One Gaussian of a predictive mixture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Component {
    pub weight: f64,
    pub mean: f64,
    pub var: f64,
}

/// Running mean and variance of an equal-weight mixture over trees, fed one component at a
/// time. Moments are taken about `reference` (the prior mean) so that the variance does not
/// cancel when the mean is large against the spread.
#[derive(Debug, Clone, Copy)]
pub struct MomentsFold {
    reference: f64,
    weighted_offset: f64,
    weighted_second: f64,
}

impl MomentsFold {
    pub fn new(reference: f64) -> Self {
        Self {
            reference,
            weighted_offset: 0.0,
            weighted_second: 0.0,
        }
    }

    /// A fold that has already taken components summing to `sums` (from [`Self::sums`]):
    /// the trees of one forest may be folded in several processes, one after another.
    pub fn resume(reference: f64, (weighted_offset, weighted_second): (f64, f64)) -> Self {
        Self {
            reference,
            weighted_offset,
            weighted_second,
        }
    }

    /// The running sums Σ w (mean − reference) and Σ w (var + (mean − reference)²).
    pub fn sums(&self) -> (f64, f64) {
        (self.weighted_offset, self.weighted_second)
    }

    #[inline]
    pub fn add(&mut self, c: &Component) {
        let offset = c.mean - self.reference;
        self.weighted_offset += c.weight * offset;
        self.weighted_second += c.weight * (c.var + offset * offset);
    }

    /// (mean, variance) once all `n_trees` trees' components (weights summing to 1 per
    /// tree) have been added.
    pub fn finish(self, n_trees: usize) -> (f64, f64) {
        let m = n_trees as f64;
        let offset = self.weighted_offset / m;
        (
            self.reference + offset,
            (self.weighted_second / m - offset * offset).max(0.0),
        )
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

/// Φ, the standard normal CDF.
#[inline]
fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// The `q`-quantile (0 < q < 1) of the equal-weight mixture over `n_trees` trees of `comps`:
/// the root of F(y) = q, F the mixture CDF, by Newton steps safeguarded by bisection on a
/// bracket where F crosses q. Exact to about 1e-12 relative.
pub fn mixture_quantile(comps: &[Component], n_trees: usize, q: f64) -> f64 {
    let m = n_trees as f64;
    let cdf = |y: f64| -> (f64, f64) {
        let (mut f, mut pdf) = (0.0, 0.0);
        for c in comps {
            let s = c.var.sqrt();
            let z = (y - c.mean) / s;
            f += c.weight * normal_cdf(z);
            pdf += c.weight * (-0.5 * z * z).exp() / (s * (2.0 * std::f64::consts::PI).sqrt());
        }
        (f / m, pdf / m)
    };
    // Φ(±40) is 0 and 1 in double precision, so F crosses q inside this bracket.
    let (mut lo, mut hi) = comps
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| {
            let s = c.var.sqrt();
            (lo.min(c.mean - 40.0 * s), hi.max(c.mean + 40.0 * s))
        });
    let mut y = comps.iter().map(|c| c.weight * c.mean).sum::<f64>() / m;
    for _ in 0..200 {
        let (f, pdf) = cdf(y);
        if f < q {
            lo = y;
        } else {
            hi = y;
        }
        if hi - lo <= 1e-13 * (1.0 + y.abs()) || f == q {
            break;
        }
        let newton = y - (f - q) / pdf;
        y = if pdf > 0.0 && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
    }
    y
}
