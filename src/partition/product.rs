//! Products with the partition kernel, `K̂ V = (1/m) Σ_ρ G_ρ G_ρᵀ V`, `G_ρ` the N × L_ρ
//! one-hot matrix of partition ρ: per partition, sum the rows of `V` within each cluster
//! (scatter), then hand every point its cluster's sum (gather). Both phases stream the labels,
//! once each, for all `k` columns of `V`.
//! - Scatter runs in parallel over partitions, each partition's sums accumulated in row order
//!   by one thread, rows taken in chunks so a chunk of `V` is reused from cache by every
//!   partition of a task.
//! - Gather runs in parallel over chunks of output rows, each row adding its partitions' sums
//!   in partition order.
//!
//! So every output value is the same sum in the same order whatever the number of threads.
//! Partitions are processed in groups whose cluster sums fit a memory budget; grouping does
//! not change the order of additions either.

use super::kernel::{Assignment, PartitionKernel};
use super::scatter_gather::{gather, scatter};
use crate::error::Result;
use crate::linalg::operator::check_blocks;
use rayon::prelude::*;
use rayon::ThreadPool;
use std::ops::Range;

/// One side of a product: whose labels (and weights) the scatter or gather reads.
#[derive(Clone, Copy)]
struct Side<'a> {
    n: usize,
    labels: &'a [u32],
    weights: Option<&'a [f64]>,
}

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

