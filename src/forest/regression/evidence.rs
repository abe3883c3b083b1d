//! The marginal likelihood ("evidence") of a tree's targets under the hierarchical Gaussian
//! prior, log p(y | tree, μ_H, γ₁, γ₂, σ_y²), by the same upward pass as belief propagation
//! ([`super::belief`]), keeping the normalising constants it drops. It lets the
//! hyper-parameters be chosen by maximising the evidence summed over trees (type-II maximum
//! likelihood) instead of the paper's heuristic (AISTATS 2016, §3.2).
//!
//! With p(y_subtree(j) | μ_j) = e^{L_j} N(a_j; μ_j, A_j):
//! - a leaf with n labels, mean ȳ and centred sum of squares S: a_j = ȳ, A_j = σ²/n,
//!   L_j = −(n − 1)/2 · log(2πσ²) − ½ log n − S/(2σ²); with row weights w (frequencies), n = Σw
//!   and ȳ, S weighted: the same formula is the likelihood Π N(y_i; μ_j, σ²)^{w_i};
//! - an internal node: child c contributes e^{L_c} N(a_c; μ_j, B_c), B_c = A_c + φ_c, and the
//!   product of the two children's Gaussians in μ_j is N(a_l; a_r, B_l + B_r) times the
//!   normalised one, so L_j = L_l + L_r + log N(a_l; a_r, B_l + B_r);
//! - the root: log p(y | tree) = L_root + log N(a_root; μ_H, A_root + φ_root).
//!
//! The evidence scores one tree, while the forest predicts with the mixture of its trees, whose
//! spread across trees widens it: [`fold_tree_loo_density`] gives each training point's
//! leave-one-out predictive density, whose mixture over trees scores the forest's predictive
//! itself.

use super::belief::{increment_of, upward_pass, Gaussian, TreePosterior, Upward};
use super::leaf_stats::LeafStats;
use super::mixture::{Component, LogDensityFold};
use super::prior::GaussianPrior;
use crate::error::string_options;
use crate::forest::weights::RowWeights;
use crate::mondrian::{MondrianTree, NONE};
use std::f64::consts::PI;

/// What a choice of the hyper-parameters maximises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriorCriterion {
    /// Σ over trees of log p(y | tree, prior).
    Evidence,
    /// The forest mixture's leave-one-out log density of the training targets.
    LeaveOneOut,
}

// The estimators add choices of their own, which they resolve before calling the core.
string_options!(PriorCriterion, "hyperparameters", [
    "evidence" => Evidence,
    "leave_one_out" => LeaveOneOut,
]);

/// log p(y | tree, prior): the targets of the tree's leaves (Σy and the centred Σ(y − ȳ)² in
/// `stats`) under the hierarchical prior. 0 for a tree without nodes.
pub fn tree_log_evidence(tree: &MondrianTree, stats: &LeafStats, prior: &GaussianPrior) -> f64 {
    if tree.root == NONE {
        return 0.0;
    }
    let Upward { messages, order } = upward_pass(tree, stats, prior);
    let noise = prior.noise_variance;
    let log_two_pi_noise = (2.0 * PI * noise).ln();
    let mut total = 0.0;
    order.parents_first(|j| {
        let node = &tree.nodes[j as usize];
        total += if node.dim == NONE {
            let count = stats.count(j as usize);
            -0.5 * (count - 1.0) * log_two_pi_noise
                - 0.5 * count.ln()
                - stats.centred_squares[j as usize] / (2.0 * noise)
        } else {
            let (left, right) = (messages.upward(node.left), messages.upward(node.right));
            right.widen(left.var).log_pdf(left.mean)
        };
    });
    total + messages.upward(tree.root).log_pdf(prior.mean)
}

/// Folds into `out[i]`, for every training point i in the tree's leaves, the log density of
/// its target under tree `tree`'s leave-one-out predictive: the posterior of its leaf's mean
/// given every other label (the leaf's cavity, which excludes the leaf's own labels, times the
/// likelihood of the leaf's other labels), plus the label noise — the exact leave-one-out
/// predictive of the tree's Gaussian model with the tree held fixed. A weighted row is left
/// out whole (its weight w_i removed from the leaf's Σw and w_i y_i from its Σwy).
pub fn fold_tree_loo_density(
    tree: &MondrianTree,
    stats: &LeafStats,
    posterior: &TreePosterior,
    prior: &GaussianPrior,
    (y, weights): (&[f64], &RowWeights),
    out: &mut [LogDensityFold],
) {
    let noise = prior.noise_variance;
    for j in (0..tree.n_nodes() as u32).filter(|&j| tree.is_leaf(j)) {
        let ju = j as usize;
        let points = tree.samples.of(j, tree.nodes[ju].n_samples as usize);
        let cavity = posterior.messages[ju]
            .cavity
            .widen(increment_of(tree, prior, j));
        for &i in points {
            let (yi, wi) = (y[i as usize], weights.of(i));
            let others = stats.weight[ju] - wi;
            let belief = if points.len() > 1 && others > 0.0 {
                cavity.times(Gaussian {
                    mean: (stats.sum[ju] - wi * yi) / others,
                    var: noise / others,
                })
            } else {
                cavity
            };
            let component = Component {
                weight: 1.0,
                mean: belief.mean,
                var: belief.var + noise,
            };
            out[i as usize].add(&component, yi);
        }
    }
}
