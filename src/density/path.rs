//! The density's lifetime path (Balog's report §4.1, Fig. 4.2): the log-likelihood of points
//! under the forest pruned at every λ of a grid, for one walk per point and tree.

use super::{check_row_weights, DensityForest, DensityTree, NONE};
use crate::error::{Error, Result};
use crate::parallel::for_each_point_block;
use crate::points::Points;
use rayon::ThreadPool;

impl DensityForest {
    /// The lifetime path (Balog's report §4.1): at each of `lifetimes` (ascending, within
    /// [0, Λ]) the weighted mean over the rows of `x` inside the box of the log posterior mean
    /// density of the forest pruned at that λ, and the share of rows outside the box (density
    /// 0, left out of the means). Pruning keeps a node's posterior share (it depends on its
    /// depth, its cut and the counts below it, not on λ), so a row's log density in one tree is
    /// a step function of λ with a step at each cut time on its path: the whole path costs one
    /// walk per row and tree. With `leave_one_out`, `x` must be the training rows with their
    /// weights: each row's own weight is taken out of the counts on its path.
    pub fn lifetime_path<P: Points>(
        &self,
        x: &P,
        weights: Option<&[f64]>,
        lifetimes: &[f64],
        leave_one_out: bool,
        pool: &ThreadPool,
    ) -> Result<(Vec<f64>, f64)> {
        let ascending = lifetimes.windows(2).all(|w| w[0] <= w[1]);
        let within = lifetimes.iter().all(|l| (0.0..=self.lifetime).contains(l));
        if lifetimes.is_empty() || !(ascending && within) {
            return Err(Error::InvalidInput(format!(
                "the path needs one or more lifetimes, ascending within [0, {}] (the fitted \
                 lifetime)",
                self.lifetime
            )));
        }
        self.check_rows(x)?;
        check_row_weights(x.n_rows(), weights)?;
        let weight = |i: usize| weights.map_or(1.0, |w| w[i]);
        let own = |i: usize| if leave_one_out { weight(i) } else { 0.0 };
        let values = self.row_paths(x, own, lifetimes, pool);
        let d = self.n_features();
        let mut inside = vec![false; x.n_rows()];
        for_each_point_block(pool, &mut inside, 1, x, None, |_, out, rows| {
            for (o, row) in out.iter_mut().zip(rows.chunks_exact(d)) {
                *o = self.contains(row);
            }
        });
        // Summed in row order: the same numbers for any number of threads.
        let k = lifetimes.len();
        let (mut sums, mut total, mut outside) = (vec![0.0; k], 0.0, 0.0);
        for (i, row) in values.chunks_exact(k).enumerate() {
            if !inside[i] {
                outside += weight(i);
                continue;
            }
            total += weight(i);
            sums.iter_mut()
                .zip(row)
                .for_each(|(s, v)| *s += weight(i) * v);
        }
        let means = sums
            .iter()
            .map(|s| s / total.max(f64::MIN_POSITIVE))
            .collect();
        Ok((means, outside / (total + outside).max(f64::MIN_POSITIVE)))
    }

    /// Per row of `x` (checked) and each of `lifetimes` (ascending, ≤ Λ): the log of the
    /// forest's posterior mean density pruned there, with `own(i)` of row i's weight taken out
    /// of the counts on its paths; −∞ outside the box (n × K, row-major).
    pub(super) fn row_paths<P: Points>(
        &self,
        x: &P,
        own: impl Fn(usize) -> f64 + Sync,
        lifetimes: &[f64],
        pool: &ThreadPool,
    ) -> Vec<f64> {
        let (d, k) = (self.n_features(), lifetimes.len());
        let m = self.trees.len().max(1) as f64;
        let mut values = vec![0.0; x.n_rows() * k];
        for_each_point_block(pool, &mut values, k, x, None, |first, out, rows| {
            let mut per_tree = vec![0.0; self.trees.len() * k];
            let rows = out.chunks_exact_mut(k).zip(rows.chunks_exact(d));
            for (i, (out, row)) in rows.enumerate() {
                if !self.contains(row) {
                    out.fill(f64::NEG_INFINITY);
                    continue;
                }
                for (tree, steps) in self.trees.iter().zip(per_tree.chunks_exact_mut(k)) {
                    self.tree_path(tree, row, own(first + i), lifetimes, steps);
                }
                for (c, value) in out.iter_mut().enumerate() {
                    let column = per_tree.iter().skip(c).step_by(k);
                    let top = column.clone().copied().fold(f64::NEG_INFINITY, f64::max);
                    *value = top + (column.map(|v| (v - top).exp()).sum::<f64>() / m).ln();
                }
            }
        });
        values
    }

    /// Tree `tree`'s log density at `x` pruned at each of `lifetimes` (ascending) into
    /// `out`, with `own` of the weight taken out of the counts on the path (leave-one-out).
    fn tree_path(
        &self,
        tree: &DensityTree,
        x: &[f64],
        own: f64,
        lifetimes: &[f64],
        out: &mut [f64],
    ) {
        let (mut walk, mut next) = (self.walk(), 0usize);
        loop {
            let cut = tree.nodes[walk.node];
            // The walk's node is the leaf for every checkpoint before its cut time.
            while next < lifetimes.len() && lifetimes[next] < cut.tau {
                out[next] = walk.log_mass - walk.log_volume;
                next += 1;
            }
            if cut.dim == NONE || next == lifetimes.len() {
                return;
            }
            let lower = x[cut.dim as usize] <= cut.threshold;
            let share = self.share(tree, &walk, &cut, (lower, own));
            walk.descend(&cut, lower, share);
        }
    }
}
