//! Preconditioned conjugate gradients for `A X = B` with several right-hand sides at once.
//!
//! Every column runs its own recurrence (its own step lengths), but the columns still active
//! share each operator application, so an operator that streams its data once per call (the
//! partition kernel's labels) reads it once per iteration for all of them. A column stops when
//! its residual satisfies `‖r‖₂ ≤ tol · ‖b‖₂`; the remaining columns are compacted so finished
//! ones cost nothing.

use super::block::{col_dots, put_cols, select_cols, zip_rows};
use super::operator::LinearOperator;
use crate::error::{Error, Result};
use rayon::ThreadPool;

/// Outcome of [`solve`]: the solutions and, per column, the iterations run, the final relative
/// residual `‖b − A x‖₂ / ‖b‖₂` (as tracked by the recurrence) and whether it reached `tol`.
#[derive(Debug, Clone)]
pub struct CgResult {
    pub x: Vec<f64>,
    pub iterations: Vec<usize>,
    pub relative_residual: Vec<f64>,
    pub converged: Vec<bool>,
}

/// Solves `A X = B` for the row-major `n × k` block `b` by preconditioned CG, `precond`
/// applying an approximation of `A⁻¹` (symmetric positive definite, like `A`), starting from
/// `x0` (a warm start, `n × k`; columns it already solves to `tol` take no iteration) or 0.
#[allow(clippy::too_many_arguments)]
pub fn solve(
    a: &dyn LinearOperator,
    precond: &dyn LinearOperator,
    b: &[f64],
    k: usize,
    x0: Option<&[f64]>,
    tol: f64,
    max_iter: usize,
    pool: &ThreadPool,
) -> Result<CgResult> {
    let n = a.dim();
    if k == 0 || b.len() != n * k || precond.dim() != n || x0.is_some_and(|x| x.len() != n * k) {
        return Err(Error::InvalidInput(format!(
            "right-hand sides (and a start) must be {n} × k with k ≥ 1, got {} values",
            b.len()
        )));
    }
    if !(tol.is_finite() && tol > 0.0) {
        return Err(Error::InvalidParameter {
            name: "tol",
            reason: format!("must be a positive number, got {tol}"),
        });
    }
    let b_norm: Vec<f64> = col_dots(b, b, k, pool).iter().map(|v| v.sqrt()).collect();
    let mut result = CgResult {
        x: vec![0.0; n * k],
        iterations: vec![0; k],
        relative_residual: vec![0.0; k],
        converged: vec![true; k],
    };
    // Columns still running; a zero right-hand side is solved by x = 0.
    let mut cols: Vec<usize> = (0..k).filter(|&j| b_norm[j] > 0.0).collect();
    if cols.is_empty() {
        return Ok(result);
    }
    for &j in &cols {
        result.relative_residual[j] = 1.0;
        result.converged[j] = false;
    }
    let mut kc = cols.len();
    let mut x = vec![0.0; n * kc];
    let mut r = select_cols(b, k, &cols);
    if let Some(x0) = x0 {
        x = select_cols(x0, k, &cols);
        let mut ax = vec![0.0; n * kc];
        a.apply(&x, kc, &mut ax, pool)?;
        zip_rows(&mut r, kc, &ax, kc, pool, |r, ax| {
            r.iter_mut().zip(ax).for_each(|(r, ax)| *r -= ax)
        });
        let rr = col_dots(&r, &r, kc, pool);
        let done: Vec<usize> = (0..kc)
            .filter(|&j| rr[j].sqrt() / b_norm[cols[j]] <= tol)
            .collect();
        for &j in &done {
            let c = cols[j];
            result.relative_residual[c] = rr[j].sqrt() / b_norm[c];
            result.converged[c] = true;
        }
        if !done.is_empty() {
            let targets: Vec<usize> = done.iter().map(|&j| cols[j]).collect();
            put_cols(&mut result.x, k, &select_cols(&x, kc, &done), &targets);
        }
        let keep: Vec<usize> = (0..kc).filter(|j| !done.contains(j)).collect();
        if keep.is_empty() {
            return Ok(result);
        }
        x = select_cols(&x, kc, &keep);
        r = select_cols(&r, kc, &keep);
        cols = keep.iter().map(|&j| cols[j]).collect();
        kc = cols.len();
    }
    let mut z = vec![0.0; n * kc];
    precond.apply(&r, kc, &mut z, pool)?;
    let mut p = z.clone();
    let mut q = vec![0.0; n * kc];
    let mut rz = col_dots(&r, &z, kc, pool);
    for iteration in 1..=max_iter {
        a.apply(&p, kc, &mut q, pool)?;
        let pq = col_dots(&p, &q, kc, pool);
        // A breakdown (pᵀAp ≤ 0 or not finite: A is not positive definite, or overflow)
        // stops that column; it is reported as not converged.
        let alpha: Vec<f64> = (0..kc)
            .map(|j| {
                if pq[j] > 0.0 && pq[j].is_finite() {
                    rz[j] / pq[j]
                } else {
                    0.0
                }
            })
            .collect();
        let broken: Vec<bool> = alpha.iter().map(|&a| a == 0.0).collect();
        zip_rows(&mut x, kc, &p, kc, pool, |x, p| {
            axpy_rows(x, p, &alpha, 1.0, kc)
        });
        zip_rows(&mut r, kc, &q, kc, pool, |r, q| {
            axpy_rows(r, q, &alpha, -1.0, kc)
        });
        let rr = col_dots(&r, &r, kc, pool);
        let mut done = vec![false; kc];
        for j in 0..kc {
            let c = cols[j];
            result.iterations[c] = iteration;
            result.relative_residual[c] = rr[j].sqrt() / b_norm[c];
            result.converged[c] = result.relative_residual[c] <= tol;
            done[j] = result.converged[c] || broken[j];
        }
        if done.iter().any(|&d| d) || iteration == max_iter {
            let finished: Vec<usize> = (0..kc)
                .filter(|&j| done[j] || iteration == max_iter)
                .collect();
            let targets: Vec<usize> = finished.iter().map(|&j| cols[j]).collect();
            put_cols(&mut result.x, k, &select_cols(&x, kc, &finished), &targets);
            let keep: Vec<usize> = (0..kc).filter(|&j| !done[j]).collect();
            if keep.is_empty() || iteration == max_iter {
                break;
            }
            x = select_cols(&x, kc, &keep);
            r = select_cols(&r, kc, &keep);
            p = select_cols(&p, kc, &keep);
            rz = keep.iter().map(|&j| rz[j]).collect();
            cols = keep.iter().map(|&j| cols[j]).collect();
            kc = cols.len();
            z.truncate(n * kc);
            q.truncate(n * kc);
        }
        precond.apply(&r, kc, &mut z, pool)?;
        let rz_new = col_dots(&r, &z, kc, pool);
        let beta: Vec<f64> = (0..kc)
            .map(|j| if rz[j] != 0.0 { rz_new[j] / rz[j] } else { 0.0 })
            .collect();
        rz = rz_new;
        zip_rows(&mut p, kc, &z, kc, pool, |p, z| {
            for (rp, rzr) in p.chunks_exact_mut(kc).zip(z.chunks_exact(kc)) {
                for ((pv, &zv), &bj) in rp.iter_mut().zip(rzr).zip(&beta) {
                    *pv = zv + bj * *pv;
                }
            }
        });
    }
    Ok(result)
}