impl PartitionKernel {
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
        check_blocks((self.n_points, v), k, (self.n_points, out))?;
        self.product(self.training(), v, k, self.training(), out, None, pool);
        self.scale(out, pool);
        Ok(())
    }

    /// `out = Σ_ρ G_ρ diag(f) G_ρᵀ V`: like [`matmul`](Self::matmul) without the `1/m`,
    /// each cluster's sum multiplied by its factor in `f`, one per cluster of all partitions
    /// in order (partition ρ's from `cluster_offsets()[ρ]`; the preconditioner's closed form).
    pub fn matmul_by_cluster(
        &self,
        v: &[f64],
        k: usize,
        out: &mut [f64],
        f: &[f64],
        pool: &ThreadPool,
    ) -> Result<()> {
        check_blocks((self.n_points, v), k, (self.n_points, out))?;
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
        check_blocks((self.n_points, v), k, (a.n_points, out))?;
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
        check_blocks((na, &identity), na, (self.n_points, out))?;
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

    /// Points' side of a product: the training points (None) or assigned points.
    fn points<'a>(&'a self, a: Option<&'a Assignment>) -> Result<Side<'a>> {
        match a {
            None => Ok(self.training()),
            Some(a) => {
                self.check_assignment(a)?;
                Ok(Self::side(a))
            }
        }
    }

    /// The cluster sums `Gᵀ W V` of every partition (`C × k`, row-major, partition ρ's
    /// clusters from `cluster_offsets()[ρ]`, `C` the last offset) of the rows of the `n × k`
    /// block `v` of the training points (`a` None) or of assigned points, weighted by their
    /// weights: the first half of a product, what a block of rows contributes to `K̂ V` when
    /// the rows are spread over machines (sums of several blocks add).
    pub fn cluster_sums(
        &self,
        a: Option<&Assignment>,
        v: &[f64],
        k: usize,
        pool: &ThreadPool,
    ) -> Result<Vec<f64>> {
        let side = self.points(a)?;
        let n_sums = self.cluster_start[self.n_partitions];
        check_blocks((side.n, v), k, (side.n, v))?;
        let mut sums = vec![0.0; n_sums * k];
        self.scatter_group(0..self.n_partitions, side, v, k, &mut sums, None, pool);
        Ok(sums)
    }

    /// `out = (1/m) W G sums` for the training points (`a` None) or assigned points: the
    /// second half of a product, each point given the mean over partitions of its clusters'
    /// rows of `sums` (`C × k`, laid out as [`Self::cluster_sums`] returns them), weighted.
    pub fn gather_sums(
        &self,
        a: Option<&Assignment>,
        sums: &[f64],
        k: usize,
        out: &mut [f64],
        pool: &ThreadPool,
    ) -> Result<()> {
        let side = self.points(a)?;
        check_blocks(
            (self.cluster_start[self.n_partitions], sums),
            k,
            (side.n, out),
        )?;
        out.fill(0.0);
        self.gather_group(0..self.n_partitions, sums, k, side, out, pool);
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
        f: Option<&[f64]>,
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
        for g in groups {
            let sums = &mut buffer[..(self.cluster_start[g.end] - self.cluster_start[g.start]) * k];
            self.scatter_group(g.clone(), src, v, k, sums, f, pool);
            self.gather_group(g, sums, k, dst, out, pool);
        }
    }

    /// `sums` (the clusters of partitions `group`, in order, × k) = `G_ρᵀ W V` for those
    /// partitions, in parallel over partitions (each partition's sums in row order).
    #[allow(clippy::too_many_arguments)]
    fn scatter_group(
        &self,
        group: Range<usize>,
        src: Side<'_>,
        v: &[f64],
        k: usize,
        sums: &mut [f64],
        f: Option<&[f64]>,
        pool: &ThreadPool,
    ) {
        sums.fill(0.0);
        let threads = pool.current_num_threads().max(1);
        let mut parts: Vec<(usize, &mut [f64])> = Vec::with_capacity(group.len());
        let mut rest = sums;
        for rho in group {
            let (head, tail) = rest.split_at_mut(self.n_clusters[rho] as usize * k);
            parts.push((rho, head));
            rest = tail;
        }
        let per_task = parts.len().div_ceil(threads).max(1);
        pool.install(|| {
            parts
                .par_chunks_mut(per_task)
                .for_each(|task| self.scatter_task(task, src, v, k, f));
        });
    }

    /// `out += Σ_ρ W G_ρ sums_ρ` over the partitions of `group` (`sums` as
    /// [`Self::scatter_group`] fills it), in parallel over chunks of output rows, each row
    /// adding its partitions' sums in partition order.
    fn gather_group(
        &self,
        group: Range<usize>,
        sums: &[f64],
        k: usize,
        dst: Side<'_>,
        out: &mut [f64],
        pool: &ThreadPool,
    ) {
        let base = self.cluster_start[group.start];
        let rows = chunk_rows(k, dst.n, pool.current_num_threads().max(1));
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

    /// Cluster sums of `v`'s rows for the partitions of one task, row chunk by row chunk.
    fn scatter_task(
        &self,
        task: &mut [(usize, &mut [f64])],
        src: Side<'_>,
        v: &[f64],
        k: usize,
        f: Option<&[f64]>,
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
                let factors = &f[self.cluster_start[*rho]..self.cluster_start[*rho + 1]];
                for (s, &factor) in sums.chunks_exact_mut(k).zip(factors) {
                    s.iter_mut().for_each(|x| *x *= factor);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::pool;
    use crate::partition::kernel::FRESH;
    use crate::rng::{tree_rng, uniform};
    use crate::testing::{dense_partition_kernel, random_block, random_partition_kernel};

    #[test]
    fn products_match_the_dense_kernel_for_any_thread_count() {
        let (n, m) = (300, 13);
        let kernel = random_partition_kernel(n, m, 1);
        let kd = dense_partition_kernel(&kernel);
        for k in [1, 3, 17] {
            let v = random_block(n, k, 2);
            let mut out = vec![0.0; n * k];
            kernel
                .matmul(&v, k, &mut out, &pool(1).expect("pool"))
                .expect("shapes");
            for i in 0..n {
                for j in 0..k {
                    let want: f64 = (0..n).map(|l| kd[i * n + l] * v[l * k + j]).sum();
                    assert!((out[i * k + j] - want).abs() < 1e-12, "k={k} i={i}");
                }
            }
            for threads in [2, 7] {
                let mut again = vec![0.0; n * k];
                kernel
                    .matmul(&v, k, &mut again, &pool(threads).expect("pool"))
                    .expect("shapes");
                assert_eq!(again, out, "bitwise equal with {threads} threads");
            }
        }
        assert_eq!(kernel.n_clusters()[0], 1);
    }

    #[test]
    fn cross_products_use_labels_and_weights() {
        let (n, m) = (200, 9);
        let kernel = random_partition_kernel(n, m, 3);
        let na = 7;
        let mut rng = tree_rng(5, 0);
        let mut labels = Vec::new();
        let mut weights = Vec::new();
        for rho in 0..m {
            let l = kernel.n_clusters()[rho];
            for j in 0..na {
                labels.push(if j == 0 {
                    FRESH
                } else {
                    (uniform(&mut rng) * f64::from(l)) as u32
                });
                weights.push(uniform(&mut rng));
            }
        }
        let a = Assignment {
            n_points: na,
            labels: labels.clone(),
            weights: Some(weights.clone()),
        };
        // Dense K̂(A, X): weight of the partitions where the labels agree, over m.
        let mut cross = vec![0.0; na * n];
        for rho in 0..m {
            for j in 0..na {
                for i in 0..n {
                    if labels[rho * na + j] == kernel.labels()[rho * n + i] {
                        cross[j * n + i] += weights[rho * na + j] / m as f64;
                    }
                }
            }
        }
        let p = pool(2).expect("pool");
        let k = 2;
        let v = random_block(n, k, 4);
        let mut out = vec![0.0; na * k];
        kernel
            .cross_matmul(&a, &v, k, &mut out, &p)
            .expect("shapes");
        for j in 0..na {
            for c in 0..k {
                let want: f64 = (0..n).map(|i| cross[j * n + i] * v[i * k + c]).sum();
                assert!((out[j * k + c] - want).abs() < 1e-12);
            }
        }
        assert_eq!(out[0], 0.0, "a fresh point shares nothing");
        let mut cols = vec![0.0; n * na];
        kernel.cross_columns(&a, &mut cols, &p).expect("shapes");
        for i in 0..n {
            for j in 0..na {
                assert!((cols[i * na + j] - cross[j * n + i]).abs() < 1e-12);
            }
        }
    }
}
