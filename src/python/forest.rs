//! Python face of `forest`: one class per model (`ForestRegressor` in `forest_regression.rs`,
//! `ForestClassifier` in `forest_classification.rs`), each holding its own core model, so no
//! method asks which kind it holds. What every forest has is written once here, in
//! [`forest_methods!`], and given to both classes; [`Kind`] says what differs between them.

use super::error::to_py_err;
use crate::error::{Error, Result};
use crate::forest::{ForestModel, MondrianForest};
use crate::mondrian::guided::Guidance;
use crate::mondrian::TreeParams;
use crate::serialize;
use pyo3::prelude::*;
use rayon::ThreadPool;
use serde::{Serialize, Serializer};

/// What the shared methods need to know of a forest model beyond the names both core models
/// give their methods (`fit`, `partial_fit`, `lifetime_path`, `training_rows`, the field
/// `forest`).
pub(super) trait Kind: Serialize + Send + Sync + Sized {
    /// The model's variant of `ForestModel` in the byte format (index, name): the bytes of
    /// one kind are refused by the other's class.
    const STORED_AS: (u32, &'static str);
    /// The names of the lifetime path's two scores.
    const SCORES: [&'static str; 2];

    /// The model, when `stored` is of this kind.
    fn from_stored(stored: ForestModel) -> Option<Self>;

    /// Whether predictions of `n_rows` rows may be read now: a regression prior due to be
    /// chosen again (or a posterior not computed since loading) is brought up to date first;
    /// node posteriors an online update left stale are computed along each row's path, unless
    /// there are so many rows that one pass over every node is cheaper (`usize::MAX`: every
    /// node's posterior is needed).
    fn is_ready(&self, n_rows: usize) -> bool;

    /// Brings the model to [`Kind::is_ready`]`(n_rows)`.
    fn prepare(&mut self, n_rows: usize, pool: &ThreadPool) -> Result<()>;
}

/// A model written as the `ForestModel` variant of its kind, without a copy.
struct Stored<'a, M>(&'a M);

impl<M: Kind> Serialize for Stored<'_, M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let (index, name) = M::STORED_AS;
        serializer.serialize_newtype_variant("ForestModel", index, name, self.0)
    }
}

/// The versioned bytes of a forest model (those the core's `ForestModel` has).
pub(super) fn encode<M: Kind>(model: &M) -> Result<Vec<u8>> {
    serialize::to_bytes(&Stored(model))
}

/// Inverse of [`encode`]: bytes of the other kind are refused.
pub(super) fn decode<M: Kind>(bytes: &[u8]) -> Result<M> {
    let stored: ForestModel = serialize::from_bytes(bytes)?;
    M::from_stored(stored).ok_or_else(|| {
        Error::Corrupt(format!(
            "the bytes hold a forest of another kind, not a {}",
            M::STORED_AS.1.to_lowercase()
        ))
    })
}

/// What both constructors take: an empty forest of trees with lifetime `lifetime` that split
/// nodes of at least `min_samples_split` points, for points with `n_features` coordinates
/// (mapped to the unit box of the first training points when `scale_features`), and cuts
/// chosen among `tries` dimensions × `locations` candidates (1 × 1: the label-blind Mondrian).
#[allow(clippy::too_many_arguments)]
pub(super) fn empty_forest(
    n_features: usize,
    lifetime: f64,
    min_samples_split: usize,
    seed: u64,
    scale_features: bool,
    tries: usize,
    locations: usize,
) -> PyResult<(MondrianForest, Guidance)> {
    let params = TreeParams::new(lifetime, min_samples_split);
    let forest = MondrianForest::new(params, n_features, seed).map_err(to_py_err)?;
    let guidance = Guidance::new(tries, locations).map_err(to_py_err)?;
    let forest = if scale_features {
        forest.with_unit_box_inputs()
    } else {
        forest
    };
    Ok((forest, guidance))
}

