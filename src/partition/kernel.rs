//! The m-approximate random partition kernel (Davies & Ghahramani 2014, §3):
//! `K̂(a, b) = (1/m) Σ_ρ 1[ρ(a) = ρ(b)]`, stored as `m` label vectors, never as a matrix
//! (products in `partition::product`).
//!
//! Labels are `u32` cluster ids `0..L_ρ`, partition-major (one contiguous N-vector per
//! partition). New points come as an [`Assignment`]: a label per partition, [`FRESH`] for a
//! point in a cluster that holds no training point, and optionally a weight, the probability
//! that the point really shares the cluster (the Mondrian sampler's conditional rule).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The label of a point alone in a cluster with no training point (it adds nothing to any
/// product with training points).
pub const FRESH: u32 = u32::MAX;

/// Labels of the training points under `m` partitions, and cluster sizes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartitionKernel {
    pub(super) n_points: usize,
    pub(super) n_partitions: usize,
    pub(super) labels: Vec<u32>,
    pub(super) n_clusters: Vec<u32>,
    /// `cluster_start[ρ]..cluster_start[ρ + 1]` indexes partition ρ's entries in `sizes`.
    pub(super) cluster_start: Vec<usize>,
    pub(super) sizes: Vec<u32>,
}

/// Labels (and optional weights) of points that are not the training points, partition-major
/// (`n_partitions × n_points`).
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    pub n_points: usize,
    pub labels: Vec<u32>,
    pub weights: Option<Vec<f64>>,
}

impl PartitionKernel {
    /// Builds the kernel from partition-major labels (`n_partitions` vectors of equal length).
    /// Labels must be cluster ids below the number of points (renumbered 0..L−1).
    pub fn from_labels(labels: Vec<u32>, n_partitions: usize) -> Result<Self> {
        if n_partitions == 0 || labels.is_empty() || !labels.len().is_multiple_of(n_partitions) {
            return Err(Error::InvalidInput(format!(
                "{} labels cannot be split into {n_partitions} non-empty partitions",
                labels.len()
            )));
        }
        let n = labels.len() / n_partitions;
        let mut n_clusters = Vec::with_capacity(n_partitions);
        let mut cluster_start = vec![0];
        let mut sizes = Vec::new();
        for part in labels.chunks_exact(n) {
            let max = part.iter().copied().max().unwrap_or(0) as usize;
            if max >= n {
                return Err(Error::InvalidInput(format!(
                    "cluster ids must be renumbered below the number of points ({n}), got {max}"
                )));
            }
            let start = sizes.len();
            sizes.resize(start + max + 1, 0u32);
            for &c in part {
                sizes[start + c as usize] += 1;
            }
            n_clusters.push((max + 1) as u32);
            cluster_start.push(sizes.len());
        }
        Ok(Self {
            n_points: n,
            n_partitions,
            labels,
            n_clusters,
            cluster_start,
            sizes,
        })
    }

    pub fn n_points(&self) -> usize {
        self.n_points
    }

    pub fn n_partitions(&self) -> usize {
        self.n_partitions
    }

    /// Training points in each cluster, clusters of all partitions in order (partition ρ's
    /// from `cluster_offsets()[ρ]`).
    pub fn cluster_sizes(&self) -> &[u32] {
        &self.sizes
    }

    /// Number of clusters of each partition.
    pub fn n_clusters(&self) -> &[u32] {
        &self.n_clusters
    }

    /// All labels, partition-major.
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }

    /// Offset of partition ρ's clusters in the list of all clusters (`Σ_{σ<ρ} L_σ`), for
    /// one-hot feature columns; the last entry is the total.
    pub fn cluster_offsets(&self) -> &[usize] {
        &self.cluster_start
    }

    /// Checks a deserialised kernel.
    pub fn is_consistent(&self) -> bool {
        let (n, m) = (self.n_points, self.n_partitions);
        m > 0
            && n > 0
            && self.labels.len() == n * m
            && self.n_clusters.len() == m
            && self.cluster_start.len() == m + 1
            && self
                .cluster_start
                .windows(2)
                .zip(&self.n_clusters)
                .all(|(w, &l)| w[1] >= w[0] && w[1] - w[0] == l as usize && (l as usize) <= n)
            && self.cluster_start[m] == self.sizes.len()
            && self
                .labels
                .chunks_exact(n)
                .zip(&self.n_clusters)
                .all(|(part, &l)| part.iter().all(|&c| c < l))
    }

    /// Checks that `a` labels points with this kernel's partitions.
    pub fn check_assignment(&self, a: &Assignment) -> Result<()> {
        let len = a.n_points * self.n_partitions;
        let bad_weights = a
            .weights
            .as_ref()
            .is_some_and(|w| w.len() != len || w.iter().any(|v| !v.is_finite()));
        if a.labels.len() != len || bad_weights {
            return Err(Error::InvalidInput(format!(
                "an assignment of {} points needs {len} labels (and finite weights)",
                a.n_points
            )));
        }
        let n = a.n_points;
        for (rho, &l) in self.n_clusters.iter().enumerate() {
            if a.labels[rho * n..(rho + 1) * n]
                .iter()
                .any(|&c| c >= l && c != FRESH)
            {
                return Err(Error::InvalidInput(format!(
                    "partition {rho} has {l} clusters; an assigned label is out of range"
                )));
            }
        }
        Ok(())
    }
}

/// Renumbers raw ids (each below `n_raw`) in `labels` to `0..L−1`, in increasing raw order
/// over the ids that occur, and returns the map raw → new (`FRESH` for ids that do not occur).
pub fn renumber(labels: &mut [u32], n_raw: usize) -> Vec<u32> {
    let mut map = vec![FRESH; n_raw];
    for &l in labels.iter() {
        map[l as usize] = 0;
    }
    for (next, c) in map.iter_mut().filter(|c| **c == 0).enumerate() {
        *c = next as u32;
    }
    labels.iter_mut().for_each(|l| *l = map[*l as usize]);
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::pool;

    #[test]
    fn rejects_bad_labels_and_assignments() {
        assert!(PartitionKernel::from_labels(vec![0, 1, 2], 2).is_err());
        assert!(PartitionKernel::from_labels(vec![0, 5, 0, 1], 2).is_err());
        assert!(PartitionKernel::from_labels(vec![], 1).is_err());
        let kernel = PartitionKernel::from_labels(vec![0, 1, 1, 0, 0, 0], 2).expect("valid");
        assert!(kernel.is_consistent());
        let bad = Assignment {
            n_points: 1,
            labels: vec![0, 1],
            weights: None,
        };
        assert!(
            kernel.check_assignment(&bad).is_err(),
            "partition 1 has one cluster"
        );
        let short = Assignment {
            n_points: 2,
            labels: vec![0, 1],
            weights: None,
        };
        assert!(kernel.check_assignment(&short).is_err());
        let p = pool(1).expect("pool");
        assert!(kernel.matmul(&[1.0; 2], 1, &mut [0.0; 3], &p).is_err());
        assert_eq!(kernel.stream_labels(&p), 2);
    }
}
