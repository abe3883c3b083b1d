//! Python face of `forest`: one handle for a Mondrian forest model of either kind (regression
//! or classification); the methods every forest has and the classifier's (the regressor's are
//! in `forest_regression.rs`).

use super::arrays::{AnyPoints, VectorPair};
use super::error::to_py_err;
use super::pickle::pickled;
use super::run::{Handle, Length};
use super::tree_arrays::tree_arrays;
use crate::error::{Error, Result};
use crate::forest::classification::ForestClassifier;
use crate::forest::lifetime_path::PathPoint;
use crate::forest::regression::ForestRegressor;
use crate::forest::{ForestModel, MondrianForest};
use crate::mondrian::birth_order::Checkpoints;
use crate::mondrian::guided::Guidance;
use crate::mondrian::TreeParams;
use crate::points::Points;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::ThreadPool;

/// A model's stored targets, of its kind.
enum Stored {
    Values(Vec<f64>),
    Labels(Vec<u32>),
}

impl Stored {
    fn len(&self) -> usize {
        match self {
            Stored::Values(y) => y.len(),
            Stored::Labels(y) => y.len(),
        }
    }
}

/// A fitted (or empty) Mondrian forest held by Rust.
///
/// Predictions share the model; updates (and the lazy recomputation of a stale regression
/// posterior) take it alone, so concurrent Python threads wait for each other (`run.rs`).
#[pyclass(module = "mondrian_learn._core")]
pub struct Forest {
    pub(super) inner: Handle<ForestModel>,
}

/// An empty forest of trees grown as `params` says, for points with `n_features` coordinates
/// (mapped to the unit box of the first training points when `scale_features`).
pub(super) fn empty_forest(
    params: TreeParams,
    n_features: usize,
    seed: u64,
    scale_features: bool,
) -> PyResult<MondrianForest> {
    let forest = MondrianForest::new(params, n_features, seed).map_err(to_py_err)?;
    Ok(if scale_features {
        forest.with_unit_box_inputs()
    } else {
        forest
    })
}

pub(super) fn not_a(kind: &str) -> Error {
    Error::InvalidInput(format!("this forest is not a {kind}"))
}

pub(super) fn regressor(model: &ForestModel) -> Result<&ForestRegressor> {
    match model {
        ForestModel::Regressor(m) => Ok(m),
        ForestModel::Classifier(_) => Err(not_a("regressor")),
    }
}

pub(super) fn classifier(model: &ForestModel) -> Result<&ForestClassifier> {
    match model {
        ForestModel::Classifier(m) => Ok(m),
        ForestModel::Regressor(_) => Err(not_a("classifier")),
    }
}

/// Whether a model's predictions of `n_rows` rows may be read now: a regression prior due to
/// be chosen again (or a posterior not computed since loading) is brought up to date first;
/// node posteriors an online update left stale are computed along each row's path, unless
/// there are so many rows that one pass over every node is cheaper (`usize::MAX`: every
/// node's posterior is needed).
pub(super) fn ready_for(n_rows: usize) -> impl Fn(&ForestModel) -> bool + Send + Sync {
    move |model| match model {
        ForestModel::Regressor(m) => m.posterior_is_fresh() && !m.cavities_worth_refreshing(n_rows),
        ForestModel::Classifier(m) => !m.means_worth_refreshing(n_rows),
    }
}

/// Brings a model to [`ready_for`]`(n_rows)`.
pub(super) fn prepare_for(
    n_rows: usize,
) -> impl Fn(&mut ForestModel, &ThreadPool) -> Result<()> + Send + Sync {
    move |model, pool| match model {
        ForestModel::Regressor(m) if m.cavities_worth_refreshing(n_rows) => m.ensure_cavities(pool),
        ForestModel::Regressor(m) => m.ensure_posterior(pool),
        ForestModel::Classifier(m) => {
            m.ensure_means(pool);
            Ok(())
        }
    }
}

/// The names of the path's two scores (`forest::regression::path`, `classification::path`).
const REGRESSION: [&str; 2] = ["mse", "nlpd"];
const CLASSIFICATION: [&str; 2] = ["log_loss", "accuracy"];

/// Validation points with their targets of the model's kind and optional weights (None without
/// points; an error when the targets are of the other kind).
fn paired<'a, X: ?Sized, Y, W>(
    x: Option<&'a X>,
    y: Option<&'a Y>,
    w: Option<&'a W>,
) -> Result<Option<(&'a X, &'a Y, Option<&'a W>)>> {
    match (x, y) {
        (None, _) => Ok(None),
        (Some(x), Some(y)) => Ok(Some((x, y, w))),
        (Some(_), None) => Err(Targets::mismatch()),
    }
}

