//! Python face of the regression forest's own methods (the handle and what every forest has
//! are in `forest.rs`): construction, predictive moments, quantiles and densities, the prior
//! and its hyper-parameter criteria, node posteriors.

use super::arrays::{AnyPoints, VectorPair};
use super::error::to_py_err;
use super::forest::{empty_forest, not_a, prepare_for, ready_for, regressor, Forest};
use super::run::{Handle, Length};
use crate::error::Result;
use crate::forest::regression::mixture::ScaledMixtures as CoreScaledMixtures;
use crate::forest::regression::prior::{GaussianPrior, NoiseVariance, PriorOverrides};
use crate::forest::regression::{ForestRegressor, PosteriorMode, PriorCriterion};
use crate::forest::ForestModel;
use crate::mondrian::guided::Guidance;
use crate::mondrian::TreeParams;
use crate::points::Points;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::ThreadPool;

/// σ_y²'s rule from its Python value: None (the heuristic), a number, or a rule's name.
fn noise_rule(value: Option<Bound<'_, PyAny>>) -> PyResult<NoiseVariance> {
    Ok(match value {
        None => NoiseVariance::Heuristic,
        Some(v) => match v.extract::<f64>() {
            Ok(value) => NoiseVariance::Fixed(value),
            Err(_) => NoiseVariance::named(&v.extract::<String>()?).map_err(to_py_err)?,
        },
    })
}

/// A prior as Python sees it: `mean`, `gamma1`, `gamma2`, `noise_variance`.
fn prior_dict<'py>(py: Python<'py>, p: &GaussianPrior) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("mean", p.mean)?;
    out.set_item("gamma1", p.gamma1)?;
    out.set_item("gamma2", p.gamma2)?;
    out.set_item("noise_variance", p.noise_variance)?;
    Ok(out)
}

/// Held-out rows' predictive mixtures, scored with every variance multiplied by a scale and
/// the means spread about their centre (`Forest.scaled_mixtures`).
#[pyclass(frozen, module = "mondrian_learn._core")]
pub struct ScaledMixtures {
    inner: CoreScaledMixtures,
}

#[pymethods]
impl ScaledMixtures {
    /// Σ_i w_i of log p(y_i), its gradient (2) and Hessian (2 × 2) in (log c, ρ), at scale
    /// c = exp(`log_scale`) and `spread` ρ.
    fn score(&self, log_scale: f64, spread: f64) -> (f64, [f64; 2], [[f64; 2]; 2]) {
        let s = self.inner.score(log_scale, spread);
        let [a, b, c] = s.hessian;
        (s.value, s.gradient, [[a, b], [b, c]])
    }
}

