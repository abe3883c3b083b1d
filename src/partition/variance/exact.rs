//! The exact predictive variances (the reference route of the module notes of `variance`):
//! one CG solve per point in the smaller of the clusters' and the training points' spaces, or
//! a dense factor when that space is small (`dense.rs`).

use super::dense::{dense_dual_variance, dense_variance, DENSE_CLUSTERS, DENSE_POINTS};
use super::features::{columns, feature_products, feature_products_diagonal, one_hot};
use super::{ExactVariance, FeatureGram};
use crate::error::{Error, Result};
use crate::linalg::block::col_dots;
use crate::linalg::cg;
use crate::linalg::operator::{Interruptible, InverseDiagonal, LinearOperator};
use crate::parallel::Interrupt;
use crate::partition::kernel::{Assignment, PartitionKernel};
use crate::partition::operators::{solve_system, Preconditioner};
use rayon::prelude::*;
use rayon::ThreadPool;

/// Budget of one block's CG workspace (seven `dim × width` blocks) in values: 32 Mi (256 MiB).
const BLOCK_VALUES: usize = 1 << 25;

/// Points solved together in one block CG (at most 16, the widest fixed-width product loop):
/// a width that does not depend on the number of threads, so neither do results.
fn block_width(dim: usize) -> usize {
    (BLOCK_VALUES / (7 * dim.max(1))).clamp(1, 16)
}

/// The exact predictive variances (or, with `full`, the covariance) of the assigned points
/// for `s K̂ + σ² V⁻¹` (`row_scale` = √v, the identity when None), in the smaller of two
/// spaces ([`ExactPath`]), densely when that space is small:
///
/// - Clusters (`C ≤ N`): `σ² + s (1 − ‖φ*‖²) + σ² φ*ᵀ (M + ρI)⁻¹ φ*` (module notes): with at
///   most `DENSE_CLUSTERS` clusters by the Cholesky factor of `M + ρI`, else by CG on
///   `M + ρI` with Jacobi to the relative residual `tol`, one solve per point.
/// - Training points (`C > N`): `s + σ² − bᵀ S⁻¹ b` with `S = s D K̂ D + σ² I`, `b = D k*`:
///   with at most `DENSE_POINTS` points by the Cholesky factor of `S`, else by
///   [`solve_system`] with `preconditioner`, one solve per point. CG's `bᵀ x_k` falls short
///   of `bᵀ S⁻¹ b` by `r_kᵀ S⁻¹ r_k ≤ ‖r_k‖²/σ²` (`S ⪰ σ² I`), so it runs until
///   `‖r_k‖ ≤ √tol σ²`: the variance, at least σ², is then within a relative `tol` (from
///   above) although it is the difference of two numbers of order s.
///
/// CG solves run in blocks of `block_width` points, as many in parallel as `pool` has
/// threads.
#[allow(clippy::too_many_arguments)]
pub fn exact_variance(
    kernel: &PartitionKernel,
    a: &Assignment,
    variances: (f64, f64),
    row_scale: Option<&[f64]>,
    preconditioner: Preconditioner,
    stopping: (f64, usize),
    full: bool,
    pool: &ThreadPool,
    interrupt: &Interrupt,
) -> Result<ExactVariance> {
    let (n, c) = (
        kernel.n_points(),
        kernel.cluster_offsets()[kernel.n_partitions()],
    );
    let path = match (c <= n, c <= DENSE_CLUSTERS, n <= DENSE_POINTS) {
        (true, true, _) => ExactPath::DenseClusters,
        (true, false, _) => ExactPath::Clusters,
        (false, _, true) => ExactPath::DensePoints,
        (false, _, false) => ExactPath::Points,
    };
    let run = (preconditioner, stopping, full);
    exact_variance_by(path, kernel, a, variances, row_scale, run, pool, interrupt)
}

/// How [`exact_variance`] computes: in the clusters' or the training points' space, by a
/// dense factor or by CG.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExactPath {
    DenseClusters,
    Clusters,
    DensePoints,
    Points,
}

