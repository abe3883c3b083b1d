//! Python face of `linalg`: CG, Lanczos tridiagonals, top eigenpairs by block Lanczos and
//! the LOVE factors, each bound once here on any [`Operand`] — the partition kernel held in
//! Rust (`partition_operators.rs`) or an operator given as a Python callable (the partition
//! kernel's products spread over a Dask cluster), each of whose products crosses into Python
//! once.

use super::arrays::{c_order, flat, to_array2, VectorPair};
use super::error::to_py_err;
use super::run::{run, Call, Length};
use crate::error::{Error, Result};
use crate::linalg::block_lanczos::{top_eigenpairs, BlockLanczosParams};
use crate::linalg::cg::{self, CgResult};
use crate::linalg::lanczos::tridiagonalize;
use crate::linalg::operator::{
    check_block, Identity, Interruptible, InverseDiagonal, LinearOperator,
};
use crate::parallel::pool;
use crate::partition::variance::{lanczos_factors, LanczosFactors};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use rayon::ThreadPool;

/// Where a solver's operator lives: [`Operand::run`] lends it to `work` (stoppable by Ctrl-C
/// between products) on a pool of `n_jobs` threads, with the GIL released.
pub(super) trait Operand {
    /// The operator's dimension.
    fn dim(&self, py: Python<'_>) -> usize;

    fn run<T: Send>(
        &self,
        py: Python<'_>,
        n_jobs: usize,
        work: impl FnOnce(&dyn LinearOperator, &ThreadPool) -> Result<T> + Send,
    ) -> PyResult<T>;
}

/// `v ↦ apply(v)`: a Python callable taking and returning `dim × k` float64 arrays.
pub(super) struct Callable<'a> {
    pub apply: &'a Py<PyAny>,
    pub dim: usize,
}

/// [`Callable`] during a call: its products take the GIL through `call`.
struct PyOperator<'a> {
    apply: &'a Py<PyAny>,
    dim: usize,
    call: &'a Call<'a>,
}

impl LinearOperator for PyOperator<'_> {
    fn dim(&self) -> usize {
        self.dim
    }

    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], _pool: &ThreadPool) -> Result<()> {
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

impl Operand for Callable<'_> {
    fn dim(&self, _py: Python<'_>) -> usize {
        self.dim
    }

    fn run<T: Send>(
        &self,
        py: Python<'_>,
        n_jobs: usize,
        work: impl FnOnce(&dyn LinearOperator, &ThreadPool) -> Result<T> + Send,
    ) -> PyResult<T> {
        let pool = pool(n_jobs).map_err(to_py_err)?;
        run(py, &pool, Length::Long, |call| {
            let (apply, dim) = (self.apply, self.dim);
            let op = PyOperator { apply, dim, call };
            let op = Interruptible {
                op: &op,
                interrupt: call.interrupt,
            };
            work(&op, call.pool)
        })
    }
}

/// `(X, iterations, relative residuals, converged)` of a block solve.
pub(super) type Solution<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<bool>>,
);

/// A block solve's result (`n × k` solutions) as arrays.
pub(super) fn solution(
    py: Python<'_>,
    n: usize,
    k: usize,
    res: CgResult,
) -> PyResult<Solution<'_>> {
    let iterations: Vec<u64> = res.iterations.iter().map(|&i| i as u64).collect();
    Ok((
        to_array2(n, k, res.x)?.into_pyarray(py),
        iterations.into_pyarray(py),
        res.relative_residual.into_pyarray(py),
        res.converged.into_pyarray(py),
    ))
}

/// Lanczos tridiagonals of `on` from each column of `starts` (`dim × k`): a list of `(alpha,
/// beta)` pairs.
pub(super) fn lanczos<'py>(
    py: Python<'py>,
    on: &impl Operand,
    starts: PyReadonlyArray2<'py, f64>,
    steps: usize,
    n_jobs: usize,
) -> PyResult<Vec<VectorPair<'py>>> {
    let starts = c_order(&starts);
    let k = starts.ncols();
    let out = on.run(py, n_jobs, |op, pool| {
        tridiagonalize(op, flat(&starts), k, steps, pool)
    })?;
    Ok(out
        .into_iter()
        .map(|t| (t.alpha.into_pyarray(py), t.beta.into_pyarray(py)))
        .collect())
}

