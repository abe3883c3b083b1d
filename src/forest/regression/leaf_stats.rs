//! The target statistics each leaf keeps, over its points weighted by their row weights
//! ([`crate::forest::weights`]): Σw and Σwy (the belief propagation's leaf likelihood) and the
//! centred Σw(y − ȳ)² (the pooled within-leaf noise estimate, the evidence), refreshed only
//! for the leaves an online update changed.

use super::ForestRegressor;
use crate::error::{Error, Result};
use crate::forest::weights::RowWeights;
use crate::mondrian::{MondrianTree, NONE};
use crate::parallel::is_small;
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// Σw, Σwy and the centred Σw(y − ȳ)² of each leaf of one tree, indexed by node (0 for
/// internal nodes).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LeafStats {
    pub weight: Vec<f64>,
    pub sum: Vec<f64>,
    pub centred_squares: Vec<f64>,
}

impl LeafStats {
    /// Node j's number of points as the likelihood counts them: Σw (1 for an empty node, whose
    /// Σwy is 0, so that its mean is 0 rather than NaN).
    #[inline]
    pub fn count(&self, j: usize) -> f64 {
        match self.weight[j] {
            w if w > 0.0 => w,
            _ => 1.0,
        }
    }

    /// Σw and Σwy over every node's subtree of `tree`, from the leaves' (the centred squares
    /// stay the leaves').
    pub fn subtree_totals(&self, tree: &MondrianTree) -> LeafStats {
        let mut node = self.clone();
        for &j in tree.preorder().iter().rev() {
            let cut = tree.nodes[j as usize];
            if cut.dim != NONE {
                let (ju, l, r) = (j as usize, cut.left as usize, cut.right as usize);
                node.sum[ju] = node.sum[l] + node.sum[r];
                node.weight[ju] = node.weight[l] + node.weight[r];
            }
        }
        node
    }
}

/// Recomputes `stats` for the nodes `nodes` of `tree` whose points have the targets `y` and
/// the weights `weights`.
pub(super) fn refresh_nodes(
    tree: &MondrianTree,
    (y, weights): (&[f64], &RowWeights),
    stats: &mut LeafStats,
    nodes: &[u32],
) {
    stats.weight.resize(tree.n_nodes(), 0.0);
    stats.sum.resize(tree.n_nodes(), 0.0);
    stats.centred_squares.resize(tree.n_nodes(), 0.0);
    for &j in nodes {
        let ju = j as usize;
        if tree.is_leaf(j) {
            let points = tree.samples.of(j, tree.nodes[ju].n_samples as usize);
            let weight: f64 = points.iter().map(|&i| weights.of(i)).sum();
            let sum: f64 = points.iter().map(|&i| weights.of(i) * y[i as usize]).sum();
            stats.weight[ju] = weight;
            stats.sum[ju] = sum;
            let mean = sum / stats.count(ju);
            stats.centred_squares[ju] = (points.iter())
                .map(|&i| weights.of(i) * (y[i as usize] - mean).powi(2))
                .sum();
        } else {
            stats.weight[ju] = 0.0;
            stats.sum[ju] = 0.0;
            stats.centred_squares[ju] = 0.0;
        }
    }
}

impl ForestRegressor {
    /// Recomputes the statistics of the nodes in `changed` (per tree).
    pub(super) fn refresh_leaf_stats(&mut self, changed: &[Vec<u32>], pool: &ThreadPool) {
        let labels = (self.y.as_slice(), &self.weights);
        self.leaf_stats
            .resize_with(self.forest.trees.len(), LeafStats::default);
        let refresh = |((tree, stats), nodes): ((&MondrianTree, &mut LeafStats), &Vec<u32>)| {
            refresh_nodes(tree, labels, stats, nodes)
        };
        let trees = &self.forest.trees;
        if changed.iter().all(|c| is_small(c.len())) {
            trees
                .iter()
                .zip(self.leaf_stats.iter_mut())
                .zip(changed)
                .for_each(refresh);
        } else {
            pool.install(|| {
                trees
                    .par_iter()
                    .zip(self.leaf_stats.par_iter_mut())
                    .zip(changed.par_iter())
                    .for_each(refresh)
            });
        }
    }

    /// Per node of tree `index`, the decrease in the training targets' (weighted) sum of
    /// squared deviations its cut achieves, S(j) − S(left) − S(right) =
    /// n_l n_r / n_j (ȳ_l − ȳ_r)² (CART's variance criterion; 0 for leaves; n the Σw of a
    /// side), from the leaves' sums.
    pub fn impurity_decrease(&self, index: usize) -> Result<Vec<f64>> {
        let (Some(tree), Some(stats)) = (self.forest.trees.get(index), self.leaf_stats.get(index))
        else {
            return Err(Error::InvalidInput(format!(
                "tree index {index} out of range for {} trees",
                self.forest.trees.len()
            )));
        };
        let node = stats.subtree_totals(tree);
        let mut decrease = vec![0.0; tree.n_nodes()];
        for (j, cut) in tree.nodes.iter().enumerate() {
            if cut.dim != NONE {
                let (l, r) = (cut.left as usize, cut.right as usize);
                let (n_l, n_r) = (node.count(l), node.count(r));
                let gap = node.sum[l] / n_l - node.sum[r] / n_r;
                decrease[j] = n_l * n_r / (n_l + n_r) * gap * gap;
            }
        }
        Ok(decrease)
    }

    /// Pooled within-leaf variance of the targets over all trees, Σw(y − ȳ_leaf)² over
    /// Σw − leaves (falls back to `total_var` when every leaf holds a single point).
    pub(super) fn within_leaf_variance(&self, total_var: f64) -> f64 {
        let (mut squares, mut dof) = (0.0, 0.0);
        let total_weight = self.target_stats.weight;
        for (tree, stats) in self.forest.trees.iter().zip(&self.leaf_stats) {
            squares += stats.centred_squares.iter().sum::<f64>();
            dof += total_weight - tree.n_leaves() as f64;
        }
        let pooled = if dof > 0.0 { squares / dof } else { total_var };
        pooled.max(1e-12 * total_var.max(f64::MIN_POSITIVE))
    }
}
