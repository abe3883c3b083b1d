//! The predictive distribution of a Mondrian forest regressor (AISTATS 2016, §3.3, eq. 3–5):
//! each tree's Gaussian mixture over the branch-off events of a test point
//! ([`crate::mondrian::branch_off`]), and the forest's mean and variance, exact quantiles and
//! log densities of the equal-weight mixture over trees ([`super::mixture`]).
//!
//! Component for branching off above path node j: a new node s is born at t_s between j's
//! parent (τ_p) and j, and x sits in a new leaf below s. Exactly under the model,
//! μ_s | data ∝ [cavity_j widened by γ₁(σ(γ₂t_s) − σ(γ₂τ_p))] × [likelihood from j's subtree
//! widened by γ₁(σ(γ₂τ_j) − σ(γ₂t_s))], and y = μ_s + N(0, γ₁(σ(γ₂λ) − σ(γ₂t_s)) + σ_y²).
//! Like the authors' code we plug in the expected birth time t_s rather than integrating over
//! it. Far from the data t_s → τ_p, so the predictive tends to the prior's (variance ≈
//! γ₁(1 − σ(γ₂τ_p)) + σ_y²), as a Gaussian process's does. (The algorithm notes report that
//! the authors' code instead reuses j's posterior and adds only the parent-to-s increment,
//! which keeps the variance near σ_y² far from the data.) At the leaf, the remaining weight
//! gets the leaf's posterior plus σ_y².

use super::belief::{path_cavities, Gaussian, TreePosterior};
use super::mixture::{
    spread_about_mean, Component, LogDensityFold, MomentSums, MomentsFold, ScaledMixtures,
};
use super::prior::GaussianPrior;
use super::quantiles::mixture_quantiles;
use super::routes::{rows_hash, RouteKey, Routed, MAX_ROUTED};
use super::ForestRegressor;
use crate::error::{Error, Result};
use crate::mondrian::branch_off::branch_off_walk;
use crate::mondrian::route::{route_group, RouteScratch, GROUP};
use crate::mondrian::MondrianTree;
use crate::points::Points;
use crate::training_data::check_targets;
use ndarray::{Array1, Array2, ArrayView1};
use rayon::ThreadPool;

/// Appends the components of `tree`'s predictive at a point already routed (`route` or
/// `route_group`) to `out`; their weights sum to 1. `cavities` holds the cavities of the
/// path's nodes, in its order ([`path_cavities`]).
pub fn tree_components(
    tree: &MondrianTree,
    post: &TreePosterior,
    prior: &GaussianPrior,
    lifetime: f64,
    scratch: &RouteScratch,
    cavities: &[Gaussian],
    out: &mut Vec<Component>,
) {
    let path = &scratch.path;
    let mut at = 0;
    let (leaf, keep) = branch_off_walk(tree, scratch, |event| {
        // Events come in path order.
        while path[at] != event.node {
            at += 1;
        }
        let t_split = event.expected_split_time();
        let above = cavities[at].widen(prior.increment(event.t_parent, t_split));
        let below = post.messages[event.node as usize]
            .from_below
            .widen(prior.increment(t_split, event.tau));
        let Gaussian { mean, var } = above.times(below);
        out.push(Component {
            weight: event.weight,
            mean,
            var: var + prior.increment(t_split, lifetime) + prior.noise_variance,
        });
    });
    if keep > 0.0 {
        let cavity = cavities.last().copied().unwrap_or(Gaussian {
            mean: prior.mean,
            var: 0.0,
        });
        let Gaussian { mean, var } = cavity
            .widen(post.increments[leaf as usize])
            .times(post.messages[leaf as usize].from_below);
        out.push(Component {
            weight: keep,
            mean,
            var: var + prior.noise_variance,
        });
    }
}

impl ForestRegressor {
    /// Predictive mean and variance at each row of `x` (eq. 4–5).
    pub fn predict<P: Points>(
        &self,
        x: &P,
        pool: &ThreadPool,
    ) -> Result<(Array1<f64>, Array1<f64>)> {
        let mut sums = vec![(0.0, 0.0, 0.0); x.n_rows()];
        self.fold_moments(x, pool, &mut sums)?;
        let reference = self.prior()?.mean;
        let m = self.forest.trees.len();
        let (mean, var): (Vec<f64>, Vec<f64>) = (sums.into_iter())
            .map(|s| MomentsFold::resume(reference, s).finish(m, self.spread()))
            .unzip();
        Ok((Array1::from(mean), Array1::from(var)))
    }

