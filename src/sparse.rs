//! Compressed sparse row (CSR) matrices, built straight into the three arrays scipy's
//! `csr_matrix((data, indices, indptr))` takes, so features cross to Python without a copy
//! into another layout.

use crate::error::{Error, Result};

/// An `n_rows × n_cols` CSR matrix: row `i` holds the columns
/// `indices[indptr[i]..indptr[i + 1]]` with values `data[..]` at the same places.
#[derive(Debug, Clone, PartialEq)]
pub struct Csr {
    pub n_rows: usize,
    pub n_cols: usize,
    pub indptr: Vec<i64>,
    pub indices: Vec<i32>,
    pub data: Vec<f64>,
}

impl Csr {
    /// A matrix with exactly `per_row` stored entries in every row, given row-major as
    /// `(column, value)` pairs (`entries.len() == n_rows * per_row`). Columns must lie below
    /// `n_cols`, which must fit scipy's 32-bit index type.
    pub fn with_fixed_row_length(
        n_cols: usize,
        per_row: usize,
        entries: &[(u32, f64)],
    ) -> Result<Self> {
        if n_cols > i32::MAX as usize {
            return Err(Error::InvalidInput(format!(
                "{n_cols} columns exceed the 32-bit sparse index range"
            )));
        }
        if per_row == 0 || !entries.len().is_multiple_of(per_row) {
            return Err(Error::InvalidInput(format!(
                "{} entries do not form rows of {per_row}",
                entries.len()
            )));
        }
        if let Some(&(bad, _)) = entries.iter().find(|(c, _)| *c as usize >= n_cols) {
            return Err(Error::InvalidInput(format!(
                "column {bad} out of range for {n_cols} columns"
            )));
        }
        let n_rows = entries.len() / per_row;
        Ok(Self {
            n_rows,
            n_cols,
            indptr: (0..=n_rows).map(|i| (i * per_row) as i64).collect(),
            indices: entries.iter().map(|&(c, _)| c as i32).collect(),
            data: entries.iter().map(|&(_, v)| v).collect(),
        })
    }

    /// Dense row-major copy, for tests that compare against a dense computation.
    #[cfg(test)]
    pub fn to_dense(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.n_rows * self.n_cols];
        for i in 0..self.n_rows {
            for k in self.indptr[i] as usize..self.indptr[i + 1] as usize {
                out[i * self.n_cols + self.indices[k] as usize] += self.data[k];
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_rows_round_trip() {
        let entries = [(0, 1.0), (2, 0.5), (1, 2.0), (2, 3.0)];
        let m = Csr::with_fixed_row_length(3, 2, &entries).expect("valid");
        assert_eq!(m.indptr, vec![0, 2, 4]);
        assert_eq!(m.to_dense(), vec![1.0, 0.0, 0.5, 0.0, 2.0, 3.0]);
        assert!(Csr::with_fixed_row_length(2, 2, &entries).is_err());
        assert!(Csr::with_fixed_row_length(3, 3, &entries).is_err());
    }
}
