//! Lanczos tridiagonalisation of a symmetric operator from several starting vectors at once,
//! the building block of stochastic Lanczos quadrature (Ubaru, Chen & Saad 2017):
//! `uᵀ f(A) u ≈ ‖u‖² Σ_j τ_j² f(θ_j)` with `θ_j` the eigenvalues of the tridiagonal matrix `T`
//! built from `u` and `τ_j` the first components of its eigenvectors (Gauss quadrature for the
//! spectral measure of `u`).
//!
//! Each start runs its own three-term recurrence without reorthogonalisation (quadrature only
//! needs `T`, and loss of orthogonality costs accuracy slowly); the starts still running share
//! each operator application. A start stops early when its Krylov space becomes invariant.

use super::block::{col_dots, for_rows_mut, select_cols, zip_rows};
use super::operator::LinearOperator;
use crate::error::{Error, Result};
use rayon::ThreadPool;

/// The Lanczos matrix of one start: diagonal `alpha` (length `L`) and off-diagonal `beta`
/// (length `L − 1`), `L ≤ steps`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tridiagonal {
    pub alpha: Vec<f64>,
    pub beta: Vec<f64>,
}

/// Relative size of `β` below which the Krylov space counts as invariant (the start's
/// spectral measure has been captured exactly).
const BREAKDOWN: f64 = 1e-12;

/// Runs up to `steps` Lanczos steps of `a` from each column of the row-major `n × k` block
/// `starts` (normalised first) and returns their tridiagonal matrices.
pub fn tridiagonalize(
    a: &dyn LinearOperator,
    starts: &[f64],
    k: usize,
    steps: usize,
    pool: &ThreadPool,
) -> Result<Vec<Tridiagonal>> {
    let n = a.dim();
    if k == 0 || starts.len() != n * k || steps == 0 {
        return Err(Error::InvalidInput(format!(
            "Lanczos needs an {n} × k block of starts (k ≥ 1) and steps ≥ 1"
        )));
    }
    let norms: Vec<f64> = col_dots(starts, starts, k, pool)
        .iter()
        .map(|v| v.sqrt())
        .collect();
    if norms.iter().any(|&v| !(v > 0.0 && v.is_finite())) {
        return Err(Error::InvalidInput(
            "Lanczos starts must be finite and non-zero".into(),
        ));
    }
    let mut out = vec![
        Tridiagonal {
            alpha: Vec::with_capacity(steps),
            beta: Vec::with_capacity(steps),
        };
        k
    ];
    let mut cols: Vec<usize> = (0..k).collect();
    let mut kc = k;
    let mut q = starts.to_vec();
    let inv: Vec<f64> = norms.iter().map(|v| 1.0 / v).collect();
    scale_cols(&mut q, &inv, kc, pool);
    let mut q_prev = vec![0.0; n * kc];
    let mut w = vec![0.0; n * kc];
    // Running estimate of ‖A‖ per start (largest |α| + β seen), for the breakdown test.
    let mut scale = vec![0.0f64; k];
    for step in 0..steps {
        a.apply(&q, kc, &mut w, pool)?;
        let alpha = col_dots(&q, &w, kc, pool);
        let beta_prev: Vec<f64> = cols
            .iter()
            .map(|&c| out[c].beta.last().copied().unwrap_or(0.0))
            .collect();
        // w ← w − α q − β_prev q_prev
        zip_rows(&mut w, kc, &q, kc, pool, |w, q| {
            for (rw, rq) in w.chunks_exact_mut(kc).zip(q.chunks_exact(kc)) {
                for ((x, &y), &a) in rw.iter_mut().zip(rq).zip(&alpha) {
                    *x -= a * y;
                }
            }
        });
        zip_rows(&mut w, kc, &q_prev, kc, pool, |w, q| {
            for (rw, rq) in w.chunks_exact_mut(kc).zip(q.chunks_exact(kc)) {
                for ((x, &y), &b) in rw.iter_mut().zip(rq).zip(&beta_prev) {
                    *x -= b * y;
                }
            }
        });
        let beta: Vec<f64> = col_dots(&w, &w, kc, pool)
            .iter()
            .map(|v| v.sqrt())
            .collect();
        let mut keep = Vec::with_capacity(kc);
        for j in 0..kc {
            let c = cols[j];
            if !alpha[j].is_finite() || !beta[j].is_finite() {
                return Err(Error::InvalidInput(
                    "the operator produced NaN or infinity".into(),
                ));
            }
            out[c].alpha.push(alpha[j]);
            scale[c] = scale[c].max(alpha[j].abs() + beta[j]);
            if step + 1 < steps && beta[j] > BREAKDOWN * scale[c] {
                out[c].beta.push(beta[j]);
                keep.push(j);
            }
        }
        if keep.is_empty() {
            break;
        }
        // q_prev ← q; q ← w / β, for the starts that go on.
        let inv: Vec<f64> = keep.iter().map(|&j| 1.0 / beta[j]).collect();
        if keep.len() == kc {
            std::mem::swap(&mut q_prev, &mut q);
            std::mem::swap(&mut q, &mut w);
        } else {
            q_prev = select_cols(&q, kc, &keep);
            q = select_cols(&w, kc, &keep);
            cols = keep.iter().map(|&j| cols[j]).collect();
            kc = cols.len();
            w = vec![0.0; n * kc];
        }
        scale_cols(&mut q, &inv, kc, pool);
    }
    Ok(out)
}

