use super::*;
use crate::forest::regression::belief::tree_posterior;
use crate::forest::regression::leaf_stats::LeafStats;
use crate::forest::MondrianForest;
use crate::mondrian::route::route;
use crate::mondrian::TreeParams;
use crate::parallel::{pool, Interrupt};
use crate::testing::{forest_on, growing, regression_data, uniform_array};

/// Trees [0, 3) and [3, 5) grown apart (offset streams) and folded in order give the
/// whole forest's predictive moments bit for bit.
#[test]
fn folding_parts_in_tree_order_is_the_whole_forests_prediction() {
    let (x, y) = regression_data(600, 3, 4);
    let p = pool(2).expect("pool");
    let interrupt = Interrupt::default();
    let fitted = |first: u64, n_trees: usize| {
        let params = TreeParams::new(f64::INFINITY, 3);
        let mut model = ForestRegressor::new(MondrianForest::new(params, 3, 7).expect("ok"));
        model.forest.offset_trees(first).expect("treeless");
        let how = growing(n_trees, &p, &interrupt);
        model
            .fit(&x.view(), &y.view(), None, &how, |_| Ok(()))
            .expect("fit");
        model
    };
    let whole = fitted(0, 5);
    let probes = uniform_array(40, 3, 9).mapv(|v| 1.5 * v - 0.2);
    let mut sums = vec![(0.0, 0.0, 0.0); probes.nrows()];
    for part in [fitted(0, 3), fitted(3, 2)] {
        part.fold_moments(&probes.view(), &p, &mut sums)
            .expect("fold");
    }
    let reference = whole.prior().expect("fresh").mean;
    let (mean, var) = whole.predict(&probes.view(), &p).expect("predict");
    for (i, &s) in sums.iter().enumerate() {
        assert_eq!(
            MomentsFold::resume(reference, s).finish(5, 1.0),
            (mean[i], var[i])
        );
    }
    assert!(whole
        .fold_moments(&probes.view(), &p, &mut sums[1..])
        .is_err());
}

/// A regressor of 4 trees (seeded `seed`) fitted on 400 rows of `regression_data(.., data)`.
fn four_trees_on(data: u64, seed: u64, p: &ThreadPool) -> ForestRegressor {
    let (x, y) = regression_data(400, 3, data);
    let interrupt = Interrupt::default();
    let params = TreeParams::new(f64::INFINITY, 3);
    let mut model = ForestRegressor::new(MondrianForest::new(params, 3, seed).expect("ok"));
    let how = growing(4, p, &interrupt);
    model
        .fit(&x.view(), &y.view(), None, &how, |_| Ok(()))
        .expect("fit");
    model
}

/// Log densities of rows routed once and kept equal those routed as they go, bit for bit;
/// other rows, or an update, route again.
#[test]
fn routed_rows_give_the_log_densities_of_rows_routed_as_they_go() {
    let p = pool(2).expect("pool");
    let mut model = four_trees_on(5, 7, &p);
    model.ensure_posterior(&p).expect("posterior");
    let probes = uniform_array(60, 3, 11).mapv(|v| 1.4 * v - 0.2);
    let targets = Array1::from_iter((0..60).map(|i| f64::from(i) / 30.0 - 1.0));
    let t = targets.as_slice().expect("contiguous");
    let direct = |model: &ForestRegressor, x: &Array2<f64>| {
        let routed = model.log_density_routed(&x.view(), t, None, &p);
        routed.expect("log density").to_vec()
    };
    for _ in 0..2 {
        let cached = model
            .log_density(&probes.view(), &targets.view(), &p)
            .expect("log density");
        assert_eq!(cached.to_vec(), direct(&model, &probes));
    }
    let moved = probes.mapv(|v| v + 0.05);
    let cached = model
        .log_density(&moved.view(), &targets.view(), &p)
        .expect("log density");
    assert_eq!(cached.to_vec(), direct(&model, &moved));
    model
        .partial_fit(&probes.view(), &targets.view(), None, &p)
        .expect("update");
    model.ensure_posterior(&p).expect("posterior");
    let cached = model
        .log_density(&moved.view(), &targets.view(), &p)
        .expect("log density");
    assert_eq!(cached.to_vec(), direct(&model, &moved));
}

