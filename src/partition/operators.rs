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
//!
//! Row weights (the GP's `sample_weight` v, noise σ²/v_i): `s K̂ + σ² V⁻¹ = D⁻¹ (s D K̂ D + σ² I)
//! D⁻¹` with `D = diag(√v)`, so the solvers work on `s D K̂ D + σ² I` (`row_scale` = √v), still
//! symmetric and shifted by σ² I (one Lanczos run serves every σ²/s). Its blocks are
//! `s u uᵀ + σ² I` with `u = D 1_c`, inverted the same way with `n_c` replaced by
//! `‖u‖² = Σ_{j∈c} v_j`: `[(s D K_ρ D + σ² I)⁻¹ v]_i = v_i/σ² − s √v_i (Σ_{j∈c} √v_j v_j) /
//! (σ² (σ² + s Σ_{j∈c} v_j))`.

use crate::error::{string_options, Error, Result};
use crate::linalg::block::{col_sums, for_rows_mut, zip_rows};
use crate::linalg::cg::{self, CgResult};
use crate::linalg::operator::{
    check_block, Identity, Interruptible, InverseDiagonal, LinearOperator,
};
use crate::parallel::Interrupt;
use crate::partition::kernel::PartitionKernel;
use rayon::prelude::*;
use rayon::ThreadPool;

/// `v ↦ (s D K̂ D + σ² I) v`: the GP's covariance of the (weighted) targets (`s = 1, σ² = 0`,
/// `D = I`: the kernel; `D = diag(row_scale)`, see the module notes).
#[derive(Clone, Copy)]
pub struct KernelSystem<'a> {
    pub kernel: &'a PartitionKernel,
    pub scale: f64,
    pub noise: f64,
    pub row_scale: Option<&'a [f64]>,
}

impl<'a> KernelSystem<'a> {
    /// `K̂` itself.
    pub fn kernel(kernel: &'a PartitionKernel) -> Self {
        Self {
            kernel,
            scale: 1.0,
            noise: 0.0,
            row_scale: None,
        }
    }

    /// The preconditioner of this system (eq. 9–10), its per-cluster factors
    /// `1/(σ² + s ‖u‖²)` formed once here (`‖u‖²` = Σ_{j∈c} v_j, the size without weights).
    pub fn preconditioner(self) -> ClusterPreconditioner<'a> {
        let kernel = self.kernel;
        let factor = |mass: f64| 1.0 / (self.noise + self.scale * mass);
        let factors = match self.row_scale {
            None => kernel
                .cluster_sizes()
                .iter()
                .map(|&size| factor(f64::from(size)))
                .collect(),
            Some(d) => {
                let mut mass = vec![0.0; kernel.cluster_sizes().len()];
                let n = kernel.n_points().max(1);
                for (rho, labels) in kernel.labels().chunks_exact(n).enumerate() {
                    let first = kernel.cluster_offsets()[rho];
                    for (&c, &di) in labels.iter().zip(d) {
                        mass[first + c as usize] += di * di;
                    }
                }
                mass.into_iter().map(factor).collect()
            }
        };
        ClusterPreconditioner {
            system: self,
            factors,
        }
    }

    /// `out = D P D v` with P the kernel's product (`factors`: per cluster, without the
    /// `1/m`; None: `K̂`) and D the row scale (the identity when None).
    fn product(
        &self,
        v: &[f64],
        k: usize,
        out: &mut [f64],
        factors: Option<&[f64]>,
        pool: &ThreadPool,
    ) -> Result<()> {
        let scaled = self.row_scale.map(|d| {
            let mut dv = v.to_vec();
            scale_rows(&mut dv, k, d, pool);
            dv
        });
        let v = scaled.as_deref().unwrap_or(v);
        match factors {
            None => self.kernel.matmul(v, k, out, pool)?,
            Some(f) => self.kernel.matmul_by_cluster(v, k, out, f, pool)?,
        }
        if let Some(d) = self.row_scale {
            scale_rows(out, k, d, pool);
        }
        Ok(())
    }
}

/// Row i of the row-major `N × k` block `a` times `d[i]`.
fn scale_rows(a: &mut [f64], k: usize, d: &[f64], pool: &ThreadPool) {
    pool.install(|| {
        a.par_chunks_mut(k.max(1))
            .zip(d.par_iter())
            .for_each(|(row, &di)| row.iter_mut().for_each(|x| *x *= di))
    });
}

