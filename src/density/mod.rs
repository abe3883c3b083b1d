//! Mondrian density estimation (Balog, *The Mondrian Process in Machine Learning*, ch. 2 and
//! appendix C). Each tree is a Mondrian process on a bounded box, instantiated in full —
//! empty regions too, since a density needs every cell's volume (the report's option 1) —
//! with a Pólya-tree prior on how each cut splits its block's probability mass: the lower
//! child's share ε ~ Beta(γ q (d+1)², γ (1 − q)(d+1)²), q its share of the block's volume
//! (the cut's position along the cut dimension), d the block's depth (root 0). Given the
//! training counts the shares are independent Beta–binomial posteriors, so the posterior mean
//! density at x is the product of the posterior mean shares along x's path, over the volume
//! of its leaf; the forest averages its M trees' densities.
//!
//! Cost: a Mondrian process with lifetime λ on a box with extents r_d has Π_d (1 + λ r_d)
//! cells in expectation, which grows as λ^D; [`DensityForest::sample`] refuses a forest whose
//! expected cells exceed the caller's budget (the estimator derives it from memory), and a
//! tree that outgrows it by chance is refused too — never silently truncated.

mod tree;

use crate::error::{Error, Result};
use crate::parallel::{for_each_row_block, Interrupt};
use crate::rng::{next_u64, tree_rng, uniform};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};
use tree::{tree_is_consistent, NONE};
pub use tree::{Cut, DensityTree};

/// M density trees on the box `[lower, upper]` with lifetime λ and prior strength γ.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DensityForest {
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    pub lifetime: f64,
    pub gamma: f64,
    pub trees: Vec<DensityTree>,
}

/// The posterior mean share of the lower child of a cut at `threshold` in `[a, b]` at depth
/// `depth` whose children hold `left` and `right` of the training weight (module docs).
#[inline]
fn lower_share(
    gamma: f64,
    (a, b): (f64, f64),
    threshold: f64,
    depth: u32,
    left: f64,
    right: f64,
) -> f64 {
    let strength = gamma * f64::from(depth + 1).powi(2);
    let q = (threshold - a) / (b - a);
    (strength * q + left) / (strength + left + right)
}

