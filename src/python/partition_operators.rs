//! Python face of `partition::operators` and `partition::variance`: the partition kernel's
//! systems under the solvers of `linalg` (bound in `linalg.rs`, on the kernel as an
//! [`Operand`]) — preconditioned CG, Lanczos tridiagonals (for stochastic Lanczos
//! quadrature), top eigenpairs — and its predictive variances.

use super::arrays::{c_order, flat, to_array2, VectorPair};
use super::error::to_py_err;
use super::linalg::{self, Eigenpairs, FactorPair, Operand, Solution};
use super::partition::{assignment, PartitionKernel};
use super::run::Length;
use crate::error::Result;
use crate::linalg::block_lanczos::BlockLanczosParams;
use crate::linalg::operator::{Interruptible, LinearOperator};
use crate::partition::operators::{solve_system, CentredKernel, KernelSystem, Preconditioner};
use crate::partition::variance::{exact_variance, FeatureGram};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use rayon::ThreadPool;

/// `√v` of the GP's row weights `v` (checked: one positive finite value per point), the
/// row scale of the weighted system (`partition::operators`).
fn row_scale(weights: Option<PyReadonlyArray1<'_, f64>>, n: usize) -> PyResult<Option<Vec<f64>>> {
    let Some(w) = weights else {
        return Ok(None);
    };
    let w = w.as_array();
    crate::training_data::check_weights(n, &w).map_err(to_py_err)?;
    Ok(Some(w.iter().map(|v| v.sqrt()).collect()))
}

/// Which operator of the partition kernel a solver runs on.
enum System<'a> {
    /// `K̂`, or `D K̂ D` with `D` the row scale.
    Kernel(Option<&'a [f64]>),
    /// `H K̂ H`, the kernel centred in feature space.
    Centred,
    /// The clusters' Gram matrix `ΦᵀVΦ` (`V` the squared row scale).
    FeatureGram(Option<&'a [f64]>),
}

/// An operator of the partition kernel held by `handle`.
struct Kernel<'a> {
    handle: &'a PartitionKernel,
    system: System<'a>,
}

impl Operand for Kernel<'_> {
    fn dim(&self, py: Python<'_>) -> usize {
        self.handle.inner.peek(py, |m| m.kernel.n_points())
    }

    fn run<T: Send>(
        &self,
        py: Python<'_>,
        n_jobs: usize,
        work: impl FnOnce(&dyn LinearOperator, &ThreadPool) -> Result<T> + Send,
    ) -> PyResult<T> {
        (self.handle.inner).read(py, n_jobs, Length::Long, |model, call| {
            let kernel = &model.kernel;
            let on = |op: &dyn LinearOperator| {
                let interrupt = call.interrupt;
                work(&Interruptible { op, interrupt }, call.pool)
            };
            match self.system {
                System::Kernel(row_scale) => on(&KernelSystem {
                    row_scale,
                    ..KernelSystem::kernel(kernel)
                }),
                System::Centred => on(&CentredKernel { kernel, scale: 1.0 }),
                System::FeatureGram(row_scale) => on(&FeatureGram {
                    kernel,
                    row_scale,
                    shift: 0.0,
                }),
            }
        })
    }
}

/// The preconditioner of eq. 9–10 applied to `V`: `(1/m) Σ_ρ (s D K_ρ D + σ² I)⁻¹ V`
/// (`D = diag(√weights)`, the identity without weights).
#[pyfunction]
#[pyo3(signature = (handle, v, signal_variance, noise_variance, n_jobs, weights=None))]
pub fn precondition<'py>(
    handle: PyRef<'py, PartitionKernel>,
    py: Python<'py>,
    v: PyReadonlyArray2<'py, f64>,
    signal_variance: f64,
    noise_variance: f64,
    n_jobs: usize,
    weights: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let v = c_order(&v);
    let (n, k) = v.dim();
    let scale = row_scale(weights, n)?;
    let out = handle
        .inner
        .read(py, n_jobs, Length::Short, |model, call| {
            let op = KernelSystem {
                kernel: &model.kernel,
                scale: signal_variance,
                noise: noise_variance,
                row_scale: scale.as_deref(),
            }
            .preconditioner();
            let mut out = vec![0.0; n * k];
            op.apply(flat(&v), k, &mut out, call.pool)?;
            Ok(out)
        })?;
    Ok(to_array2(n, k, out)?.into_pyarray(py))
}

/// Solves `(s K̂ + σ² I) X = B` by block PCG; `preconditioner` is "partition" (eq. 9–10),
/// "jacobi" or "none". Returns `(X, iterations, relative residuals, converged)`.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (handle, b, signal_variance, noise_variance, preconditioner, tol, max_iter, n_jobs, weights=None))]
pub fn solve<'py>(
    handle: PyRef<'py, PartitionKernel>,
    py: Python<'py>,
    b: PyReadonlyArray2<'py, f64>,
    signal_variance: f64,
    noise_variance: f64,
    preconditioner: &str,
    tol: f64,
    max_iter: usize,
    n_jobs: usize,
    weights: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<Solution<'py>> {
    let b = c_order(&b);
    let (n, k) = b.dim();
    let pre = Preconditioner::named(preconditioner).map_err(to_py_err)?;
    let scale = row_scale(weights, n)?;
    let res = handle.inner.read(py, n_jobs, Length::Long, |model, call| {
        let variances = (signal_variance, noise_variance);
        let stopping = (tol, max_iter);
        let (pool, stop) = (call.pool, call.interrupt);
        let (kernel, b, scale) = (&model.kernel, flat(&b), scale.as_deref());
        solve_system(kernel, b, k, variances, scale, pre, stopping, pool, stop)
    })?;
    linalg::solution(py, n, k, res)
}

