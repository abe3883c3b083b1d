//! Python face of `density`: a Mondrian density forest on a bounded box.

use super::arrays::{per_row, to_array2, AnyPoints, RowValues, VectorPair};
use super::pickle::pickled;
use super::run::{Handle, Length};
use crate::density::{Cut, DensityForest};
use crate::error::Error;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A fitted (or empty) Mondrian density forest held by Rust.
#[pyclass(module = "mondrian_learn._core")]
pub struct Density {
    pub(super) inner: Handle<DensityForest>,
}

#[pymethods]
impl Density {
    /// Samples `n_trees` Mondrian trees with lifetime `lifetime` on the box `[lower, upper]`
    /// (each at most `max_nodes` nodes) with prior strength `gamma`; no points yet.
    #[new]
    #[pyo3(signature = (lower, upper, lifetime, gamma, n_trees, seed, max_nodes, n_jobs))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        lower: Vec<f64>,
        upper: Vec<f64>,
        lifetime: f64,
        gamma: f64,
        n_trees: usize,
        seed: u64,
        max_nodes: usize,
        n_jobs: usize,
    ) -> PyResult<Self> {
        let inner = Handle::build(py, n_jobs, Length::Long, |call| {
            DensityForest::sample(
                lower,
                upper,
                (lifetime, gamma),
                n_trees,
                seed,
                max_nodes,
                call.pool,
                call.interrupt,
            )
        })?;
        Ok(Self { inner })
    }

    /// Adds training points (inside the box; any points: dense, sparse, with their map) with optional weights to every tree's counts.
    #[pyo3(signature = (x, n_jobs, weights=None))]
    fn add_points(
        &self,
        py: Python<'_>,
        x: AnyPoints<'_>,
        n_jobs: usize,
        weights: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<()> {
        let x = x.view()?;
        let w = weights.as_ref().map(|w| w.as_array().to_vec());
        self.inner.write(py, n_jobs, Length::Short, |m, call| {
            m.add_points(&x, w.as_deref(), call.pool)
        })
    }

    /// log of the posterior mean density at each row (−inf outside the box).
    fn log_density<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
    ) -> RowValues<'py> {
        per_row(&self.inner, py, x, n_jobs, Length::Short, |m, x, pool| {
            m.log_density(x, pool)
        })
    }

    /// The lifetime path at `lifetimes` (ascending, within the fitted lifetime) on the rows
    /// of `x` (optionally weighted; `leave_one_out`: the training rows, each left out of the
    /// counts on its path): the mean log density per checkpoint and the share outside the box.
    #[pyo3(signature = (x, lifetimes, leave_one_out, n_jobs, weights=None))]
    fn lifetime_path<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        lifetimes: Vec<f64>,
        leave_one_out: bool,
        n_jobs: usize,
        weights: Option<PyReadonlyArray1<'py, f64>>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, f64)> {
        let x = x.view()?;
        let w = weights.as_ref().map(|w| w.as_array().to_vec());
        let (means, outside) = self.inner.read(py, n_jobs, Length::Long, |m, call| {
            m.lifetime_path(&x, w.as_deref(), &lifetimes, leave_one_out, call.pool)
        })?;
        Ok((means.into_pyarray(py), outside))
    }

    /// `n` draws from the posterior mean density (n × D).
    fn draw<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        seed: u64,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (d, out) = self.inner.read(py, 1, Length::Short, |m, _| {
            Ok((m.n_features(), m.draw(n, seed)?))
        })?;
        Ok(to_array2(n, d, out)?.into_pyarray(py))
    }

    /// Per leaf of tree `index`: posterior mean mass and volume.
    fn leaf_masses<'py>(&self, py: Python<'py>, index: usize) -> PyResult<VectorPair<'py>> {
        let (mass, volume) = self
            .inner
            .read(py, 1, Length::Short, |m, _| m.leaf_masses(index))?;
        Ok((mass.into_pyarray(py), volume.into_pyarray(py)))
    }

    /// Node arrays of tree `index`: `dim` (−1 for a leaf), `threshold`, `left`, `right`
    /// (−1 for none) and the training weight `count` of every node, parents first.
    fn nodes<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyDict>> {
        let tree = self.inner.read(py, 1, Length::Short, |m, _| {
            m.trees
                .get(index)
                .cloned()
                .ok_or_else(|| Error::InvalidInput(format!("tree index {index} out of range")))
        })?;
        let signed = |v: u32| if v == u32::MAX { -1i64 } else { i64::from(v) };
        let out = PyDict::new(py);
        let column = |f: &dyn Fn(&Cut) -> i64| -> Vec<i64> { tree.nodes.iter().map(f).collect() };
        out.set_item("dim", column(&|c| signed(c.dim)).into_pyarray(py))?;
        out.set_item("left", column(&|c| signed(c.left)).into_pyarray(py))?;
        out.set_item("right", column(&|c| signed(c.right)).into_pyarray(py))?;
        let thresholds: Vec<f64> = tree.nodes.iter().map(|c| c.threshold).collect();
        out.set_item("threshold", thresholds.into_pyarray(py))?;
        out.set_item("count", tree.counts.clone().into_pyarray(py))?;
        Ok(out)
    }

    /// Number of leaves of each tree.
    fn n_leaves(&self, py: Python<'_>) -> Vec<usize> {
        self.inner.peek(py, |m| {
            m.trees
                .iter()
                .map(|t| t.nodes.iter().filter(|c| c.left == u32::MAX).count())
                .collect()
        })
    }

    /// Number of trees.
    #[getter]
    fn n_trees(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.trees.len())
    }
}

pickled!(Density, DensityForest::is_consistent);
