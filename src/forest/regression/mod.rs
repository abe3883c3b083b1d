//! Mondrian forest regression with the hierarchical Gaussian prior of Lakshminarayanan, Roy &
//! Teh (AISTATS 2016): the prior and its hyper-parameters ([`prior`]), the exact posterior of
//! every node mean by belief propagation ([`belief`]), and the branch-off mixture predictive
//! ([`predictive`], [`mixture`]). Online updates are in [`online`]. Cuts may be guided by the
//! targets ([`crate::mondrian::guided`]) with variance reduction ([`variance`]).
//!
//! Leaves keep Σy ([`leaf_stats`]); after an online step only the leaves whose points changed
//! are summed again, and the posterior's likelihoods updated along the new points' paths
//! ([`online`]); predictions then recompute the cavities they need along their own paths.
//!
//! Also here: [`evidence`] (each tree's marginal likelihood), [`quantiles`] (the mixture's
//! quantiles), [`routes`] (rows routed once for criteria that score them many times),
//! [`path`] (the lifetime path) and `stored` (the stored form).

pub mod belief;
pub mod evidence;
pub mod leaf_stats;
pub mod mixture;
pub mod online;
pub mod path;
pub mod predictive;
pub mod prior;
pub mod quantiles;
pub mod routes;
mod stored;
pub mod variance;

use super::weights::RowWeights;
use super::{Growing, MondrianForest};
use crate::error::{Error, Result};
use crate::mondrian::guided::{Guidance, Guided};
use crate::mondrian::policy::PureMondrian;
use crate::points::Points;
use crate::training_data::check_targets_and_weights;
use belief::{refresh_cavities, tree_posterior, upward_pass, Gaussian, TreePosterior};
pub use evidence::PriorCriterion;
use leaf_stats::LeafStats;
use mixture::LogDensityFold;
use ndarray::ArrayView1;
pub use online::{PosteriorMode, PRIOR_GROWTH};
use prior::{heuristic_prior, GaussianPrior, NoiseVariance, PriorOverrides, TargetStats};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::Deserialize;
use variance::TargetVariance;

/// Path nodes a prediction's cavities cost, in units of one node of a full downward pass
/// (two prior increments and a product per path node against one of each per node, over a
/// path of a few dozen nodes).
const PATH_CAVITY_COST: usize = 64;

/// The regression trees' split policy: Mondrian cuts, guided by variance reduction when
/// `guidance` asks for candidates (never pausing for the model).
fn policy<'a>(
    (y, weights): (&'a [f64], &'a RowWeights),
    stats: &TargetStats,
    guidance: Guidance,
) -> Guided<PureMondrian, TargetVariance<'a>> {
    Guided {
        base: PureMondrian,
        guidance,
        impurity: TargetVariance::new(y, weights, stats),
    }
}

/// Checks targets and optional row weights of `n_rows` new rows, and returns the target
/// statistics `stats` with them added.
fn checked_stats(
    stats: &TargetStats,
    n_rows: usize,
    y: &ArrayView1<f64>,
    weights: Option<&ArrayView1<f64>>,
) -> Result<TargetStats> {
    check_targets_and_weights(n_rows, y, weights)?;
    match weights {
        Some(w) => stats.with(y.iter().copied().zip(w.iter().copied())),
        None => stats.with(y.iter().map(|&v| (v, 1.0))),
    }
}

/// A forest plus the targets of its points and each leaf's prediction.
///
/// Stored (`stored.rs`) without what is recomputed exactly from the rest: the leaf statistics
/// always, the posterior messages when they are exact (not after a "fast" online update).
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "stored::StoredRegressor")]
pub struct ForestRegressor {
    pub forest: MondrianForest,
    y: Vec<f64>,
    /// The row weights (frequencies: [`crate::forest::weights`]).
    weights: RowWeights,
    target_stats: TargetStats,
    /// Per tree, per leaf: Σy and Σ(y − ȳ)² over its points (0 for internal nodes).
    leaf_stats: Vec<LeafStats>,
    /// Hyper-parameters fixed by the caller (`None`: the heuristic).
    pub overrides: PriorOverrides,
    pub mode: PosteriorMode,
    /// Candidate cuts per split (T dimensions × Q locations; 1 × 1: label-blind).
    pub guidance: Guidance,
    /// The prior in use (`None` until it is chosen, again when the rows have grown enough
    /// since it was: [`online::PRIOR_GROWTH`]).
    prior: Option<GaussianPrior>,
    /// Per tree, the messages under `prior` (none after loading, until the first prediction).
    posteriors: Vec<TreePosterior>,
    /// Number of rows when the prior in use was chosen.
    rows_at_prior_choice: usize,
    /// ρ, the factor on the spread of the trees' predictive means about their average in
    /// the forest's predictive ([`mixture::spread_about_mean`]); 1 is the equal mixture.
    spread: f64,
    /// Rows scored repeatedly, routed once ([`routes`]; not stored).
    routes: routes::RouteCache,
}

