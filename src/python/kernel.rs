//! Python face of `kernel`: the feature map (with the lifetime path) and kernel ridge.

use super::error::{to_py_err, ToPyResult};
use super::run::PoolCache;
use crate::error::{Error, Result};
use crate::kernel::path::{lifetime_path, Checkpoints, PathOptions, SolverChoice};
use crate::kernel::path_solver::SolverUsed;
use crate::kernel::ridge::KernelRidge as CoreRidge;
use crate::kernel::transformer::{grow_forest, MondrianFeatures};
use crate::serialize;
use crate::sparse::Csr;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// Calls the Python `progress(done)` or `progress(done, total)` from the core (with the GIL),
/// mapping its failure.
fn notify(progress: &Option<Py<PyAny>>, done: usize, total: Option<usize>) -> Result<()> {
    match progress {
        None => Ok(()),
        Some(cb) => Python::attach(|py| {
            match total {
                None => cb.call1(py, (done,)),
                Some(total) => cb.call1(py, (done, total)),
            }
            .map(|_| ())
            .map_err(|e| Error::Interrupted(e.to_string()))
        }),
    }
}

/// (data, indices, indptr, n_columns) of a CSR matrix, for `scipy.sparse.csr_matrix`.
#[allow(clippy::type_complexity)]
fn csr_parts(
    py: Python<'_>,
    csr: Csr,
) -> (
    Bound<'_, PyArray1<f64>>,
    Bound<'_, PyArray1<i32>>,
    Bound<'_, PyArray1<i64>>,
    usize,
) {
    (
        csr.data.into_pyarray(py),
        csr.indices.into_pyarray(py),
        csr.indptr.into_pyarray(py),
        csr.n_cols,
    )
}

fn restore<T: serde::de::DeserializeOwned>(bytes: &[u8], ok: impl Fn(&T) -> bool) -> PyResult<T> {
    let inner: T = serialize::from_bytes(bytes).map_err(to_py_err)?;
    if !ok(&inner) {
        return Err(to_py_err(Error::Corrupt(
            "inconsistent kernel model arrays".into(),
        )));
    }
    Ok(inner)
}

/// M Mondrian trees and the feature columns of their leaves.
#[pyclass(module = "mondrian_learn._core")]
pub struct KernelFeatures {
    inner: MondrianFeatures,
    pools: PoolCache,
}

