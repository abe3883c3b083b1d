//! The m-approximate random partition kernel (Davies & Ghahramani 2014, §3):
//! `K̂(a, b) = (1/m) Σ_ρ 1[ρ(a) = ρ(b)]`, stored as `m` label vectors, never as a matrix.
//!
//! `K̂ V = (1/m) Σ_ρ G_ρ G_ρᵀ V`, `G_ρ` the N × L_ρ one-hot matrix of partition ρ: per
//! partition, sum the rows of `V` within each cluster (scatter), then hand every point its
//! cluster's sum (gather). Both phases stream the labels, once each, for all `k` columns of `V`.
//! - Scatter runs in parallel over partitions, each partition's sums accumulated in row order
//!   by one thread, rows taken in chunks so a chunk of `V` is reused from cache by every
//!   partition of a task.
//! - Gather runs in parallel over chunks of output rows, each row adding its partitions' sums
//!   in partition order.
//!
//! So every output value is the same sum in the same order whatever the number of threads.
//! Partitions are processed in groups whose cluster sums fit a memory budget; grouping does
//! not change the order of additions either.
//!
//! Labels are `u32` cluster ids `0..L_ρ`, partition-major (one contiguous N-vector per
//! partition). New points come as an [`Assignment`]: a label per partition, [`FRESH`] for a
//! point in a cluster that holds no training point, and optionally a weight, the probability
//! that the point really shares the cluster (the Mondrian sampler's conditional rule).

use crate::error::{Error, Result};
use loops::{gather, scatter};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// The label of a point alone in a cluster with no training point (it adds nothing to any
/// product with training points).
pub const FRESH: u32 = u32::MAX;

mod loops;

/// Cluster sums held at once, in values (256 MiB); more partitions are processed in groups.
const SUMS_BUDGET: usize = 1 << 25;
/// Values of `V` (or of the output) per row chunk: 2 MiB, so a chunk of `V` stays in cache
/// while every partition of a scatter task reads it, and an output chunk while every
/// partition adds to it. Long chunks also keep each label stream sequential for long: measured
/// on this project's 2-core machine, 256k-row chunks gathered 1.6× faster than 16k-row ones.
const CHUNK_VALUES: usize = 1 << 18;

/// Rows per chunk for blocks of `k` columns (at least 4096), and for gathers at least four
/// chunks per thread so the work balances. Chunking never changes a result.
fn chunk_rows(k: usize, n: usize, threads: usize) -> usize {
    let by_cache = (CHUNK_VALUES / k.max(1)).max(4096);
    let by_balance = n.div_ceil(4 * threads.max(1)).max(4096);
    by_cache.min(by_balance)
}

/// Labels of the training points under `m` partitions, and cluster sizes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartitionKernel {
    n_points: usize,
    n_partitions: usize,
    labels: Vec<u32>,
    n_clusters: Vec<u32>,
    /// `cluster_start[ρ]..cluster_start[ρ + 1]` indexes partition ρ's entries in `sizes`.
    cluster_start: Vec<usize>,
    sizes: Vec<u32>,
}

/// Labels (and optional weights) of points that are not the training points, partition-major
/// (`n_partitions × n_points`).
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    pub n_points: usize,
    pub labels: Vec<u32>,
    pub weights: Option<Vec<f64>>,
}

