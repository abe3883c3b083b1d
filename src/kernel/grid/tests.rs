//! The search against fits from scratch, move by move.

use super::*;
use crate::kernel::path::{PathOptions, SolverChoice, SolverUsed};
use crate::parallel::pool;
use crate::rng::{tree_rng, uniform};
use crate::testing::{assert_rel, regression_data};
use ndarray::ArrayView2;

/// Row-major values as a matrix of `d`-feature points.
fn rows(x: &[f64], d: usize) -> ArrayView2<'_, f64> {
    ArrayView2::from_shape((x.len() / d, d), x).expect("whole rows")
}

fn options(solver: SolverChoice) -> PathOptions {
    PathOptions {
        alpha: 0.05,
        solver,
        max_dense_features: 10_000,
        gradient_tol: 1e-14,
        gradient_max_iter: 100_000,
        record_weights: false,
    }
}

/// Training and validation rows in 3-D; the last feature takes 6 values only (ties between
/// points, cells with several points on one knot), and some validation rows lie on training
/// coordinates.
fn data() -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let (x, y) = regression_data(70, 3, 2);
    let (xv, yv) = regression_data(30, 3, 3);
    let quantise = |mut x: Vec<f64>| {
        x.iter_mut()
            .skip(2)
            .step_by(3)
            .for_each(|v| *v = (*v * 6.0).floor() / 6.0);
        x
    };
    let (x, mut xv) = (
        quantise(x.into_raw_vec_and_offset().0),
        quantise(xv.into_raw_vec_and_offset().0),
    );
    xv[..6].copy_from_slice(&x[..6]);
    (x, y.to_vec(), xv, yv.to_vec())
}

/// The ridge refitted from scratch at the search's lifetimes (rows weighted by `v`): its
/// weights per training row and grid, its (weighted) training error, and its validation
/// predictions.
fn from_scratch(
    search: &mut GridSearch,
    (x, y, v): (&[f64], &[f64], Option<&[f64]>),
    xv: &[f64],
    lifetimes: &[f64],
) -> (Vec<f64>, f64, Vec<f64>) {
    let p = pool(1).expect("pool");
    let dense = options(SolverChoice::Cholesky);
    let fresh = GridRidge::fit(&mut search.process, lifetimes, y, v, &dense, &p).expect("fit");
    let phi = fresh.transform(&rows(x, 3)).expect("features");
    let m = search.m();
    assert_eq!(
        phi.indices.len(),
        y.len() * m,
        "every training row in one cell per grid"
    );
    assert!(phi
        .data
        .iter()
        .all(|&v| (v - 1.0 / (m as f64).sqrt()).abs() < 1e-15));
    let row_weights = phi
        .indices
        .iter()
        .map(|&c| fresh.weights[c as usize])
        .collect();
    let fitted = fresh.predict(&rows(x, 3), &p).expect("predict");
    let weight = |i: usize| v.map_or(1.0, |v| v[i]);
    let train_mse = (fitted.iter().zip(y).enumerate())
        .map(|(i, (f, y))| weight(i) * (f - y).powi(2))
        .sum::<f64>()
        / (0..y.len()).map(weight).sum::<f64>();
    (
        row_weights,
        train_mse,
        fresh.predict(&rows(xv, 3), &p).expect("predict"),
    )
}

/// The search's training and validation errors against those from scratch, to `tol`.
fn assert_errors(point: &GridPoint, train_mse: f64, val_mse: f64, tol: f64) {
    assert!(
        (point.validation_mse - val_mse).abs() <= tol * val_mse,
        "{point:?}: validation {val_mse}"
    );
    assert!(
        (point.train_mse - train_mse).abs() <= tol * train_mse,
        "{point:?}: training {train_mse}"
    );
}

#[test]
fn every_move_equals_a_fit_from_scratch() {
    let (x, y, xv, yv) = data();
    let (xr, xvr) = (rows(&x, 3), rows(&xv, 3));
    let p = pool(1).expect("pool");
    for (solver, tol) in [
        (SolverChoice::Cholesky, 1e-8),
        (SolverChoice::Inverse, 1e-8),
        (SolverChoice::Gradient, 1e-7),
    ] {
        let mut search = GridSearch::new(&xr, &y, None, &xvr, &yv, None, 4, 11, options(solver))
            .expect("search");
        let mut rng = tree_rng(5, 0);
        let (mut adds, mut removes) = (0, 0);
        for step in 0..60 {
            let dim = step % 3;
            let now = search.active()[dim];
            // Mostly forward, sometimes back, by 1–3 cuts.
            let by = 1 + (uniform(&mut rng) * 3.0) as usize;
            let count = if uniform(&mut rng) < 0.3 {
                now.saturating_sub(by)
            } else {
                now + by
            };
            if !search.move_to(dim, count).expect("move") {
                continue;
            }
            if count > now {
                adds += 1;
            } else if count < now {
                removes += 1;
            }
            let point = search.evaluate(&p).expect("evaluate");
            let expected_solver = match solver {
                SolverChoice::Inverse => SolverUsed::Inverse,
                SolverChoice::Gradient => SolverUsed::Gradient,
                _ => SolverUsed::Cholesky,
            };
            assert_eq!(point.solver, expected_solver);
            let (weights, train_mse, predictions) =
                from_scratch(&mut search, (&x, &y, None), &xv, &point.lifetimes);
            assert_rel(&search.row_weights(), &weights, tol);
            let val_pred = search.validation_predictions();
            assert_rel(&val_pred, &predictions, tol);
            let val_mse = predictions
                .iter()
                .zip(&yv)
                .map(|(f, y)| (f - y).powi(2))
                .sum::<f64>()
                / yv.len() as f64;
            assert_errors(&point, train_mse, val_mse, tol);
        }
        assert!(adds > 20 && removes > 5, "{adds} adds, {removes} removes");
        assert!(search.active().iter().sum::<usize>() > 10);
    }
}

