//! Mondrian density estimation (Balog, *The Mondrian Process in Machine Learning*, ch. 2 and
//! appendix C). Each tree is a Mondrian process on a bounded box, instantiated in full —
//! empty regions too, since a density needs every cell's volume (the report's option 1) —
//! with a Pólya-tree prior on how each cut splits its block's probability mass: the lower
//! child's share ε ~ Beta(γ q (d+1)², γ (1 − q)(d+1)²), q its share of the block's volume
//! (the cut's position along the cut dimension), d the block's depth (root 0). Given the
//! training counts the shares are independent Beta–binomial posteriors, so the posterior mean
//! density at x is the product of the posterior mean shares along x's path, over the volume
//! of its leaf; the forest averages its M trees' densities. One tree is in `tree.rs`, the
//! lifetime path (the log-likelihood along λ) in `path.rs`, the unit tests in `tests.rs`.
//!
//! Cost: a Mondrian process with lifetime λ on a box with extents r_d has Π_d (1 + λ r_d)
//! cells in expectation, which grows as λ^D; [`DensityForest::sample`] refuses a forest whose
//! expected cells exceed the caller's budget (the estimator derives it from memory), and a
//! tree that outgrows it by chance is refused too — never silently truncated.

mod path;
mod tree;

use crate::error::{Error, Result};
use crate::parallel::Interrupt;
use crate::points::{check_width, finite_ranges, for_each_block, Points};
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
    if strength.is_infinite() {
        // The limit of an infinitely strong prior: the uniform share (γ = 1e308 overflowed
        // the strength at depth 1 and gave ∞/∞ = NaN densities).
        return q;
    }
    (strength * q + left) / (strength + left + right)
}

/// Errors unless `weights` (if any) holds one positive finite value for each of `n` rows.
fn check_row_weights(n: usize, weights: Option<&[f64]>) -> Result<()> {
    if weights.is_some_and(|w| w.len() != n || w.iter().any(|v| !(v.is_finite() && *v > 0.0))) {
        return Err(Error::InvalidInput(
            "sample_weight must hold one positive finite value per row".into(),
        ));
    }
    Ok(())
}

/// A walk down one tree from the root: the node reached, its depth and box, and the logs of
/// the posterior mean mass of its block and of the block's volume.
struct Walk {
    node: usize,
    depth: u32,
    bounds: Vec<(f64, f64)>,
    log_mass: f64,
    log_volume: f64,
}

impl Walk {
    /// Moves to the lower child of `cut` (or the upper one), whose share of the mass is
    /// `share` (or 1 − `share`).
    fn descend(&mut self, cut: &Cut, lower: bool, share: f64) {
        let dim = cut.dim as usize;
        let (a, b) = self.bounds[dim];
        self.log_volume -= (b - a).ln();
        if lower {
            self.log_mass += share.ln();
            self.bounds[dim].1 = cut.threshold;
            self.node = cut.left as usize;
        } else {
            self.log_mass += (1.0 - share).ln();
            self.bounds[dim].0 = cut.threshold;
            self.node = cut.right as usize;
        }
        let (a, b) = self.bounds[dim];
        self.log_volume += (b - a).ln();
        self.depth += 1;
    }
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

    /// Errors unless `x` has rows of this forest's width, finite and inside its box, and
    /// `weights` (if any) one positive finite value per row. The box holds every row when it
    /// holds each feature's extremes.
    fn check_training<P: Points>(&self, x: &P, weights: Option<&[f64]>) -> Result<()> {
        let ranges = self.check_rows(x)?;
        let inside = (ranges.iter().zip(self.lower.iter().zip(&self.upper)))
            .all(|(&(lo, hi), (l, u))| lo > hi || (*l <= lo && hi <= *u));
        if !inside {
            return Err(Error::InvalidInput(
                "X holds a point outside the density's bounding box (fixed by the first \
                 fit): refit, or widen box_margin"
                    .into(),
            ));
        }
        check_row_weights(x.n_rows(), weights)
    }

