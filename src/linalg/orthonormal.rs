//! Orthonormalisation of a block of vectors against itself and a basis, for block Lanczos:
//! Cholesky QR twice, with a Gram–Schmidt fallback that replaces dependent columns by random
//! vectors (so a block Krylov space that becomes invariant is continued safely).

use super::block::{add_mul_small, for_rows_mut, gram};
use super::cholesky::Cholesky;
use crate::error::{Error, Result};
use crate::rng::{uniform, TreeRng};
use rayon::ThreadPool;

/// Makes the columns of the `n × b` block `w` orthonormal and orthogonal to every block in
/// `basis`, returning `R` (`b × b`, row-major) with `w_old = w_new R` up to the components
/// along `basis`. Cholesky QR twice (two passes over `w` each); columns that are (numerically)
/// dependent are replaced by random vectors made orthogonal to everything, with zero rows in
/// `R`, so a block Krylov space that becomes invariant is continued safely.
pub fn orthonormalize(
    w: &mut [f64],
    b: usize,
    basis: &[Vec<f64>],
    rng: &mut TreeRng,
    pool: &ThreadPool,
) -> Result<Vec<f64>> {
    let mut r_total = identity(b);
    for _pass in 0..2 {
        let g = gram(w, b, w, b, pool);
        let scale = (0..b).map(|i| g[i * b + i]).fold(0.0, f64::max);
        let lower: Vec<f64> = (0..b).flat_map(|i| g[i * b..=i * b + i].to_vec()).collect();
        // Rᵀ R = G with R = Lᵀ; a pivot below 1e-10 of the scale marks dependent columns.
        match Cholesky::factor_above(lower, b, 1e-10 * scale, None) {
            Ok(factor) => {
                // w ← w R⁻¹: each row x solves x_new R = x, i.e. L x_newᵀ = xᵀ.
                for_rows_mut(w, b, pool, |rows| {
                    rows.chunks_exact_mut(b)
                        .for_each(|row| factor.forward_solve(row))
                });
                r_total = mul(&factor.upper_dense(), &r_total, b);
            }
            Err(_) => {
                let r = gram_schmidt_with_refill(w, b, basis, rng, pool)?;
                return Ok(mul(&r, &r_total, b));
            }
        }
    }
    Ok(r_total)
}

/// Removes from the `n × b` block `w` its components along every block of `basis` (block
/// Gram–Schmidt, two passes over all blocks) and returns, per block of `basis`, the `b × b`
/// coefficients of both passes added (`Q_iᵀ w` for the `w` given).
pub fn project_out_blocks(
    w: &mut [f64],
    b: usize,
    basis: &[Vec<f64>],
    pool: &ThreadPool,
) -> Vec<Vec<f64>> {
    let mut total = vec![vec![0.0; b * b]; basis.len()];
    for _pass in 0..2 {
        for (q, t) in basis.iter().zip(total.iter_mut()) {
            let c = gram(q, b, w, b, pool);
            add_mul_small(w, q, b, &c, b, -1.0, pool);
            t.iter_mut().zip(&c).for_each(|(t, c)| *t += c);
        }
    }
    total
}

/// Column-by-column Gram–Schmidt (twice per column) against `basis` and the earlier columns,
/// refilling dependent columns with random vectors.
pub fn gram_schmidt_with_refill(
    w: &mut [f64],
    b: usize,
    basis: &[Vec<f64>],
    rng: &mut TreeRng,
    pool: &ThreadPool,
) -> Result<Vec<f64>> {
    let n = w.len() / b;
    let mut r = vec![0.0; b * b];
    let mut done: Vec<Vec<f64>> = Vec::with_capacity(b);
    for j in 0..b {
        let mut col: Vec<f64> = w.chunks_exact(b).map(|row| row[j]).collect();
        let original = col.iter().map(|x| x * x).sum::<f64>().sqrt();
        // A dependent column is Σ_i coef_i q_i: its R column keeps those coefficients and
        // gets a zero diagonal, and a random unit vector takes its place in the basis.
        let coef = project_out(&mut col, basis, &done, b, pool);
        let mut norm = col.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm <= 1e-10 * original || norm == 0.0 {
            for _attempt in 0..8 {
                col = (0..n).map(|_| 2.0 * uniform(rng) - 1.0).collect();
                project_out(&mut col, basis, &done, b, pool);
                norm = col.iter().map(|x| x * x).sum::<f64>().sqrt();
                if norm > 1e-3 {
                    break;
                }
            }
            if norm <= 1e-3 {
                return Err(Error::InvalidInput(
                    "block Lanczos could not extend its basis (more vectors than points?)".into(),
                ));
            }
            r[j * b + j] = 0.0;
        } else {
            r[j * b + j] = norm;
        }
        for (i, c) in coef.iter().enumerate() {
            r[i * b + j] = *c;
        }
        col.iter_mut().for_each(|x| *x /= norm);
        done.push(col);
    }
    for (j, col) in done.iter().enumerate() {
        for (row, &x) in w.chunks_exact_mut(b).zip(col) {
            row[j] = x;
        }
    }
    Ok(r)
}

/// Removes from `col` its components along every column of the blocks in `basis` and along
/// the vectors `done` (twice); returns the coefficients along `done`.
fn project_out(
    col: &mut [f64],
    basis: &[Vec<f64>],
    done: &[Vec<f64>],
    b: usize,
    pool: &ThreadPool,
) -> Vec<f64> {
    let mut coef = vec![0.0; done.len()];
    for _pass in 0..2 {
        for q in basis {
            let c = gram(q, b, col, 1, pool);
            add_mul_small(col, q, b, &c, 1, -1.0, pool);
        }
        for (i, d) in done.iter().enumerate() {
            let c: f64 = d.iter().zip(col.iter()).map(|(x, y)| x * y).sum();
            col.iter_mut().zip(d).for_each(|(x, &y)| *x -= c * y);
            coef[i] += c;
        }
    }
    coef
}

pub fn identity(b: usize) -> Vec<f64> {
    let mut m = vec![0.0; b * b];
    (0..b).for_each(|i| m[i * b + i] = 1.0);
    m
}

pub fn mul(x: &[f64], y: &[f64], b: usize) -> Vec<f64> {
    let mut out = vec![0.0; b * b];
    for i in 0..b {
        for l in 0..b {
            for j in 0..b {
                out[i * b + j] += x[i * b + l] * y[l * b + j];
            }
        }
    }
    out
}
