//! Python face of `kernel::grid`: the Mondrian grid's lifetime search (state and moves; the
//! optimisers are Python's) and the ridge on the grid features it refits.

use super::arrays::{csr_parts, per_row, set_columns, to_array2, AnyPoints, CsrParts, RowValues};
use super::error::to_py_err;
use super::pickle::pickled;
use super::run::{Handle, Length};
use crate::error::Error;
use crate::kernel::grid::model::{active_cuts, cells, check_lifetimes};
use crate::kernel::grid::{GridPoint, GridRidge as CoreRidge, GridSearch as CoreSearch};
use crate::kernel::path::{PathOptions, SolverChoice};
use crate::sparse::Csr;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The lifetime search's state on training and validation points.
#[pyclass(module = "mondrian_learn._core")]
pub struct GridSearch {
    inner: Handle<CoreSearch>,
}

#[pymethods]
impl GridSearch {
    /// `n_grids` grids at λ = 0 on the rows of `x` (targets `y`), scored on `x_val`/`y_val`
    /// (zero rows: no validation); the ridge kept by `solver` with penalty `alpha`; the rows
    /// weighted by `weights` and `val_weights` when given.
    #[new]
    #[pyo3(signature = (x, y, x_val, y_val, n_grids, seed, alpha, solver, max_dense_features, gradient_tol, gradient_max_iter, n_jobs, weights=None, val_weights=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        x: AnyPoints<'_>,
        y: PyReadonlyArray1<'_, f64>,
        x_val: AnyPoints<'_>,
        y_val: PyReadonlyArray1<'_, f64>,
        n_grids: usize,
        seed: u64,
        alpha: f64,
        solver: &str,
        max_dense_features: usize,
        gradient_tol: f64,
        gradient_max_iter: usize,
        n_jobs: usize,
        weights: Option<PyReadonlyArray1<'_, f64>>,
        val_weights: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<Self> {
        let options = PathOptions {
            alpha,
            solver: SolverChoice::named(solver).map_err(to_py_err)?,
            max_dense_features,
            gradient_tol,
            gradient_max_iter,
            record_weights: false,
        };
        let (x, x_val) = (x.view()?, x_val.view()?);
        let (y, y_val) = (y.as_array().to_vec(), y_val.as_array().to_vec());
        let weights = weights.map(|w| w.as_array().to_vec());
        let val_weights = val_weights.map(|w| w.as_array().to_vec());
        let inner = Handle::build(py, n_jobs, Length::Long, |_| {
            CoreSearch::new(
                &x,
                &y,
                weights.as_deref(),
                &x_val,
                &y_val,
                val_weights.as_deref(),
                n_grids,
                seed,
                options,
            )
        })?;
        Ok(Self { inner })
    }

    /// Per dimension, how many of its cuts (in birth order over all grids) are active.
    #[getter]
    fn active(&self, py: Python<'_>) -> Vec<usize> {
        self.inner.peek(py, |s| s.active().to_vec())
    }

    /// The current lifetimes.
    fn lifetimes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let out = self
            .inner
            .write(py, 1, Length::Short, |s, _| Ok(s.lifetimes()))?;
        Ok(out.into_pyarray(py))
    }

    /// The lifetime of dimension `dim` with its first `count` cuts active (None: fewer exist).
    fn lifetime_after(&self, py: Python<'_>, dim: usize, count: usize) -> PyResult<Option<f64>> {
        self.inner.write(py, 1, Length::Short, |s, _| {
            if dim >= s.d() {
                return Err(Error::InvalidInput(format!("dimension {dim} out of range")));
            }
            Ok(s.process.lifetime_after(dim, count))
        })
    }

    /// Moves `dim` to each of `counts` active cuts in turn, evaluating each, then restores the
    /// state; stops at the first count beyond the cuts that exist.
    fn try_moves<'py>(
        &self,
        py: Python<'py>,
        dim: usize,
        counts: Vec<usize>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let points = self.inner.write(py, n_jobs, Length::Long, |s, call| {
            s.try_moves(dim, &counts, call.pool)
        })?;
        points_dict(py, &points)
    }

    /// Moves `dim` to `count` active cuts and evaluates there (an empty record, nothing
    /// changed, when fewer cuts exist).
    fn move_to<'py>(
        &self,
        py: Python<'py>,
        dim: usize,
        count: usize,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let points = self.inner.write(py, n_jobs, Length::Long, |s, call| {
            if s.move_to(dim, count)? {
                Ok(vec![s.evaluate(call.pool)?])
            } else {
                Ok(Vec::new())
            }
        })?;
        points_dict(py, &points)
    }

    /// Evaluates the current state.
    fn evaluate<'py>(&self, py: Python<'py>, n_jobs: usize) -> PyResult<Bound<'py, PyDict>> {
        let point = self
            .inner
            .write(py, n_jobs, Length::Long, |s, call| s.evaluate(call.pool))?;
        points_dict(py, &[point])
    }

    /// The weight of every training row's cell in every grid (N × M), as last evaluated.
    fn row_weights<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (weights, m) = self.inner.peek(py, |s| (s.row_weights(), s.m()));
        Ok(to_array2(weights.len() / m, m, weights)?.into_pyarray(py))
    }

    /// ȳ + φ(x)·w for the validation rows, as last evaluated.
    fn validation_predictions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner
            .peek(py, CoreSearch::validation_predictions)
            .into_pyarray(py)
    }

    /// CSR parts of the features of the first `n_rows` search points (training rows, then
    /// validation rows) at `lifetimes`, built from scratch.
    fn transform<'py>(
        &self,
        py: Python<'py>,
        lifetimes: Vec<f64>,
        n_rows: usize,
        n_jobs: usize,
    ) -> PyResult<CsrParts<'py>> {
        let csr = self.inner.write(py, n_jobs, Length::Long, |s, call| {
            check_lifetimes(&lifetimes, s.d())?;
            if n_rows == 0 || n_rows > s.process.knots.n_points() {
                return Err(Error::InvalidInput(format!("n_rows {n_rows} out of range")));
            }
            let cuts = active_cuts(&mut s.process, &lifetimes);
            let found = cells(&s.process, &cuts, n_rows, call.pool);
            let value = 1.0 / (s.m() as f64).sqrt();
            let entries: Vec<(u32, f64)> = found.rows_pos.iter().map(|&c| (c, value)).collect();
            Csr::with_fixed_row_length(found.first[s.m()], s.m(), &entries)
        })?;
        Ok(csr_parts(py, csr))
    }

    /// Ridge from scratch at `lifetimes` on the first `len(y)` search points with targets `y`
    /// (rows weighted by `weights` when given), with penalty `alpha`.
    #[pyo3(signature = (y, lifetimes, alpha, n_jobs, weights=None))]
    fn refit(
        &self,
        py: Python<'_>,
        y: PyReadonlyArray1<'_, f64>,
        lifetimes: Vec<f64>,
        alpha: f64,
        n_jobs: usize,
        weights: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<GridRidge> {
        let y = y.as_array().to_vec();
        let weights = weights.map(|w| w.as_array().to_vec());
        let model = self.inner.write(py, n_jobs, Length::Long, |s, call| {
            let options = PathOptions {
                alpha,
                ..s.options.clone()
            };
            CoreRidge::fit(
                &mut s.process,
                &lifetimes,
                &y,
                weights.as_deref(),
                &options,
                call.pool,
            )
        })?;
        Ok(GridRidge {
            inner: Handle::new(model),
        })
    }
}

