//! Distributions over partitions (Davies & Ghahramani 2014, §4): each sampler draws `m`
//! partitions of the training points and keeps the rule that places new points in them.
//! Every rule places one point in one partition ([`AssignRule::place`]); one loop applies it
//! to every point and partition. The samplers: [`mondrian`] (Mondrian trees),
//! [`random_forest`] (Random Forest trees cut at a random depth), [`fast_cluster`].

pub mod fast_cluster;
pub mod mondrian;
pub mod random_forest;

use super::kernel::{Assignment, PartitionKernel, FRESH};
use crate::error::{Error, Result};
use crate::mondrian::route::RouteScratch;
use crate::parallel::Interrupt;
use crate::points::{check_width, finite_ranges, for_each_block, Points};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// How a sampler places new points in its partitions.
pub trait AssignRule: Sync {
    /// Number of features the rule routes on.
    fn n_features(&self) -> usize;

    /// Number of partitions.
    fn n_partitions(&self) -> usize;

    /// Whether points get a weight (the probability that they share their cluster).
    fn weighted(&self) -> bool {
        false
    }

    /// The cluster of `row` in partition `rho` ([`FRESH`]: a cluster of its own) and its
    /// weight (1 for unweighted rules).
    fn place(&self, rho: usize, row: &[f64], scratch: &mut RouteScratch) -> (u32, f64);

    /// Structural checks of a deserialised rule against its kernel.
    fn is_consistent(&self, kernel: &PartitionKernel) -> bool;
}

/// The rule of each sampler.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum PartitionRule {
    Mondrian(mondrian::MondrianRule),
    RandomForest(random_forest::ForestRule),
    FastCluster(fast_cluster::FastClusterRule),
    /// Labels came from outside (e.g. a Python program); so do new points' labels.
    External,
}

impl PartitionRule {
    fn rule(&self) -> Option<&dyn AssignRule> {
        match self {
            Self::Mondrian(rule) => Some(rule),
            Self::RandomForest(rule) => Some(rule),
            Self::FastCluster(rule) => Some(rule),
            Self::External => None,
        }
    }

    /// Labels (and weights) of the rows of `x` in every partition: a block of rows at a time
    /// (each row is placed by itself), in parallel over partitions.
    pub fn assign<P: Points>(&self, x: &P, pool: &ThreadPool) -> Result<Assignment> {
        let rule = self.rule().ok_or_else(|| {
            Error::InvalidInput(
                "partitions given as labels assign new points outside the core".into(),
            )
        })?;
        let d = rule.n_features();
        check_width(x, d, "partition kernel")?;
        finite_ranges(x)?;
        let na = check_count(x.n_rows())?;
        let m = rule.n_partitions();
        let mut labels = vec![FRESH; m * na];
        let mut weights = vec![0.0; if rule.weighted() { m * na } else { 0 }];
        let place_all = |rows: &[f64], labels: &mut [u32], mut weights: Option<&mut [f64]>, rho| {
            let mut scratch = RouteScratch::default();
            for (i, row) in rows.chunks_exact(d).enumerate() {
                let (label, weight) = rule.place(rho, row, &mut scratch);
                labels[i] = label;
                if let Some(w) = weights.as_deref_mut() {
                    w[i] = weight;
                }
            }
        };
        if na > 0 {
            for_each_block(x, None, |first, rows| {
                let block = first..first + rows.len() / d;
                pool.install(|| {
                    let labels = labels.par_chunks_mut(na).map(|l| &mut l[block.clone()]);
                    if rule.weighted() {
                        let weights = weights.par_chunks_mut(na).map(|w| &mut w[block.clone()]);
                        (labels.zip(weights).enumerate())
                            .for_each(|(rho, (l, w))| place_all(rows, l, Some(w), rho));
                    } else {
                        labels
                            .enumerate()
                            .for_each(|(rho, l)| place_all(rows, l, None, rho));
                    }
                })
            });
        }
        Ok(Assignment {
            n_points: na,
            labels,
            weights: rule.weighted().then_some(weights),
        })
    }

