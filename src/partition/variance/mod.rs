//! Predictive variances of the partition-kernel GP, `s + σ² − k*ᵀ A⁻¹ k*` with
//! `A = s K̂ + σ² V⁻¹` and `k* = s K̂(X, x*)`, computed in the clusters' space.
//!
//! With `Φ` the `N × C` one-hot features scaled by `1/√m` (`K̂ = ΦΦᵀ` on the training points,
//! `C` clusters over all partitions), `φ*` a new point's features (weighted; `‖φ*‖² < 1` when
//! it is alone in some partition), `M = Φᵀ V Φ` and `ρ = σ²/s`, Woodbury gives
//! `k*ᵀ A⁻¹ k* = s ‖φ*‖² − s ρ φ*ᵀ (M + ρI)⁻¹ φ*`, so
//!
//! `var(x*) = σ² + s (1 − ‖φ*‖²) + s ρ φ*ᵀ (M + ρI)⁻¹ φ*`,
//!
//! a sum of non-negative terms: no cancellation between the prior `s` and what the data
//! explain (in the form `s + σ² − k*ᵀ A⁻¹ k*`, CG's tolerance on `A⁻¹ k*` is an absolute error
//! of order `tol · s` in a variance that can be as small as σ² ≈ `1e-3 s`), and the two
//! new points' covariance is `s ρ φ_iᵀ (M + ρI)⁻¹ φ_j` off the diagonal. Two routes:
//!
//! - [`exact_variance`]: one CG solve per point, in the clusters' space as above when
//!   `C ≤ N`, else in the training points' space (`s + σ² − k*ᵀ A⁻¹ k*`, CG run far enough
//!   that the cancellation costs at most a relative `tol`); points in blocks solved in
//!   parallel. The reference. Small systems are formed and factored densely instead (exact
//!   to rounding): `M + ρI` with at most 2,048 clusters (and no more than points), `S` with at
//!   most 8,192 points (and more clusters).
//! - [`lanczos_factors`]: LOVE (Pleiss et al. 2018, "Constant-time predictive distributions
//!   for Gaussian processes"): one block Lanczos decomposition of `M` serves every new point.
//!   With `P` an orthonormal basis of the Krylov space `K(M, U)` (`C × L`) and `Y = M P`:
//!   - upper bound: `X = D Φ P` (`D = diag(√v)`) spans `K(D K̂ D, D Φ U)` in the space of the
//!     training points; the Galerkin approximation of `k*ᵀ A⁻¹ k*` on it is
//!     `s² (Yᵀφ*)ᵀ (s YᵀY + σ² PᵀY)⁻¹ (Yᵀφ*)`, the maximum of `2 xᵀ b − xᵀ S x` (`S = D A D`,
//!     `b = D k*`) over the subspace instead of over all of `R^N`: it never exceeds the exact
//!     value, so the variance it gives never falls below the exact one (LOVE's route).
//!   - lower bound: the same on `φ*ᵀ (M + ρI)⁻¹ φ*` over `span P` in the clusters' space:
//!     `(Pᵀφ*)ᵀ (PᵀMP + ρI)⁻¹ (Pᵀφ*)` never exceeds the exact quadratic form, so the variance
//!     it gives never exceeds the exact one.
//!
//!   Both gaps shrink monotonically as the space grows (nested spaces) and close when it
//!   holds every `φ*`. The projected systems are factored by Cholesky (the upper bound's
//!   shifted by `1e-13` of its largest diagonal, which keeps it an upper bound).

use super::kernel::{Assignment, PartitionKernel, FRESH};
use super::operators::{solve_system, KernelSystem, Preconditioner};
use crate::error::{Error, Result};
use crate::linalg::block::{col_dots, for_rows_mut, gram};
use crate::linalg::cg;
use crate::linalg::cholesky::Cholesky;
use crate::linalg::lanczos::krylov_basis;
use crate::linalg::operator::{check_block, Interruptible, InverseDiagonal, LinearOperator};
use crate::parallel::Interrupt;
use rayon::prelude::*;
use rayon::ThreadPool;

