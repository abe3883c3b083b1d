//! The regression forest's lifetime path ([`crate::forest::lifetime_path`]). At lifetime λ each
//! tree of the pruned forest predicts the mean target of its leaf's training points (a random
//! forest's leaf means), and the forest the Gaussian N(m, σ_y² + s²): m and s² the mean and
//! variance of the M trees' predictions, σ_y² the noise variance of the prior in use. Scores:
//! [mean squared error, mean negative log predictive density].
//!
//! This is not the forest's hierarchical predictive: there a cut changes the posterior of every
//! node of its tree, and a leaf's prior variance γ₁(σ(γ₂λ) − σ(γ₂τ_parent)) moves with λ
//! itself. Leaf means depend only on the leaf's points, so a cut changes its points'
//! predictions and nothing else, which is what makes the whole path cost one sweep.

use super::leaf_stats::LeafStats;
use super::ForestRegressor;
use crate::error::Result;
use crate::forest::lifetime_path::{sweep, PathPoint, PathState, Validation};
use crate::forest::weights::RowWeights;
use crate::mondrian::birth_order::Checkpoints;
use crate::mondrian::MondrianTree;
use crate::parallel::Interrupt;
use rayon::prelude::*;
use rayon::ThreadPool;
use std::f64::consts::PI;

/// One point set's forest predictions along the path, in standardised target units (the
/// training mean subtracted, divided by the training standard deviation) so that the sums of
/// squares below do not cancel for targets far from 0.
struct MeanPath<'a> {
    /// Per tree, every node's mean target (standardised).
    means: &'a [Vec<f64>],
    y: Vec<f64>,
    /// The points' weights in the scores (row weights, as given for validation).
    weights: &'a RowWeights,
    /// Per point: Σ over trees of the prediction, and of its square.
    sum: Vec<f64>,
    sum_sq: Vec<f64>,
    scale: f64,
    noise_variance: f64,
}

impl<'a> MeanPath<'a> {
    fn new(
        means: &'a [Vec<f64>],
        (y, weights): (Vec<f64>, &'a RowWeights),
        roots: (f64, f64),
        scale: f64,
        noise: f64,
    ) -> Self {
        let n = y.len();
        Self {
            means,
            y,
            weights,
            sum: vec![roots.0; n],
            sum_sq: vec![roots.1; n],
            scale,
            noise_variance: noise,
        }
    }
}

impl PathState for MeanPath<'_> {
    fn moved(&mut self, point: u32, tree: usize, from: u32, to: u32) {
        let (old, new) = (
            self.means[tree][from as usize],
            self.means[tree][to as usize],
        );
        let i = point as usize;
        self.sum[i] += new - old;
        self.sum_sq[i] += new * new - old * old;
    }

    fn scores(&self) -> [f64; 2] {
        let m = self.means.len() as f64;
        let s2 = self.scale * self.scale;
        let (mut squares, mut nlpd) = (0.0, 0.0);
        let points = self.y.iter().zip(&self.sum).zip(&self.sum_sq).enumerate();
        for (i, ((y, sum), sum_sq)) in points {
            let w = self.weights.of(i as u32);
            let mean = sum / m;
            let spread = (sum_sq / m - mean * mean).max(0.0);
            let var = self.noise_variance + s2 * spread;
            let error = s2 * (mean - y).powi(2);
            squares += w * error;
            nlpd += w * (0.5 * ((2.0 * PI * var).ln() + error / var));
        }
        let n = match self.weights.total(self.y.len()) {
            total if total > 0.0 => total,
            _ => 1.0,
        };
        [squares / n, nlpd / n]
    }
}

/// Every node's (weighted) mean target, standardised by `centre`, `scale`, from the leaves'
/// sums.
fn node_means(tree: &MondrianTree, leaves: &LeafStats, centre: f64, scale: f64) -> Vec<f64> {
    let node = leaves.subtree_totals(tree);
    (0..tree.n_nodes())
        .map(|j| (node.sum[j] / node.count(j) - centre) / scale)
        .collect()
}

impl ForestRegressor {
    /// The lifetime path of the leaf-mean forest (module docs) on the training points and,
    /// when given, validation points, with σ_y² of the prior in use; `progress(done, total)`
    /// at each checkpoint.
    pub fn lifetime_path(
        &self,
        validation: Option<Validation<'_, f64>>,
        checkpoints: &Checkpoints,
        pool: &ThreadPool,
        interrupt: &Interrupt,
        progress: impl FnMut(usize, usize) -> Result<()>,
    ) -> Result<Vec<PathPoint>> {
        let noise = self.prior()?.noise_variance;
        let centre = self.target_stats.mean;
        let scale = match self.target_stats.variance().sqrt() {
            s if s > 0.0 && s.is_finite() => s,
            _ => 1.0,
        };
        let trees = &self.forest.trees;
        let held_out = match validation {
            Some((x, y, weights)) => {
                crate::training_data::check_targets(x.n_rows(), y)?;
                let weights = RowWeights::checked(x.n_rows(), weights)?;
                Some((self.forest.apply(&x, pool)?, y, weights))
            }
            None => None,
        };
        let means: Vec<Vec<f64>> = pool.install(|| {
            (trees.par_iter().zip(&self.leaf_stats))
                .map(|(tree, stats)| node_means(tree, stats, centre, scale))
                .collect()
        });
        let roots = (trees.iter().zip(&means)).fold((0.0, 0.0), |(s, q), (tree, means)| {
            let v = means[tree.root as usize];
            (s + v, q + v * v)
        });
        let standardise =
            |y: &[f64]| -> Vec<f64> { y.iter().map(|v| (v - centre) / scale).collect() };
        let train_points = (standardise(&self.y), &self.weights);
        let train = MeanPath::new(&means, train_points, roots, scale, noise);
        let validation = held_out.as_ref().map(|(leaves, y, weights)| {
            let y: Vec<f64> = y.iter().map(|v| (v - centre) / scale).collect();
            let state = MeanPath::new(&means, (y, weights), roots, scale, noise);
            (state, leaves.as_slice().unwrap_or(&[]))
        });
        let max_lifetime = self.forest.params.lifetime;
        sweep(
            trees,
            train,
            validation,
            max_lifetime,
            checkpoints,
            pool,
            interrupt,
            progress,
        )
    }
}