/// Evaluated states as a dict of arrays (one entry per state).
fn points_dict<'py>(py: Python<'py>, points: &[GridPoint]) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let d = points.first().map_or(0, |p| p.lifetimes.len());
    let lifetimes: Vec<f64> = points.iter().flat_map(|p| p.lifetimes.clone()).collect();
    out.set_item(
        "lifetimes",
        to_array2(points.len(), d, lifetimes)?.into_pyarray(py),
    )?;
    set_columns(
        &out,
        points,
        &[
            ("validation_mse", |p| p.validation_mse),
            ("train_mse", |p| p.train_mse),
            ("log_evidence", |p| p.log_evidence),
        ],
    )?;
    set_columns(
        &out,
        points,
        &[
            ("n_features", |p| p.n_features as i64),
            ("cg_iterations", |p| p.cg_iterations as i64),
        ],
    )?;
    let names: Vec<&str> = points.iter().map(|p| p.solver.name()).collect();
    out.set_item("solver", names)?;
    Ok(out)
}

/// Ridge regression on Mondrian grid features at fixed lifetimes.
#[pyclass(module = "mondrian_learn._core")]
pub struct GridRidge {
    inner: Handle<CoreRidge>,
}

#[pymethods]
impl GridRidge {
    /// ȳ + φ(x)·w per row.
    fn predict<'py>(&self, py: Python<'py>, x: AnyPoints<'py>, n_jobs: usize) -> RowValues<'py> {
        per_row(&self.inner, py, x, n_jobs, Length::Short, |m, x, pool| {
            m.predict(x, pool)
        })
    }

    /// CSR parts of the features of `x` in the column order of `weights`.
    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
    ) -> PyResult<CsrParts<'py>> {
        let x = x.view()?;
        let csr = self
            .inner
            .read(py, n_jobs, Length::Short, |m, _| m.transform(&x))?;
        Ok(csr_parts(py, csr))
    }

    /// Per feature, the locations of grid `index`'s active cuts (sorted).
    fn cuts<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Vec<Bound<'py, PyArray1<f64>>>> {
        let cuts = self.inner.peek(py, |m| {
            let d = m.n_features();
            (index < m.n_grids).then(|| {
                (0..d)
                    .map(|k| m.cuts[index * d + k].iter().map(|c| c.location).collect())
                    .collect::<Vec<Vec<f64>>>()
            })
        });
        let cuts = cuts.ok_or_else(|| {
            to_py_err(Error::InvalidInput(format!(
                "grid index {index} out of range"
            )))
        })?;
        Ok(cuts.into_iter().map(|c| c.into_pyarray(py)).collect())
    }

    /// The weights in column order.
    #[getter]
    fn weights<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.peek(py, |m| m.weights.clone()).into_pyarray(py)
    }

    /// λ_d per feature.
    #[getter]
    fn lifetimes<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner
            .peek(py, |m| m.lifetimes.clone())
            .into_pyarray(py)
    }

    #[getter]
    fn intercept(&self, py: Python<'_>) -> f64 {
        self.inner.peek(py, |m| m.intercept)
    }

    #[getter]
    fn alpha(&self, py: Python<'_>) -> f64 {
        self.inner.peek(py, |m| m.alpha)
    }

    #[getter]
    fn n_columns(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, CoreRidge::n_columns)
    }

    #[getter]
    fn n_grids(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.n_grids)
    }

    #[getter]
    fn cg_iterations(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.cg_iterations)
    }
}

pickled!(GridRidge, CoreRidge::is_consistent);
