//! Python face of the classification forest's own methods (the handle, construction and
//! what every forest has are in `forest.rs`): the discounts of the hierarchical smoothing.

use super::error::to_py_err;
use super::forest::{classifier, Forest};
use super::run::Length;
use crate::forest::ForestModel;
use pyo3::prelude::*;

#[pymethods]
impl Forest {
    /// Classification: the discounts' rate γ and floor (`min_discount`).
    #[getter]
    fn discounts(&self, py: Python<'_>) -> PyResult<(f64, f64)> {
        self.inner
            .peek(py, |model| Ok(classifier(model)?.discounts()))
            .map_err(to_py_err)
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
