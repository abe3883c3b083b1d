//! Mondrian forest regression with the hierarchical Gaussian prior of Lakshminarayanan, Roy &
//! Teh (AISTATS 2016): exact posterior of every node mean by belief propagation
//! ([`super::posterior`]), hyper-parameters from [`super::hyperparameters`], and the
//! branch-off mixture predictive ([`super::predictive`]).
//!
//! Leaves keep Σy; after an online step only the leaves whose points changed are summed
//! again. The posterior then follows the [`PosteriorMode`]: recomputed exactly (lazily, at
//! the next prediction) or updated along the new points' paths.

use super::hyperparameters::{heuristic_prior, PriorOverrides, TargetStats};
use super::posterior::{tree_posterior, update_paths, Gaussian, GaussianPrior, TreePosterior};
use super::MondrianForest;
use crate::error::{Error, Result};
use crate::parallel::is_small;
use crate::tree::MondrianTree;
use ndarray::{ArrayView1, ArrayView2};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// How `partial_fit` brings the posterior up to date.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PosteriorMode {
    /// Exact belief propagation over every node, run lazily before the next prediction
    /// (O(nodes) once per batch of updates), with the prior's hyper-parameters recomputed.
    #[default]
    Exact,
    /// O(depth) per new point and tree ([`update_paths`], paper §5.3): exact likelihoods on
    /// the new points' paths, messages elsewhere from the last full pass, hyper-parameters
    /// frozen; a full exact pass whenever the number of points has doubled since the last one
    /// (amortised O(1) per point).
    Fast,
}

/// A forest plus the targets of its points and each leaf's prediction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForestRegressor {
    pub forest: MondrianForest,
    y: Vec<f64>,
    target_stats: TargetStats,
    /// Per tree, per leaf: Σy and Σ(y − ȳ)² over its points (0 for internal nodes).
    pub(super) leaf_stats: Vec<LeafStats>,
    /// Hyper-parameters fixed by the caller (`None`: the heuristic).
    pub overrides: PriorOverrides,
    pub mode: PosteriorMode,
    /// The prior in use (`None` while the posterior is stale).
    prior: Option<GaussianPrior>,
    pub(super) posteriors: Vec<TreePosterior>,
    /// Number of points at the last full posterior pass.
    rows_at_full_pass: usize,
}

/// Σy and the centred Σ(y − ȳ)² of each leaf of one tree, indexed by node.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LeafStats {
    pub sum: Vec<f64>,
    pub centred_squares: Vec<f64>,
}

impl ForestRegressor {
    /// Wraps an empty forest.
    pub fn new(forest: MondrianForest) -> Self {
        Self {
            forest,
            y: Vec::new(),
            target_stats: TargetStats::default(),
            leaf_stats: Vec::new(),
            overrides: PriorOverrides::default(),
            mode: PosteriorMode::default(),
            prior: None,
            posteriors: Vec::new(),
            rows_at_full_pass: 0,
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
        self.overrides.validate()?;
        let stats = TargetStats::default().with(y.iter().copied())?;
        self.forest.add_points(x)?;
        self.target_stats = stats;
        self.y.extend(y.iter());
        while self.forest.trees.len() < n_trees {
            let count = slice.max(1).min(n_trees - self.forest.trees.len());
            self.forest.grow_trees(count, pool);
            progress(self.forest.trees.len())?;
        }
        let all_leaves: Vec<Vec<u32>> = (self.forest.trees.iter())
            .map(|t| (0..t.n_nodes() as u32).filter(|&j| t.is_leaf(j)).collect())
            .collect();
        self.refresh_leaf_sums(&all_leaves, pool);
        self.refresh_posterior(pool)
    }

    /// Online update: extends every tree with the new points (conditional Mondrian), then
    /// updates the posterior as `mode` says.
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
        let stats = self.target_stats.with(y.iter().copied())?;
        let rows = self.forest.add_points(x)?;
        self.target_stats = stats;
        self.y.extend(y.iter());
        self.forest.extend(rows, pool);
        let changed = self.drain_changed_leaves();
        self.refresh_leaf_sums(&changed, pool);
        let fast = self.mode == PosteriorMode::Fast
            && self.prior.is_some()
            && self.forest.n_rows() < 2 * self.rows_at_full_pass;
        if fast && self.update_posterior_paths(&changed, pool) {
            return Ok(());
        }
        // Exact mode (or time for a full pass): recomputed before the next prediction, so a
        // stream of small updates does not pay O(nodes) each.
        self.prior = None;
        Ok(())
    }

    /// Whether the posterior matches the data (false after `partial_fit` in exact mode until
    /// `ensure_posterior`).
    pub fn posterior_is_fresh(&self) -> bool {
        self.prior.is_some()
    }

    /// Recomputes the prior and the exact posterior of every tree if an update made them stale.
    pub fn ensure_posterior(&mut self, pool: &ThreadPool) -> Result<()> {
        if self.prior.is_none() {
            self.refresh_posterior(pool)?;
        }
        Ok(())
    }

