//! Python face of `forest`: one handle for a Mondrian forest model of either kind (regression
//! or classification); the methods every forest has, and each model's own.

use super::error::to_py_err;
use super::pickle::pickled;
use super::run::{Handle, Length};
use super::tree_arrays::tree_arrays;
use crate::error::{Error, Result};
use crate::forest::classification::ForestClassifier;
use crate::forest::regression::prior::{GaussianPrior, NoiseVariance, PriorOverrides};
use crate::forest::regression::{ForestRegressor, PosteriorMode};
use crate::forest::{ForestModel, MondrianForest};
use crate::mondrian::guided::Guidance;
use crate::mondrian::TreeParams;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::ThreadPool;

/// A fitted (or empty) Mondrian forest held by Rust.
///
/// Predictions share the model; updates (and the lazy recomputation of a stale regression
/// posterior) take it alone, so concurrent Python threads wait for each other (`run.rs`).
#[pyclass(module = "mondrian_learn._core")]
pub struct Forest {
    inner: Handle<ForestModel>,
}

/// An empty forest for points with `n_features` coordinates.
fn empty_forest(
    n_features: usize,
    lifetime: f64,
    min_samples_split: usize,
    seed: u64,
    scale_features: bool,
) -> PyResult<MondrianForest> {
    let params = TreeParams::new(lifetime, min_samples_split);
    let forest = MondrianForest::new(params, n_features, seed).map_err(to_py_err)?;
    Ok(if scale_features {
        forest.with_unit_box_inputs()
    } else {
        forest
    })
}

fn not_a(kind: &str) -> Error {
    Error::InvalidInput(format!("this forest is not a {kind}"))
}

fn regressor(model: &ForestModel) -> Result<&ForestRegressor> {
    match model {
        ForestModel::Regressor(m) => Ok(m),
        ForestModel::Classifier(_) => Err(not_a("regressor")),
    }
}

fn classifier(model: &ForestModel) -> Result<&ForestClassifier> {
    match model {
        ForestModel::Classifier(m) => Ok(m),
        ForestModel::Regressor(_) => Err(not_a("classifier")),
    }
}

/// Whether a model's predictions may be read now (a posterior made stale by an online update
/// is recomputed first).
fn is_ready(model: &ForestModel) -> bool {
    match model {
        ForestModel::Regressor(m) => m.posterior_is_fresh(),
        ForestModel::Classifier(m) => m.means_are_fresh(),
    }
}