    /// Number of features the rule routes on (None for external labels).
    pub fn n_features(&self) -> Option<usize> {
        self.rule().map(AssignRule::n_features)
    }

    /// Structural checks of a deserialised rule against its kernel.
    pub fn is_consistent(&self, kernel: &PartitionKernel) -> bool {
        self.rule().is_none_or(|rule| {
            rule.n_partitions() == kernel.n_partitions() && rule.is_consistent(kernel)
        })
    }
}

/// Whether a rule keeps one cluster table per tree (`clusters[ρ]` for `trees[ρ]`) and every
/// partition passes `check(tree, its table, its number of clusters in the kernel)`.
fn each_tree_consistent<T>(
    trees: &[T],
    clusters: &[Vec<u32>],
    kernel: &PartitionKernel,
    check: impl Fn(&T, &[u32], u32) -> bool,
) -> bool {
    clusters.len() == trees.len()
        && (trees.iter().zip(clusters).zip(kernel.n_clusters())).all(|((t, c), &l)| check(t, c, l))
}

/// Checks that `x` holds finite rows of `n_features` values and returns their number.
pub fn check_rows(x: &[f64], n_features: usize) -> Result<usize> {
    if n_features == 0 || !x.len().is_multiple_of(n_features) {
        return Err(Error::InvalidInput(format!(
            "expected rows of {n_features} features, got {} values",
            x.len()
        )));
    }
    if x.iter().any(|v| !v.is_finite()) {
        return Err(Error::InvalidInput("X contains NaN or infinity".into()));
    }
    check_count(x.len() / n_features)
}

/// Errors unless `n` points can be numbered by `u32` labels; `n`.
fn check_count(n: usize) -> Result<usize> {
    if n >= u32::MAX as usize {
        return Err(Error::InvalidInput(format!(
            "at most {} points are supported",
            u32::MAX - 1
        )));
    }
    Ok(n)
}

/// What every sampler draws on: the training rows (row-major, `n_features` wide), how many
/// partitions (partition ρ draws from the stream `tree_rng(seed, ρ)`), the pool and the flag
/// that stops the work between partitions.
pub struct Sampling<'a> {
    pub x: &'a [f64],
    pub n_features: usize,
    pub n_partitions: usize,
    pub seed: u64,
    pub pool: &'a ThreadPool,
    pub interrupt: &'a Interrupt,
}

impl Sampling<'_> {
    /// [`check_rows`] for a sample: at least one point and one partition; the number of points.
    pub fn check(&self) -> Result<usize> {
        let n = check_rows(self.x, self.n_features)?;
        if n == 0 || self.n_partitions == 0 {
            return Err(Error::InvalidInput(
                "need at least one point and one partition".into(),
            ));
        }
        Ok(n)
    }

    /// Draws every partition in parallel: `draw(ρ, labels of ρ, scratch)` writes partition
    /// ρ's raw labels of the `n` points and returns what its rule keeps. Returns all labels
    /// (partition-major) and the kept values in partition order; stops, returning an error,
    /// when the interrupt is raised.
    pub fn draw_partitions<T: Send, S: Default>(
        &self,
        n: usize,
        draw: impl Fn(usize, &mut [u32], &mut S) -> T + Sync + Send,
    ) -> Result<(Vec<u32>, Vec<T>)> {
        let mut labels = vec![0u32; n * self.n_partitions];
        let kept: Vec<Option<T>> = self.pool.install(|| {
            labels
                .par_chunks_mut(n)
                .enumerate()
                .map_init(S::default, |scratch, (rho, out)| {
                    (!self.interrupt.is_requested()).then(|| draw(rho, out, scratch))
                })
                .collect()
        });
        self.interrupt.check()?;
        Ok((labels, kept.into_iter().flatten().collect()))
    }
}
