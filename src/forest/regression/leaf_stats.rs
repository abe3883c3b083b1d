//! The target statistics each leaf keeps: Σy (the belief propagation's leaf likelihood) and
//! the centred Σ(y − ȳ)² (the pooled within-leaf noise estimate), refreshed only for the
//! leaves an online update changed.

use super::ForestRegressor;
use crate::mondrian::MondrianTree;
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

impl ForestRegressor {
    /// Recomputes the statistics of the nodes in `changed` (per tree).
    pub(super) fn refresh_leaf_stats(&mut self, changed: &[Vec<u32>], pool: &ThreadPool) {
        let y = &self.y;
        self.leaf_stats
            .resize_with(self.forest.trees.len(), LeafStats::default);
        let refresh = |((tree, stats), nodes): ((&MondrianTree, &mut LeafStats), &Vec<u32>)| {
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
