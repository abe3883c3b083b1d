//! Python face of `linalg` on the partition kernel: preconditioned CG, Lanczos tridiagonals
//! (for stochastic Lanczos quadrature) and top eigenpairs by block Lanczos.

use super::error::to_py_err;
use super::partition::{contiguous, to_array2, PartitionKernel};
use crate::error::Error;
use crate::linalg::block_lanczos::{top_eigenpairs, BlockLanczosParams};
use crate::linalg::operator::{Identity, InverseDiagonal, LinearOperator};
use crate::linalg::{cg, lanczos as lanczos_core};
use crate::partition::operators::{
    check_variances, CentredKernel, ClusterPreconditioner, KernelSystem,
};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;

/// The preconditioner of eq. 9–10 applied to `V`: `(1/m) Σ_ρ (s K_ρ + σ² I)⁻¹ V`.
#[pyfunction]
pub fn precondition<'py>(
    handle: PyRef<'py, PartitionKernel>,
    py: Python<'py>,
    v: PyReadonlyArray2<'py, f64>,
    signal_variance: f64,
    noise_variance: f64,
    n_jobs: usize,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    check_variances(signal_variance, noise_variance).map_err(to_py_err)?;
    let k = v.as_array().ncols();
    let v = contiguous(&v)?;
    let op = ClusterPreconditioner {
        kernel: handle.kernel(),
        scale: signal_variance,
        noise: noise_variance,
    };
    let out = handle.run(py, n_jobs, |pool| {
        let mut out = vec![0.0; v.len()];
        op.apply(v, k, &mut out, pool)?;
        Ok(out)
    })?;
    Ok(to_array2(handle.kernel().n_points(), k, out)?.into_pyarray(py))
}

/// Solves `(s K̂ + σ² I) X = B` by block PCG; `preconditioner` is "partition" (eq. 9–10),
/// "jacobi" or "none". Returns `(X, iterations, relative residuals, converged)`.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
#[pyfunction]
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
) -> PyResult<(
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<bool>>,
)> {
    check_variances(signal_variance, noise_variance).map_err(to_py_err)?;
    let k = b.as_array().ncols();
    let b = contiguous(&b)?;
    let kernel = handle.kernel();
    let n = kernel.n_points();
    let system = KernelSystem {
        kernel,
        scale: signal_variance,
        noise: noise_variance,
    };
    let pre: Box<dyn LinearOperator> = match preconditioner {
        "partition" => Box::new(ClusterPreconditioner {
            kernel,
            scale: signal_variance,
            noise: noise_variance,
        }),
        // Every training point's k(x, x) is 1, so the diagonal is s + σ² everywhere.
        "jacobi" => Box::new(
            InverseDiagonal::new(&vec![signal_variance + noise_variance; n]).map_err(to_py_err)?,
        ),
        "none" => Box::new(Identity(n)),
        other => {
            return Err(to_py_err(Error::InvalidParameter {
                name: "preconditioner",
                reason: format!("must be 'partition', 'jacobi' or 'none', got {other:?}"),
            }))
        }
    };
    let res = handle.run(py, n_jobs, |pool| {
        cg::solve(&system, pre.as_ref(), b, k, tol, max_iter, pool)
    })?;
    let iterations: Vec<u64> = res.iterations.iter().map(|&i| i as u64).collect();
    Ok((
        to_array2(n, k, res.x)?.into_pyarray(py),
        iterations.into_pyarray(py),
        res.relative_residual.into_pyarray(py),
        res.converged.into_pyarray(py),
    ))
}

/// Lanczos tridiagonals of `K̂` from each column of `starts` (n_points × k): a list of
/// `(alpha, beta)` pairs.
#[allow(clippy::type_complexity)]
#[pyfunction]
pub fn lanczos<'py>(
    handle: PyRef<'py, PartitionKernel>,
    py: Python<'py>,
    starts: PyReadonlyArray2<'py, f64>,
    steps: usize,
    n_jobs: usize,
) -> PyResult<Vec<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)>> {
    let k = starts.as_array().ncols();
    let starts = contiguous(&starts)?;
    let kernel = handle.kernel();
    let op = KernelSystem {
        kernel,
        scale: 1.0,
        noise: 0.0,
    };
    let out = handle.run(py, n_jobs, |pool| {
        lanczos_core::tridiagonalize(&op, starts, k, steps, pool)
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
    let kernel = handle.kernel();
    let params = BlockLanczosParams {
        k,
        block,
        depth,
        tol,
        max_restarts,
        seed,
    };
    let res = handle.run(py, n_jobs, |pool| {
        if centred {
            top_eigenpairs(&CentredKernel { kernel, scale: 1.0 }, &params, pool)
        } else {
            let op = KernelSystem {
                kernel,
                scale: 1.0,
                noise: 0.0,
            };
            top_eigenpairs(&op, &params, pool)
        }
    })?;
    Ok((
        res.values.into_pyarray(py),
        to_array2(handle.kernel().n_points(), k, res.vectors)?.into_pyarray(py),
        res.residuals.into_pyarray(py),
        res.products,
        res.converged,
    ))
}