#[test]
fn weighted_moves_equal_a_weighted_fit_from_scratch() {
    // Row weights v: A = ΦᵀVΦ + αI, ȳ and the errors weighted (validation rows by their own).
    let (x, y, xv, yv) = data();
    let (xr, xvr) = (rows(&x, 3), rows(&xv, 3));
    let mut rng = tree_rng(9, 0);
    let v: Vec<f64> = (0..y.len())
        .map(|_| 0.2 + 3.0 * uniform(&mut rng))
        .collect();
    let vv: Vec<f64> = (0..yv.len())
        .map(|_| 0.1 + 2.0 * uniform(&mut rng))
        .collect();
    let p = pool(1).expect("pool");
    for (solver, tol) in [
        (SolverChoice::Cholesky, 1e-8),
        (SolverChoice::Gradient, 1e-7),
    ] {
        let (train, val) = ((&x[..], &y[..], Some(&v[..])), Some(&vv[..]));
        let mut search = GridSearch::new(
            &rows(train.0, 3),
            train.1,
            train.2,
            &xvr,
            &yv,
            val,
            4,
            11,
            options(solver),
        )
        .expect("search");
        for (dim, count) in [(0, 3), (1, 2), (0, 6), (2, 4), (0, 4)] {
            assert!(search.move_to(dim, count).expect("move"));
            let point = search.evaluate(&p).expect("evaluate");
            let (weights, train_mse, predictions) =
                from_scratch(&mut search, train, &xv, &point.lifetimes);
            assert_rel(&search.row_weights(), &weights, tol);
            let val_mse = (predictions.iter().zip(&yv).zip(&vv))
                .map(|((f, y), w)| w * (f - y).powi(2))
                .sum::<f64>()
                / vv.iter().sum::<f64>();
            assert_errors(&point, train_mse, val_mse, tol);
        }
    }
    let short = vec![1.0; y.len() - 1];
    let opts = options(SolverChoice::Cholesky);
    assert!(GridSearch::new(&xr, &y, Some(&short), &xvr, &yv, None, 4, 11, opts).is_err());
}

/// Equal bit for bit (NaN evidence equal to NaN), CG iterations aside: CG run on weights that
/// already solve the system stops at once.
fn assert_same(a: &GridPoint, b: &GridPoint) {
    assert_eq!(a.lifetimes, b.lifetimes);
    assert_eq!(a.n_features, b.n_features);
    assert_eq!(a.solver, b.solver);
    for (u, v) in [
        (a.train_mse, b.train_mse),
        (a.validation_mse, b.validation_mse),
        (a.log_evidence, b.log_evidence),
    ] {
        assert_eq!(u.to_bits(), v.to_bits(), "{a:?} vs {b:?}");
    }
}

#[test]
fn trial_moves_leave_the_state_exactly_as_it_was() {
    let (x, y, xv, yv) = data();
    let (xr, xvr) = (rows(&x, 3), rows(&xv, 3));
    let p = pool(1).expect("pool");
    for solver in [
        SolverChoice::Cholesky,
        SolverChoice::Inverse,
        SolverChoice::Gradient,
    ] {
        let mut search =
            GridSearch::new(&xr, &y, None, &xvr, &yv, None, 3, 4, options(solver)).expect("search");
        search.move_to(0, 6).expect("move");
        search.move_to(1, 4).expect("move");
        let before = search.evaluate(&p).expect("evaluate");
        let weights = search.row_weights();
        let tried = search.try_moves(1, &[5, 7, 2], &p).expect("trial");
        assert_same(&search.evaluate(&p).expect("evaluate"), &before);
        assert_eq!(search.row_weights(), weights);
        assert_eq!(tried.len(), 3);
        // Each trial equals the kept move; the first one bit for bit (the same operations),
        // the later ones, reached through the earlier trials, to rounding.
        for (k, (count, point)) in [5, 7, 2].into_iter().zip(&tried).enumerate() {
            let mut kept = GridSearch::new(&xr, &y, None, &xvr, &yv, None, 3, 4, options(solver))
                .expect("search");
            kept.move_to(0, 6).expect("move");
            kept.move_to(1, 4).expect("move");
            kept.evaluate(&p).expect("evaluate");
            kept.move_to(1, count).expect("move");
            let expected = kept.evaluate(&p).expect("evaluate");
            if k == 0 {
                assert_same(&expected, point);
            }
            assert_eq!(expected.lifetimes, point.lifetimes);
            assert_eq!(expected.n_features, point.n_features);
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
            assert!(
                close(point.validation_mse, expected.validation_mse),
                "{solver:?} {k}"
            );
            assert!(close(point.train_mse, expected.train_mse), "{solver:?} {k}");
        }
        // Beyond the last cut: the trial stops there.
        let huge = search.try_moves(2, &[1, 1_000_000], &p).expect("trial");
        assert_eq!(huge.len(), 1);
        assert!(!search.move_to(2, 1_000_000).expect("refused"));
    }
}