/// [`exact_variance`] by the given path (any path gives the same values to CG's tolerance).
#[allow(clippy::too_many_arguments)]
pub fn exact_variance_by(
    path: ExactPath,
    kernel: &PartitionKernel,
    a: &Assignment,
    (scale, noise): (f64, f64),
    row_scale: Option<&[f64]>,
    (preconditioner, (tol, max_iter), full): (Preconditioner, (f64, usize), bool),
    pool: &ThreadPool,
    interrupt: &Interrupt,
) -> Result<ExactVariance> {
    kernel.check_assignment(a)?;
    if !(scale > 0.0 && noise > 0.0 && scale.is_finite() && noise.is_finite()) {
        return Err(Error::InvalidInput(
            "the variances must be positive and finite".into(),
        ));
    }
    if row_scale.is_some_and(|d| d.len() != kernel.n_points()) {
        return Err(Error::InvalidInput(
            "the row scale needs one value per training point".into(),
        ));
    }
    let (n, na, m) = (kernel.n_points(), a.n_points, kernel.n_partitions());
    let system = FeatureGram {
        kernel,
        row_scale,
        shift: noise / scale,
    };
    let clusters = system.dim();
    let products = feature_products_diagonal(a, m);
    let primal = match path {
        ExactPath::DenseClusters => {
            return dense_variance(&system, a, (scale, noise), &products, full, pool)
        }
        ExactPath::DensePoints => {
            return dense_dual_variance(kernel, a, (scale, noise), row_scale, full, pool)
        }
        ExactPath::Clusters => true,
        ExactPath::Points => false,
    };
    let width = block_width(if primal { clusters } else { n });
    let jacobi = if primal {
        Some(InverseDiagonal::new(&system.diagonal(pool)?)?)
    } else {
        None
    };
    let op = Interruptible {
        op: &system,
        interrupt,
    };
    // Per block: the variances (or covariance columns) and CG's record.
    let block = |start: usize| -> Result<(Vec<f64>, Vec<usize>, Vec<bool>)> {
        let end = (start + width).min(na);
        let w = end - start;
        if let Some(jacobi) = &jacobi {
            let rhs = one_hot(kernel, a, start..end);
            let res = cg::solve(&op, jacobi, &rhs, w, None, tol, max_iter, pool)?;
            let values = if full {
                let mut rows = vec![0.0; na * w];
                kernel.gather_sums(Some(a), &res.x, w, &mut rows, pool)?;
                rows.iter_mut().for_each(|q| *q *= noise);
                rows
            } else {
                col_dots(&rhs, &res.x, w, pool)
                    .iter()
                    .zip(&products[start..end])
                    .map(|(q, norm)| noise + scale * (1.0 - norm) + noise * q / m as f64)
                    .collect()
            };
            return Ok((values, res.iterations, res.converged));
        }
        let mut b = vec![0.0; n * w];
        kernel.cross_columns(&columns(a, m, start..end), &mut b, pool)?;
        for (i, row) in b.chunks_exact_mut(w).enumerate() {
            let di = scale * row_scale.map_or(1.0, |d| d[i]);
            row.iter_mut().for_each(|x| *x *= di);
        }
        let largest = col_dots(&b, &b, w, pool).into_iter().fold(0.0f64, f64::max);
        let relative = if largest > 0.0 {
            tol.sqrt() * noise / largest.sqrt()
        } else {
            tol
        };
        let stopping = (relative.min(tol), max_iter);
        let (s_n, pre) = ((scale, noise), preconditioner);
        let res = solve_system(
            kernel, &b, w, s_n, row_scale, pre, stopping, pool, interrupt,
        )?;
        let values = if full {
            // Column j of K*ᵀ A⁻¹ K*: s K̂(A, X) D x_j.
            let mut x = res.x;
            for (i, row) in x.chunks_exact_mut(w).enumerate() {
                let di = scale * row_scale.map_or(1.0, |d| d[i]);
                row.iter_mut().for_each(|v| *v *= di);
            }
            let mut cols = vec![0.0; na * w];
            kernel.cross_matmul(a, &x, w, &mut cols, pool)?;
            cols.iter_mut().for_each(|v| *v = -*v);
            cols
        } else {
            col_dots(&b, &res.x, w, pool)
                .iter()
                .map(|explained| scale + noise - explained)
                .collect()
        };
        Ok((values, res.iterations, res.converged))
    };
    // Waves of one block per thread bound the memory (a thread waiting inside a block's
    // parallel product could otherwise start further blocks).
    let starts: Vec<usize> = (0..na).step_by(width).collect();
    let threads = pool.current_num_threads().max(1);
    let mut out = ExactVariance {
        values: vec![0.0; if full { na * na } else { na }],
        iterations: Vec::with_capacity(na),
        converged: Vec::with_capacity(na),
    };
    for wave in starts.chunks(threads) {
        let done: Vec<Result<_>> = pool.install(|| wave.par_iter().map(|&s| block(s)).collect());
        for (&start, result) in wave.iter().zip(done) {
            let (values, iterations, converged) = result?;
            let w = iterations.len();
            if full {
                for (i, row) in values.chunks_exact(w).enumerate() {
                    out.values[i * na + start..i * na + start + w].copy_from_slice(row);
                }
            } else {
                out.values[start..start + w].copy_from_slice(&values);
            }
            out.iterations.extend(iterations);
            out.converged.extend(converged);
        }
    }
    if full {
        // Primal: σ² Φ*(M + ρI)⁻¹Φ*ᵀ off the diagonal; dual: −K*ᵀA⁻¹K*, to which the prior
        // s K̂** + σ² I is added. Both symmetrised, with the variances on the diagonal.
        let prior = if primal {
            None
        } else {
            Some(feature_products(a, m))
        };
        for i in 0..na {
            for j in 0..i {
                let mut v = 0.5 * (out.values[i * na + j] + out.values[j * na + i]);
                if let Some(p) = &prior {
                    v += scale * p[i * na + j];
                }
                out.values[i * na + j] = v;
                out.values[j * na + i] = v;
            }
            let d = out.values[i * na + i];
            out.values[i * na + i] = if primal {
                noise + scale * (1.0 - products[i]) + d
            } else {
                scale + noise + d
            };
        }
    }
    Ok(out)
}
