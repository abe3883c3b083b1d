//! The lifetime path (Balog et al., UAI 2016 §4; Balog's report §4.2, appendix D): sweep λ
//! from 0 to Λ through every cut of every tree in birth-time order. At λ = 0 each tree is one
//! cell (Φ is N × M with every entry 1/√M); each cut replaces one feature column by its two
//! children ([`sweep`]; the active columns, in the solver's order, in [`columns`]). The ridge
//! solution follows in O(C²) per cut ([`solver`]), and at each checkpoint ([`evaluate`]) the
//! path records training and validation error ([`held_out`]) and the log marginal likelihood
//! (`ridge.rs`) at a cost of one back substitution plus O((N + N_val) M).
//!
//! A checkpoint after the k-th cut describes the model on [τ_k, τ_{k+1}); it is evaluated at
//! λ = τ_k (or at the requested λ), which is what the validation points' stay probabilities use.
//!
//! Row weights (`sample_weight`, the kernel ridge's meaning, [`weights`]) weight every sum:
//! A = ΦᵀVΦ + αI, ΦᵀV(y − ȳ), ȳ, the training error and the log evidence; validation rows
//! weigh in their error by their own weights.

pub mod columns;
pub mod evaluate;
pub mod held_out;
pub mod solver;
pub mod sweep;
pub mod weights;

use crate::error::{string_options, Error, Result};
use crate::forest::MondrianForest;
use crate::mondrian::birth_order::cuts_in_birth_order;
pub use crate::mondrian::birth_order::Checkpoints;
use crate::parallel::Interrupt;
use crate::points::Points;
use crate::training_data::check_targets;
use held_out::ValidationPaths;
use ndarray::ArrayView1;
use rayon::ThreadPool;
pub use solver::SolverUsed;
use sweep::Sweep;
use weights::Weights;

/// Which solver the path uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolverChoice {
    /// Cholesky while C ≤ `max_dense_features`, then the gradient route.
    Auto,
    Cholesky,
    Inverse,
    Gradient,
}

/// Settings of the path.
#[derive(Debug, Clone)]
pub struct PathOptions {
    pub alpha: f64,
    pub solver: SolverChoice,
    pub max_dense_features: usize,
    /// Conjugate gradients stop when ‖Φᵀy − Aw‖ ≤ tol · ‖Φᵀy‖ or after `gradient_max_iter`.
    pub gradient_tol: f64,
    pub gradient_max_iter: usize,
    /// Keep every checkpoint's weights (tests and small problems).
    pub record_weights: bool,
}

/// One evaluated point of the path.
#[derive(Debug, Clone, PartialEq)]
pub struct PathPoint {
    pub lifetime: f64,
    pub n_cuts: usize,
    pub n_features: usize,
    pub train_mse: f64,
    /// NaN without validation data.
    pub validation_mse: f64,
    /// NaN for the gradient route (it has no determinant).
    pub log_evidence: f64,
    pub log_det: f64,
    pub solver: SolverUsed,
    pub cg_iterations: usize,
    /// The weights in the column order of the features at this lifetime (tree, then node).
    pub weights: Option<Vec<f64>>,
}

string_options!(SolverChoice, "solver", [
    "auto" => Auto,
    "cholesky" => Cholesky,
    "inverse" => Inverse,
    "gradient" => Gradient,
]);

impl PathOptions {
    /// Whether `c` columns are solved by a dense factor.
    pub(crate) fn is_dense(&self, c: usize) -> bool {
        match self.solver {
            SolverChoice::Auto => c <= self.max_dense_features,
            SolverChoice::Cholesky | SolverChoice::Inverse => true,
            SolverChoice::Gradient => false,
        }
    }
}

/// Validation rows, their targets and their weights (None: all 1).
pub type Validation<'a> = (
    &'a dyn Points,
    &'a ArrayView1<'a, f64>,
    Option<&'a ArrayView1<'a, f64>>,
);

