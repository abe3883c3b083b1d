//! Statistical and structural tests of sampling and extension against theory.

use super::*;
use crate::parallel::pool;
use crate::rng::{tree_rng, uniform};
use crate::tree::{MondrianTree, NONE};
use ndarray::Array2;

fn uniform_points(n: usize, d: usize, seed: u64) -> Array2<f64> {
    let mut rng = tree_rng(seed, 99);
    Array2::from_shape_fn((n, d), |_| uniform(&mut rng))
}

fn forest_on(x: &Array2<f64>, lifetime: f64, mss: usize, m: usize, seed: u64) -> MondrianForest {
    let params = TreeParams::new(lifetime, mss).expect("valid");
    let mut f = MondrianForest::new(params, x.ncols(), seed).expect("valid");
    f.add_points(&x.view()).expect("finite");
    f.grow_trees(m, &pool(2).expect("pool"));
    f
}

/// Every invariant a tree must keep: boxes are the min/max of the points below, counts add
/// up, each leaf's points route to it, children are born after their parents.
fn assert_valid(tree: &MondrianTree, x: &[f64], n_rows: usize, params: &TreeParams) {
    let d = tree.n_features;
    assert!(tree.is_consistent(n_rows, params));
    let mut seen = vec![false; n_rows];
    let mut stack = vec![tree.root];
    while let Some(j) = stack.pop() {
        let ju = j as usize;
        if tree.is_leaf(j) {
            let pts = tree.samples.of(j, tree.nodes[ju].n_samples as usize);
            assert!(!pts.is_empty());
            let mut lo = vec![f64::INFINITY; d];
            let mut hi = vec![f64::NEG_INFINITY; d];
            for &i in pts {
                let row = &x[i as usize * d..(i as usize + 1) * d];
                assert_eq!(tree.leaf_of(row), j, "a point routes away from its leaf");
                assert!(!seen[i as usize], "a point in two leaves");
                seen[i as usize] = true;
                for k in 0..d {
                    lo[k] = lo[k].min(row[k]);
                    hi[k] = hi[k].max(row[k]);
                }
            }
            assert_eq!(tree.lower(j), &lo[..]);
            assert_eq!(tree.upper(j), &hi[..]);
            assert_eq!(tree.tau(j), params.lifetime);
            // A leaf that could split must have been stopped by the lifetime.
            let paused = params.is_paused(pts.len(), tree.linear_dimension(j));
            assert!(paused || params.lifetime.is_finite());
        } else {
            let (l, r) = (tree.nodes[ju].left, tree.nodes[ju].right);
            assert_eq!(
                tree.nodes[ju].n_samples,
                tree.nodes[l as usize].n_samples + tree.nodes[r as usize].n_samples
            );
            for k in 0..d {
                let lo = tree.lower(l)[k].min(tree.lower(r)[k]);
                let hi = tree.upper(l)[k].max(tree.upper(r)[k]);
                assert_eq!(tree.lower(j)[k], lo);
                assert_eq!(tree.upper(j)[k], hi);
            }
            let dim = tree.nodes[ju].dim as usize;
            assert!(tree.upper(l)[dim] <= tree.nodes[ju].threshold);
            assert!(tree.lower(r)[dim] > tree.nodes[ju].threshold);
            assert!(tree.tau(j) > tree.tau_parent(j) || tree.parent[ju] == NONE);
            assert!(tree.tau(j) <= params.lifetime);
            stack.push(l);
            stack.push(r);
        }
    }
    assert!(seen.iter().all(|&s| s), "a point in no leaf");
}

#[test]
fn batch_and_extended_trees_keep_invariants() {
    let x = uniform_points(3000, 3, 1);
    for (lifetime, mss) in [(f64::INFINITY, 2), (f64::INFINITY, 10), (4.0, 5), (0.5, 2)] {
        let params = TreeParams::new(lifetime, mss).expect("valid");
        let mut f = MondrianForest::new(params, 3, 5).expect("valid");
        let p = pool(2).expect("pool");
        f.add_points(&x.slice(ndarray::s![..500, ..]))
            .expect("finite");
        f.grow_trees(4, &p);
        for chunk in [500..501, 501..1200, 1200..1201, 1201..3000] {
            let rows = f
                .add_points(&x.slice(ndarray::s![chunk, ..]))
                .expect("finite");
            f.extend(rows, &p);
            for tree in &f.trees {
                assert_valid(tree, f.points(), f.n_rows(), &params);
            }
        }
    }
}