impl Forest {
    /// Runs `work` on the regression model with a posterior ready for `n_rows` rows
    /// ([`ready_for`]).
    fn with_regressor<T: Send>(
        &self,
        py: Python<'_>,
        n_jobs: usize,
        n_rows: usize,
        work: impl FnOnce(&ForestRegressor, &ThreadPool) -> Result<T> + Send,
    ) -> PyResult<T> {
        self.inner.read_prepared(
            py,
            n_jobs,
            Length::Short,
            ready_for(n_rows),
            prepare_for(n_rows),
            |model, call| work(regressor(model)?, call.pool),
        )
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
        let noise_variance = noise_rule(noise_variance)?;
        let params = TreeParams::new(lifetime, min_samples_split);
        let forest = empty_forest(params, n_features, seed, scale_features)?;
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

    /// Whether a regression posterior is up to date (false after `partial_fit`; predictions
    /// bring it up to date first).
    #[getter]
    fn posterior_is_fresh(&self, py: Python<'_>) -> bool {
        self.inner.peek(py, ready_for(0))
    }

    /// Regression: predictive mean and variance of the branch-off mixture at each row.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
    ) -> PyResult<VectorPair<'py>> {
        let x = x.view()?;
        let (mean, var) =
            self.with_regressor(py, n_jobs, x.n_rows(), |m, pool| m.predict(&x, pool))?;
        Ok((mean.into_pyarray(py), var.into_pyarray(py)))
    }

    /// Regression: quantiles `levels` of the predictive mixture at each row (N × L).
    fn quantiles<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        levels: Vec<f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.view()?;
        let out = self.with_regressor(py, n_jobs, x.n_rows(), |m, pool| {
            m.quantiles(&x, &levels, pool)
        })?;
        Ok(out.into_pyarray(py))
    }

    /// Regression: log p(y_i | x_i) under the predictive mixture.
    fn log_density<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        y: PyReadonlyArray1<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (x, y) = (x.view()?, y.as_array());
        let out = self.with_regressor(py, n_jobs, x.n_rows(), |m, pool| {
            m.log_density(&x, &y, pool)
        })?;
        Ok(out.into_pyarray(py))
    }

    /// Regression: the predictive mixtures of rows `x` with targets `y` and weights
    /// `weights`, to be scored under scaled variances and spread means.
    fn scaled_mixtures<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        y: PyReadonlyArray1<'py, f64>,
        weights: PyReadonlyArray1<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<ScaledMixtures> {
        let x = x.view()?;
        let (y, weights) = (y.as_slice()?, weights.as_slice()?);
        let inner = self.with_regressor(py, n_jobs, x.n_rows(), |m, pool| {
            m.scaled_mixtures(&x, y, weights, pool)
        })?;
        Ok(ScaledMixtures { inner })
    }

    /// Regression: the prior in use: `mean`, `gamma1`, `gamma2`, `noise_variance`.
    fn prior<'py>(&self, py: Python<'py>, n_jobs: usize) -> PyResult<Bound<'py, PyDict>> {
        let p = self.with_regressor(py, n_jobs, 0, |m, _| m.prior())?;
        prior_dict(py, &p)
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
        let criterion = PriorCriterion::named(criterion).map_err(to_py_err)?;
        // The criteria read the trees and leaf statistics only: no posterior refresh first.
        self.inner.read(py, n_jobs, Length::Short, |model, call| {
            Ok(regressor(model)?.prior_score(criterion, &prior, n_trees, call.pool))
        })
    }

    /// Regression: fixes the prior's hyper-parameters (as if passed to the constructor) and
    /// recomputes the posterior (the upward pass only without `cavities`: for a few rows
    /// scored under many priors, which compute the cavities along their own paths).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (mean, gamma1, gamma2, noise_variance, n_jobs, cavities=true))]
    fn fix_prior(
        &self,
        py: Python<'_>,
        mean: f64,
        gamma1: f64,
        gamma2: f64,
        noise_variance: f64,
        n_jobs: usize,
        cavities: bool,
    ) -> PyResult<()> {
        let prior = GaussianPrior::new(mean, gamma1, gamma2, noise_variance).map_err(to_py_err)?;
        self.inner
            .write(py, n_jobs, Length::Short, |model, call| match model {
                ForestModel::Regressor(m) => m.fix_prior(&prior, cavities, call.pool),
                ForestModel::Classifier(_) => Err(not_a("regressor")),
            })
    }

    /// Regression: the caller's fixed hyper-parameters (None: free) replace those in use, and
    /// the prior is chosen again from them by the heuristic, on every row seen; returns the
    /// prior in use before (None when the heuristic chose it).
    #[pyo3(signature = (n_jobs, prior_mean=None, gamma1=None, gamma2=None, noise_variance=None))]
    fn reset_prior<'py>(
        &self,
        py: Python<'py>,
        n_jobs: usize,
        prior_mean: Option<f64>,
        gamma1: Option<f64>,
        gamma2: Option<f64>,
        noise_variance: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let overrides = PriorOverrides {
            mean: prior_mean,
            gamma1,
            gamma2,
            noise_variance: noise_rule(noise_variance)?,
        };
        let previous = self
            .inner
            .write(py, n_jobs, Length::Short, |model, call| match model {
                ForestModel::Regressor(m) => m.reset_prior(overrides, call.pool),
                ForestModel::Classifier(_) => Err(not_a("regressor")),
            })?;
        previous.map(|p| prior_dict(py, &p)).transpose()
    }

    /// Regression: ρ, the factor on the spread of the trees' predictive means about their
    /// average in the forest's predictive (1: the equal mixture over trees).
    #[getter]
    fn spread(&self, py: Python<'_>) -> PyResult<f64> {
        self.inner
            .peek(py, |model| Ok(regressor(model)?.spread()))
            .map_err(to_py_err)
    }

    /// Regression: sets ρ (finite, ≥ 0).
    fn set_spread(&self, py: Python<'_>, spread: f64) -> PyResult<()> {
        self.inner
            .write(py, 1, Length::Short, |model, _| match model {
                ForestModel::Regressor(m) => m.set_spread(spread),
                ForestModel::Classifier(_) => Err(not_a("regressor")),
            })
    }

    /// Regression: the (weighted) population variance and total weight of the targets seen.
    fn target_moments(&self, py: Python<'_>) -> PyResult<(f64, f64)> {
        self.inner
            .peek(py, |model| Ok(regressor(model)?.target_moments()))
            .map_err(to_py_err)
    }

    /// Regression: whether the rows have grown by `PRIOR_GROWTH` since the prior in use was
    /// chosen (the next prediction chooses it again by the heuristic; a caller with another
    /// rule chooses it now).
    #[getter]
    fn prior_is_due(&self, py: Python<'_>) -> PyResult<bool> {
        self.inner
            .peek(py, |model| Ok(regressor(model)?.prior_is_due()))
            .map_err(to_py_err)
    }

    /// Regression: the number of rows when the prior in use was chosen (it is chosen again
    /// once the rows have grown by `PRIOR_GROWTH`).
    #[getter]
    fn rows_at_prior_choice(&self, py: Python<'_>) -> PyResult<usize> {
        self.inner
            .peek(py, |model| Ok(regressor(model)?.rows_at_prior_choice()))
            .map_err(to_py_err)
    }

    /// Regression: per node of tree `index`, the decrease in the training targets' sum of
    /// squared deviations its cut achieves (0 for leaves).
    fn impurity_decrease<'py>(
        &self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let out = (self.inner)
            .peek(py, |model| regressor(model)?.impurity_decrease(index))
            .map_err(super::error::to_py_err)?;
        Ok(out.into_pyarray(py))
    }

    /// Regression: posterior mean and variance of every node mean of tree `index`.
    fn node_posterior<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        n_jobs: usize,
    ) -> PyResult<VectorPair<'py>> {
        let (mean, var): (Vec<f64>, Vec<f64>) =
            self.with_regressor(py, n_jobs, usize::MAX, |m, _| {
                m.node_posteriors(index)
                    .map(|p| p.into_iter().map(|g| (g.mean, g.var)).unzip())
            })?;
        Ok((mean.into_pyarray(py), var.into_pyarray(py)))
    }
}