    /// Adds the training points `x` (inside the box) with optional weights to every tree's
    /// counts, a block of rows at a time (each tree adds the rows one by one in order, as
    /// from the whole matrix); checked first, so an error changes nothing.
    pub fn add_points<P: Points>(
        &mut self,
        x: &P,
        weights: Option<&[f64]>,
        pool: &ThreadPool,
    ) -> Result<()> {
        self.check_training(x, weights)?;
        let d = self.n_features();
        for_each_block(x, None, |first, block| {
            pool.install(|| {
                self.trees.par_iter_mut().for_each(|tree| {
                    for (i, row) in block.chunks_exact(d).enumerate() {
                        tree.add(row, weights.map_or(1.0, |w| w[first + i]));
                    }
                })
            })
        });
        Ok(())
    }

    /// Errors unless `x` holds finite rows of this forest's width; each feature's range.
    fn check_rows<P: Points>(&self, x: &P) -> Result<Vec<(f64, f64)>> {
        check_width(x, self.n_features(), "density")?;
        finite_ranges(x)
    }

    /// Whether `x` lies in the forest's box.
    fn contains(&self, x: &[f64]) -> bool {
        x.iter()
            .zip(self.lower.iter().zip(&self.upper))
            .all(|(v, (l, u))| l <= v && v <= u)
    }

    /// A walk at the root of a tree: the whole box, all the mass.
    fn walk(&self) -> Walk {
        let bounds: Vec<(f64, f64)> = (self.lower.iter().copied())
            .zip(self.upper.iter().copied())
            .collect();
        let log_volume = bounds.iter().map(|(a, b)| (b - a).ln()).sum();
        Walk {
            node: 0,
            depth: 0,
            bounds,
            log_mass: 0.0,
            log_volume,
        }
    }

    /// The posterior mean share of the lower child of `cut` (the walk's node in `tree`), with
    /// `own` of the weight taken out of the child on the `lower` side (leave-one-out; 0
    /// otherwise).
    fn share(&self, tree: &DensityTree, walk: &Walk, cut: &Cut, (lower, own): (bool, f64)) -> f64 {
        let (l, r) = (cut.left as usize, cut.right as usize);
        let (own_l, own_r) = if lower { (own, 0.0) } else { (0.0, own) };
        lower_share(
            self.gamma,
            walk.bounds[cut.dim as usize],
            cut.threshold,
            walk.depth,
            (tree.counts[l] - own_l).max(0.0),
            (tree.counts[r] - own_r).max(0.0),
        )
    }

    /// `n` draws from the forest's posterior mean density (row-major): a tree uniformly, then
    /// down its cuts by the posterior mean shares, then uniformly in the leaf's box.
    pub fn draw(&self, n: usize, seed: u64) -> Result<Vec<f64>> {
        if self.trees.is_empty() {
            return Err(Error::InvalidInput("the density has no trees".into()));
        }
        let mut rng = tree_rng(seed, u64::MAX);
        let mut out = Vec::with_capacity(n * self.n_features());
        for _ in 0..n {
            let t =
                ((uniform(&mut rng) * self.trees.len() as f64) as usize).min(self.trees.len() - 1);
            let tree = &self.trees[t];
            let mut walk = self.walk();
            loop {
                let cut = tree.nodes[walk.node];
                if cut.dim == NONE {
                    break;
                }
                let share = self.share(tree, &walk, &cut, (true, 0.0));
                walk.descend(&cut, uniform(&mut rng) < share, share);
            }
            out.extend(
                walk.bounds
                    .iter()
                    .map(|(a, b)| a + uniform(&mut rng) * (b - a)),
            );
        }
        Ok(out)
    }

    /// log of the forest's posterior mean density at every row of `x` (finite): the log of
    /// the mean over trees; −∞ outside the box.
    pub fn log_density<P: Points>(&self, x: &P, pool: &ThreadPool) -> Result<Vec<f64>> {
        self.check_rows(x)?;
        Ok(self.row_paths(x, |_| 0.0, &[self.lifetime], pool))
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
        bounds[0] = self.walk().bounds;
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
mod tests;
