//! Python face of `partition`: sampled partitions (labels and the rule for new points) and
//! their products.

use super::arrays::{c_order, flat, to_array2, AnyPoints, PointsView};
use super::error::to_py_err;
use super::pickle::pickled;
use super::run::{Handle, Length};
use crate::error::Result;
use crate::partition::kernel::Assignment;
use crate::partition::samplers::random_forest::DecisionTree;
use crate::partition::samplers::{fast_cluster, mondrian, random_forest, PartitionRule, Sampling};
use crate::partition::PartitionModel;
use crate::points::Points;
use numpy::ndarray::Array1;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// Sampled partitions of the training points (labels) and the rule that assigns new points.
#[pyclass(module = "mondrian_learn._core")]
pub struct PartitionKernel {
    pub(super) inner: Handle<PartitionModel>,
}

pub(super) fn assignment(
    labels: PyReadonlyArray2<'_, u32>,
    weights: Option<PyReadonlyArray2<'_, f64>>,
) -> Assignment {
    let labels = labels.as_array();
    Assignment {
        n_points: labels.ncols(),
        labels: labels.as_standard_layout().iter().copied().collect(),
        weights: weights.map(|w| w.as_array().as_standard_layout().iter().copied().collect()),
    }
}

impl PartitionKernel {
    /// Samples `n_partitions` partitions of the rows of `x` by `sample` and holds them (the
    /// samplers read every row at once: read here, in one piece, a dense float64 matrix
    /// borrowed as it is).
    fn sampled(
        py: Python<'_>,
        x: &PointsView<'_>,
        (n_partitions, seed, n_jobs): (usize, u64, usize),
        sample: impl FnOnce(&Sampling<'_>) -> Result<PartitionModel> + Send,
    ) -> PyResult<Self> {
        let inner = Handle::build(py, n_jobs, Length::Long, |call| {
            let mut buffer = Vec::new();
            sample(&Sampling {
                x: x.block(0..x.n_rows(), None, &mut buffer),
                n_features: x.n_features(),
                n_partitions,
                seed,
                pool: call.pool,
                interrupt: call.interrupt,
            })
        })?;
        Ok(Self { inner })
    }
}

#[pymethods]
impl PartitionKernel {
    /// `n_partitions` Mondrian partitions with lifetime `lifetime` of the rows of `x`.
    #[staticmethod]
    fn mondrian(
        py: Python<'_>,
        x: AnyPoints<'_>,
        n_partitions: usize,
        lifetime: f64,
        seed: u64,
        n_jobs: usize,
    ) -> PyResult<Self> {
        Self::sampled(py, &x.view()?, (n_partitions, seed, n_jobs), |on| {
            mondrian::sample(on, lifetime)
        })
    }

    /// One partition per tree, each tree given as scikit-learn's `(children_left,
    /// children_right, feature, threshold)`.
    #[staticmethod]
    #[allow(clippy::type_complexity)]
    fn random_forest(
        py: Python<'_>,
        x: AnyPoints<'_>,
        trees: Vec<(
            PyReadonlyArray1<'_, i64>,
            PyReadonlyArray1<'_, i64>,
            PyReadonlyArray1<'_, i64>,
            PyReadonlyArray1<'_, f64>,
        )>,
        seed: u64,
        n_jobs: usize,
    ) -> PyResult<Self> {
        let x = x.view()?;
        let d = x.n_features();
        let values =
            |a: &PyReadonlyArray1<'_, i64>| a.as_array().iter().copied().collect::<Vec<_>>();
        let trees: Vec<DecisionTree> = trees
            .iter()
            .map(|(l, r, f, t)| {
                let t: Vec<f64> = t.as_array().iter().copied().collect();
                DecisionTree::from_arrays(&values(l), &values(r), &values(f), &t, d)
            })
            .collect::<Result<_>>()
            .map_err(to_py_err)?;
        Self::sampled(py, &x, (trees.len(), seed, n_jobs), |on| {
            random_forest::sample(on, trees)
        })
    }

