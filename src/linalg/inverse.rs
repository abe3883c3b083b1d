//! An explicitly maintained inverse `B = A⁻¹` of a symmetric positive definite matrix, with
//! the block-inverse updates of Balog's report §4.2: appending a row/column (Schur
//! complement), deleting one (rank-one correction). O(n²) each, like the Cholesky route, but
//! weights come from one matrix–vector product instead of two triangular solves. Kept as an
//! option and as a cross-check; the Cholesky factor is the numerically safer default.

use super::{check_appended_row, dot};
use crate::error::{Error, Result};

/// `A⁻¹` in full (both triangles) row-major storage with a row stride of `cap`, plus
/// `log det A`, updated alongside.
#[derive(Debug, Clone, Default)]
pub struct SymmetricInverse {
    n: usize,
    cap: usize,
    data: Vec<f64>,
    log_det: f64,
}

impl SymmetricInverse {
    /// The inverse of a 0 × 0 matrix with room for `cap` rows before re-allocating.
    pub fn with_capacity(cap: usize) -> Self {
        Self {
            n: 0,
            cap,
            data: vec![0.0; cap * cap],
            log_det: 0.0,
        }
    }

    /// Order of the matrix.
    #[inline]
    pub fn dim(&self) -> usize {
        self.n
    }

    /// log det A.
    #[inline]
    pub fn log_det(&self) -> f64 {
        self.log_det
    }

    /// Row `i` of `A⁻¹`.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.cap..i * self.cap + self.n]
    }

    /// `out = A⁻¹ x`.
    pub fn apply(&self, x: &[f64], out: &mut [f64]) {
        for (i, o) in out.iter_mut().enumerate().take(self.n) {
            *o = dot(self.row(i), x);
        }
    }

    /// Appends `A[n][0..n] = cross`, `A[n][n] = diag`.
    pub fn append(&mut self, cross: &[f64], diag: f64) -> Result<()> {
        let mut u = vec![0.0; self.n];
        self.apply(cross, &mut u);
        let schur = diag - dot(cross, &u);
        self.append_with(&u, schur)
    }

    /// Appends a row/column whose `u = A⁻¹ cross` and Schur complement
    /// `s = diag − crossᵀ u` are already known:
    /// `A'⁻¹ = [[A⁻¹ + u uᵀ/s, −u/s], [−uᵀ/s, 1/s]]` and `log det A' = log det A + log s`.
    pub fn append_with(&mut self, u: &[f64], schur: f64) -> Result<()> {
        check_appended_row("inverse", self.n, u.len(), ("Schur complement", schur))?;
        if self.n == self.cap {
            self.grow((2 * self.cap).max(16));
        }
        let (n, cap) = (self.n, self.cap);
        for i in 0..n {
            let scale = u[i] / schur;
            let row = &mut self.data[i * cap..i * cap + n + 1];
            for (b, uj) in row[..n].iter_mut().zip(u) {
                *b += scale * uj;
            }
            row[n] = -scale;
        }
        for (j, uj) in u.iter().enumerate() {
            self.data[n * cap + j] = -uj / schur;
        }
        self.data[n * cap + n] = 1.0 / schur;
        self.n += 1;
        self.log_det += schur.ln();
        Ok(())
    }

    /// Deletes row/column `p`: the last row/column moves into slot `p`, then
    /// `A'⁻¹ = B₋ − b bᵀ/β` with `b` the deleted column of `A⁻¹` (without its diagonal) and
    /// `β` its diagonal; `log det A' = log det A + log β`. Returns `(b, β)` in the new order.
    pub fn delete(&mut self, p: usize) -> Result<(Vec<f64>, f64)> {
        if p >= self.n {
            return Err(Error::InvalidInput(format!(
                "cannot delete column {p} of a {0} × {0} inverse",
                self.n
            )));
        }
        let (last, cap) = (self.n - 1, self.cap);
        // Symmetric swap of p and last, so the deleted one is last.
        if p != last {
            for i in 0..self.n {
                self.data.swap(i * cap + p, i * cap + last);
            }
            for j in 0..self.n {
                self.data.swap(p * cap + j, last * cap + j);
            }
        }
        let b: Vec<f64> = self.data[last * cap..last * cap + last].to_vec();
        let beta = self.data[last * cap + last];
        for i in 0..last {
            let scale = b[i] / beta;
            for (x, bj) in self.data[i * cap..i * cap + last].iter_mut().zip(&b) {
                *x -= scale * bj;
            }
        }
        self.n = last;
        self.log_det += beta.ln();
        Ok((b, beta))
    }

    fn grow(&mut self, cap: usize) {
        let mut data = vec![0.0; cap * cap];
        for i in 0..self.n {
            data[i * cap..i * cap + self.n].copy_from_slice(self.row(i));
        }
        self.data = data;
        self.cap = cap;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(n: usize) -> Vec<f64> {
        // Diagonally dominant, symmetric.
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = 1.0 / (1.0 + (i as f64 - j as f64).abs());
            }
            a[i * n + i] += 1.0;
        }
        a
    }

    #[test]
    fn append_and_delete_match_the_true_inverse() {
        let n = 10;
        let a = matrix(n);
        let mut inv = SymmetricInverse::with_capacity(2);
        for i in 0..n {
            inv.append(&a[i * n..i * n + i], a[i * n + i]).expect("spd");
        }
        // A · A⁻¹ = I.
        for i in 0..n {
            for j in 0..n {
                let v: f64 = (0..n).map(|k| a[i * n + k] * inv.row(k)[j]).sum();
                assert!((v - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
        }
        let full_log_det = inv.log_det();
        let (b, beta) = inv.delete(3).expect("in range");
        assert_eq!(b.len(), n - 1);
        // The order is now 0,1,2,9,4,..,8: check against that permutation of A.
        let order: Vec<usize> = vec![0, 1, 2, 9, 4, 5, 6, 7, 8];
        for (r, &i) in order.iter().enumerate() {
            let a_row: Vec<f64> = order.iter().map(|&k| a[i * n + k]).collect();
            let mut product = vec![0.0; n - 1];
            inv.apply(&a_row, &mut product); // (A⁻¹ a_row) = row r of the identity
            for (c, v) in product.iter().enumerate() {
                assert!((v - if r == c { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
        }
        assert!((inv.log_det() - (full_log_det + beta.ln())).abs() < 1e-12);
        assert!(inv.delete(n).is_err());
        assert!(inv.append_with(&[1.0], 1.0).is_err());
        assert!(inv.append(&vec![0.0; n - 1], -1.0).is_err());
    }
}
