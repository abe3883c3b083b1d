//! A Cholesky factor `A = L Lᵀ` that grows, shrinks and takes rank-one updates in O(n²).
//!
//! `L` is lower triangular, stored row after row (row `i` holds `L[i][0..=i]`), so appending
//! a row — the triangular solve of Balog's report, appendix D — writes at the end, and every
//! solve reads rows contiguously. Deleting row/column `p` (the report's "permute to the end
//! with Givens rotations") is the classic equivalent: drop the row and column, then restore
//! the trailing block by a rank-one update `L₃₃ L₃₃ᵀ + x xᵀ` with `x` the deleted column. Both
//! updates are sequences of Givens rotations, which this module hands back so that callers
//! can carry vectors (`L⁻¹ b`, say) through the same change in O(n).

use crate::error::{Error, Result};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// Start of row `i` in the packed storage.
#[inline]
fn offset(i: usize) -> usize {
    i * (i + 1) / 2
}

/// Σ a_k b_k with eight independent partial sums (so the loop vectorises).
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    (acc[0] + acc[4]) + (acc[1] + acc[5]) + (acc[2] + acc[6]) + (acc[3] + acc[7]) + tail
}

fn not_positive_definite(column: usize, pivot: f64) -> Error {
    Error::InvalidInput(format!(
        "matrix is not numerically positive definite at column {column} \
         (pivot {pivot:e}); increase the ridge parameter alpha"
    ))
}

/// One Givens rotation `(c, s)` acting on a pair `(u, v)` as `(c u + s v, c v − s u)`.
pub type Rotation = (f64, f64);

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
    pub fn factor(mut packed: Vec<f64>, n: usize, pool: Option<&ThreadPool>) -> Result<Self> {
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
                if !(pivot > 0.0 && pivot.is_finite()) {
                    return Err(not_positive_definite(i_abs, pivot));
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

    /// Appends a row and column to `A`: `cross` holds the new off-diagonal entries
    /// `A[n][0..n]` (overwritten with the new row of `L`, `L⁻¹ cross`) and `diag` is `A[n][n]`.
    pub fn append(&mut self, cross: &mut [f64], diag: f64) -> Result<()> {
        self.forward_solve(cross);
        self.push_solved(cross, diag - dot(cross, cross))
    }

    /// Appends a row whose off-diagonal part `L⁻¹ cross` is already known, with the pivot
    /// `A[n][n] − ‖L⁻¹ cross‖²`.
    pub fn push_solved(&mut self, solved: &[f64], pivot: f64) -> Result<()> {
        if solved.len() != self.n {
            return Err(Error::InvalidInput(format!(
                "a new row of a {0} × {0} factor needs {0} entries, got {1}",
                self.n,
                solved.len()
            )));
        }
        if !(pivot > 0.0 && pivot.is_finite()) {
            return Err(not_positive_definite(self.n, pivot));
        }
        self.data.extend_from_slice(solved);
        self.data.push(pivot.sqrt());
        self.n += 1;
        Ok(())
    }

    /// Factor of `A + x xᵀ` (`x.len() == dim`), by Givens rotations from the first non-zero
    /// of `x` on. The rotations used are left in `rotations` (one per row from that index on);
    /// returns that first index.
    pub fn rank_one_update(&mut self, x: &[f64], rotations: &mut Vec<Rotation>) -> usize {
        let start = x.iter().position(|&v| v != 0.0).unwrap_or(self.n);
        self.update_trailing(start, &x[start.min(x.len())..], rotations);
        start
    }

    /// Deletes row and column `p` of `A`. The deleted row of `L` (`L[p][0..=p]`) is left in
    /// `deleted`, the rotations that restored rows `p..` (new numbering) in `rotations`.
    pub fn delete(
        &mut self,
        p: usize,
        deleted: &mut Vec<f64>,
        rotations: &mut Vec<Rotation>,
    ) -> Result<()> {
        if p >= self.n {
            return Err(Error::InvalidInput(format!(
                "cannot delete column {p} of a {0} × {0} factor",
                self.n
            )));
        }
        deleted.clear();
        deleted.extend_from_slice(self.row(p));
        let mut column = Vec::with_capacity(self.n - p - 1);
        // Row i > p moves up to i − 1 and loses its entry in column p; writes never overtake
        // reads because every row starts earlier than the one it replaces.
        for i in p + 1..self.n {
            let (old, new) = (offset(i), offset(i - 1));
            column.push(self.data[old + p]);
            self.data.copy_within(old..old + p, new);
            self.data.copy_within(old + p + 1..old + i + 1, new + p);
        }
        self.n -= 1;
        self.data.truncate(offset(self.n));
        self.update_trailing(p, &column, rotations);
        Ok(())
    }

    /// Replaces rows `start..n` by the factor of `L₃₃ L₃₃ᵀ + x xᵀ` (rows processed one after
    /// another, each against all rotations found above it, so memory is read in order).
    fn update_trailing(&mut self, start: usize, x: &[f64], rotations: &mut Vec<Rotation>) {
        rotations.clear();
        for (i, &x_i) in (start..self.n).zip(x) {
            let row = &mut self.data[offset(i)..offset(i) + i + 1];
            let (body, diag) = row.split_at_mut(i);
            let mut xi = x_i;
            for (l, &(c, s)) in body[start..].iter_mut().zip(rotations.iter()) {
                let old = *l;
                *l = c * old + s * xi;
                xi = c * xi - s * old;
            }
            let old = diag[0];
            let r = (old * old + xi * xi).sqrt();
            diag[0] = r;
            rotations.push((old / r, xi / r));
        }
    }
}

/// Carries a vector through the rotations of an update: `head` holds its entries at the
/// updated rows and `tail` the entry of the column being rotated in (the deleted column, or
/// the update vector's slot). Each rotation mixes `head[k]` with `tail`.
pub fn apply_rotations(rotations: &[Rotation], head: &mut [f64], tail: &mut f64) {
    for (h, &(c, s)) in head.iter_mut().zip(rotations) {
        let v = *h;
        *h = c * v + s * *tail;
        *tail = c * *tail - s * v;
    }
}

#[cfg(test)]
mod tests;