/// A fit's `y`: float64 targets (regression) or uint32 class indices (classification).
struct Targets<'py> {
    values: Option<PyReadonlyArray1<'py, f64>>,
    labels: Option<PyReadonlyArray1<'py, u32>>,
}

impl<'py> Targets<'py> {
    fn of(y: &Bound<'py, PyAny>) -> Self {
        Self {
            values: y.extract().ok(),
            labels: y.extract().ok(),
        }
    }

    fn values(&self) -> Option<numpy::ndarray::ArrayView1<'_, f64>> {
        self.values.as_ref().map(|v| v.as_array())
    }

    fn labels(&self) -> Option<numpy::ndarray::ArrayView1<'_, u32>> {
        self.labels.as_ref().map(|v| v.as_array())
    }

    fn mismatch() -> Error {
        Error::InvalidInput(
            "y must be float64 targets for a regressor, uint32 classes for a classifier".into(),
        )
    }
}

#[pymethods]
impl Forest {
    /// A classification forest for `n_classes` classes: discounts exp(−`discount_rate` · Δ),
    /// at least `min_discount`; cuts chosen among `tries` dimensions × `locations` candidates
    /// by information gain (1 × 1: the label-blind Mondrian).
    #[staticmethod]
    #[pyo3(signature = (n_features, n_classes, lifetime, min_samples_split, seed, discount_rate, min_discount=0.0, tries=1, locations=1, scale_features=true))]
    #[allow(clippy::too_many_arguments)]
    fn classifier(
        n_features: usize,
        n_classes: usize,
        lifetime: f64,
        min_samples_split: usize,
        seed: u64,
        discount_rate: f64,
        min_discount: f64,
        tries: usize,
        locations: usize,
        scale_features: bool,
    ) -> PyResult<Self> {
        let params = TreeParams::new(lifetime, min_samples_split);
        let forest = empty_forest(params, n_features, seed, scale_features)?;
        let guidance = Guidance::new(tries, locations).map_err(to_py_err)?;
        let discounts = (discount_rate, min_discount);
        let model = ForestClassifier::new(forest, n_classes, discounts, guidance);
        Ok(Self {
            inner: Handle::new(ForestModel::Classifier(model)),
        })
    }

