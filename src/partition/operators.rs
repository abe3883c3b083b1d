//! The partition kernel as the linear operators that the solvers need.
//!
//! - [`KernelSystem`]: `s K̂ + σ² I`, the GP's covariance of the targets.
//! - [`ClusterPreconditioner`]: `(1/m) Σ_ρ (s K_ρ + σ² I)⁻¹`, the preconditioner of Davies &
//!   Ghahramani (eq. 9), each inverse in closed form (eq. 10, checked below).
//! - [`CentredKernel`]: `H s K̂ H` with `H = I − 11ᵀ/N`, the centred kernel of kernel PCA,
//!   centring applied matrix-free (column means subtracted before and after the product).
//!
//! Closed form of one partition's inverse. After permuting points by cluster, `s K_ρ + σ² I`
//! is block diagonal with blocks `s J_n + σ² I_n` (`J_n` the n × n matrix of ones, n the
//! cluster's size). Since `J_n² = n J_n`, Sherman–Morrison gives
//! `(s J_n + σ² I)⁻¹ = (1/σ²) (I − s J_n / (σ² + s n))`, so for point i in cluster c:
//! `[(s K_ρ + σ² I)⁻¹ v]_i = v_i/σ² − s (Σ_{j∈c} v_j) / (σ² (σ² + s n_c))`.
//! With s = 1 this is the form in `algorithm-notes.md`, `v_i/σ − Σ_{j∈c} v_j / (σ(|c| + σ))`,
//! where that σ is the noise variance. Averaging over partitions costs one product.

use crate::error::{Error, Result};
use crate::linalg::block::{col_sums, for_rows_mut, zip_rows};
use crate::linalg::operator::{check_block, LinearOperator};
use crate::partition::kernel::PartitionKernel;
use rayon::ThreadPool;

/// Checks a signal variance `s > 0` and a noise variance `σ² > 0`.
pub fn check_variances(scale: f64, noise: f64) -> Result<()> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::InvalidParameter {
            name: "signal_variance",
            reason: format!("must be a positive number, got {scale}"),
        });
    }
    if !(noise.is_finite() && noise > 0.0) {
        return Err(Error::InvalidParameter {
            name: "noise_variance",
            reason: format!("must be a positive number, got {noise}"),
        });
    }
    Ok(())
}

/// `v ↦ (s K̂ + σ² I) v`.
pub struct KernelSystem<'a> {
    pub kernel: &'a PartitionKernel,
    pub scale: f64,
    pub noise: f64,
}

impl LinearOperator for KernelSystem<'_> {
    fn dim(&self) -> usize {
        self.kernel.n_points()
    }

    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], pool: &ThreadPool) -> Result<()> {
        check_block(self.dim(), v, k, out)?;
        self.kernel.matmul(v, k, out, pool)?;
        let (s, noise) = (self.scale, self.noise);
        zip_rows(out, k, v, k, pool, |out, v| {
            out.iter_mut()
                .zip(v)
                .for_each(|(o, &x)| *o = s * *o + noise * x);
        });
        Ok(())
    }
}

/// `v ↦ (1/m) Σ_ρ (s K_ρ + σ² I)⁻¹ v` (eq. 9–10; see the module notes).
pub struct ClusterPreconditioner<'a> {
    pub kernel: &'a PartitionKernel,
    pub scale: f64,
    pub noise: f64,
}

impl LinearOperator for ClusterPreconditioner<'_> {
    fn dim(&self) -> usize {
        self.kernel.n_points()
    }

    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], pool: &ThreadPool) -> Result<()> {
        check_block(self.dim(), v, k, out)?;
        let (s, noise) = (self.scale, self.noise);
        let per_cluster = move |size: u32| 1.0 / (noise + s * f64::from(size));
        self.kernel
            .matmul_by_cluster_size(v, k, out, &per_cluster, pool)?;
        let m = self.kernel.n_partitions() as f64;
        let c = s / (m * noise);
        zip_rows(out, k, v, k, pool, |out, v| {
            out.iter_mut()
                .zip(v)
                .for_each(|(o, &x)| *o = x / noise - c * *o);
        });
        Ok(())
    }
}

/// `v ↦ H (s K̂) H v`, `H = I − 11ᵀ/N`.
pub struct CentredKernel<'a> {
    pub kernel: &'a PartitionKernel,
    pub scale: f64,
}

impl LinearOperator for CentredKernel<'_> {
    fn dim(&self) -> usize {
        self.kernel.n_points()
    }

    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], pool: &ThreadPool) -> Result<()> {
        check_block(self.dim(), v, k, out)?;
        let mut centred = v.to_vec();
        subtract_col_means(&mut centred, k, pool);
        self.kernel.matmul(&centred, k, out, pool)?;
        subtract_col_means(out, k, pool);
        let s = self.scale;
        for_rows_mut(out, k, pool, |rows| rows.iter_mut().for_each(|x| *x *= s));
        Ok(())
    }
}

/// Subtracts each column's mean (computed by a fixed-order reduction).
pub fn subtract_col_means(a: &mut [f64], k: usize, pool: &ThreadPool) {
    let n = (a.len() / k.max(1)).max(1) as f64;
    let means: Vec<f64> = col_sums(a, k, pool).iter().map(|s| s / n).collect();
    for_rows_mut(a, k, pool, |rows| {
        for row in rows.chunks_exact_mut(k) {
            row.iter_mut().zip(&means).for_each(|(x, m)| *x -= m);
        }
    });
}
