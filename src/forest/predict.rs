//! The predictive distribution of a Mondrian forest regressor (AISTATS 2016, §3.3, eq. 3–5).
//!
//! A test point x may branch off the tree above any node j on its path: a new block would be
//! born between j's parent (time τ_p) and j with probability
//! p_sep = 1 − exp(−η_j(x) · (τ_j − τ_p)), η_j(x) = Σ_d max(0, l_jd − x_d) + max(0, x_d − u_jd)
//! (the lifetime caps τ_j at a leaf). The tree's predictive is the mixture over these events of
//! Gaussians; the forest's is the equal-weight mixture over trees.
//!
//! Component for branching off above j: a new node s is born at t_s = τ_p + E between j's
//! parent and j, and x sits in a new leaf below s. Exactly under the model,
//! μ_s | data ∝ [cavity_j widened by γ₁(σ(γ₂t_s) − σ(γ₂τ_p))] × [likelihood from j's subtree
//! widened by γ₁(σ(γ₂τ_j) − σ(γ₂t_s))], and y = μ_s + N(0, γ₁(σ(γ₂λ) − σ(γ₂t_s)) + σ_y²).
//! E is Exp(η) truncated to [0, τ_j − τ_p]; like the authors' code we plug in its mean Ē
//! rather than integrating over E. Far from the data t_s → τ_p, so the predictive tends to the
//! prior's (variance ≈ γ₁(1 − σ(γ₂τ_p)) + σ_y²), as a Gaussian process's does. (The algorithm
//! notes report that the authors' code instead reuses j's posterior and adds only the
//! parent-to-s increment, which keeps the variance near σ_y² far from the data.) At the leaf,
//! the remaining weight gets the leaf's posterior plus σ_y².

use super::posterior::{Gaussian, GaussianPrior, TreePosterior};
use crate::tree::route::{branch_off_prob, route, RouteScratch};
use crate::tree::MondrianTree;

/// One Gaussian of a predictive mixture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Component {
    pub weight: f64,
    pub mean: f64,
    pub var: f64,
}

/// Mean of Exp(rate) truncated to [0, c]: 1/η − c e^{−ηc} / (1 − e^{−ηc}) (1/η when c = ∞).
fn truncated_exponential_mean(rate: f64, c: f64) -> f64 {
    if c.is_infinite() {
        return 1.0 / rate;
    }
    let x = rate * c;
    if x < 1e-3 {
        // c (1/x − 1/expm1(x)) cancels for small x; its series c (1/2 − x/12 + x³/720)
        // is exact to double precision here (next term x⁵/30240).
        return c * (0.5 - x / 12.0 + x * x * x / 720.0);
    }
    // c e^{−x} / (1 − e^{−x}) = c / (e^{x} − 1) = c / expm1(x)
    1.0 / rate - c / x.exp_m1()
}

/// Appends the components of `tree`'s predictive at `x` to `out`; their weights sum to 1.
pub fn tree_components(
    tree: &MondrianTree,
    post: &TreePosterior,
    prior: &GaussianPrior,
    lifetime: f64,
    x: &[f64],
    scratch: &mut RouteScratch,
    out: &mut Vec<Component>,
) {
    route(tree, x, scratch);
    routed_components(tree, post, prior, lifetime, scratch, out);
}

/// [`tree_components`] for a point already routed (`route` or `route_group`).
pub fn routed_components(
    tree: &MondrianTree,
    post: &TreePosterior,
    prior: &GaussianPrior,
    lifetime: f64,
    scratch: &RouteScratch,
    out: &mut Vec<Component>,
) {
    let RouteScratch { path, eta } = scratch;
    // Touch the messages of every node the mixture will read (those the point lies outside
    // of, and the leaf) in one loop of independent loads, so their cache misses overlap
    // instead of waiting behind each component's transcendental functions.
    let first_outside = eta.iter().position(|&e| e > 0.0).unwrap_or(path.len());
    let touched: f64 = path[first_outside.min(path.len().saturating_sub(1))..]
        .iter()
        .map(|&j| post.messages[j as usize].cavity.var)
        .sum();
    std::hint::black_box(touched);
    let mut keep = 1.0;
    let mut t_parent = 0.0;
    for (&node, &eta) in path.iter().zip(eta.iter()) {
        let j = node as usize;
        let tau = tree.nodes[j].tau;
        let cost = tau - t_parent;
        let p_sep = branch_off_prob(eta, cost);
        if p_sep > 0.0 {
            let t_split = t_parent + truncated_exponential_mean(eta, cost);
            let messages = &post.messages[j];
            let above = messages.cavity.widen(prior.increment(t_parent, t_split));
            let below = messages.from_below.widen(prior.increment(t_split, tau));
            let Gaussian { mean, var } = above.times(below);
            let leaf_increment = prior.increment(t_split, lifetime);
            out.push(Component {
                weight: keep * p_sep,
                mean,
                var: var + leaf_increment + prior.noise_var,
            });
            keep *= 1.0 - p_sep;
        }
        t_parent = tau;
    }
    let leaf = *path.last().unwrap_or(&tree.root) as usize;
    if keep > 0.0 {
        let Gaussian { mean, var } = post.posterior(tree, prior, leaf as u32);
        out.push(Component {
            weight: keep,
            mean,
            var: var + prior.noise_var,
        });
    }
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
            - 0.5 * ((2.0 * std::f64::consts::PI * c.var).ln() + (y - c.mean).powi(2) / c.var);
        if log > self.max {
            self.scaled_sum = self.scaled_sum * (self.max - log).exp() + 1.0;
            self.max = log;
        } else {
            self.scaled_sum += (log - self.max).exp();
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