impl LinearOperator for KernelSystem<'_> {
    fn dim(&self) -> usize {
        self.kernel.n_points()
    }

    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], pool: &ThreadPool) -> Result<()> {
        check_block(self.dim(), v, k, out)?;
        self.product(v, k, out, None, pool)?;
        let (s, noise) = (self.scale, self.noise);
        zip_rows(out, k, v, k, pool, |out, v| {
            out.iter_mut()
                .zip(v)
                .for_each(|(o, &x)| *o = s * *o + noise * x);
        });
        Ok(())
    }
}

/// `v ↦ (1/m) Σ_ρ (s D K_ρ D + σ² I)⁻¹ v` for the system it was made from (eq. 9–10; see
/// the module notes), with one factor `1/(σ² + s ‖u‖²)` per cluster of all partitions.
pub struct ClusterPreconditioner<'a> {
    system: KernelSystem<'a>,
    factors: Vec<f64>,
}

impl LinearOperator for ClusterPreconditioner<'_> {
    fn dim(&self) -> usize {
        self.system.dim()
    }

    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], pool: &ThreadPool) -> Result<()> {
        check_block(self.dim(), v, k, out)?;
        let KernelSystem {
            kernel,
            scale: s,
            noise,
            ..
        } = self.system;
        self.system.product(v, k, out, Some(&self.factors), pool)?;
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

string_options!(Preconditioner, "preconditioner", [
    "partition" => Partition,
    "jacobi" => Jacobi,
    "none" => None,
]);

/// Solves `(s D K̂ D + σ² I) X = B` for the row-major `N × k` block `b` by block PCG
/// ([`cg::solve`]; `D = diag(row_scale)`, the identity when None); `interrupt` stops it
/// between iterations.
#[allow(clippy::too_many_arguments)]
pub fn solve_system(
    kernel: &PartitionKernel,
    b: &[f64],
    k: usize,
    (scale, noise): (f64, f64),
    row_scale: Option<&[f64]>,
    preconditioner: Preconditioner,
    (tol, max_iter): (f64, usize),
    pool: &ThreadPool,
    interrupt: &Interrupt,
) -> Result<CgResult> {
    let n = kernel.n_points();
    if row_scale.is_some_and(|d| d.len() != n) {
        return Err(Error::InvalidInput(format!(
            "the row scale has {} values for {n} points",
            row_scale.map_or(0, <[f64]>::len)
        )));
    }
    let system = KernelSystem {
        kernel,
        scale,
        noise,
        row_scale,
    };
    let diagonal: Vec<f64> = match row_scale {
        Some(d) => d.iter().map(|di| scale * di * di + noise).collect(),
        None => vec![scale + noise; n],
    };
    let pre: Box<dyn LinearOperator> = match preconditioner {
        Preconditioner::Partition => Box::new(system.preconditioner()),
        Preconditioner::Jacobi => Box::new(InverseDiagonal::new(&diagonal)?),
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
        // Without and with a row scale D (the GP's weights): the average over ρ of
        // (s D K_ρ D + σ² I)⁻¹ v, each solved densely; and the system itself.
        let (n, m) = (60, 4);
        let kernel = random_partition_kernel(n, m, 6);
        let (s, noise) = (1.7, 0.3);
        let p = pool(1).expect("pool");
        let d: Vec<f64> = random_block(n, 1, 3)
            .iter()
            .map(|x| 0.5 + x.abs())
            .collect();
        for row_scale in [None, Some(d.as_slice())] {
            let di = |i: usize| row_scale.map_or(1.0, |d| d[i]);
            let system = KernelSystem {
                kernel: &kernel,
                scale: s,
                noise,
                row_scale,
            };
            let v = random_block(n, 1, 8);
            let mut out = vec![0.0; n];
            system
                .preconditioner()
                .apply(&v, 1, &mut out, &p)
                .expect("shapes");
            let mut want = vec![0.0; n];
            let mut dense = vec![0.0; n * n];
            for part in kernel.labels().chunks_exact(n) {
                let mut a = vec![0.0; n * n];
                for i in 0..n {
                    for j in 0..n {
                        let k = if part[i] == part[j] {
                            s * di(i) * di(j)
                        } else {
                            0.0
                        };
                        a[i * n + j] = k;
                        dense[i * n + j] += k / m as f64;
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
            system.apply(&v, 1, &mut out, &p).expect("shapes");
            for i in 0..n {
                let want: f64 = (0..n).map(|j| dense[i * n + j] * v[j]).sum::<f64>() + noise * v[i];
                assert!((out[i] - want).abs() < 1e-10);
            }
        }
    }
}
