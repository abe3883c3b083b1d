//! The map of input points to the unit box by the range of the first training points, as the
//! AISTATS 2016 paper scales features to [0, 1]^D; lifetimes, γ₂ and node boxes are then in
//! those units. Later points may fall outside [0, 1]: the trees extend to them. Every
//! estimator takes its lifetimes in these units by default (`scale_features`): the forests
//! map inside the core, the other estimators hand the map over with their points, which
//! the core reads through it (`points::MappedPoints`, `points::CsrPoints::with_map`).

use crate::coordinate::Coordinate;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// x ↦ (x − offset) / scale, per feature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputMap {
    pub offset: Vec<f64>,
    pub scale: Vec<f64>,
}

impl InputMap {
    /// The map taking the box with these `(min, max)` per feature to the unit box; a constant
    /// feature is only shifted. An error if some feature's range overflows.
    pub fn unit_box_of_ranges(ranges: &[(f64, f64)]) -> Result<Self> {
        let mut scale = Vec::with_capacity(ranges.len());
        for (k, (l, u)) in ranges.iter().enumerate() {
            let extent = u - l;
            if !extent.is_finite() {
                return Err(Error::InvalidInput(format!(
                    "the range of feature {k} overflows float64 (max − min = inf): rescale \
                     it, or pass scale_features=False"
                )));
            }
            scale.push(if extent > 0.0 { extent } else { 1.0 });
        }
        Ok(Self {
            offset: ranges.iter().map(|r| r.0).collect(),
            scale,
        })
    }

    /// An error if the image of a value in `ranges` (each feature's `(min, max)`) is not
    /// finite (a point so far outside the training range that it overflows float64 once
    /// scaled). The map is monotone in each feature, so the extremes suffice.
    pub fn check_ranges(&self, ranges: &[(f64, f64)]) -> Result<()> {
        for (k, &(lo, hi)) in ranges.iter().enumerate() {
            for v in [lo, hi].into_iter().filter(|v| v.is_finite()) {
                if !self.map_value(k, v).is_finite() {
                    return Err(Error::InvalidInput(format!(
                        "X holds values of feature {k} so far outside the training range \
                         that they overflow float64 once scaled"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The image of value `v` of feature `k`.
    #[inline]
    pub fn map_value(&self, k: usize, v: f64) -> f64 {
        (v - self.offset[k]) / self.scale[k]
    }

    /// Replaces the values of one row by their images.
    pub fn map_in_place(&self, row: &mut [f64]) {
        for (k, v) in row.iter_mut().enumerate() {
            *v = self.map_value(k, *v);
        }
    }

    /// Appends the images of `rows` (checked by [`Self::check_ranges`]) to `out`.
    pub fn map_into<E: Coordinate>(&self, rows: &[E], out: &mut Vec<f64>) {
        let d = self.offset.len();
        for row in rows.chunks_exact(d) {
            let mapped = row.iter().zip(&self.offset).zip(&self.scale);
            out.extend(mapped.map(|((&v, o), s)| (v.into() - o) / s));
        }
    }

    /// Checks a deserialised map for `d` features.
    pub fn is_consistent(&self, d: usize) -> bool {
        self.offset.len() == d
            && self.scale.len() == d
            && self.offset.iter().all(|v| v.is_finite())
            && self.scale.iter().all(|v| v.is_finite() && *v > 0.0)
    }

    /// [`Self::is_consistent`] as an error naming what a map for `d` features needs.
    pub fn require_consistent(&self, d: usize) -> Result<()> {
        if self.is_consistent(d) {
            return Ok(());
        }
        Err(Error::InvalidInput(format!(
            "the unit-box map needs {d} finite offsets and positive scales"
        )))
    }

    /// The images of per-feature ranges `(min, max)` (an empty range, min > max, stays as it
    /// is): the map is increasing in each feature, so it maps the ends of a range to the
    /// ends. `None` when an image overflows float64.
    pub fn map_ranges(&self, mut ranges: Vec<(f64, f64)>) -> Option<Vec<(f64, f64)>> {
        for (k, (lo, hi)) in ranges.iter_mut().enumerate() {
            if lo <= hi {
                (*lo, *hi) = (self.map_value(k, *lo), self.map_value(k, *hi));
                if !(lo.is_finite() && hi.is_finite()) {
                    return None;
                }
            }
        }
        Some(ranges)
    }
}