/// `u ↦ (Φᵀ V Φ + shift I) u = ((1/m) Gᵀ V G + shift I) u` on the clusters of all partitions
/// (`G` the one-hot labels of the training points, `V = diag(row_scale²)`, the identity when
/// None).
#[derive(Clone, Copy)]
pub struct FeatureGram<'a> {
    pub kernel: &'a PartitionKernel,
    pub row_scale: Option<&'a [f64]>,
    pub shift: f64,
}

impl FeatureGram<'_> {
    /// The diagonal: each cluster's weight (its size without weights) over m, plus the shift.
    pub fn diagonal(&self, pool: &ThreadPool) -> Result<Vec<f64>> {
        let n = self.kernel.n_points();
        let v: Vec<f64> = match self.row_scale {
            Some(d) => d.iter().map(|x| x * x).collect(),
            None => vec![1.0; n],
        };
        let m = self.kernel.n_partitions() as f64;
        let mass = self.kernel.cluster_sums(None, &v, 1, pool)?;
        Ok(mass.iter().map(|w| w / m + self.shift).collect())
    }
}

impl LinearOperator for FeatureGram<'_> {
    fn dim(&self) -> usize {
        self.kernel.cluster_offsets()[self.kernel.n_partitions()]
    }

    fn apply(&self, u: &[f64], k: usize, out: &mut [f64], pool: &ThreadPool) -> Result<()> {
        check_block(self.dim(), u, k, out)?;
        let n = self.kernel.n_points();
        let mut rows = vec![0.0; n * k];
        self.kernel.gather_sums(None, u, k, &mut rows, pool)?;
        if let Some(d) = self.row_scale {
            rows.chunks_exact_mut(k)
                .zip(d)
                .for_each(|(row, &di)| row.iter_mut().for_each(|x| *x *= di * di));
        }
        out.copy_from_slice(&self.kernel.cluster_sums(None, &rows, k, pool)?);
        if self.shift != 0.0 {
            out.iter_mut()
                .zip(u)
                .for_each(|(o, &x)| *o += self.shift * x);
        }
        Ok(())
    }
}

/// Shift of the projected system of the upper bound, relative to its largest diagonal.
const SHIFT: f64 = 1e-13;

/// The two LOVE factors of [`lanczos_factors`] (`clusters × rank`, row-major): a gather
/// ([`PartitionKernel::gather_sums`], the mean over the partitions of a point's clusters' rows)
/// gives each new point a row whose squared norm is, for `upper`, the Galerkin approximation
/// of `k*ᵀ A⁻¹ k*` (so `s + σ² − ‖row‖²` bounds the variance from above), for `lower`, that of
/// `φ*ᵀ (M + ρI)⁻¹ φ*` (so `σ² + s (1 − ‖φ*‖²) + s ρ ‖row‖²` bounds it from below).
#[derive(Debug, Clone)]
pub struct LanczosFactors {
    pub clusters: usize,
    pub rank: usize,
    pub upper: Vec<f64>,
    pub lower: Vec<f64>,
}

/// `scale · B L⁻ᵀ` for the `n × len` block `B` and the Cholesky factor `L` of the symmetric
/// positive definite `len × len` matrix `h`.
fn inverse_cholesky_factor(
    basis: &[f64],
    h: &[f64],
    len: usize,
    scale: f64,
    pool: &ThreadPool,
) -> Result<Vec<f64>> {
    let packed: Vec<f64> = (0..len)
        .flat_map(|i| h[i * len..=i * len + i].to_vec())
        .collect();
    let factor = Cholesky::factor(packed, len, Some(pool))?;
    let mut out = basis.to_vec();
    // Row x becomes x L⁻ᵀ: L x_newᵀ = xᵀ.
    for_rows_mut(&mut out, len, pool, |rows| {
        for row in rows.chunks_exact_mut(len) {
            factor.forward_solve(row);
            row.iter_mut().for_each(|x| *x *= scale);
        }
    });
    Ok(out)
}

