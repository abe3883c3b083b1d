//! Python face of `forest` and `forest::regression`.

use super::error::{to_py_err, ToPyResult};
use super::run::PoolCache;
use crate::error::Error;
use crate::forest::{regression, MondrianForest};
use crate::serialize;
use crate::tree::arena::Cut;
use crate::tree::TreeParams;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// A fitted (or empty) Mondrian forest regressor held by Rust.
#[pyclass(module = "mondrian_learn._core")]
pub struct ForestRegressor {
    inner: regression::ForestRegressor,
    pools: PoolCache,
}

#[pymethods]
impl ForestRegressor {
    /// `prior_mean`, `gamma1`, `gamma2`: fixed hyper-parameters (None: heuristic); `noise_var`:
    /// a number, "heuristic" (None) or "within_leaf".
    #[new]
    #[pyo3(signature = (n_features, lifetime, min_samples_split, seed, prior_mean=None, gamma1=None, gamma2=None, noise_var=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        n_features: usize,
        lifetime: f64,
        min_samples_split: usize,
        seed: u64,
        prior_mean: Option<f64>,
        gamma1: Option<f64>,
        gamma2: Option<f64>,
        noise_var: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let noise_var = match noise_var {
            None => regression::NoiseVar::Heuristic,
            Some(v) => match v.extract::<f64>() {
                Ok(value) => regression::NoiseVar::Fixed(value),
                Err(_) => match v.extract::<String>()?.as_str() {
                    "heuristic" => regression::NoiseVar::Heuristic,
                    "within_leaf" => regression::NoiseVar::WithinLeaf,
                    other => {
                        return Err(to_py_err(Error::InvalidParameter {
                            name: "noise_var",
                            reason: format!(
                                "must be a number > 0, 'heuristic' or 'within_leaf', got {other:?}"
                            ),
                        }))
                    }
                },
            },
        };
        let params = TreeParams::new(lifetime, min_samples_split).map_err(to_py_err)?;
        let forest = MondrianForest::new(params, n_features, seed).map_err(to_py_err)?;
        let mut inner = regression::ForestRegressor::new(forest);
        inner.overrides = regression::PriorOverrides {
            mean: prior_mean,
            gamma1,
            gamma2,
            noise_var,
        };
        Ok(Self {
            inner,
            pools: PoolCache::default(),
        })
    }

    /// Batch fit of `n_trees` trees, `slice` at a time; `progress(done)` is called between slices.
    #[pyo3(signature = (x, y, n_trees, n_jobs, slice, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn fit(
        &mut self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
        n_trees: usize,
        n_jobs: usize,
        slice: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let (x, y) = (x.as_array(), y.as_array());
        let inner = &mut self.inner;
        self.pools.run(py, n_jobs, |pool| {
            inner.fit(&x, &y, n_trees, slice, pool, |done| match &progress {
                None => Ok(()),
                Some(cb) => Python::attach(|py| {
                    cb.call1(py, (done,))
                        .map(|_| ())
                        .map_err(|e| Error::Interrupted(e.to_string()))
                }),
            })
        })
    }

    /// Online update with new points (conditional Mondrian extension of every tree).
    fn partial_fit(
        &mut self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
        n_jobs: usize,
    ) -> PyResult<()> {
        let (x, y) = (x.as_array(), y.as_array());
        let inner = &mut self.inner;
        self.pools
            .run(py, n_jobs, |pool| inner.partial_fit(&x, &y, pool))
    }

    /// Whether the posterior is up to date (false after `partial_fit`).
    #[getter]
    fn posterior_is_fresh(&self) -> bool {
        self.inner.posterior_is_fresh()
    }

    /// Recomputes the exact posterior if `partial_fit` made it stale.
    fn ensure_posterior(&mut self, py: Python<'_>, n_jobs: usize) -> PyResult<()> {
        let inner = &mut self.inner;
        self.pools
            .run(py, n_jobs, |pool| inner.ensure_posterior(pool))
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
        let inner = &self.inner;
        let (mean, var) = self.pools.run(py, n_jobs, |pool| inner.predict(&x, pool))?;
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
        let inner = &self.inner;
        let out = self
            .pools
            .run(py, n_jobs, |pool| inner.quantiles(&x, &levels, pool))?;
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
        let inner = &self.inner;
        let out = self
            .pools
            .run(py, n_jobs, |pool| inner.log_density(&x, &y, pool))?;
        Ok(out.into_pyarray(py))
    }

    /// The prior in use: `mean`, `gamma1`, `gamma2`, `noise_var`.
    fn prior<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = self.inner.prior().map_err(to_py_err)?;
        let out = PyDict::new(py);
        out.set_item("mean", p.mean)?;
        out.set_item("gamma1", p.gamma1)?;
        out.set_item("gamma2", p.gamma2)?;
        out.set_item("noise_var", p.noise_var)?;
        Ok(out)
    }

    /// Posterior mean and variance of every node mean of tree `index` (node order as in
    /// `tree_arrays`).
    #[allow(clippy::type_complexity)]
    fn node_posterior<'py>(
        &self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
        let post = self.inner.posterior(index).map_err(to_py_err)?;
        let mean: Vec<f64> = post.posterior.iter().map(|g| g.mean).collect();
        let var: Vec<f64> = post.posterior.iter().map(|g| g.var).collect();
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
        let forest = &self.inner.forest;
        let out = self.pools.run(py, n_jobs, |pool| forest.apply(&x, pool))?;
        Ok(out.into_pyarray(py))
    }

    /// Number of trees.
    #[getter]
    fn n_trees(&self) -> usize {
        self.inner.forest.trees.len()
    }

    /// Number of stored training points.
    #[getter]
    fn n_rows(&self) -> usize {
        self.inner.forest.n_rows()
    }

    /// Number of leaves of each tree.
    fn n_leaves<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        let counts: Vec<u64> = self
            .inner
            .forest
            .trees
            .iter()
            .map(|t| t.n_leaves() as u64)
            .collect();
        counts.into_pyarray(py)
    }

    /// The node arrays of tree `index`: `parent`, `left`, `right`, `split_dim` (−1 marks none),
    /// `threshold`, `tau`, `lower`, `upper` (n_nodes × D), `n_samples` and `root`.
    fn tree_arrays<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyDict>> {
        let trees = &self.inner.forest.trees;
        let tree = trees.get(index).ok_or_else(|| {
            to_py_err(Error::InvalidInput(format!(
                "tree index {index} out of range for {} trees",
                trees.len()
            )))
        })?;
        let ids = |v: &[u32]| -> Vec<i64> {
            v.iter()
                .map(|&i| if i == crate::tree::NONE { -1 } else { i as i64 })
                .collect()
        };
        let n = tree.n_nodes();
        let d = tree.n_features;
        let boxes = |v: &[f64]| {
            numpy::ndarray::Array2::from_shape_vec((n, d), v.to_vec())
                .map_err(|e| to_py_err(Error::Corrupt(e.to_string())))
        };
        let out = PyDict::new(py);
        out.set_item("root", tree.root as i64)?;
        out.set_item("parent", ids(&tree.parent).into_pyarray(py))?;
        let field = |f: fn(&Cut) -> u32| ids(&tree.cuts.iter().map(f).collect::<Vec<u32>>());
        out.set_item("left", field(|c| c.left).into_pyarray(py))?;
        out.set_item("right", field(|c| c.right).into_pyarray(py))?;
        out.set_item("split_dim", field(|c| c.dim).into_pyarray(py))?;
        let thresholds: Vec<f64> = tree.cuts.iter().map(|c| c.threshold).collect();
        out.set_item("threshold", thresholds.into_pyarray(py))?;
        out.set_item("tau", tree.tau.clone().into_pyarray(py))?;
        out.set_item("lower", boxes(&tree.lower)?.into_pyarray(py))?;
        out.set_item("upper", boxes(&tree.upper)?.into_pyarray(py))?;
        out.set_item("n_samples", tree.n_samples.clone().into_pyarray(py))?;
        Ok(out)
    }

    /// Versioned bytes of the whole fitted state.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes: PyResult<Vec<u8>> = ToPyResult(serialize::to_bytes(&self.inner)).into();
        Ok(PyBytes::new(py, &bytes?))
    }

    /// Inverse of `to_bytes`; rejects corrupt or foreign bytes with `ValueError`.
    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
        let inner: regression::ForestRegressor = serialize::from_bytes(bytes).map_err(to_py_err)?;
        if !inner.is_consistent() {
            return Err(to_py_err(Error::Corrupt(
                "inconsistent forest arrays".into(),
            )));
        }
        Ok(Self {
            inner,
            pools: PoolCache::default(),
        })
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let restore = py
            .import("mondrian_learn._core")?
            .getattr("ForestRegressor")?
            .getattr("from_bytes")?;
        Ok((restore, (self.to_bytes(py)?,)))
    }
}
