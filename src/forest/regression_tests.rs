//! The online posterior: the fast mode's path update is exact where it claims to be.

use super::*;
use crate::forest::hyperparameters::NoiseVar;
use crate::forest::posterior::Gaussian;
use crate::parallel::pool;
use crate::rng::{tree_rng, uniform};
use crate::tree::TreeParams;
use ndarray::{Array1, Array2};

fn data(n: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
    let mut rng = tree_rng(seed, 7);
    let x = Array2::from_shape_fn((n, 3), |_| uniform(&mut rng));
    let y = x
        .rows()
        .into_iter()
        .map(|r| (6.0 * r[0]).sin() + r[1] + 0.1 * uniform(&mut rng))
        .collect();
    (x, y)
}

fn close(a: Gaussian, b: Gaussian) -> bool {
    let tol = |u: f64, v: f64| (u - v).abs() <= 1e-12 * (1.0 + u.abs().max(v.abs()));
    tol(a.mean, b.mean) && tol(a.var, b.var)
}

/// Fixed hyper-parameters, so that the frozen prior of the fast mode and a full pass agree.
fn regressor(mode: PosteriorMode) -> ForestRegressor {
    let params = TreeParams::new(f64::INFINITY, 5).expect("valid");
    let forest = MondrianForest::new(params, 3, 11).expect("valid");
    let mut model = ForestRegressor::new(forest);
    model.overrides = PriorOverrides {
        mean: Some(0.3),
        gamma1: Some(1.5),
        gamma2: Some(0.8),
        noise_var: NoiseVar::Fixed(0.02),
    };
    model.mode = mode;
    model
}

#[test]
fn fast_update_is_exact_below_and_on_the_new_points_paths() {
    let (x, y) = data(1300, 3);
    let p = pool(2).expect("pool");
    let mut model = regressor(PosteriorMode::Fast);
    let (x0, y0) = (
        x.slice(ndarray::s![..1000, ..]),
        y.slice(ndarray::s![..1000]),
    );
    model.fit(&x0, &y0, 4, 4, &p, |_| Ok(())).expect("fit");
    let prior = model.prior().expect("fresh");
    let mut off_path_gap: f64 = 0.0;
    for i in 1000..1300 {
        let (xi, yi) = (
            x.slice(ndarray::s![i..i + 1, ..]),
            y.slice(ndarray::s![i..i + 1]),
        );
        model.partial_fit(&xi, &yi, &p).expect("update");
        assert!(
            model.posterior_is_fresh(),
            "fast mode keeps a usable posterior"
        );
        let row: Vec<f64> = xi.iter().copied().collect();
        for (t, tree) in model.forest.trees.iter().enumerate() {
            let exact = tree_posterior(tree, &model.leaf_stats[t].sum, &prior);
            let fast = &model.posteriors[t];
            for j in 0..tree.n_nodes() {
                assert!(
                    close(fast.messages[j].from_below, exact.messages[j].from_below),
                    "from_below {j}"
                );
            }
            let mut j = tree.leaf_of(&row);
            while j != crate::tree::NONE {
                let ju = j as usize;
                assert!(
                    close(
                        fast.posterior(tree, &prior, j),
                        exact.posterior(tree, &prior, j)
                    ),
                    "on-path node {j}"
                );
                assert!(close(fast.messages[ju].cavity, exact.messages[ju].cavity));
                j = tree.parent[ju];
            }
            for j in 0..tree.n_nodes() {
                off_path_gap = off_path_gap.max(
                    (fast.posterior(tree, &prior, j as u32).mean
                        - exact.posterior(tree, &prior, j as u32).mean)
                        .abs(),
                );
            }
        }
    }
    // Off the paths the messages are stale: the approximation is real (its effect on
    // predictions is measured in benches/bench_online_posterior.py, not asserted here).
    assert!(
        off_path_gap > 0.0 && off_path_gap.is_finite(),
        "{off_path_gap}"
    );
}

#[test]
fn fast_mode_runs_a_full_pass_when_the_data_doubles() {
    let (x, y) = data(900, 5);
    let p = pool(1).expect("pool");
    let mut fast = regressor(PosteriorMode::Fast);
    let mut exact = regressor(PosteriorMode::Exact);
    for model in [&mut fast, &mut exact] {
        let (x0, y0) = (x.slice(ndarray::s![..400, ..]), y.slice(ndarray::s![..400]));
        model.fit(&x0, &y0, 3, 3, &p, |_| Ok(())).expect("fit");
        for start in (400..900).step_by(100) {
            let (xs, ys) = (
                x.slice(ndarray::s![start..start + 100, ..]),
                y.slice(ndarray::s![start..start + 100]),
            );
            model.partial_fit(&xs, &ys, &p).expect("update");
        }
    }
    // 900 ≥ 2 · 400: the last update left the fast model stale, so it is recomputed exactly.
    assert!(!fast.posterior_is_fresh());
    fast.ensure_posterior(&p).expect("pass");
    exact.ensure_posterior(&p).expect("pass");
    let probes = data(50, 9).0;
    let (mf, vf) = fast.predict(&probes.view(), &p).expect("predict");
    let (me, ve) = exact.predict(&probes.view(), &p).expect("predict");
    assert_eq!(mf, me);
    assert_eq!(vf, ve);
}