    /// Adds this forest's trees to the running moment sums of each row of `x` ([`MomentsFold`]
    /// about the prior mean): a forest whose trees live in several processes is folded one
    /// part after another, in tree order, and finished once with the total number of trees —
    /// the same floating-point operations, in the same order, as [`Self::predict`] on the
    /// whole forest.
    pub fn fold_moments<P: Points>(
        &self,
        x: &P,
        pool: &ThreadPool,
        sums: &mut [MomentSums],
    ) -> Result<()> {
        if sums.len() != x.n_rows() {
            return Err(Error::InvalidInput(format!(
                "{} running sums for {} rows",
                sums.len(),
                x.n_rows()
            )));
        }
        let reference = self.prior()?.mean;
        self.for_each_mixture(
            x,
            pool,
            sums,
            None,
            |&s| MomentsFold::resume(reference, s),
            |acc, c, _| acc.add(c),
            |acc, _, _| acc.sums(),
        )
    }

    /// Quantiles `levels` (each in (0, 1)) of the predictive mixture at each row: N × L.
    pub fn quantiles<P: Points>(
        &self,
        x: &P,
        levels: &[f64],
        pool: &ThreadPool,
    ) -> Result<Array2<f64>> {
        if levels.iter().any(|q| !(*q > 0.0 && *q < 1.0)) {
            return Err(Error::InvalidInput(
                "quantile levels must lie strictly between 0 and 1".into(),
            ));
        }
        let mut out = vec![Vec::new(); x.n_rows()];
        self.for_each_spread_mixture(x, pool, &mut out, None, |comps, m, _| {
            mixture_quantiles(comps, m, levels)
        })?;
        Array2::from_shape_vec((x.n_rows(), levels.len()), out.concat())
            .map_err(|e| Error::InvalidInput(e.to_string()))
    }

    /// log p(y_i | x_i) under the forest's predictive mixture, for each row.
    pub fn log_density<P: Points>(
        &self,
        x: &P,
        y: &ArrayView1<f64>,
        pool: &ThreadPool,
    ) -> Result<Array1<f64>> {
        check_targets(x.n_rows(), y)?;
        let y = y.as_standard_layout();
        let targets = y.as_slice().unwrap_or(&[]);
        self.with_routes(x, pool, |routes| {
            self.log_density_routed(x, targets, routes, pool)
        })
    }

    /// The predictive mixtures of rows `x` with targets `y` and weights `weights` (spread
    /// 1, the components of positive weight in tree order), to be scored with scaled
    /// variances and spread means ([`ScaledMixtures`]) instead of predicting again.
    pub fn scaled_mixtures<P: Points>(
        &self,
        x: &P,
        y: &[f64],
        weights: &[f64],
        pool: &ThreadPool,
    ) -> Result<ScaledMixtures> {
        let mut rows = vec![Vec::new(); x.n_rows()];
        self.with_routes(x, pool, |routes| {
            self.for_each_mixture(
                x,
                pool,
                &mut rows,
                routes,
                |_| Vec::<Component>::new(),
                |acc, c, _| {
                    if c.weight > 0.0 {
                        acc.push(*c)
                    }
                },
                |acc, _, _| acc,
            )
        })?;
        ScaledMixtures::new(&rows, y, weights, self.forest.trees.len())
    }

    /// Runs `work` on `x`'s routes through every tree, routed once and kept while the same
    /// rows are scored again and again (a criterion's search), or on None (rows routed as
    /// they go, without the lock) for a large prediction.
    fn with_routes<P: Points, T>(
        &self,
        x: &P,
        pool: &ThreadPool,
        work: impl FnOnce(Option<&[Vec<RouteScratch>]>) -> Result<T>,
    ) -> Result<T> {
        let n_trees = self.forest.trees.len();
        let mut cache =
            (x.n_rows().saturating_mul(n_trees) <= MAX_ROUTED).then(|| self.routes.lock());
        if let Some(cache) = cache.as_mut() {
            let key: RouteKey = (
                rows_hash(x),
                x.n_rows(),
                self.forest.n_rows(),
                self.forest.trees.iter().map(|t| t.n_nodes()).sum(),
            );
            if cache.as_ref().map(|c| c.key) != Some(key) {
                **cache = Some(Routed {
                    key,
                    routes: self.route_rows(x, pool)?,
                });
            }
        }
        let routes = (cache.as_ref())
            .and_then(|c| c.as_ref())
            .map(|c| c.routes.as_slice());
        work(routes)
    }

