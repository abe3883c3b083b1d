//! Exact Gaussian posterior over all node means of a tree (Lakshminarayanan, Roy & Teh,
//! AISTATS 2016, §3.1–3.2) by belief propagation: one upward and one downward pass, linear in
//! the number of nodes.
//!
//! Model: μ_root ~ N(μ_H, φ_root), μ_j ~ N(μ_parent(j), φ_j) with
//! φ_j = γ₁ (σ(γ₂ τ_j) − σ(γ₂ τ_parent(j))), σ the logistic sigmoid, τ_parent(root) = 0 and
//! τ_leaf = λ (σ(∞) = 1); a label in leaf j is N(μ_j, σ_y²).

use super::leaf_stats::LeafStats;
use super::prior::GaussianPrior;
use crate::mondrian::{MondrianTree, NONE};
use serde::{Deserialize, Serialize};

/// A Gaussian as (mean, variance).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Gaussian {
    pub mean: f64,
    pub var: f64,
}

impl Gaussian {
    /// The normalised product of two Gaussian densities.
    /// A zero variance (a point mass, e.g. under lifetime 0) wins; an infinite one (a flat
    /// likelihood) loses.
    #[inline]
    pub fn times(self, other: Gaussian) -> Gaussian {
        if self.var <= 0.0 {
            return self;
        }
        if other.var <= 0.0 {
            return other;
        }
        // A likelihood so flat that its variance overflowed (σ_y²/Σw beyond float64: rows of
        // weight 5e-9 under σ_y² = 6e300) carries no information; two such made a NaN mean.
        if other.var == f64::INFINITY {
            return self;
        }
        if self.var == f64::INFINITY {
            return other;
        }
        let var = 1.0 / (1.0 / self.var + 1.0 / other.var);
        let mean = var * (self.mean / self.var + other.mean / other.var);
        if mean.is_finite() && var > 0.0 {
            return Gaussian { mean, var };
        }
        // A variance so small that its precision, or a mean over it, overflows (a branch-off
        // born 1e-308 after its parent): the same product by weights, without reciprocals.
        let total = self.var + other.var;
        let (keep_self, keep_other) = (other.var / total, self.var / total);
        Gaussian {
            mean: self.mean * keep_self + other.mean * keep_other,
            var: keep_self * self.var,
        }
    }

    /// log N(x; mean, var), for var > 0.
    #[inline]
    pub fn log_pdf(self, x: f64) -> f64 {
        -0.5 * ((2.0 * std::f64::consts::PI * self.var).ln() + (x - self.mean).powi(2) / self.var)
    }

    /// The same mean with `extra` more variance.
    #[inline]
    pub fn widen(self, extra: f64) -> Gaussian {
        Gaussian {
            mean: self.mean,
            var: self.var + extra,
        }
    }
}

/// The two messages node j combines into its posterior, side by side (32 aligned bytes)
/// because prediction reads both for the same random node.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[repr(C, align(32))]
pub struct NodeMessages {
    /// p(μ_parent(j) | labels outside j's subtree): the message j receives before its own
    /// prior increment φ_j is added (a point mass at μ_H for the root, whose "parent" is the
    /// fixed prior mean at time 0). Prediction needs it to place a new node between the
    /// parent and j.
    pub cavity: Gaussian,
    /// Likelihood of μ_j from the labels in j's subtree (as a Gaussian in μ_j).
    pub from_below: Gaussian,
}

/// Per node of one tree, the messages of belief propagation; the posterior of μ_j is
/// [`TreePosterior::posterior`].
///
/// The likelihoods from below are always exact. The cavities are exact while
/// `cavities_fresh`: an online update changes the likelihoods on the new points' paths only
/// (O(depth)), but every cavity of the tree with them, so after one the cavities a prediction
/// needs are recomputed along its own path ([`path_cavities`], O(depth)), until a full
/// downward pass ([`refresh_cavities`]) makes them fresh again.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TreePosterior {
    pub messages: Vec<NodeMessages>,
    /// φ_j per node, kept beside the messages so that predictions and updates along a path
    /// read them instead of computing three exponentials each.
    #[serde(skip)]
    pub increments: Vec<f64>,
    #[serde(skip)]
    pub cavities_fresh: bool,
}