/// `y[:, j] += sign · alpha[j] · x[:, j]` on a chunk of rows.
fn axpy_rows(y: &mut [f64], x: &[f64], alpha: &[f64], sign: f64, k: usize) {
    for (ry, rx) in y.chunks_exact_mut(k).zip(x.chunks_exact(k)) {
        for ((yv, &xv), &a) in ry.iter_mut().zip(rx).zip(alpha) {
            *yv += sign * a * xv;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::operator::tests::Dense;
    use crate::linalg::operator::{Identity, InverseDiagonal};
    use crate::parallel::pool;

    /// A random SPD matrix `G Gᵀ + shift I` with a spread-out diagonal.
    fn spd(n: usize, shift: f64, seed: u64) -> Dense {
        let mut rng = crate::rng::tree_rng(seed, 0);
        let g: Vec<f64> = (0..n * n)
            .map(|_| crate::rng::uniform(&mut rng) - 0.5)
            .collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n).map(|l| g[i * n + l] * g[j * n + l]).sum::<f64>();
            }
            a[i * n + i] += shift * (1.0 + 10.0 * i as f64);
        }
        Dense { n, a }
    }

    #[test]
    fn solves_every_column_to_tolerance() {
        let n = 40;
        let a = spd(n, 0.5, 1);
        let k = 3;
        let mut rng = crate::rng::tree_rng(2, 0);
        let mut b: Vec<f64> = (0..n * k).map(|_| crate::rng::uniform(&mut rng)).collect();
        // A zero column is solved at once.
        for row in b.chunks_exact_mut(k) {
            row[1] = 0.0;
        }
        let p = pool(2).expect("pool");
        let res = solve(&a, &Identity(n), &b, k, None, 1e-10, 500, &p).expect("solve");
        assert!(res.converged.iter().all(|&c| c));
        let mut ax = vec![0.0; n * k];
        a.apply(&res.x, k, &mut ax, &p).expect("shapes");
        for j in 0..k {
            let err: f64 = (0..n).map(|i| (ax[i * k + j] - b[i * k + j]).powi(2)).sum();
            let norm: f64 = (0..n).map(|i| b[i * k + j].powi(2)).sum();
            assert!(err.sqrt() <= 1e-9 * norm.sqrt().max(1.0), "column {j}");
        }
        assert_eq!(res.iterations[1], 0);
        // Jacobi helps on this badly scaled diagonal.
        let diag: Vec<f64> = (0..n).map(|i| a.a[i * n + i]).collect();
        let jac = InverseDiagonal::new(&diag).expect("positive");
        let pre = solve(&a, &jac, &b, k, None, 1e-10, 500, &p).expect("solve");
        assert!(pre.iterations[0] < res.iterations[0]);
    }

    #[test]
    fn reports_non_convergence() {
        let n = 30;
        let a = spd(n, 1e-3, 3);
        let b = vec![1.0; n];
        let p = pool(1).expect("pool");
        let res = solve(&a, &Identity(n), &b, 1, None, 1e-14, 2, &p).expect("solve");
        assert!(!res.converged[0]);
        assert_eq!(res.iterations[0], 2);
        assert!(res.relative_residual[0] > 1e-14);
        assert!(solve(&a, &Identity(n), &b, 1, None, -1.0, 2, &p).is_err());
        assert!(solve(&a, &Identity(n), &b[1..], 1, None, 1e-3, 2, &p).is_err());
    }

    #[test]
    fn a_warm_start_continues_where_it_stopped() {
        let n = 30;
        let a = spd(n, 0.1, 4);
        let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        let p = pool(1).expect("pool");
        let first = solve(&a, &Identity(n), &b, 1, None, 1e-12, 5, &p).expect("solve");
        let rest = solve(&a, &Identity(n), &b, 1, Some(&first.x), 1e-12, 500, &p).expect("solve");
        assert!(rest.converged[0] && rest.iterations[0] > 0);
        let exact = solve(&a, &Identity(n), &b, 1, None, 1e-12, 500, &p).expect("solve");
        for (u, v) in rest.x.iter().zip(&exact.x) {
            assert!((u - v).abs() <= 1e-9 * (1.0 + v.abs()));
        }
        // Started at the solution: no iteration.
        let again = solve(&a, &Identity(n), &b, 1, Some(&exact.x), 1e-6, 500, &p).expect("solve");
        assert_eq!((again.iterations[0], again.converged[0]), (0, true));
        assert_eq!(again.x, exact.x);
    }
}
