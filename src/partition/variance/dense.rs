//! The exact variances of small systems, formed and factored densely (exact to rounding): in
//! the clusters' space (`M + ρI`) or in the training points' (`S = s D K̂ D + σ² I`).

use super::features::{columns, feature_products};
use super::{inverse_cholesky_factor, ExactVariance, FeatureGram};
use crate::error::Result;
use crate::linalg::cholesky::Cholesky;
use crate::linalg::operator::LinearOperator;
use crate::partition::kernel::{Assignment, PartitionKernel};
use crate::partition::operators::KernelSystem;
use rayon::prelude::*;
use rayon::ThreadPool;

/// At most this many clusters (and no more than training points), the exact route factors
/// `M + ρI` densely: `C / 16` block products and `C³/3` flops, whatever the number of new
/// points (so that a point's variance does not depend on the points predicted with it).
pub(super) const DENSE_CLUSTERS: usize = 2048;

/// [`super::exact_variance`] through the Cholesky factor of `M + ρI` formed densely (`C / 16`
/// block products on the identity): `q = ‖L⁻¹ φ*‖²`, exact to rounding.
pub(super) fn dense_variance(
    system: &FeatureGram<'_>,
    a: &Assignment,
    (scale, noise): (f64, f64),
    products: &[f64],
    full: bool,
    pool: &ThreadPool,
) -> Result<ExactVariance> {
    let (c, na, m) = (system.dim(), a.n_points, system.kernel.n_partitions());
    let mut matrix = vec![0.0; c * c];
    for_each_column_block(system, pool, |start, w, out| {
        for (i, row) in out.chunks_exact(w).enumerate() {
            matrix[i * c + start..i * c + start + w].copy_from_slice(row);
        }
    })?;
    let sym: Vec<f64> = (0..c * c)
        .map(|at| 0.5 * (matrix[at] + matrix[(at % c) * c + at / c]))
        .collect();
    let mut identity = vec![0.0; c * c];
    (0..c).for_each(|i| identity[i * c + i] = 1.0);
    let factor = inverse_cholesky_factor(&identity, &sym, c, (m as f64).sqrt(), pool)?;
    let mut rows = vec![0.0; na * c];
    system
        .kernel
        .gather_sums(Some(a), &factor, c, &mut rows, pool)?;
    let base = |i: usize| noise + scale * (1.0 - products[i]);
    let values = if full {
        let mut cov = vec![0.0; na * na];
        for i in 0..na {
            for j in 0..=i {
                let q: f64 =
                    crate::linalg::dot(&rows[i * c..(i + 1) * c], &rows[j * c..(j + 1) * c]);
                let v = noise * q + if i == j { base(i) } else { 0.0 };
                cov[i * na + j] = v;
                cov[j * na + i] = v;
            }
        }
        cov
    } else {
        (0..na)
            .map(|i| {
                let row = &rows[i * c..(i + 1) * c];
                base(i) + noise * crate::linalg::dot(row, row)
            })
            .collect()
    };
    Ok(ExactVariance {
        values,
        iterations: vec![0; na],
        converged: vec![true; na],
    })
}

/// With more clusters than training points and at most this many points, the exact route
/// factors `S = s D K̂ D + σ² I` densely: `N / 16` block products, `N³/6` multiply-adds, then
/// `N²/2` per new point.
pub(super) const DENSE_POINTS: usize = 8192;

/// [`super::exact_variance`] through the Cholesky factor `L` of `S` formed densely:
/// `s + σ² − ‖L⁻¹ b‖²` with `b = D k*`, to rounding (relative error about `ε s / (σ² λ_min)`,
/// far below CG's).
pub(super) fn dense_dual_variance(
    kernel: &PartitionKernel,
    a: &Assignment,
    (scale, noise): (f64, f64),
    row_scale: Option<&[f64]>,
    full: bool,
    pool: &ThreadPool,
) -> Result<ExactVariance> {
    let (n, na, m) = (kernel.n_points(), a.n_points, kernel.n_partitions());
    let system = KernelSystem {
        kernel,
        scale,
        noise,
        row_scale,
    };
    let mut packed = vec![0.0; n * (n + 1) / 2];
    for_each_column_block(&system, pool, |start, w, out| {
        // Column start + j, rows i ≥ start + j, into the packed lower triangle.
        for (i, row) in out.chunks_exact(w).enumerate() {
            for (j, &v) in row.iter().enumerate() {
                let col = start + j;
                if i >= col {
                    packed[i * (i + 1) / 2 + col] = v;
                }
            }
        }
    })?;
    let factor = Cholesky::factor(packed, n, Some(pool))?;
    // Each new point's L⁻¹ D k*, in blocks of 256 points (N × 256 values at a time).
    let mut solved: Vec<Vec<f64>> = Vec::with_capacity(na);
    for start in (0..na).step_by(256) {
        let end = (start + 256).min(na);
        let w = end - start;
        let mut b = vec![0.0; n * w];
        kernel.cross_columns(&columns(a, m, start..end), &mut b, pool)?;
        let block: Vec<Vec<f64>> = pool.install(|| {
            (0..w)
                .into_par_iter()
                .map(|j| {
                    let mut x: Vec<f64> = (0..n)
                        .map(|i| scale * row_scale.map_or(1.0, |d| d[i]) * b[i * w + j])
                        .collect();
                    factor.forward_solve(&mut x);
                    x
                })
                .collect()
        });
        solved.extend(block);
    }
    let values = if full {
        let features = feature_products(a, m);
        let mut cov = vec![0.0; na * na];
        for i in 0..na {
            for j in 0..=i {
                let prior = if i == j { 1.0 } else { features[i * na + j] };
                let v = scale * prior - crate::linalg::dot(&solved[i], &solved[j])
                    + if i == j { noise } else { 0.0 };
                cov[i * na + j] = v;
                cov[j * na + i] = v;
            }
        }
        cov
    } else {
        solved
            .iter()
            .map(|x| scale + noise - crate::linalg::dot(x, x))
            .collect()
    };
    Ok(ExactVariance {
        values,
        iterations: vec![0; na],
        converged: vec![true; na],
    })
}

/// The dense matrix of `op` (`dim × dim`) a block of 16 columns at a time: calls
/// `column_block(start, w, out)` with `out` (`dim × w`, row-major) the columns
/// `start..start + w`, `op` applied to those unit vectors.
fn for_each_column_block(
    op: &dyn LinearOperator,
    pool: &ThreadPool,
    mut column_block: impl FnMut(usize, usize, &[f64]),
) -> Result<()> {
    let dim = op.dim();
    for start in (0..dim).step_by(16) {
        let w = (dim - start).min(16);
        let mut unit = vec![0.0; dim * w];
        (0..w).for_each(|j| unit[(start + j) * w + j] = 1.0);
        let mut out = vec![0.0; dim * w];
        op.apply(&unit, w, &mut out, pool)?;
        column_block(start, w, &out);
    }
    Ok(())
}