/// Runs the path on `forest` (trees sampled on the training points with lifetime ≥
/// `max_lifetime`) with training targets `y`, their row weights `weights` (None: all 1) and
/// optional validation data, calling `progress(cuts_done, n_cuts)` at each checkpoint;
/// `interrupt` stops it between cuts.
#[allow(clippy::too_many_arguments)]
pub fn lifetime_path(
    forest: &MondrianForest,
    y: &ArrayView1<f64>,
    weights: Option<&ArrayView1<f64>>,
    validation: Option<Validation<'_>>,
    max_lifetime: f64,
    checkpoints: &Checkpoints,
    options: &PathOptions,
    pool: &ThreadPool,
    interrupt: &Interrupt,
    mut progress: impl FnMut(usize, usize) -> Result<()>,
) -> Result<Vec<PathPoint>> {
    forest.check_fitted()?;
    check_targets(forest.n_rows(), y)?;
    if !(max_lifetime >= 0.0 && max_lifetime <= forest.params.lifetime) {
        return Err(Error::InvalidParameter {
            name: "max_lifetime",
            reason: format!(
                "must lie in [0, {}] (the trees' lifetime), got {max_lifetime}",
                forest.params.lifetime
            ),
        });
    }
    let weights = Weights::new(forest.n_rows(), weights)?;
    let trees = &forest.trees;
    let mut validation = match validation {
        Some((x, yv, wv)) => {
            forest.check_points(&x)?;
            check_targets(x.n_rows(), yv)?;
            let val_weights = Weights::new(x.n_rows(), wv)?;
            let paths = ValidationPaths::new(trees, x, &yv.to_vec());
            Some((paths, val_weights))
        }
        None => None,
    };
    let events = cuts_in_birth_order(trees, max_lifetime);
    let plan = checkpoints.plan(&events, max_lifetime)?;
    let last_cut = plan.last().map_or(0, |p| p.0);
    let y_flat = y.to_vec();
    let mean = weights.mean(&y_flat, || y.sum() / forest.n_rows() as f64);
    let yc: Vec<f64> = y.iter().map(|v| v - mean).collect();
    let mut sweep = Sweep::new(trees, yc, weights, last_cut, options)?;
    let mut points = Vec::with_capacity(plan.len());
    let mut weights: Vec<f64> = Vec::new();
    let mut plan_at = 0;
    for k in 0..=last_cut {
        if k > 0 {
            interrupt.check()?;
            sweep.cut(events[k - 1])?;
        }
        while plan_at < plan.len() && plan[plan_at].0 == k {
            let lifetime = plan[plan_at].1;
            let point = sweep.evaluate(&mut weights, pool)?;
            let validation_mse = match validation.as_mut() {
                Some((v, val_weights)) => {
                    let pred =
                        v.predict(lifetime, mean, |t, node| weights[sweep.position(t, node)]);
                    val_weights.mean_squared_error(&pred, &v.y)
                }
                None => f64::NAN,
            };
            let recorded = options
                .record_weights
                .then(|| sweep.weights_by_feature(&weights));
            points.push(PathPoint {
                lifetime,
                n_cuts: k,
                validation_mse,
                weights: recorded,
                ..point
            });
            plan_at += 1;
            progress(k, last_cut)?;
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ridge::KernelRidge;
    use crate::parallel::pool;
    use crate::testing::{assert_rel, kernel_forest, regression_data};

    /// The path on one thread, without interruption or progress.
    fn run(
        f: &MondrianForest,
        y: &ndarray::Array1<f64>,
        weights: Option<&ArrayView1<f64>>,
        validation: Option<Validation<'_>>,
        max_lifetime: f64,
        checkpoints: &Checkpoints,
        options: &PathOptions,
    ) -> Result<Vec<PathPoint>> {
        let p = pool(1)?;
        let interrupt = Interrupt::default();
        lifetime_path(
            f,
            &y.view(),
            weights,
            validation,
            max_lifetime,
            checkpoints,
            options,
            &p,
            &interrupt,
            |_, _| Ok(()),
        )
    }

    fn options(solver: SolverChoice) -> PathOptions {
        PathOptions {
            alpha: 1e-2,
            solver,
            max_dense_features: 10_000,
            gradient_tol: 1e-12,
            gradient_max_iter: 10_000,
            record_weights: true,
        }
    }

    #[test]
    fn every_path_step_equals_a_fit_from_scratch() {
        let (x, y) = regression_data(70, 3, 2);
        let (xv, yv) = regression_data(30, 3, 3);
        let xv = xv.mapv(|v| 1.3 * v - 0.15); // some validation points outside the box
        let p = pool(1).expect("pool");
        let max_lifetime = 4.0;
        let f = kernel_forest(&x, 3, max_lifetime, 11);
        let mut runs = Vec::new();
        for solver in [SolverChoice::Cholesky, SolverChoice::Inverse] {
            let xv = xv.view();
            let validation = Some((&xv as &dyn Points, &yv.view(), None));
            let path = run(
                &f,
                &y,
                None,
                validation,
                max_lifetime,
                &Checkpoints::EveryCut,
                &options(solver),
            )
            .expect("path");
            assert!(path.len() > 20, "only {} steps", path.len());
            for point in &path {
                let fresh =
                    KernelRidge::from_forest(f.clone(), point.lifetime, 1e-2, &y.view(), &p)
                        .expect("fit");
                assert_eq!(point.n_features, fresh.n_columns());
                let w = point.weights.as_ref().expect("recorded");
                assert_rel(w, fresh.weights().0, 1e-8);
                assert!(
                    (point.log_det - fresh.log_det()).abs()
                        <= 1e-8 * fresh.log_det().abs().max(1.0)
                );
                let evidence = fresh.log_marginal_likelihood();
                assert!((point.log_evidence - evidence).abs() <= 1e-8 * evidence.abs());
                let pred_v = fresh.predict(&xv.view(), &p).expect("predict");
                let mse_v = (&pred_v - &yv).mapv(|e| e * e).mean().expect("rows");
                assert!((point.validation_mse - mse_v).abs() <= 1e-8 * mse_v);
                let pred_t = fresh.predict(&x.view(), &p).expect("predict");
                let mse_t = (&pred_t - &y).mapv(|e| e * e).mean().expect("rows");
                assert!((point.train_mse - mse_t).abs() <= 1e-8 * mse_t.max(1e-12));
            }
            runs.push(path);
        }
        for (a, b) in runs[0].iter().zip(&runs[1]) {
            assert_eq!(a.solver, SolverUsed::Cholesky);
            assert_eq!(b.solver, SolverUsed::Inverse);
            assert_rel(
                b.weights.as_ref().expect("w"),
                a.weights.as_ref().expect("w"),
                1e-8,
            );
        }
    }

    #[test]
    fn the_weighted_path_equals_a_weighted_fit_from_scratch_at_every_step() {
        // Row weights v: A = ΦᵀVΦ + αI, ȳ and the errors weighted, the evidence with
        // ½ Σ log v; the validation error weighs its rows by their own weights.
        let (x, y) = regression_data(60, 3, 6);
        let (xv, yv) = regression_data(25, 3, 7);
        let mut rng = crate::rng::tree_rng(8, 0);
        let w = ndarray::Array1::from_shape_fn(60, |_| 0.2 + 3.0 * crate::rng::uniform(&mut rng));
        let wv = ndarray::Array1::from_shape_fn(25, |_| 0.1 + 2.0 * crate::rng::uniform(&mut rng));
        let p = pool(1).expect("pool");
        let f = kernel_forest(&x, 3, 4.0, 12);
        for (solver, tol) in [
            (SolverChoice::Cholesky, 1e-8),
            (SolverChoice::Inverse, 1e-8),
            (SolverChoice::Gradient, 1e-6),
        ] {
            let xv = xv.view();
            let validation = Some((&xv as &dyn Points, &yv.view(), Some(&wv.view())));
            let path = run(
                &f,
                &y,
                Some(&w.view()),
                validation,
                4.0,
                &Checkpoints::EveryCut,
                &options(solver),
            )
            .expect("path");
            assert!(path.len() > 20, "only {} steps", path.len());
            for point in &path {
                let fresh = KernelRidge::from_forest_weighted(
                    f.clone(),
                    point.lifetime,
                    1e-2,
                    &y.view(),
                    Some(&w.view()),
                    &p,
                )
                .expect("fit");
                assert_rel(point.weights.as_ref().expect("w"), fresh.weights().0, tol);
                let weighted_mse = |pred: ndarray::Array1<f64>,
                                    y: &ndarray::Array1<f64>,
                                    v: &ndarray::Array1<f64>| {
                    ((&pred - y).mapv(|e| e * e) * v).sum() / v.sum()
                };
                let mse_v = weighted_mse(fresh.predict(&xv.view(), &p).expect("predict"), &yv, &wv);
                assert!(
                    (point.validation_mse - mse_v).abs() <= tol * mse_v,
                    "{solver:?}"
                );
                let mse_t = weighted_mse(fresh.predict(&x.view(), &p).expect("predict"), &y, &w);
                assert!(
                    (point.train_mse - mse_t).abs() <= tol * mse_t.max(1e-12),
                    "{solver:?}"
                );
                if solver != SolverChoice::Gradient {
                    let evidence = fresh.log_marginal_likelihood();
                    assert!((point.log_evidence - evidence).abs() <= 1e-8 * evidence.abs());
                    assert!(
                        (point.log_det - fresh.log_det()).abs() <= 1e-8 * fresh.log_det().abs()
                    );
                }
            }
        }
        let cholesky = options(SolverChoice::Cholesky);
        for bad in [ndarray::Array1::from_elem(59, 1.0), w.mapv(|v| -v)] {
            let checkpoints = Checkpoints::Count(3);
            assert!(run(
                &f,
                &y,
                Some(&bad.view()),
                None,
                4.0,
                &checkpoints,
                &cholesky
            )
            .is_err());
        }
    }

    #[test]
    fn gradient_route_reaches_the_exact_weights_and_auto_switches() {
        let (x, y) = regression_data(60, 2, 4);
        let f = kernel_forest(&x, 3, 3.0, 5);
        let along = |opts: &PathOptions| {
            run(&f, &y, None, None, 3.0, &Checkpoints::Count(6), opts).expect("path")
        };
        let exact = along(&options(SolverChoice::Cholesky));
        let gradient = along(&options(SolverChoice::Gradient));
        let mut auto = options(SolverChoice::Auto);
        auto.max_dense_features = exact[3].n_features;
        let switched = along(&auto);
        for ((e, g), s) in exact.iter().zip(&gradient).zip(&switched) {
            assert_eq!(g.solver, SolverUsed::Gradient);
            assert_rel(
                g.weights.as_ref().expect("w"),
                e.weights.as_ref().expect("w"),
                1e-6,
            );
            let expected = if e.n_features <= auto.max_dense_features {
                SolverUsed::Cholesky
            } else {
                SolverUsed::Gradient
            };
            assert_eq!(s.solver, expected);
            assert_rel(
                s.weights.as_ref().expect("w"),
                e.weights.as_ref().expect("w"),
                1e-6,
            );
            assert!(g.log_evidence.is_nan());
        }
        assert!(switched.iter().any(|s| s.solver == SolverUsed::Gradient));
    }
}