    /// `n_partitions` Fast Cluster partitions (Algorithm 2) with levels up to `max_level`.
    #[staticmethod]
    fn fast_cluster(
        py: Python<'_>,
        x: AnyPoints<'_>,
        n_partitions: usize,
        max_level: u32,
        seed: u64,
        n_jobs: usize,
    ) -> PyResult<Self> {
        Self::sampled(py, &x.view()?, (n_partitions, seed, n_jobs), |on| {
            fast_cluster::sample(on, max_level)
        })
    }

    /// Partitions given as labels (`n_partitions × n_points`, ids renumbered 0..L−1).
    #[staticmethod]
    fn from_labels(labels: PyReadonlyArray2<'_, u32>) -> PyResult<Self> {
        let labels = labels.as_array();
        let m = labels.nrows();
        let flat: Vec<u32> = labels.as_standard_layout().iter().copied().collect();
        let model = PartitionModel::from_labels(flat, m).map_err(to_py_err)?;
        Ok(Self {
            inner: Handle::new(model),
        })
    }

    #[getter]
    fn n_points(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.kernel.n_points())
    }

    #[getter]
    fn n_partitions(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.kernel.n_partitions())
    }

    /// Number of clusters of each partition.
    fn n_clusters<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        self.inner
            .peek(py, |m| m.kernel.n_clusters().to_vec())
            .into_pyarray(py)
    }

    /// First one-hot column of each partition's clusters (length m + 1).
    fn cluster_offsets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        let offsets: Vec<u64> = self.inner.peek(py, |m| {
            m.kernel
                .cluster_offsets()
                .iter()
                .map(|&o| o as u64)
                .collect()
        });
        offsets.into_pyarray(py)
    }

    /// The labels, `n_partitions × n_points`.
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let (m, n, labels) = self.inner.peek(py, |model| {
            let k = &model.kernel;
            (k.n_partitions(), k.n_points(), k.labels().to_vec())
        });
        Ok(to_array2(m, n, labels)?.into_pyarray(py))
    }

    /// Labels (`u32::MAX`: a cluster of its own) and weights (None: all 1) of new points.
    #[allow(clippy::type_complexity)]
    fn assign<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
    ) -> PyResult<(Bound<'py, PyArray2<u32>>, Option<Bound<'py, PyArray2<f64>>>)> {
        let x = x.view()?;
        let (m, a) = self.inner.read(py, n_jobs, Length::Short, |model, call| {
            Ok((model.kernel.n_partitions(), model.assign(&x, call.pool)?))
        })?;
        let weights = match a.weights {
            Some(w) => Some(to_array2(m, a.n_points, w)?.into_pyarray(py)),
            None => None,
        };
        Ok((
            to_array2(m, a.n_points, a.labels)?.into_pyarray(py),
            weights,
        ))
    }

    /// `K̂ V` for `V` of shape (n_points, k).
    fn matmul<'py>(
        &self,
        py: Python<'py>,
        v: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let v = c_order(&v);
        let k = v.ncols();
        let (n, out) = self.inner.read(py, n_jobs, Length::Short, |model, call| {
            let n = model.kernel.n_points();
            let mut out = vec![0.0; n * k];
            model.kernel.matmul(flat(&v), k, &mut out, call.pool)?;
            Ok((n, out))
        })?;
        Ok(to_array2(n, k, out)?.into_pyarray(py))
    }

    /// `K̂(A, X) V` for assigned points A (labels, weights as returned by `assign`).
    fn cross_matmul<'py>(
        &self,
        py: Python<'py>,
        labels: PyReadonlyArray2<'py, u32>,
        weights: Option<PyReadonlyArray2<'py, f64>>,
        v: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let a = assignment(labels, weights);
        let v = c_order(&v);
        let k = v.ncols();
        let out = self.inner.read(py, n_jobs, Length::Short, |model, call| {
            let mut out = vec![0.0; a.n_points * k];
            model
                .kernel
                .cross_matmul(&a, flat(&v), k, &mut out, call.pool)?;
            Ok(out)
        })?;
        Ok(to_array2(a.n_points, k, out)?.into_pyarray(py))
    }

    /// `K̂(X, A)`, shape (n_points, n_assigned).
    fn cross_columns<'py>(
        &self,
        py: Python<'py>,
        labels: PyReadonlyArray2<'py, u32>,
        weights: Option<PyReadonlyArray2<'py, f64>>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let a = assignment(labels, weights);
        let (n, out) = self.inner.read(py, n_jobs, Length::Short, |model, call| {
            let n = model.kernel.n_points();
            let mut out = vec![0.0; n * a.n_points];
            model.kernel.cross_columns(&a, &mut out, call.pool)?;
            Ok((n, out))
        })?;
        Ok(to_array2(n, a.n_points, out)?.into_pyarray(py))
    }

    /// Cluster sums `Gᵀ W V` (total clusters × k) of the rows of `v`: the training points'
    /// when `labels` is None, else the assigned points' (labels, weights as `assign` returns).
    #[pyo3(signature = (v, n_jobs, labels=None, weights=None))]
    fn cluster_sums<'py>(
        &self,
        py: Python<'py>,
        v: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
        labels: Option<PyReadonlyArray2<'py, u32>>,
        weights: Option<PyReadonlyArray2<'py, f64>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let a = labels.map(|l| assignment(l, weights));
        let v = c_order(&v);
        let k = v.ncols();
        let sums = self.inner.read(py, n_jobs, Length::Short, |model, call| {
            model
                .kernel
                .cluster_sums(a.as_ref(), flat(&v), k, call.pool)
        })?;
        Ok(to_array2(sums.len() / k.max(1), k, sums)?.into_pyarray(py))
    }

    /// `(1/m) W G sums` for the training points (`labels` None) or assigned points: each
    /// point's mean over partitions of its clusters' rows of `sums` (total clusters × k).
    #[pyo3(signature = (sums, n_jobs, labels=None, weights=None))]
    fn gather_sums<'py>(
        &self,
        py: Python<'py>,
        sums: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
        labels: Option<PyReadonlyArray2<'py, u32>>,
        weights: Option<PyReadonlyArray2<'py, f64>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let a = labels.map(|l| assignment(l, weights));
        let sums = c_order(&sums);
        let k = sums.ncols();
        let (n, out) = self.inner.read(py, n_jobs, Length::Short, |model, call| {
            let n = a.as_ref().map_or(model.kernel.n_points(), |a| a.n_points);
            let mut out = vec![0.0; n * k];
            model
                .kernel
                .gather_sums(a.as_ref(), flat(&sums), k, &mut out, call.pool)?;
            Ok((n, out))
        })?;
        Ok(to_array2(n, k, out)?.into_pyarray(py))
    }

    /// Reads every label once in parallel and returns their sum (the bandwidth yardstick).
    fn stream_labels(&self, py: Python<'_>, n_jobs: usize) -> PyResult<u64> {
        self.inner.read(py, n_jobs, Length::Short, |model, call| {
            Ok(model.kernel.stream_labels(call.pool))
        })
    }

    /// Nodes per Mondrian tree kept for assigning new points (empty for other samplers).
    fn tree_nodes<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        let nodes: Vec<u64> = self.inner.peek(py, |model| match &model.rule {
            PartitionRule::Mondrian(rule) => rule.n_nodes().iter().map(|&n| n as u64).collect(),
            _ => Vec::new(),
        });
        Array1::from(nodes).into_pyarray(py)
    }

    /// Depth at which each Random Forest partition cuts its tree (empty for other samplers).
    fn forest_depths<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        let depths = self.inner.peek(py, |model| match &model.rule {
            PartitionRule::RandomForest(rule) => rule.depths.clone(),
            _ => Vec::new(),
        });
        Array1::from(depths).into_pyarray(py)
    }
}

pickled!(PartitionKernel, PartitionModel::is_consistent);