#[test]
fn the_dense_factor_hands_over_to_gradients_past_its_limit() {
    let (x, y, xv, yv) = data();
    let (xr, xvr) = (rows(&x, 3), rows(&xv, 3));
    let p = pool(1).expect("pool");
    let mut auto = options(SolverChoice::Auto);
    auto.max_dense_features = 20;
    let mut search = GridSearch::new(&xr, &y, None, &xvr, &yv, None, 4, 11, auto).expect("search");
    search.move_to(0, 12).expect("move");
    search.move_to(1, 12).expect("move");
    let point = search.evaluate(&p).expect("evaluate");
    assert!(point.n_features > 20, "{}", point.n_features);
    assert_eq!(point.solver, SolverUsed::Gradient);
    let (weights, _, _) = from_scratch(&mut search, (&x, &y, None), &xv, &point.lifetimes);
    assert_rel(&search.row_weights(), &weights, 1e-7);
    // A dense route asked for by name is refused past the limit, not grown without bound.
    let mut forced = options(SolverChoice::Cholesky);
    forced.max_dense_features = 20;
    let mut search =
        GridSearch::new(&xr, &y, None, &xvr, &yv, None, 4, 11, forced).expect("search");
    search.move_to(0, 12).expect("within the limit");
    let before = search.evaluate(&p).expect("evaluate");
    let refused = search.move_to(1, 12).expect_err("beyond the limit");
    assert!(format!("{refused}").contains("max_dense_features"));
    assert_eq!(search.evaluate(&p).expect("evaluate"), before); // as it was
}

#[test]
fn predictions_at_the_knots_need_no_unseen_cut_and_bad_input_is_refused() {
    let (x, y, xv, yv) = data();
    let (xr, xvr) = (rows(&x, 3), rows(&xv, 3));
    let p = pool(1).expect("pool");
    let mut search = GridSearch::new(
        &xr,
        &y,
        None,
        &xvr,
        &yv,
        None,
        2,
        1,
        options(SolverChoice::Cholesky),
    )
    .expect("search");
    search.move_to(0, 5).expect("move");
    let lifetimes = search.lifetimes();
    let model = GridRidge::fit(
        &mut search.process,
        &lifetimes,
        &y,
        None,
        &search.options,
        &p,
    )
    .expect("fit");
    assert!(model.is_consistent());
    let phi = model.transform(&xvr).expect("features");
    assert!(phi.data.iter().all(|&v| (v - 0.5f64.sqrt()).abs() < 1e-15));
    // A point beyond the range stays with the end cell with probability exp(−λ · distance).
    let mut far = x[..3].to_vec();
    far[1] = 5.0;
    let high = model.knots[1].last().copied().expect("knots");
    let far_phi = model.transform(&rows(&far, 3)).expect("features");
    let stay = (-lifetimes[1] * (5.0 - high)).exp();
    assert!(far_phi
        .data
        .iter()
        .all(|&v| (v - stay * 0.5f64.sqrt()).abs() < 1e-15));
    assert!(model.predict(&rows(&[0.0, f64::NAN, 0.0], 3), &p).is_err());
    assert!(model.predict(&rows(&[0.0, 0.0], 2), &p).is_err());
    assert!(GridRidge::fit(
        &mut search.process,
        &[1.0, -1.0, 0.0],
        &y,
        None,
        &search.options,
        &p
    )
    .is_err());
    assert!(GridSearch::new(
        &xr,
        &y[1..],
        None,
        &xvr,
        &yv,
        None,
        2,
        1,
        options(SolverChoice::Cholesky)
    )
    .is_err());
    assert!(search.move_to(3, 1).is_err());
    let mut broken = model.clone();
    broken.cuts[0].push(GridCut {
        gap: 0,
        tau: 1e9,
        location: 0.0,
    });
    assert!(!broken.is_consistent());
}
