//! Plain Mondrian forest regression: every leaf predicts its prior-smoothed mean.
//!
//! The smoothing uses the scale of the AISTATS 2016 prior (§3.2): noise variance
//! σ_y² = v/K and prior variance γ₁ = 2vK/(K+2) with K = min(2N, 500), so a leaf with n points
//! predicts (Σy + κ μ_H)/(n + κ) with κ = σ_y²/γ₁ and μ_H the mean of all targets. The
//! hierarchical Bayesian prediction (belief propagation, branch-off) replaces this later.

use super::MondrianForest;
use crate::error::{Error, Result};
use crate::parallel::ROW_CHUNK;
use ndarray::{Array1, ArrayView1, ArrayView2};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// A forest plus the targets of its points and each leaf's prediction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForestRegressor {
    pub forest: MondrianForest,
    y: Vec<f64>,
    /// `leaf_value[m][node]`: prediction of leaf `node` of tree `m` (unused for internal nodes).
    leaf_value: Vec<Vec<f64>>,
}

impl ForestRegressor {
    /// Wraps an empty forest.
    pub fn new(forest: MondrianForest) -> Self {
        Self {
            forest,
            y: Vec::new(),
            leaf_value: Vec::new(),
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
        self.refresh_leaf_values(pool);
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
        self.refresh_leaf_values(pool);
        Ok(())
    }

    /// Mean over trees of the leaf predictions.
    pub fn predict(&self, x: &ArrayView2<f64>, pool: &ThreadPool) -> Result<Array1<f64>> {
        self.forest.check_points(x)?;
        self.forest.check_fitted()?;
        let x = x.as_standard_layout();
        let d = self.forest.n_features;
        let flat = x.as_slice().unwrap_or(&[]);
        let m = self.forest.trees.len() as f64;
        let mut out = vec![0.0; x.nrows()];
        pool.install(|| {
            out.par_chunks_mut(ROW_CHUNK)
                .zip(flat.par_chunks(ROW_CHUNK * d))
                .for_each(|(out, rows)| {
                    for (o, row) in out.iter_mut().zip(rows.chunks_exact(d)) {
                        let total: f64 = self
                            .forest
                            .trees
                            .iter()
                            .zip(&self.leaf_value)
                            .map(|(tree, values)| values[tree.leaf_of(row) as usize])
                            .sum();
                        *o = total / m;
                    }
                })
        });
        Ok(Array1::from(out))
    }

    /// Recomputes every leaf's smoothed mean from the points it holds.
    fn refresh_leaf_values(&mut self, pool: &ThreadPool) {
        let n = self.y.len();
        let mean = self.y.iter().sum::<f64>() / n as f64;
        let k = (2 * n).min(500) as f64;
        // κ = σ_y²/γ₁ = (v/K) / (2vK/(K+2)); independent of v, so also right when v = 0.
        let kappa = (k + 2.0) / (2.0 * k * k);
        let y = &self.y;
        self.leaf_value = pool.install(|| {
            self.forest
                .trees
                .par_iter()
                .map(|tree| {
                    (0..tree.n_nodes() as u32)
                        .map(|j| {
                            if !tree.is_leaf(j) {
                                return f64::NAN;
                            }
                            let count = tree.n_samples[j as usize] as usize;
                            let sum: f64 = tree
                                .samples
                                .of(j, count)
                                .iter()
                                .map(|&i| y[i as usize])
                                .sum();
                            (sum + kappa * mean) / (count as f64 + kappa)
                        })
                        .collect()
                })
                .collect()
        });
    }

    /// Checks a deserialised model.
    pub fn is_consistent(&self) -> bool {
        self.forest.is_consistent()
            && self.y.len() == self.forest.n_rows()
            && self.leaf_value.len() == self.forest.trees.len()
            && self
                .leaf_value
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
