//! Row weights (scikit-learn's `sample_weight`) of a forest model's training points, read as
//! frequencies: a row of weight w counts as w copies of itself in every statistic the models
//! keep — leaf sums and class counts, the label-guided cuts' impurities, the noise estimate,
//! the evidence — so integer weights equal repeated rows. The trees' shapes depend on the
//! rows' positions only (a copy adds no extent), and `min_samples_split` counts rows, as
//! scikit-learn's does.

use crate::error::Result;
use crate::training_data::check_weights;
use ndarray::ArrayView1;
use serde::{Deserialize, Serialize};

/// The weight of every stored row; empty while every row weighs 1 (nothing stored then).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RowWeights(Vec<f64>);

impl RowWeights {
    /// The weight of row `row`.
    #[inline]
    pub fn of(&self, row: u32) -> f64 {
        self.0.get(row as usize).copied().unwrap_or(1.0)
    }

    /// The weights of `n_rows` rows (`None`: 1 each), checked ([`check_weights`]).
    pub fn checked(n_rows: usize, weights: Option<&ArrayView1<f64>>) -> Result<Self> {
        if let Some(w) = weights {
            check_weights(n_rows, w)?;
        }
        let mut out = Self::default();
        out.append(0, n_rows, weights);
        Ok(out)
    }

    /// The stored weights, `None` when every row weighs 1.
    pub fn values(&self) -> Option<&[f64]> {
        (!self.0.is_empty()).then_some(self.0.as_slice())
    }

    /// Whether every row weighs 1.
    pub fn are_unit(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends the weights of `n_new` rows after `n_rows` stored ones (`None`: 1 each); they
    /// must have passed [`check_weights`].
    pub fn append(&mut self, n_rows: usize, n_new: usize, new: Option<&ArrayView1<f64>>) {
        match new {
            Some(w) if !(self.are_unit() && w.iter().all(|&v| v == 1.0)) => {
                if self.are_unit() {
                    self.0.resize(n_rows, 1.0);
                }
                self.0.extend(w.iter());
            }
            _ if !self.are_unit() => self.0.resize(n_rows + n_new, 1.0),
            _ => {}
        }
    }

    /// Σ of the weights of `n_rows` rows.
    pub fn total(&self, n_rows: usize) -> f64 {
        if self.are_unit() {
            n_rows as f64
        } else {
            self.0.iter().sum()
        }
    }

    /// Checks deserialised weights of `n_rows` rows.
    pub fn is_consistent(&self, n_rows: usize) -> bool {
        self.are_unit()
            || (self.0.len() == n_rows && check_weights(n_rows, &ArrayView1::from(&self.0)).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn unit_weights_store_nothing_and_others_fill_in_ones() {
        let mut w = RowWeights::default();
        w.append(0, 3, Some(&array![1.0, 1.0, 1.0].view()));
        w.append(3, 2, None);
        assert!(w.are_unit() && w.total(5) == 5.0 && w.of(4) == 1.0);
        w.append(5, 2, Some(&array![2.0, 0.5].view()));
        w.append(7, 1, None);
        assert_eq!(w.0, vec![1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 0.5, 1.0]);
        assert_eq!((w.of(5), w.of(6), w.total(8)), (2.0, 0.5, 8.5));
        assert!(w.is_consistent(8) && !w.is_consistent(7));
        assert!(check_weights(2, &array![1.0, 0.0].view()).is_err());
        assert!(check_weights(2, &array![1.0].view()).is_err());
        assert!(check_weights(1, &array![f64::NAN].view()).is_err());
    }
}
