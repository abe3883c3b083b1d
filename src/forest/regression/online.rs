//! Online updates of the regression forest: the trees grow by the conditional Mondrian (or are
//! refitted on every row: [`crate::forest::refit`]), the changed leaves' statistics are
//! refreshed, and the posterior's likelihoods are updated along the new points' paths (exact,
//! O(depth) per point and tree). The prior's hyper-parameters
//! are chosen again whenever the number of rows has doubled since the last choice (then one
//! full pass, O(nodes): amortised O(1) per row).

use super::belief::update_likelihoods;
use super::{checked_stats, policy, ForestRegressor};
use crate::error::{string_options, Result};
use crate::parallel::is_small;
use crate::points::Points;
use ndarray::ArrayView1;
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// The growth of the number of rows after which the prior is chosen again: a constant factor,
/// so the full passes it costs add up to O(1) per row over a stream.
pub const PRIOR_GROWTH: usize = 2;

/// How `partial_fit` brought the posterior up to date in earlier versions; both names now
/// give the exact posterior in O(depth) per new point (kept so stored models and the
/// estimators' parameter keep their meaning).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PosteriorMode {
    #[default]
    Exact,
    Fast,
}

string_options!(PosteriorMode, "posterior", ["exact" => Exact, "fast" => Fast]);

impl ForestRegressor {
    /// Online update: extends every tree with the new points (conditional Mondrian), then
    /// updates the posterior's likelihoods on their paths, or — when the rows have grown by
    /// [`PRIOR_GROWTH`] since the prior was chosen — leaves the prior to be chosen again
    /// (`ensure_posterior`). Everything is checked before anything changes.
    pub fn partial_fit<P: Points>(
        &mut self,
        x: &P,
        y: &ArrayView1<f64>,
        weights: Option<&ArrayView1<f64>>,
        pool: &ThreadPool,
    ) -> Result<()> {
        let stats = checked_stats(&self.target_stats, x.n_rows(), y, weights)?;
        self.routes.clear();
        let rows = self.forest.add_online_points(x)?;
        self.target_stats = stats;
        self.weights.append(self.y.len(), y.len(), weights);
        self.y.extend(y.iter());
        let guidance = (self.guidance).bounded(self.y.len(), self.forest.n_features);
        let rule = policy((&self.y, &self.weights), &self.target_stats, guidance);
        let update = self.forest.extend_or_refit(rows, &rule, pool)?;
        self.refresh_leaf_stats(&update.changed, pool);
        if self.prior_is_due() {
            self.prior = None;
        } else if update.refitted {
            self.posteriors.clear(); // new trees: computed under the prior before predicting
        } else if self.posteriors.len() == self.forest.trees.len() {
            self.update_likelihoods(&update.changed, pool);
        }
        Ok(())
    }

    /// Whether the rows have grown by [`PRIOR_GROWTH`] since the prior was last chosen.
    pub fn prior_is_due(&self) -> bool {
        self.forest.n_rows() >= PRIOR_GROWTH * self.rows_at_prior_choice.max(1)
    }

    /// The number of rows when the prior in use was chosen.
    pub fn rows_at_prior_choice(&self) -> usize {
        self.rows_at_prior_choice
    }