impl TreePosterior {
    /// Grows the per-node arrays to `n` nodes (new nodes start at zero Gaussians).
    fn resize(&mut self, n: usize) {
        self.messages.resize(n, NodeMessages::default());
        self.increments.resize(n, 0.0);
    }

    /// p(μ_j | all labels) = (cavity widened by φ_j) × likelihood from below.
    #[inline]
    pub fn posterior(&self, j: u32) -> Gaussian {
        let m = &self.messages[j as usize];
        m.cavity
            .widen(self.increments[j as usize])
            .times(m.from_below)
    }

    /// Node j's message to its parent: its likelihood from below widened by φ_j.
    #[inline]
    pub(super) fn upward(&self, j: u32) -> Gaussian {
        let ju = j as usize;
        self.messages[ju].from_below.widen(self.increments[ju])
    }

    /// Recomputes node j's likelihood from below from its leaf sum or its children.
    #[inline]
    fn update_from_below(
        &mut self,
        tree: &MondrianTree,
        leaves: &LeafStats,
        noise_variance: f64,
        j: u32,
    ) {
        let ju = j as usize;
        let cut = &tree.nodes[ju];
        self.messages[ju].from_below = if cut.dim == NONE {
            let count = leaves.count(ju);
            Gaussian {
                mean: leaves.sum[ju] / count,
                var: noise_variance / count,
            }
        } else {
            self.upward(cut.left).times(self.upward(cut.right))
        };
    }

    /// Recomputes node j's cavity (message from above); its parent's cavity and its
    /// sibling's likelihood from below must be current.
    #[inline]
    fn update_from_above(&mut self, tree: &MondrianTree, prior_mean: f64, j: u32) {
        let ju = j as usize;
        let cavity = match tree.parent[ju] {
            NONE => Gaussian {
                mean: prior_mean,
                var: 0.0,
            },
            p => {
                let cut = &tree.nodes[p as usize];
                let sibling = if cut.left == j { cut.right } else { cut.left };
                let parent_above = self.messages[p as usize]
                    .cavity
                    .widen(self.increments[p as usize]);
                parent_above.times(self.upward(sibling))
            }
        };
        self.messages[ju].cavity = cavity;
    }
}

/// φ_j = γ₁ (σ(γ₂ τ_j) − σ(γ₂ τ_parent(j))).
#[inline]
pub(super) fn increment_of(tree: &MondrianTree, prior: &GaussianPrior, j: u32) -> f64 {
    prior.increment(tree.tau_parent(j), tree.tau(j))
}

/// Belief propagation on `tree`, whose leaves hold the (weighted) labels summarised in
/// `leaves`.
pub fn tree_posterior(
    tree: &MondrianTree,
    leaves: &LeafStats,
    prior: &GaussianPrior,
) -> TreePosterior {
    let Upward {
        mut messages,
        order,
    } = upward_pass(tree, leaves, prior);
    order.parents_first(|j| messages.update_from_above(tree, prior.mean, j));
    messages.cavities_fresh = true;
    messages
}

/// Recomputes every cavity of `post` (its likelihoods from below current): the downward pass
/// of belief propagation alone, O(nodes).
pub fn refresh_cavities(tree: &MondrianTree, prior: &GaussianPrior, post: &mut TreePosterior) {
    if tree.root == NONE {
        post.cavities_fresh = true;
        return;
    }
    let n = tree.n_nodes();
    post.resize(n);
    let order = explicit_preorder(tree).map_or(NodeOrder::Ids(n as u32), NodeOrder::Explicit);
    order.parents_first(|j| post.update_from_above(tree, prior.mean, j));
    post.cavities_fresh = true;
}

