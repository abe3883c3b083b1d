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
use super::orthonormal::{orthonormalize, project_out_blocks};
use crate::error::{Error, Result};
use crate::rng::tree_rng;
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

/// An orthonormal basis `Q` of a block Krylov space `span{U, A U, …, A^{t−1} U}` and the
/// products `A Q`, both row-major `n × len` blocks (`len = t b`).
#[derive(Debug, Clone)]
pub struct KrylovBasis {
    pub n: usize,
    pub len: usize,
    pub q: Vec<f64>,
    pub aq: Vec<f64>,
}

/// Block Lanczos from the `n × b` start `U` with full reorthogonalisation (each new block
/// projected twice out of all earlier ones, then orthonormalised; columns that become
/// dependent are replaced by random vectors drawn from `seed`), keeping every block and its
/// product: what a Galerkin approximation on the space needs (the LOVE predictive variances,
/// Pleiss et al. 2018), where [`tridiagonalize`] keeps only `T` and
/// [`super::block_lanczos`] only the projections. Runs `t = ⌈dim / b⌉` block products (fewer
/// when `t b` would exceed `n`) and `O(n (t b)²)` for the orthogonalisation; a block of `b`
/// columns reads the operator's data once, so `b` > 1 buys dimension for less time.
pub fn krylov_basis(
    a: &dyn LinearOperator,
    start: &[f64],
    b: usize,
    dim: usize,
    seed: u64,
    pool: &ThreadPool,
) -> Result<KrylovBasis> {
    let n = a.dim();
    if b == 0 || b > n || start.len() != n * b || dim == 0 || start.iter().any(|x| !x.is_finite()) {
        return Err(Error::InvalidInput(format!(
            "a Krylov basis needs a finite {n} × b start (1 ≤ b ≤ {n}) and a dimension ≥ 1"
        )));
    }
    let blocks = dim.div_ceil(b).min(n / b).max(1);
    let mut rng = tree_rng(seed, 0);
    let mut first = start.to_vec();
    orthonormalize(&mut first, b, &[], &mut rng, pool)?;
    let mut basis = vec![first];
    let mut products = Vec::with_capacity(blocks);
    for j in 0..blocks {
        let mut w = vec![0.0; n * b];
        a.apply(&basis[j], b, &mut w, pool)?;
        if w.iter().any(|x| !x.is_finite()) {
            return Err(Error::InvalidInput(
                "the operator produced NaN or infinity".into(),
            ));
        }
        products.push(w.clone());
        if j + 1 == blocks {
            break;
        }
        project_out_blocks(&mut w, b, &basis, pool);
        orthonormalize(&mut w, b, &basis, &mut rng, pool)?;
        basis.push(w);
    }
    Ok(KrylovBasis {
        n,
        len: blocks * b,
        q: side_by_side(&basis, n, b),
        aq: side_by_side(&products, n, b),
    })
}

/// The `n × b` blocks `blocks` side by side, as one row-major `n × (b · blocks)` block.
fn side_by_side(blocks: &[Vec<f64>], n: usize, b: usize) -> Vec<f64> {
    let width = b * blocks.len();
    let mut out = vec![0.0; n * width];
    for (j, block) in blocks.iter().enumerate() {
        for (row, src) in out.chunks_exact_mut(width).zip(block.chunks_exact(b)) {
            row[j * b..(j + 1) * b].copy_from_slice(src);
        }
    }
    out
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

    #[test]
    fn krylov_basis_is_orthonormal_and_keeps_the_products() {
        let n = 40;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            a[i * n + i] = 1.0 + (i % 7) as f64;
            if i + 1 < n {
                a[i * n + i + 1] = 0.4;
                a[(i + 1) * n + i] = 0.4;
            }
        }
        let op = Dense { n, a };
        let p = pool(2).expect("pool");
        let start: Vec<f64> = (0..n * 3).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
        // 20 requested in blocks of 3: 7 blocks, 21 vectors.
        let basis = krylov_basis(&op, &start, 3, 20, 5, &p).expect("basis");
        assert_eq!(basis.len, 21);
        let l = basis.len;
        for i in 0..l {
            for j in 0..l {
                let dot: f64 = (0..n)
                    .map(|r| basis.q[r * l + i] * basis.q[r * l + j])
                    .sum();
                assert!((dot - f64::from(u8::from(i == j))).abs() < 1e-12);
            }
        }
        let mut aq = vec![0.0; n * l];
        op.apply(&basis.q, l, &mut aq, &p).expect("shapes");
        for (x, y) in aq.iter().zip(&basis.aq) {
            assert!((x - y).abs() < 1e-12);
        }
        // The first vector is the first start, normalised: the space contains the start.
        let norm: f64 = (0..n).map(|r| start[r * 3].powi(2)).sum::<f64>().sqrt();
        let along: f64 = (0..n).map(|r| basis.q[r * l] * start[r * 3] / norm).sum();
        assert!((along.abs() - 1.0).abs() < 1e-12);
        // More than n vectors cannot be orthonormal: the basis stops at n.
        let all = krylov_basis(&op, &start, 3, 100, 5, &p).expect("basis");
        assert_eq!(all.len, 39);
        assert!(krylov_basis(&op, &start[1..], 3, 4, 5, &p).is_err());
    }
}
