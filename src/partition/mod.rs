//! Random partition kernels (Davies & Ghahramani 2014): `k(a, b)` is the probability that a
//! random partition puts `a` and `b` in the same cluster, estimated from `m` sampled
//! partitions stored as label vectors ([`kernel`]) and only ever applied through products
//! ([`product`], [`operators`]); the GP's predictive variances ([`variance`]). Samplers
//! ([`samplers`]): Mondrian trees, Random Forest trees
//! cut at a random depth, Fast Cluster; or labels computed elsewhere (any program that
//! partitions). The products' inner loops (scatter into cluster sums, gather back) are in
//! `scatter_gather`.

pub mod kernel;
pub mod operators;
pub mod product;
pub mod samplers;
mod scatter_gather;
pub mod variance;

use crate::error::Result;
use crate::points::Points;
use kernel::{Assignment, PartitionKernel};
use rayon::ThreadPool;
use samplers::PartitionRule;
use serde::{Deserialize, Serialize};

/// Sampled partitions of the training points (the kernel) and the rule that places new
/// points in them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartitionModel {
    pub kernel: PartitionKernel,
    pub rule: PartitionRule,
}

impl PartitionModel {
    /// Partitions given as labels (`n_partitions` vectors of equal length, ids renumbered
    /// 0..L−1); new points are then labelled outside the core.
    pub fn from_labels(labels: Vec<u32>, n_partitions: usize) -> Result<Self> {
        Ok(Self {
            kernel: PartitionKernel::from_labels(labels, n_partitions)?,
            rule: PartitionRule::External,
        })
    }

    /// Labels (and weights) of the rows of `x` in every partition.
    pub fn assign<P: Points>(&self, x: &P, pool: &ThreadPool) -> Result<Assignment> {
        self.rule.assign(x, pool)
    }

    /// Structural checks of a deserialised model.
    pub fn is_consistent(&self) -> bool {
        self.kernel.is_consistent() && self.rule.is_consistent(&self.kernel)
    }
}