/// One side of a product: whose labels (and weights) the scatter or gather reads.
#[derive(Clone, Copy)]
struct Side<'a> {
    n: usize,
    labels: &'a [u32],
    weights: Option<&'a [f64]>,
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

    fn training(&self) -> Side<'_> {
        Side {
            n: self.n_points,
            labels: &self.labels,
            weights: None,
        }
    }

    fn side<'a>(a: &'a Assignment) -> Side<'a> {
        Side {
            n: a.n_points,
            labels: &a.labels,
            weights: a.weights.as_deref(),
        }
    }

    /// `out = K̂ V` for the row-major `N × k` blocks `v` and `out`.
    pub fn matmul(&self, v: &[f64], k: usize, out: &mut [f64], pool: &ThreadPool) -> Result<()> {
        self.check(v, self.n_points, k, out, self.n_points)?;
        self.product(self.training(), v, k, self.training(), out, None, pool);
        self.scale(out, pool);
        Ok(())
    }

    /// `out = Σ_ρ G_ρ diag(f(|c|)) G_ρᵀ V`: like [`matmul`](Self::matmul) without the `1/m`,
    /// each cluster's sum multiplied by `f` of its size (the preconditioner's closed form).
    pub fn matmul_by_cluster_size(
        &self,
        v: &[f64],
        k: usize,
        out: &mut [f64],
        f: &(dyn Fn(u32) -> f64 + Sync),
        pool: &ThreadPool,
    ) -> Result<()> {
        self.check(v, self.n_points, k, out, self.n_points)?;
        self.product(self.training(), v, k, self.training(), out, Some(f), pool);
        Ok(())
    }

    /// `out = K̂(A, X) V`: rows for the assigned points, `v` over the training points.
    pub fn cross_matmul(
        &self,
        a: &Assignment,
        v: &[f64],
        k: usize,
        out: &mut [f64],
        pool: &ThreadPool,
    ) -> Result<()> {
        self.check_assignment(a)?;
        self.check(v, self.n_points, k, out, a.n_points)?;
        self.product(self.training(), v, k, Self::side(a), out, None, pool);
        self.scale(out, pool);
        Ok(())
    }

    /// `out = K̂(X, A)` (`N × n_a`, row-major): the kernel columns of the assigned points.
    pub fn cross_columns(&self, a: &Assignment, out: &mut [f64], pool: &ThreadPool) -> Result<()> {
        self.check_assignment(a)?;
        let na = a.n_points;
        let mut identity = vec![0.0; na * na];
        (0..na).for_each(|j| identity[j * na + j] = 1.0);
        self.check(&identity, na, na, out, self.n_points)?;
        self.product(
            Self::side(a),
            &identity,
            na,
            self.training(),
            out,
            None,
            pool,
        );
        self.scale(out, pool);
        Ok(())
    }

    /// Reads every label once (in parallel) and returns their sum: the memory-bandwidth
    /// yardstick for one product, which must read them at least once.
    pub fn stream_labels(&self, pool: &ThreadPool) -> u64 {
        pool.install(|| {
            self.labels
                .par_chunks(1 << 16)
                .map(|c| c.iter().map(|&l| u64::from(l)).sum::<u64>())
                .sum()
        })
    }

    fn check(&self, v: &[f64], n_in: usize, k: usize, out: &[f64], n_out: usize) -> Result<()> {
        if k == 0 || v.len() != n_in * k || out.len() != n_out * k {
            return Err(Error::InvalidInput(format!(
                "expected {n_in} × {k} input and {n_out} × {k} output blocks, got {} and {} values",
                v.len(),
                out.len()
            )));
        }
        Ok(())
    }

    fn scale(&self, out: &mut [f64], pool: &ThreadPool) {
        let inv = 1.0 / self.n_partitions as f64;
        pool.install(|| {
            out.par_chunks_mut(1 << 16)
                .for_each(|c| c.iter_mut().for_each(|x| *x *= inv))
        });
    }

    /// Groups of consecutive partitions whose cluster sums (`L_ρ · k` values each) fit the
    /// budget (at least one partition per group).
    fn groups(&self, k: usize) -> Vec<std::ops::Range<usize>> {
        let mut groups = Vec::new();
        let mut start = 0;
        while start < self.n_partitions {
            let mut end = start + 1;
            while end < self.n_partitions
                && (self.cluster_start[end + 1] - self.cluster_start[start]) * k <= SUMS_BUDGET
            {
                end += 1;
            }
            groups.push(start..end);
            start = end;
        }
        groups
    }

    /// `out = Σ_ρ W_dst G_dst,ρ diag(f) G_src,ρᵀ W_src V` (see the module notes).
    #[allow(clippy::too_many_arguments)]
    fn product(
        &self,
        src: Side<'_>,
        v: &[f64],
        k: usize,
        dst: Side<'_>,
        out: &mut [f64],
        f: Option<&(dyn Fn(u32) -> f64 + Sync)>,
        pool: &ThreadPool,
    ) {
        out.fill(0.0);
        let groups = self.groups(k);
        let largest = groups
            .iter()
            .map(|g| self.cluster_start[g.end] - self.cluster_start[g.start])
            .max()
            .unwrap_or(0);
        let mut buffer = vec![0.0; largest * k];
        let threads = pool.current_num_threads().max(1);
        for g in groups {
            let base = self.cluster_start[g.start];
            let sums = &mut buffer[..(self.cluster_start[g.end] - base) * k];
            sums.fill(0.0);
            let mut parts: Vec<(usize, &mut [f64])> = Vec::with_capacity(g.len());
            let mut rest = &mut *sums;
            for rho in g.clone() {
                let (head, tail) = rest.split_at_mut(self.n_clusters[rho] as usize * k);
                parts.push((rho, head));
                rest = tail;
            }
            let per_task = parts.len().div_ceil(threads);
            pool.install(|| {
                parts
                    .par_chunks_mut(per_task)
                    .for_each(|task| self.scatter_task(task, src, v, k, f));
            });
            let sums = &*sums;
            let group = g.clone();
            let rows = chunk_rows(k, dst.n, threads);
            pool.install(|| {
                out.par_chunks_mut(rows * k)
                    .enumerate()
                    .for_each(|(chunk, out)| {
                        let first = chunk * rows;
                        let rows = first..first + out.len() / k;
                        for rho in group.clone() {
                            let s = &sums[(self.cluster_start[rho] - base) * k
                                ..(self.cluster_start[rho + 1] - base) * k];
                            let at = rho * dst.n;
                            let labels = &dst.labels[at + rows.start..at + rows.end];
                            let w = dst.weights.map(|w| &w[at + rows.start..at + rows.end]);
                            gather(labels, w, s, k, out);
                        }
                    });
            });
        }
    }

    /// Cluster sums of `v`'s rows for the partitions of one task, row chunk by row chunk.
    fn scatter_task(
        &self,
        task: &mut [(usize, &mut [f64])],
        src: Side<'_>,
        v: &[f64],
        k: usize,
        f: Option<&(dyn Fn(u32) -> f64 + Sync)>,
    ) {
        let rows = chunk_rows(k, src.n, 1);
        let mut first = 0;
        while first < src.n {
            let last = (first + rows).min(src.n);
            let rows = &v[first * k..last * k];
            for (rho, sums) in task.iter_mut() {
                let at = *rho * src.n;
                let labels = &src.labels[at + first..at + last];
                let w = src.weights.map(|w| &w[at + first..at + last]);
                scatter(labels, w, rows, k, sums);
            }
            first = last;
        }
        if let Some(f) = f {
            for (rho, sums) in task.iter_mut() {
                let sizes = &self.sizes[self.cluster_start[*rho]..self.cluster_start[*rho + 1]];
                for (s, &size) in sums.chunks_exact_mut(k).zip(sizes) {
                    let factor = f(size);
                    s.iter_mut().for_each(|x| *x *= factor);
                }
            }
        }
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
mod tests;
