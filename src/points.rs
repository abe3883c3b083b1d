//! The matrices of points the Mondrian models read: dense row-major views (float64, or float32
//! widened a row block at a time) and compressed sparse rows (CSR). Every reader asks for the
//! same three things — the shape, each feature's range (with finiteness), and the rows of a
//! block as float64, optionally mapped to the unit box — so no model copies a whole matrix
//! into another layout to read it.
//!
//! A sparse matrix stores only its non-zeros. A feature's range over a set of rows is then
//! the range of its stored values, widened to 0 when some row has no stored value in that
//! column (an implicit zero): O(non-zeros + D), not O(rows × D).

use crate::coordinate::Coordinate;
use crate::error::{Error, Result};
use crate::input_map::InputMap;
use ndarray::{s, ArrayView2};
use std::ops::Range;

/// Rows per block when points are read a block at a time, and per parallel work item when a
/// loop runs over points: large enough to amortise scheduling, small enough to balance two to
/// sixteen threads.
pub const ROW_CHUNK: usize = 4096;

/// Each feature's `(min, max)` over a matrix's rows; `(inf, −inf)` for a matrix without rows.
pub type Ranges = Vec<(f64, f64)>;

/// A matrix of points with `n_features` coordinates each.
pub trait Points: Sync {
    /// Number of points.
    fn n_rows(&self) -> usize;

    /// Number of coordinates per point.
    fn n_features(&self) -> usize;

    /// Each feature's range over all rows, or `None` when some value is NaN or infinite.
    fn ranges(&self) -> Option<Ranges>;

    /// The rows `rows` as row-major float64, mapped by `map` when given: a borrow of the
    /// matrix's own values when they already are (float64, dense, unmapped), else written to
    /// `buffer` (cleared first).
    fn block<'b>(
        &'b self,
        rows: Range<usize>,
        map: Option<&InputMap>,
        buffer: &'b mut Vec<f64>,
    ) -> &'b [f64];
}

impl<P: Points + ?Sized> Points for &P {
    fn n_rows(&self) -> usize {
        (*self).n_rows()
    }

    fn n_features(&self) -> usize {
        (*self).n_features()
    }

    fn ranges(&self) -> Option<Ranges> {
        (*self).ranges()
    }

    fn block<'b>(
        &'b self,
        rows: Range<usize>,
        map: Option<&InputMap>,
        buffer: &'b mut Vec<f64>,
    ) -> &'b [f64] {
        (*self).block(rows, map, buffer)
    }
}

impl<E: Coordinate> Points for ArrayView2<'_, E> {
    fn n_rows(&self) -> usize {
        self.nrows()
    }

    fn n_features(&self) -> usize {
        self.ncols()
    }

    fn ranges(&self) -> Option<Ranges> {
        let mut ranges = vec![(f64::INFINITY, f64::NEG_INFINITY); self.ncols()];
        for row in self.rows() {
            for ((lo, hi), &v) in ranges.iter_mut().zip(row) {
                let v: f64 = v.into();
                if !v.is_finite() {
                    return None;
                }
                (*lo, *hi) = (lo.min(v), hi.max(v));
            }
        }
        Some(ranges)
    }

    fn block<'b>(
        &'b self,
        rows: Range<usize>,
        map: Option<&InputMap>,
        buffer: &'b mut Vec<f64>,
    ) -> &'b [f64] {
        let d = self.ncols();
        buffer.clear();
        if let Some(flat) = self.as_slice() {
            let values = &flat[rows.start * d..rows.end * d];
            match (map, E::as_f64(values)) {
                (None, Some(values)) => return values,
                (None, None) => buffer.extend(values.iter().map(|&v| v.into())),
                (Some(map), _) => map.map_into(values, buffer),
            }
            return buffer;
        }
        // A strided view (never handed over by the bindings, which pass C order): row by row.
        for row in self.slice(s![rows, ..]).rows() {
            let start = buffer.len();
            buffer.extend(row.iter().map(|&v| v.into()));
            if let Some(map) = map {
                map.map_in_place(&mut buffer[start..]);
            }
        }
        buffer
    }
}