/// `(values, vectors, residuals, block products, converged)` of a block Lanczos run.
pub(super) type Eigenpairs<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<f64>>,
    usize,
    bool,
);

/// Top `params.k` eigenpairs of `on` by restarted block Lanczos.
pub(super) fn top_eigen<'py>(
    py: Python<'py>,
    on: &impl Operand,
    params: BlockLanczosParams,
    n_jobs: usize,
) -> PyResult<Eigenpairs<'py>> {
    let dim = on.dim(py);
    let res = on.run(py, n_jobs, |op, pool| top_eigenpairs(op, &params, pool))?;
    Ok((
        res.values.into_pyarray(py),
        to_array2(dim, params.k, res.vectors)?.into_pyarray(py),
        res.residuals.into_pyarray(py),
        res.products,
        res.converged,
    ))
}

/// The upper and lower LOVE factors, as arrays.
pub(super) type FactorPair<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>);

/// The LOVE factors `(upper, lower)` (clusters × rank each) of `s ΨΨᵀ + σ² I` whose clusters'
/// Gram matrix `ΨᵀΨ` is `on`, from a block Lanczos decomposition of dimension `dim` started
/// at `start` (clusters × block; see `partition::variance`).
#[allow(clippy::too_many_arguments)]
pub(super) fn variance_factors<'py>(
    py: Python<'py>,
    on: &impl Operand,
    start: PyReadonlyArray2<'py, f64>,
    dim: usize,
    seed: u64,
    variances: (f64, f64),
    n_partitions: usize,
    n_jobs: usize,
) -> PyResult<FactorPair<'py>> {
    let start = c_order(&start);
    let b = start.ncols();
    let f: LanczosFactors = on.run(py, n_jobs, |op, pool| {
        lanczos_factors(
            op,
            flat(&start),
            b,
            dim,
            seed,
            variances,
            n_partitions,
            pool,
        )
    })?;
    Ok((
        to_array2(f.clusters, f.rank, f.upper)?.into_pyarray(py),
        to_array2(f.clusters, f.rank, f.lower)?.into_pyarray(py),
    ))
}

/// Solves `A X = B` by CG for the operator `apply` (`dim × dim`), preconditioned by the
/// inverse of `diagonal` when given (Jacobi). Returns `(X, iterations, relative residuals,
/// converged)`.
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
) -> PyResult<Solution<'py>> {
    let b = c_order(&b);
    let (n, k) = b.dim();
    let diagonal: Option<Vec<f64>> = diagonal.map(|d| d.as_array().iter().copied().collect());
    let on = Callable {
        apply: &apply,
        dim: n,
    };
    let res = on.run(py, n_jobs, |op, pool| {
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
    solution(py, n, k, res)
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
    let dim = starts.as_array().nrows();
    lanczos(py, &Callable { apply: &apply, dim }, starts, steps, n_jobs)
}

/// Top `k` eigenpairs of the operator `apply` (`dim × dim`) by restarted block Lanczos.
/// Returns `(values, vectors, residuals, block products, converged)`.
#[allow(clippy::too_many_arguments)]
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
) -> PyResult<Eigenpairs<'py>> {
    let params = BlockLanczosParams {
        k,
        block,
        depth,
        tol,
        max_restarts,
        seed,
    };
    top_eigen(py, &Callable { apply: &apply, dim }, params, n_jobs)
}

/// The LOVE factors `(upper, lower)` (`dim × rank` each) of `s ΨΨᵀ + σ² I` whose clusters'
/// Gram matrix `ΨᵀΨ` is the operator `apply` ([`variance_factors`]).
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
) -> PyResult<FactorPair<'py>> {
    let on = Callable {
        apply: &apply,
        dim: start.as_array().nrows(),
    };
    let variances = (signal_variance, noise_variance);
    variance_factors(py, &on, start, dim, seed, variances, n_partitions, n_jobs)
}
