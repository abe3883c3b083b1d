//! The new points' features `φ*` as the exact variances read them: one-hot blocks at their
//! clusters, sub-assignments of a few points, and their products `φ_iᵀ φ_j`.

use crate::partition::kernel::{Assignment, PartitionKernel, FRESH};

/// `G*ᵀ` for the points `range` of `a`: the `C × w` block of their weights at their clusters.
pub(super) fn one_hot(
    kernel: &PartitionKernel,
    a: &Assignment,
    range: std::ops::Range<usize>,
) -> Vec<f64> {
    let (n, w) = (a.n_points, range.len());
    let offsets = kernel.cluster_offsets();
    let mut out = vec![0.0; offsets[kernel.n_partitions()] * w];
    for (rho, &first) in offsets[..kernel.n_partitions()].iter().enumerate() {
        for (j, i) in range.clone().enumerate() {
            let label = a.labels[rho * n + i];
            if label != FRESH {
                let weight = a.weights.as_ref().map_or(1.0, |v| v[rho * n + i]);
                out[(first + label as usize) * w + j] += weight;
            }
        }
    }
    out
}

/// The points `range` of an assignment, as an assignment.
pub(super) fn columns(a: &Assignment, m: usize, range: std::ops::Range<usize>) -> Assignment {
    let n = a.n_points;
    let cut = |rho: usize| rho * n + range.start..rho * n + range.end;
    Assignment {
        n_points: range.len(),
        labels: (0..m).flat_map(|rho| a.labels[cut(rho)].to_vec()).collect(),
        weights: a
            .weights
            .as_ref()
            .map(|w| (0..m).flat_map(|rho| w[cut(rho)].to_vec()).collect()),
    }
}

/// `φ_iᵀ φ_j` of the assigned points (`n × n`; `‖φ_i‖²` on the diagonal): the fraction of
/// partitions that put both in the same cluster of training points, weighted.
pub(super) fn feature_products(a: &Assignment, m: usize) -> Vec<f64> {
    let n = a.n_points;
    let mut out = vec![0.0; n * n];
    for rho in 0..m {
        let labels = &a.labels[rho * n..(rho + 1) * n];
        let weight = |i: usize| a.weights.as_ref().map_or(1.0, |w| w[rho * n + i]);
        for i in 0..n {
            if labels[i] == FRESH {
                continue;
            }
            for j in 0..n {
                if labels[j] == labels[i] {
                    out[i * n + j] += weight(i) * weight(j);
                }
            }
        }
    }
    out.iter_mut().for_each(|x| *x /= m as f64);
    out
}

/// `‖φ_i‖²` of the assigned points, partition by partition (so a point's value does not
/// depend on the points beside it).
pub(super) fn feature_products_diagonal(a: &Assignment, m: usize) -> Vec<f64> {
    let n = a.n_points;
    let mut out = vec![0.0; n];
    for rho in 0..m {
        for (i, o) in out.iter_mut().enumerate() {
            if a.labels[rho * n + i] != FRESH {
                *o += a.weights.as_ref().map_or(1.0, |w| w[rho * n + i]).powi(2);
            }
        }
    }
    out.iter_mut().for_each(|x| *x /= m as f64);
    out
}
