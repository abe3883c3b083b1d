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
    mixture_quantiles, spread_about_mean, Component, LogDensityFold, MomentSums, MomentsFold,
    ScaledMixtures,
};
use super::prior::GaussianPrior;
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
        self.for_each_mixture(
            x,
            pool,
            &mut out,
            None,
            |_| Vec::<Component>::new(),
            |acc, c, _| acc.push(*c),
            |mut acc, m, _| {
                spread_about_mean(&mut acc, m, self.spread());
                mixture_quantiles(&acc, m, levels)
            },
        )?;
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
        self.for_each_mixture(
            x,
            pool,
            &mut out,
            routes,
            |_| Vec::<Component>::new(),
            |acc, c, _| acc.push(*c),
            |mut acc, m, i| {
                spread_about_mean(&mut acc, m, self.spread());
                let mut fold = LogDensityFold::default();
                for c in &acc {
                    fold.add(c, targets[i]);
                }
                fold.finish(m)
            },
        )?;
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
mod tests {
    use super::*;
    use crate::forest::regression::belief::tree_posterior;
    use crate::forest::regression::leaf_stats::LeafStats;
    use crate::forest::MondrianForest;
    use crate::mondrian::route::route;
    use crate::mondrian::TreeParams;
    use crate::parallel::{pool, Interrupt};
    use crate::testing::{forest_on, growing, regression_data, uniform_array};

    /// Trees [0, 3) and [3, 5) grown apart (offset streams) and folded in order give the
    /// whole forest's predictive moments bit for bit.
    #[test]
    fn folding_parts_in_tree_order_is_the_whole_forests_prediction() {
        let (x, y) = regression_data(600, 3, 4);
        let p = pool(2).expect("pool");
        let interrupt = Interrupt::default();
        let fitted = |first: u64, n_trees: usize| {
            let params = TreeParams::new(f64::INFINITY, 3);
            let mut model = ForestRegressor::new(MondrianForest::new(params, 3, 7).expect("ok"));
            model.forest.offset_trees(first).expect("treeless");
            let how = growing(n_trees, &p, &interrupt);
            model
                .fit(&x.view(), &y.view(), None, &how, |_| Ok(()))
                .expect("fit");
            model
        };
        let whole = fitted(0, 5);
        let probes = uniform_array(40, 3, 9).mapv(|v| 1.5 * v - 0.2);
        let mut sums = vec![(0.0, 0.0, 0.0); probes.nrows()];
        for part in [fitted(0, 3), fitted(3, 2)] {
            part.fold_moments(&probes.view(), &p, &mut sums)
                .expect("fold");
        }
        let reference = whole.prior().expect("fresh").mean;
        let (mean, var) = whole.predict(&probes.view(), &p).expect("predict");
        for (i, &s) in sums.iter().enumerate() {
            assert_eq!(
                MomentsFold::resume(reference, s).finish(5, 1.0),
                (mean[i], var[i])
            );
        }
        assert!(whole
            .fold_moments(&probes.view(), &p, &mut sums[1..])
            .is_err());
    }

    /// A regressor of 4 trees (seeded `seed`) fitted on 400 rows of `regression_data(.., data)`.
    fn four_trees_on(data: u64, seed: u64, p: &ThreadPool) -> ForestRegressor {
        let (x, y) = regression_data(400, 3, data);
        let interrupt = Interrupt::default();
        let params = TreeParams::new(f64::INFINITY, 3);
        let mut model = ForestRegressor::new(MondrianForest::new(params, 3, seed).expect("ok"));
        let how = growing(4, p, &interrupt);
        model
            .fit(&x.view(), &y.view(), None, &how, |_| Ok(()))
            .expect("fit");
        model
    }

    /// Log densities of rows routed once and kept equal those routed as they go, bit for bit;
    /// other rows, or an update, route again.
    #[test]
    fn routed_rows_give_the_log_densities_of_rows_routed_as_they_go() {
        let p = pool(2).expect("pool");
        let mut model = four_trees_on(5, 7, &p);
        model.ensure_posterior(&p).expect("posterior");
        let probes = uniform_array(60, 3, 11).mapv(|v| 1.4 * v - 0.2);
        let targets = Array1::from_iter((0..60).map(|i| f64::from(i) / 30.0 - 1.0));
        let t = targets.as_slice().expect("contiguous");
        let direct = |model: &ForestRegressor, x: &Array2<f64>| {
            let routed = model.log_density_routed(&x.view(), t, None, &p);
            routed.expect("log density").to_vec()
        };
        for _ in 0..2 {
            let cached = model
                .log_density(&probes.view(), &targets.view(), &p)
                .expect("log density");
            assert_eq!(cached.to_vec(), direct(&model, &probes));
        }
        let moved = probes.mapv(|v| v + 0.05);
        let cached = model
            .log_density(&moved.view(), &targets.view(), &p)
            .expect("log density");
        assert_eq!(cached.to_vec(), direct(&model, &moved));
        model
            .partial_fit(&probes.view(), &targets.view(), None, &p)
            .expect("update");
        model.ensure_posterior(&p).expect("posterior");
        let cached = model
            .log_density(&moved.view(), &targets.view(), &p)
            .expect("log density");
        assert_eq!(cached.to_vec(), direct(&model, &moved));
    }

