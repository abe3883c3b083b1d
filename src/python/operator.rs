//! Python face of the solvers of `linalg` on an operator given as a Python callable (the
//! partition kernel's products spread over a Dask cluster): CG, Lanczos tridiagonals, top
//! eigenpairs and the LOVE factor run in the core unchanged, and each product crosses into
//! Python once.

use super::arrays::{c_order, flat, to_array2, VectorPair};
use super::run::{run, Call, Length};
use crate::error::{Error, Result};
use crate::linalg::block_lanczos::{top_eigenpairs, BlockLanczosParams};
use crate::linalg::cg;
use crate::linalg::lanczos::tridiagonalize;
use crate::linalg::operator::{
    check_block, Identity, Interruptible, InverseDiagonal, LinearOperator,
};
use crate::parallel::pool;
use crate::partition::variance::lanczos_factors;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// `v ↦ apply(v)`: a Python callable taking and returning `dim × k` float64 arrays.
struct PyOperator<'a> {
    apply: &'a Py<PyAny>,
    dim: usize,
    call: &'a Call<'a>,
}

impl LinearOperator for PyOperator<'_> {
    fn dim(&self) -> usize {
        self.dim
    }

    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], _pool: &rayon::ThreadPool) -> Result<()> {
        check_block(self.dim, v, k, out)?;
        let result = self.call.python(|py| {
            let block = to_array2(self.dim, k, v.to_vec())?.into_pyarray(py);
            let product = self.apply.call1(py, (block,))?;
            let product: PyReadonlyArray2<'_, f64> = product.extract(py)?;
            let product = c_order(&product);
            Ok((product.dim(), flat(&product).to_vec()))
        })?;
        if result.0 != (self.dim, k) {
            return Err(Error::InvalidInput(format!(
                "the operator returned an array of shape {:?} for a {} × {k} block",
                result.0, self.dim
            )));
        }
        out.copy_from_slice(&result.1);
        Ok(())
    }
}

/// Runs `work` on the operator `apply` (stoppable by Ctrl-C between products) on a pool of
/// `n_jobs` threads, with the GIL released except inside the products.
fn on_operator<'py, T: Send>(
    py: Python<'py>,
    apply: &Py<PyAny>,
    dim: usize,
    n_jobs: usize,
    work: impl FnOnce(&dyn LinearOperator, &rayon::ThreadPool) -> Result<T> + Send,
) -> PyResult<T> {
    let pool = pool(n_jobs).map_err(super::error::to_py_err)?;
    run(py, &pool, Length::Long, |call| {
        let op = PyOperator { apply, dim, call };
        let op = Interruptible {
            op: &op,
            interrupt: call.interrupt,
        };
        work(&op, call.pool)
    })
}

/// Solves `A X = B` by CG for the operator `apply` (`dim × dim`), preconditioned by the
/// inverse of `diagonal` when given (Jacobi). Returns `(X, iterations, relative residuals,
/// converged)`.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
#[pyfunction]
#[pyo3(signature = (apply, b, tol, max_iter, n_jobs, diagonal=None))]
pub fn operator_solve<'py>(
    py: Python<'py>,
    apply: Py<PyAny>,
    b: PyReadonlyArray2<'py, f64>,
    tol: f64,
    max_iter: usize,
    n_jobs: usize,
    diagonal: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<(
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<bool>>,
)> {
    let b = c_order(&b);
    let (n, k) = b.dim();
    let diagonal: Option<Vec<f64>> = diagonal.map(|d| d.as_array().iter().copied().collect());
    let res = on_operator(py, &apply, n, n_jobs, |op, pool| {
        let pre: Box<dyn LinearOperator> = match &diagonal {
            Some(d) if d.len() == n => Box::new(InverseDiagonal::new(d)?),
            Some(d) => {
                return Err(Error::InvalidInput(format!(
                    "a diagonal of {} values for a {n} × {n} operator",
                    d.len()
                )))
            }
            None => Box::new(Identity(n)),
        };
        cg::solve(op, pre.as_ref(), flat(&b), k, None, tol, max_iter, pool)
    })?;
    let iterations: Vec<u64> = res.iterations.iter().map(|&i| i as u64).collect();
    Ok((
        to_array2(n, k, res.x)?.into_pyarray(py),
        iterations.into_pyarray(py),
        res.relative_residual.into_pyarray(py),
        res.converged.into_pyarray(py),
    ))
}

/// Lanczos tridiagonals of the operator `apply` from each column of `starts` (`dim × k`): a
/// list of `(alpha, beta)` pairs.
#[pyfunction]
pub fn operator_lanczos<'py>(
    py: Python<'py>,
    apply: Py<PyAny>,
    starts: PyReadonlyArray2<'py, f64>,
    steps: usize,
    n_jobs: usize,
) -> PyResult<Vec<VectorPair<'py>>> {
    let starts = c_order(&starts);
    let (n, k) = starts.dim();
    let out = on_operator(py, &apply, n, n_jobs, |op, pool| {
        tridiagonalize(op, flat(&starts), k, steps, pool)
    })?;
    Ok(out
        .into_iter()
        .map(|t| (t.alpha.into_pyarray(py), t.beta.into_pyarray(py)))
        .collect())
}

/// Top `k` eigenpairs of the operator `apply` (`dim × dim`) by restarted block Lanczos.
/// Returns `(values, vectors, residuals, block products, converged)`.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
#[pyfunction]
pub fn operator_top_eigen<'py>(
    py: Python<'py>,
    apply: Py<PyAny>,
    dim: usize,
    k: usize,
    block: usize,
    depth: usize,
    tol: f64,
    max_restarts: usize,
    seed: u64,
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
    let res = on_operator(py, &apply, dim, n_jobs, |op, pool| {
        top_eigenpairs(op, &params, pool)
    })?;
    Ok((
        res.values.into_pyarray(py),
        to_array2(dim, k, res.vectors)?.into_pyarray(py),
        res.residuals.into_pyarray(py),
        res.products,
        res.converged,
    ))
}

/// The LOVE factors `(upper, lower)` (`dim × rank` each) of `s ΨΨᵀ + σ² I` whose clusters'
/// Gram matrix `ΨᵀΨ` is the operator `apply`, from a block Lanczos decomposition of
/// dimension `dim` started at `start` (`dim × block`; see `partition::variance`).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
pub fn operator_variance_factors<'py>(
    py: Python<'py>,
    apply: Py<PyAny>,
    start: PyReadonlyArray2<'py, f64>,
    dim: usize,
    seed: u64,
    signal_variance: f64,
    noise_variance: f64,
    n_partitions: usize,
    n_jobs: usize,
) -> PyResult<super::linalg::FactorPair<'py>> {
    let start = c_order(&start);
    let (n, b) = start.dim();
    let f = on_operator(py, &apply, n, n_jobs, |op, pool| {
        lanczos_factors(
            op,
            flat(&start),
            b,
            dim,
            seed,
            (signal_variance, noise_variance),
            n_partitions,
            pool,
        )
    })?;
    super::linalg::factor_arrays(py, f)
}
