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
use crate::linalg::cg::{self, CgResult};
use crate::linalg::operator::{
    check_block, Identity, Interruptible, InverseDiagonal, LinearOperator,
};
use crate::parallel::Interrupt;
use crate::partition::kernel::PartitionKernel;
use rayon::ThreadPool;

/// `v ↦ (s K̂ + σ² I) v`: the GP's covariance of the targets (`s = 1, σ² = 0`: the kernel).
#[derive(Clone, Copy)]
pub struct KernelSystem<'a> {
    pub kernel: &'a PartitionKernel,
    pub scale: f64,
    pub noise: f64,
}

impl<'a> KernelSystem<'a> {
    /// `K̂` itself.
    pub fn kernel(kernel: &'a PartitionKernel) -> Self {
        Self {
            kernel,
            scale: 1.0,
            noise: 0.0,
        }
    }

    /// The preconditioner of this system (eq. 9–10).
    pub fn preconditioner(self) -> ClusterPreconditioner<'a> {
        ClusterPreconditioner(self)
    }
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

/// `v ↦ (1/m) Σ_ρ (s K_ρ + σ² I)⁻¹ v` for the system it was made from (eq. 9–10; see the
/// module notes).
pub struct ClusterPreconditioner<'a>(KernelSystem<'a>);

impl LinearOperator for ClusterPreconditioner<'_> {
    fn dim(&self) -> usize {
        self.0.dim()
    }

    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], pool: &ThreadPool) -> Result<()> {
        check_block(self.dim(), v, k, out)?;
        let KernelSystem {
            kernel,
            scale: s,
            noise,
        } = self.0;
        let per_cluster = move |size: u32| 1.0 / (noise + s * f64::from(size));
        kernel.matmul_by_cluster_size(v, k, out, &per_cluster, pool)?;
        let m = kernel.n_partitions() as f64;
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

/// The preconditioner of the GP system's conjugate gradients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preconditioner {
    /// `(1/m) Σ_ρ (s K_ρ + σ² I)⁻¹` ([`ClusterPreconditioner`], eq. 9–10).
    Partition,
    /// The inverse diagonal: every training point's `k(x, x)` is 1, so it is `1/(s + σ²)`
    /// everywhere and CG runs exactly as without one.
    Jacobi,
    None,
}

impl Preconditioner {
    /// The preconditioner called `name`: "partition", "jacobi" or "none".
    pub fn named(name: &str) -> Result<Self> {
        Ok(match name {
            "partition" => Self::Partition,
            "jacobi" => Self::Jacobi,
            "none" => Self::None,
            other => {
                return Err(Error::InvalidParameter {
                    name: "preconditioner",
                    reason: format!("must be 'partition', 'jacobi' or 'none', got {other:?}"),
                })
            }
        })
    }
}

/// Solves `(s K̂ + σ² I) X = B` for the row-major `N × k` block `b` by block PCG
/// ([`cg::solve`]); `interrupt` stops it between iterations.
#[allow(clippy::too_many_arguments)]
pub fn solve_system(
    kernel: &PartitionKernel,
    b: &[f64],
    k: usize,
    (scale, noise): (f64, f64),
    preconditioner: Preconditioner,
    (tol, max_iter): (f64, usize),
    pool: &ThreadPool,
    interrupt: &Interrupt,
) -> Result<CgResult> {
    let n = kernel.n_points();
    let system = KernelSystem {
        kernel,
        scale,
        noise,
    };
    let pre: Box<dyn LinearOperator> = match preconditioner {
        Preconditioner::Partition => Box::new(system.preconditioner()),
        Preconditioner::Jacobi => Box::new(InverseDiagonal::new(&vec![scale + noise; n])?),
        Preconditioner::None => Box::new(Identity(n)),
    };
    let system = Interruptible {
        op: &system,
        interrupt,
    };
    cg::solve(&system, pre.as_ref(), b, k, None, tol, max_iter, pool)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::pool;
    use crate::testing::{random_block, random_partition_kernel, solve_dense};

    #[test]
    fn preconditioner_is_the_average_of_exact_inverses() {
        let (n, m) = (60, 4);
        let kernel = random_partition_kernel(n, m, 6);
        let (s, noise) = (1.7, 0.3);
        let p = pool(1).expect("pool");
        let op = KernelSystem {
            kernel: &kernel,
            scale: s,
            noise,
        }
        .preconditioner();
        let v = random_block(n, 1, 8);
        let mut out = vec![0.0; n];
        op.apply(&v, 1, &mut out, &p).expect("shapes");
        // Dense: average over ρ of (s K_ρ + σ² I)⁻¹ v, each solved by Gaussian elimination.
        let mut want = vec![0.0; n];
        for part in kernel.labels().chunks_exact(n) {
            let mut a = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..n {
                    a[i * n + j] = if part[i] == part[j] { s } else { 0.0 };
                }
                a[i * n + i] += noise;
            }
            let x = solve_dense(a, v.clone(), n);
            want.iter_mut()
                .zip(&x)
                .for_each(|(w, x)| *w += x / m as f64);
        }
        for (a, b) in out.iter().zip(&want) {
            assert!((a - b).abs() < 1e-10, "{a} vs {b}");
        }
    }
}
