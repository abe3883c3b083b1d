//! Exactness of the kernel models against from-scratch computations.

use super::features::{transform, FeatureMap};
use super::path::{lifetime_path, Checkpoints, PathOptions, SolverChoice};
use super::path_solver::SolverUsed;
use super::ridge::KernelRidge;
use crate::forest::MondrianForest;
use crate::parallel::pool;
use crate::rng::{tree_rng, uniform};
use crate::tree::TreeParams;
use ndarray::{Array1, Array2};

fn data(n: usize, d: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
    let mut rng = tree_rng(seed, 0);
    let x = Array2::from_shape_fn((n, d), |_| uniform(&mut rng));
    let y = x
        .rows()
        .into_iter()
        .map(|r| (3.0 * r[0]).sin() + r.sum() + 0.1 * uniform(&mut rng))
        .collect();
    (x, y)
}

fn forest(x: &Array2<f64>, trees: usize, lifetime: f64, seed: u64) -> MondrianForest {
    let mut f = MondrianForest::new(
        TreeParams::new(lifetime, 1).expect("valid"),
        x.ncols(),
        seed,
    )
    .expect("valid");
    f.add_points(&x.view()).expect("finite");
    f.grow_trees(trees, &pool(2).expect("pool"));
    f
}

/// Dense solve of (ΦᵀΦ + αI) w = Φᵀ(y − ȳ) by Gaussian elimination with partial pivoting;
/// returns (w, log det A).
fn dense_ridge(phi: &[f64], n: usize, c: usize, y: &[f64], alpha: f64) -> (Vec<f64>, f64) {
    let mean = y.iter().sum::<f64>() / n as f64;
    let mut a = vec![0.0; c * (c + 1)];
    for i in 0..c {
        for j in 0..c {
            a[i * (c + 1) + j] = (0..n).map(|k| phi[k * c + i] * phi[k * c + j]).sum::<f64>();
        }
        a[i * (c + 1) + i] += alpha;
        a[i * (c + 1) + c] = (0..n).map(|k| phi[k * c + i] * (y[k] - mean)).sum::<f64>();
    }
    let w = c + 1;
    let mut log_det = 0.0;
    for col in 0..c {
        let piv = (col..c)
            .max_by(|&p, &q| a[p * w + col].abs().total_cmp(&a[q * w + col].abs()))
            .expect("rows");
        for k in 0..w {
            a.swap(col * w + k, piv * w + k);
        }
        let d = a[col * w + col];
        log_det += d.abs().ln();
        for row in col + 1..c {
            let f = a[row * w + col] / d;
            for k in col..w {
                a[row * w + k] -= f * a[col * w + k];
            }
        }
    }
    let mut x = vec![0.0; c];
    for row in (0..c).rev() {
        let s: f64 = (row + 1..c).map(|k| a[row * w + k] * x[k]).sum();
        x[row] = (a[row * w + c] - s) / a[row * w + row];
    }
    (x, log_det)
}

/// |a − b| ≤ tol · max|b| + 1e-12 elementwise (the absolute floor covers exact zeros, such
/// as the weights at λ = 0, where every tree is one cell and the centred targets sum to 0).
fn assert_rel(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (x, y) in a.iter().zip(b) {
        assert!(
            (x - y).abs() <= tol * scale + 1e-12,
            "{x} vs {y} (scale {scale})"
        );
    }
}

