//! Python face of `forest::classification`: the classification forest's class — its
//! constructor, class probabilities, the discounts of the hierarchical smoothing and the
//! sharpness of the trees' average, and the running sums of a forest split into parts (what
//! every forest has is `forest.rs`'s).

use super::arrays::{to_array2, AnyPoints};
use super::error::to_py_err;
use super::forest::{empty_forest, forest_methods, Kind};
use super::run::{Handle, Length};
use crate::error::{Error, Result};
use crate::forest::classification::sharpness::{is_valid, sharpen_rows};
use crate::forest::classification::ForestClassifier;
use crate::forest::ForestModel;
use crate::points::Points;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::ThreadPool;

/// A fitted (or empty) Mondrian classification forest held by Rust.
///
/// Predictions share the model; updates (and the lazy recomputation of stale node means)
/// take it alone, so concurrent Python threads wait for each other (`run.rs`).
#[pyclass(name = "ForestClassifier", module = "mondrian_learn._core")]
pub struct PyForestClassifier {
    inner: Handle<ForestClassifier>,
}

forest_methods!(
    PyForestClassifier,
    "ForestClassifier",
    ForestClassifier,
    u32
);

impl Kind for ForestClassifier {
    const STORED_AS: (u32, &'static str) = (1, "Classifier");
    /// `forest::classification::path`'s scores.
    const SCORES: [&'static str; 2] = ["log_loss", "accuracy"];

    fn from_stored(stored: ForestModel) -> Option<Self> {
        match stored {
            ForestModel::Classifier(model) => Some(model),
            ForestModel::Regressor(_) => None,
        }
    }

    fn is_ready(&self, n_rows: usize) -> bool {
        !self.means_worth_refreshing(n_rows)
    }

    fn prepare(&mut self, _n_rows: usize, pool: &ThreadPool) -> Result<()> {
        self.ensure_means(pool);
        Ok(())
    }
}

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
    Ok(to_array2(n, k, values)?.into_pyarray(py))
}

#[pymethods]
impl PyForestClassifier {
    /// A classification forest for `n_classes` classes (the first four arguments and the last
    /// three as `forest::empty_forest` says): discounts exp(−`discount_rate` · Δ), at least
    /// `min_discount`; cuts chosen by information gain.
    #[new]
    #[pyo3(signature = (n_features, lifetime, min_samples_split, seed, *, n_classes, discount_rate, min_discount=0.0, scale_features=true, tries=1, locations=1))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        n_features: usize,
        lifetime: f64,
        min_samples_split: usize,
        seed: u64,
        n_classes: usize,
        discount_rate: f64,
        min_discount: f64,
        scale_features: bool,
        tries: usize,
        locations: usize,
    ) -> PyResult<Self> {
        let (forest, guidance) = empty_forest(
            n_features,
            lifetime,
            min_samples_split,
            seed,
            scale_features,
            tries,
            locations,
        )?;
        let discounts = (discount_rate, min_discount);
        let model = ForestClassifier::new(forest, n_classes, discounts, guidance);
        Ok(Self {
            inner: Handle::new(model),
        })
    }

    /// Class probabilities at each row (N × K).
    fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.view()?;
        let out = self.ready(py, n_jobs, x.n_rows(), |model, pool| {
            model.predict_proba(&x, pool)
        })?;
        Ok(out.into_pyarray(py))
    }

    /// The class counts of every node of tree `index` (n_nodes × K).
    fn node_counts<'py>(
        &self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (k, counts) = self
            .inner
            .peek(py, |model| {
                Ok::<_, Error>((model.n_classes, model.node_counts(index)?.to_vec()))
            })
            .map_err(to_py_err)?;
        Ok(to_array2(counts.len() / k.max(1), k, counts)?.into_pyarray(py))
    }

    /// The discounts' rate γ and floor (`min_discount`).
    #[getter]
    fn discounts(&self, py: Python<'_>) -> (f64, f64) {
        self.inner.peek(py, |model| model.discounts())
    }

    /// τ of the sharpened average `p_k ∝ p̄_k^τ`.
    #[getter]
    fn sharpness(&self, py: Python<'_>) -> f64 {
        self.inner.peek(py, |model| model.sharpness())
    }

    /// Sets τ (finite, > 0).
    fn set_sharpness(&self, py: Python<'_>, sharpness: f64) -> PyResult<()> {
        (self.inner).write(py, 1, Length::Short, |model, _| {
            model.set_sharpness(sharpness)
        })
    }

    /// Sets the discounts' rate γ (finite, ≥ 0) and floor (in [0, 1]); the trees stay, the
    /// node means are computed again when next needed.
    fn set_discounts(&self, py: Python<'_>, rate: f64, floor: f64) -> PyResult<()> {
        (self.inner).write(py, 1, Length::Short, |model, _| {
            model.set_discounts(rate, floor)
        })
    }

    /// The running sums over trees of the class probabilities at each row (N × K), continued
    /// from `sums` with this forest's trees (a forest split into parts, `mondrian_learn.dask`).
    fn fold_proba<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        sums: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.view()?;
        let mut out = sums.as_array().as_standard_layout().into_owned();
        let columns = out.ncols();
        let out = self.ready(py, n_jobs, x.n_rows(), |model, pool| {
            if columns != model.n_classes {
                return Err(Error::InvalidInput(format!(
                    "running sums have {columns} columns for {} classes",
                    model.n_classes
                )));
            }
            let flat = (out.as_slice_mut())
                .ok_or_else(|| Error::InvalidInput("sums are not contiguous".into()))?;
            model.fold_proba(&x, pool, flat)?;
            Ok(out)
        })?;
        Ok(out.into_pyarray(py))
    }
}