/// The cavities of the nodes of `path` (a root-to-node path), in its order, written to `out`:
/// the stored ones when fresh, else recomputed top-down from the likelihoods from below of
/// the path's siblings — the same messages a full downward pass gives, in O(depth).
pub fn path_cavities(
    tree: &MondrianTree,
    post: &TreePosterior,
    prior: &GaussianPrior,
    path: &[u32],
    out: &mut Vec<Gaussian>,
) {
    out.clear();
    if post.cavities_fresh {
        out.extend(path.iter().map(|&j| post.messages[j as usize].cavity));
        return;
    }
    let mut above = Gaussian {
        mean: prior.mean,
        var: 0.0,
    };
    let mut parent = NONE;
    for &j in path {
        if parent != NONE {
            let cut = &tree.nodes[parent as usize];
            let sibling = if cut.left == j { cut.right } else { cut.left };
            above = above
                .widen(post.increments[parent as usize])
                .times(post.upward(sibling));
        }
        out.push(above);
        parent = j;
    }
}

/// The nodes of a tree parents first: its ids `0..n` when they are a pre-order, else an
/// explicit one.
pub(super) enum NodeOrder {
    Ids(u32),
    Explicit(Vec<u32>),
}

impl NodeOrder {
    /// Calls `visit` on every node, parents first.
    pub(super) fn parents_first(&self, visit: impl FnMut(u32)) {
        match self {
            NodeOrder::Ids(n) => (0..*n).for_each(visit),
            NodeOrder::Explicit(order) => order.iter().copied().for_each(visit),
        }
    }

    /// Calls `visit` on every node, children first.
    pub(super) fn children_first(&self, visit: impl FnMut(u32)) {
        match self {
            NodeOrder::Ids(n) => (0..*n).rev().for_each(visit),
            NodeOrder::Explicit(order) => order.iter().rev().copied().for_each(visit),
        }
    }
}

/// Belief propagation's upward pass: every node's likelihood from below (cavities still
/// unset), with the increments φ_j it used and the order it walked.
pub(super) struct Upward {
    pub messages: TreePosterior,
    pub order: NodeOrder,
}

/// The upward pass of [`tree_posterior`], children first (also the marginal likelihood's).
pub(super) fn upward_pass(
    tree: &MondrianTree,
    leaves: &LeafStats,
    prior: &GaussianPrior,
) -> Upward {
    let n = tree.n_nodes();
    let mut messages = TreePosterior::default();
    messages.resize(n);
    if tree.root == NONE {
        let order = NodeOrder::Explicit(Vec::new());
        return Upward { messages, order };
    }
    // Each φ_j once (each is read three times, and costs three exponentials).
    for (j, phi) in messages.increments.iter_mut().enumerate() {
        *phi = increment_of(tree, prior, j as u32);
    }
    let order = explicit_preorder(tree).map_or(NodeOrder::Ids(n as u32), NodeOrder::Explicit);
    let noise = prior.noise_variance;
    order.children_first(|j| messages.update_from_below(tree, leaves, noise, j));
    Upward { messages, order }
}

/// A pre-order of `tree`'s nodes, or `None` when its ids already are one. Batch-grown trees
/// number every parent before its children, so passes stream through memory in id order;
/// online updates insert parents after their children, and such trees need the explicit
/// order.
fn explicit_preorder(tree: &MondrianTree) -> Option<Vec<u32>> {
    let ids_are_preorder = tree.root == 0
        && (tree.parent.iter().enumerate()).all(|(j, &p)| p == NONE || (p as usize) < j);
    (!ids_are_preorder).then(|| tree.preorder())
}

