//! Python face of `partition` (samplers, products, solvers on the partition kernel).

use super::error::to_py_err;
use super::run::PoolCache;
use crate::error::{Error, Result};
use crate::partition::kernel::{Assignment, PartitionKernel as Kernel};
use crate::partition::random_forest::DecisionTree;
use crate::partition::{fast_cluster, mondrian, random_forest, PartitionRule};
use crate::serialize;
use numpy::ndarray::{Array1, Array2};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde::{Deserialize, Serialize};

/// Sampled partitions of the training points (labels) and the rule that assigns new points.
#[pyclass(module = "mondrian_learn._core")]
pub struct PartitionKernel {
    state: State,
    pools: PoolCache,
}

#[derive(Serialize, Deserialize)]
struct State {
    kernel: Kernel,
    rule: PartitionRule,
}

/// The values of a C-contiguous array (the Python layer makes every array C-contiguous, so
/// no call copies the training points).
pub(super) fn contiguous<'a, T: numpy::Element>(
    a: &'a PyReadonlyArray2<'_, T>,
) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|_| to_py_err(Error::InvalidInput("arrays must be C-contiguous".into())))
}

pub(super) fn to_array2<T>(rows: usize, cols: usize, v: Vec<T>) -> PyResult<Array2<T>> {
    Array2::from_shape_vec((rows, cols), v)
        .map_err(|e| to_py_err(Error::InvalidInput(e.to_string())))
}

fn assignment(
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
    fn new(kernel: Kernel, rule: PartitionRule) -> Self {
        Self {
            state: State { kernel, rule },
            pools: PoolCache::default(),
        }
    }

    fn n(&self) -> usize {
        self.state.kernel.n_points()
    }

    /// The labels and cluster sizes (for the solvers in `linalg.rs`).
    pub(super) fn kernel(&self) -> &Kernel {
        &self.state.kernel
    }

    /// Runs `work` with the GIL released on this kernel's pool.
    pub(super) fn run<T: Send>(
        &self,
        py: Python<'_>,
        n_jobs: usize,
        work: impl FnOnce(&rayon::ThreadPool) -> Result<T> + Send,
    ) -> PyResult<T> {
        self.pools.run(py, n_jobs, work)
    }
}

#[pymethods]
impl PartitionKernel {
    /// `n_partitions` Mondrian partitions with lifetime `lifetime` of the rows of `x`.
    #[staticmethod]
    fn mondrian(
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        n_partitions: usize,
        lifetime: f64,
        seed: u64,
        n_jobs: usize,
    ) -> PyResult<Self> {
        let d = x.as_array().ncols();
        let x = contiguous(&x)?;
        let pools = PoolCache::default();
        let (kernel, rule) = pools.run(py, n_jobs, |pool| {
            mondrian::sample(x, d, n_partitions, lifetime, seed, pool)
        })?;
        Ok(Self {
            state: State {
                kernel,
                rule: PartitionRule::Mondrian(rule),
            },
            pools,
        })
    }