    /// Every tree's likelihoods along the changed leaves' paths (a no-op without a prior).
    fn update_likelihoods(&mut self, changed: &[Vec<u32>], pool: &ThreadPool) {
        let Some(prior) = self.prior else {
            return;
        };
        let trees = &self.forest.trees;
        let stats = &self.leaf_stats;
        let update =
            |((post, tree), (stats, leaves)): (
                (&mut super::TreePosterior, &crate::mondrian::MondrianTree),
                (&super::LeafStats, &Vec<u32>),
            )| update_likelihoods(tree, stats, &prior, leaves, post, &mut Vec::new());
        let work = self.posteriors.iter_mut().zip(trees);
        if changed.iter().all(|c| is_small(c.len())) {
            work.zip(stats.iter().zip(changed)).for_each(update);
        } else {
            pool.install(|| {
                (self.posteriors.par_iter_mut().zip(trees.par_iter()))
                    .zip(stats.par_iter().zip(changed.par_iter()))
                    .for_each(update)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forest::regression::belief::tree_posterior;
    use crate::forest::regression::prior::{NoiseVariance, PriorOverrides};
    use crate::forest::MondrianForest;
    use crate::mondrian::TreeParams;
    use crate::parallel::{pool, Interrupt};
    use crate::testing::{growing, regression_data, uniform_array};
    use ndarray::s;

    fn regressor(overrides: PriorOverrides) -> ForestRegressor {
        let params = TreeParams::new(f64::INFINITY, 2);
        let forest = MondrianForest::new(params, 3, 11).expect("valid");
        let mut model = ForestRegressor::new(forest);
        model.overrides = overrides;
        model
    }

    fn fixed() -> PriorOverrides {
        PriorOverrides {
            mean: Some(0.3),
            gamma1: Some(1.5),
            gamma2: Some(0.8),
            noise_variance: NoiseVariance::Fixed(0.02),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-10 * (1.0 + a.abs().max(b.abs()))
    }

    /// After one-row updates (likelihoods updated on the paths, cavities recomputed along
    /// each prediction's path), predictions equal those of a from-scratch posterior on the
    /// same trees, inside and outside the data, and no update or prediction ran a full pass.
    #[test]
    fn incremental_posterior_is_the_from_scratch_one() {
        let (x, y) = regression_data(1000, 3, 3);
        let p = pool(2).expect("pool");
        let mut model = regressor(fixed());
        // 520 rows: the prior is not due again (at 1,040) within the stream.
        let (x0, y0) = (x.slice(s![..520, ..]), y.slice(s![..520]));
        let stop = Interrupt::default();
        let how = growing(4, &p, &stop);
        model.fit(&x0, &y0, None, &how, |_| Ok(())).expect("fit");
        let probes = uniform_array(60, 3, 9).mapv(|v| 1.6 * v - 0.3);
        // One row at a time, then chunks of 37 (several rows reaching one leaf, parents
        // inserted above both children of a node).
        let starts = (520..700).chain((700..1000).step_by(37));
        for i in starts {
            let end = if i < 700 { i + 1 } else { (i + 37).min(1000) };
            let (xi, yi) = (x.slice(s![i..end, ..]), y.slice(s![i..end]));
            model.partial_fit(&xi, &yi, None, &p).expect("update");
            assert!(
                model.posterior_is_fresh(),
                "no pass is needed before predicting"
            );
            assert!(!model.cavities_worth_refreshing(1));
            if i % 50 != 0 && i < 700 {
                continue;
            }
            let prior = model.prior().expect("prior");
            let mut scratch = model.clone();
            scratch.posteriors = (scratch.forest.trees.iter().zip(&scratch.leaf_stats))
                .map(|(tree, stats)| tree_posterior(tree, stats, &prior))
                .collect();
            let (m1, v1) = model.predict(&probes.view(), &p).expect("predict");
            let (m2, v2) = scratch.predict(&probes.view(), &p).expect("predict");
            for r in 0..probes.nrows() {
                assert!(close(m1[r], m2[r]) && close(v1[r], v2[r]), "{r}");
            }
            // A full downward pass gives the same stored messages.
            let mut refreshed = model.clone();
            refreshed.ensure_cavities(&p).expect("cavities");
            for (a, b) in refreshed.posteriors.iter().zip(&scratch.posteriors) {
                for (ma, mb) in a.messages.iter().zip(&b.messages) {
                    assert!(close(ma.cavity.mean, mb.cavity.mean));
                    assert!(close(ma.cavity.var, mb.cavity.var));
                    assert!(close(ma.from_below.mean, mb.from_below.mean));
                    assert!(close(ma.from_below.var, mb.from_below.var));
                }
            }
        }
    }

    /// The heuristic prior is chosen again when the rows have doubled since the last choice,
    /// and then equals the heuristic of a batch fit on the same rows.
    #[test]
    fn prior_is_chosen_again_when_the_rows_double() {
        let (x, y) = regression_data(40, 3, 5);
        let p = pool(1).expect("pool");
        let mut model = regressor(PriorOverrides::default());
        let stop = Interrupt::default();
        let how = growing(3, &p, &stop);
        let (x0, y0) = (x.slice(s![..1, ..]), y.slice(s![..1]));
        model.fit(&x0, &y0, None, &how, |_| Ok(())).expect("fit");
        let mut choices = vec![model.rows_at_prior_choice()];
        for i in 1..40 {
            let (xi, yi) = (x.slice(s![i..i + 1, ..]), y.slice(s![i..i + 1]));
            model.partial_fit(&xi, &yi, None, &p).expect("update");
            model.ensure_posterior(&p).expect("posterior");
            if *choices.last().expect("one") != model.rows_at_prior_choice() {
                choices.push(model.rows_at_prior_choice());
                let mut batch = regressor(PriorOverrides::default());
                let (xb, yb) = (x.slice(s![..i + 1, ..]), y.slice(s![..i + 1]));
                batch.fit(&xb, &yb, None, &how, |_| Ok(())).expect("fit");
                assert_eq!(batch.prior().expect("p"), model.prior().expect("p"));
            }
        }
        assert_eq!(choices, vec![1, 2, 4, 8, 16, 32]);
    }
}
