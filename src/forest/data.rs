//! The points a forest stores and the points it is asked about: checked once (width,
//! finiteness, targets), mapped to the forest's coordinates, and handed out in row blocks.

use super::MondrianForest;
use crate::error::{Error, Result};
use crate::input_map::InputMap;
use crate::mondrian::{MondrianTree, NONE};
use crate::parallel::{for_each_point_block, ROW_CHUNK};
use crate::points::{check_width, finite_ranges, Points};
use ndarray::ArrayView1;
use rayon::ThreadPool;

/// The largest linear dimension (sum of the features' ranges) of the data box: sums and
/// differences of a few such extents must stay finite (1e308 overflowed to NaN predictions).
const MAX_LINEAR_DIMENSION: f64 = 1e300;

impl MondrianForest {
    /// Number of training points stored.
    pub fn n_rows(&self) -> usize {
        self.x.len() / self.n_features
    }

    /// The stored training points, row-major.
    pub fn points(&self) -> &[f64] {
        &self.x
    }

    /// Checks that `x` has this forest's width and only finite values, also once mapped.
    pub fn check_points<P: Points>(&self, x: &P) -> Result<()> {
        check_width(x, self.n_features, "forest")?;
        let ranges = finite_ranges(x)?;
        if let Some(map) = &self.input_map {
            map.check_ranges(&ranges)?;
        }
        Ok(())
    }

    /// Calls `work(first_row, out_block, rows_block)` on blocks of the rows of `x` (in this
    /// forest's coordinates, float64: other matrices are converted a block at a time) in
    /// parallel, after checking them; `out` holds `out_width` values per row. See
    /// [`for_each_point_block`].
    pub fn for_each_query_block<T: Send, P: Points>(
        &self,
        x: &P,
        pool: &ThreadPool,
        out: &mut [T],
        out_width: usize,
        work: impl Fn(usize, &mut [T], &[f64]) + Sync,
    ) -> Result<()> {
        self.check_points(x)?;
        self.check_fitted()?;
        for_each_point_block(pool, out, out_width, x, self.input_map.as_ref(), work);
        Ok(())
    }

    /// [`Self::add_points`] for an online update, which needs trees to extend.
    pub fn add_online_points<P: Points>(&mut self, x: &P) -> Result<std::ops::Range<u32>> {
        if self.trees.is_empty() {
            return Err(Error::InvalidInput(
                "partial_fit needs a fitted model".into(),
            ));
        }
        self.add_points(x)
    }

    /// Stores new training points (mapped to the forest's coordinates) and returns their row
    /// ids. The first points fix the input map when inputs are scaled.
    pub fn add_points<P: Points>(&mut self, x: &P) -> Result<std::ops::Range<u32>> {
        let first = self.n_rows();
        let last = first + x.n_rows();
        if last >= u32::MAX as usize {
            return Err(Error::InvalidInput(format!(
                "at most {} training points are supported",
                u32::MAX - 1
            )));
        }
        check_width(x, self.n_features, "forest")?;
        let ranges = finite_ranges(x)?;
        // A failed check must not leave a map fixed by rejected points.
        let fixed_map;
        let map = match &self.input_map {
            None if self.scale_inputs => {
                fixed_map = InputMap::unit_box_of_ranges(&ranges)?;
                &fixed_map
            }
            None => {
                self.append_rows(x, None);
                return self.keep_if_box_fits(first, first as u32..last as u32);
            }
            Some(map) => map,
        };
        map.check_ranges(&ranges)?;
        let map = map.clone();
        self.append_rows(x, Some(&map));
        let added = self.keep_if_box_fits(first, first as u32..last as u32)?;
        self.input_map = Some(map);
        Ok(added)
    }

    /// Appends the rows of `x`, mapped by `map`, to the store (in place: no copy of the
    /// training set), a row block at a time.
    fn append_rows<P: Points>(&mut self, x: &P, map: Option<&InputMap>) {
        let n = x.n_rows();
        self.x.reserve(n * self.n_features);
        let mut buffer = Vec::new();
        for first in (0..n).step_by(ROW_CHUNK) {
            let rows = x.block(first..(first + ROW_CHUNK).min(n), map, &mut buffer);
            self.x.extend_from_slice(rows);
        }
    }

    /// `added` when the box of the stored points (the rows from `first` on just appended)
    /// is one the Mondrian can cut; else the appended rows are taken back and an error.
    fn keep_if_box_fits(
        &mut self,
        first: usize,
        added: std::ops::Range<u32>,
    ) -> Result<std::ops::Range<u32>> {
        let start = first * self.n_features;
        if let Err(error) = self.check_box(&self.x[start..]) {
            self.x.truncate(start);
            return Err(error);
        }
        Ok(added)
    }

    /// Errors unless the box of the stored points and `new` (in the forest's coordinates) is
    /// one the Mondrian can cut ([`check_data_box`]).
    fn check_box(&self, new: &[f64]) -> Result<()> {
        let root = self.trees.iter().find(|t| t.root != NONE);
        check_data_box(root, new, self.n_features)
    }
}

/// Errors unless the box of `fitted`'s points (its root box) and the rows `new` (`d` wide) has
/// a finite range in every feature and a linear dimension of at most
/// [`MAX_LINEAR_DIMENSION`]: a block's split rate is the sum of its ranges, and an infinite
/// one would cut at time 0 whatever the lifetime and turn every later quantity into NaN.
pub fn check_data_box(fitted: Option<&MondrianTree>, new: &[f64], d: usize) -> Result<()> {
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
        for &v in new.iter().skip(k).step_by(d) {
            (lo, hi) = (lo.min(v), hi.max(v));
        }
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
/// ±[`MAX_TARGET`].
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