    /// One partition per tree, each tree given as scikit-learn's `(children_left,
    /// children_right, feature, threshold)`.
    #[staticmethod]
    #[allow(clippy::type_complexity)]
    fn random_forest(
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        trees: Vec<(
            PyReadonlyArray1<'_, i64>,
            PyReadonlyArray1<'_, i64>,
            PyReadonlyArray1<'_, i64>,
            PyReadonlyArray1<'_, f64>,
        )>,
        seed: u64,
        n_jobs: usize,
    ) -> PyResult<Self> {
        let d = x.as_array().ncols();
        let x = contiguous(&x)?;
        let trees: Vec<DecisionTree> = trees
            .iter()
            .map(|(l, r, f, t)| {
                let v = |a: &PyReadonlyArray1<'_, i64>| {
                    a.as_array().iter().copied().collect::<Vec<_>>()
                };
                let t: Vec<f64> = t.as_array().iter().copied().collect();
                DecisionTree::from_arrays(&v(l), &v(r), &v(f), &t, d)
            })
            .collect::<Result<_>>()
            .map_err(to_py_err)?;
        let pools = PoolCache::default();
        let (kernel, rule) = pools.run(py, n_jobs, |pool| {
            random_forest::sample(x, d, trees, seed, pool)
        })?;
        Ok(Self {
            state: State {
                kernel,
                rule: PartitionRule::RandomForest(rule),
            },
            pools,
        })
    }

    /// `n_partitions` Fast Cluster partitions (Algorithm 2) with levels up to `max_level`.
    #[staticmethod]
    fn fast_cluster(
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        n_partitions: usize,
        max_level: u32,
        seed: u64,
        n_jobs: usize,
    ) -> PyResult<Self> {
        let d = x.as_array().ncols();
        let x = contiguous(&x)?;
        let pools = PoolCache::default();
        let (kernel, rule) = pools.run(py, n_jobs, |pool| {
            fast_cluster::sample(x, d, n_partitions, max_level, seed, pool)
        })?;
        Ok(Self {
            state: State {
                kernel,
                rule: PartitionRule::FastCluster(rule),
            },
            pools,
        })
    }

    /// Partitions given as labels (`n_partitions × n_points`, ids renumbered 0..L−1).
    #[staticmethod]
    fn from_labels(labels: PyReadonlyArray2<'_, u32>) -> PyResult<Self> {
        let labels = labels.as_array();
        let m = labels.nrows();
        let flat: Vec<u32> = labels.as_standard_layout().iter().copied().collect();
        let kernel = Kernel::from_labels(flat, m).map_err(to_py_err)?;
        Ok(Self::new(kernel, PartitionRule::External))
    }

    #[getter]
    fn n_points(&self) -> usize {
        self.n()
    }

    #[getter]
    fn n_partitions(&self) -> usize {
        self.state.kernel.n_partitions()
    }

    /// Number of clusters of each partition.
    fn n_clusters<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        self.state.kernel.n_clusters().to_vec().into_pyarray(py)
    }

    /// First one-hot column of each partition's clusters (length m + 1).
    fn cluster_offsets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        let offsets: Vec<u64> = self
            .state
            .kernel
            .cluster_offsets()
            .iter()
            .map(|&o| o as u64)
            .collect();
        offsets.into_pyarray(py)
    }

    /// The labels, `n_partitions × n_points`.
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let k = &self.state.kernel;
        Ok(to_array2(k.n_partitions(), k.n_points(), k.labels().to_vec())?.into_pyarray(py))
    }

    /// Labels (`u32::MAX`: a cluster of its own) and weights (None: all 1) of new points.
    #[allow(clippy::type_complexity)]
    fn assign<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<(Bound<'py, PyArray2<u32>>, Option<Bound<'py, PyArray2<f64>>>)> {
        let x = contiguous(&x)?;
        let rule = &self.state.rule;
        let a = self.pools.run(py, n_jobs, |pool| rule.assign(x, pool))?;
        let m = self.state.kernel.n_partitions();
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
        let k = v.as_array().ncols();
        let v = contiguous(&v)?;
        let kernel = &self.state.kernel;
        let out = self.pools.run(py, n_jobs, |pool| {
            let mut out = vec![0.0; kernel.n_points() * k];
            kernel.matmul(v, k, &mut out, pool)?;
            Ok(out)
        })?;
        Ok(to_array2(self.n(), k, out)?.into_pyarray(py))
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
        let k = v.as_array().ncols();
        let v = contiguous(&v)?;
        let kernel = &self.state.kernel;
        let out = self.pools.run(py, n_jobs, |pool| {
            let mut out = vec![0.0; a.n_points * k];
            kernel.cross_matmul(&a, v, k, &mut out, pool)?;
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
        let kernel = &self.state.kernel;
        let out = self.pools.run(py, n_jobs, |pool| {
            let mut out = vec![0.0; kernel.n_points() * a.n_points];
            kernel.cross_columns(&a, &mut out, pool)?;
            Ok(out)
        })?;
        Ok(to_array2(self.n(), a.n_points, out)?.into_pyarray(py))
    }

    /// Reads every label once in parallel and returns their sum (the bandwidth yardstick).
    fn stream_labels(&self, py: Python<'_>, n_jobs: usize) -> PyResult<u64> {
        let kernel = &self.state.kernel;
        self.pools
            .run(py, n_jobs, |pool| Ok(kernel.stream_labels(pool)))
    }

    /// Nodes per Mondrian tree kept for assigning new points (empty for other samplers).
    fn tree_nodes<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        let nodes: Vec<u64> = match &self.state.rule {
            PartitionRule::Mondrian(rule) => rule.n_nodes().iter().map(|&n| n as u64).collect(),
            _ => Vec::new(),
        };
        Array1::from(nodes).into_pyarray(py)
    }

    /// Depth at which each Random Forest partition cuts its tree (empty for other samplers).
    fn forest_depths<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        let depths = match &self.state.rule {
            PartitionRule::RandomForest(rule) => rule.depths.clone(),
            _ => Vec::new(),
        };
        Array1::from(depths).into_pyarray(py)
    }

    /// Versioned bytes of the whole state.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = serialize::to_bytes(&self.state).map_err(to_py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Inverse of `to_bytes`; corrupt or foreign bytes raise `ValueError`.
    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
        let state: State = serialize::from_bytes(bytes).map_err(to_py_err)?;
        if !state.kernel.is_consistent() || !state.rule.is_consistent(&state.kernel) {
            return Err(to_py_err(Error::Corrupt(
                "inconsistent partition kernel".into(),
            )));
        }
        Ok(Self::new(state.kernel, state.rule))
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let restore = py
            .import("mondrian_learn._core")?
            .getattr("PartitionKernel")?
            .getattr("from_bytes")?;
        Ok((restore, (self.to_bytes(py)?,)))
    }
}
