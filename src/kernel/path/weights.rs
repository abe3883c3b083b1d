//! Row weights of the ridges on the lifetime path and the Mondrian grid's search (the kernel
//! ridge's meaning, `kernel::ridge`): row i's noise is σ²/v_i, so A = ΦᵀVΦ + αI, Φᵀy, ȳ and
//! ‖y − ȳ‖² are weighted sums, errors are weighted means, and the log evidence gains
//! ½ Σ log v_i. Without weights none of them enters the arithmetic: every sum keeps the
//! unweighted code's operations, bit for bit.

use crate::error::Result;
use crate::training_data::check_weights;
use ndarray::ArrayView1;

/// The weights of a set of rows (None: every row weighs 1), their sum and Σ log v_i.
#[derive(Debug, Clone, Default)]
pub struct Weights {
    values: Option<Vec<f64>>,
    total: f64,
    log_sum: f64,
}

impl Weights {
    /// The weights `values` of `n_rows` rows, checked (positive, finite); None: all 1.
    pub fn new(n_rows: usize, values: Option<&ArrayView1<f64>>) -> Result<Self> {
        Ok(match values {
            None => Self {
                values: None,
                total: n_rows as f64,
                log_sum: 0.0,
            },
            Some(v) => {
                check_weights(n_rows, v)?;
                Self {
                    values: Some(v.to_vec()),
                    total: v.iter().sum(),
                    log_sum: v.iter().map(|w| w.ln()).sum(),
                }
            }
        })
    }

    /// The weight of row `i`.
    #[inline]
    pub fn of(&self, i: usize) -> f64 {
        self.values.as_ref().map_or(1.0, |v| v[i])
    }

    /// The weights, None when all are 1.
    pub fn values(&self) -> Option<&[f64]> {
        self.values.as_deref()
    }

    /// Σ v_i (the number of rows without weights).
    pub fn total(&self) -> f64 {
        self.total
    }

    /// ½ Σ log v_i, the Jacobian term of the log evidence.
    pub fn half_log_sum(&self) -> f64 {
        0.5 * self.log_sum
    }

    /// The weighted mean of `y`; `plain` (the unweighted code's own mean) without weights.
    pub fn mean(&self, y: &[f64], plain: impl FnOnce() -> f64) -> f64 {
        match &self.values {
            None => plain(),
            Some(v) => v.iter().zip(y).map(|(w, y)| w * y).sum::<f64>() / self.total,
        }
    }

    /// Σ v_i y_i over the rows `rows` of `y` (all rows when None), in the order of the
    /// unweighted sum.
    pub fn sum(&self, y: &[f64], rows: Option<&[u32]>) -> f64 {
        match (&self.values, rows) {
            (None, None) => y.iter().sum(),
            (None, Some(rows)) => rows.iter().map(|&r| y[r as usize]).sum(),
            (Some(v), None) => v.iter().zip(y).map(|(w, y)| w * y).sum(),
            (Some(v), Some(rows)) => rows.iter().map(|&r| v[r as usize] * y[r as usize]).sum(),
        }
    }

    /// Σ v_i over the rows `rows` (their number without weights).
    pub fn mass(&self, rows: &[u32]) -> f64 {
        match &self.values {
            None => rows.len() as f64,
            Some(v) => rows.iter().map(|&r| v[r as usize]).sum(),
        }
    }

    /// Σ v_i e_i², for residuals (or centred targets) `e`.
    pub fn square_sum(&self, e: &[f64]) -> f64 {
        match &self.values {
            None => crate::linalg::dot(e, e),
            Some(v) => v.iter().zip(e).map(|(w, e)| w * e * e).sum(),
        }
    }

    /// Σ v_i (p_i − y_i)² / Σ v_i: the (weighted) mean squared error of predictions `p`.
    pub fn mean_squared_error(&self, p: &[f64], y: &[f64]) -> f64 {
        let squares = p.iter().zip(y).map(|(p, y)| (p - y).powi(2));
        match &self.values {
            None => squares.sum::<f64>() / y.len().max(1) as f64,
            Some(v) => squares.zip(v).map(|(e, w)| w * e).sum::<f64>() / self.total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_weights_are_the_unweighted_sums_and_bad_ones_are_refused() {
        let y = [0.3, -1.2, 2.5, 0.7];
        let ones = ndarray::Array1::from_elem(4, 1.0);
        let (plain, unit) = (
            Weights::new(4, None).expect("none"),
            Weights::new(4, Some(&ones.view())).expect("ones"),
        );
        assert_eq!(plain.total(), unit.total());
        assert_eq!(unit.half_log_sum(), 0.0);
        let p = [0.1, -1.0, 2.0, 1.0];
        assert_eq!(
            plain.mean_squared_error(&p, &y),
            unit.mean_squared_error(&p, &y)
        );
        let v = ndarray::arr1(&[2.0, 1.0, 0.5, 3.0]);
        let weighted = Weights::new(4, Some(&v.view())).expect("valid");
        let expected = (2.0 * 0.04 + 0.04 + 0.5 * 0.25 + 3.0 * 0.09) / 6.5;
        assert!((weighted.mean_squared_error(&p, &y) - expected).abs() < 1e-15);
        let bad = ndarray::arr1(&[1.0, f64::NAN, 1.0, 1.0]);
        assert!(Weights::new(4, Some(&bad.view())).is_err());
        assert!(Weights::new(3, Some(&v.view())).is_err());
    }
}
