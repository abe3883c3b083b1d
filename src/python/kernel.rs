//! Python face of `kernel`: the feature map (with the lifetime path and the refit after a
//! lifetime search) and kernel ridge.

use super::arrays::{csr_parts, per_row, set_columns, AnyPoints, CsrParts};
use super::error::to_py_err;
use super::pickle::pickled;
use super::run::{Handle, Length};
use crate::error::Error;
use crate::kernel::mondrian_features::{grow_forest, MondrianFeatures};
use crate::kernel::path::{lifetime_path, Checkpoints, PathOptions, PathPoint, SolverChoice};
use crate::kernel::ridge::KernelRidge as CoreRidge;
use crate::points::Points;
use crate::training_data::check_targets_and_weights;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// M Mondrian trees and the feature columns of their leaves.
#[pyclass(module = "mondrian_learn._core")]
pub struct KernelFeatures {
    inner: Handle<MondrianFeatures>,
}

#[pymethods]
impl KernelFeatures {
    /// Samples `n_trees` trees with lifetime `lifetime` on the rows of `x`.
    #[new]
    #[pyo3(signature = (x, n_trees, lifetime, seed, n_jobs, slice, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        x: AnyPoints<'_>,
        n_trees: usize,
        lifetime: f64,
        seed: u64,
        n_jobs: usize,
        slice: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let x = x.view()?;
        let inner = Handle::build(py, n_jobs, Length::Long, |call| {
            let how = call.growing(n_trees, slice);
            let forest = grow_forest(&x, lifetime, seed, &how, |done| {
                call.notify(&progress, &[done])
            })?;
            MondrianFeatures::new(forest)
        })?;
        Ok(Self { inner })
    }

    /// CSR parts of the features of `x` at the trees' lifetime or an earlier `lifetime`.
    #[pyo3(signature = (x, n_jobs, lifetime=None))]
    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
        lifetime: Option<f64>,
    ) -> PyResult<CsrParts<'py>> {
        let x = x.view()?;
        let csr = self.inner.read(py, n_jobs, Length::Short, |m, call| {
            m.transform(&x, lifetime, call.pool)
        })?;
        Ok(csr_parts(py, csr))
    }

    /// Number of feature columns at the trees' lifetime or an earlier `lifetime`.
    #[pyo3(signature = (lifetime=None))]
    fn n_columns(&self, py: Python<'_>, lifetime: Option<f64>) -> PyResult<usize> {
        self.inner
            .peek(py, |m| m.n_columns(lifetime))
            .map_err(to_py_err)
    }

    /// Number of trees.
    #[getter]
    fn n_trees(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.forest.trees.len())
    }

    /// The lifetime path on the training points with targets `y` (module `kernel::path`);
    /// `weights` and `val_weights` weigh the training and validation rows when given.
    #[pyo3(signature = (y, x_val, y_val, max_lifetime, alpha, n_checkpoints, lifetimes, solver, max_dense_features, gradient_tol, gradient_max_iter, record_weights, n_jobs, progress=None, weights=None, val_weights=None))]
    #[allow(clippy::too_many_arguments)]
    fn path<'py>(
        &self,
        py: Python<'py>,
        y: PyReadonlyArray1<'py, f64>,
        x_val: Option<AnyPoints<'py>>,
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
        weights: Option<PyReadonlyArray1<'py, f64>>,
        val_weights: Option<PyReadonlyArray1<'py, f64>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let checkpoints = Checkpoints::from_options(n_checkpoints, lifetimes);
        let options = PathOptions {
            alpha,
            solver: SolverChoice::named(solver).map_err(to_py_err)?,
            max_dense_features,
            gradient_tol,
            gradient_max_iter,
            record_weights,
        };
        let y = y.as_array();
        let x_val = x_val.as_ref().map(AnyPoints::view).transpose()?;
        let y_val = y_val.as_ref().map(|y| y.as_array());
        let weights = weights.as_ref().map(|w| w.as_array());
        let val_weights = val_weights.as_ref().map(|w| w.as_array());
        let validation = match (&x_val, &y_val) {
            (Some(x), Some(y)) => Some((x as &dyn Points, y, val_weights.as_ref())),
            (None, None) if val_weights.is_none() => None,
            _ => {
                return Err(to_py_err(Error::InvalidInput(
                    "give both validation points and targets, or neither".into(),
                )))
            }
        };
        let points = self.inner.read(py, n_jobs, Length::Long, |m, call| {
            lifetime_path(
                &m.forest,
                &y,
                weights.as_ref(),
                validation,
                max_lifetime,
                &checkpoints,
                &options,
                call.pool,
                call.interrupt,
                |done, total| call.notify(&progress, &[done, total]),
            )
        })?;
        path_dict(py, points, record_weights)
    }

    /// Ridge on these trees stopped at `lifetime`, after extending a copy of them with the
    /// held-out points `x_held_out` when given; `y` (and `weights`, when given) hold the
    /// targets (weights) of the training points, then of the held-out points.
    #[pyo3(signature = (y, lifetime, alpha, n_jobs, x_held_out=None, weights=None))]
    #[allow(clippy::too_many_arguments)]
    fn refit(
        &self,
        py: Python<'_>,
        y: PyReadonlyArray1<'_, f64>,
        lifetime: f64,
        alpha: f64,
        n_jobs: usize,
        x_held_out: Option<AnyPoints<'_>>,
        weights: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<KernelRidge> {
        let y = y.as_array();
        let held_out = x_held_out.as_ref().map(AnyPoints::view).transpose()?;
        let weights = weights.as_ref().map(|w| w.as_array());
        let model = self.inner.read(py, n_jobs, Length::Long, |m, call| {
            m.refit(
                &y,
                weights.as_ref(),
                lifetime,
                alpha,
                held_out.as_ref().map(|x| x as &dyn Points),
                call.pool,
            )
        })?;
        Ok(KernelRidge {
            inner: Handle::new(model),
        })
    }
}

