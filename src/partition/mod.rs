//! Random partition kernels (Davies & Ghahramani 2014): `k(a, b)` is the probability that a
//! random partition puts `a` and `b` in the same cluster, estimated from `m` sampled
//! partitions stored as label vectors. Samplers: Mondrian trees, Random Forest trees cut at a
//! random depth, Fast Cluster; or labels computed elsewhere (any program that partitions).

pub mod fast_cluster;
pub mod kernel;
pub mod mondrian;
pub mod operators;
pub mod random_forest;

use crate::error::{Error, Result};
use kernel::{Assignment, PartitionKernel};
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// How new points are assigned to the clusters of each partition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum PartitionRule {
    Mondrian(mondrian::MondrianRule),
    RandomForest(random_forest::ForestRule),
    FastCluster(fast_cluster::FastClusterRule),
    /// Labels came from outside (e.g. a Python program); so do new points' labels.
    External,
}

impl PartitionRule {
    /// Labels (and weights) of the rows of `x` (row-major) in every partition.
    pub fn assign(&self, x: &[f64], pool: &ThreadPool) -> Result<Assignment> {
        match self {
            Self::Mondrian(rule) => rule.assign(x, pool),
            Self::RandomForest(rule) => rule.assign(x, pool),
            Self::FastCluster(rule) => rule.assign(x, pool),
            Self::External => Err(Error::InvalidInput(
                "partitions given as labels assign new points outside the core".into(),
            )),
        }
    }

    /// Number of features the rule routes on (None for external labels).
    pub fn n_features(&self) -> Option<usize> {
        match self {
            Self::Mondrian(rule) => Some(rule.n_features()),
            Self::RandomForest(rule) => Some(rule.n_features()),
            Self::FastCluster(rule) => Some(rule.n_features()),
            Self::External => None,
        }
    }

    /// Structural checks of a deserialised rule against its kernel.
    pub fn is_consistent(&self, kernel: &PartitionKernel) -> bool {
        match self {
            Self::Mondrian(rule) => rule.is_consistent(kernel),
            Self::RandomForest(rule) => rule.is_consistent(kernel),
            Self::FastCluster(rule) => rule.is_consistent(kernel),
            Self::External => true,
        }
    }
}
