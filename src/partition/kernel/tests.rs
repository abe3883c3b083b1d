use super::*;
use crate::parallel::pool;
use crate::rng::{tree_rng, uniform};

/// Random labels: partition ρ has `2 + ρ % 5` clusters (one partition with a single cluster).
fn random_kernel(n: usize, m: usize, seed: u64) -> PartitionKernel {
    let mut rng = tree_rng(seed, 0);
    let mut labels = Vec::with_capacity(n * m);
    for rho in 0..m {
        let l = if rho == 0 { 1 } else { 2 + rho % 5 };
        labels.extend((0..n).map(|_| (uniform(&mut rng) * l as f64) as u32));
    }
    PartitionKernel::from_labels(labels, m).expect("valid")
}

/// The dense K̂ from the labels.
fn dense(kernel: &PartitionKernel) -> Vec<f64> {
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

fn block(n: usize, k: usize, seed: u64) -> Vec<f64> {
    let mut rng = tree_rng(seed, 1);
    (0..n * k).map(|_| uniform(&mut rng) - 0.5).collect()
}

#[test]
fn products_match_the_dense_kernel_for_any_thread_count() {
    let (n, m) = (300, 13);
    let kernel = random_kernel(n, m, 1);
    let kd = dense(&kernel);
    for k in [1, 3, 17] {
        let v = block(n, k, 2);
        let mut out = vec![0.0; n * k];
        kernel
            .matmul(&v, k, &mut out, &pool(1).expect("pool"))
            .expect("shapes");
        for i in 0..n {
            for j in 0..k {
                let want: f64 = (0..n).map(|l| kd[i * n + l] * v[l * k + j]).sum();
                assert!((out[i * k + j] - want).abs() < 1e-12, "k={k} i={i}");
            }
        }
        for threads in [2, 7] {
            let mut again = vec![0.0; n * k];
            kernel
                .matmul(&v, k, &mut again, &pool(threads).expect("pool"))
                .expect("shapes");
            assert_eq!(again, out, "bitwise equal with {threads} threads");
        }
    }
    assert_eq!(kernel.n_clusters()[0], 1);
}

#[test]
fn cross_products_use_labels_and_weights() {
    let (n, m) = (200, 9);
    let kernel = random_kernel(n, m, 3);
    let na = 7;
    let mut rng = tree_rng(5, 0);
    let mut labels = Vec::new();
    let mut weights = Vec::new();
    for rho in 0..m {
        let l = kernel.n_clusters()[rho];
        for j in 0..na {
            labels.push(if j == 0 {
                FRESH
            } else {
                (uniform(&mut rng) * f64::from(l)) as u32
            });
            weights.push(uniform(&mut rng));
        }
    }
    let a = Assignment {
        n_points: na,
        labels: labels.clone(),
        weights: Some(weights.clone()),
    };
    // Dense K̂(A, X): weight of the partitions where the labels agree, over m.
    let mut cross = vec![0.0; na * n];
    for rho in 0..m {
        for j in 0..na {
            for i in 0..n {
                if labels[rho * na + j] == kernel.labels()[rho * n + i] {
                    cross[j * n + i] += weights[rho * na + j] / m as f64;
                }
            }
        }
    }
    let p = pool(2).expect("pool");
    let k = 2;
    let v = block(n, k, 4);
    let mut out = vec![0.0; na * k];
    kernel
        .cross_matmul(&a, &v, k, &mut out, &p)
        .expect("shapes");
    for j in 0..na {
        for c in 0..k {
            let want: f64 = (0..n).map(|i| cross[j * n + i] * v[i * k + c]).sum();
            assert!((out[j * k + c] - want).abs() < 1e-12);
        }
    }
    assert_eq!(out[0], 0.0, "a fresh point shares nothing");
    let mut cols = vec![0.0; n * na];
    kernel.cross_columns(&a, &mut cols, &p).expect("shapes");
    for i in 0..n {
        for j in 0..na {
            assert!((cols[i * na + j] - cross[j * n + i]).abs() < 1e-12);
        }
    }
}

#[test]
fn preconditioner_is_the_average_of_exact_inverses() {
    use crate::linalg::operator::LinearOperator;
    use crate::partition::operators::ClusterPreconditioner;
    let (n, m) = (60, 4);
    let kernel = random_kernel(n, m, 6);
    let (s, noise) = (1.7, 0.3);
    let p = pool(1).expect("pool");
    let op = ClusterPreconditioner {
        kernel: &kernel,
        scale: s,
        noise,
    };
    let v = block(n, 1, 8);
    let mut out = vec![0.0; n];
    op.apply(&v, 1, &mut out, &p).expect("shapes");
    // Dense: average over ρ of (s K_ρ + σ² I)⁻¹ v, each solved by Gaussian elimination.
    let mut want = vec![0.0; n];
    for part in kernel.labels().chunks_exact(n) {
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = if part[i] == part[j] { s } else { 0.0 };
            }
            a[i * n + i] += noise;
        }
        let x = solve_dense(a, v.clone(), n);
        want.iter_mut()
            .zip(&x)
            .for_each(|(w, x)| *w += x / m as f64);
    }
    for (a, b) in out.iter().zip(&want) {
        assert!((a - b).abs() < 1e-10, "{a} vs {b}");
    }
}

/// Gaussian elimination with partial pivoting (tests only).
pub(crate) fn solve_dense(mut a: Vec<f64>, mut b: Vec<f64>, n: usize) -> Vec<f64> {
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

#[test]
fn rejects_bad_labels_and_assignments() {
    assert!(PartitionKernel::from_labels(vec![0, 1, 2], 2).is_err());
    assert!(PartitionKernel::from_labels(vec![0, 5, 0, 1], 2).is_err());
    assert!(PartitionKernel::from_labels(vec![], 1).is_err());
    let kernel = PartitionKernel::from_labels(vec![0, 1, 1, 0, 0, 0], 2).expect("valid");
    assert!(kernel.is_consistent());
    let bad = Assignment {
        n_points: 1,
        labels: vec![0, 1],
        weights: None,
    };
    assert!(
        kernel.check_assignment(&bad).is_err(),
        "partition 1 has one cluster"
    );
    let short = Assignment {
        n_points: 2,
        labels: vec![0, 1],
        weights: None,
    };
    assert!(kernel.check_assignment(&short).is_err());
    let p = pool(1).expect("pool");
    assert!(kernel.matmul(&[1.0; 2], 1, &mut [0.0; 3], &p).is_err());
    assert_eq!(kernel.stream_labels(&p), 2);
}