/// The LOVE factors (module notes) for the system whose `M` is `gram_op` (`C × C`, no shift),
/// from a block Lanczos decomposition of dimension `dim` in blocks of `b` started at the
/// `C × b` block `start` (`seed` draws replacements for dependent columns), for signal and
/// noise variances `(s, σ²)` and `m` partitions.
#[allow(clippy::too_many_arguments)]
pub fn lanczos_factors(
    gram_op: &dyn LinearOperator,
    start: &[f64],
    b: usize,
    dim: usize,
    seed: u64,
    (scale, noise): (f64, f64),
    n_partitions: usize,
    pool: &ThreadPool,
) -> Result<LanczosFactors> {
    if !(scale > 0.0 && noise > 0.0 && scale.is_finite() && noise.is_finite()) {
        return Err(Error::InvalidInput(
            "the variances must be positive and finite".into(),
        ));
    }
    let basis = krylov_basis(gram_op, start, b, dim, seed, pool)?;
    let (c, len) = (basis.n, basis.len);
    let p_y = gram(&basis.q, len, &basis.aq, len, pool);
    let y_y = gram(&basis.aq, len, &basis.aq, len, pool);
    let t: Vec<f64> = (0..len * len)
        .map(|at| 0.5 * (p_y[at] + p_y[(at % len) * len + at / len]))
        .collect();
    let root_m = (n_partitions as f64).sqrt();
    // H is singular in directions of P that M annihilates (a space of more clusters than
    // points, say): a shift of 1e-13 of its largest diagonal (far above its rounding, far
    // below what the bound resolves) makes it definite, and a larger H only lowers the
    // explained part, so the variance stays an upper bound.
    let mut h: Vec<f64> = y_y
        .iter()
        .zip(&t)
        .map(|(yy, t)| scale * yy + noise * t)
        .collect();
    let shift = SHIFT * (0..len).map(|i| h[i * len + i]).fold(0.0f64, f64::max);
    (0..len).for_each(|i| h[i * len + i] += shift.max(f64::MIN_POSITIVE));
    let upper = inverse_cholesky_factor(&basis.aq, &h, len, scale * root_m, pool)?;
    let rho = noise / scale;
    let mut shifted = t;
    (0..len).for_each(|i| shifted[i * len + i] += rho);
    let lower = inverse_cholesky_factor(&basis.q, &shifted, len, root_m, pool)?;
    Ok(LanczosFactors {
        clusters: c,
        rank: len,
        upper,
        lower,
    })
}

/// Budget of one block's CG workspace (seven `dim × width` blocks) in values: 32 Mi (256 MiB).
const BLOCK_VALUES: usize = 1 << 25;

/// Points solved together in one block CG (at most 16, the widest fixed-width product loop):
/// a width that does not depend on the number of threads, so neither do results.
fn block_width(dim: usize) -> usize {
    (BLOCK_VALUES / (7 * dim.max(1))).clamp(1, 16)
}

/// What [`exact_variance`] returns: the predictive variance of each point (`n`), or the
/// covariance (`n × n`, row-major), and CG's iterations and convergence per point.
#[derive(Debug, Clone)]
pub struct ExactVariance {
    pub values: Vec<f64>,
    pub iterations: Vec<usize>,
    pub converged: Vec<bool>,
}