    /// The prior in use (an error while the posterior is stale: see `ensure_posterior`).
    pub fn prior(&self) -> Result<GaussianPrior> {
        self.prior.ok_or_else(|| {
            Error::InvalidInput("the posterior is stale or missing: call ensure_posterior".into())
        })
    }

    /// p(μ_j | data) for every node j of tree `index`.
    pub fn node_posteriors(&self, index: usize) -> Result<Vec<Gaussian>> {
        let prior = self.prior()?;
        let (Some(tree), Some(post)) = (self.forest.trees.get(index), self.posteriors.get(index))
        else {
            return Err(Error::InvalidInput(format!(
                "tree index {index} out of range for {} trees",
                self.posteriors.len()
            )));
        };
        Ok((0..tree.n_nodes() as u32)
            .map(|j| post.posterior(tree, &prior, j))
            .collect())
    }

    /// Recomputes the prior and every tree's posterior.
    fn refresh_posterior(&mut self, pool: &ThreadPool) -> Result<()> {
        let prior = heuristic_prior(
            &self.target_stats,
            self.forest.n_features,
            &self.overrides,
            |var| self.within_leaf_variance(var),
        )?;
        let (trees, sums) = (&self.forest.trees, &self.leaf_stats);
        self.posteriors = pool.install(|| {
            trees
                .par_iter()
                .zip(sums.par_iter())
                .map(|(tree, stats)| tree_posterior(tree, &stats.sum, &prior))
                .collect()
        });
        self.prior = Some(prior);
        self.rows_at_full_pass = self.forest.n_rows();
        Ok(())
    }

    /// The fast mode's update along the changed leaves' paths, per tree; false if some tree
    /// needs a full pass instead.
    fn update_posterior_paths(&mut self, changed: &[Vec<u32>], pool: &ThreadPool) -> bool {
        let Some(prior) = self.prior else {
            return false;
        };
        let work = self
            .forest
            .trees
            .iter()
            .zip(&self.leaf_stats)
            .zip(self.posteriors.iter_mut())
            .zip(changed);
        let update = |(((tree, stats), post), leaves): (
            ((&MondrianTree, &LeafStats), &mut TreePosterior),
            &Vec<u32>,
        )| {
            update_paths(tree, &stats.sum, &prior, leaves, post, &mut Vec::new())
        };
        if changed.iter().all(|c| is_small(c.len())) {
            work.map(update).fold(true, |a, b| a & b)
        } else {
            let work: Vec<_> = work.collect();
            pool.install(|| {
                work.into_par_iter()
                    .map(update)
                    .reduce(|| true, |a, b| a & b)
            })
        }
    }

    /// Pooled within-leaf variance of the targets over all trees (falls back to `total_var`
    /// when every leaf holds a single point).
    fn within_leaf_variance(&self, total_var: f64) -> f64 {
        let (mut squares, mut dof) = (0.0, 0.0);
        for (tree, stats) in self.forest.trees.iter().zip(&self.leaf_stats) {
            squares += stats.centred_squares.iter().sum::<f64>();
            dof += (self.y.len() - tree.n_leaves()) as f64;
        }
        let pooled = if dof > 0.0 { squares / dof } else { total_var };
        pooled.max(1e-12 * total_var.max(f64::MIN_POSITIVE))
    }

    /// Per tree, the leaves whose points changed in online updates since the last call,
    /// leaving the trees' lists empty.
    fn drain_changed_leaves(&mut self) -> Vec<Vec<u32>> {
        self.forest
            .trees
            .iter_mut()
            .map(|t| std::mem::take(&mut t.touched))
            .collect()
    }

    /// Recomputes Σy and Σ(y − ȳ)² of the nodes in `changed` (per tree).
    fn refresh_leaf_sums(&mut self, changed: &[Vec<u32>], pool: &ThreadPool) {
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

    /// Checks a deserialised model.
    pub fn is_consistent(&self) -> bool {
        self.forest.is_consistent()
            && self.y.len() == self.forest.n_rows()
            && self.y.iter().all(|v| v.is_finite())
            && self.target_stats.is_consistent(self.y.len())
            && self.overrides.validate().is_ok()
            && self
                .prior
                .is_none_or(|p| GaussianPrior::new(p.mean, p.gamma1, p.gamma2, p.noise_var).is_ok())
            && self.leaf_stats.len() == self.forest.trees.len()
            && (self.prior.is_none()
                || (self.posteriors.len() == self.forest.trees.len()
                    && self
                        .posteriors
                        .iter()
                        .zip(&self.forest.trees)
                        .all(|(p, t)| p.messages.len() == t.n_nodes())))
            && self
                .leaf_stats
                .iter()
                .zip(&self.forest.trees)
                .all(|(v, t)| v.sum.len() == t.n_nodes() && v.centred_squares.len() == t.n_nodes())
    }
}

pub(super) fn check_targets(x: &ArrayView2<f64>, y: &ArrayView1<f64>) -> Result<()> {
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

#[cfg(test)]
#[path = "regression_tests.rs"]
mod tests;
