//! The checks every model makes on its training data before using it: the box of the rows
//! (finite, with a linear dimension the Mondrian's arithmetic keeps finite), the targets (one
//! finite value per row, not too large to square) and the row weights (scikit-learn's
//! `sample_weight`: positive, finite, not too large to sum).

use crate::error::{Error, Result};
use crate::mondrian::MondrianTree;
use ndarray::ArrayView1;

/// The largest linear dimension (sum of the features' ranges) of the data box: sums and
/// differences of a few such extents must stay finite (1e308 overflowed to NaN predictions).
const MAX_LINEAR_DIMENSION: f64 = 1e300;

/// The box of the rows added so far (none: +∞ lower, −∞ upper bounds).
pub(crate) struct RowsBox {
    pub(crate) lower: Vec<f64>,
    pub(crate) upper: Vec<f64>,
}

impl RowsBox {
    pub(crate) fn new(d: usize) -> Self {
        Self {
            lower: vec![f64::INFINITY; d],
            upper: vec![f64::NEG_INFINITY; d],
        }
    }

    pub(crate) fn add_rows(&mut self, rows: &[f64]) {
        for row in rows.chunks_exact(self.lower.len()) {
            for ((l, u), &v) in self.lower.iter_mut().zip(self.upper.iter_mut()).zip(row) {
                (*l, *u) = (l.min(v), u.max(v));
            }
        }
    }
}

/// Errors unless the box of `fitted`'s points (its root box) and the rows `new` (`d` wide) has
/// a finite range in every feature and a linear dimension of at most
/// `MAX_LINEAR_DIMENSION`: a block's split rate is the sum of its ranges, and an infinite
/// one would cut at time 0 whatever the lifetime and turn every later quantity into NaN.
pub fn check_data_box(fitted: Option<&MondrianTree>, new: &[f64], d: usize) -> Result<()> {
    let mut new_box = RowsBox::new(d);
    new_box.add_rows(new);
    check_box_of(fitted, &new_box.lower, &new_box.upper)
}

/// [`check_data_box`] for new rows given by their box (`new_lower`, `new_upper`; an empty
/// box has a lower bound above its upper one).
pub(crate) fn check_box_of(
    fitted: Option<&MondrianTree>,
    new_lower: &[f64],
    new_upper: &[f64],
) -> Result<()> {
    let d = new_lower.len();
    let already = if fitted.is_none() {
        ""
    } else {
        " with the points already fitted"
    };
    let mut total = 0.0;
    for k in 0..d {
        let (mut lo, mut hi) = fitted.map_or((f64::INFINITY, f64::NEG_INFINITY), |t| {
            (t.lower(t.root)[k], t.upper(t.root)[k])
        });
        (lo, hi) = (lo.min(new_lower[k]), hi.max(new_upper[k]));
        let range = if lo <= hi { hi - lo } else { 0.0 };
        if !range.is_finite() {
            return Err(Error::InvalidInput(format!(
                "the range of feature {k} overflows float64 (max − min = inf{already}): \
                 rescale X"
            )));
        }
        total += range;
    }
    if total > MAX_LINEAR_DIMENSION {
        return Err(Error::InvalidInput(format!(
            "the ranges of the features sum to {total:e}{already}, beyond the \
             {MAX_LINEAR_DIMENSION:e} the Mondrian's arithmetic (split rates, cut positions, \
             branch-off distances) keeps finite: rescale X"
        )));
    }
    Ok(())
}

/// The largest |target| accepted: squares of targets, and targets over variances, must stay
/// finite (a forest on y = 1e299 failed, on 1e150 predicted inf).
const MAX_TARGET: f64 = 1e150;

/// Errors unless there are rows (`n_rows` of them) with one finite target each, none beyond
/// ±`MAX_TARGET`.
pub fn check_targets(n_rows: usize, y: &ArrayView1<f64>) -> Result<()> {
    if n_rows != y.len() {
        return Err(Error::InvalidInput(format!(
            "X has {n_rows} rows but y has {} values",
            y.len()
        )));
    }
    if n_rows == 0 {
        return Err(Error::InvalidInput("X has no rows".into()));
    }
    if y.iter().any(|v| !v.is_finite()) {
        return Err(Error::InvalidInput("y contains NaN or infinity".into()));
    }
    if let Some(v) = y.iter().find(|v| v.abs() > MAX_TARGET) {
        return Err(Error::InvalidInput(format!(
            "y is too large: it holds {v:e}, beyond the ±{MAX_TARGET:e} within which the \
             models' sums of squares and precision-weighted means stay finite; rescale y"
        )));
    }
    Ok(())
}

/// [`check_targets`] and, when given, [`check_weights`]: a regression model's new rows.
pub fn check_targets_and_weights(
    n_rows: usize,
    y: &ArrayView1<f64>,
    weights: Option<&ArrayView1<f64>>,
) -> Result<()> {
    check_targets(n_rows, y)?;
    weights.map_or(Ok(()), |w| check_weights(n_rows, w))
}

/// The largest weight accepted: weighted sums of squares of targets up to 1e150 stay finite.
const MAX_WEIGHT: f64 = 1e150;

/// An error unless `weights` holds `n_rows` finite values in (0, 1e150]: the weighted sums
/// of the models stay finite and their logarithms defined (a zero weight removes a row; the
/// estimators drop such rows before the core sees them).
pub fn check_weights(n_rows: usize, weights: &ArrayView1<f64>) -> Result<()> {
    if weights.len() != n_rows {
        return Err(Error::InvalidInput(format!(
            "X has {n_rows} rows but sample_weight has {} values",
            weights.len()
        )));
    }
    if let Some(v) = weights
        .iter()
        .find(|v| !(v.is_finite() && **v > 0.0 && **v <= MAX_WEIGHT))
    {
        return Err(Error::InvalidInput(format!(
            "sample_weight must hold positive finite values up to {MAX_WEIGHT:e}, got {v:e}"
        )));
    }
    Ok(())
}