impl ForestRegressor {
    /// Wraps an empty forest.
    pub fn new(forest: MondrianForest) -> Self {
        Self {
            forest,
            y: Vec::new(),
            weights: RowWeights::default(),
            target_stats: TargetStats::default(),
            leaf_stats: Vec::new(),
            overrides: PriorOverrides::default(),
            mode: PosteriorMode::default(),
            guidance: Guidance::NONE,
            prior: None,
            posteriors: Vec::new(),
            rows_at_prior_choice: 0,
            spread: 1.0,
            routes: routes::RouteCache::default(),
        }
    }

    /// ρ in use (see the field).
    pub fn spread(&self) -> f64 {
        self.spread
    }

    /// Sets ρ, finite and ≥ 0.
    pub fn set_spread(&mut self, spread: f64) -> Result<()> {
        if !(spread.is_finite() && spread >= 0.0) {
            return Err(Error::InvalidInput(format!(
                "the spread factor must be finite and >= 0, got {spread}"
            )));
        }
        self.spread = spread;
        Ok(())
    }

    /// Batch fit on rows `x` with targets `y` and optional row weights, growing the trees as
    /// `how` says and calling `progress(done)` between slices (an error from it, or the
    /// interrupt, stops the fit).
    pub fn fit<P: Points>(
        &mut self,
        x: &P,
        y: &ArrayView1<f64>,
        weights: Option<&ArrayView1<f64>>,
        how: &Growing<'_>,
        progress: impl FnMut(usize) -> Result<()>,
    ) -> Result<()> {
        let stats = checked_stats(&TargetStats::default(), x.n_rows(), y, weights)?;
        self.routes.clear();
        if !self.y.is_empty() {
            return Err(Error::InvalidInput("fit needs a fresh model".into()));
        }
        self.forest.add_points(x)?;
        self.target_stats = stats;
        self.y.extend(y.iter());
        self.weights.append(0, y.len(), weights);
        let guidance = (self.guidance).bounded(self.y.len(), self.forest.n_features);
        let rule = policy((&self.y, &self.weights), &self.target_stats, guidance);
        self.forest.grow_to(&rule, how, progress)?;
        let pool = how.pool;
        let all_leaves: Vec<Vec<u32>> = (self.forest.trees.iter())
            .map(|t| (0..t.n_nodes() as u32).filter(|&j| t.is_leaf(j)).collect())
            .collect();
        self.refresh_leaf_stats(&all_leaves, pool);
        self.refresh_posterior(true, pool)
    }

    /// Whether predictions may read the posterior now (false until the prior is chosen again
    /// after the rows grew, and after loading, until `ensure_posterior`).
    pub fn posterior_is_fresh(&self) -> bool {
        self.prior.is_some() && self.posteriors.len() == self.forest.trees.len()
    }

    /// Whether a prediction of `n_rows` rows should first make every cavity fresh
    /// ([`Self::ensure_cavities`]): when recomputing them along the rows' paths would cost
    /// more than one downward pass over the trees.
    pub fn cavities_worth_refreshing(&self, n_rows: usize) -> bool {
        let stale = self.posteriors.iter().filter(|p| !p.cavities_fresh).count();
        stale > 0 && n_rows.saturating_mul(PATH_CAVITY_COST) >= self.forest.mean_tree_nodes()
    }

    /// Chooses the prior if it is due (the heuristic, with the caller's overrides) and
    /// computes the posterior of every tree it is missing for.
    pub fn ensure_posterior(&mut self, pool: &ThreadPool) -> Result<()> {
        match self.prior {
            None => self.refresh_posterior(true, pool),
            Some(prior) if self.posteriors.len() != self.forest.trees.len() => {
                self.posteriors = self.tree_posteriors(&prior, true, pool);
                Ok(())
            }
            Some(_) => Ok(()),
        }
    }

