//! The largest eigenpairs of a symmetric operator by restarted block Lanczos with full
//! reorthogonalisation (Golub & Van Loan, §10.3; explicit restarts as in Saad, "Numerical
//! Methods for Large Eigenvalue Problems", §6.4).
//!
//! One cycle builds an orthonormal basis `Q = [Q₀ … Q_{q−1}]` of the block Krylov space of a
//! block of `b` vectors, forms `H = Qᵀ A Q` exactly (each new block is orthogonalised twice
//! against all earlier ones, and the projections are kept), and takes the Ritz pairs of `H`.
//! Because `A Q = Q H + Q_q B Eᵀ`, the residual of a Ritz pair `(θ, Q s)` is `‖B s_last‖`, with
//! `s_last` the last `b` entries of `s`: no extra product is needed to test convergence. If the
//! `k` wanted pairs have not converged, the next cycle starts from the `b` leading Ritz vectors.
//! Every block product streams the operator's data once for all `b` vectors.

use super::block::{add_mul_small, for_rows_mut, gram};
use super::operator::LinearOperator;
use super::symeig::symmetric_eigen;
use crate::error::{Error, Result};
use crate::rng::{tree_rng, uniform, TreeRng};
use rayon::ThreadPool;

/// Settings of [`top_eigenpairs`].
#[derive(Debug, Clone, Copy)]
pub struct BlockLanczosParams {
    /// Number of eigenpairs wanted.
    pub k: usize,
    /// Block size `b ≥ k` (extra vectors speed up convergence when eigenvalues cluster).
    pub block: usize,
    /// Blocks per cycle `q` (the basis holds `q·b` vectors of length `n`).
    pub depth: usize,
    /// A pair has converged when its residual is at most `tol · θ_max`.
    pub tol: f64,
    /// Cycles after the first.
    pub max_restarts: usize,
    /// Seed of the random starting block.
    pub seed: u64,
}

/// The `k` largest eigenvalues (decreasing), their unit eigenvectors (row-major `n × k`, sign
/// fixed so the largest-magnitude entry is positive), residual norms, block products used and
/// whether every residual met the tolerance.
#[derive(Debug, Clone)]
pub struct EigenResult {
    pub values: Vec<f64>,
    pub vectors: Vec<f64>,
    pub residuals: Vec<f64>,
    pub products: usize,
    pub converged: bool,
}

/// Runs restarted block Lanczos on `a` (see the module notes).
pub fn top_eigenpairs(
    a: &dyn LinearOperator,
    params: &BlockLanczosParams,
    pool: &ThreadPool,
) -> Result<EigenResult> {
    let n = a.dim();
    let k = params.k;
    if k == 0 || k > n {
        return Err(Error::InvalidParameter {
            name: "n_components",
            reason: format!("must be between 1 and the number of points ({n}), got {k}"),
        });
    }
    if !(params.tol.is_finite() && params.tol > 0.0) || params.depth == 0 {
        return Err(Error::InvalidParameter {
            name: "tol",
            reason: "tol must be positive and depth at least 1".into(),
        });
    }
    let b = params.block.max(k);
    // The basis and the next block must fit in Rⁿ; a problem that small is solved densely.
    if b * (params.depth + 1) > n {
        return dense_eigenpairs(a, k, pool);
    }
    let depth = params.depth;
    let mut rng = tree_rng(params.seed, 0);
    let mut start: Vec<f64> = (0..n * b).map(|_| 2.0 * uniform(&mut rng) - 1.0).collect();
    orthonormalize(&mut start, b, &[], &mut rng, pool)?;
    let mut products = 0;
    for restart in 0..=params.max_restarts {
        let mut basis = vec![std::mem::take(&mut start)];
        let qb = depth * b;
        let mut h = vec![0.0; qb * qb];
        let mut last_b = vec![0.0; b * b];
        for j in 0..depth {
            let mut w = vec![0.0; n * b];
            a.apply(&basis[j], b, &mut w, pool)?;
            products += 1;
            // Two passes of block Gram–Schmidt; H's column block j is the sum of both
            // projections, so H = Qᵀ A Q holds to rounding even as W loses orthogonality.
            for _pass in 0..2 {
                for (i, q) in basis.iter().enumerate() {
                    let c = gram(q, b, &w, b, pool);
                    add_mul_small(&mut w, q, b, &c, b, -1.0, pool);
                    for r in 0..b {
                        for s in 0..b {
                            h[(i * b + r) * qb + j * b + s] += c[r * b + s];
                        }
                    }
                }
            }
            let r = orthonormalize(&mut w, b, &basis, &mut rng, pool)?;
            if j + 1 < depth {
                for r_i in 0..b {
                    for s in 0..b {
                        h[((j + 1) * b + r_i) * qb + j * b + s] = r[r_i * b + s];
                    }
                }
                basis.push(w);
            } else {
                last_b = r;
            }
        }
        // Symmetrise: the upper blocks come from projections, the sub-diagonal from R.
        let mut sym = vec![0.0; qb * qb];
        for r in 0..qb {
            for c in 0..qb {
                sym[r * qb + c] = 0.5 * (h[r * qb + c] + h[c * qb + r]);
            }
        }
        let (theta, s) = symmetric_eigen(&sym, qb)?;
        let top = theta
            .first()
            .copied()
            .unwrap_or(0.0)
            .abs()
            .max(f64::MIN_POSITIVE);
        let residuals: Vec<f64> = (0..b)
            .map(|col| {
                (0..b)
                    .map(|r| {
                        (0..b)
                            .map(|l| last_b[r * b + l] * s[((depth - 1) * b + l) * qb + col])
                            .sum::<f64>()
                            .powi(2)
                    })
                    .sum::<f64>()
                    .sqrt()
            })
            .collect();
        let converged = residuals[..k].iter().all(|&r| r <= params.tol * top);
        // Ritz vectors Y = Σ_j Q_j S_j (leading b columns).
        let mut ritz = vec![0.0; n * b];
        for (j, q) in basis.iter().enumerate() {
            let sj: Vec<f64> = (0..b)
                .flat_map(|r| (0..b).map(move |c| (j * b + r, c)))
                .map(|(row, c)| s[row * qb + c])
                .collect();
            add_mul_small(&mut ritz, q, b, &sj, b, 1.0, pool);
        }
        if converged || restart == params.max_restarts {
            let mut vectors = super::block::select_cols(&ritz, b, &(0..k).collect::<Vec<_>>());
            fix_signs(&mut vectors, k);
            return Ok(EigenResult {
                values: theta[..k].to_vec(),
                vectors,
                residuals: residuals[..k].to_vec(),
                products,
                converged,
            });
        }
        drop(basis);
        orthonormalize(&mut ritz, b, &[], &mut rng, pool)?;
        start = ritz;
    }
    Err(Error::InvalidInput("block Lanczos ran no cycle".into()))
}