#[pymethods]
impl KernelFeatures {
    /// Samples `n_trees` trees with lifetime `lifetime` on the rows of `x`.
    #[new]
    #[pyo3(signature = (x, n_trees, lifetime, seed, n_jobs, slice, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        n_trees: usize,
        lifetime: f64,
        seed: u64,
        n_jobs: usize,
        slice: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let x = x.as_array();
        let pools = PoolCache::default();
        let inner = pools.run(py, n_jobs, |pool| {
            let forest = grow_forest(&x, n_trees, lifetime, seed, slice, pool, |done| {
                notify(&progress, done, None)
            })?;
            MondrianFeatures::new(forest)
        })?;
        Ok(Self { inner, pools })
    }

    /// CSR parts of the features of `x` at the trees' lifetime or an earlier `lifetime`.
    #[pyo3(signature = (x, n_jobs, lifetime=None))]
    #[allow(clippy::type_complexity)]
    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
        lifetime: Option<f64>,
    ) -> PyResult<(
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<i32>>,
        Bound<'py, PyArray1<i64>>,
        usize,
    )> {
        let x = x.as_array();
        let inner = &self.inner;
        let csr = self
            .pools
            .run(py, n_jobs, |pool| inner.transform(&x, lifetime, pool))?;
        Ok(csr_parts(py, csr))
    }

    /// Number of feature columns at the trees' lifetime or an earlier `lifetime`.
    #[pyo3(signature = (lifetime=None))]
    fn n_columns(&self, lifetime: Option<f64>) -> PyResult<usize> {
        ToPyResult(self.inner.n_columns(lifetime)).into()
    }

    /// Number of trees.
    #[getter]
    fn n_trees(&self) -> usize {
        self.inner.forest.trees.len()
    }

    /// The lifetime path on the training points with targets `y` (module `kernel::path`).
    #[pyo3(signature = (y, x_val, y_val, max_lifetime, alpha, n_checkpoints, lifetimes, solver, max_dense_features, gradient_tol, gradient_max_iter, record_weights, n_jobs, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn path<'py>(
        &self,
        py: Python<'py>,
        y: PyReadonlyArray1<'py, f64>,
        x_val: Option<PyReadonlyArray2<'py, f64>>,
        y_val: Option<PyReadonlyArray1<'py, f64>>,
        max_lifetime: f64,
        alpha: f64,
        n_checkpoints: Option<usize>,
        lifetimes: Option<Vec<f64>>,
        solver: &str,
        max_dense_features: usize,
        gradient_tol: f64,
        gradient_max_iter: usize,
        record_weights: bool,
        n_jobs: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let solver = match solver {
            "auto" => SolverChoice::Auto,
            "cholesky" => SolverChoice::Cholesky,
            "inverse" => SolverChoice::Inverse,
            "gradient" => SolverChoice::Gradient,
            other => {
                return Err(to_py_err(Error::InvalidParameter {
                    name: "solver",
                    reason: format!(
                        "must be 'auto', 'cholesky', 'inverse' or 'gradient', got {other:?}"
                    ),
                }))
            }
        };
        let checkpoints = match (n_checkpoints, lifetimes) {
            (_, Some(l)) => Checkpoints::Lifetimes(l),
            (Some(k), None) => Checkpoints::Count(k),
            (None, None) => Checkpoints::EveryCut,
        };
        let options = PathOptions {
            alpha,
            solver,
            max_dense_features,
            gradient_tol,
            gradient_max_iter,
            record_weights,
        };
        let y = y.as_array();
        let (x_val, y_val) = (
            x_val.as_ref().map(|x| x.as_array()),
            y_val.as_ref().map(|y| y.as_array()),
        );
        let validation = match (&x_val, &y_val) {
            (Some(x), Some(y)) => Some((x, y)),
            (None, None) => None,
            _ => {
                return Err(to_py_err(Error::InvalidInput(
                    "give both validation points and targets, or neither".into(),
                )))
            }
        };
        let forest = &self.inner.forest;
        let points = self.pools.run(py, n_jobs, |_| {
            lifetime_path(
                forest,
                &y,
                validation,
                max_lifetime,
                &checkpoints,
                &options,
                |done, total| notify(&progress, done, Some(total)),
            )
        })?;
        let out = PyDict::new(py);
        let column = |f: fn(&crate::kernel::path::PathPoint) -> f64| -> Vec<f64> {
            points.iter().map(f).collect()
        };
        out.set_item("lifetimes", column(|p| p.lifetime).into_pyarray(py))?;
        out.set_item("train_mse", column(|p| p.train_mse).into_pyarray(py))?;
        out.set_item(
            "validation_mse",
            column(|p| p.validation_mse).into_pyarray(py),
        )?;
        out.set_item("log_evidence", column(|p| p.log_evidence).into_pyarray(py))?;
        out.set_item("log_det", column(|p| p.log_det).into_pyarray(py))?;
        let counts = |f: fn(&crate::kernel::path::PathPoint) -> usize| -> Vec<i64> {
            points.iter().map(|p| f(p) as i64).collect()
        };
        out.set_item("n_cuts", counts(|p| p.n_cuts).into_pyarray(py))?;
        out.set_item("n_features", counts(|p| p.n_features).into_pyarray(py))?;
        out.set_item(
            "cg_iterations",
            counts(|p| p.cg_iterations).into_pyarray(py),
        )?;
        let names: Vec<&str> = points
            .iter()
            .map(|p| match p.solver {
                SolverUsed::Cholesky => "cholesky",
                SolverUsed::Inverse => "inverse",
                SolverUsed::Gradient => "gradient",
            })
            .collect();
        out.set_item("solver", names)?;
        if record_weights {
            let weights: Vec<Bound<'py, PyArray1<f64>>> = points
                .into_iter()
                .map(|p| p.weights.unwrap_or_default().into_pyarray(py))
                .collect();
            out.set_item("weights", weights)?;
        }
        Ok(out)
    }

    /// Ridge on these trees stopped at `lifetime`, after extending a copy of them with the
    /// extra points `x_extra` (conditional Mondrian) when given; `y` holds the targets of the
    /// training points, then of the extra points.
    #[pyo3(signature = (y, lifetime, alpha, n_jobs, x_extra=None))]
    fn ridge(
        &self,
        py: Python<'_>,
        y: PyReadonlyArray1<'_, f64>,
        lifetime: f64,
        alpha: f64,
        n_jobs: usize,
        x_extra: Option<PyReadonlyArray2<'_, f64>>,
    ) -> PyResult<KernelRidge> {
        let y = y.as_array();
        let x_extra = x_extra.as_ref().map(|x| x.as_array());
        let forest = &self.inner.forest;
        let inner = self.pools.run(py, n_jobs, |pool| {
            let mut forest = forest.clone();
            if let Some(x) = &x_extra {
                let rows = forest.add_points(x)?;
                forest.extend(rows, pool);
            }
            CoreRidge::from_forest(forest, lifetime, alpha, &y, pool)
        })?;
        Ok(KernelRidge {
            inner,
            pools: PoolCache::default(),
        })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes: PyResult<Vec<u8>> = ToPyResult(serialize::to_bytes(&self.inner)).into();
        Ok(PyBytes::new(py, &bytes?))
    }

    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: restore(bytes, MondrianFeatures::is_consistent)?,
            pools: PoolCache::default(),
        })
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let restore = py
            .import("mondrian_learn._core")?
            .getattr("KernelFeatures")?
            .getattr("from_bytes")?;
        Ok((restore, (self.to_bytes(py)?,)))
    }
}

