//! Helpers shared by the unit tests of several modules (compiled for tests only).

use crate::forest::{Growing, MondrianForest};
use crate::mondrian::policy::PureMondrian;
use crate::mondrian::sample::{sample_tree, Growth, SampleScratch};
use crate::mondrian::{MondrianTree, TreeParams, NONE};
use crate::parallel::{pool, Interrupt};
use crate::partition::kernel::PartitionKernel;
use crate::rng::{tree_rng, uniform};
use ndarray::{Array1, Array2};
use rayon::ThreadPool;

/// `n` points uniform in [0, 1]^d, row-major.
pub fn uniform_points(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = tree_rng(seed, 99);
    (0..n * d).map(|_| uniform(&mut rng)).collect()
}

/// The same points as an `n × d` array.
pub fn uniform_array(n: usize, d: usize, seed: u64) -> Array2<f64> {
    Array2::from_shape_vec((n, d), uniform_points(n, d, seed)).expect("shape")
}

/// Points uniform in [0, 1]^d and targets sin(6 x₀) + x₁ + noise of sd 0.1.
pub fn regression_data(n: usize, d: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
    let x = uniform_array(n, d, seed);
    let mut rng = tree_rng(seed, 98);
    let y = x
        .rows()
        .into_iter()
        .map(|r| (6.0 * r[0]).sin() + r[d.min(2) - 1] + 0.1 * (uniform(&mut rng) - 0.5))
        .collect();
    (x, y)
}

/// The label-blind Mondrian tree `index` of a forest seeded with `seed` on the rows of `x`.
pub fn tree(x: &[f64], d: usize, params: &TreeParams, seed: u64, index: u64) -> MondrianTree {
    let on = Growth {
        x: &x,
        params,
        policy: &PureMondrian,
    };
    sample_tree(&on, d, tree_rng(seed, index), &mut SampleScratch::default())
}

/// A label-blind forest of `m` trees on `x`.
pub fn forest_on(x: &Array2<f64>, params: TreeParams, m: usize, seed: u64) -> MondrianForest {
    let mut f = MondrianForest::new(params, x.ncols(), seed).expect("valid");
    f.add_points(&x.view()).expect("finite");
    f.grow_trees(
        m,
        &PureMondrian,
        &pool(2).expect("pool"),
        &Interrupt::default(),
    )
    .expect("not interrupted");
    f
}

/// Every invariant a tree must keep: boxes are the min/max of the points below, counts add
/// up, each leaf's points route to it, children are born after their parents.
pub fn assert_valid(tree: &MondrianTree, x: &[f64], n_rows: usize, params: &TreeParams) {
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

/// Dense solve of (ΦᵀΦ + αI) w = Φᵀ(y − ȳ) for the row-major N × C matrix `phi`, by Gaussian
/// elimination with partial pivoting; returns (w, log det A).
pub fn dense_ridge(phi: &[f64], n: usize, c: usize, y: &[f64], alpha: f64) -> (Vec<f64>, f64) {
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
/// as kernel weights at λ = 0, where every tree is one cell and the centred targets sum to 0).
pub fn assert_rel(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (x, y) in a.iter().zip(b) {
        assert!(
            (x - y).abs() <= tol * scale + 1e-12,
            "{x} vs {y} (scale {scale})"
        );
    }
}

/// M label-blind trees with lifetime λ and `min_samples_split = 1` on `x` (the kernel's).
pub fn kernel_forest(x: &Array2<f64>, trees: usize, lifetime: f64, seed: u64) -> MondrianForest {
    forest_on(x, TreeParams::new(lifetime, 1), trees, seed)
}

/// Random labels: partition ρ has `2 + ρ % 5` clusters (one partition with a single cluster).
pub fn random_partition_kernel(n: usize, m: usize, seed: u64) -> PartitionKernel {
    let mut rng = tree_rng(seed, 0);
    let mut labels = Vec::with_capacity(n * m);
    for rho in 0..m {
        let l = if rho == 0 { 1 } else { 2 + rho % 5 };
        labels.extend((0..n).map(|_| (uniform(&mut rng) * l as f64) as u32));
    }
    PartitionKernel::from_labels(labels, m).expect("valid")
}

/// The dense K̂ from the labels.
pub fn dense_partition_kernel(kernel: &PartitionKernel) -> Vec<f64> {
    let (n, m) = (kernel.n_points(), kernel.n_partitions());
    let mut k = vec![0.0; n * n];
    for part in kernel.labels().chunks_exact(n) {
        for i in 0..n {
            for j in 0..n {
                if part[i] == part[j] {
                    k[i * n + j] += 1.0 / m as f64;
                }
            }
        }
    }
    k
}

pub fn random_block(n: usize, k: usize, seed: u64) -> Vec<f64> {
    let mut rng = tree_rng(seed, 1);
    (0..n * k).map(|_| uniform(&mut rng) - 0.5).collect()
}

/// Gaussian elimination with partial pivoting .
pub fn solve_dense(mut a: Vec<f64>, mut b: Vec<f64>, n: usize) -> Vec<f64> {
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))
            .unwrap_or(col);
        for c in 0..n {
            a.swap(col * n + c, piv * n + c);
        }
        b.swap(col, piv);
        for r in col + 1..n {
            let f = a[r * n + col] / a[col * n + col];
            for c in col..n {
                a[r * n + c] -= f * a[col * n + c];
            }
            b[r] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|c| a[r * n + c] * x[c]).sum();
        x[r] = (b[r] - s) / a[r * n + r];
    }
    x
}

/// Growing settings for a test fit of `n_trees` trees in one slice.
pub fn growing<'a>(n_trees: usize, pool: &'a ThreadPool, interrupt: &'a Interrupt) -> Growing<'a> {
    Growing {
        n_trees,
        slice: n_trees,
        pool,
        interrupt,
    }
}