    /// [`Self::ensure_posterior`], then a downward pass over every tree whose cavities an
    /// online update left stale.
    pub fn ensure_cavities(&mut self, pool: &ThreadPool) -> Result<()> {
        self.ensure_posterior(pool)?;
        let prior = self.prior()?;
        let trees = &self.forest.trees;
        pool.install(|| {
            (self.posteriors.par_iter_mut().zip(trees.par_iter()))
                .filter(|(post, _)| !post.cavities_fresh)
                .for_each(|(post, tree)| refresh_cavities(tree, &prior, post))
        });
        Ok(())
    }

    /// Every stored row: its point (row-major, in the forest's coordinates), its target and
    /// its weight (`None` when every row weighs 1).
    #[allow(clippy::type_complexity)]
    pub fn training_rows(&self) -> Result<(Vec<f64>, &[f64], Option<&[f64]>)> {
        Ok((self.forest.copy_points()?, &self.y, self.weights.values()))
    }

    /// The (weighted) population variance and the total weight of the targets seen.
    pub fn target_moments(&self) -> (f64, f64) {
        (self.target_stats.variance(), self.target_stats.weight)
    }

    /// The caller's fixed hyper-parameters (`None`: chosen by the heuristic) replace those in
    /// use, and the prior is chosen again from them; returns the prior in use before — the
    /// one chosen last, also when it is due to be chosen again (then the values it fixed) —
    /// or `None` when the heuristic chose it.
    pub fn reset_prior(
        &mut self,
        overrides: PriorOverrides,
        pool: &ThreadPool,
    ) -> Result<Option<GaussianPrior>> {
        if !overrides.is_valid() {
            return Err(Error::InvalidInput("invalid fixed hyper-parameters".into()));
        }
        let previous = self.prior.or(match self.overrides {
            PriorOverrides {
                mean: Some(mean),
                gamma1: Some(gamma1),
                gamma2: Some(gamma2),
                noise_variance: NoiseVariance::Fixed(noise),
            } => GaussianPrior::new(mean, gamma1, gamma2, noise).ok(),
            _ => None,
        });
        self.overrides = overrides;
        self.refresh_posterior(true, pool)?;
        Ok(previous)
    }

    /// The prior in use (an error while the posterior is stale: see `ensure_posterior`).
    pub fn prior(&self) -> Result<GaussianPrior> {
        self.prior.ok_or_else(|| {
            Error::InvalidInput("the posterior is stale or missing: call ensure_posterior".into())
        })
    }

    /// p(μ_j | data) for every node j of tree `index`.
    pub fn node_posteriors(&self, index: usize) -> Result<Vec<Gaussian>> {
        self.prior()?;
        if self.posteriors.iter().any(|p| !p.cavities_fresh) {
            return Err(Error::InvalidInput(
                "the cavities are stale after an online update: call ensure_cavities".into(),
            ));
        }
        let (Some(tree), Some(post)) = (self.forest.trees.get(index), self.posteriors.get(index))
        else {
            return Err(Error::InvalidInput(format!(
                "tree index {index} out of range for {} trees",
                self.posteriors.len()
            )));
        };
        Ok((0..tree.n_nodes() as u32)
            .map(|j| post.posterior(j))
            .collect())
    }

    /// Fixes every hyper-parameter to `prior`'s and recomputes the posterior; without
    /// `cavities`, the upward pass only: the cavities are left stale, for predictions to
    /// compute along their paths or in one downward pass ([`Self::cavities_worth_refreshing`])
    /// — for a scoring forest that a few rows read under many priors.
    pub fn fix_prior(
        &mut self,
        prior: &GaussianPrior,
        cavities: bool,
        pool: &ThreadPool,
    ) -> Result<()> {
        self.overrides = PriorOverrides {
            mean: Some(prior.mean),
            gamma1: Some(prior.gamma1),
            gamma2: Some(prior.gamma2),
            noise_variance: NoiseVariance::Fixed(prior.noise_variance),
        };
        self.refresh_posterior(cavities, pool)
    }

    /// `criterion` of `prior` on the first `n_trees` trees (reads only the trees and the leaf
    /// statistics, never the stored posterior).
    pub fn prior_score(
        &self,
        criterion: PriorCriterion,
        prior: &GaussianPrior,
        n_trees: usize,
        pool: &ThreadPool,
    ) -> f64 {
        match criterion {
            PriorCriterion::Evidence => self.log_evidence(prior, n_trees, pool),
            PriorCriterion::LeaveOneOut => self.loo_log_density(prior, n_trees, pool),
        }
    }