/// Ridge regression on Mondrian kernel features, batch or online.
#[pyclass(module = "mondrian_learn._core")]
pub struct KernelRidge {
    inner: CoreRidge,
    pools: PoolCache,
}

#[pymethods]
impl KernelRidge {
    /// Samples `n_trees` trees with lifetime `lifetime` on `x` and fits the ridge weights.
    #[new]
    #[pyo3(signature = (x, y, n_trees, lifetime, alpha, seed, n_jobs, slice, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
        n_trees: usize,
        lifetime: f64,
        alpha: f64,
        seed: u64,
        n_jobs: usize,
        slice: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let (x, y) = (x.as_array(), y.as_array());
        let pools = PoolCache::default();
        let inner = pools.run(py, n_jobs, |pool| {
            crate::kernel::ridge::check_alpha(alpha)?;
            crate::kernel::ridge::check_targets(&y, x.nrows())?;
            let forest = grow_forest(&x, n_trees, lifetime, seed, slice, pool, |done| {
                notify(&progress, done, None)
            })?;
            CoreRidge::from_forest(forest, lifetime, alpha, &y, pool)
        })?;
        Ok(Self { inner, pools })
    }

    /// Online update (conditional Mondrian extension, new columns, rank-one updates).
    fn partial_fit(
        &mut self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
        n_jobs: usize,
    ) -> PyResult<()> {
        let (x, y) = (x.as_array(), y.as_array());
        let inner = &mut self.inner;
        self.pools
            .run(py, n_jobs, |pool| inner.partial_fit(&x, &y, pool))
    }

    /// ȳ + φ(x)·w per row.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = x.as_array();
        let inner = &self.inner;
        let out = self.pools.run(py, n_jobs, |pool| inner.predict(&x, pool))?;
        Ok(out.into_pyarray(py))
    }

    /// CSR parts of the features of `x` in the column order of `weights`.
    #[allow(clippy::type_complexity)]
    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<(
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<i32>>,
        Bound<'py, PyArray1<i64>>,
        usize,
    )> {
        let x = x.as_array();
        let inner = &self.inner;
        let csr = self
            .pools
            .run(py, n_jobs, |pool| inner.transform(&x, pool))?;
        Ok(csr_parts(py, csr))
    }

    /// The weights in column order, and each column's tree and node.
    #[allow(clippy::type_complexity)]
    fn weights<'py>(
        &self,
        py: Python<'py>,
    ) -> (
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i64>>,
    ) {
        let (w, owners) = self.inner.weights();
        (
            w.to_vec().into_pyarray(py),
            owners
                .iter()
                .map(|&(t, _)| t as i64)
                .collect::<Vec<_>>()
                .into_pyarray(py),
            owners
                .iter()
                .map(|&(_, j)| j as i64)
                .collect::<Vec<_>>()
                .into_pyarray(py),
        )
    }

    #[getter]
    fn log_marginal_likelihood(&self) -> f64 {
        self.inner.log_marginal_likelihood()
    }

    #[getter]
    fn log_det(&self) -> f64 {
        self.inner.log_det()
    }

    #[getter]
    fn intercept(&self) -> f64 {
        self.inner.intercept()
    }

    #[getter]
    fn lifetime(&self) -> f64 {
        self.inner.lifetime()
    }

    #[getter]
    fn n_columns(&self) -> usize {
        self.inner.n_columns()
    }

    #[getter]
    fn n_trees(&self) -> usize {
        self.inner.forest.trees.len()
    }

    #[getter]
    fn n_rows(&self) -> usize {
        self.inner.forest.n_rows()
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes: PyResult<Vec<u8>> = ToPyResult(serialize::to_bytes(&self.inner)).into();
        Ok(PyBytes::new(py, &bytes?))
    }

    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: restore(bytes, CoreRidge::is_consistent)?,
            pools: PoolCache::default(),
        })
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let restore = py
            .import("mondrian_learn._core")?
            .getattr("KernelRidge")?
            .getattr("from_bytes")?;
        Ok((restore, (self.to_bytes(py)?,)))
    }
}