fn prepare(model: &mut ForestModel, pool: &ThreadPool) -> Result<()> {
    match model {
        ForestModel::Regressor(m) => m.ensure_posterior(pool),
        ForestModel::Classifier(m) => {
            m.ensure_means(pool);
            Ok(())
        }
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

impl Forest {
    /// Runs `work` on the regression model with a fresh posterior.
    fn with_regressor<T: Send>(
        &self,
        py: Python<'_>,
        n_jobs: usize,
        work: impl FnOnce(&ForestRegressor, &ThreadPool) -> Result<T> + Send,
    ) -> PyResult<T> {
        self.inner
            .read_prepared(py, n_jobs, is_ready, prepare, |model, call| {
                work(regressor(model)?, call.pool)
            })
    }
}

#[pymethods]
impl Forest {
    /// A regression forest. `prior_mean`, `gamma1`, `gamma2`: fixed hyper-parameters (None:
    /// heuristic); `noise_variance`: a number, "heuristic" (None) or "within_leaf";
    /// `posterior`: "exact" or "fast"; `scale_features`: map inputs to the unit box of the
    /// first training points; cuts chosen among `tries` dimensions × `locations` candidates by
    /// variance reduction (1 × 1: label-blind).
    #[staticmethod]
    #[pyo3(signature = (n_features, lifetime, min_samples_split, seed, prior_mean=None, gamma1=None, gamma2=None, noise_variance=None, posterior="exact", scale_features=true, tries=1, locations=1))]
    #[allow(clippy::too_many_arguments)]
    fn regressor(
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
        tries: usize,
        locations: usize,
    ) -> PyResult<Self> {
        let noise_variance = match noise_variance {
            None => NoiseVariance::Heuristic,
            Some(v) => match v.extract::<f64>() {
                Ok(value) => NoiseVariance::Fixed(value),
                Err(_) => NoiseVariance::named(&v.extract::<String>()?).map_err(to_py_err)?,
            },
        };
        let forest = empty_forest(
            n_features,
            lifetime,
            min_samples_split,
            seed,
            scale_features,
        )?;
        let mut model = ForestRegressor::new(forest);
        model.overrides = PriorOverrides {
            mean: prior_mean,
            gamma1,
            gamma2,
            noise_variance,
        };
        model.mode = PosteriorMode::named(posterior).map_err(to_py_err)?;
        model.guidance = Guidance::new(tries, locations).map_err(to_py_err)?;
        Ok(Self {
            inner: Handle::new(ForestModel::Regressor(model)),
        })
    }

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
        let forest = empty_forest(
            n_features,
            lifetime,
            min_samples_split,
            seed,
            scale_features,
        )?;
        let guidance = Guidance::new(tries, locations).map_err(to_py_err)?;
        let discounts = (discount_rate, min_discount);
        let model = ForestClassifier::new(forest, n_classes, discounts, guidance);
        Ok(Self {
            inner: Handle::new(ForestModel::Classifier(model)),
        })
    }

    /// Batch fit of `n_trees` trees, `slice` at a time; `progress(done)` is called between
    /// slices. `y`: float64 targets (regression) or uint32 class indices (classification).
    #[pyo3(signature = (x, y, n_trees, n_jobs, slice, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn fit(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: Bound<'_, PyAny>,
        n_trees: usize,
        n_jobs: usize,
        slice: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let x = x.as_array();
        let y = Targets::of(&y);
        let (values, labels) = (y.values(), y.labels());
        self.inner.write(py, n_jobs, Length::Long, |model, call| {
            let how = call.growing(n_trees, slice);
            let report = |done| call.notify(&progress, &[done]);
            match (model, values, labels) {
                (ForestModel::Regressor(m), Some(y), _) => m.fit(&x, &y, &how, report),
                (ForestModel::Classifier(m), _, Some(y)) => m.fit(&x, &y, &how, report),
                _ => Err(Targets::mismatch()),
            }
        })
    }

    /// Online update with new points (conditional Mondrian extension of every tree).
    fn partial_fit(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: Bound<'_, PyAny>,
        n_jobs: usize,
    ) -> PyResult<()> {
        let x = x.as_array();
        let y = Targets::of(&y);
        let (values, labels) = (y.values(), y.labels());
        self.inner.write(py, n_jobs, Length::Short, |model, call| {
            match (model, values, labels) {
                (ForestModel::Regressor(m), Some(y), _) => m.partial_fit(&x, &y, call.pool),
                (ForestModel::Classifier(m), _, Some(y)) => m.partial_fit(&x, &y, call.pool),
                _ => Err(Targets::mismatch()),
            }
        })
    }

    /// Whether a regression posterior is up to date (false after `partial_fit`; predictions
    /// bring it up to date first).
    #[getter]
    fn posterior_is_fresh(&self, py: Python<'_>) -> bool {
        self.inner.peek(py, is_ready)
    }

    /// Regression: predictive mean and variance of the branch-off mixture at each row.
    #[allow(clippy::type_complexity)]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
        let x = x.as_array();
        let (mean, var) = self.with_regressor(py, n_jobs, |m, pool| m.predict(&x, pool))?;
        Ok((mean.into_pyarray(py), var.into_pyarray(py)))
    }

    /// Regression: quantiles `levels` of the predictive mixture at each row (N × L).
    fn quantiles<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        levels: Vec<f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.as_array();
        let out = self.with_regressor(py, n_jobs, |m, pool| m.quantiles(&x, &levels, pool))?;
        Ok(out.into_pyarray(py))
    }

    /// Regression: log p(y_i | x_i) under the predictive mixture.
    fn log_density<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        y: PyReadonlyArray1<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (x, y) = (x.as_array(), y.as_array());
        let out = self.with_regressor(py, n_jobs, |m, pool| m.log_density(&x, &y, pool))?;
        Ok(out.into_pyarray(py))
    }

    /// Regression: the prior in use: `mean`, `gamma1`, `gamma2`, `noise_variance`.
    fn prior<'py>(&self, py: Python<'py>, n_jobs: usize) -> PyResult<Bound<'py, PyDict>> {
        let p = self.with_regressor(py, n_jobs, |m, _| m.prior())?;
        let out = PyDict::new(py);
        out.set_item("mean", p.mean)?;
        out.set_item("gamma1", p.gamma1)?;
        out.set_item("gamma2", p.gamma2)?;
        out.set_item("noise_variance", p.noise_variance)?;
        Ok(out)
    }

    /// Regression: a criterion of the hyper-parameters on the first `n_trees` trees:
    /// "evidence", Σ over trees of log p(y | tree); "leave_one_out", the forest mixture's
    /// leave-one-out log density of the training targets (summed over points).
    #[allow(clippy::too_many_arguments)]
    fn prior_score(
        &self,
        py: Python<'_>,
        criterion: &str,
        mean: f64,
        gamma1: f64,
        gamma2: f64,
        noise_variance: f64,
        n_trees: usize,
        n_jobs: usize,
    ) -> PyResult<f64> {
        let prior = GaussianPrior::new(mean, gamma1, gamma2, noise_variance).map_err(to_py_err)?;
        let evidence = match criterion {
            "evidence" => true,
            "leave_one_out" => false,
            other => {
                return Err(to_py_err(Error::InvalidInput(format!(
                    "criterion must be 'evidence' or 'leave_one_out', got {other:?}"
                ))))
            }
        };
        self.with_regressor(py, n_jobs, |m, pool| {
            Ok(if evidence {
                m.log_evidence(&prior, n_trees, pool)
            } else {
                m.loo_log_density(&prior, n_trees, pool)
            })
        })
    }

    /// Regression: fixes the prior's hyper-parameters (as if passed to the constructor) and
    /// recomputes the posterior.
    #[allow(clippy::too_many_arguments)]
    fn fix_prior(
        &self,
        py: Python<'_>,
        mean: f64,
        gamma1: f64,
        gamma2: f64,
        noise_variance: f64,
        n_jobs: usize,
    ) -> PyResult<()> {
        let prior = GaussianPrior::new(mean, gamma1, gamma2, noise_variance).map_err(to_py_err)?;
        self.inner
            .write(py, n_jobs, Length::Short, |model, call| match model {
                ForestModel::Regressor(m) => m.fix_prior(&prior, call.pool),
                ForestModel::Classifier(_) => Err(not_a("regressor")),
            })
    }

    /// Regression: posterior mean and variance of every node mean of tree `index`.
    #[allow(clippy::type_complexity)]
    fn node_posterior<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        n_jobs: usize,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
        let (mean, var): (Vec<f64>, Vec<f64>) = self.with_regressor(py, n_jobs, |m, _| {
            m.node_posteriors(index)
                .map(|p| p.into_iter().map(|g| (g.mean, g.var)).unzip())
        })?;
        Ok((mean.into_pyarray(py), var.into_pyarray(py)))
    }

    /// Classification: class probabilities at each row (N × K).
    fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.as_array();
        let out = self
            .inner
            .read_prepared(py, n_jobs, is_ready, prepare, |model, call| {
                classifier(model)?.predict_proba(&x, call.pool)
            })?;
        Ok(out.into_pyarray(py))
    }

    /// Classification: the class counts of every node of tree `index` (n_nodes × K).
    fn node_counts<'py>(
        &self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
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
        x: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let x = x.as_array();
        let out = self.inner.read(py, n_jobs, Length::Short, |model, call| {
            model.forest().apply(&x, call.pool)
        })?;
        Ok(out.into_pyarray(py))
    }

    /// The input map `(offset, scale)`: x ↦ (x − offset) / scale, or None for raw inputs.
    #[allow(clippy::type_complexity)]
    fn input_map<'py>(
        &self,
        py: Python<'py>,
    ) -> Option<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
        let map = self.inner.peek(py, |m| m.forest().input_map().cloned())?;
        Some((map.offset.into_pyarray(py), map.scale.into_pyarray(py)))
    }

    /// Number of trees.
    #[getter]
    fn n_trees(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.forest().trees.len())
    }

    /// Number of stored training points.
    #[getter]
    fn n_rows(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |m| m.forest().n_rows())
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
