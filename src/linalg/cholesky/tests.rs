use super::*;
use crate::parallel::pool;
use crate::rng::{tree_rng, uniform};

/// A random symmetric positive definite matrix, dense row-major: B Bᵀ + n I.
fn random_spd(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = tree_rng(seed, 0);
    let b: Vec<f64> = (0..n * n).map(|_| uniform(&mut rng) - 0.5).collect();
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = (0..n).map(|k| b[i * n + k] * b[j * n + k]).sum::<f64>();
        }
        a[i * n + i] += n as f64;
    }
    a
}

fn packed_lower(a: &[f64], n: usize) -> Vec<f64> {
    (0..n)
        .flat_map(|i| a[i * n..i * n + i + 1].to_vec())
        .collect()
}

fn without(a: &[f64], n: usize, p: usize) -> Vec<f64> {
    let keep: Vec<usize> = (0..n).filter(|&i| i != p).collect();
    keep.iter()
        .flat_map(|&i| keep.iter().map(move |&j| a[i * n + j]))
        .collect()
}

fn assert_close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol * scale, "{x} vs {y}");
    }
}

fn reconstruct(l: &Cholesky) -> Vec<f64> {
    let n = l.dim();
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let k = i.min(j) + 1;
            a[i * n + j] = dot(&l.row(i)[..k], &l.row(j)[..k]);
        }
    }
    a
}

#[test]
fn factor_reconstructs_and_ignores_thread_count() {
    let n = 150; // more than two blocks
    let a = random_spd(n, 1);
    let serial = Cholesky::factor(packed_lower(&a, n), n, None).expect("spd");
    assert_close(&reconstruct(&serial), &a, 1e-12);
    for threads in [1, 2, 7] {
        let p = pool(threads).expect("pool");
        let parallel = Cholesky::factor(packed_lower(&a, n), n, Some(&p)).expect("spd");
        assert_eq!(parallel, serial);
    }
}

#[test]
fn append_equals_factor_of_the_bordered_matrix() {
    let n = 20;
    let a = random_spd(n, 2);
    let mut l = Cholesky::new();
    for i in 0..n {
        let mut cross = a[i * n..i * n + i].to_vec();
        l.append(&mut cross, a[i * n + i]).expect("spd");
    }
    let direct = Cholesky::factor(packed_lower(&a, n), n, None).expect("spd");
    assert_close(&l.data, &direct.data, 1e-12);
}

#[test]
fn delete_equals_factor_without_that_row_and_column() {
    let n = 12;
    let a = random_spd(n, 3);
    let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
    for p in 0..n {
        let mut l = Cholesky::factor(packed_lower(&a, n), n, None).expect("spd");
        let mut z = b.clone();
        l.forward_solve(&mut z);
        let (mut deleted, mut rotations) = (Vec::new(), Vec::new());
        l.delete(p, &mut deleted, &mut rotations).expect("in range");
        let reduced = without(&a, n, p);
        let direct = Cholesky::factor(packed_lower(&reduced, n - 1), n - 1, None).expect("spd");
        assert_close(&l.data, &direct.data, 1e-12);
        // L⁻¹ b carried through the rotations equals the fresh solve.
        let mut zp = z.remove(p);
        apply_rotations(&rotations, &mut z[p..], &mut zp);
        let mut fresh: Vec<f64> = b
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != p)
            .map(|(_, v)| *v)
            .collect();
        direct.forward_solve(&mut fresh);
        assert_close(&z, &fresh, 1e-12);
        // The deleted column solved against the new factor: its first p entries are the
        // deleted row, the rest the carried unit vector times the deleted pivot.
        let mut g = deleted[..p].to_vec();
        let mut v = vec![0.0; n - 1 - p];
        let mut tail = 1.0;
        apply_rotations(&rotations, &mut v, &mut tail);
        g.extend(v.iter().map(|x| x * deleted[p]));
        let mut expected: Vec<f64> = (0..n).filter(|&i| i != p).map(|i| a[i * n + p]).collect();
        direct.forward_solve(&mut expected);
        assert_close(&g, &expected, 1e-12);
    }
}

#[test]
fn rank_one_update_and_log_det() {
    let n = 15;
    let a = random_spd(n, 4);
    let mut x: Vec<f64> = (0..n).map(|i| ((i * 7) % 5) as f64 - 2.0).collect();
    x[..3].fill(0.0); // starts at the first non-zero
    let mut l = Cholesky::factor(packed_lower(&a, n), n, None).expect("spd");
    let start = l.rank_one_update(&x, &mut Vec::new());
    assert_eq!(start, 3);
    let mut updated = a.clone();
    for i in 0..n {
        for j in 0..n {
            updated[i * n + j] += x[i] * x[j];
        }
    }
    assert_close(&reconstruct(&l), &updated, 1e-12);
    // det(I + u uᵀ) = 1 + ‖u‖².
    let mut id = Cholesky::factor(packed_lower(&identity(n), n), n, None).expect("spd");
    id.rank_one_update(&x, &mut Vec::new());
    let expected = (1.0 + dot(&x, &x)).ln();
    assert!((id.log_det() - expected).abs() < 1e-12 * expected);
}

fn identity(n: usize) -> Vec<f64> {
    (0..n * n)
        .map(|k| if k % (n + 1) == 0 { 1.0 } else { 0.0 })
        .collect()
}

#[test]
fn solve_and_errors() {
    let n = 9;
    let a = random_spd(n, 5);
    let l = Cholesky::factor(packed_lower(&a, n), n, None).expect("spd");
    let b: Vec<f64> = (0..n).map(|i| i as f64 - 4.0).collect();
    let mut x = b.clone();
    l.solve(&mut x);
    let ax: Vec<f64> = (0..n).map(|i| dot(&a[i * n..(i + 1) * n], &x)).collect();
    assert_close(&ax, &b, 1e-12);
    let mut bad = packed_lower(&a, n);
    bad[offset(4) + 4] = -1.0;
    assert!(Cholesky::factor(bad, n, None).is_err());
    assert!(Cholesky::factor(vec![1.0; 4], n, None).is_err());
    let mut l = l;
    assert!(l.delete(n, &mut Vec::new(), &mut Vec::new()).is_err());
    assert!(l.push_solved(&[1.0], 1.0).is_err());
    assert!(l.push_solved(&vec![0.0; n], 0.0).is_err());
}
