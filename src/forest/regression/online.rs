//! Online updates of the regression forest: the trees grow by the conditional Mondrian, the
//! changed leaves' statistics are refreshed, and the posterior follows the [`PosteriorMode`].

use super::belief::{update_paths, TreePosterior};
use super::leaf_stats::LeafStats;
use super::{checked_stats, policy, ForestRegressor};
use crate::error::{Error, Result};
use crate::mondrian::MondrianTree;
use crate::parallel::is_small;
use crate::points::Points;
use ndarray::ArrayView1;
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

impl PosteriorMode {
    /// The mode called `name`: "exact" or "fast".
    pub fn named(name: &str) -> Result<Self> {
        match name {
            "exact" => Ok(Self::Exact),
            "fast" => Ok(Self::Fast),
            other => Err(Error::InvalidParameter {
                name: "posterior",
                reason: format!("must be 'exact' or 'fast', got {other:?}"),
            }),
        }
    }
}

impl ForestRegressor {
    /// Online update: extends every tree with the new points (conditional Mondrian), then
    /// updates the posterior as `mode` says. Everything is checked before anything changes.
    pub fn partial_fit<P: Points>(
        &mut self,
        x: &P,
        y: &ArrayView1<f64>,
        weights: Option<&ArrayView1<f64>>,
        pool: &ThreadPool,
    ) -> Result<()> {
        let stats = checked_stats(&self.target_stats, x.n_rows(), y, weights)?;
        let rows = self.forest.add_online_points(x)?;
        self.target_stats = stats;
        self.weights.append(self.y.len(), y.len(), weights);
        self.y.extend(y.iter());
        let rule = policy((&self.y, &self.weights), &self.target_stats, self.guidance);
        let changed = self.forest.extend(rows, &rule, pool)?;
        self.refresh_leaf_stats(&changed, pool);
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
        let update =
            |(((tree, stats), post), leaves): (
                ((&MondrianTree, &LeafStats), &mut TreePosterior),
                &Vec<u32>,
            )| { update_paths(tree, stats, &prior, leaves, post, &mut Vec::new()) };
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forest::regression::belief::{tree_posterior, Gaussian};
    use crate::forest::regression::prior::{NoiseVariance, PriorOverrides};
    use crate::forest::MondrianForest;
    use crate::mondrian::TreeParams;
    use crate::parallel::{pool, Interrupt};
    use crate::testing::{growing, regression_data};
    use ndarray::s;

    fn close(a: Gaussian, b: Gaussian) -> bool {
        let tol = |u: f64, v: f64| (u - v).abs() <= 1e-12 * (1.0 + u.abs().max(v.abs()));
        tol(a.mean, b.mean) && tol(a.var, b.var)
    }

    /// Fixed hyper-parameters, so that the frozen prior of the fast mode and a full pass agree.
    fn regressor(mode: PosteriorMode) -> ForestRegressor {
        let params = TreeParams::new(f64::INFINITY, 5);
        let forest = MondrianForest::new(params, 3, 11).expect("valid");
        let mut model = ForestRegressor::new(forest);
        model.overrides = PriorOverrides {
            mean: Some(0.3),
            gamma1: Some(1.5),
            gamma2: Some(0.8),
            noise_variance: NoiseVariance::Fixed(0.02),
        };
        model.mode = mode;
        model
    }

    #[test]
    fn fast_update_is_exact_below_and_on_the_new_points_paths() {
        let (x, y) = regression_data(1300, 3, 3);
        let p = pool(2).expect("pool");
        let mut model = regressor(PosteriorMode::Fast);
        let (x0, y0) = (x.slice(s![..1000, ..]), y.slice(s![..1000]));
        model
            .fit(
                &x0,
                &y0,
                None,
                &growing(4, &p, &Interrupt::default()),
                |_| Ok(()),
            )
            .expect("fit");
        let prior = model.prior().expect("fresh");
        let mut off_path_gap: f64 = 0.0;
        for i in 1000..1300 {
            let (xi, yi) = (x.slice(s![i..i + 1, ..]), y.slice(s![i..i + 1]));
            model.partial_fit(&xi, &yi, None, &p).expect("update");
            assert!(
                model.posterior_is_fresh(),
                "fast mode keeps a usable posterior"
            );
            let row: Vec<f64> = xi.iter().copied().collect();
            for (t, tree) in model.forest.trees.iter().enumerate() {
                let exact = tree_posterior(tree, &model.leaf_stats[t], &prior);
                let fast = &model.posteriors[t];
                for j in 0..tree.n_nodes() {
                    assert!(
                        close(fast.messages[j].from_below, exact.messages[j].from_below),
                        "from_below {j}"
                    );
                }
                let mut j = tree.leaf_of(&row);
                while j != crate::mondrian::NONE {
                    let ju = j as usize;
                    assert!(
                        close(
                            fast.posterior(tree, &prior, j),
                            exact.posterior(tree, &prior, j)
                        ),
                        "on-path node {j}"
                    );
                    assert!(close(fast.messages[ju].cavity, exact.messages[ju].cavity));
                    j = tree.parent[ju];
                }
                for j in 0..tree.n_nodes() {
                    off_path_gap = off_path_gap.max(
                        (fast.posterior(tree, &prior, j as u32).mean
                            - exact.posterior(tree, &prior, j as u32).mean)
                            .abs(),
                    );
                }
            }
        }
        // Off the paths the messages are stale: the approximation is real (its effect on
        // predictions is measured in benches/bench_online_posterior.py, not asserted here).
        assert!(
            off_path_gap > 0.0 && off_path_gap.is_finite(),
            "{off_path_gap}"
        );
    }

    #[test]
    fn fast_mode_runs_a_full_pass_when_the_data_doubles() {
        let (x, y) = regression_data(900, 3, 5);
        let p = pool(1).expect("pool");
        let mut fast = regressor(PosteriorMode::Fast);
        let mut exact = regressor(PosteriorMode::Exact);
        for model in [&mut fast, &mut exact] {
            let (x0, y0) = (x.slice(s![..400, ..]), y.slice(s![..400]));
            model
                .fit(
                    &x0,
                    &y0,
                    None,
                    &growing(3, &p, &Interrupt::default()),
                    |_| Ok(()),
                )
                .expect("fit");
            for start in (400..900).step_by(100) {
                let (xs, ys) = (
                    x.slice(s![start..start + 100, ..]),
                    y.slice(s![start..start + 100]),
                );
                model.partial_fit(&xs, &ys, None, &p).expect("update");
            }
        }
        // 900 ≥ 2 · 400: the last update left the fast model stale, so it is recomputed exactly.
        assert!(!fast.posterior_is_fresh());
        fast.ensure_posterior(&p).expect("pass");
        exact.ensure_posterior(&p).expect("pass");
        let probes = regression_data(50, 3, 9).0;
        let (mf, vf) = fast.predict(&probes.view(), &p).expect("predict");
        let (me, ve) = exact.predict(&probes.view(), &p).expect("predict");
        assert_eq!(mf, me);
        assert_eq!(vf, ve);
    }
}