    /// [`Self::log_density`] at rows routed already (`routes`: per row, per tree) or as they go.
    fn log_density_routed<P: Points>(
        &self,
        x: &P,
        targets: &[f64],
        routes: Option<&[Vec<RouteScratch>]>,
        pool: &ThreadPool,
    ) -> Result<Array1<f64>> {
        let mut out = vec![0.0; x.n_rows()];
        self.for_each_spread_mixture(x, pool, &mut out, routes, |comps, m, i| {
            let mut fold = LogDensityFold::default();
            for c in comps {
                fold.add(c, targets[i]);
            }
            fold.finish(m)
        })?;
        Ok(Array1::from(out))
    }

    /// Every row of `x` routed through every tree: per row, per tree, its path and η.
    fn route_rows<P: Points>(&self, x: &P, pool: &ThreadPool) -> Result<Vec<Vec<RouteScratch>>> {
        let d = self.forest.n_features;
        let mut out = vec![Vec::new(); x.n_rows()];
        self.forest
            .for_each_query_block(x, pool, &mut out, 1, |_, out, rows| {
                let mut scratches = vec![RouteScratch::default(); GROUP];
                for tree in &self.forest.trees {
                    let groups = out.chunks_mut(GROUP).zip(rows.chunks(GROUP * d));
                    for (routes, group) in groups {
                        route_group(tree, group, d, &mut scratches);
                        for (row, scratch) in routes.iter_mut().zip(&scratches) {
                            row.push(scratch.clone());
                        }
                    }
                }
            })?;
        Ok(out)
    }

    /// Stores `finish(components, M, i)` in `out[i]`, the components being every tree's at row
    /// `i` of `x` spread about their mean ([`spread_about_mean`]).
    fn for_each_spread_mixture<P: Points, T: Send>(
        &self,
        x: &P,
        pool: &ThreadPool,
        out: &mut [T],
        routes: Option<&[Vec<RouteScratch>]>,
        finish: impl Fn(&[Component], usize, usize) -> T + Sync,
    ) -> Result<()> {
        self.for_each_mixture(
            x,
            pool,
            out,
            routes,
            |_| Vec::<Component>::new(),
            |acc, c, _| acc.push(*c),
            |mut acc, m, i| {
                spread_about_mean(&mut acc, m, self.spread());
                finish(&acc, m, i)
            },
        )
    }

    /// Folds every tree's components at each row `i` of `x` into an accumulator (`fold(acc,
    /// component, i)`, starting from `start(out[i])`) and stores `finish(acc, M, i)` in
    /// `out[i]`.
    ///
    /// Within a block of rows the loop runs tree by tree, so one tree's nodes stay in cache
    /// while all the block's points walk it; each row still sees trees and components in the
    /// same order, so results do not depend on the number of threads.
    #[allow(clippy::too_many_arguments)]
    fn for_each_mixture<P: Points, A: Send + Sync, T: Send>(
        &self,
        x: &P,
        pool: &ThreadPool,
        out: &mut [T],
        routes: Option<&[Vec<RouteScratch>]>,
        start: impl Fn(&T) -> A + Sync,
        fold: impl Fn(&mut A, &Component, usize) + Sync,
        finish: impl Fn(A, usize, usize) -> T + Sync,
    ) -> Result<()> {
        let prior = self.prior()?;
        let d = self.forest.n_features;
        let m = self.forest.trees.len();
        let lifetime = self.forest.params.lifetime;
        self.forest
            .for_each_query_block(x, pool, out, 1, |first, out, rows| {
                let (mut comps, mut cavities) = (Vec::new(), Vec::new());
                let mut scratches = vec![RouteScratch::default(); GROUP];
                let mut acc: Vec<A> = out.iter().map(&start).collect();
                for (t, (tree, post)) in self.forest.trees.iter().zip(&self.posteriors).enumerate()
                {
                    let groups = acc.chunks_mut(GROUP).zip(rows.chunks(GROUP * d));
                    for (g, (accs, group)) in groups.enumerate() {
                        let at = first + g * GROUP;
                        let cached = routes.and_then(|r| r.get(at..at + accs.len()));
                        if cached.is_none() {
                            route_group(tree, group, d, &mut scratches);
                        }
                        for (k, a) in accs.iter_mut().enumerate() {
                            // Routed rows hold every tree's route (`route_rows`).
                            let scratch = match cached {
                                Some(rows) => &rows[k][t],
                                None => &scratches[k],
                            };
                            comps.clear();
                            path_cavities(tree, post, &prior, &scratch.path, &mut cavities);
                            tree_components(
                                tree, post, &prior, lifetime, scratch, &cavities, &mut comps,
                            );
                            for c in &comps {
                                fold(a, c, first + g * GROUP + k);
                            }
                        }
                    }
                }
                for (k, (o, a)) in out.iter_mut().zip(acc).enumerate() {
                    *o = finish(a, m, first + k);
                }
            })
    }
}

#[cfg(test)]
mod tests;