    /// Batch fit of `n_trees` trees, `slice` at a time; `progress(done)` is called between
    /// slices. `y`: float64 targets (regression) or uint32 class indices (classification);
    /// `weights`: optional row weights (frequencies).
    #[pyo3(signature = (x, y, n_trees, n_jobs, slice, progress=None, weights=None))]
    #[allow(clippy::too_many_arguments)]
    fn fit(
        &self,
        py: Python<'_>,
        x: AnyPoints<'_>,
        y: Bound<'_, PyAny>,
        n_trees: usize,
        n_jobs: usize,
        slice: usize,
        progress: Option<Py<PyAny>>,
        weights: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<()> {
        let x = x.view()?;
        let y = Targets::of(&y);
        let (values, labels) = (y.values(), y.labels());
        let w = weights.as_ref().map(|w| w.as_array());
        self.inner.write(py, n_jobs, Length::Long, |model, call| {
            let how = call.growing(n_trees, slice);
            let report = |done| call.notify(&progress, &[done]);
            match (model, values, labels) {
                (ForestModel::Regressor(m), Some(y), _) => m.fit(&x, &y, w.as_ref(), &how, report),
                (ForestModel::Classifier(m), _, Some(y)) => m.fit(&x, &y, w.as_ref(), &how, report),
                _ => Err(Targets::mismatch()),
            }
        })
    }

    /// Online update with new points (conditional Mondrian extension of every tree), rows
    /// weighted by `weights` when given.
    #[pyo3(signature = (x, y, n_jobs, weights=None))]
    fn partial_fit(
        &self,
        py: Python<'_>,
        x: AnyPoints<'_>,
        y: Bound<'_, PyAny>,
        n_jobs: usize,
        weights: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<()> {
        let x = x.view()?;
        let y = Targets::of(&y);
        let (values, labels) = (y.values(), y.labels());
        let w = weights.as_ref().map(|w| w.as_array());
        self.inner.write(py, n_jobs, Length::Short, |model, call| {
            match (model, values, labels) {
                (ForestModel::Regressor(m), Some(y), _) => {
                    m.partial_fit(&x, &y, w.as_ref(), call.pool)
                }
                (ForestModel::Classifier(m), _, Some(y)) => {
                    m.partial_fit(&x, &y, w.as_ref(), call.pool)
                }
                _ => Err(Targets::mismatch()),
            }
        })
    }

    /// Classification: class probabilities at each row (N × K).
    fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.view()?;
        let n_rows = x.n_rows();
        let out = self.inner.read_prepared(
            py,
            n_jobs,
            Length::Short,
            ready_for(n_rows),
            prepare_for(n_rows),
            |model, call| classifier(model)?.predict_proba(&x, call.pool),
        )?;
        Ok(out.into_pyarray(py))
    }

    /// The lifetime path of the pruned forests (`forest::lifetime_path`) on the training
    /// points and optional validation data (`y_val`: float64 targets or uint32 classes;
    /// `w_val`: their row weights), at `n_checkpoints` evenly spread cuts or at `lifetimes`
    /// (neither: after every cut).
    #[pyo3(signature = (x_val, y_val, n_checkpoints, lifetimes, n_jobs, progress=None, w_val=None))]
    #[allow(clippy::too_many_arguments)]
    fn lifetime_path<'py>(
        &self,
        py: Python<'py>,
        x_val: Option<AnyPoints<'py>>,
        y_val: Option<Bound<'py, PyAny>>,
        n_checkpoints: Option<usize>,
        lifetimes: Option<Vec<f64>>,
        n_jobs: usize,
        progress: Option<Py<PyAny>>,
        w_val: Option<PyReadonlyArray1<'py, f64>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let checkpoints = Checkpoints::from_options(n_checkpoints, lifetimes);
        let w_val = w_val.as_ref().map(|w| w.as_array());
        let x_val = x_val.as_ref().map(AnyPoints::view).transpose()?;
        let y_val = y_val.as_ref().map(Targets::of);
        let (values, labels) = match &y_val {
            Some(y) => (y.values(), y.labels()),
            None => (None, None),
        };
        if x_val.is_some() != y_val.is_some() {
            return Err(to_py_err(Error::InvalidInput(
                "give both validation points and targets, or neither".into(),
            )));
        }
        let (points, names) = self.inner.read_prepared(
            py,
            n_jobs,
            Length::Long,
            ready_for(0),
            prepare_for(0),
            |model, call| {
                let report = |done, total| call.notify(&progress, &[done, total]);
                let (pool, stop) = (call.pool, call.interrupt);
                let x = x_val.as_ref().map(|x| x as &dyn Points);
                match model {
                    ForestModel::Regressor(m) => {
                        let validation = paired(x, values.as_ref(), w_val.as_ref())?;
                        let path = m.lifetime_path(validation, &checkpoints, pool, stop, report);
                        Ok((path?, REGRESSION))
                    }
                    ForestModel::Classifier(m) => {
                        let validation = paired(x, labels.as_ref(), w_val.as_ref())?;
                        let path = m.lifetime_path(validation, &checkpoints, pool, stop, report);
                        Ok((path?, CLASSIFICATION))
                    }
                }
            },
        )?;
        let n_trees = self.n_trees(py);
        let out = PyDict::new(py);
        let column = |f: &dyn Fn(&PathPoint) -> f64| -> Vec<f64> { points.iter().map(f).collect() };
        out.set_item("lifetimes", column(&|p| p.lifetime).into_pyarray(py))?;
        let cuts: Vec<i64> = points.iter().map(|p| p.n_cuts as i64).collect();
        let leaves: Vec<i64> = cuts.iter().map(|c| c + n_trees as i64).collect();
        out.set_item("n_cuts", cuts.into_pyarray(py))?;
        out.set_item("n_leaves", leaves.into_pyarray(py))?;
        for (s, name) in names.iter().enumerate() {
            out.set_item(
                format!("train_{name}"),
                column(&|p| p.train[s]).into_pyarray(py),
            )?;
            let held_out = column(&|p| p.validation[s]);
            out.set_item(format!("validation_{name}"), held_out.into_pyarray(py))?;
        }
        Ok(out)
    }