/// Multiplies column `j` of the `n × k` block by `factor[j]`.
fn scale_cols(a: &mut [f64], factor: &[f64], k: usize, pool: &ThreadPool) {
    for_rows_mut(a, k, pool, |a| {
        for row in a.chunks_exact_mut(k) {
            for (x, &f) in row.iter_mut().zip(factor) {
                *x *= f;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::operator::tests::Dense;
    use crate::linalg::symeig::symmetric_eigen;
    use crate::parallel::pool;

    /// Gauss quadrature from `T`: Σ τ_j² f(θ_j).
    fn quadrature(t: &Tridiagonal, f: impl Fn(f64) -> f64) -> f64 {
        let l = t.alpha.len();
        let mut m = vec![0.0; l * l];
        for i in 0..l {
            m[i * l + i] = t.alpha[i];
            if i + 1 < l {
                m[i * l + i + 1] = t.beta[i];
                m[(i + 1) * l + i] = t.beta[i];
            }
        }
        let (theta, s) = symmetric_eigen(&m, l).expect("finite");
        (0..l).map(|j| s[j] * s[j] * f(theta[j])).sum()
    }

    #[test]
    fn full_length_lanczos_integrates_exactly() {
        // With n steps on an n × n matrix the quadrature is exact: uᵀ log(A) u / ‖u‖².
        let n = 8;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            a[i * n + i] = 1.0 + i as f64;
            if i + 1 < n {
                a[i * n + i + 1] = 0.3;
                a[(i + 1) * n + i] = 0.3;
            }
        }
        let (values, vectors) = symmetric_eigen(&a, n).expect("finite");
        let u: Vec<f64> = (0..n).map(|i| 1.0 + (i % 3) as f64).collect();
        let norm2: f64 = u.iter().map(|x| x * x).sum();
        let exact: f64 = (0..n)
            .map(|j| {
                let c: f64 = (0..n).map(|i| vectors[i * n + j] * u[i]).sum();
                c * c * values[j].ln()
            })
            .sum::<f64>()
            / norm2;
        let op = Dense { n, a };
        let p = pool(2).expect("pool");
        // Two starts in one call: the second is the first doubled, so the same T.
        let starts: Vec<f64> = u.iter().flat_map(|&x| [x, 2.0 * x]).collect();
        let t = tridiagonalize(&op, &starts, 2, n, &p).expect("lanczos");
        assert_eq!(t[0].alpha.len(), n);
        assert!((quadrature(&t[0], f64::ln) - exact).abs() < 1e-12);
        for (x, y) in t[0].alpha.iter().zip(&t[1].alpha) {
            assert!((x - y).abs() < 1e-12);
        }
    }

    #[test]
    fn stops_when_the_krylov_space_is_invariant() {
        // A start that is an eigenvector: one step, β = 0.
        let n = 5;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            a[i * n + i] = 2.0;
        }
        let op = Dense { n, a };
        let p = pool(1).expect("pool");
        let t = tridiagonalize(&op, &[1.0; 5], 1, 4, &p).expect("lanczos");
        assert_eq!(t[0].alpha.len(), 1);
        assert!(t[0].beta.is_empty());
        assert!((t[0].alpha[0] - 2.0).abs() < 1e-15);
        assert!(tridiagonalize(&op, &[0.0; 5], 1, 4, &p).is_err());
    }
}
