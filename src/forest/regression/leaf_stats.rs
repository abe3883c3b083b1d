//! The target statistics each leaf keeps: Σy (the belief propagation's leaf likelihood) and
//! the centred Σ(y − ȳ)² (the pooled within-leaf noise estimate), refreshed only for the
//! leaves an online update changed.

use super::ForestRegressor;
use crate::error::{Error, Result};
use crate::mondrian::{MondrianTree, NONE};
use crate::parallel::is_small;
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// Σy and the centred Σ(y − ȳ)² of each leaf of one tree, indexed by node (0 for internal
/// nodes).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LeafStats {
    pub sum: Vec<f64>,
    pub centred_squares: Vec<f64>,
}

/// Recomputes `stats` for the nodes `nodes` of `tree` whose points have the targets `y`.
pub(super) fn refresh_nodes(tree: &MondrianTree, y: &[f64], stats: &mut LeafStats, nodes: &[u32]) {
    stats.sum.resize(tree.n_nodes(), 0.0);
    stats.centred_squares.resize(tree.n_nodes(), 0.0);
    for &j in nodes {
        let ju = j as usize;
        if tree.is_leaf(j) {
            let points = tree.samples.of(j, tree.nodes[ju].n_samples as usize);
            let sum: f64 = points.iter().map(|&i| y[i as usize]).sum();
            let mean = sum / points.len().max(1) as f64;
            stats.sum[ju] = sum;
            stats.centred_squares[ju] =
                points.iter().map(|&i| (y[i as usize] - mean).powi(2)).sum();
        } else {
            stats.sum[ju] = 0.0;
            stats.centred_squares[ju] = 0.0;
        }
    }
}

impl ForestRegressor {
    /// Recomputes the statistics of the nodes in `changed` (per tree).
    pub(super) fn refresh_leaf_stats(&mut self, changed: &[Vec<u32>], pool: &ThreadPool) {
        let y = &self.y;
        self.leaf_stats
            .resize_with(self.forest.trees.len(), LeafStats::default);
        let refresh = |((tree, stats), nodes): ((&MondrianTree, &mut LeafStats), &Vec<u32>)| {
            refresh_nodes(tree, y, stats, nodes)
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

    /// Per node of tree `index`, the decrease in the training targets' sum of squared
    /// deviations its cut achieves, S(j) − S(left) − S(right) = n_l n_r / n_j (ȳ_l − ȳ_r)²
    /// (CART's variance criterion; 0 for leaves), from the leaves' sums.
    pub fn impurity_decrease(&self, index: usize) -> Result<Vec<f64>> {
        let (Some(tree), Some(stats)) = (self.forest.trees.get(index), self.leaf_stats.get(index))
        else {
            return Err(Error::InvalidInput(format!(
                "tree index {index} out of range for {} trees",
                self.forest.trees.len()
            )));
        };
        let mut sum = stats.sum.clone();
        let mut decrease = vec![0.0; tree.n_nodes()];
        for &j in tree.preorder().iter().rev() {
            let cut = tree.nodes[j as usize];
            if cut.dim != NONE {
                let (l, r) = (cut.left as usize, cut.right as usize);
                let n = |k: usize| f64::from(tree.nodes[k].n_samples).max(1.0);
                sum[j as usize] = sum[l] + sum[r];
                let gap = sum[l] / n(l) - sum[r] / n(r);
                decrease[j as usize] = n(l) * n(r) / (n(l) + n(r)) * gap * gap;
            }
        }
        Ok(decrease)
    }

    /// Pooled within-leaf variance of the targets over all trees (falls back to `total_var`
    /// when every leaf holds a single point).
    pub(super) fn within_leaf_variance(&self, total_var: f64) -> f64 {
        let (mut squares, mut dof) = (0.0, 0.0);
        for (tree, stats) in self.forest.trees.iter().zip(&self.leaf_stats) {
            squares += stats.centred_squares.iter().sum::<f64>();
            dof += (self.y.len() - tree.n_leaves()) as f64;
        }
        let pooled = if dof > 0.0 { squares / dof } else { total_var };
        pooled.max(1e-12 * total_var.max(f64::MIN_POSITIVE))
    }
}
