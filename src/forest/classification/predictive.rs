//! The predictive class distribution of a Mondrian forest classifier (NIPS 2014, §4): in each
//! tree, the mixture over where the test point may branch off its path
//! ([`crate::mondrian::branch_off`]) of the new block's posterior mean, plus the leaf's
//! posterior mean with the weight left; the forest averages its trees.
//!
//! Node posterior means are computed once for all nodes after a fit and read here; after
//! online updates they are computed along each prediction's path ([`path_means`], the same
//! operations); the smoothing counts of a node above which the point branches off are
//! computed when needed. The block born above path node j uses j's smoothing counts, j's
//! prior mean (its parent's posterior mean) as base, and the expected discount over its birth
//! time, as the authors' code does, with one difference: its tables are the expected number for that discount
//! ([`branch_off_mean`]) instead of one per class. Far from the data the point branches off
//! above the root with an expected discount near 1, and the prediction falls back smoothly
//! to the uniform prior; with one table per class it would stop at `(c_root − t + T/K) / C`
//! (on the four poster sets the two rules' accuracy and log loss agree to 4 digits:
//! `benches/RESULTS.md`).
//!
//! Every discount is at least `min_discount` (our addition): with an infinite lifetime a
//! leaf's discount exp(−γ · ∞) is 0, so a pure leaf predicts exact 0/1 probabilities (an
//! infinite log loss for any point it misclassifies); with the floor every node passes a
//! little of its mass to its parent's distribution, down from the uniform base at the root,
//! so every class keeps a positive probability.

use super::smoothing::{branch_off_mean, ikn_counts, path_means};
use super::ForestClassifier;
use crate::error::{Error, Result};
use crate::mondrian::branch_off::branch_off_walk;
use crate::mondrian::route::{route_group, RouteScratch, GROUP};
use crate::points::Points;
use ndarray::Array2;
use rayon::ThreadPool;

impl ForestClassifier {
    /// Class probabilities at each row of `x` (N × K, rows summing to 1): the trees' average,
    /// sharpened by τ.
    pub fn predict_proba<P: Points>(&self, x: &P, pool: &ThreadPool) -> Result<Array2<f64>> {
        let k = self.n_classes;
        let mut out = vec![0.0; x.n_rows() * k];
        self.fold_proba(x, pool, &mut out)?;
        let m = self.forest.trees.len() as f64;
        out.iter_mut().for_each(|v| *v /= m);
        super::sharpness::sharpen_rows(&mut out, k, self.sharpness);
        Array2::from_shape_vec((x.n_rows(), k), out).map_err(|e| Error::InvalidInput(e.to_string()))
    }

