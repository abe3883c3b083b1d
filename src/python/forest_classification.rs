//! Python face of the classification forest's own methods (the handle, construction and
//! what every forest has are in `forest.rs`): the discounts of the hierarchical smoothing and
//! the sharpness of the trees' average.

use super::error::to_py_err;
use super::forest::{classifier, Forest};
use super::run::Length;
use crate::forest::classification::sharpness::{is_valid, sharpen_rows};
use crate::forest::ForestModel;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Rows of class probabilities (N × K; sums over trees divided by their number, as a forest
/// split into parts folds them) sharpened by τ as a classifier's predictions are.
#[pyfunction]
pub fn sharpen<'py>(
    py: Python<'py>,
    proba: PyReadonlyArray2<'py, f64>,
    sharpness: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    if !is_valid(sharpness) {
        return Err(PyValueError::new_err(format!(
            "sharpness {sharpness} out of range (finite, > 0)"
        )));
    }
    let view = proba.as_array();
    let (n, k) = view.dim();
    let mut values: Vec<f64> = view.iter().copied().collect(); // row-major, any input layout
    sharpen_rows(&mut values, k, sharpness);
    Ok(super::arrays::to_array2(n, k, values)?.into_pyarray(py))
}

#[pymethods]
impl Forest {
    /// Classification: the discounts' rate γ and floor (`min_discount`).
    #[getter]
    fn discounts(&self, py: Python<'_>) -> PyResult<(f64, f64)> {
        self.inner
            .peek(py, |model| Ok(classifier(model)?.discounts()))
            .map_err(to_py_err)
    }

    /// Classification: τ of the sharpened average `p_k ∝ p̄_k^τ`.
    #[getter]
    fn sharpness(&self, py: Python<'_>) -> PyResult<f64> {
        self.inner
            .peek(py, |model| Ok(classifier(model)?.sharpness()))
            .map_err(to_py_err)
    }

    /// Classification: sets τ (finite, > 0).
    fn set_sharpness(&self, py: Python<'_>, sharpness: f64) -> PyResult<()> {
        self.inner
            .write(py, 1, Length::Short, |model, _| match model {
                ForestModel::Classifier(m) => m.set_sharpness(sharpness),
                ForestModel::Regressor(_) => Err(super::forest::not_a("classifier")),
            })
    }

    /// Classification: sets the discounts' rate γ (finite, ≥ 0) and floor (in [0, 1]); the
    /// trees stay, the node means are computed again when next needed.
    fn set_discounts(&self, py: Python<'_>, rate: f64, floor: f64) -> PyResult<()> {
        self.inner
            .write(py, 1, Length::Short, |model, _| match model {
                ForestModel::Classifier(m) => m.set_discounts(rate, floor),
                ForestModel::Regressor(_) => Err(super::forest::not_a("classifier")),
            })
    }
}
