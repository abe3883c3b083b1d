use crate::mondrian::TreeParams;
use crate::testing::{assert_valid, tree, uniform_points};

#[test]
fn duplicates_and_constant_features_pause() {
    // Four distinct values of feature 0, many duplicates; feature 1 constant.
    let x: Vec<f64> = (0..200).flat_map(|i| [(i % 4) as f64, 0.0]).collect();
    let params = TreeParams::new(f64::INFINITY, 2);
    for m in 0..3 {
        let t = tree(&x, 2, &params, 0, m);
        assert_eq!(t.n_leaves(), 4);
        assert_valid(&t, &x, 200, &params);
    }
}

/// Balog et al. Prop. 1: P(x, x′ share a leaf) = exp(−λ‖x − x′‖₁). With M trees the
/// frequency has standard deviation sqrt(p(1 − p)/M); we allow 4.5 of them (a false alarm
/// about once in 150,000 checks) plus 1/M.
#[test]
fn laplace_link() {
    let m = 3000;
    for d in [1usize, 3, 10] {
        let x = uniform_points(40, d, d as u64);
        let lifetime = 2.0 / d as f64;
        let params = TreeParams::new(lifetime, 2);
        let trees: Vec<_> = (0..m).map(|t| tree(&x, d, &params, 11, t as u64)).collect();
        let row = |i: usize| &x[i * d..(i + 1) * d];
        for (a, b) in [(0usize, 1usize), (2, 3), (4, 5), (6, 30)] {
            let dist: f64 = row(a).iter().zip(row(b)).map(|(u, v)| (u - v).abs()).sum();
            let p = (-lifetime * dist).exp();
            let same = trees
                .iter()
                .filter(|t| t.leaf_of(row(a)) == t.leaf_of(row(b)))
                .count();
            let freq = same as f64 / m as f64;
            let tol = 4.5 * (p * (1.0 - p) / m as f64).sqrt() + 1.0 / m as f64;
            assert!((freq - p).abs() <= tol, "D={d}: {freq} vs {p} ± {tol}");
        }
    }
}

/// Balog's report Thm 1.10: in 1-D the nodes form a Poisson process of rate λ, so the gap g
/// between neighbours is cut with probability 1 − e^{−λg}, independently across gaps:
/// E[#cells] = 1 + Σ (1 − e^{−λ g}), Var = Σ p(1 − p).
#[test]
fn one_dimensional_poisson_structure() {
    let x = uniform_points(60, 1, 3);
    let mut v = x.clone();
    v.sort_by(f64::total_cmp);
    let lifetime = 8.0;
    let probs: Vec<f64> = v
        .windows(2)
        .map(|w| 1.0 - (-lifetime * (w[1] - w[0])).exp())
        .collect();
    let mean = 1.0 + probs.iter().sum::<f64>();
    let var: f64 = probs.iter().map(|p| p * (1.0 - p)).sum();
    let m = 4000;
    let params = TreeParams::new(lifetime, 2);
    let avg = (0..m)
        .map(|t| tree(&x, 1, &params, 17, t).n_leaves() as f64)
        .sum::<f64>()
        / m as f64;
    let tol = 4.5 * (var / m as f64).sqrt();
    assert!((avg - mean).abs() <= tol, "{avg} vs {mean} ± {tol}");
}
