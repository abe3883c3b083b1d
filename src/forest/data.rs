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
use std::path::Path;

/// The largest linear dimension (sum of the features' ranges) of the data box: sums and
/// differences of a few such extents must stay finite (1e308 overflowed to NaN predictions).
const MAX_LINEAR_DIMENSION: f64 = 1e300;

impl MondrianForest {
    /// Number of training points stored.
    pub fn n_rows(&self) -> usize {
        self.x.len() / self.n_features
    }

    /// The stored training points, row-major, when they are in memory.
    pub fn points(&self) -> Result<&[f64]> {
        self.x
            .as_slice()
            .ok_or_else(|| Error::InvalidInput("this model's training points are on disk".into()))
    }

    /// A copy of the stored training points, row-major, in the forest's coordinates (read
    /// from disk when they are there).
    pub fn copy_points(&self) -> Result<Vec<f64>> {
        let mut out = Vec::with_capacity(self.x.len());
        self.x.for_each_block(|block| {
            out.extend_from_slice(block);
            Ok(())
        })?;
        Ok(out)
    }

    /// Moves the training points (those stored and those to come) into a new file in
    /// `directory` ([`super::point_store`]); a failure leaves them where they were.
    pub fn move_points_to_disk(&mut self, directory: &Path) -> Result<()> {
        self.x.move_to_disk(directory)
    }

    /// The directory of the file holding the training points, when they are on disk.
    pub fn points_directory(&self) -> Option<&Path> {
        self.x.directory()
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
                self.append_rows(x, None, first)?;
                return Ok(first as u32..last as u32);
            }
            Some(map) => map,
        };
        map.check_ranges(&ranges)?;
        let map = map.clone();
        self.append_rows(x, Some(&map), first)?;
        self.input_map = Some(map);
        Ok(first as u32..last as u32)
    }

    /// Appends the rows of `x`, mapped by `map`, to the store (in place: no copy of the
    /// training set), a row block at a time, if the box of the stored points and these
    /// (the rows from `first` on) is one the Mondrian can cut ([`check_box_of`]); else (or
    /// when the store fails to write) takes them back and errors.
    fn append_rows<P: Points>(
        &mut self,
        x: &P,
        map: Option<&InputMap>,
        first: usize,
    ) -> Result<()> {
        let (n, d) = (x.n_rows(), self.n_features);
        self.x.reserve(n * d);
        let mut buffer = Vec::new();
        let mut new_box = RowsBox::new(d);
        let mut appended = Ok(());
        for start in (0..n).step_by(ROW_CHUNK) {
            let rows = x.block(start..(start + ROW_CHUNK).min(n), map, &mut buffer);
            new_box.add_rows(rows);
            appended = self.x.append(rows);
            if appended.is_err() {
                break;
            }
        }
        let root = self.trees.iter().find(|t| t.root != NONE);
        let checked = appended.and_then(|()| check_box_of(root, &new_box.lower, &new_box.upper));
        if let Err(error) = checked {
            // A store that cannot even shorten its file has the error of the write.
            let _ = self.x.truncate(first * d);
            return Err(error);
        }
        Ok(())
    }
}

/// The box of the rows added so far (none: +∞ lower, −∞ upper bounds).
struct RowsBox {
    lower: Vec<f64>,
    upper: Vec<f64>,
}

impl RowsBox {
    fn new(d: usize) -> Self {
        Self {
            lower: vec![f64::INFINITY; d],
            upper: vec![f64::NEG_INFINITY; d],
        }
    }

    fn add_rows(&mut self, rows: &[f64]) {
        for row in rows.chunks_exact(self.lower.len()) {
            for ((l, u), &v) in self.lower.iter_mut().zip(self.upper.iter_mut()).zip(row) {
                (*l, *u) = (l.min(v), u.max(v));
            }
        }
    }
}

/// Errors unless the box of `fitted`'s points (its root box) and the rows `new` (`d` wide) has
/// a finite range in every feature and a linear dimension of at most
/// [`MAX_LINEAR_DIMENSION`]: a block's split rate is the sum of its ranges, and an infinite
/// one would cut at time 0 whatever the lifetime and turn every later quantity into NaN.
pub fn check_data_box(fitted: Option<&MondrianTree>, new: &[f64], d: usize) -> Result<()> {
    let mut new_box = RowsBox::new(d);
    new_box.add_rows(new);
    check_box_of(fitted, &new_box.lower, &new_box.upper)
}

/// [`check_data_box`] for new rows given by their box (`new_lower`, `new_upper`; an empty
/// box has a lower bound above its upper one).
fn check_box_of(fitted: Option<&MondrianTree>, new_lower: &[f64], new_upper: &[f64]) -> Result<()> {
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
