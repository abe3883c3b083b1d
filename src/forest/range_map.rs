//! The input map following a stream's range. The trees work in the unit box of the training
//! points (AISTATS 2016, §5); a stream's first rows give that box poorly (one row has no
//! range at all), so whenever the number of rows reaches a power of two the map is chosen
//! again from the range of every row seen, if that range has moved by more than
//! [`RANGE_TOLERANCE`] of the unit box. The change is applied as the conditional Mondrian
//! treats the past: every cut, box and stored point is carried to the new coordinates by the
//! same increasing affine map per feature, so the partition of the space and every split
//! time are kept; later cuts are drawn in the new coordinates. O(N·D + nodes·D) per change,
//! O(D) per row over a stream.

use super::MondrianForest;
use crate::error::Result;
use crate::input_map::InputMap;
use crate::mondrian::{MondrianTree, NONE};

/// How far (in units of the unit box) the mapped range of the rows may have moved from
/// [0, 1] before the map is chosen again.
pub const RANGE_TOLERANCE: f64 = 0.01;

/// Whether a number of rows going from `before` to `after` reaches a power of two.
fn reaches_power_of_two(before: usize, after: usize) -> bool {
    after > before && (before == 0 || after.ilog2() > before.ilog2() || after.is_power_of_two())
}

/// z ↦ a·z + b per feature.
struct Affine {
    a: Vec<f64>,
    b: Vec<f64>,
}

impl Affine {
    #[inline]
    fn apply(&self, k: usize, z: f64) -> f64 {
        self.a[k] * z + self.b[k]
    }
}

impl MondrianForest {
    /// Chooses the map again from the range of the rows seen when the rows, `before` before
    /// the last update, have reached a power of two and that range has moved (module docs).
    /// A failure (writing points on disk) leaves the forest as it was.
    pub(super) fn follow_range(&mut self, before: usize) -> Result<()> {
        if !self.scale_inputs || !reaches_power_of_two(before, self.n_rows()) {
            return Ok(());
        }
        let (Some(map), Some(tree)) = (&self.input_map, self.trees.first()) else {
            return Ok(());
        };
        if tree.root == NONE {
            return Ok(());
        }
        let (lower, upper) = (tree.lower(tree.root), tree.upper(tree.root));
        let moved = (lower.iter().zip(upper))
            .any(|(&lo, &hi)| lo.abs() > RANGE_TOLERANCE || (hi - 1.0).abs() > RANGE_TOLERANCE);
        if !moved {
            return Ok(());
        }
        let ranges: Vec<(f64, f64)> = (lower.iter().zip(upper).enumerate())
            .map(|(k, (&lo, &hi))| {
                let raw = |z: f64| z * map.scale[k] + map.offset[k];
                (raw(lo), raw(hi))
            })
            .collect();
        let Ok(new) = InputMap::unit_box_of_ranges(&ranges) else {
            return Ok(()); // a range beyond float64: keep the map
        };
        let affine = Affine {
            a: (map.scale.iter().zip(&new.scale))
                .map(|(s, t)| s / t)
                .collect(),
            b: (map.offset.iter().zip(&new.offset).zip(&new.scale))
                .map(|((o, p), t)| (o - p) / t)
                .collect(),
        };
        if !(affine.a.iter().chain(&affine.b)).all(|v| v.is_finite()) || affine.a.contains(&0.0) {
            return Ok(());
        }
        let d = self.n_features;
        self.x.map_values(d, |k, z| affine.apply(k, z))?;
        for tree in &mut self.trees {
            carry_tree(tree, &affine);
        }
        self.input_map = Some(new);
        Ok(())
    }
}

/// Carries every box and cut of `tree` by `affine` (increasing per feature, so boxes stay the
/// min and max of their points and cuts stay between the same points).
fn carry_tree(tree: &mut MondrianTree, affine: &Affine) {
    let d = tree.n_features;
    for corner in tree.bounds.chunks_exact_mut(d) {
        for (k, v) in corner.iter_mut().enumerate() {
            if v.is_finite() {
                *v = affine.apply(k, *v);
            }
        }
    }
    for node in &mut tree.nodes {
        if node.dim != NONE {
            node.threshold = affine.apply(node.dim as usize, node.threshold);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two_are_reached_once() {
        let reached: Vec<usize> = (1..70)
            .filter(|&n| reaches_power_of_two(n - 1, n))
            .collect();
        assert_eq!(reached, vec![1, 2, 4, 8, 16, 32, 64]);
        assert!(reaches_power_of_two(5, 9) && reaches_power_of_two(0, 3));
        assert!(!reaches_power_of_two(9, 15) && !reaches_power_of_two(8, 8));
    }
}
