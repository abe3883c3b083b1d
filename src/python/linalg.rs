//! Python face of `linalg` on the partition kernel: preconditioned CG, Lanczos tridiagonals
//! (for stochastic Lanczos quadrature) and top eigenpairs by block Lanczos.

use super::arrays::{c_order, flat, to_array2, VectorPair};
use super::partition::assignment;
use super::partition::PartitionKernel;
use super::run::Length;
use crate::error::Error;
use crate::linalg::block_lanczos::{top_eigenpairs, BlockLanczosParams};
use crate::linalg::lanczos::tridiagonalize;
use crate::linalg::operator::{Interruptible, LinearOperator};
use crate::partition::operators::{solve_system, CentredKernel, KernelSystem, Preconditioner};
use crate::partition::variance::{exact_variance, lanczos_factors, FeatureGram, LanczosFactors};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// `√v` of the GP's row weights `v` (checked: one positive finite value per point), the
/// row scale of the weighted system (`partition::operators`).
fn row_scale(weights: Option<PyReadonlyArray1<'_, f64>>, n: usize) -> PyResult<Option<Vec<f64>>> {
    let Some(w) = weights else {
        return Ok(None);
    };
    let w = w.as_array();
    crate::training_data::check_weights(n, &w).map_err(super::error::to_py_err)?;
    Ok(Some(w.iter().map(|v| v.sqrt()).collect()))
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
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
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
) -> PyResult<(
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<bool>>,
)> {
    let b = c_order(&b);
    let (n, k) = b.dim();
    let pre = Preconditioner::named(preconditioner).map_err(super::error::to_py_err)?;
    let scale = row_scale(weights, n)?;
    let res = handle.inner.read(py, n_jobs, Length::Long, |model, call| {
        let variances = (signal_variance, noise_variance);
        let stopping = (tol, max_iter);
        let (pool, stop) = (call.pool, call.interrupt);
        solve_system(
            &model.kernel,
            flat(&b),
            k,
            variances,
            scale.as_deref(),
            pre,
            stopping,
            pool,
            stop,
        )
    })?;
    let iterations: Vec<u64> = res.iterations.iter().map(|&i| i as u64).collect();
    Ok((
        to_array2(n, k, res.x)?.into_pyarray(py),
        iterations.into_pyarray(py),
        res.relative_residual.into_pyarray(py),
        res.converged.into_pyarray(py),
    ))
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
    let starts = c_order(&starts);
    let k = starts.ncols();
    let scale = row_scale(weights, starts.nrows())?;
    let out = handle.inner.read(py, n_jobs, Length::Long, |model, call| {
        let op = KernelSystem {
            row_scale: scale.as_deref(),
            ..KernelSystem::kernel(&model.kernel)
        };
        let op = Interruptible {
            op: &op,
            interrupt: call.interrupt,
        };
        tridiagonalize(&op, flat(&starts), k, steps, call.pool)
    })?;
    Ok(out
        .into_iter()
        .map(|t| (t.alpha.into_pyarray(py), t.beta.into_pyarray(py)))
        .collect())
}

/// Top `k` eigenpairs of `s K̂` (centred: `H s K̂ H`) by restarted block Lanczos.
/// Returns `(values, vectors, residuals, block products, converged)`.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
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
) -> PyResult<(
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<f64>>,
    usize,
    bool,
)> {
    let params = BlockLanczosParams {
        k,
        block,
        depth,
        tol,
        max_restarts,
        seed,
    };
    let (n, res) = handle.inner.read(py, n_jobs, Length::Long, |model, call| {
        let kernel = &model.kernel;
        let centred_op = CentredKernel { kernel, scale: 1.0 };
        let plain = KernelSystem::kernel(kernel);
        let op: &dyn LinearOperator = if centred { &centred_op } else { &plain };
        let op = Interruptible {
            op,
            interrupt: call.interrupt,
        };
        Ok((kernel.n_points(), top_eigenpairs(&op, &params, call.pool)?))
    })?;
    if res.vectors.len() != n * k {
        return Err(super::error::to_py_err(Error::InvalidInput(
            "block Lanczos returned a block of the wrong size".into(),
        )));
    }
    Ok((
        res.values.into_pyarray(py),
        to_array2(n, k, res.vectors)?.into_pyarray(py),
        res.residuals.into_pyarray(py),
        res.products,
        res.converged,
    ))
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
    let pre = Preconditioner::named(preconditioner).map_err(super::error::to_py_err)?;
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

/// The LOVE factors `(upper, lower)` (total clusters × rank each) of `s K̂ + σ² V⁻¹` from a
/// block Lanczos decomposition of dimension `dim` of the clusters' Gram matrix `ΦᵀVΦ`, started
/// at `start` (clusters × block): `gather_sums` of each gives every new point a row whose
/// squared norm bounds its predictive variance from above and below (`partition::variance`).
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
    let start = c_order(&start);
    let b = start.ncols();
    let n_train = handle.inner.peek(py, |m| m.kernel.n_points());
    let scale = row_scale(weights, n_train)?;
    let f = handle.inner.read(py, n_jobs, Length::Long, |model, call| {
        let gram_op = FeatureGram {
            kernel: &model.kernel,
            row_scale: scale.as_deref(),
            shift: 0.0,
        };
        let op = Interruptible {
            op: &gram_op,
            interrupt: call.interrupt,
        };
        lanczos_factors(
            &op,
            flat(&start),
            b,
            dim,
            seed,
            (signal_variance, noise_variance),
            model.kernel.n_partitions(),
            call.pool,
        )
    })?;
    factor_arrays(py, f)
}

/// The upper and lower LOVE factors, as arrays.
pub(super) type FactorPair<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>);

/// The two factors as arrays.
pub(super) fn factor_arrays(py: Python<'_>, f: LanczosFactors) -> PyResult<FactorPair<'_>> {
    Ok((
        to_array2(f.clusters, f.rank, f.upper)?.into_pyarray(py),
        to_array2(f.clusters, f.rank, f.lower)?.into_pyarray(py),
    ))
}
