//! The predictive distribution of a fitted [`ForestRegressor`] at many points: mean and
//! variance (AISTATS 2016, eq. 4–5), exact quantiles and log densities of the equal-weight
//! mixture over trees of each tree's branch-off mixture ([`super::predict`]).

use super::predict::{mixture_quantile, routed_components, Component, LogDensityFold, MomentsFold};
use super::regression::{check_targets, ForestRegressor};
use crate::error::{Error, Result};
use crate::tree::route::{route_group, RouteScratch, GROUP};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use rayon::ThreadPool;

impl ForestRegressor {
    /// Predictive mean and variance at each row of `x` (eq. 4–5).
    pub fn predict(
        &self,
        x: &ArrayView2<f64>,
        pool: &ThreadPool,
    ) -> Result<(Array1<f64>, Array1<f64>)> {
        let mut out = vec![(0.0, 0.0); x.nrows()];
        let reference = self.prior()?.mean;
        self.for_each_mixture(
            x,
            pool,
            &mut out,
            MomentsFold::new(reference),
            |acc, c, _| acc.add(c),
            |acc, m| acc.finish(m),
        )?;
        let (mean, var): (Vec<f64>, Vec<f64>) = out.into_iter().unzip();
        Ok((Array1::from(mean), Array1::from(var)))
    }

    /// Quantiles `levels` (each in (0, 1)) of the predictive mixture at each row: N × L.
    pub fn quantiles(
        &self,
        x: &ArrayView2<f64>,
        levels: &[f64],
        pool: &ThreadPool,
    ) -> Result<Array2<f64>> {
        if levels.iter().any(|q| !(*q > 0.0 && *q < 1.0)) {
            return Err(Error::InvalidInput(
                "quantile levels must lie strictly between 0 and 1".into(),
            ));
        }
        let mut out = vec![Vec::new(); x.nrows()];
        self.for_each_mixture(
            x,
            pool,
            &mut out,
            Vec::<Component>::new(),
            |acc, c, _| acc.push(*c),
            |acc, m| {
                levels
                    .iter()
                    .map(|&q| mixture_quantile(&acc, m, q))
                    .collect::<Vec<f64>>()
            },
        )?;
        Array2::from_shape_vec((x.nrows(), levels.len()), out.concat())
            .map_err(|e| Error::InvalidInput(e.to_string()))
    }

    /// log p(y_i | x_i) under the forest's predictive mixture, for each row.
    pub fn log_density(
        &self,
        x: &ArrayView2<f64>,
        y: &ArrayView1<f64>,
        pool: &ThreadPool,
    ) -> Result<Array1<f64>> {
        check_targets(x, y)?;
        let y = y.as_standard_layout();
        let targets = y.as_slice().unwrap_or(&[]);
        let mut out = vec![0.0; x.nrows()];
        self.for_each_mixture(
            x,
            pool,
            &mut out,
            LogDensityFold::default(),
            |acc, c, i| acc.add(c, targets[i]),
            |acc, m| acc.finish(m),
        )?;
        Ok(Array1::from(out))
    }

    /// Folds every tree's components at each row `i` of `x` into an accumulator (`fold(acc,
    /// component, i)`, starting from `init`) and stores `finish(acc, M)`.
    ///
    /// Within a block of rows the loop runs tree by tree, so one tree's nodes stay in cache
    /// while all the block's points walk it; each row still sees trees and components in the
    /// same order, so results do not depend on the number of threads.
    fn for_each_mixture<A: Clone + Send + Sync, T: Send>(
        &self,
        x: &ArrayView2<f64>,
        pool: &ThreadPool,
        out: &mut [T],
        init: A,
        fold: impl Fn(&mut A, &Component, usize) + Sync,
        finish: impl Fn(A, usize) -> T + Sync,
    ) -> Result<()> {
        let prior = self.prior()?;
        let d = self.forest.n_features;
        let m = self.forest.trees.len();
        let lifetime = self.forest.params.lifetime;
        self.forest
            .for_each_query_block(x, pool, out, 1, |first, out, rows| {
                let mut comps = Vec::new();
                let mut scratches = vec![RouteScratch::default(); GROUP];
                let mut acc = vec![init.clone(); out.len()];
                for (tree, post) in self.forest.trees.iter().zip(&self.posteriors) {
                    let groups = acc.chunks_mut(GROUP).zip(rows.chunks(GROUP * d));
                    for (g, (accs, group)) in groups.enumerate() {
                        route_group(tree, group, d, &mut scratches);
                        for (k, (a, scratch)) in accs.iter_mut().zip(&scratches).enumerate() {
                            comps.clear();
                            routed_components(tree, post, &prior, lifetime, scratch, &mut comps);
                            for c in &comps {
                                fold(a, c, first + g * GROUP + k);
                            }
                        }
                    }
                }
                for (o, a) in out.iter_mut().zip(acc) {
                    *o = finish(a, m);
                }
            })
    }
}