/// The mixtures scored at scale c and spread ρ give the weighted log densities of the
/// forest whose γ₁ and σ_y² are c times larger and whose spread is ρ (to rounding), and
/// their gradient and Hessian in (log c, ρ) match central differences.
#[test]
fn scaled_mixtures_are_the_forest_with_scaled_variances() {
    let p = pool(2).expect("pool");
    let mut model = four_trees_on(6, 8, &p);
    let base = GaussianPrior::new(0.3, 0.8, 2.0, 0.02).expect("valid");
    model.fix_prior(&base, false, &p).expect("prior");
    let probes = uniform_array(50, 3, 12).mapv(|v| 1.6 * v - 0.3);
    let targets = Array1::from_iter((0..50).map(|i| f64::from(i) / 25.0 - 1.0));
    let weights: Vec<f64> = (0..50).map(|i| 1.0 + f64::from(i) / 50.0).collect();
    let t = targets.as_slice().expect("contiguous");
    let mixtures = model
        .scaled_mixtures(&probes.view(), t, &weights, &p)
        .expect("mixtures");
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * (1.0 + b.abs());
    for (scale, spread) in [(1.0_f64, 1.0), (3.5, 0.6), (0.2, 1.7)] {
        let scaled = GaussianPrior::new(0.3, 0.8 * scale, 2.0, 0.02 * scale).expect("valid");
        model.fix_prior(&scaled, true, &p).expect("prior");
        model.set_spread(spread).expect("spread");
        let direct = model
            .log_density(&probes.view(), &targets.view(), &p)
            .expect("log density");
        let direct: f64 = direct.iter().zip(&weights).map(|(d, w)| d * w).sum();
        let at = |c: f64, r: f64| mixtures.score(c, r);
        let (c, h) = (scale.ln(), 1e-5);
        let score = at(c, spread);
        assert!(
            close(score.value, direct, 1e-12),
            "{} vs {direct}",
            score.value
        );
        let (up_c, down_c) = (at(c + h, spread), at(c - h, spread));
        let (up_r, down_r) = (at(c, spread + h), at(c, spread - h));
        let numeric = [
            (score.gradient[0], (up_c.value - down_c.value) / (2.0 * h)),
            (score.gradient[1], (up_r.value - down_r.value) / (2.0 * h)),
            (
                score.hessian[0],
                (up_c.gradient[0] - down_c.gradient[0]) / (2.0 * h),
            ),
            (
                score.hessian[1],
                (up_r.gradient[0] - down_r.gradient[0]) / (2.0 * h),
            ),
            (
                score.hessian[1],
                (up_c.gradient[1] - down_c.gradient[1]) / (2.0 * h),
            ),
            (
                score.hessian[2],
                (up_r.gradient[1] - down_r.gradient[1]) / (2.0 * h),
            ),
        ];
        for (exact, by_difference) in numeric {
            assert!(
                close(exact, by_difference, 1e-6),
                "{exact} vs {by_difference}"
            );
        }
    }
    assert!(ScaledMixtures::new(&[Vec::new()], &[0.0, 1.0], &[1.0], 1).is_err());
}

/// Every tree's predictive is a probability mixture of proper Gaussians: weights sum to 1
/// for points inside, near and far from the data, with finite and infinite lifetimes.
#[test]
fn tree_mixtures_are_distributions() {
    let x = uniform_array(300, 3, 21);
    let prior = GaussianPrior::new(0.5, 2.0, 0.3, 0.01).expect("valid");
    let probes = uniform_array(50, 3, 22).mapv(|v| 3.0 * v - 1.0);
    for lifetime in [f64::INFINITY, 3.0, 0.0] {
        let f = forest_on(&x, TreeParams::new(lifetime, 5), 4, 9);
        for tree in &f.trees {
            let leaves = LeafStats {
                weight: tree.nodes.iter().map(|n| f64::from(n.n_samples)).collect(),
                sum: vec![1.0; tree.n_nodes()],
                centred_squares: vec![0.0; tree.n_nodes()],
            };
            let post = tree_posterior(tree, &leaves, &prior);
            for row in probes.rows().into_iter().chain(x.rows()) {
                let point = row.to_vec();
                let mut scratch = RouteScratch::default();
                route(tree, &point, f64::INFINITY, &mut scratch);
                let (mut comps, mut cavities) = (Vec::new(), Vec::new());
                path_cavities(tree, &post, &prior, &scratch.path, &mut cavities);
                tree_components(
                    tree, &post, &prior, lifetime, &scratch, &cavities, &mut comps,
                );
                let total: f64 = comps.iter().map(|c| c.weight).sum();
                assert!((total - 1.0).abs() < 1e-12, "weights sum to {total}");
                assert!(comps.iter().all(|c| c.var > 0.0 && c.mean.is_finite()));
            }
        }
    }
}
