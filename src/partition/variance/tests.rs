use super::*;
use crate::parallel::pool;
use crate::parallel::Interrupt;
use crate::partition::kernel::{Assignment, FRESH};
use crate::partition::operators::Preconditioner;
use crate::rng::{tree_rng, uniform};
use crate::testing::{dense_partition_kernel, random_block, random_partition_kernel, solve_dense};

/// New points: random labels of every partition, a few alone (FRESH), with weights.
fn new_points(kernel: &PartitionKernel, na: usize, seed: u64) -> Assignment {
    let mut rng = tree_rng(seed, 0);
    let mut labels = Vec::new();
    let mut weights = Vec::new();
    for &l in kernel.n_clusters() {
        for j in 0..na {
            labels.push(if j % 7 == 3 {
                crate::partition::kernel::FRESH
            } else {
                (uniform(&mut rng) * f64::from(l)) as u32
            });
            weights.push(0.5 + 0.5 * uniform(&mut rng));
        }
    }
    Assignment {
        n_points: na,
        labels,
        weights: Some(weights),
    }
}

/// The predictive covariance `s K** + σ² I − K*ᵀ A⁻¹ K*` densely (`A = s K̂ + σ² V⁻¹`,
/// `K** = φφᵀ + diag(1 − ‖φ‖²)`), and `‖φ‖²` per point.
fn dense_covariance(
    kernel: &PartitionKernel,
    a: &Assignment,
    (s, noise): (f64, f64),
    v: Option<&[f64]>,
) -> (Vec<f64>, Vec<f64>) {
    let (n, na, m) = (kernel.n_points(), a.n_points, kernel.n_partitions());
    let mut system: Vec<f64> = dense_partition_kernel(kernel)
        .iter()
        .map(|k| s * k)
        .collect();
    for i in 0..n {
        system[i * n + i] += noise / v.map_or(1.0, |v| v[i]);
    }
    let mut cross = vec![0.0; n * na];
    kernel
        .cross_columns(a, &mut cross, &pool(1).expect("pool"))
        .expect("shapes");
    let cross: Vec<f64> = cross.iter().map(|k| s * k).collect();
    let column = |j: usize| -> Vec<f64> { (0..n).map(|l| cross[l * na + j]).collect() };
    let z: Vec<Vec<f64>> = (0..na)
        .map(|j| solve_dense(system.clone(), column(j), n))
        .collect();
    let weight = |rho: usize, i: usize| {
        let fresh = a.labels[rho * na + i] == FRESH;
        if fresh {
            0.0
        } else {
            a.weights.as_ref().map_or(1.0, |w| w[rho * na + i])
        }
    };
    let norm2: Vec<f64> = (0..na)
        .map(|i| (0..m).map(|rho| weight(rho, i).powi(2)).sum::<f64>() / m as f64)
        .collect();
    let mut cov = vec![0.0; na * na];
    for i in 0..na {
        for j in 0..na {
            let shared: f64 = (0..m)
                .filter(|&rho| a.labels[rho * na + i] == a.labels[rho * na + j])
                .map(|rho| weight(rho, i) * weight(rho, j))
                .sum::<f64>()
                / m as f64;
            let prior = if i == j { 1.0 + noise / s } else { shared };
            let explained: f64 = (0..n).map(|l| cross[l * na + i] * z[j][l]).sum();
            cov[i * na + j] = s * prior - explained;
        }
    }
    (cov, norm2)
}

#[test]
fn cluster_sums_and_gathers_compose_to_products_and_add_over_row_blocks() {
    let (n, m, k) = (150, 6, 3);
    let kernel = random_partition_kernel(n, m, 11);
    let p = pool(2).expect("pool");
    let v = random_block(n, k, 12);
    let sums = kernel.cluster_sums(None, &v, k, &p).expect("shapes");
    let mut out = vec![0.0; n * k];
    kernel
        .gather_sums(None, &sums, k, &mut out, &p)
        .expect("shapes");
    let mut want = vec![0.0; n * k];
    kernel.matmul(&v, k, &mut want, &p).expect("shapes");
    assert_eq!(out, want, "the two halves of a product are the product");
    // The training points as two assigned blocks: their sums add up to the whole.
    let block = |range: std::ops::Range<usize>| Assignment {
        n_points: range.len(),
        labels: (0..m)
            .flat_map(|rho| kernel.labels()[rho * n + range.start..rho * n + range.end].to_vec())
            .collect(),
        weights: None,
    };
    let (a, b) = (block(0..70), block(70..n));
    let sa = kernel
        .cluster_sums(Some(&a), &v[..70 * k], k, &p)
        .expect("shapes");
    let sb = kernel
        .cluster_sums(Some(&b), &v[70 * k..], k, &p)
        .expect("shapes");
    for ((x, y), z) in sa.iter().zip(&sb).zip(&sums) {
        assert!((x + y - z).abs() < 1e-12);
    }
    let mut rows_b = vec![0.0; (n - 70) * k];
    kernel
        .gather_sums(Some(&b), &sums, k, &mut rows_b, &p)
        .expect("shapes");
    assert_eq!(rows_b, want[70 * k..]);
    assert!(kernel.cluster_sums(None, &v[1..], k, &p).is_err());
    assert!(kernel
        .gather_sums(None, &sums[1..], k, &mut out, &p)
        .is_err());
}

