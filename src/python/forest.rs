//! Python face of `forest` and `forest::regression`.

use super::error::to_py_err;
use super::pickle;
use super::run::{Handle, Length};
use crate::error::Error;
use crate::forest::regression::prior::{NoiseVariance, PriorOverrides};
use crate::forest::regression::{self, PosteriorMode};
use crate::forest::MondrianForest;
use crate::mondrian::arena::Node;
use crate::mondrian::TreeParams;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rayon::ThreadPool;

/// A fitted (or empty) Mondrian forest regressor held by Rust.
///
/// Predictions share the model; updates (and the lazy recomputation of a stale posterior)
/// take it alone, so concurrent Python threads wait for each other (see `run.rs`).
#[pyclass(module = "mondrian_learn._core")]
pub struct ForestRegressor {
    inner: Handle<regression::ForestRegressor>,
}

impl ForestRegressor {
    /// Runs `work` on the model with a fresh posterior (recomputed first if an online update
    /// made it stale).
    fn with_posterior<T: Send>(
        &self,
        py: Python<'_>,
        n_jobs: usize,
        work: impl FnOnce(&regression::ForestRegressor, &ThreadPool) -> crate::Result<T> + Send,
    ) -> PyResult<T> {
        self.inner.read_prepared(
            py,
            n_jobs,
            regression::ForestRegressor::posterior_is_fresh,
            regression::ForestRegressor::ensure_posterior,
            |model, call| work(model, call.pool),
        )
    }
}