#[test]
fn duplicates_and_constant_features_pause() {
    let mut x = Array2::<f64>::zeros((200, 2));
    for i in 0..200 {
        x[[i, 0]] = (i % 4) as f64; // four distinct values, many duplicates; column 1 constant
    }
    let f = forest_on(&x, f64::INFINITY, 2, 3, 0);
    for tree in &f.trees {
        assert_eq!(tree.n_leaves(), 4);
        assert_valid(tree, f.points(), f.n_rows(), &f.params);
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
        let f = forest_on(&x, lifetime, 2, m, 11);
        let leaves = f.apply(&x.view(), &pool(2).expect("pool")).expect("fitted");
        for (a, b) in [(0usize, 1usize), (2, 3), (4, 5), (6, 30)] {
            let dist: f64 = (0..d).map(|k| (x[[a, k]] - x[[b, k]]).abs()).sum();
            let p = (-lifetime * dist).exp();
            let same = (0..m).filter(|&t| leaves[[a, t]] == leaves[[b, t]]).count();
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
    let mut v: Vec<f64> = x.iter().copied().collect();
    v.sort_by(f64::total_cmp);
    let lifetime = 8.0;
    let probs: Vec<f64> = v
        .windows(2)
        .map(|w| 1.0 - (-lifetime * (w[1] - w[0])).exp())
        .collect();
    let mean = 1.0 + probs.iter().sum::<f64>();
    let var: f64 = probs.iter().map(|p| p * (1.0 - p)).sum();
    let m = 4000;
    let f = forest_on(&x, lifetime, 2, m, 17);
    let avg = f.trees.iter().map(|t| t.n_leaves() as f64).sum::<f64>() / m as f64;
    let tol = 4.5 * (var / m as f64).sqrt();
    assert!((avg - mean).abs() <= tol, "{avg} vs {mean} ± {tol}");
}

#[test]
fn serialization_round_trip() {
    let x = uniform_points(300, 2, 4);
    let f = forest_on(&x, 3.0, 2, 3, 1);
    let bytes = crate::serialize::to_bytes(&f).expect("serialize");
    let g: MondrianForest = crate::serialize::from_bytes(&bytes).expect("deserialize");
    assert!(g.is_consistent());
    let p = pool(1).expect("pool");
    assert_eq!(f.apply(&x.view(), &p), g.apply(&x.view(), &p));
    assert!(crate::serialize::from_bytes::<MondrianForest>(&bytes[..bytes.len() / 2]).is_err());
    assert!(crate::serialize::from_bytes::<MondrianForest>(b"garbage!").is_err());
}

#[test]
fn same_seed_same_trees_for_any_pool_size() {
    let x = uniform_points(500, 3, 8);
    let leaves: Vec<_> = [1usize, 2, 7]
        .iter()
        .map(|&n| {
            let params = TreeParams::new(f64::INFINITY, 3).expect("valid");
            let mut f = MondrianForest::new(params, 3, 42).expect("valid");
            let p = pool(n).expect("pool");
            f.add_points(&x.slice(ndarray::s![..250, ..]))
                .expect("finite");
            f.grow_trees(5, &p);
            let rows = f
                .add_points(&x.slice(ndarray::s![250.., ..]))
                .expect("finite");
            f.extend(rows, &p);
            f.apply(&x.view(), &p).expect("fitted")
        })
        .collect();
    assert_eq!(leaves[0], leaves[1]);
    assert_eq!(leaves[0], leaves[2]);
}

#[test]
fn bad_input_is_an_error() {
    let params = TreeParams::new(1.0, 2).expect("valid");
    assert!(MondrianForest::new(params, 0, 0).is_err());
    let mut f = MondrianForest::new(params, 2, 0).expect("valid");
    let bad = Array2::from_shape_vec((1, 2), vec![0.0, f64::NAN]).expect("shape");
    assert!(f.add_points(&bad.view()).is_err());
    let wide = Array2::<f64>::zeros((1, 3));
    assert!(f.add_points(&wide.view()).is_err());
    assert!(f
        .apply(
            &Array2::<f64>::zeros((1, 2)).view(),
            &pool(1).expect("pool")
        )
        .is_err());
}

/// The branch-off mixture of every tree is a probability distribution: weights sum to 1 for
/// points inside, near and far from the data, with finite and infinite lifetimes.
#[test]
fn predictive_weights_sum_to_one() {
    use super::posterior::{tree_posterior, GaussianPrior};
    use super::predict::tree_components;
    use crate::tree::route::RouteScratch;
    let x = uniform_points(300, 3, 21);
    let prior = GaussianPrior::new(0.5, 2.0, 0.3, 0.01).expect("valid");
    for lifetime in [f64::INFINITY, 3.0, 0.0] {
        let f = forest_on(&x, lifetime, 5, 4, 9);
        let probes = uniform_points(50, 3, 22).mapv(|v| 3.0 * v - 1.0);
        for tree in &f.trees {
            let sums = vec![1.0; tree.n_nodes()];
            let post = tree_posterior(tree, &sums, &prior);
            for row in probes.rows().into_iter().chain(x.rows()) {
                let mut comps = Vec::new();
                let point: Vec<f64> = row.to_vec();
                tree_components(
                    tree,
                    &post,
                    &prior,
                    lifetime,
                    &point,
                    &mut RouteScratch::default(),
                    &mut comps,
                );
                let total: f64 = comps.iter().map(|c| c.weight).sum();
                assert!((total - 1.0).abs() < 1e-12, "weights sum to {total}");
                assert!(comps.iter().all(|c| c.var > 0.0 && c.mean.is_finite()));
            }
        }
    }
}