impl DensityForest {
    /// Samples `n_trees` trees on `[lower, upper]` (finite, lower < upper) with lifetime λ ≥ 0
    /// and prior strength γ > 0, each with at most `max_nodes` nodes, tree m from
    /// `tree_rng(seed, m)`.
    #[allow(clippy::too_many_arguments)]
    pub fn sample(
        lower: Vec<f64>,
        upper: Vec<f64>,
        (lifetime, gamma): (f64, f64),
        n_trees: usize,
        seed: u64,
        max_nodes: usize,
        pool: &ThreadPool,
        interrupt: &Interrupt,
    ) -> Result<Self> {
        let valid_box = !lower.is_empty()
            && lower.len() == upper.len()
            && lower
                .iter()
                .zip(&upper)
                .all(|(l, u)| l.is_finite() && u.is_finite() && l < u)
            && upper
                .iter()
                .zip(&lower)
                .map(|(u, l)| u - l)
                .sum::<f64>()
                .is_finite();
        if !valid_box {
            return Err(Error::InvalidInput(
                "the density's box needs finite bounds, lower < upper in every feature".into(),
            ));
        }
        if !(lifetime >= 0.0 && lifetime.is_finite() && gamma > 0.0 && gamma.is_finite()) {
            return Err(Error::InvalidInput(format!(
                "lifetime must be finite and ≥ 0 and gamma finite and > 0, got {lifetime}, {gamma}"
            )));
        }
        let trees: Vec<Option<Result<DensityTree>>> = pool.install(|| {
            (0..n_trees as u64)
                .into_par_iter()
                .map(|m| {
                    (!interrupt.is_requested()).then(|| {
                        let tree_seed = next_u64(&mut tree_rng(seed, m));
                        DensityTree::sample(&lower, &upper, lifetime, max_nodes, tree_seed)
                    })
                })
                .collect()
        });
        interrupt.check()?;
        let trees = trees.into_iter().flatten().collect::<Result<Vec<_>>>()?;
        Ok(Self {
            lower,
            upper,
            lifetime,
            gamma,
            trees,
        })
    }

    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.lower.len()
    }

    /// Errors unless `x` (row-major) has rows of this forest's width, finite and inside its
    /// box, and `weights` (if any) one positive finite value per row.
    fn check_training(&self, x: &[f64], weights: Option<&[f64]>) -> Result<()> {
        let d = self.n_features();
        if !x.len().is_multiple_of(d) {
            return Err(Error::InvalidInput(format!("X must have {d} features")));
        }
        for row in x.chunks_exact(d) {
            let inside = row
                .iter()
                .zip(self.lower.iter().zip(&self.upper))
                .all(|(v, (l, u))| v.is_finite() && l <= v && v <= u);
            if !inside {
                return Err(Error::InvalidInput(
                    "X holds a point outside the density's bounding box (fixed by the first \
                     fit): refit, or widen box_margin"
                        .into(),
                ));
            }
        }
        if let Some(w) = weights {
            let ok = w.len() == x.len() / d && w.iter().all(|v| v.is_finite() && *v > 0.0);
            if !ok {
                return Err(Error::InvalidInput(
                    "sample_weight must hold one positive finite value per row".into(),
                ));
            }
        }
        Ok(())
    }

    /// Adds the training points `x` (row-major, inside the box) with optional weights to
    /// every tree's counts; checked first, so an error changes nothing.
    pub fn add_points(
        &mut self,
        x: &[f64],
        weights: Option<&[f64]>,
        pool: &ThreadPool,
    ) -> Result<()> {
        self.check_training(x, weights)?;
        let d = self.n_features();
        pool.install(|| {
            self.trees.par_iter_mut().for_each(|tree| {
                for (i, row) in x.chunks_exact(d).enumerate() {
                    tree.add(row, weights.map_or(1.0, |w| w[i]));
                }
            })
        });
        Ok(())
    }

    /// The log posterior mean density of tree `tree` at `x` (−∞ outside the box).
    fn tree_log_density(&self, tree: &DensityTree, x: &[f64]) -> f64 {
        let mut bounds: Vec<(f64, f64)> = self
            .lower
            .iter()
            .copied()
            .zip(self.upper.iter().copied())
            .collect();
        let mut log_mass = 0.0;
        let (mut j, mut depth) = (0usize, 0u32);
        loop {
            let cut = tree.nodes[j];
            if cut.dim == NONE {
                let log_volume: f64 = bounds.iter().map(|(a, b)| (b - a).ln()).sum();
                return log_mass - log_volume;
            }
            let dim = cut.dim as usize;
            let (l, r) = (cut.left as usize, cut.right as usize);
            let share = lower_share(
                self.gamma,
                bounds[dim],
                cut.threshold,
                depth,
                tree.counts[l],
                tree.counts[r],
            );
            if x[dim] <= cut.threshold {
                log_mass += share.ln();
                bounds[dim].1 = cut.threshold;
                j = l;
            } else {
                log_mass += (1.0 - share).ln();
                bounds[dim].0 = cut.threshold;
                j = r;
            }
            depth += 1;
        }
    }

    /// log of the forest's posterior mean density at every row of `x` (row-major, finite):
    /// the log of the mean over trees; −∞ outside the box.
    pub fn log_density(&self, x: &[f64], pool: &ThreadPool) -> Result<Vec<f64>> {
        let d = self.n_features();
        if !x.len().is_multiple_of(d) || x.iter().any(|v| !v.is_finite()) {
            return Err(Error::InvalidInput(format!(
                "X must have {d} features and finite values"
            )));
        }
        let m = self.trees.len().max(1) as f64;
        let mut out = vec![0.0; x.len() / d];
        for_each_row_block(pool, &mut out, 1, x, d, |_, out, rows| {
            for (o, row) in out.iter_mut().zip(rows.chunks_exact(d)) {
                let inside = row
                    .iter()
                    .zip(self.lower.iter().zip(&self.upper))
                    .all(|(v, (l, u))| l <= v && v <= u);
                *o = if inside {
                    let logs: Vec<f64> = (self.trees.iter())
                        .map(|t| self.tree_log_density(t, row))
                        .collect();
                    let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    top + (logs.iter().map(|v| (v - top).exp()).sum::<f64>() / m).ln()
                } else {
                    f64::NEG_INFINITY
                };
            }
        });
        Ok(out)
    }

    /// `n` draws from the forest's posterior mean density (row-major): a tree uniformly, then
    /// down its cuts by the posterior mean shares, then uniformly in the leaf's box.
    pub fn draw(&self, n: usize, seed: u64) -> Result<Vec<f64>> {
        if self.trees.is_empty() {
            return Err(Error::InvalidInput("the density has no trees".into()));
        }
        let mut rng = tree_rng(seed, u64::MAX);
        let d = self.n_features();
        let mut out = Vec::with_capacity(n * d);
        for _ in 0..n {
            let t =
                ((uniform(&mut rng) * self.trees.len() as f64) as usize).min(self.trees.len() - 1);
            let tree = &self.trees[t];
            let mut bounds: Vec<(f64, f64)> = self
                .lower
                .iter()
                .copied()
                .zip(self.upper.iter().copied())
                .collect();
            let (mut j, mut depth) = (0usize, 0u32);
            loop {
                let cut = tree.nodes[j];
                if cut.dim == NONE {
                    break;
                }
                let dim = cut.dim as usize;
                let (l, r) = (cut.left as usize, cut.right as usize);
                let share = lower_share(
                    self.gamma,
                    bounds[dim],
                    cut.threshold,
                    depth,
                    tree.counts[l],
                    tree.counts[r],
                );
                if uniform(&mut rng) < share {
                    bounds[dim].1 = cut.threshold;
                    j = l;
                } else {
                    bounds[dim].0 = cut.threshold;
                    j = r;
                }
                depth += 1;
            }
            out.extend(bounds.iter().map(|(a, b)| a + uniform(&mut rng) * (b - a)));
        }
        Ok(out)
    }

    /// The lifetime path (Balog's report §4.1): at each of `lifetimes` (ascending, within
    /// [0, Λ]) the weighted mean over the rows of `x` inside the box of the log posterior mean
    /// density of the forest pruned at that λ, and the share of rows outside the box (density
    /// 0, left out of the means). Pruning keeps a node's posterior share (it depends on its
    /// depth, its cut and the counts below it, not on λ), so a row's log density in one tree is
    /// a step function of λ with a step at each cut time on its path: the whole path costs one
    /// walk per row and tree. With `leave_one_out`, `x` must be the training rows with their
    /// weights: each row's own weight is taken out of the counts on its path.
    pub fn lifetime_path(
        &self,
        x: &[f64],
        weights: Option<&[f64]>,
        lifetimes: &[f64],
        leave_one_out: bool,
        pool: &ThreadPool,
    ) -> Result<(Vec<f64>, f64)> {
        let d = self.n_features();
        let ascending = lifetimes.windows(2).all(|w| w[0] <= w[1]);
        let within = lifetimes.iter().all(|l| (0.0..=self.lifetime).contains(l));
        if !(ascending && within) {
            return Err(Error::InvalidInput(format!(
                "the path's lifetimes must ascend within [0, {}] (the fitted lifetime)",
                self.lifetime
            )));
        }
        if !x.len().is_multiple_of(d) || x.iter().any(|v| !v.is_finite()) {
            return Err(Error::InvalidInput(format!(
                "X must have {d} features and finite values"
            )));
        }
        let n = x.len() / d;
        if weights.is_some_and(|w| w.len() != n || w.iter().any(|v| !(v.is_finite() && *v > 0.0))) {
            return Err(Error::InvalidInput(
                "sample_weight must hold one positive value per row".into(),
            ));
        }
        let k = lifetimes.len();
        let m = self.trees.len().max(1) as f64;
        // Per row, its log density at every checkpoint (−∞ outside the box), then summed in
        // row order: the same numbers for any number of threads.
        let mut values = vec![0.0; n * k];
        for_each_row_block(pool, &mut values, k, x, d, |first, out, rows| {
            let mut per_tree = vec![0.0; self.trees.len() * k];
            for (i, (o, row)) in out
                .chunks_exact_mut(k)
                .zip(rows.chunks_exact(d))
                .enumerate()
            {
                if !self.contains(row) {
                    o.fill(f64::NEG_INFINITY);
                    continue;
                }
                let own = if leave_one_out {
                    weights.map_or(1.0, |w| w[first + i])
                } else {
                    0.0
                };
                for (tree, steps) in self.trees.iter().zip(per_tree.chunks_exact_mut(k)) {
                    self.tree_path(tree, row, own, lifetimes, steps);
                }
                for (c, value) in o.iter_mut().enumerate() {
                    let column = per_tree.iter().skip(c).step_by(k);
                    let top = column.clone().copied().fold(f64::NEG_INFINITY, f64::max);
                    *value = top + (column.map(|v| (v - top).exp()).sum::<f64>() / m).ln();
                }
            }
        });
        let (mut sums, mut total, mut outside) = (vec![0.0; k], 0.0, 0.0);
        for (i, row) in values.chunks_exact(k).enumerate() {
            let w = weights.map_or(1.0, |w| w[i]);
            if !self.contains(&x[i * d..(i + 1) * d]) {
                outside += w;
                continue;
            }
            total += w;
            sums.iter_mut().zip(row).for_each(|(s, v)| *s += w * v);
        }
        let means = sums
            .iter()
            .map(|s| s / total.max(f64::MIN_POSITIVE))
            .collect();
        Ok((means, outside / (total + outside).max(f64::MIN_POSITIVE)))
    }

    /// Whether `x` lies in the forest's box.
    fn contains(&self, x: &[f64]) -> bool {
        x.iter()
            .zip(self.lower.iter().zip(&self.upper))
            .all(|(v, (l, u))| l <= v && v <= u)
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
        let mut bounds: Vec<(f64, f64)> = self
            .lower
            .iter()
            .copied()
            .zip(self.upper.iter().copied())
            .collect();
        let mut log_volume: f64 = bounds.iter().map(|(a, b)| (b - a).ln()).sum();
        let (mut log_mass, mut j, mut depth, mut next) = (0.0, 0usize, 0u32, 0usize);
        loop {
            let cut = tree.nodes[j];
            // Node j is the leaf for every checkpoint before its cut time.
            while next < lifetimes.len() && lifetimes[next] < cut.tau {
                out[next] = log_mass - log_volume;
                next += 1;
            }
            if cut.dim == NONE || next == lifetimes.len() {
                return;
            }
            let dim = cut.dim as usize;
            let (l, r) = (cut.left as usize, cut.right as usize);
            let lower_side = x[dim] <= cut.threshold;
            let (n_l, n_r) = (
                tree.counts[l] - if lower_side { own } else { 0.0 },
                tree.counts[r] - if lower_side { 0.0 } else { own },
            );
            let share = lower_share(
                self.gamma,
                bounds[dim],
                cut.threshold,
                depth,
                n_l.max(0.0),
                n_r.max(0.0),
            );
            let (a, b) = bounds[dim];
            log_volume -= (b - a).ln();
            if lower_side {
                log_mass += share.ln();
                bounds[dim].1 = cut.threshold;
            } else {
                log_mass += (1.0 - share).ln();
                bounds[dim].0 = cut.threshold;
            }
            log_volume += (bounds[dim].1 - bounds[dim].0).ln();
            j = if lower_side { l } else { r };
            depth += 1;
        }
    }

    /// Per leaf of tree `index`: its posterior mean probability mass and its box's volume
    /// (leaves in node order).
    pub fn leaf_masses(&self, index: usize) -> Result<(Vec<f64>, Vec<f64>)> {
        let tree = self.trees.get(index).ok_or_else(|| {
            Error::InvalidInput(format!(
                "tree index {index} out of range for {} trees",
                self.trees.len()
            ))
        })?;
        let n = tree.nodes.len();
        let mut mass = vec![0.0; n];
        let mut bounds = vec![Vec::new(); n];
        mass[0] = 1.0;
        bounds[0] = self
            .lower
            .iter()
            .copied()
            .zip(self.upper.iter().copied())
            .collect::<Vec<_>>();
        let mut depth = vec![0u32; n];
        let (mut masses, mut volumes) = (Vec::new(), Vec::new());
        for j in 0..n {
            let cut = tree.nodes[j];
            let here: Vec<(f64, f64)> = std::mem::take(&mut bounds[j]);
            if cut.dim == NONE {
                masses.push(mass[j]);
                volumes.push(here.iter().map(|(a, b)| b - a).product());
                continue;
            }
            let dim = cut.dim as usize;
            let (l, r) = (cut.left as usize, cut.right as usize);
            let share = lower_share(
                self.gamma,
                here[dim],
                cut.threshold,
                depth[j],
                tree.counts[l],
                tree.counts[r],
            );
            (mass[l], mass[r]) = (mass[j] * share, mass[j] * (1.0 - share));
            (depth[l], depth[r]) = (depth[j] + 1, depth[j] + 1);
            let (mut lower_box, mut upper_box) = (here.clone(), here);
            lower_box[dim].1 = cut.threshold;
            upper_box[dim].0 = cut.threshold;
            (bounds[l], bounds[r]) = (lower_box, upper_box);
        }
        Ok((masses, volumes))
    }

    /// Checks a deserialised forest: a finite box, valid parameters, every tree a tree over
    /// nodes numbered parents first with cuts inside their blocks and counts that add up.
    pub fn is_consistent(&self) -> bool {
        let d = self.n_features();
        let box_ok = d > 0
            && self.lower.len() == self.upper.len()
            && self
                .lower
                .iter()
                .zip(&self.upper)
                .all(|(l, u)| l.is_finite() && u.is_finite() && l < u);
        box_ok
            && self.lifetime.is_finite()
            && self.lifetime >= 0.0
            && self.gamma.is_finite()
            && self.gamma > 0.0
            && self
                .trees
                .iter()
                .all(|t| tree_is_consistent(t, &self.lower, &self.upper, self.lifetime))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::pool;

    fn forest(lifetime: f64, points: &[f64]) -> DensityForest {
        let p = pool(2).expect("pool");
        let mut f = DensityForest::sample(
            vec![0.0, 0.0],
            vec![1.0, 2.0],
            (lifetime, 0.5),
            4,
            3,
            100_000,
            &p,
            &Interrupt::default(),
        )
        .expect("sampled");
        f.add_points(points, None, &p).expect("inside");
        f
    }

    #[test]
    fn masses_sum_to_one_and_the_density_is_mass_over_volume() {
        let points: Vec<f64> = (0..200)
            .flat_map(|i| [(i % 10) as f64 / 10.0, (i % 7) as f64 / 4.0])
            .collect();
        let f = forest(3.0, &points);
        let p = pool(1).expect("pool");
        for t in 0..4 {
            let (masses, volumes) = f.leaf_masses(t).expect("tree");
            assert!((masses.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!((volumes.iter().sum::<f64>() - 2.0).abs() < 1e-12);
            assert!(f.trees[t].counts[0] == 200.0);
        }
        let probe = [0.33, 1.21];
        let one = DensityForest {
            trees: vec![f.trees[0].clone()],
            ..f.clone()
        };
        let (masses, volumes) = one.leaf_masses(0).expect("tree");
        let densities: Vec<f64> = masses.iter().zip(&volumes).map(|(m, v)| m / v).collect();
        let got = one.log_density(&probe, &p).expect("finite")[0].exp();
        assert!(densities.iter().any(|d| (d - got).abs() < 1e-12 * got));
        assert_eq!(
            f.log_density(&[1.5, 0.5], &p).expect("finite")[0],
            f64::NEG_INFINITY
        );
        assert!(f.is_consistent());
    }

    #[test]
    fn budget_and_bad_input_are_errors() {
        let p = pool(1).expect("pool");
        let stop = Interrupt::default();
        let big = DensityForest::sample(
            vec![0.0; 3],
            vec![1.0; 3],
            (50.0, 1.0),
            2,
            0,
            1000,
            &p,
            &stop,
        );
        assert!(big.is_err());
        let bad = DensityForest::sample(vec![0.0], vec![0.0], (1.0, 1.0), 2, 0, 1000, &p, &stop);
        assert!(bad.is_err());
        let mut f = forest(1.0, &[0.5, 0.5]);
        let before = f.trees[0].counts.clone();
        assert!(f.add_points(&[0.5, 3.0], None, &p).is_err());
        assert_eq!(f.trees[0].counts, before);
    }
}
