//! Python face of `forest::regression`: the regression forest's class — its constructor,
//! predictive moments, quantiles and densities, the prior and its hyper-parameter criteria,
//! node posteriors, and the running sums of a forest split into parts (what every forest has
//! is `forest.rs`'s).

use super::arrays::{AnyPoints, VectorPair};
use super::error::to_py_err;
use super::forest::{empty_forest, forest_methods, Kind};
use super::run::{Handle, Length};
use crate::error::{Error, Result};
use crate::forest::regression::mixture::{MomentSums, ScaledMixtures as CoreScaledMixtures};
use crate::forest::regression::prior::{GaussianPrior, NoiseVariance, PriorOverrides};
use crate::forest::regression::{ForestRegressor, PosteriorMode, PriorCriterion};
use crate::forest::ForestModel;
use crate::points::Points;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::ThreadPool;

/// A fitted (or empty) Mondrian regression forest held by Rust.
///
/// Predictions share the model; updates (and the lazy recomputation of a stale posterior)
/// take it alone, so concurrent Python threads wait for each other (`run.rs`).
#[pyclass(name = "ForestRegressor", module = "mondrian_learn._core")]
pub struct PyForestRegressor {
    inner: Handle<ForestRegressor>,
}

forest_methods!(PyForestRegressor, "ForestRegressor", ForestRegressor, f64);

