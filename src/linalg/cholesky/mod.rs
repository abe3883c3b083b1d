//! The one Cholesky factor `A = L Lᵀ` of the crate: factored in place (here), and grown,
//! shrunk and updated by rank one in O(n²) ([`update`]); the tests, with the helpers that
//! `update`'s tests share, are in `tests` here.
//!
//! `L` is lower triangular, stored row after row (row `i` holds `L[i][0..=i]`), so appending
//! a row — the triangular solve of Balog's report, appendix D — writes at the end, and every
//! solve reads rows contiguously. Deleting row/column `p` (the report's "permute to the end
//! with Givens rotations") is the classic equivalent: drop the row and column, then restore
//! the trailing block by a rank-one update `L₃₃ L₃₃ᵀ + x xᵀ` with `x` the deleted column. Both
//! updates are sequences of Givens rotations, which this module hands back so that callers
//! can carry vectors (`L⁻¹ b`, say) through the same change in O(n).

pub mod update;

use super::{dot, not_positive_definite};
use crate::error::{Error, Result};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};
pub use update::{apply_rotations, Rotation};

/// Start of row `i` in the packed storage.
#[inline]
fn offset(i: usize) -> usize {
    i * (i + 1) / 2
}

/// Lower-triangular Cholesky factor in packed row storage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cholesky {
    n: usize,
    data: Vec<f64>,
}

impl Cholesky {
    /// The factor of a 0 × 0 matrix.
    pub fn new() -> Self {
        Self::default()
    }

    /// Factors the symmetric matrix whose lower triangle is `packed` (row-packed, as this
    /// type stores `L`), in place. Blocks of rows are solved against the finished rows on
    /// `pool` (each row by the same operations whatever the thread count).
    pub fn factor(packed: Vec<f64>, n: usize, pool: Option<&ThreadPool>) -> Result<Self> {
        Self::factor_above(packed, n, 0.0, pool)
    }

    /// [`Self::factor`], failing unless every pivot (the square of a diagonal entry of `L`)
    /// exceeds `floor`: a floor relative to the matrix's scale detects numerically dependent
    /// columns of a Gram matrix.
    pub fn factor_above(
        mut packed: Vec<f64>,
        n: usize,
        floor: f64,
        pool: Option<&ThreadPool>,
    ) -> Result<Self> {
        if packed.len() != offset(n) {
            return Err(Error::InvalidInput(format!(
                "{} packed values do not form a {n} × {n} triangle",
                packed.len()
            )));
        }
        const BLOCK: usize = 64;
        const ROWS_PER_TASK: usize = 8;
        let mut first = 0;
        while first < n {
            let last = (first + BLOCK).min(n);
            let (done, rest) = packed.split_at_mut(offset(first));
            let mut rows: Vec<&mut [f64]> = Vec::with_capacity(last - first);
            let mut rest = &mut rest[..offset(last) - offset(first)];
            for i in first..last {
                let (row, tail) = rest.split_at_mut(i + 1);
                rows.push(row);
                rest = tail;
            }
            // Columns left of the block only need the finished rows: rows are independent.
            let solve_left = |task: &mut [&mut [f64]]| {
                for j in 0..first {
                    let lj = &done[offset(j)..offset(j) + j + 1];
                    for row in task.iter_mut() {
                        let (head, at) = row.split_at_mut(j);
                        at[0] = (at[0] - dot(head, &lj[..j])) / lj[j];
                    }
                }
            };
            match pool {
                Some(pool) if first > 0 => pool.install(|| {
                    rows.par_chunks_mut(ROWS_PER_TASK).for_each(solve_left);
                }),
                _ => rows.chunks_mut(ROWS_PER_TASK).for_each(solve_left),
            }
            // The triangle inside the block, in order.
            for i in 0..rows.len() {
                let (before, after) = rows.split_at_mut(i);
                let row = &mut after[0];
                for (jb, lj) in before.iter().enumerate() {
                    let j = first + jb;
                    let (head, at) = row.split_at_mut(j);
                    at[0] = (at[0] - dot(head, &lj[..j])) / lj[j];
                }
                let i_abs = first + i;
                let (head, at) = row.split_at_mut(i_abs);
                let pivot = at[0] - dot(head, head);
                if !(pivot > floor && pivot.is_finite()) {
                    return Err(not_positive_definite(i_abs, "pivot", pivot));
                }
                at[0] = pivot.sqrt();
            }
            first = last;
        }
        Ok(Self { n, data: packed })
    }

    /// Reserves room for a factor of order `n` (so growing it does not re-allocate).
    pub fn reserve(&mut self, n: usize) {
        self.data
            .reserve_exact(offset(n).saturating_sub(self.data.len()));
    }

    /// Order of the factored matrix.
    #[inline]
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Row `i` of `L`: `L[i][0..=i]`.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[offset(i)..offset(i) + i + 1]
    }

    /// `Lᵀ` as a dense row-major matrix.
    pub fn upper_dense(&self) -> Vec<f64> {
        let n = self.n;
        let mut r = vec![0.0; n * n];
        for i in 0..n {
            for (j, &v) in self.row(i).iter().enumerate() {
                r[j * n + i] = v;
            }
        }
        r
    }

    /// log det A = 2 Σ log L_ii.
    pub fn log_det(&self) -> f64 {
        2.0 * (0..self.n)
            .map(|i| self.data[offset(i) + i].ln())
            .sum::<f64>()
    }

    /// Solves `L x = b` in place (`b.len() == dim`).
    pub fn forward_solve(&self, b: &mut [f64]) {
        for i in 0..self.n {
            let row = self.row(i);
            let (done, rest) = b.split_at_mut(i);
            rest[0] = (rest[0] - dot(&row[..i], done)) / row[i];
        }
    }

    /// Solves `Lᵀ x = b` in place (`b.len() == dim`).
    pub fn back_solve(&self, b: &mut [f64]) {
        for i in (0..self.n).rev() {
            let row = self.row(i);
            let (head, rest) = b.split_at_mut(i);
            rest[0] /= row[i];
            let xi = rest[0];
            for (bk, lk) in head.iter_mut().zip(&row[..i]) {
                *bk -= xi * lk;
            }
        }
    }

    /// Solves `A x = b` in place by the two triangular solves.
    pub fn solve(&self, b: &mut [f64]) {
        self.forward_solve(b);
        self.back_solve(b);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::parallel::pool;
    use crate::rng::{tree_rng, uniform};

    /// A random symmetric positive definite matrix, dense row-major: B Bᵀ + n I.
    pub(crate) fn random_spd(n: usize, seed: u64) -> Vec<f64> {
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

    pub(crate) fn packed_lower(a: &[f64], n: usize) -> Vec<f64> {
        (0..n)
            .flat_map(|i| a[i * n..i * n + i + 1].to_vec())
            .collect()
    }

    pub(crate) fn without(a: &[f64], n: usize, p: usize) -> Vec<f64> {
        let keep: Vec<usize> = (0..n).filter(|&i| i != p).collect();
        keep.iter()
            .flat_map(|&i| keep.iter().map(move |&j| a[i * n + j]))
            .collect()
    }

    pub(crate) fn assert_close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len());
        let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= tol * scale, "{x} vs {y}");
        }
    }

    pub(crate) fn reconstruct(l: &Cholesky) -> Vec<f64> {
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

    pub(crate) fn identity(n: usize) -> Vec<f64> {
        (0..n * n)
            .map(|k| if k % (n + 1) == 0 { 1.0 } else { 0.0 })
            .collect()
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
}
