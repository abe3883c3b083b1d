//! Cost of the exact posterior in a forest fit (issue 3's goal: fit with full posterior
//! ≤ 1.5× the plain fit of issue 2): times, in one run, the plain fit — sampling 10 trees on
//! N points, D = 10, min_samples_split = 10, λ = ∞, 2 threads — and the regressor's fit on the
//! same points (trees, leaf sums, hyper-parameters, belief propagation), best of 3 each, and
//! prints their ratio. `cargo bench --bench forest_posterior_cost -- [N]` (default 1,000,000).

use mondrian_learn::forest::{regression::ForestRegressor, Growing, MondrianForest};
use mondrian_learn::mondrian::policy::PureMondrian;
use mondrian_learn::mondrian::TreeParams;
use mondrian_learn::parallel::{pool, Interrupt};
use mondrian_learn::rng::{tree_rng, uniform};
use ndarray::{Array1, Array2};
use std::hint::black_box;
use std::time::Instant;

const D: usize = 10;
const TREES: usize = 10;

/// Friedman #1 on uniform points, noise N(0, 1) approximated by a sum of uniforms.
fn friedman1(n: usize) -> (Array2<f64>, Array1<f64>) {
    let mut rng = tree_rng(2024, 0);
    let x = Array2::from_shape_fn((n, D), |_| uniform(&mut rng));
    let y = x
        .rows()
        .into_iter()
        .map(|r| {
            let noise: f64 = (0..12).map(|_| uniform(&mut rng)).sum::<f64>() - 6.0;
            10.0 * (std::f64::consts::PI * r[0] * r[1]).sin()
                + 20.0 * (r[2] - 0.5).powi(2)
                + 10.0 * r[3]
                + 5.0 * r[4]
                + noise
        })
        .collect();
    (x, y)
}

fn best_of(repeats: usize, mut run: impl FnMut()) -> f64 {
    (0..repeats)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    // `cargo bench` passes `--bench`; the first numeric argument, if any, is N.
    let n = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let (x, y) = friedman1(n);
    let threads = pool(2).expect("a pool of 2 threads");
    let params = TreeParams::new(f64::INFINITY, 10);
    let go = Interrupt::default();
    let how = Growing {
        n_trees: TREES,
        slice: TREES,
        pool: &threads,
        interrupt: &go,
    };
    let plain = best_of(3, || {
        let mut forest = MondrianForest::new(params, D, 0).expect("valid");
        forest.add_points(&x.view()).expect("finite points");
        forest
            .grow_trees(TREES, &PureMondrian, &threads, &go)
            .expect("not interrupted");
        black_box(forest);
    });
    let full = best_of(3, || {
        let forest = MondrianForest::new(params, D, 0).expect("valid");
        let mut model = ForestRegressor::new(forest);
        model
            .fit(&x.view(), &y.view(), None, &how, |_| Ok(()))
            .expect("fit");
        black_box(model);
    });
    println!("N = {n}, D = {D}, {TREES} trees, min_samples_split = 10, 2 threads, best of 3");
    println!("plain fit (trees only):            {plain:.3} s");
    println!("fit with the exact posterior:      {full:.3} s");
    println!("ratio (goal <= 1.5):               {:.2}", full / plain);
}
