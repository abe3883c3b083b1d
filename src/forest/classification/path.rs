//! The classification forest's lifetime path ([`crate::forest::lifetime_path`]). At lifetime λ
//! each tree of the pruned forest predicts, at the leaf a point falls in, its training class
//! frequencies smoothed towards its parent's prediction by one pseudo-count,
//! `p_j = (n_j + κ p_parent) / (|n_j| + κ)`, κ = 1, the root's towards the uniform
//! distribution (a hierarchical Dirichlet smoothing in the spirit of the NIPS 2014 one). The
//! forest averages the trees. Scores: [log loss, accuracy] (ties go to the lowest class index,
//! as `numpy.argmax`).
//!
//! This is not the forest's predictive: its discounts exp(−γ(λ − τ_parent)) at the leaves move
//! with λ, and its counts at a node change when the node is cut. A node's smoothed frequencies
//! here depend on its own points and its ancestors' only, so a cut changes its points'
//! predictions and nothing else, which is what makes the whole path cost one sweep.

use super::ForestClassifier;
use crate::error::Result;
use crate::forest::lifetime_path::{sweep, PathPoint, PathState, Validation};
use crate::forest::weights::RowWeights;
use crate::mondrian::birth_order::Checkpoints;
use crate::mondrian::MondrianTree;
use crate::parallel::Interrupt;
use rayon::prelude::*;
use rayon::ThreadPool;

/// Pseudo-count of the smoothing towards the parent.
const KAPPA: f64 = 1.0;

/// Every node's smoothed class frequencies (n_nodes × K), parents first.
fn node_frequencies(tree: &MondrianTree, counts: &[f64], k: usize) -> Vec<f64> {
    let mut p = vec![0.0; counts.len()];
    let mut base = vec![0.0; k];
    for j in tree.preorder() {
        let j = j as usize;
        match tree.parent[j] {
            crate::mondrian::NONE => base.fill(1.0 / k as f64),
            parent => base.copy_from_slice(&p[parent as usize * k..(parent as usize + 1) * k]),
        }
        let c = &counts[j * k..(j + 1) * k];
        let n = c.iter().sum::<f64>();
        for ((out, &c), b) in p[j * k..(j + 1) * k].iter_mut().zip(c).zip(&base) {
            *out = (c + KAPPA * b) / (n + KAPPA);
        }
    }
    p
}

/// One point set's forest class probabilities along the path.
struct FrequencyPath<'a> {
    /// Per tree, every node's smoothed frequencies (n_nodes × K).
    frequencies: &'a [Vec<f64>],
    k: usize,
    labels: Vec<u32>,
    /// The points' row weights in the scores.
    weights: &'a RowWeights,
    /// Per point: Σ over trees of the class probabilities (N × K).
    sum: Vec<f64>,
}

impl PathState for FrequencyPath<'_> {
    fn moved(&mut self, point: u32, tree: usize, from: u32, to: u32) {
        let k = self.k;
        let p = &self.frequencies[tree];
        let (old, new) = (
            &p[from as usize * k..(from as usize + 1) * k],
            &p[to as usize * k..(to as usize + 1) * k],
        );
        let sum = &mut self.sum[point as usize * k..(point as usize + 1) * k];
        for ((s, o), n) in sum.iter_mut().zip(old).zip(new) {
            *s += n - o;
        }
    }

    fn scores(&self) -> [f64; 2] {
        let m = self.frequencies.len() as f64;
        let (mut loss, mut correct) = (0.0, 0.0);
        let points = self.sum.chunks_exact(self.k).zip(&self.labels).enumerate();
        for (i, (row, &label)) in points {
            let w = self.weights.of(i as u32);
            loss -= w * (row[label as usize] / m).ln();
            let best = (row.iter().enumerate()).fold((0, f64::NEG_INFINITY), |b, (c, &v)| {
                if v > b.1 {
                    (c, v)
                } else {
                    b
                }
            });
            if best.0 == label as usize {
                correct += w;
            }
        }
        let n = match self.weights.total(self.labels.len()) {
            total if total > 0.0 => total,
            _ => 1.0,
        };
        [loss / n, correct / n]
    }
}

impl ForestClassifier {
    /// The lifetime path of the smoothed-frequency forest (module docs) on the training points
    /// and, when given, validation points with class indices `labels`; `progress(done, total)`
    /// at each checkpoint.
    pub fn lifetime_path(
        &self,
        validation: Option<Validation<'_, u32>>,
        checkpoints: &Checkpoints,
        pool: &ThreadPool,
        interrupt: &Interrupt,
        progress: impl FnMut(usize, usize) -> Result<()>,
    ) -> Result<Vec<PathPoint>> {
        self.forest.check_fitted()?;
        let (k, trees) = (self.n_classes, &self.forest.trees);
        let held_out = match validation {
            Some((x, labels, weights)) => {
                self.check_labels(x.n_rows(), labels, weights)?;
                let weights = RowWeights::checked(x.n_rows(), weights)?;
                Some((self.forest.apply(&x, pool)?, labels.to_vec(), weights))
            }
            None => None,
        };
        let frequencies: Vec<Vec<f64>> = pool.install(|| {
            (trees.par_iter().zip(&self.counts))
                .map(|(tree, counts)| node_frequencies(tree, counts, k))
                .collect()
        });
        let mut roots = vec![0.0; k];
        for (tree, p) in trees.iter().zip(&frequencies) {
            let root = tree.root as usize;
            for (s, v) in roots.iter_mut().zip(&p[root * k..(root + 1) * k]) {
                *s += v;
            }
        }
        let state = |labels: Vec<u32>, weights| FrequencyPath {
            frequencies: &frequencies,
            k,
            sum: roots.repeat(labels.len()),
            labels,
            weights,
        };
        let validation = (held_out.as_ref()).map(|(leaves, labels, weights)| {
            (
                state(labels.clone(), weights),
                leaves.as_slice().unwrap_or(&[]),
            )
        });
        sweep(
            trees,
            state(self.labels.clone(), &self.weights),
            validation,
            self.forest.params.lifetime,
            checkpoints,
            pool,
            interrupt,
            progress,
        )
    }
}
