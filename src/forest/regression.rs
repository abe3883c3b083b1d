//! Plain Mondrian forest regression: every leaf predicts its prior-smoothed mean.
//!
//! The smoothing uses the scale of the AISTATS 2016 prior (§3.2): noise variance
//! σ_y² = v/K and prior variance γ₁ = 2vK/(K+2) with K = min(2N, 500), so a leaf with n points
//! predicts (Σy + κ μ_H)/(n + κ) with κ = σ_y²/γ₁ and μ_H the mean of all targets. Leaves keep
//! Σy; after an online step only the leaves whose points changed are summed again. The
//! hierarchical Bayesian prediction (belief propagation, branch-off) replaces this later.

use super::MondrianForest;
use crate::error::{Error, Result};
use crate::parallel::{for_each_row_block, is_small};
use crate::tree::MondrianTree;
use ndarray::{Array1, ArrayView1, ArrayView2};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// A forest plus the targets of its points and each leaf's prediction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForestRegressor {
    pub forest: MondrianForest,
    y: Vec<f64>,
    /// `leaf_sum[m][node]`: Σy over the points of leaf `node` of tree `m` (0 for internal nodes).
    leaf_sum: Vec<Vec<f64>>,
}

impl ForestRegressor {
    /// Wraps an empty forest.
    pub fn new(forest: MondrianForest) -> Self {
        Self {
            forest,
            y: Vec::new(),
            leaf_sum: Vec::new(),
        }
    }

    /// Batch fit: stores the points and samples `n_trees` trees in slices of `slice` trees,
    /// calling `progress(done)` after each slice (an error from it stops the fit).
    pub fn fit(
        &mut self,
        x: &ArrayView2<f64>,
        y: &ArrayView1<f64>,
        n_trees: usize,
        slice: usize,
        pool: &ThreadPool,
        mut progress: impl FnMut(usize) -> Result<()>,
    ) -> Result<()> {
        check_targets(x, y)?;
        if !self.y.is_empty() {
            return Err(Error::InvalidInput("fit needs a fresh model".into()));
        }
        self.forest.add_points(x)?;
        self.y.extend(y.iter());
        while self.forest.trees.len() < n_trees {
            let count = slice.max(1).min(n_trees - self.forest.trees.len());
            self.forest.grow_trees(count, pool);
            progress(self.forest.trees.len())?;
        }
        self.refresh_leaf_sums(pool);
        Ok(())
    }

    /// Online update: extends every tree with the new points (conditional Mondrian).
    pub fn partial_fit(
        &mut self,
        x: &ArrayView2<f64>,
        y: &ArrayView1<f64>,
        pool: &ThreadPool,
    ) -> Result<()> {
        check_targets(x, y)?;
        if self.forest.trees.is_empty() {
            return Err(Error::InvalidInput(
                "partial_fit needs a fitted model".into(),
            ));
        }
        let rows = self.forest.add_points(x)?;
        self.y.extend(y.iter());
        self.forest.extend(rows, pool);
        self.refresh_leaf_sums(pool);
        Ok(())
    }

    /// Mean over trees of the leaf predictions.
    pub fn predict(&self, x: &ArrayView2<f64>, pool: &ThreadPool) -> Result<Array1<f64>> {
        self.forest.check_points(x)?;
        self.forest.check_fitted()?;
        let x = x.as_standard_layout();
        let d = self.forest.n_features;
        let flat = x.as_slice().unwrap_or(&[]);
        let (mean, kappa) = self.prior();
        let m = self.forest.trees.len() as f64;
        let mut out = vec![0.0; x.nrows()];
        for_each_row_block(pool, &mut out, 1, flat, d, |out, rows| {
            for (o, row) in out.iter_mut().zip(rows.chunks_exact(d)) {
                let total: f64 = self
                    .forest
                    .trees
                    .iter()
                    .zip(&self.leaf_sum)
                    .map(|(tree, sums)| {
                        let leaf = tree.leaf_of(row) as usize;
                        let n = tree.n_samples[leaf] as f64;
                        (sums[leaf] + kappa * mean) / (n + kappa)
                    })
                    .sum();
                *o = total / m;
            }
        });
        Ok(Array1::from(out))
    }

    /// Prior mean μ_H and pseudo-count κ = σ_y²/γ₁ = (v/K) / (2vK/(K+2)), which does not
    /// depend on v (so it is also right for constant targets).
    fn prior(&self) -> (f64, f64) {
        let n = self.y.len();
        let k = (2 * n).min(500) as f64;
        (
            self.y.iter().sum::<f64>() / n as f64,
            (k + 2.0) / (2.0 * k * k),
        )
    }

    /// Sums the targets of every leaf whose points changed since the last call.
    fn refresh_leaf_sums(&mut self, pool: &ThreadPool) {
        let y = &self.y;
        self.leaf_sum.resize_with(self.forest.trees.len(), Vec::new);
        let refresh = |(tree, sums): (&mut MondrianTree, &mut Vec<f64>)| {
            sums.resize(tree.n_nodes(), 0.0);
            for j in std::mem::take(&mut tree.touched) {
                if tree.is_leaf(j) {
                    let n = tree.n_samples[j as usize] as usize;
                    sums[j as usize] = tree.samples.of(j, n).iter().map(|&i| y[i as usize]).sum();
                }
            }
        };
        let trees = &mut self.forest.trees;
        if trees.iter().all(|t| is_small(t.touched.len())) {
            trees
                .iter_mut()
                .zip(self.leaf_sum.iter_mut())
                .for_each(refresh);
        } else {
            pool.install(|| {
                trees
                    .par_iter_mut()
                    .zip(self.leaf_sum.par_iter_mut())
                    .for_each(refresh)
            });
        }
    }

    /// Checks a deserialised model.
    pub fn is_consistent(&self) -> bool {
        self.forest.is_consistent()
            && self.y.len() == self.forest.n_rows()
            && self.leaf_sum.len() == self.forest.trees.len()
            && self
                .leaf_sum
                .iter()
                .zip(&self.forest.trees)
                .all(|(v, t)| v.len() == t.n_nodes())
    }
}

fn check_targets(x: &ArrayView2<f64>, y: &ArrayView1<f64>) -> Result<()> {
    if x.nrows() != y.len() {
        return Err(Error::InvalidInput(format!(
            "X has {} rows but y has {} values",
            x.nrows(),
            y.len()
        )));
    }
    if x.nrows() == 0 {
        return Err(Error::InvalidInput("X has no rows".into()));
    }
    if y.iter().any(|v| !v.is_finite()) {
        return Err(Error::InvalidInput("y contains NaN or infinity".into()));
    }
    Ok(())
}