#[pymethods]
impl ForestRegressor {
    /// `prior_mean`, `gamma1`, `gamma2`: fixed hyper-parameters (None: heuristic); `noise_variance`:
    /// a number, "heuristic" (None) or "within_leaf"; `posterior`: "exact" or "fast";
    /// `scale_features`: map inputs to the unit box of the first training points.
    #[new]
    #[pyo3(signature = (n_features, lifetime, min_samples_split, seed, prior_mean=None, gamma1=None, gamma2=None, noise_variance=None, posterior="exact", scale_features=true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        n_features: usize,
        lifetime: f64,
        min_samples_split: usize,
        seed: u64,
        prior_mean: Option<f64>,
        gamma1: Option<f64>,
        gamma2: Option<f64>,
        noise_variance: Option<Bound<'_, PyAny>>,
        posterior: &str,
        scale_features: bool,
    ) -> PyResult<Self> {
        let mode = match posterior {
            "exact" => PosteriorMode::Exact,
            "fast" => PosteriorMode::Fast,
            other => {
                return Err(to_py_err(Error::InvalidParameter {
                    name: "posterior",
                    reason: format!("must be 'exact' or 'fast', got {other:?}"),
                }))
            }
        };
        let noise_variance = match noise_variance {
            None => NoiseVariance::Heuristic,
            Some(v) => match v.extract::<f64>() {
                Ok(value) => NoiseVariance::Fixed(value),
                Err(_) => match v.extract::<String>()?.as_str() {
                    "heuristic" => NoiseVariance::Heuristic,
                    "within_leaf" => NoiseVariance::WithinLeaf,
                    other => {
                        return Err(to_py_err(Error::InvalidParameter {
                            name: "noise_variance",
                            reason: format!(
                                "must be a number > 0, 'heuristic' or 'within_leaf', got {other:?}"
                            ),
                        }))
                    }
                },
            },
        };
        let params = TreeParams::new(lifetime, min_samples_split);
        let mut forest = MondrianForest::new(params, n_features, seed).map_err(to_py_err)?;
        if scale_features {
            forest = forest.with_unit_box_inputs();
        }
        let mut inner = regression::ForestRegressor::new(forest);
        inner.overrides = PriorOverrides {
            mean: prior_mean,
            gamma1,
            gamma2,
            noise_variance,
        };
        inner.mode = mode;
        Ok(Self {
            inner: Handle::new(inner),
        })
    }

    /// Batch fit of `n_trees` trees, `slice` at a time; `progress(done)` is called between slices.
    #[pyo3(signature = (x, y, n_trees, n_jobs, slice, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn fit(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
        n_trees: usize,
        n_jobs: usize,
        slice: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let (x, y) = (x.as_array(), y.as_array());
        self.inner.write(py, n_jobs, Length::Long, |model, call| {
            model.fit(&x, &y, n_trees, slice, call.pool, call.interrupt, |done| {
                call.notify(&progress, &[done])
            })
        })
    }

    /// Online update with new points (conditional Mondrian extension of every tree).
    fn partial_fit(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
        n_jobs: usize,
    ) -> PyResult<()> {
        let (x, y) = (x.as_array(), y.as_array());
        self.inner.write(py, n_jobs, Length::Short, |model, call| {
            model.partial_fit(&x, &y, call.pool)
        })
    }

    /// Whether the posterior is up to date (false after `partial_fit`; predictions bring it
    /// up to date first).
    #[getter]
    fn posterior_is_fresh(&self, py: Python<'_>) -> bool {
        self.inner.peek(py, |m| m.posterior_is_fresh())
    }

    /// Predictive mean and variance of the branch-off mixture at each row.
    #[allow(clippy::type_complexity)]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
        let x = x.as_array();
        let (mean, var) = self.with_posterior(py, n_jobs, |m, pool| m.predict(&x, pool))?;
        Ok((mean.into_pyarray(py), var.into_pyarray(py)))
    }

    /// Quantiles `levels` of the predictive mixture at each row (N × L).
    fn quantiles<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        levels: Vec<f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.as_array();
        let out = self.with_posterior(py, n_jobs, |m, pool| m.quantiles(&x, &levels, pool))?;
        Ok(out.into_pyarray(py))
    }

    /// log p(y_i | x_i) under the predictive mixture.
    fn log_density<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        y: PyReadonlyArray1<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (x, y) = (x.as_array(), y.as_array());
        let out = self.with_posterior(py, n_jobs, |m, pool| m.log_density(&x, &y, pool))?;
        Ok(out.into_pyarray(py))
    }

    /// The prior in use: `mean`, `gamma1`, `gamma2`, `noise_variance`.
    fn prior<'py>(&self, py: Python<'py>, n_jobs: usize) -> PyResult<Bound<'py, PyDict>> {
        let p = self.with_posterior(py, n_jobs, |m, _| m.prior())?;
        let out = PyDict::new(py);
        out.set_item("mean", p.mean)?;
        out.set_item("gamma1", p.gamma1)?;
        out.set_item("gamma2", p.gamma2)?;
        out.set_item("noise_variance", p.noise_variance)?;
        Ok(out)
    }

    /// Posterior mean and variance of every node mean of tree `index` (node order as in
    /// `tree_arrays`).
    #[allow(clippy::type_complexity)]
    fn node_posterior<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        n_jobs: usize,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
        let (mean, var): (Vec<f64>, Vec<f64>) = self.with_posterior(py, n_jobs, |m, _| {
            m.node_posteriors(index)
                .map(|p| p.into_iter().map(|g| (g.mean, g.var)).unzip())
        })?;
        Ok((mean.into_pyarray(py), var.into_pyarray(py)))
    }

    /// Leaf id of every point in every tree (N × M).
    fn apply<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let x = x.as_array();
        let out = self.inner.read(py, n_jobs, Length::Short, |model, call| {
            model.forest.apply(&x, call.pool)
        })?;
        Ok(out.into_pyarray(py))
    }

    /// The input map `(offset, scale)`: x ↦ (x − offset) / scale, or None for raw inputs.
    #[allow(clippy::type_complexity)]
    fn input_map<'py>(
        &self,
        py: Python<'py>,
    ) -> Option<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
        let map = self.inner.peek(py, |m| m.forest.input_map().cloned())?;
        Some((map.offset.into_pyarray(py), map.scale.into_pyarray(py)))
    }

    /// Number of trees.
    #[getter]
    fn n_trees(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.forest.trees.len())
    }

    /// Number of stored training points.
    #[getter]
    fn n_rows(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.forest.n_rows())
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

    /// The node arrays of tree `index`: `parent`, `left`, `right`, `split_dim` (−1 marks none),
    /// `threshold`, `tau`, `lower`, `upper` (n_nodes × D), `n_samples` and `root`.
    fn tree_arrays<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyDict>> {
        let ids = |v: &mut dyn Iterator<Item = u32>| -> Vec<i64> {
            v.map(|i| {
                if i == crate::mondrian::NONE {
                    -1
                } else {
                    i as i64
                }
            })
            .collect()
        };
        let arrays = self.inner.peek(py, |inner| {
            let trees = &inner.forest.trees;
            let tree = trees.get(index).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "tree index {index} out of range for {} trees",
                    trees.len()
                ))
            })?;
            let (n, d) = (tree.n_nodes(), tree.n_features);
            let boxes = |v: &mut dyn Iterator<Item = &f64>| {
                numpy::ndarray::Array2::from_shape_vec((n, d), v.copied().collect())
                    .map_err(|e| Error::Corrupt(e.to_string()))
            };
            let field = |f: fn(&Node) -> u32| ids(&mut tree.nodes.iter().map(f));
            Ok::<_, Error>((
                tree.root,
                ids(&mut tree.parent.iter().copied()),
                [field(|c| c.left), field(|c| c.right), field(|c| c.dim)],
                tree.nodes.iter().map(|c| c.threshold).collect::<Vec<f64>>(),
                tree.nodes.iter().map(|c| c.tau).collect::<Vec<f64>>(),
                [
                    boxes(&mut (0..n as u32).flat_map(|j| tree.lower(j)))?,
                    boxes(&mut (0..n as u32).flat_map(|j| tree.upper(j)))?,
                ],
                tree.nodes.iter().map(|c| c.n_samples).collect::<Vec<u32>>(),
            ))
        });
        let (root, parent, [left, right, dim], threshold, tau, [lower, upper], n_samples) =
            arrays.map_err(to_py_err)?;
        let out = PyDict::new(py);
        out.set_item("root", ids(&mut std::iter::once(root))[0])?;
        out.set_item("parent", parent.into_pyarray(py))?;
        out.set_item("left", left.into_pyarray(py))?;
        out.set_item("right", right.into_pyarray(py))?;
        out.set_item("split_dim", dim.into_pyarray(py))?;
        out.set_item("threshold", threshold.into_pyarray(py))?;
        out.set_item("tau", tau.into_pyarray(py))?;
        out.set_item("lower", lower.into_pyarray(py))?;
        out.set_item("upper", upper.into_pyarray(py))?;
        out.set_item("n_samples", n_samples.into_pyarray(py))?;
        Ok(out)
    }

    /// Versioned bytes of the whole fitted state.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        pickle::to_py_bytes(py, &self.inner)
    }

    /// Inverse of `to_bytes`; rejects corrupt or foreign bytes with `ValueError`.
    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
        let inner = pickle::from_py_bytes(bytes, regression::ForestRegressor::is_consistent)?;
        Ok(Self { inner })
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        pickle::reduce(py, "ForestRegressor", self.to_bytes(py)?)
    }
}