/// Lanczos tridiagonals of `K̂` (`D K̂ D` with `D = diag(√weights)`) from each column of
/// `starts` (n_points × k): a list of `(alpha, beta)` pairs.
#[pyfunction]
#[pyo3(signature = (handle, starts, steps, n_jobs, weights=None))]
pub fn lanczos<'py>(
    handle: PyRef<'py, PartitionKernel>,
    py: Python<'py>,
    starts: PyReadonlyArray2<'py, f64>,
    steps: usize,
    n_jobs: usize,
    weights: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<Vec<VectorPair<'py>>> {
    let scale = row_scale(weights, starts.as_array().nrows())?;
    let on = Kernel {
        handle: &handle,
        system: System::Kernel(scale.as_deref()),
    };
    linalg::lanczos(py, &on, starts, steps, n_jobs)
}

/// Top `k` eigenpairs of `s K̂` (centred: `H s K̂ H`) by restarted block Lanczos.
/// Returns `(values, vectors, residuals, block products, converged)`.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
pub fn top_eigen<'py>(
    handle: PyRef<'py, PartitionKernel>,
    py: Python<'py>,
    k: usize,
    block: usize,
    depth: usize,
    tol: f64,
    max_restarts: usize,
    seed: u64,
    centred: bool,
    n_jobs: usize,
) -> PyResult<Eigenpairs<'py>> {
    let params = BlockLanczosParams {
        k,
        block,
        depth,
        tol,
        max_restarts,
        seed,
    };
    let system = if centred {
        System::Centred
    } else {
        System::Kernel(None)
    };
    let on = Kernel {
        handle: &handle,
        system,
    };
    linalg::top_eigen(py, &on, params, n_jobs)
}

/// The exact predictive variances (`full`: the covariance, n × n) of the assigned points
/// under `s K̂ + σ² V⁻¹`, one CG solve per point in blocks solved in parallel
/// (`partition::variance::exact_variance`). Returns `(values, iterations, converged)`.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
#[pyfunction]
#[pyo3(signature = (handle, labels, weights, signal_variance, noise_variance, preconditioner, tol, max_iter, full, n_jobs, train_weights=None))]
pub fn predictive_variance<'py>(
    handle: PyRef<'py, PartitionKernel>,
    py: Python<'py>,
    labels: PyReadonlyArray2<'py, u32>,
    weights: Option<PyReadonlyArray2<'py, f64>>,
    signal_variance: f64,
    noise_variance: f64,
    preconditioner: &str,
    tol: f64,
    max_iter: usize,
    full: bool,
    n_jobs: usize,
    train_weights: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<(
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<bool>>,
)> {
    let a = assignment(labels, weights);
    let pre = Preconditioner::named(preconditioner).map_err(to_py_err)?;
    let n_train = handle.inner.peek(py, |m| m.kernel.n_points());
    let scale = row_scale(train_weights, n_train)?;
    let res = handle.inner.read(py, n_jobs, Length::Long, |model, call| {
        exact_variance(
            &model.kernel,
            &a,
            (signal_variance, noise_variance),
            scale.as_deref(),
            pre,
            (tol, max_iter),
            full,
            call.pool,
            call.interrupt,
        )
    })?;
    let iterations: Vec<u64> = res.iterations.iter().map(|&i| i as u64).collect();
    Ok((
        res.values.into_pyarray(py),
        iterations.into_pyarray(py),
        res.converged.into_pyarray(py),
    ))
}

/// The LOVE factors `(upper, lower)` (total clusters × rank each) of `s K̂ + σ² V⁻¹`
/// ([`linalg::variance_factors`] on the clusters' Gram matrix `ΦᵀVΦ`): `gather_sums` of each
/// gives every new point a row whose squared norm bounds its predictive variance from above
/// and below (`partition::variance`).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (handle, start, dim, seed, signal_variance, noise_variance, n_jobs, weights=None))]
pub fn variance_factors<'py>(
    handle: PyRef<'py, PartitionKernel>,
    py: Python<'py>,
    start: PyReadonlyArray2<'py, f64>,
    dim: usize,
    seed: u64,
    signal_variance: f64,
    noise_variance: f64,
    n_jobs: usize,
    weights: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<FactorPair<'py>> {
    let (n_train, n_partitions) =
        (handle.inner).peek(py, |m| (m.kernel.n_points(), m.kernel.n_partitions()));
    let scale = row_scale(weights, n_train)?;
    let on = Kernel {
        handle: &handle,
        system: System::FeatureGram(scale.as_deref()),
    };
    let variances = (signal_variance, noise_variance);
    linalg::variance_factors(py, &on, start, dim, seed, variances, n_partitions, n_jobs)
}
