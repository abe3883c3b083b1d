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

use super::block::add_mul_small;
use super::operator::LinearOperator;
use super::orthonormal::{identity, orthonormalize, project_out_blocks};
use super::symeig::symmetric_eigen;
use crate::error::{Error, Result};
use crate::rng::{tree_rng, uniform};
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
            for (i, c) in project_out_blocks(&mut w, b, &basis, pool)
                .iter()
                .enumerate()
            {
                for r in 0..b {
                    for s in 0..b {
                        h[(i * b + r) * qb + j * b + s] = c[r * b + s];
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
mod tests {
    use super::*;
    use crate::linalg::operator::tests::Dense;
    use crate::parallel::pool;

    /// Settings for the top `k` pairs from blocks of `block` vectors, `depth` blocks a cycle, to
    /// a tolerance of 1e-9 with at most 10 restarts.
    fn settings(k: usize, block: usize, depth: usize) -> BlockLanczosParams {
        BlockLanczosParams {
            k,
            block,
            depth,
            tol: 1e-9,
            max_restarts: 10,
            seed: 1,
        }
    }

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
            tol: 1e-10,
            max_restarts: 50,
            seed: 3,
            ..settings(4, 6, 4)
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
        let params = settings(3, 4, 3);
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
            tol: 1e-8,
            max_restarts: 1,
            seed: 0,
            ..settings(3, 3, 2)
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
            max_restarts: 1,
            ..settings(2, 4, 3)
        };
        let res = top_eigenpairs(&op, &params, &pool(1).expect("pool")).expect("eigen");
        assert!((res.values[0] - 3.0).abs() < 1e-12 && (res.values[1] - 2.0).abs() < 1e-12);
        assert!(res.converged);
    }
}