    /// Adds every tree's class distribution at each row of `x` to `sums` (N × K, row-major):
    /// a forest whose trees live in several processes is folded one part after another, in
    /// tree order, and divided once by the total number of trees — the same floating-point
    /// operations, in the same order, as [`Self::predict_proba`] on the whole forest.
    pub fn fold_proba<P: Points>(&self, x: &P, pool: &ThreadPool, sums: &mut [f64]) -> Result<()> {
        if sums.len() != x.n_rows() * self.n_classes {
            return Err(Error::InvalidInput(format!(
                "{} running sums for {} rows of {} classes",
                sums.len(),
                x.n_rows(),
                self.n_classes
            )));
        }
        let (k, d) = (self.n_classes, self.forest.n_features);
        let (rate, floor) = (self.discount_rate, self.min_discount);
        let fresh = self.means_are_fresh();
        let no_means = Vec::new();
        let trees = (self.forest.trees.iter().zip(&self.counts).enumerate())
            .map(|(t, (tree, counts))| (tree, counts, self.means.get(t).unwrap_or(&no_means)));
        self.forest
            .for_each_query_block(x, pool, sums, k, |_, out, rows| {
                let uniform = vec![1.0 / k as f64; k];
                let mut scratches = vec![RouteScratch::default(); GROUP];
                let (mut c, mut component) = (vec![0.0; k], vec![0.0; k]);
                let mut along = Vec::new();
                for (tree, counts, means) in trees.clone() {
                    let groups = out.chunks_mut(GROUP * k).zip(rows.chunks(GROUP * d));
                    for (probs, group) in groups {
                        route_group(tree, group, d, &mut scratches);
                        for (p, scratch) in probs.chunks_exact_mut(k).zip(&scratches) {
                            let path = &scratch.path;
                            if !fresh {
                                let rates = (rate, floor);
                                path_means(
                                    tree, counts, k, rates, path, &uniform, &mut c, &mut along,
                                );
                            }
                            // The mean of path node i: stored, or computed along the path.
                            let mean = |i: usize| {
                                if fresh {
                                    let j = path[i] as usize;
                                    &means[j * k..(j + 1) * k]
                                } else {
                                    &along[i * k..(i + 1) * k]
                                }
                            };
                            let mut at = 0;
                            let (_, keep) = branch_off_walk(tree, scratch, |event| {
                                while path[at] != event.node {
                                    at += 1;
                                }
                                ikn_counts(tree, counts, k, event.node, &mut c);
                                let base = if at == 0 { &uniform } else { mean(at - 1) };
                                let discount = event.expected_discount(rate).max(floor);
                                branch_off_mean(&c, discount, base, &mut component);
                                for (pk, ck) in p.iter_mut().zip(&component) {
                                    *pk += event.weight * ck;
                                }
                            });
                            if keep > 0.0 && !path.is_empty() {
                                let leaf = mean(path.len() - 1);
                                p.iter_mut().zip(leaf).for_each(|(pk, lk)| *pk += keep * lk);
                            }
                        }
                    }
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forest::classification::counts::tree_counts;
    use crate::forest::weights::RowWeights;
    use crate::forest::MondrianForest;
    use crate::mondrian::guided::Guidance;
    use crate::mondrian::{MondrianTree, TreeParams, NONE};
    use crate::parallel::pool;
    use crate::rng::tree_rng;
    use ndarray::Array2;

    /// One cut at x = 0.5 born at τ = 1; leaf 1 holds x = 0.1, 0.3 (classes 0, 0), leaf 2 holds
    /// x = 0.7, 0.9 (classes 0, 1); lifetime ∞, γ = 2.
    fn hand_built() -> ForestClassifier {
        let x = Array2::from_shape_vec((4, 1), vec![0.1, 0.3, 0.7, 0.9]).expect("shape");
        let mut forest = MondrianForest::new(TreeParams::new(f64::INFINITY, 2), 1, 0).expect("ok");
        forest.add_points(&x.view()).expect("finite");
        let mut tree = MondrianTree::empty(1, tree_rng(0, 0));
        let root = tree.push_node(NONE);
        let (left, right) = (tree.push_node(root), tree.push_node(root));
        tree.root = root;
        tree.samples.data.extend([0, 1, 2, 3]);
        for (j, lo, hi, n, start) in [
            (root, 0.1, 0.9, 4, 0),
            (left, 0.1, 0.3, 2, 0),
            (right, 0.7, 0.9, 2, 2),
        ] {
            tree.boxes_mut(j, 1).copy_from_slice(&[lo, hi]);
            tree.nodes[j as usize].n_samples = n;
            if j != root {
                tree.samples.set_range(j, start, 2);
            }
        }
        let r = &mut tree.nodes[root as usize];
        (r.dim, r.threshold, r.tau, r.left, r.right) = (0, 0.5, 1.0, left, right);
        let labels = vec![0, 0, 0, 1];
        assert!(tree.is_consistent(4, &forest.params));
        let mut model = ForestClassifier::new(forest, 2, (2.0, 0.0), Guidance::NONE);
        model.counts = vec![tree_counts(&tree, (&labels, &RowWeights::default()), 2)];
        model.forest.trees = vec![tree];
        model.labels = labels;
        assert!(model.is_consistent());
        model.ensure_means(&pool(1).expect("pool"));
        model
    }

    /// The predictive against the IKN formulas written out for this tree.
    #[test]
    fn predictions_match_a_direct_computation() {
        let model = hand_built();
        let p = pool(1).expect("pool");
        let at = |x: f64| -> Vec<f64> {
            let x = Array2::from_elem((1, 1), x);
            model
                .predict_proba(&x.view(), &p)
                .expect("predict")
                .row(0)
                .to_vec()
        };
        let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(u, v)| (u - v).abs() < 1e-14);
        let gamma: f64 = 2.0;
        // Root: c = min(n_L, 1) + min(n_R, 1) = (2, 1), d = e^{−2}, uniform base → c / C.
        let root = [2.0 / 3.0, 1.0 / 3.0];
        // Inside leaf 1: no branch-off; its discount is 0 (λ = ∞): its own counts.
        assert!(close(&at(0.2), &[1.0, 0.0]));
        // Between the leaves (η = 0.1 from leaf 2, whose life is infinite): the block born
        // above leaf 2 for sure, with leaf 2's counts (1, 1) and d̄ = η / (η + γ).
        let eta = 0.1;
        let d = eta / (eta + gamma);
        let between = [
            (1.0 - d + d * 2.0 * root[0]) / 2.0,
            (1.0 - d + d * 2.0 * root[1]) / 2.0,
        ];
        assert!(close(&at(0.6), &between));
        // Far right (η = 4.1 at both nodes): above the root with probability 1 − e^{−η·1}
        // (counts (2, 1), base uniform), else above leaf 2 as before.
        let eta: f64 = 4.1;
        let p_root = 1.0 - (-eta).exp();
        let d_root = eta / (eta + gamma) * (-(-(eta + gamma)).exp_m1()) / (-(-eta).exp_m1());
        // Expected tables of the root's counts (2, 1): (1 + d, 1), T = 2 + d.
        let tables = 2.0 + d_root;
        let above_root = [
            (2.0 - d_root * (1.0 + d_root) + d_root * tables * 0.5) / 3.0,
            (1.0 - d_root + d_root * tables * 0.5) / 3.0,
        ];
        let d_leaf = eta / (eta + gamma);
        let above_leaf = [
            (1.0 - d_leaf + d_leaf * 2.0 * root[0]) / 2.0,
            (1.0 - d_leaf + d_leaf * 2.0 * root[1]) / 2.0,
        ];
        let want: Vec<f64> = (0..2)
            .map(|c| p_root * above_root[c] + (1.0 - p_root) * above_leaf[c])
            .collect();
        assert!(close(&at(5.0), &want));
        for v in [0.2, 0.6, 5.0, -3.0, 1e6] {
            assert!((at(v).iter().sum::<f64>() - 1.0).abs() < 1e-14);
        }
    }
}