#[test]
fn ridge_equals_dense_solve_and_predicts_with_features() {
    let (x, y) = data(80, 2, 1);
    let p = pool(2).expect("pool");
    let f = forest(&x, 4, 3.0, 7);
    let map = FeatureMap::new(&f.trees, 3.0).expect("valid");
    let phi = transform(&f.trees, &map, f.points(), 2, &p)
        .expect("csr")
        .to_dense();
    let model = KernelRidge::from_forest(f, 3.0, 1e-3, &y.view(), &p).expect("fit");
    let c = model.n_columns();
    let (w, log_det) = dense_ridge(&phi, 80, c, y.as_slice().expect("contiguous"), 1e-3);
    assert_rel(model.weights().0, &w, 1e-9);
    assert!((model.log_det() - log_det).abs() < 1e-9 * log_det.abs());
    // predictions on the training points = ȳ + Φw
    let pred = model.predict(&x.view(), &p).expect("predict");
    let mean = y.mean().expect("rows");
    let direct: Vec<f64> = (0..80)
        .map(|i| mean + (0..c).map(|j| phi[i * c + j] * w[j]).sum::<f64>())
        .collect();
    assert_rel(pred.as_slice().expect("contiguous"), &direct, 1e-9);
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
    let (x, y) = data(70, 3, 2);
    let (xv, yv) = data(30, 3, 3);
    let xv = xv.mapv(|v| 1.3 * v - 0.15); // some validation points outside the box
    let p = pool(1).expect("pool");
    let max_lifetime = 4.0;
    let f = forest(&x, 3, max_lifetime, 11);
    let mut runs = Vec::new();
    for solver in [SolverChoice::Cholesky, SolverChoice::Inverse] {
        let path = lifetime_path(
            &f,
            &y.view(),
            Some((&xv.view(), &yv.view())),
            max_lifetime,
            &Checkpoints::EveryCut,
            &options(solver),
            |_, _| Ok(()),
        )
        .expect("path");
        assert!(path.len() > 20, "only {} steps", path.len());
        for point in &path {
            let fresh = KernelRidge::from_forest(f.clone(), point.lifetime, 1e-2, &y.view(), &p)
                .expect("fit");
            assert_eq!(point.n_features, fresh.n_columns());
            let w = point.weights.as_ref().expect("recorded");
            assert_rel(w, fresh.weights().0, 1e-8);
            assert!(
                (point.log_det - fresh.log_det()).abs() <= 1e-8 * fresh.log_det().abs().max(1.0)
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
fn gradient_route_reaches_the_exact_weights_and_auto_switches() {
    let (x, y) = data(60, 2, 4);
    let f = forest(&x, 3, 3.0, 5);
    let run = |opts: &PathOptions| {
        lifetime_path(
            &f,
            &y.view(),
            None,
            3.0,
            &Checkpoints::Count(6),
            opts,
            |_, _| Ok(()),
        )
        .expect("path")
    };
    let exact = run(&options(SolverChoice::Cholesky));
    let gradient = run(&options(SolverChoice::Gradient));
    let mut auto = options(SolverChoice::Auto);
    auto.max_dense_features = exact[3].n_features;
    let switched = run(&auto);
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

#[test]
fn online_updates_equal_a_batch_fit_on_the_same_trees() {
    let (x, y) = data(150, 2, 6);
    let p = pool(2).expect("pool");
    for lifetime in [2.0, 6.0] {
        let f = forest(&x.slice(ndarray::s![..40, ..]).to_owned(), 5, lifetime, 9);
        let mut model =
            KernelRidge::from_forest(f, lifetime, 1e-2, &y.slice(ndarray::s![..40]), &p)
                .expect("fit");
        for (a, b) in [(40, 41), (41, 90), (90, 150)] {
            model
                .partial_fit(
                    &x.slice(ndarray::s![a..b, ..]),
                    &y.slice(ndarray::s![a..b]),
                    &p,
                )
                .expect("update");
        }
        let batch = KernelRidge::from_forest(model.forest.clone(), lifetime, 1e-2, &y.view(), &p)
            .expect("fit");
        assert_eq!(model.n_columns(), batch.n_columns());
        // Same columns (by tree and node), same weights.
        let (w, owners) = model.weights();
        let mut online: Vec<((u32, u32), f64)> =
            owners.iter().copied().zip(w.iter().copied()).collect();
        online.sort_by_key(|&(o, _)| o);
        let (wb, ob) = batch.weights();
        assert_eq!(
            online.iter().map(|&(o, _)| o).collect::<Vec<_>>(),
            ob.to_vec()
        );
        assert_rel(
            &online.iter().map(|&(_, w)| w).collect::<Vec<_>>(),
            wb,
            1e-8,
        );
        assert!((model.log_det() - batch.log_det()).abs() < 1e-8 * batch.log_det().abs());
        let (xt, _) = data(50, 2, 8);
        let xt = xt.mapv(|v| 2.0 * v - 0.5);
        let a = model.predict(&xt.view(), &p).expect("predict");
        let b = batch.predict(&xt.view(), &p).expect("predict");
        assert_rel(a.as_slice().expect("c"), b.as_slice().expect("c"), 1e-8);
    }
}

#[test]
fn online_handles_duplicates_that_resume_splitting() {
    // All first points equal: every tree is one paused leaf; the next points make it split.
    let x0 = Array2::from_elem((5, 2), 0.5);
    let y0 = Array1::from_elem(5, 1.0);
    let p = pool(1).expect("pool");
    let f = forest(&x0, 4, 5.0, 3);
    let mut model = KernelRidge::from_forest(f, 5.0, 1e-2, &y0.view(), &p).expect("fit");
    assert_eq!(model.n_columns(), 4);
    let (x1, y1) = data(30, 2, 12);
    model
        .partial_fit(&x1.view(), &y1.view(), &p)
        .expect("update");
    assert!(model.n_columns() > 4);
    let y_all = ndarray::concatenate![ndarray::Axis(0), y0, y1];
    let batch =
        KernelRidge::from_forest(model.forest.clone(), 5.0, 1e-2, &y_all.view(), &p).expect("fit");
    let a = model.predict(&x1.view(), &p).expect("predict");
    let b = batch.predict(&x1.view(), &p).expect("predict");
    assert_rel(a.as_slice().expect("c"), b.as_slice().expect("c"), 1e-8);
}