/// Points read through a map to the unit box as they are read (an estimator's map, applied
/// by the core rather than to a mapped copy, so a float32 matrix stays float32): the same
/// float64 values, bit for bit, as the matrix mapped beforehand, `(x − offset) / scale`.
#[derive(Debug, Clone)]
pub struct MappedPoints<P> {
    inner: P,
    map: InputMap,
}

impl<P: Points> MappedPoints<P> {
    /// `inner` read through `map`, refused when the map does not fit its features or sends
    /// one of its values beyond float64 ([`InputMap::check_ranges`]).
    pub fn new(inner: P, map: InputMap) -> Result<Self> {
        map.require_consistent(inner.n_features())?;
        if let Some(ranges) = inner.ranges() {
            map.check_ranges(&ranges)?;
        }
        Ok(Self { inner, map })
    }
}

impl<P: Points> Points for MappedPoints<P> {
    fn n_rows(&self) -> usize {
        self.inner.n_rows()
    }

    fn n_features(&self) -> usize {
        self.inner.n_features()
    }

    fn ranges(&self) -> Option<Ranges> {
        self.map.map_ranges(self.inner.ranges()?)
    }

    fn block<'b>(
        &'b self,
        rows: Range<usize>,
        map: Option<&InputMap>,
        buffer: &'b mut Vec<f64>,
    ) -> &'b [f64] {
        let Some(outer) = map else {
            return self.inner.block(rows, Some(&self.map), buffer);
        };
        // A second map on top (no caller does this today): the first one's images, then it.
        let mut first = Vec::new();
        let mapped = self.inner.block(rows, Some(&self.map), &mut first);
        buffer.clear();
        buffer.extend_from_slice(mapped);
        for row in buffer.chunks_exact_mut(self.n_features().max(1)) {
            outer.map_in_place(row);
        }
        buffer
    }
}

/// A CSR matrix as scipy holds it (canonical form: within a row, columns strictly
/// increasing), borrowed and checked once so that reading it can never index out of range;
/// optionally read through a map to the unit box ([`Self::with_map`]).
#[derive(Debug, Clone)]
pub struct CsrPoints<'a> {
    n_features: usize,
    indptr: &'a [i64],
    indices: &'a [i32],
    data: &'a [f64],
    map: Option<InputMap>,
}

impl<'a> CsrPoints<'a> {
    /// The matrix whose row `i` holds `data[indptr[i]..indptr[i + 1]]` at the columns
    /// `indices[..]` of the same range; an error unless the arrays form one.
    pub fn new(
        n_features: usize,
        indptr: &'a [i64],
        indices: &'a [i32],
        data: &'a [f64],
    ) -> Result<Self> {
        let invalid = |what: &str| Err(Error::InvalidInput(format!("sparse X: {what}")));
        if indptr.first() != Some(&0) {
            return invalid("indptr must start at 0");
        }
        if indices.len() != data.len() || indptr.last() != Some(&(data.len() as i64)) {
            return invalid("indptr, indices and data do not describe the same entries");
        }
        for pair in indptr.windows(2) {
            let (start, end) = (pair[0], pair[1]);
            if start > end {
                return invalid("indptr must not decrease");
            }
            if end as usize > data.len() {
                return invalid("indptr, indices and data do not describe the same entries");
            }
            let row = &indices[start as usize..end as usize];
            if row.iter().any(|&c| c < 0 || c as usize >= n_features) {
                return invalid("a column index is out of range");
            }
            if row.windows(2).any(|w| w[0] >= w[1]) {
                return invalid("columns within a row must be sorted and distinct (canonical CSR)");
            }
        }
        Ok(Self {
            n_features,
            indptr,
            indices,
            data,
            map: None,
        })
    }

    /// The matrix read through `map` (an estimator's map to the unit box, which would make a
    /// sparse matrix dense if applied to it whole): every value v of feature k is read as
    /// `map.map_value(k, v)`, the implicit zeros included, exactly as a dense matrix mapped
    /// beforehand. Refused, as by [`MappedPoints::new`], when the map does not fit the
    /// features or sends a value beyond float64.
    pub fn with_map(mut self, map: InputMap) -> Result<Self> {
        map.require_consistent(self.n_features)?;
        if let Some(ranges) = self.ranges() {
            map.check_ranges(&ranges)?;
        }
        self.map = Some(map);
        Ok(self)
    }