    /// Every stored row as the trees see it: points (N × D, in the forest's coordinates),
    /// targets (float64, regression) or class indices (uint32, classification), and weights
    /// (None when every row weighs 1).
    #[allow(clippy::type_complexity)]
    fn training_rows<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(
        Bound<'py, PyArray2<f64>>,
        Bound<'py, PyAny>,
        Option<Bound<'py, PyArray1<f64>>>,
    )> {
        let (points, targets, weights, d) = self
            .inner
            .peek(py, |model| {
                let (points, targets, weights, d) = match model {
                    ForestModel::Regressor(m) => {
                        let (p, y, w) = m.training_rows()?;
                        (p, Stored::Values(y.to_vec()), w, m.forest.n_features)
                    }
                    ForestModel::Classifier(m) => {
                        let (p, y, w) = m.training_rows()?;
                        (p, Stored::Labels(y.to_vec()), w, m.forest.n_features)
                    }
                };
                Ok::<_, Error>((points, targets, weights.map(<[f64]>::to_vec), d))
            })
            .map_err(to_py_err)?;
        let n = targets.len();
        let points = ndarray::Array2::from_shape_vec((n, d), points)
            .map_err(|e| to_py_err(Error::InvalidInput(e.to_string())))?;
        let targets = match targets {
            Stored::Values(y) => y.into_pyarray(py).into_any(),
            Stored::Labels(y) => y.into_pyarray(py).into_any(),
        };
        Ok((
            points.into_pyarray(py),
            targets,
            weights.map(|w| w.into_pyarray(py)),
        ))
    }

    /// Classification: the class counts of every node of tree `index` (n_nodes × K).
    fn node_counts<'py>(
        &self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (k, counts) = self
            .inner
            .peek(py, |model| {
                let m = classifier(model)?;
                Ok::<_, Error>((m.n_classes, m.node_counts(index)?.to_vec()))
            })
            .map_err(to_py_err)?;
        Ok(super::arrays::to_array2(counts.len() / k.max(1), k, counts)?.into_pyarray(py))
    }

    /// Leaf id of every point in every tree (N × M).
    fn apply<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let x = x.view()?;
        let out = self.inner.read(py, n_jobs, Length::Short, |model, call| {
            model.forest().apply(&x, call.pool)
        })?;
        Ok(out.into_pyarray(py))
    }

    /// The input map `(offset, scale)`: x ↦ (x − offset) / scale, or None for raw inputs.
    fn input_map<'py>(&self, py: Python<'py>) -> Option<VectorPair<'py>> {
        let map = self.inner.peek(py, |m| m.forest().input_map().cloned())?;
        Some((map.offset.into_pyarray(py), map.scale.into_pyarray(py)))
    }

    /// Number of trees.
    #[getter]
    fn n_trees(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.forest().trees.len())
    }

    /// Number of features of the points.
    #[getter]
    fn n_features(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.forest().n_features)
    }

    /// The seed tree m's random stream derives from (with m).
    #[getter]
    fn seed(&self, py: Python<'_>) -> u64 {
        self.inner.peek(py, |m| m.forest().seed)
    }

    /// The trees' lifetime Λ (possibly ∞).
    #[getter]
    fn lifetime(&self, py: Python<'_>) -> f64 {
        self.inner.peek(py, |m| m.forest().params.lifetime)
    }

    /// Number of stored training points.
    #[getter]
    fn n_rows(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.forest().n_rows())
    }

    /// Moves the training points, stored and to come, into a new (nameless) file in
    /// `directory`; a failure leaves them where they were.
    fn move_points_to_disk(&self, py: Python<'_>, directory: std::path::PathBuf) -> PyResult<()> {
        self.inner.write(py, 1, Length::Long, |model, _| {
            model.forest_mut().move_points_to_disk(&directory)
        })
    }

    /// The directory of the file holding the training points, or None when they are in
    /// memory.
    #[getter]
    fn points_directory(&self, py: Python<'_>) -> Option<std::path::PathBuf> {
        self.inner.peek(py, |m| {
            m.forest().points_directory().map(|p| p.to_path_buf())
        })
    }

    /// Number of leaves of each tree.
    fn n_leaves<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        let counts: Vec<u64> = self.inner.peek(py, |m| {
            (m.forest().trees.iter())
                .map(|t| t.n_leaves() as u64)
                .collect()
        });
        counts.into_pyarray(py)
    }

    /// The node arrays of tree `index` (see `tree_arrays.rs`).
    fn tree_arrays<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyDict>> {
        let (tree, n_trees) = self.inner.peek(py, |m| {
            let trees = &m.forest().trees;
            (trees.get(index).cloned(), trees.len())
        });
        let tree = tree.ok_or_else(|| {
            to_py_err(Error::InvalidInput(format!(
                "tree index {index} out of range for {n_trees} trees"
            )))
        })?;
        tree_arrays(py, &tree)
    }
}

pickled!(Forest, ForestModel::is_consistent);