/// All eigenpairs of a small operator from its dense matrix (`A I`, one block product).
fn dense_eigenpairs(a: &dyn LinearOperator, k: usize, pool: &ThreadPool) -> Result<EigenResult> {
    let n = a.dim();
    let mut matrix = vec![0.0; n * n];
    a.apply(&identity(n), n, &mut matrix, pool)?;
    let sym: Vec<f64> = (0..n * n)
        .map(|i| 0.5 * (matrix[i] + matrix[(i % n) * n + i / n]))
        .collect();
    let (values, vectors) = symmetric_eigen(&sym, n)?;
    let mut top = super::block::select_cols(&vectors, n, &(0..k).collect::<Vec<_>>());
    fix_signs(&mut top, k);
    Ok(EigenResult {
        values: values[..k].to_vec(),
        vectors: top,
        residuals: vec![0.0; k],
        products: 1,
        converged: true,
    })
}

/// Makes the columns of the `n × b` block `w` orthonormal and orthogonal to every block in
/// `basis`, returning `R` (`b × b`, row-major) with `w_old = w_new R` up to the components
/// along `basis`. Cholesky QR twice (two passes over `w` each); columns that are (numerically)
/// dependent are replaced by random vectors made orthogonal to everything, with zero rows in
/// `R`, so a block Krylov space that becomes invariant is continued safely.
fn orthonormalize(
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
        match cholesky(&g, b, scale) {
            Some(r) => {
                solve_right_upper(w, &r, b, pool);
                r_total = mul(&r, &r_total, b);
            }
            None => {
                let r = gram_schmidt_with_refill(w, b, basis, rng, pool)?;
                return Ok(mul(&r, &r_total, b));
            }
        }
    }
    Ok(r_total)
}

/// Column-by-column Gram–Schmidt (twice per column) against `basis` and the earlier columns,
/// refilling dependent columns with random vectors.
fn gram_schmidt_with_refill(
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

/// Upper-triangular `R` with `Rᵀ R = g`, or `None` if a pivot falls below `1e-10 · scale`
/// (the columns are numerically dependent).
fn cholesky(g: &[f64], b: usize, scale: f64) -> Option<Vec<f64>> {
    let mut r = vec![0.0; b * b];
    for i in 0..b {
        let d = g[i * b + i] - (0..i).map(|l| r[l * b + i] * r[l * b + i]).sum::<f64>();
        if d.is_nan() || d <= 1e-10 * scale || !d.is_finite() {
            return None;
        }
        let d = d.sqrt();
        r[i * b + i] = d;
        for j in i + 1..b {
            let v = g[i * b + j] - (0..i).map(|l| r[l * b + i] * r[l * b + j]).sum::<f64>();
            r[i * b + j] = v / d;
        }
    }
    Some(r)
}

/// `w ← w R⁻¹` row by row (forward substitution with the upper-triangular `R`).
fn solve_right_upper(w: &mut [f64], r: &[f64], b: usize, pool: &ThreadPool) {
    for_rows_mut(w, b, pool, |rows| {
        for row in rows.chunks_exact_mut(b) {
            for j in 0..b {
                let v = row[j] - (0..j).map(|i| row[i] * r[i * b + j]).sum::<f64>();
                row[j] = v / r[j * b + j];
            }
        }
    });
}

fn identity(b: usize) -> Vec<f64> {
    let mut m = vec![0.0; b * b];
    (0..b).for_each(|i| m[i * b + i] = 1.0);
    m
}

fn mul(x: &[f64], y: &[f64], b: usize) -> Vec<f64> {
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

/// Flips each column so that its largest-magnitude entry (the first, on ties) is positive.
fn fix_signs(v: &mut [f64], k: usize) {
    for j in 0..k {
        let mut best = 0.0f64;
        let mut sign = 1.0;
        for row in v.chunks_exact(k) {
            if row[j].abs() > best {
                best = row[j].abs();
                sign = row[j].signum();
            }
        }
        if sign < 0.0 {
            v.chunks_exact_mut(k).for_each(|row| row[j] = -row[j]);
        }
    }
}

#[cfg(test)]
mod tests;