#[test]
fn every_exact_path_matches_a_dense_covariance_for_any_thread_count() {
    // 120 points and 8 partitions of at most 6 clusters: the clusters' space; 30 points
    // and 12 partitions: more clusters than points, the training points' space. Each by
    // its dense factor and by CG.
    let cases = [
        (120, 8, 23, [ExactPath::DenseClusters, ExactPath::Clusters]),
        (30, 12, 19, [ExactPath::DensePoints, ExactPath::Points]),
    ];
    for (n, m, na, paths) in cases {
        let kernel = random_partition_kernel(n, m, 21);
        let a = new_points(&kernel, na, 22);
        let v: Vec<f64> = random_block(n, 1, 23)
            .iter()
            .map(|x| 0.5 + x.abs())
            .collect();
        let root: Vec<f64> = v.iter().map(|x| x.sqrt()).collect();
        let stop = Interrupt::default();
        let (s, noise) = (1.3, 0.02);
        for weights in [None, Some(&v[..])] {
            let d = weights.map(|_| &root[..]);
            let (want, _) = dense_covariance(&kernel, &a, (s, noise), weights);
            for path in paths {
                let run = |threads: usize, full: bool| {
                    let p = pool(threads).expect("pool");
                    let how = (Preconditioner::Partition, (1e-12, 3000), full);
                    exact_variance_by(path, &kernel, &a, (s, noise), d, how, &p, &stop)
                        .expect("solve")
                };
                let diag = run(1, false);
                assert!(diag.converged.iter().all(|&c| c));
                for j in 0..na {
                    let want = want[j * na + j];
                    assert!((diag.values[j] - want).abs() < 1e-9 * want, "{path:?} {j}");
                }
                let full = run(2, true);
                for (got, want) in full.values.iter().zip(&want) {
                    assert!((got - want).abs() < 1e-9, "{path:?}: {got} vs {want}");
                }
                for threads in [2, 7] {
                    assert_eq!(run(threads, false).values, diag.values, "{threads} threads");
                }
            }
        }
    }
}

#[test]
fn lanczos_bounds_bracket_the_exact_variance_and_close() {
    let (n, m) = (200, 5);
    let kernel = random_partition_kernel(n, m, 31);
    let a = new_points(&kernel, 17, 32);
    let (s, noise) = (0.8, 0.05);
    let (want, norm2) = dense_covariance(&kernel, &a, (s, noise), None);
    let p = pool(2).expect("pool");
    let gram_op = FeatureGram {
        kernel: &kernel,
        row_scale: None,
        shift: 0.0,
    };
    let sizes: Vec<f64> = kernel
        .cluster_sizes()
        .iter()
        .map(|&c| f64::from(c))
        .collect();
    let c = gram_op.dim();
    let mut previous = (vec![f64::INFINITY; 17], vec![0.0; 17]);
    for (b, dim) in [(1, 1), (1, 3), (2, 6), (3, 9), (1, c)] {
        let start: Vec<f64> = sizes
            .iter()
            .enumerate()
            .flat_map(|(i, &x)| (0..b).map(move |j| x * (1.0 + (i * j) as f64)))
            .collect();
        let f = lanczos_factors(&gram_op, &start, b, dim, 1, (s, noise), m, &p).expect("factor");
        let rows = |factor: &[f64], r: usize| {
            let mut rows = vec![0.0; 17 * r];
            kernel
                .gather_sums(Some(&a), factor, r, &mut rows, &p)
                .expect("shapes");
            rows.chunks_exact(r)
                .map(|x| x.iter().map(|v| v * v).sum::<f64>())
                .collect::<Vec<_>>()
        };
        let up = rows(&f.upper, f.rank);
        let lo = rows(&f.lower, f.rank);
        for j in 0..17 {
            let exact = want[j * 17 + j];
            let upper = s + noise - up[j];
            let lower = noise + s * (1.0 - norm2[j]) + noise * lo[j];
            assert!(
                lower <= exact + 1e-10 && exact <= upper + 1e-10,
                "{lower} {exact} {upper}"
            );
            assert!(upper <= previous.0[j] + 1e-10 && lower >= previous.1[j] - 1e-10);
            if dim == c {
                assert!(upper - lower < 1e-9, "the whole space: exact");
            }
            previous.0[j] = upper;
            previous.1[j] = lower;
        }
    }
}