/// The methods every forest class has, for `$class` (a `#[pyclass]` whose field `inner:
/// Handle<$model>` holds a core model of [`Kind`] `$model`, `$name` in Python) with targets of
/// numpy type `$target`; with its pickling.
macro_rules! forest_methods {
    ($class:ident, $name:literal, $model:ty, $target:ty) => {
        $crate::python::pickle::pickled!(
            $class,
            $name,
            <$model>::is_consistent,
            $crate::python::forest::encode::<$model>,
            $crate::python::forest::decode::<$model>
        );

        mod forest_methods {
            use super::*;
            use $crate::error::{Error, Result};
            use $crate::forest::lifetime_path::PathPoint;
            use $crate::mondrian::birth_order::Checkpoints;
            use $crate::points::Points;
            use $crate::python::arrays::{per_row, to_array2, AnyPoints, VectorPair};
            use $crate::python::error::to_py_err;
            use $crate::python::forest::Kind;
            use $crate::python::run::Length;
            use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
            use pyo3::prelude::{pymethods, Bound, Py, PyAny, PyResult, Python};
            use pyo3::types::PyDict;

            type Model = $model;

            #[pymethods]
            impl $class {
                /// Batch fit of `n_trees` trees, `slice` at a time; `progress(done)` is called
                /// between slices. `weights`: optional row weights (frequencies).
                #[pyo3(signature = (x, y, n_trees, n_jobs, slice, progress=None, weights=None))]
                #[allow(clippy::too_many_arguments)]
                fn fit(
                    &self,
                    py: Python<'_>,
                    x: AnyPoints<'_>,
                    y: PyReadonlyArray1<'_, $target>,
                    n_trees: usize,
                    n_jobs: usize,
                    slice: usize,
                    progress: Option<Py<PyAny>>,
                    weights: Option<PyReadonlyArray1<'_, f64>>,
                ) -> PyResult<()> {
                    let (x, y) = (x.view()?, y.as_array());
                    let w = weights.as_ref().map(|w| w.as_array());
                    self.inner.write(py, n_jobs, Length::Long, |model, call| {
                        let how = call.growing(n_trees, slice);
                        let report = |done| call.notify(&progress, &[done]);
                        model.fit(&x, &y, w.as_ref(), &how, report)
                    })
                }

                /// Online update with new points (conditional Mondrian extension of every
                /// tree), rows weighted by `weights` when given.
                #[pyo3(signature = (x, y, n_jobs, weights=None))]
                fn partial_fit(
                    &self,
                    py: Python<'_>,
                    x: AnyPoints<'_>,
                    y: PyReadonlyArray1<'_, $target>,
                    n_jobs: usize,
                    weights: Option<PyReadonlyArray1<'_, f64>>,
                ) -> PyResult<()> {
                    let (x, y) = (x.view()?, y.as_array());
                    let w = weights.as_ref().map(|w| w.as_array());
                    self.inner.write(py, n_jobs, Length::Short, |model, call| {
                        model.partial_fit(&x, &y, w.as_ref(), call.pool)
                    })
                }

                /// The lifetime path of the pruned forests (`forest::lifetime_path`) on the
                /// training points and optional validation data (`w_val`: their row weights),
                /// at `n_checkpoints` evenly spread cuts or at `lifetimes` (neither: after
                /// every cut).
                #[pyo3(signature = (x_val, y_val, n_checkpoints, lifetimes, n_jobs, progress=None, w_val=None))]
                #[allow(clippy::too_many_arguments)]
                fn lifetime_path<'py>(
                    &self,
                    py: Python<'py>,
                    x_val: Option<AnyPoints<'py>>,
                    y_val: Option<PyReadonlyArray1<'py, $target>>,
                    n_checkpoints: Option<usize>,
                    lifetimes: Option<Vec<f64>>,
                    n_jobs: usize,
                    progress: Option<Py<PyAny>>,
                    w_val: Option<PyReadonlyArray1<'py, f64>>,
                ) -> PyResult<Bound<'py, PyDict>> {
                    let checkpoints = Checkpoints::from_options(n_checkpoints, lifetimes);
                    let w_val = w_val.as_ref().map(|w| w.as_array());
                    let x_val = x_val.as_ref().map(AnyPoints::view).transpose()?;
                    let y_val = y_val.as_ref().map(|y| y.as_array());
                    if x_val.is_some() != y_val.is_some() {
                        return Err(to_py_err(Error::InvalidInput(
                            "give both validation points and targets, or neither".into(),
                        )));
                    }
                    let points = self.inner.read_prepared(
                        py,
                        n_jobs,
                        Length::Long,
                        |model| model.is_ready(0),
                        |model, pool| model.prepare(0, pool),
                        |model, call| {
                            let report = |done, total| call.notify(&progress, &[done, total]);
                            let validation = (x_val.as_ref().zip(y_val.as_ref()))
                                .map(|(x, y)| (x as &dyn Points, y, w_val.as_ref()));
                            let (pool, stop) = (call.pool, call.interrupt);
                            model.lifetime_path(validation, &checkpoints, pool, stop, report)
                        },
                    )?;
                    let n_trees = self.n_trees(py) as i64;
                    let out = PyDict::new(py);
                    let column = |f: &dyn Fn(&PathPoint) -> f64| -> Vec<f64> {
                        points.iter().map(f).collect()
                    };
                    out.set_item("lifetimes", column(&|p| p.lifetime).into_pyarray(py))?;
                    let cuts: Vec<i64> = points.iter().map(|p| p.n_cuts as i64).collect();
                    let leaves: Vec<i64> = cuts.iter().map(|c| c + n_trees).collect();
                    out.set_item("n_cuts", cuts.into_pyarray(py))?;
                    out.set_item("n_leaves", leaves.into_pyarray(py))?;
                    for (s, name) in Model::SCORES.iter().enumerate() {
                        let train = column(&|p| p.train[s]);
                        out.set_item(format!("train_{name}"), train.into_pyarray(py))?;
                        let held_out = column(&|p| p.validation[s]);
                        out.set_item(format!("validation_{name}"), held_out.into_pyarray(py))?;
                    }
                    Ok(out)
                }

                /// Every stored row as the trees see it: points (N × D, in the forest's
                /// coordinates), targets, and weights (None when every row weighs 1).
                #[allow(clippy::type_complexity)]
                fn training_rows<'py>(
                    &self,
                    py: Python<'py>,
                ) -> PyResult<(
                    Bound<'py, PyArray2<f64>>,
                    Bound<'py, PyArray1<$target>>,
                    Option<Bound<'py, PyArray1<f64>>>,
                )> {
                    let (points, targets, weights, d) = self
                        .inner
                        .peek(py, |model| {
                            let (p, y, w) = model.training_rows()?;
                            let d = model.forest.n_features;
                            Ok::<_, Error>((p, y.to_vec(), w.map(<[f64]>::to_vec), d))
                        })
                        .map_err(to_py_err)?;
                    Ok((
                        to_array2(targets.len(), d, points)?.into_pyarray(py),
                        targets.into_pyarray(py),
                        weights.map(|w| w.into_pyarray(py)),
                    ))
                }

                /// Leaf id of every point in every tree (N × M).
                fn apply<'py>(
                    &self,
                    py: Python<'py>,
                    x: AnyPoints<'py>,
                    n_jobs: usize,
                ) -> PyResult<Bound<'py, PyArray2<u32>>> {
                    per_row(&self.inner, py, x, n_jobs, Length::Short, |model, x, pool| {
                        model.forest.apply(x, pool)
                    })
                }

                /// The input map `(offset, scale)`: x ↦ (x − offset) / scale, or None for raw
                /// inputs.
                fn input_map<'py>(&self, py: Python<'py>) -> Option<VectorPair<'py>> {
                    let map = self.inner.peek(py, |m| m.forest.input_map().cloned())?;
                    Some((map.offset.into_pyarray(py), map.scale.into_pyarray(py)))
                }

                /// Number of trees.
                #[getter]
                fn n_trees(&self, py: Python<'_>) -> usize {
                    self.inner.peek(py, |m| m.forest.trees.len())
                }

                /// Number of features of the points.
                #[getter]
                fn n_features(&self, py: Python<'_>) -> usize {
                    self.inner.peek(py, |m| m.forest.n_features)
                }

                /// The seed tree m's random stream derives from (with m).
                #[getter]
                fn seed(&self, py: Python<'_>) -> u64 {
                    self.inner.peek(py, |m| m.forest.seed)
                }

                /// The trees' lifetime Λ (possibly ∞).
                #[getter]
                fn lifetime(&self, py: Python<'_>) -> f64 {
                    self.inner.peek(py, |m| m.forest.params.lifetime)
                }

                /// Number of stored training points.
                #[getter]
                fn n_rows(&self, py: Python<'_>) -> usize {
                    self.inner.peek(py, |m| m.forest.n_rows())
                }

                /// Moves the training points, stored and to come, into a new (nameless) file
                /// in `directory`; a failure leaves them where they were.
                fn move_points_to_disk(
                    &self,
                    py: Python<'_>,
                    directory: std::path::PathBuf,
                ) -> PyResult<()> {
                    self.inner.write(py, 1, Length::Long, |model, _| {
                        model.forest.move_points_to_disk(&directory)
                    })
                }

                /// The directory of the file holding the training points, or None when they
                /// are in memory.
                #[getter]
                fn points_directory(&self, py: Python<'_>) -> Option<std::path::PathBuf> {
                    self.inner.peek(py, |m| {
                        m.forest.points_directory().map(|p| p.to_path_buf())
                    })
                }

                /// Number of leaves of each tree.
                fn n_leaves<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
                    let counts: Vec<u64> = self.inner.peek(py, |m| {
                        (m.forest.trees.iter())
                            .map(|t| t.n_leaves() as u64)
                            .collect()
                    });
                    counts.into_pyarray(py)
                }

                /// The node arrays of tree `index` (see `tree_arrays.rs`).
                fn tree_arrays<'py>(
                    &self,
                    py: Python<'py>,
                    index: usize,
                ) -> PyResult<Bound<'py, PyDict>> {
                    let (tree, n_trees) = self.inner.peek(py, |m| {
                        let trees = &m.forest.trees;
                        (trees.get(index).cloned(), trees.len())
                    });
                    let tree = tree.ok_or_else(|| {
                        to_py_err(Error::InvalidInput(format!(
                            "tree index {index} out of range for {n_trees} trees"
                        )))
                    })?;
                    $crate::python::tree_arrays::tree_arrays(py, &tree)
                }

                /// Makes this unfitted forest the trees `first, first + 1, …` of a forest with
                /// the same seed (they are grown with those trees' random streams; a forest
                /// spread over several processes, `mondrian_learn.dask`).
                fn offset_trees(&self, py: Python<'_>, first: u64) -> PyResult<()> {
                    self.inner.write(py, 1, Length::Short, |model, _| {
                        model.forest.offset_trees(first)
                    })
                }
            }

            impl $class {
                /// Runs `work` on the model brought up to date for predictions of `n_rows`
                /// rows ([`Kind::is_ready`]).
                pub(super) fn ready<T: Send>(
                    &self,
                    py: Python<'_>,
                    n_jobs: usize,
                    n_rows: usize,
                    work: impl FnOnce(&Model, &rayon::ThreadPool) -> Result<T> + Send,
                ) -> PyResult<T> {
                    self.inner.read_prepared(
                        py,
                        n_jobs,
                        Length::Short,
                        |model| model.is_ready(n_rows),
                        |model, pool| model.prepare(n_rows, pool),
                        |model, call| work(model, call.pool),
                    )
                }
            }
        }
    };
}
pub(super) use forest_methods;