impl Kind for ForestRegressor {
    const STORED_AS: (u32, &'static str) = (0, "Regressor");
    /// `forest::regression::path`'s scores.
    const SCORES: [&'static str; 2] = ["mse", "nlpd"];

    fn from_stored(stored: ForestModel) -> Option<Self> {
        match stored {
            ForestModel::Regressor(model) => Some(model),
            ForestModel::Classifier(_) => None,
        }
    }

    fn is_ready(&self, n_rows: usize) -> bool {
        self.posterior_is_fresh() && !self.cavities_worth_refreshing(n_rows)
    }

    fn prepare(&mut self, n_rows: usize, pool: &ThreadPool) -> Result<()> {
        if self.cavities_worth_refreshing(n_rows) {
            self.ensure_cavities(pool)
        } else {
            self.ensure_posterior(pool)
        }
    }
}

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
/// the means spread about their centre (`ForestRegressor.scaled_mixtures`).
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

#[pymethods]
impl PyForestRegressor {
    /// A regression forest (the first four arguments and the last three as
    /// `forest::empty_forest` says). `prior_mean`, `gamma1`, `gamma2`: fixed
    /// hyper-parameters (None: heuristic); `noise_variance`: a number, "heuristic" (None) or
    /// "within_leaf"; `posterior`: "exact" or "fast"; cuts chosen by variance reduction.
    #[new]
    #[pyo3(signature = (n_features, lifetime, min_samples_split, seed, *, prior_mean=None, gamma1=None, gamma2=None, noise_variance=None, posterior="exact", scale_features=true, tries=1, locations=1))]
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
        tries: usize,
        locations: usize,
    ) -> PyResult<Self> {
        let noise_variance = noise_rule(noise_variance)?;
        let (forest, guidance) = empty_forest(
            n_features,
            lifetime,
            min_samples_split,
            seed,
            scale_features,
            tries,
            locations,
        )?;
        let mut model = ForestRegressor::new(forest);
        model.overrides = PriorOverrides {
            mean: prior_mean,
            gamma1,
            gamma2,
            noise_variance,
        };
        model.mode = PosteriorMode::named(posterior).map_err(to_py_err)?;
        model.guidance = guidance;
        Ok(Self {
            inner: Handle::new(model),
        })
    }

    /// Whether a regression posterior is up to date (false after `partial_fit`; predictions
    /// bring it up to date first).
    #[getter]
    fn posterior_is_fresh(&self, py: Python<'_>) -> bool {
        self.inner.peek(py, |model| model.is_ready(0))
    }

    /// Predictive mean and variance of the branch-off mixture at each row.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        n_jobs: usize,
    ) -> PyResult<VectorPair<'py>> {
        let x = x.view()?;
        let (mean, var) = self.ready(py, n_jobs, x.n_rows(), |m, pool| m.predict(&x, pool))?;
        Ok((mean.into_pyarray(py), var.into_pyarray(py)))
    }

    /// Quantiles `levels` of the predictive mixture at each row (N × L).
    fn quantiles<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        levels: Vec<f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.view()?;
        let out = self.ready(py, n_jobs, x.n_rows(), |m, pool| {
            m.quantiles(&x, &levels, pool)
        })?;
        Ok(out.into_pyarray(py))
    }

    /// The log density log p(y_i | x_i) under the predictive mixture.
    fn log_density<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        y: PyReadonlyArray1<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (x, y) = (x.view()?, y.as_array());
        let out = self.ready(py, n_jobs, x.n_rows(), |m, pool| {
            m.log_density(&x, &y, pool)
        })?;
        Ok(out.into_pyarray(py))
    }

    /// The predictive mixtures of rows `x` with targets `y` and weights
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
        let inner = self.ready(py, n_jobs, x.n_rows(), |m, pool| {
            m.scaled_mixtures(&x, y, weights, pool)
        })?;
        Ok(ScaledMixtures { inner })
    }

    /// The prior in use: `mean`, `gamma1`, `gamma2`, `noise_variance`.
    fn prior<'py>(&self, py: Python<'py>, n_jobs: usize) -> PyResult<Bound<'py, PyDict>> {
        let p = self.ready(py, n_jobs, 0, |m, _| m.prior())?;
        prior_dict(py, &p)
    }

    /// A criterion of the hyper-parameters on the first `n_trees` trees:
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
            Ok(model.prior_score(criterion, &prior, n_trees, call.pool))
        })
    }

    /// Fixes the prior's hyper-parameters (as if passed to the constructor) and
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
        self.inner.write(py, n_jobs, Length::Short, |model, call| {
            model.fix_prior(&prior, cavities, call.pool)
        })
    }

    /// The caller's fixed hyper-parameters (None: free) replace those in use, and
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
        let previous = self.inner.write(py, n_jobs, Length::Short, |model, call| {
            model.reset_prior(overrides, call.pool)
        })?;
        previous.map(|p| prior_dict(py, &p)).transpose()
    }

    /// ρ, the factor on the spread of the trees' predictive means about their
    /// average in the forest's predictive (1: the equal mixture over trees).
    #[getter]
    fn spread(&self, py: Python<'_>) -> f64 {
        self.inner.peek(py, |model| model.spread())
    }

    /// Sets ρ (finite, ≥ 0).
    fn set_spread(&self, py: Python<'_>, spread: f64) -> PyResult<()> {
        (self.inner).write(py, 1, Length::Short, |model, _| model.set_spread(spread))
    }

    /// The (weighted) population variance and total weight of the targets seen.
    fn target_moments(&self, py: Python<'_>) -> (f64, f64) {
        self.inner.peek(py, |model| model.target_moments())
    }

    /// Whether the rows have grown by `PRIOR_GROWTH` since the prior in use was
    /// chosen (the next prediction chooses it again by the heuristic; a caller with another
    /// rule chooses it now).
    #[getter]
    fn prior_is_due(&self, py: Python<'_>) -> bool {
        self.inner.peek(py, |model| model.prior_is_due())
    }

    /// The number of rows when the prior in use was chosen (it is chosen again
    /// once the rows have grown by `PRIOR_GROWTH`).
    #[getter]
    fn rows_at_prior_choice(&self, py: Python<'_>) -> usize {
        self.inner.peek(py, |model| model.rows_at_prior_choice())
    }

    /// Per node of tree `index`, the decrease in the training targets' sum of
    /// squared deviations its cut achieves (0 for leaves).
    fn impurity_decrease<'py>(
        &self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let out = (self.inner)
            .peek(py, |model| model.impurity_decrease(index))
            .map_err(to_py_err)?;
        Ok(out.into_pyarray(py))
    }

    /// Posterior mean and variance of every node mean of tree `index`.
    fn node_posterior<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        n_jobs: usize,
    ) -> PyResult<VectorPair<'py>> {
        let (mean, var): (Vec<f64>, Vec<f64>) = self.ready(py, n_jobs, usize::MAX, |m, _| {
            m.node_posteriors(index)
                .map(|p| p.into_iter().map(|g| (g.mean, g.var)).unzip())
        })?;
        Ok((mean.into_pyarray(py), var.into_pyarray(py)))
    }

    /// The running sums Σ w (mean − prior mean), Σ w (mean − prior mean)² and Σ w var of the
    /// predictive components at each row (N × 3), continued from `sums` with this forest's
    /// trees (a forest split into parts, `mondrian_learn.dask`).
    fn fold_moments<'py>(
        &self,
        py: Python<'py>,
        x: AnyPoints<'py>,
        sums: PyReadonlyArray2<'py, f64>,
        n_jobs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.view()?;
        let sums = sums.as_array();
        if sums.ncols() != 3 {
            return Err(to_py_err(Error::InvalidInput(format!(
                "moment sums need 3 columns, got {}",
                sums.ncols()
            ))));
        }
        let mut sums: Vec<MomentSums> = (sums.rows().into_iter())
            .map(|r| (r[0], r[1], r[2]))
            .collect();
        let sums = self.ready(py, n_jobs, x.n_rows(), |model, pool| {
            model.fold_moments(&x, pool, &mut sums)?;
            Ok(sums)
        })?;
        let flat: Vec<f64> = sums.into_iter().flat_map(|(a, b, c)| [a, b, c]).collect();
        Ok(super::arrays::to_array2(flat.len() / 3, 3, flat)?.into_pyarray(py))
    }
}
