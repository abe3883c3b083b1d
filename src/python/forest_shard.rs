//! Python face of a forest whose trees are spread over several processes
//! (`mondrian_learn.dask`): growing a part's trees with their places in the whole forest, and
//! folding each part's predictions into running sums that the next part continues.

use super::arrays::{AnyPoints, VectorPair};
use super::error::to_py_err;
use super::forest::{not_a, prepare_for, ready_for, Forest};
use super::run::Length;
use crate::error::Error;
use crate::forest::ForestModel;
use crate::points::Points;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

#[pymethods]
impl Forest {
    /// Makes this unfitted forest the trees `first, first + 1, …` of a forest with the same
    /// seed (they are grown with those trees' random streams).
    fn offset_trees(&self, py: Python<'_>, first: u64) -> PyResult<()> {
        self.inner
            .write(py, 1, Length::Short, |model, _| match model {
                ForestModel::Regressor(m) => m.forest.offset_trees(first),
                ForestModel::Classifier(m) => m.forest.offset_trees(first),
            })
    }

    /// Regression: the running sums Σ w (mean − prior mean) and Σ w (var + (mean − prior
    /// mean)²) of the predictive components at each row, continued from `offsets`, `seconds`
    /// with this forest's trees.
    fn fold_moments<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        offsets: PyReadonlyArray1<'py, f64>,
        seconds: PyReadonlyArray1<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<VectorPair<'py>> {
        let x = x.view()?;
        let (offsets, seconds) = (offsets.as_array(), seconds.as_array());
        if offsets.len() != seconds.len() {
            return Err(to_py_err(Error::InvalidInput(format!(
                "{} offset sums but {} second-moment sums",
                offsets.len(),
                seconds.len()
            ))));
        }
        let mut sums: Vec<(f64, f64)> = (offsets.iter().copied())
            .zip(seconds.iter().copied())
            .collect();
        let sums = self.inner.read_prepared(
            py,
            n_jobs,
            Length::Short,
            ready_for(x.n_rows()),
            prepare_for(x.n_rows()),
            |model, call| match model {
                ForestModel::Regressor(m) => {
                    m.fold_moments(&x, call.pool, &mut sums)?;
                    Ok(sums)
                }
                ForestModel::Classifier(_) => Err(not_a("regressor")),
            },
        )?;
        let (offsets, seconds): (Vec<f64>, Vec<f64>) = sums.into_iter().unzip();
        Ok((offsets.into_pyarray(py), seconds.into_pyarray(py)))
    }

    /// Classification: the running sums over trees of the class probabilities at each row
    /// (N × K), continued from `sums` with this forest's trees.
    fn fold_proba<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        sums: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.view()?;
        let mut out = sums.as_array().as_standard_layout().into_owned();
        let shape = out.raw_dim();
        let out = self.inner.read_prepared(
            py,
            n_jobs,
            Length::Short,
            ready_for(x.n_rows()),
            prepare_for(x.n_rows()),
            |model, call| match model {
                ForestModel::Classifier(m) if shape[1] == m.n_classes => {
                    let flat = (out.as_slice_mut())
                        .ok_or_else(|| Error::InvalidInput("sums are not contiguous".into()))?;
                    m.fold_proba(&x, call.pool, flat)?;
                    Ok(out)
                }
                ForestModel::Classifier(m) => Err(Error::InvalidInput(format!(
                    "running sums have {} columns for {} classes",
                    shape[1], m.n_classes
                ))),
                ForestModel::Regressor(_) => Err(not_a("classifier")),
            },
        )?;
        Ok(out.into_pyarray(py))
    }
}
