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
//!
//! Files: `exact.rs` (the exact route), `dense.rs` (small systems factored densely),
//! `features.rs` (the new points' `φ*`), `lanczos.rs` (the LOVE factors), `tests.rs`.

mod dense;
mod exact;
mod features;
mod lanczos;

#[cfg(test)]
mod tests;

use super::kernel::PartitionKernel;
use crate::error::Result;
use crate::linalg::block::for_rows_mut;
use crate::linalg::cholesky::Cholesky;
use crate::linalg::operator::{check_block, LinearOperator};
use rayon::ThreadPool;

pub use exact::{exact_variance, exact_variance_by, ExactPath};
pub use lanczos::{lanczos_factors, LanczosFactors};

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

/// What [`exact_variance`] returns: the predictive variance of each point (`n`), or the
/// covariance (`n × n`, row-major), and CG's iterations and convergence per point.
#[derive(Debug, Clone)]
pub struct ExactVariance {
    pub values: Vec<f64>,
    pub iterations: Vec<usize>,
    pub converged: Vec<bool>,
}

/// `scale · B L⁻ᵀ` for the `n × len` block `B` and the Cholesky factor `L` of the symmetric
/// positive definite `len × len` matrix `h`.
pub(super) fn inverse_cholesky_factor(
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
