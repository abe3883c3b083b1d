//! Python face of a forest whose trees are spread over several processes
//! (`mondrian_learn.dask`): growing a part's trees with their places in the whole forest, and
//! folding each part's predictions into running sums that the next part continues.

use super::arrays::AnyPoints;
use super::error::to_py_err;
use super::forest::{not_a, prepare_for, ready_for, Forest};
use super::run::Length;
use crate::error::Error;
use crate::forest::regression::mixture::MomentSums;
use crate::forest::ForestModel;
use crate::points::Points;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray2};
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

    /// Regression: the running sums Σ w (mean − prior mean), Σ w (mean − prior mean)² and
    /// Σ w var of the predictive components at each row (N × 3), continued from `sums` with
    /// this forest's trees.
    fn fold_moments<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        sums: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.view()?;
        let sums = sums.as_array();
        if sums.ncols() != 3 {
            return Err(to_py_err(Error::InvalidInput(format!(
                "moment sums need 3 columns, got {}",
                sums.ncols()
            ))));
        }
        let mut sums: Vec<MomentSums> = (sums.rows().into_iter())
            .map(|r| (r[0], r[1], r[2]))
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
        let flat: Vec<f64> = sums.into_iter().flat_map(|(a, b, c)| [a, b, c]).collect();
        let n = flat.len() / 3;
        let out = ndarray::Array2::from_shape_vec((n, 3), flat)
            .map_err(|e| to_py_err(Error::InvalidInput(e.to_string())))?;
        Ok(out.into_pyarray(py))
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
