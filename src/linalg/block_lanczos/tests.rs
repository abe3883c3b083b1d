use super::*;
use crate::linalg::operator::tests::Dense;
use crate::parallel::pool;

/// A symmetric matrix with known spectrum `values`: Q diag(values) Qᵀ for a random orthogonal
/// Q (Gram–Schmidt on random columns).
fn with_spectrum(values: &[f64], seed: u64) -> (Dense, Vec<f64>) {
    let n = values.len();
    let mut rng = tree_rng(seed, 0);
    let mut q: Vec<Vec<f64>> = Vec::new();
    while q.len() < n {
        let mut v: Vec<f64> = (0..n).map(|_| uniform(&mut rng) - 0.5).collect();
        for u in &q {
            let c: f64 = u.iter().zip(&v).map(|(a, b)| a * b).sum();
            v.iter_mut().zip(u).for_each(|(x, y)| *x -= c * y);
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        q.push(v);
    }
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = (0..n).map(|l| q[l][i] * values[l] * q[l][j]).sum();
        }
    }
    let top: Vec<f64> = q[0].clone();
    (Dense { n, a }, top)
}

#[test]
fn finds_the_top_of_a_known_spectrum() {
    let n = 120;
    let values: Vec<f64> = (0..n).map(|i| 10.0 * 0.9f64.powi(i as i32)).collect();
    let (op, top) = with_spectrum(&values, 7);
    let params = BlockLanczosParams {
        k: 4,
        block: 6,
        depth: 4,
        tol: 1e-10,
        max_restarts: 50,
        seed: 3,
    };
    let p = pool(2).expect("pool");
    let res = top_eigenpairs(&op, &params, &p).expect("eigen");
    assert!(res.converged);
    for (got, want) in res.values.iter().zip(&values) {
        assert!((got - want).abs() < 1e-8 * values[0], "{got} vs {want}");
    }
    // The first eigenvector up to sign.
    let c: f64 = (0..n).map(|i| res.vectors[i * 4] * top[i]).sum();
    assert!((c.abs() - 1.0).abs() < 1e-8);
    // Same answer with another thread count.
    let again = top_eigenpairs(&op, &params, &pool(3).expect("pool")).expect("eigen");
    assert_eq!(again.values, res.values);
    assert_eq!(again.vectors, res.vectors);
}

#[test]
fn survives_an_invariant_subspace() {
    // Rank 2: the Krylov space is exhausted after one block; refilled columns keep it going.
    let n = 30;
    let mut values = vec![0.0; n];
    values[0] = 5.0;
    values[1] = 2.0;
    let (op, _) = with_spectrum(&values, 9);
    let params = BlockLanczosParams {
        k: 3,
        block: 4,
        depth: 3,
        tol: 1e-9,
        max_restarts: 10,
        seed: 1,
    };
    let res = top_eigenpairs(&op, &params, &pool(1).expect("pool")).expect("eigen");
    assert!((res.values[0] - 5.0).abs() < 1e-9);
    assert!((res.values[1] - 2.0).abs() < 1e-9);
    assert!(res.values[2].abs() < 1e-9);
}

#[test]
fn rejects_bad_settings() {
    let (op, _) = with_spectrum(&[1.0, 2.0], 1);
    let p = pool(1).expect("pool");
    let mut params = BlockLanczosParams {
        k: 3,
        block: 3,
        depth: 2,
        tol: 1e-8,
        max_restarts: 1,
        seed: 0,
    };
    assert!(top_eigenpairs(&op, &params, &p).is_err());
    params.k = 1;
    params.tol = 0.0;
    assert!(top_eigenpairs(&op, &params, &p).is_err());
}

#[test]
fn tiny_problems_are_solved_densely() {
    let (op, _) = with_spectrum(&[3.0, 1.0, 2.0, 0.5, 0.0], 4);
    let params = BlockLanczosParams {
        k: 2,
        block: 4,
        depth: 3,
        tol: 1e-9,
        max_restarts: 1,
        seed: 1,
    };
    let res = top_eigenpairs(&op, &params, &pool(1).expect("pool")).expect("eigen");
    assert!((res.values[0] - 3.0).abs() < 1e-12 && (res.values[1] - 2.0).abs() < 1e-12);
    assert!(res.converged);
}
