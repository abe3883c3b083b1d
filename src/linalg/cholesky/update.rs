//! Updates of a Cholesky factor in O(n²): appending a row and column (a triangular solve,
//! Balog's report appendix D), deleting one (the report's "permute to the end with Givens
//! rotations", done as the classic equivalent: drop the row and column, then restore the
//! trailing block by a rank-one update `L₃₃ L₃₃ᵀ + x xᵀ` with `x` the deleted column), and
//! rank-one updates. Each is a sequence of Givens rotations, handed back so that callers can
//! carry vectors (`L⁻¹ b`, say) through the same change in O(n).

use super::{offset, Cholesky};
use crate::error::{Error, Result};
use crate::linalg::{check_appended_row, dot};

/// One Givens rotation `(c, s)` acting on a pair `(u, v)` as `(c u + s v, c v − s u)`.
pub type Rotation = (f64, f64);

impl Cholesky {
    /// Appends a row and column to `A`: `cross` holds the new off-diagonal entries
    /// `A[n][0..n]` (overwritten with the new row of `L`, `L⁻¹ cross`) and `diag` is `A[n][n]`.
    pub fn append(&mut self, cross: &mut [f64], diag: f64) -> Result<()> {
        self.forward_solve(cross);
        self.push_solved(cross, diag - dot(cross, cross))
    }

    /// Appends a row whose off-diagonal part `L⁻¹ cross` is already known, with the pivot
    /// `A[n][n] − ‖L⁻¹ cross‖²`.
    pub fn push_solved(&mut self, solved: &[f64], pivot: f64) -> Result<()> {
        check_appended_row("factor", self.n, solved.len(), ("pivot", pivot))?;
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
mod tests {
    use super::*;
    use crate::linalg::cholesky::tests::{
        assert_close, identity, packed_lower, random_spd, reconstruct, without,
    };

    #[test]
    fn append_equals_factor_of_the_bordered_matrix() {
        let n = 20;
        let a = random_spd(n, 2);
        let mut l = Cholesky::new();
        for i in 0..n {
            let mut cross = a[i * n..i * n + i].to_vec();
            l.append(&mut cross, a[i * n + i]).expect("spd");
        }
        let direct = Cholesky::factor(packed_lower(&a, n), n, None).expect("spd");
        assert_close(&l.data, &direct.data, 1e-12);
    }

    #[test]
    fn delete_equals_factor_without_that_row_and_column() {
        let n = 12;
        let a = random_spd(n, 3);
        let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        for p in 0..n {
            let mut l = Cholesky::factor(packed_lower(&a, n), n, None).expect("spd");
            let mut z = b.clone();
            l.forward_solve(&mut z);
            let (mut deleted, mut rotations) = (Vec::new(), Vec::new());
            l.delete(p, &mut deleted, &mut rotations).expect("in range");
            let reduced = without(&a, n, p);
            let direct = Cholesky::factor(packed_lower(&reduced, n - 1), n - 1, None).expect("spd");
            assert_close(&l.data, &direct.data, 1e-12);
            // L⁻¹ b carried through the rotations equals the fresh solve.
            let mut zp = z.remove(p);
            apply_rotations(&rotations, &mut z[p..], &mut zp);
            let mut fresh: Vec<f64> = b
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != p)
                .map(|(_, v)| *v)
                .collect();
            direct.forward_solve(&mut fresh);
            assert_close(&z, &fresh, 1e-12);
            // The deleted column solved against the new factor: its first p entries are the
            // deleted row, the rest the carried unit vector times the deleted pivot.
            let mut g = deleted[..p].to_vec();
            let mut v = vec![0.0; n - 1 - p];
            let mut tail = 1.0;
            apply_rotations(&rotations, &mut v, &mut tail);
            g.extend(v.iter().map(|x| x * deleted[p]));
            let mut expected: Vec<f64> = (0..n).filter(|&i| i != p).map(|i| a[i * n + p]).collect();
            direct.forward_solve(&mut expected);
            assert_close(&g, &expected, 1e-12);
        }
    }

    #[test]
    fn rank_one_update_and_log_det() {
        let n = 15;
        let a = random_spd(n, 4);
        let mut x: Vec<f64> = (0..n).map(|i| ((i * 7) % 5) as f64 - 2.0).collect();
        x[..3].fill(0.0); // starts at the first non-zero
        let mut l = Cholesky::factor(packed_lower(&a, n), n, None).expect("spd");
        let start = l.rank_one_update(&x, &mut Vec::new());
        assert_eq!(start, 3);
        let mut updated = a.clone();
        for i in 0..n {
            for j in 0..n {
                updated[i * n + j] += x[i] * x[j];
            }
        }
        assert_close(&reconstruct(&l), &updated, 1e-12);
        // det(I + u uᵀ) = 1 + ‖u‖².
        let mut id = Cholesky::factor(packed_lower(&identity(n), n), n, None).expect("spd");
        id.rank_one_update(&x, &mut Vec::new());
        let expected = (1.0 + dot(&x, &x)).ln();
        assert!((id.log_det() - expected).abs() < 1e-12 * expected);
    }
}