    /// Σ over the first `n_trees` trees of log p(y | tree, `prior`) (the marginal likelihood
    /// of [`evidence`]); the trees do not depend on the prior, so any prior can be scored.
    fn log_evidence(&self, prior: &GaussianPrior, n_trees: usize, pool: &ThreadPool) -> f64 {
        let n = n_trees.min(self.forest.trees.len());
        let (trees, stats) = (&self.forest.trees[..n], &self.leaf_stats[..n]);
        pool.install(|| {
            (trees.par_iter().zip(stats))
                .map(|(tree, stats)| evidence::tree_log_evidence(tree, stats, prior))
                .sum()
        })
    }

    /// Σ_i w_i log (1/k Σ_{m<k} p_m(y_i | other labels)) over the training points, k =
    /// `n_trees` (at most the forest's), w_i the row weights: the forest's leave-one-out
    /// predictive log density with the trees held fixed, under `prior` (belief propagation on
    /// the k trees first).
    fn loo_log_density(&self, prior: &GaussianPrior, n_trees: usize, pool: &ThreadPool) -> f64 {
        let k = n_trees.min(self.forest.trees.len());
        let n = self.y.len();
        let (trees, stats) = (&self.forest.trees[..k], &self.leaf_stats[..k]);
        let labels = (self.y.as_slice(), &self.weights);
        let empty = || vec![LogDensityFold::default(); n];
        let folds = pool.install(|| {
            (trees.par_iter().zip(stats))
                .fold(empty, |mut folds, (tree, stats)| {
                    let posterior = tree_posterior(tree, stats, prior);
                    evidence::fold_tree_loo_density(
                        tree, stats, &posterior, prior, labels, &mut folds,
                    );
                    folds
                })
                .reduce(empty, |a, b| {
                    a.into_iter().zip(b).map(|(a, b)| a.merge(b)).collect()
                })
        });
        (folds.into_iter().enumerate())
            .map(|(i, fold)| self.weights.of(i as u32) * fold.finish(k))
            .sum()
    }

    /// Recomputes the prior and every tree's posterior, its cavities left stale without
    /// `cavities` (stale ones read as recomputed ones: [`belief::path_cavities`] and
    /// [`refresh_cavities`] apply the same products in the same order).
    fn refresh_posterior(&mut self, cavities: bool, pool: &ThreadPool) -> Result<()> {
        let prior = heuristic_prior(
            &self.target_stats,
            self.forest.n_features,
            &self.overrides,
            |var| self.within_leaf_variance(var),
        )?;
        self.posteriors = self.tree_posteriors(&prior, cavities, pool);
        self.prior = Some(prior);
        self.rows_at_prior_choice = self.forest.n_rows();
        Ok(())
    }

    /// Every tree's posterior under `prior` (its cavities stale without `cavities`).
    fn tree_posteriors(
        &self,
        prior: &GaussianPrior,
        cavities: bool,
        pool: &ThreadPool,
    ) -> Vec<TreePosterior> {
        let (trees, stats) = (&self.forest.trees, &self.leaf_stats);
        pool.install(|| {
            (trees.par_iter().zip(stats.par_iter()))
                .map(|(tree, stats)| {
                    if cavities {
                        tree_posterior(tree, stats, prior)
                    } else {
                        upward_pass(tree, stats, prior).messages
                    }
                })
                .collect()
        })
    }

    /// Checks a deserialised model.
    pub fn is_consistent(&self) -> bool {
        let n_nodes = |t: usize| self.forest.trees[t].n_nodes();
        self.forest.is_consistent()
            && self.y.len() == self.forest.n_rows()
            && self.y.iter().all(|v| v.is_finite())
            && self.weights.is_consistent(self.y.len())
            && self.target_stats.is_consistent(self.y.len())
            && self.overrides.is_valid()
            && self.spread.is_finite()
            && self.spread >= 0.0
            && self.guidance.tries >= 1
            && self.guidance.locations >= 1
            && self.prior.is_none_or(|p| {
                GaussianPrior::new(p.mean, p.gamma1, p.gamma2, p.noise_variance).is_ok()
            })
            && self.leaf_stats.len() == self.forest.trees.len()
            && (self.posteriors.is_empty()
                || (self.prior.is_some()
                    && self.posteriors.len() == self.forest.trees.len()
                    && (self.posteriors.iter().enumerate())
                        .all(|(t, p)| p.messages.len() == n_nodes(t))))
            && (self.leaf_stats.iter().enumerate()).all(|(t, v)| {
                v.weight.len() == n_nodes(t)
                    && v.sum.len() == n_nodes(t)
                    && v.centred_squares.len() == n_nodes(t)
            })
    }
}