/// The online update of one tree's posterior (AISTATS 2016, §5.3: O(depth) per new point):
/// after the leaves `changed` received points (or were created), recomputes the likelihood
/// from below of every node on their paths to the root — exact, since no other subtree's
/// data changed — and marks the cavities stale (the path's new messages reach every node's
/// cavity: [`path_cavities`] recomputes those a prediction needs). When the paths hold more
/// nodes than the tree, the whole upward pass is cheaper and runs instead.
pub fn update_likelihoods(
    tree: &MondrianTree,
    leaves: &LeafStats,
    prior: &GaussianPrior,
    changed: &[u32],
    out: &mut TreePosterior,
    path_buffer: &mut Vec<u32>,
) {
    let n = tree.n_nodes();
    let known = out.messages.len();
    out.resize(n);
    out.cavities_fresh = false;
    path_buffer.clear();
    // All paths, each listed leaf first: a node's last recomputation comes after every
    // changed descendant's (they share that last path and sit below it).
    for &leaf in changed {
        let mut j = leaf;
        while j != NONE {
            path_buffer.push(j);
            if path_buffer.len() > n {
                *out = upward_pass(tree, leaves, prior).messages;
                return;
            }
            j = tree.parent[j as usize];
        }
    }
    // φ_j changes only with τ_j or τ_parent(j): for nodes created by the update (ids from
    // `known` on), nodes given a new parent (one inserted above them), and leaves that split
    // (both children new; τ was the lifetime). All of them are on the paths or children of
    // path nodes; the others keep their φ (three exponentials each saved).
    let is_new = |j: u32| j != NONE && j as usize >= known;
    let moved = |j: u32| {
        let cut = &tree.nodes[j as usize];
        is_new(j)
            || is_new(tree.parent[j as usize])
            || (cut.dim != NONE && is_new(cut.left) && is_new(cut.right))
    };
    for &j in path_buffer.iter() {
        let cut = tree.nodes[j as usize];
        let children = if cut.dim == NONE {
            [NONE, NONE]
        } else {
            [cut.left, cut.right]
        };
        for node in [j].into_iter().chain(children).filter(|&c| c != NONE) {
            if moved(node) {
                out.increments[node as usize] = increment_of(tree, prior, node);
            }
        }
    }
    for &j in path_buffer.iter() {
        out.update_from_below(tree, leaves, prior.noise_variance, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_likelihoods_give_way() {
        // Leaves of weight 1e-8 under σ_y² = 5.9e300: σ_y²/Σw overflows to ∞; their product
        // was ∞ · 0 = NaN (found by the property tests: NaN predictions).
        let flat = Gaussian {
            mean: 1e150,
            var: f64::INFINITY,
        };
        let prior = Gaussian {
            mean: 2.0,
            var: 3e293,
        };
        let both = flat.times(flat);
        assert_eq!(both.var, f64::INFINITY);
        assert!(!both.mean.is_nan());
        assert_eq!(both.widen(1.0).times(prior), prior);
        assert_eq!(prior.times(flat), prior);
    }

    #[test]
    fn products_with_tiny_variances_stay_finite() {
        // A branch-off 1e-308 after its parent: its prior increment is ~1e-301, and
        // mean / var overflowed (found by the property tests: predictions of -inf).
        let sharp = Gaussian {
            mean: -3.77e7,
            var: 2e-301,
        };
        let wide = Gaussian {
            mean: 5.0,
            var: 1e6,
        };
        for (a, b) in [(sharp, wide), (wide, sharp)] {
            let p = a.times(b);
            assert!((p.mean - sharp.mean).abs() <= 1e-12 * sharp.mean.abs());
            assert!(p.var > 0.0 && p.var <= sharp.var);
        }
        let subnormal = Gaussian {
            mean: 3.0,
            var: 1e-320,
        };
        let p = subnormal.times(wide);
        assert_eq!(p.mean, 3.0);
        assert!(p.var > 0.0 && p.var <= 1e-320);
    }

    #[test]
    fn point_masses_win_products() {
        let point = Gaussian {
            mean: 3.0,
            var: 0.0,
        };
        let wide = Gaussian {
            mean: 0.0,
            var: 1.0,
        };
        assert_eq!(point.times(wide), point);
        assert_eq!(wide.times(point), point);
    }
}