pickled!(KernelFeatures, MondrianFeatures::is_consistent);

/// The path's checkpoints as a dict of arrays (one entry per checkpoint).
fn path_dict(
    py: Python<'_>,
    points: Vec<PathPoint>,
    record_weights: bool,
) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    set_columns(
        &out,
        &points,
        &[
            ("lifetimes", |p| p.lifetime),
            ("train_mse", |p| p.train_mse),
            ("validation_mse", |p| p.validation_mse),
            ("log_evidence", |p| p.log_evidence),
            ("log_det", |p| p.log_det),
        ],
    )?;
    set_columns(
        &out,
        &points,
        &[
            ("n_cuts", |p| p.n_cuts as i64),
            ("n_features", |p| p.n_features as i64),
            ("cg_iterations", |p| p.cg_iterations as i64),
        ],
    )?;
    let names: Vec<&str> = points.iter().map(|p| p.solver.name()).collect();
    out.set_item("solver", names)?;
    if record_weights {
        let weights: Vec<Bound<'_, PyArray1<f64>>> = points
            .into_iter()
            .map(|p| p.weights.unwrap_or_default().into_pyarray(py))
            .collect();
        out.set_item("weights", weights)?;
    }
    Ok(out)
}

/// Ridge regression on Mondrian kernel features, batch or online.
#[pyclass(module = "mondrian_learn._core")]
pub struct KernelRidge {
    inner: Handle<CoreRidge>,
}

#[pymethods]
impl KernelRidge {
    /// Samples `n_trees` trees with lifetime `lifetime` on `x` and fits the ridge weights
    /// (rows weighted by `weights` when given).
    #[new]
    #[pyo3(signature = (x, y, n_trees, lifetime, alpha, seed, n_jobs, slice, progress=None, max_columns=usize::MAX, weights=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        x: AnyPoints<'_>,
        y: PyReadonlyArray1<'_, f64>,
        n_trees: usize,
        lifetime: f64,
        alpha: f64,
        seed: u64,
        n_jobs: usize,
        slice: usize,
        progress: Option<Py<PyAny>>,
        max_columns: usize,
        weights: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<Self> {
        let (x, y) = (x.view()?, y.as_array());
        let weights = weights.as_ref().map(|w| w.as_array());
        let inner = Handle::build(py, n_jobs, Length::Long, |call| {
            check_targets_and_weights(x.n_rows(), &y, weights.as_ref())?;
            let how = call.growing(n_trees, slice);
            let forest = grow_forest(&x, lifetime, seed, &how, |done| {
                call.notify(&progress, &[done])
            })?;
            CoreRidge::check_size(&forest, max_columns)?;
            CoreRidge::from_forest_weighted(
                forest,
                lifetime,
                alpha,
                &y,
                weights.as_ref(),
                call.pool,
            )
        })?;
        Ok(Self { inner })
    }