    /// Value `v` of feature `k` as the matrix is read.
    #[inline]
    fn read(&self, k: usize, v: f64) -> f64 {
        self.map.as_ref().map_or(v, |m| m.map_value(k, v))
    }

    /// The stored entries of row `i` (columns, values).
    fn row(&self, i: usize) -> (&[i32], &[f64]) {
        let range = self.indptr[i] as usize..self.indptr[i + 1] as usize;
        (&self.indices[range.clone()], &self.data[range])
    }
}

impl Points for CsrPoints<'_> {
    fn n_rows(&self) -> usize {
        self.indptr.len() - 1
    }

    fn n_features(&self) -> usize {
        self.n_features
    }

    fn ranges(&self) -> Option<Ranges> {
        if self.data.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let n = self.n_rows();
        let mut ranges = vec![(f64::INFINITY, f64::NEG_INFINITY); self.n_features];
        let mut stored = vec![0usize; self.n_features];
        for (&c, &v) in self.indices.iter().zip(self.data) {
            let (lo, hi) = &mut ranges[c as usize];
            (*lo, *hi) = (lo.min(v), hi.max(v));
            stored[c as usize] += 1;
        }
        // A column with fewer stored values than rows holds an implicit zero.
        for ((lo, hi), &count) in ranges.iter_mut().zip(&stored) {
            if count < n {
                (*lo, *hi) = (lo.min(0.0), hi.max(0.0));
            }
        }
        match &self.map {
            Some(map) => map.map_ranges(ranges),
            None => Some(ranges),
        }
    }

    fn block<'b>(
        &'b self,
        rows: Range<usize>,
        map: Option<&InputMap>,
        buffer: &'b mut Vec<f64>,
    ) -> &'b [f64] {
        let d = self.n_features;
        buffer.clear();
        // A value as read (through the matrix's own map), then mapped by `map`: the same
        // arithmetic as mapping a dense copy, so the results are bit-identical.
        let image = |k: usize, v: f64| {
            let v = self.read(k, v);
            map.map_or(v, |m| m.map_value(k, v))
        };
        let empty: Vec<f64> = (0..d).map(|k| image(k, 0.0)).collect();
        for i in rows {
            let start = buffer.len();
            buffer.extend_from_slice(&empty);
            let (columns, values) = self.row(i);
            for (&c, &v) in columns.iter().zip(values) {
                buffer[start + c as usize] = image(c as usize, v);
            }
        }
        buffer
    }
}

/// Calls `visit(first_row, block)` on the rows of `x` in order, `ROW_CHUNK` rows at a time
/// as float64, mapped by `map` when given ([`Points::block`]), for the readers that take the
/// rows one after another: no converted copy of the whole matrix is made.
pub fn for_each_block<P: Points + ?Sized>(
    x: &P,
    map: Option<&InputMap>,
    mut visit: impl FnMut(usize, &[f64]),
) {
    let (n, mut buffer) = (x.n_rows(), Vec::new());
    for first in (0..n).step_by(ROW_CHUNK) {
        visit(
            first,
            x.block(first..(first + ROW_CHUNK).min(n), map, &mut buffer),
        );
    }
}

/// Errors unless `x` has `n_features` columns.
pub fn check_width(x: &impl Points, n_features: usize, fitted: &str) -> Result<()> {
    if x.n_features() != n_features {
        return Err(Error::InvalidInput(format!(
            "X has {} features, but the {fitted} was fitted with {n_features}",
            x.n_features()
        )));
    }
    Ok(())
}

/// Each feature's range over the rows of `x`, or an error naming NaN/infinity.
pub fn finite_ranges(x: &impl Points) -> Result<Ranges> {
    x.ranges()
        .ok_or_else(|| Error::InvalidInput("X contains NaN or infinity".into()))
}

#[cfg(test)]
mod tests;
