//! The marginal likelihood ("evidence") of a tree's targets under the hierarchical Gaussian
//! prior, log p(y | tree, μ_H, γ₁, γ₂, σ_y²), by the same upward pass as belief propagation
//! ([`super::belief`]), keeping the normalising constants it drops. It lets the
//! hyper-parameters be chosen by maximising the evidence summed over trees (type-II maximum
//! likelihood) instead of the paper's heuristic (AISTATS 2016, §3.2).
//!
//! With p(y_subtree(j) | μ_j) = e^{L_j} N(a_j; μ_j, A_j):
//! - a leaf with n labels, mean ȳ and centred sum of squares S: a_j = ȳ, A_j = σ²/n,
//!   L_j = −(n − 1)/2 · log(2πσ²) − ½ log n − S/(2σ²);
//! - an internal node: child c contributes e^{L_c} N(a_c; μ_j, B_c), B_c = A_c + φ_c, and the
//!   product of the two children's Gaussians in μ_j is N(a_l; a_r, B_l + B_r) times the
//!   normalised one, so L_j = L_l + L_r + log N(a_l; a_r, B_l + B_r);
//! - the root: log p(y | tree) = L_root + log N(a_root; μ_H, A_root + φ_root).
//!
//! The evidence scores one tree, while the forest predicts with the mixture of its trees, whose
//! spread across trees widens it: [`tree_loo_log_density`] gives each training point's
//! leave-one-out predictive density, whose mixture over trees scores the forest's predictive
//! itself.

use super::belief::{explicit_preorder, Gaussian, TreePosterior};
use super::leaf_stats::LeafStats;
use super::prior::GaussianPrior;
use crate::mondrian::{MondrianTree, NONE};
use std::f64::consts::PI;

/// log N(x; m, v) for v > 0.
#[inline]
fn log_normal(x: f64, m: f64, v: f64) -> f64 {
    -0.5 * ((2.0 * PI * v).ln() + (x - m) * (x - m) / v)
}

/// log p(y | tree, prior): the targets of the tree's leaves (Σy and the centred Σ(y − ȳ)² in
/// `stats`) under the hierarchical prior. 0 for a tree without nodes.
pub fn tree_log_evidence(tree: &MondrianTree, stats: &LeafStats, prior: &GaussianPrior) -> f64 {
    let n = tree.n_nodes();
    if tree.root == NONE {
        return 0.0;
    }
    let noise = prior.noise_variance;
    let log_two_pi_noise = (2.0 * PI * noise).ln();
    // The prior variance still to come after each node's birth, γ₁ (1 − σ(γ₂ τ_j)) =
    // γ₁ σ(−γ₂ τ_j): one exponential per node, and the increments are differences of it,
    // accurate even where σ(γ₂ τ) rounds to 1 (it cancels only for nearly equal times, where
    // the increment is negligible beside the noise).
    let remaining: Vec<f64> = (tree.nodes.iter())
        .map(|node| prior.gamma1 / (1.0 + (prior.gamma2 * node.tau).exp()))
        .collect();
    // Per node: (a_j, A_j, L_j).
    let mut below = vec![(0.0, 0.0, 0.0); n];
    let mut visit = |j: u32| {
        let ju = j as usize;
        let cut = &tree.nodes[ju];
        below[ju] = if cut.dim == NONE {
            let count = cut.n_samples.max(1) as f64;
            let log_const = -0.5 * (count - 1.0) * log_two_pi_noise
                - 0.5 * count.ln()
                - stats.centred_squares[ju] / (2.0 * noise);
            (stats.sum[ju] / count, noise / count, log_const)
        } else {
            let child = |c: u32| {
                let (a, var, l) = below[c as usize];
                (a, var + (remaining[ju] - remaining[c as usize]).max(0.0), l)
            };
            let ((al, bl, ll), (ar, br, lr)) = (child(cut.left), child(cut.right));
            let var = 1.0 / (1.0 / bl + 1.0 / br);
            let mean = var * (al / bl + ar / br);
            (mean, var, ll + lr + log_normal(al, ar, bl + br))
        };
    };
    match explicit_preorder(tree) {
        None => (0..n as u32).rev().for_each(&mut visit),
        Some(order) => order.iter().rev().for_each(|&j| visit(j)),
    }
    let (a, var, l) = below[tree.root as usize];
    let root_increment = (prior.gamma1 / 2.0 - remaining[tree.root as usize]).max(0.0);
    l + log_normal(a, prior.mean, var + root_increment)
}

/// Per training point, the log density of its target under tree `tree`'s leave-one-out
/// predictive: the posterior of its leaf's mean given every other label (the leaf's cavity,
/// which excludes the leaf's own labels, times the likelihood of the leaf's other labels),
/// plus the label noise — the exact leave-one-out predictive of the tree's Gaussian model
/// with the tree held fixed. Writes `out[i]` for every point i in the tree's leaves.
pub fn tree_loo_log_density(
    tree: &MondrianTree,
    stats: &LeafStats,
    posterior: &TreePosterior,
    prior: &GaussianPrior,
    y: &[f64],
    out: &mut [f64],
) {
    let noise = prior.noise_variance;
    for j in (0..tree.n_nodes() as u32).filter(|&j| tree.is_leaf(j)) {
        let ju = j as usize;
        let points = tree.samples.of(j, tree.nodes[ju].n_samples as usize);
        let cavity = posterior.messages[ju]
            .cavity
            .widen(prior.increment(tree.tau_parent(j), tree.tau(j)));
        let others = points.len() as f64 - 1.0;
        for &i in points {
            let yi = y[i as usize];
            let belief = if others > 0.0 {
                cavity.times(Gaussian {
                    mean: (stats.sum[ju] - yi) / others,
                    var: noise / others,
                })
            } else {
                cavity
            };
            out[i as usize] = log_normal(yi, belief.mean, belief.var + noise);
        }
    }
}
