//! Eigen-decomposition of the small dense symmetric matrices that Rayleigh–Ritz produces
//! (tens to a few hundred rows), by cyclic Jacobi rotations: simple, and accurate to a few
//! units in the last place relative to the matrix norm, which is all a Ritz step needs.

use crate::error::{Error, Result};

/// Eigenvalues in decreasing order and the matching orthonormal eigenvectors as the columns
/// of a row-major `n × n` matrix, of the symmetric row-major `n × n` matrix `a`.
pub fn symmetric_eigen(a: &[f64], n: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    if a.len() != n * n || a.iter().any(|v| !v.is_finite()) {
        return Err(Error::InvalidInput(
            "eigen-decomposition needs a finite square matrix".into(),
        ));
    }
    let mut m = a.to_vec();
    let mut v = vec![0.0; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    let norm2: f64 = m.iter().map(|x| x * x).sum();
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| m[i * n + j] * m[i * n + j])
            .sum();
        if off <= f64::EPSILON * f64::EPSILON * norm2 || off == 0.0 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = m[p * n + q];
                if apq == 0.0 {
                    continue;
                }
                let theta = (m[q * n + q] - m[p * n + p]) / (2.0 * apq);
                // The smaller root of t² + 2θt − 1 = 0 keeps the rotation angle ≤ π/4.
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                rotate(&mut m, n, p, q, c, s);
                for row in v.chunks_exact_mut(n) {
                    let (x, y) = (row[p], row[q]);
                    row[p] = c * x - s * y;
                    row[q] = s * x + c * y;
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| m[j * n + j].total_cmp(&m[i * n + i]));
    let values = order.iter().map(|&i| m[i * n + i]).collect();
    let mut vectors = vec![0.0; n * n];
    for (new, &old) in order.iter().enumerate() {
        for r in 0..n {
            vectors[r * n + new] = v[r * n + old];
        }
    }
    Ok((values, vectors))
}

/// `m ← Jᵀ m J` for the rotation `J` in the plane (p, q) that zeroes `m[p, q]`.
fn rotate(m: &mut [f64], n: usize, p: usize, q: usize, c: f64, s: f64) {
    for k in 0..n {
        let (x, y) = (m[k * n + p], m[k * n + q]);
        m[k * n + p] = c * x - s * y;
        m[k * n + q] = s * x + c * y;
    }
    for k in 0..n {
        let (x, y) = (m[p * n + k], m[q * n + k]);
        m[p * n + k] = c * x - s * y;
        m[q * n + k] = s * x + c * y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconstructs_a_random_symmetric_matrix() {
        let n = 12;
        let mut rng = crate::rng::tree_rng(4, 0);
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let x = crate::rng::uniform(&mut rng) - 0.5;
                a[i * n + j] = x;
                a[j * n + i] = x;
            }
        }
        let (values, vectors) = symmetric_eigen(&a, n).expect("finite");
        assert!(values.windows(2).all(|w| w[0] >= w[1]));
        for i in 0..n {
            for j in 0..n {
                let back: f64 = (0..n)
                    .map(|l| vectors[i * n + l] * values[l] * vectors[j * n + l])
                    .sum();
                assert!((back - a[i * n + j]).abs() < 1e-13);
                let gram: f64 = (0..n)
                    .map(|l| vectors[l * n + i] * vectors[l * n + j])
                    .sum();
                assert!((gram - f64::from(u8::from(i == j))).abs() < 1e-13);
            }
        }
        assert!(symmetric_eigen(&[f64::NAN], 1).is_err());
        assert_eq!(symmetric_eigen(&[2.0], 1).expect("1x1").0, vec![2.0]);
    }
}