/// `G*ᵀ` for the points `range` of `a`: the `C × w` block of their weights at their clusters.
fn one_hot(kernel: &PartitionKernel, a: &Assignment, range: std::ops::Range<usize>) -> Vec<f64> {
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
fn columns(a: &Assignment, m: usize, range: std::ops::Range<usize>) -> Assignment {
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
fn feature_products(a: &Assignment, m: usize) -> Vec<f64> {
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

/// The exact predictive variances (or, with `full`, the covariance) of the assigned points
/// for `s K̂ + σ² V⁻¹` (`row_scale` = √v, the identity when None), in the smaller of two
/// spaces ([`ExactPath`]), densely when that space is small:
///
/// - Clusters (`C ≤ N`): `σ² + s (1 − ‖φ*‖²) + σ² φ*ᵀ (M + ρI)⁻¹ φ*` (module notes): with at
///   most [`DENSE_CLUSTERS`] clusters by the Cholesky factor of `M + ρI`, else by CG on
///   `M + ρI` with Jacobi to the relative residual `tol`, one solve per point.
/// - Training points (`C > N`): `s + σ² − bᵀ S⁻¹ b` with `S = s D K̂ D + σ² I`, `b = D k*`:
///   with at most [`DENSE_POINTS`] points by the Cholesky factor of `S`, else by
///   [`solve_system`] with `preconditioner`, one solve per point. CG's `bᵀ x_k` falls short
///   of `bᵀ S⁻¹ b` by `r_kᵀ S⁻¹ r_k ≤ ‖r_k‖²/σ²` (`S ⪰ σ² I`), so it runs until
///   `‖r_k‖ ≤ √tol σ²`: the variance, at least σ², is then within a relative `tol` (from
///   above) although it is the difference of two numbers of order s.
///
/// CG solves run in blocks of [`block_width`] points, as many in parallel as `pool` has
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

/// At most this many clusters (and no more than training points), the exact route factors
/// `M + ρI` densely: `C / 16` block products and `C³/3` flops, whatever the number of new
/// points (so that a point's variance does not depend on the points predicted with it).
const DENSE_CLUSTERS: usize = 2048;

/// [`exact_variance`] through the Cholesky factor of `M + ρI` formed densely (`C / 16` block
/// products on the identity): `q = ‖L⁻¹ φ*‖²`, exact to rounding.
fn dense_variance(
    system: &FeatureGram<'_>,
    a: &Assignment,
    (scale, noise): (f64, f64),
    products: &[f64],
    full: bool,
    pool: &ThreadPool,
) -> Result<ExactVariance> {
    let (c, na, m) = (system.dim(), a.n_points, system.kernel.n_partitions());
    let mut matrix = vec![0.0; c * c];
    for start in (0..c).step_by(16) {
        let w = (c - start).min(16);
        let mut unit = vec![0.0; c * w];
        (0..w).for_each(|j| unit[(start + j) * w + j] = 1.0);
        let mut out = vec![0.0; c * w];
        system.apply(&unit, w, &mut out, pool)?;
        for (i, row) in out.chunks_exact(w).enumerate() {
            matrix[i * c + start..i * c + start + w].copy_from_slice(row);
        }
    }
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
const DENSE_POINTS: usize = 8192;

/// [`exact_variance`] through the Cholesky factor `L` of `S` formed densely:
/// `s + σ² − ‖L⁻¹ b‖²` with `b = D k*`, to rounding (relative error about `ε s / (σ² λ_min)`,
/// far below CG's).
fn dense_dual_variance(
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
    for start in (0..n).step_by(16) {
        let w = (n - start).min(16);
        let mut unit = vec![0.0; n * w];
        (0..w).for_each(|j| unit[(start + j) * w + j] = 1.0);
        let mut out = vec![0.0; n * w];
        system.apply(&unit, w, &mut out, pool)?;
        // Column start + j, rows i ≥ start + j, into the packed lower triangle.
        for (i, row) in out.chunks_exact(w).enumerate() {
            for (j, &v) in row.iter().enumerate() {
                let col = start + j;
                if i >= col {
                    packed[i * (i + 1) / 2 + col] = v;
                }
            }
        }
    }
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

/// `‖φ_i‖²` of the assigned points, partition by partition (so a point's value does not
/// depend on the points beside it).
fn feature_products_diagonal(a: &Assignment, m: usize) -> Vec<f64> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::pool;
    use crate::rng::{tree_rng, uniform};
    use crate::testing::{
        dense_partition_kernel, random_block, random_partition_kernel, solve_dense,
    };

    /// New points: random labels of every partition, a few alone (FRESH), with weights.
    fn new_points(kernel: &PartitionKernel, na: usize, seed: u64) -> Assignment {
        let mut rng = tree_rng(seed, 0);
        let mut labels = Vec::new();
        let mut weights = Vec::new();
        for &l in kernel.n_clusters() {
            for j in 0..na {
                labels.push(if j % 7 == 3 {
                    crate::partition::kernel::FRESH
                } else {
                    (uniform(&mut rng) * f64::from(l)) as u32
                });
                weights.push(0.5 + 0.5 * uniform(&mut rng));
            }
        }
        Assignment {
            n_points: na,
            labels,
            weights: Some(weights),
        }
    }

    /// The predictive covariance `s K** + σ² I − K*ᵀ A⁻¹ K*` densely (`A = s K̂ + σ² V⁻¹`,
    /// `K** = φφᵀ + diag(1 − ‖φ‖²)`), and `‖φ‖²` per point.
    fn dense_covariance(
        kernel: &PartitionKernel,
        a: &Assignment,
        (s, noise): (f64, f64),
        v: Option<&[f64]>,
    ) -> (Vec<f64>, Vec<f64>) {
        let (n, na, m) = (kernel.n_points(), a.n_points, kernel.n_partitions());
        let mut system: Vec<f64> = dense_partition_kernel(kernel)
            .iter()
            .map(|k| s * k)
            .collect();
        for i in 0..n {
            system[i * n + i] += noise / v.map_or(1.0, |v| v[i]);
        }
        let mut cross = vec![0.0; n * na];
        kernel
            .cross_columns(a, &mut cross, &pool(1).expect("pool"))
            .expect("shapes");
        let cross: Vec<f64> = cross.iter().map(|k| s * k).collect();
        let column = |j: usize| -> Vec<f64> { (0..n).map(|l| cross[l * na + j]).collect() };
        let z: Vec<Vec<f64>> = (0..na)
            .map(|j| solve_dense(system.clone(), column(j), n))
            .collect();
        let weight = |rho: usize, i: usize| {
            let fresh = a.labels[rho * na + i] == FRESH;
            if fresh {
                0.0
            } else {
                a.weights.as_ref().map_or(1.0, |w| w[rho * na + i])
            }
        };
        let norm2: Vec<f64> = (0..na)
            .map(|i| (0..m).map(|rho| weight(rho, i).powi(2)).sum::<f64>() / m as f64)
            .collect();
        let mut cov = vec![0.0; na * na];
        for i in 0..na {
            for j in 0..na {
                let shared: f64 = (0..m)
                    .filter(|&rho| a.labels[rho * na + i] == a.labels[rho * na + j])
                    .map(|rho| weight(rho, i) * weight(rho, j))
                    .sum::<f64>()
                    / m as f64;
                let prior = if i == j { 1.0 + noise / s } else { shared };
                let explained: f64 = (0..n).map(|l| cross[l * na + i] * z[j][l]).sum();
                cov[i * na + j] = s * prior - explained;
            }
        }
        (cov, norm2)
    }

    #[test]
    fn cluster_sums_and_gathers_compose_to_products_and_add_over_row_blocks() {
        let (n, m, k) = (150, 6, 3);
        let kernel = random_partition_kernel(n, m, 11);
        let p = pool(2).expect("pool");
        let v = random_block(n, k, 12);
        let sums = kernel.cluster_sums(None, &v, k, &p).expect("shapes");
        let mut out = vec![0.0; n * k];
        kernel
            .gather_sums(None, &sums, k, &mut out, &p)
            .expect("shapes");
        let mut want = vec![0.0; n * k];
        kernel.matmul(&v, k, &mut want, &p).expect("shapes");
        assert_eq!(out, want, "the two halves of a product are the product");
        // The training points as two assigned blocks: their sums add up to the whole.
        let block = |range: std::ops::Range<usize>| Assignment {
            n_points: range.len(),
            labels: (0..m)
                .flat_map(|rho| {
                    kernel.labels()[rho * n + range.start..rho * n + range.end].to_vec()
                })
                .collect(),
            weights: None,
        };
        let (a, b) = (block(0..70), block(70..n));
        let sa = kernel
            .cluster_sums(Some(&a), &v[..70 * k], k, &p)
            .expect("shapes");
        let sb = kernel
            .cluster_sums(Some(&b), &v[70 * k..], k, &p)
            .expect("shapes");
        for ((x, y), z) in sa.iter().zip(&sb).zip(&sums) {
            assert!((x + y - z).abs() < 1e-12);
        }
        let mut rows_b = vec![0.0; (n - 70) * k];
        kernel
            .gather_sums(Some(&b), &sums, k, &mut rows_b, &p)
            .expect("shapes");
        assert_eq!(rows_b, want[70 * k..]);
        assert!(kernel.cluster_sums(None, &v[1..], k, &p).is_err());
        assert!(kernel
            .gather_sums(None, &sums[1..], k, &mut out, &p)
            .is_err());
    }

    #[test]
    fn every_exact_path_matches_a_dense_covariance_for_any_thread_count() {
        // 120 points and 8 partitions of at most 6 clusters: the clusters' space; 30 points
        // and 12 partitions: more clusters than points, the training points' space. Each by
        // its dense factor and by CG.
        let cases = [
            (120, 8, 23, [ExactPath::DenseClusters, ExactPath::Clusters]),
            (30, 12, 19, [ExactPath::DensePoints, ExactPath::Points]),
        ];
        for (n, m, na, paths) in cases {
            let kernel = random_partition_kernel(n, m, 21);
            let a = new_points(&kernel, na, 22);
            let v: Vec<f64> = random_block(n, 1, 23)
                .iter()
                .map(|x| 0.5 + x.abs())
                .collect();
            let root: Vec<f64> = v.iter().map(|x| x.sqrt()).collect();
            let stop = Interrupt::default();
            let (s, noise) = (1.3, 0.02);
            for weights in [None, Some(&v[..])] {
                let d = weights.map(|_| &root[..]);
                let (want, _) = dense_covariance(&kernel, &a, (s, noise), weights);
                for path in paths {
                    let run = |threads: usize, full: bool| {
                        let p = pool(threads).expect("pool");
                        let how = (Preconditioner::Partition, (1e-12, 3000), full);
                        exact_variance_by(path, &kernel, &a, (s, noise), d, how, &p, &stop)
                            .expect("solve")
                    };
                    let diag = run(1, false);
                    assert!(diag.converged.iter().all(|&c| c));
                    for j in 0..na {
                        let want = want[j * na + j];
                        assert!((diag.values[j] - want).abs() < 1e-9 * want, "{path:?} {j}");
                    }
                    let full = run(2, true);
                    for (got, want) in full.values.iter().zip(&want) {
                        assert!((got - want).abs() < 1e-9, "{path:?}: {got} vs {want}");
                    }
                    for threads in [2, 7] {
                        assert_eq!(run(threads, false).values, diag.values, "{threads} threads");
                    }
                }
            }
        }
    }

    #[test]
    fn lanczos_bounds_bracket_the_exact_variance_and_close() {
        let (n, m) = (200, 5);
        let kernel = random_partition_kernel(n, m, 31);
        let a = new_points(&kernel, 17, 32);
        let (s, noise) = (0.8, 0.05);
        let (want, norm2) = dense_covariance(&kernel, &a, (s, noise), None);
        let p = pool(2).expect("pool");
        let gram_op = FeatureGram {
            kernel: &kernel,
            row_scale: None,
            shift: 0.0,
        };
        let sizes: Vec<f64> = kernel
            .cluster_sizes()
            .iter()
            .map(|&c| f64::from(c))
            .collect();
        let c = gram_op.dim();
        let mut previous = (vec![f64::INFINITY; 17], vec![0.0; 17]);
        for (b, dim) in [(1, 1), (1, 3), (2, 6), (3, 9), (1, c)] {
            let start: Vec<f64> = sizes
                .iter()
                .enumerate()
                .flat_map(|(i, &x)| (0..b).map(move |j| x * (1.0 + (i * j) as f64)))
                .collect();
            let f =
                lanczos_factors(&gram_op, &start, b, dim, 1, (s, noise), m, &p).expect("factor");
            let rows = |factor: &[f64], r: usize| {
                let mut rows = vec![0.0; 17 * r];
                kernel
                    .gather_sums(Some(&a), factor, r, &mut rows, &p)
                    .expect("shapes");
                rows.chunks_exact(r)
                    .map(|x| x.iter().map(|v| v * v).sum::<f64>())
                    .collect::<Vec<_>>()
            };
            let up = rows(&f.upper, f.rank);
            let lo = rows(&f.lower, f.rank);
            for j in 0..17 {
                let exact = want[j * 17 + j];
                let upper = s + noise - up[j];
                let lower = noise + s * (1.0 - norm2[j]) + noise * lo[j];
                assert!(
                    lower <= exact + 1e-10 && exact <= upper + 1e-10,
                    "{lower} {exact} {upper}"
                );
                assert!(upper <= previous.0[j] + 1e-10 && lower >= previous.1[j] - 1e-10);
                if dim == c {
                    assert!(upper - lower < 1e-9, "the whole space: exact");
                }
                previous.0[j] = upper;
                previous.1[j] = lower;
            }
        }
    }
}