    /// Online update (conditional Mondrian extension, new columns, rank-one updates).
    #[pyo3(signature = (x, y, n_jobs, weights=None))]
    fn partial_fit(
        &self,
        py: Python<'_>,
        x: AnyPoints<'_>,
        y: PyReadonlyArray1<'_, f64>,
        n_jobs: usize,
        weights: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<()> {
        let (x, y) = (x.view()?, y.as_array());
        let weights = weights.as_ref().map(|w| w.as_array());
        self.inner.write(py, n_jobs, Length::Short, |m, call| {
            m.partial_fit(&x, &y, weights.as_ref(), call.pool)
        })
    }

    /// ȳ + φ(x)·w per row.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        per_row(&self.inner, py, x, n_jobs, Length::Short, |m, x, pool| {
            m.predict(x, pool)
        })
    }

    /// Predictive variance of a new target at each row (Bayesian view; O(C²) per row).
    fn predict_variance<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        per_row(&self.inner, py, x, n_jobs, Length::Long, |m, x, pool| {
            m.predict_variance(x, pool)
        })
    }

    /// L⁻¹φ(x) per row (n × C), from the fit's Cholesky factor L of ΦᵀVΦ + αI.
    fn whitened<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        per_row(&self.inner, py, x, n_jobs, Length::Long, |m, x, pool| {
            m.whitened(x, pool)
        })
    }

    /// σ̂², the noise variance at its maximum-likelihood value.
    #[getter]
    fn noise_variance(&self, py: Python<'_>) -> f64 {
        self.inner.peek(py, |m| m.noise_variance())
    }

    /// CSR parts of the features of `x` in the column order of `weights`.
    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
    ) -> PyResult<CsrParts<'py>> {
        let x = x.view()?;
        let csr = self.inner.read(py, n_jobs, Length::Short, |m, call| {
            m.transform(&x, call.pool)
        })?;
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
        let (w, trees, nodes) = self.inner.peek(py, |m| {
            let (w, owners) = m.weights();
            let trees: Vec<i64> = owners.iter().map(|&(t, _)| t as i64).collect();
            let nodes: Vec<i64> = owners.iter().map(|&(_, j)| j as i64).collect();
            (w.to_vec(), trees, nodes)
        });
        (
            w.into_pyarray(py),
            trees.into_pyarray(py),
            nodes.into_pyarray(py),
        )
    }

    #[getter]
    fn log_marginal_likelihood(&self, py: Python<'_>) -> f64 {
        self.inner.peek(py, CoreRidge::log_marginal_likelihood)
    }

    #[getter]
    fn log_det(&self, py: Python<'_>) -> f64 {
        self.inner.peek(py, CoreRidge::log_det)
    }

    #[getter]
    fn intercept(&self, py: Python<'_>) -> f64 {
        self.inner.peek(py, CoreRidge::intercept)
    }

    #[getter]
    fn lifetime(&self, py: Python<'_>) -> f64 {
        self.inner.peek(py, CoreRidge::lifetime)
    }

    #[getter]
    fn n_columns(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, CoreRidge::n_columns)
    }

    #[getter]
    fn n_trees(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.forest.trees.len())
    }

    #[getter]
    fn n_rows(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.forest.n_rows())
    }

    /// Bytes of the state the model keeps alive (see `KernelRidge::retained_bytes`).
    #[getter]
    fn retained_bytes(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, CoreRidge::retained_bytes)
    }
}

pickled!(KernelRidge, CoreRidge::is_consistent);