    /// The mixtures scored at scale c and spread ρ give the weighted log densities of the
    /// forest whose γ₁ and σ_y² are c times larger and whose spread is ρ (to rounding), and
    /// their gradient and Hessian in (log c, ρ) match central differences.
    #[test]
    fn scaled_mixtures_are_the_forest_with_scaled_variances() {
        let p = pool(2).expect("pool");
        let mut model = four_trees_on(6, 8, &p);
        let base = GaussianPrior::new(0.3, 0.8, 2.0, 0.02).expect("valid");
        model.fix_prior(&base, false, &p).expect("prior");
        let probes = uniform_array(50, 3, 12).mapv(|v| 1.6 * v - 0.3);
        let targets = Array1::from_iter((0..50).map(|i| f64::from(i) / 25.0 - 1.0));
        let weights: Vec<f64> = (0..50).map(|i| 1.0 + f64::from(i) / 50.0).collect();
        let t = targets.as_slice().expect("contiguous");
        let mixtures = model
            .scaled_mixtures(&probes.view(), t, &weights, &p)
            .expect("mixtures");
        let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * (1.0 + b.abs());
        for (scale, spread) in [(1.0_f64, 1.0), (3.5, 0.6), (0.2, 1.7)] {
            let scaled = GaussianPrior::new(0.3, 0.8 * scale, 2.0, 0.02 * scale).expect("valid");
            model.fix_prior(&scaled, true, &p).expect("prior");
            model.set_spread(spread).expect("spread");
            let direct = model
                .log_density(&probes.view(), &targets.view(), &p)
                .expect("log density");
            let direct: f64 = direct.iter().zip(&weights).map(|(d, w)| d * w).sum();
            let at = |c: f64, r: f64| mixtures.score(c, r);
            let (c, h) = (scale.ln(), 1e-5);
            let score = at(c, spread);
            assert!(
                close(score.value, direct, 1e-12),
                "{} vs {direct}",
                score.value
            );
            let (up_c, down_c) = (at(c + h, spread), at(c - h, spread));
            let (up_r, down_r) = (at(c, spread + h), at(c, spread - h));
            let numeric = [
                (score.gradient[0], (up_c.value - down_c.value) / (2.0 * h)),
                (score.gradient[1], (up_r.value - down_r.value) / (2.0 * h)),
                (
                    score.hessian[0],
                    (up_c.gradient[0] - down_c.gradient[0]) / (2.0 * h),
                ),
                (
                    score.hessian[1],
                    (up_r.gradient[0] - down_r.gradient[0]) / (2.0 * h),
                ),
                (
                    score.hessian[1],
                    (up_c.gradient[1] - down_c.gradient[1]) / (2.0 * h),
                ),
                (
                    score.hessian[2],
                    (up_r.gradient[1] - down_r.gradient[1]) / (2.0 * h),
                ),
            ];
            for (exact, by_difference) in numeric {
                assert!(
                    close(exact, by_difference, 1e-6),
                    "{exact} vs {by_difference}"
                );
            }
        }
        assert!(ScaledMixtures::new(&[Vec::new()], &[0.0, 1.0], &[1.0], 1).is_err());
    }

    /// Every tree's predictive is a probability mixture of proper Gaussians: weights sum to 1
    /// for points inside, near and far from the data, with finite and infinite lifetimes.
    #[test]
    fn tree_mixtures_are_distributions() {
        let x = uniform_array(300, 3, 21);
        let prior = GaussianPrior::new(0.5, 2.0, 0.3, 0.01).expect("valid");
        let probes = uniform_array(50, 3, 22).mapv(|v| 3.0 * v - 1.0);
        for lifetime in [f64::INFINITY, 3.0, 0.0] {
            let f = forest_on(&x, TreeParams::new(lifetime, 5), 4, 9);
            for tree in &f.trees {
                let leaves = LeafStats {
                    weight: tree.nodes.iter().map(|n| f64::from(n.n_samples)).collect(),
                    sum: vec![1.0; tree.n_nodes()],
                    centred_squares: vec![0.0; tree.n_nodes()],
                };
                let post = tree_posterior(tree, &leaves, &prior);
                for row in probes.rows().into_iter().chain(x.rows()) {
                    let point = row.to_vec();
                    let mut scratch = RouteScratch::default();
                    route(tree, &point, f64::INFINITY, &mut scratch);
                    let (mut comps, mut cavities) = (Vec::new(), Vec::new());
                    path_cavities(tree, &post, &prior, &scratch.path, &mut cavities);
                    tree_components(
                        tree, &post, &prior, lifetime, &scratch, &cavities, &mut comps,
                    );
                    let total: f64 = comps.iter().map(|c| c.weight).sum();
                    assert!((total - 1.0).abs() < 1e-12, "weights sum to {total}");
                    assert!(comps.iter().all(|c| c.var > 0.0 && c.mean.is_finite()));
                }
            }
        }
    }
}
