//! Refits of an online forest. The conditional Mondrian extends the trees by new rows with the
//! batch distribution (NIPS 2014), but two things a batch fit has cannot be had row by row:
//! cuts guided by the targets of many points (a leaf splits when its second point arrives,
//! with two points to guide it), and the map to the unit box of all rows (a stream's first
//! row has no range). So whenever the rows reach a power of two (up to [`REFIT_ROWS`]), or an
//! update at least doubles them, the trees are grown again on every row, by the same random
//! streams a batch fit uses, after the map is chosen again from the range of every row: the
//! forest is then the batch fit of the rows seen, exactly. Between refits rows are added by
//! the conditional Mondrian. The refits cost O(N log N) each at N rows, O(log N) per row over
//! a stream; beyond [`REFIT_ROWS`] rows only updates that double the rows refit, so no single
//! row's update costs a large fit.

use super::MondrianForest;
use crate::error::Result;
use crate::input_map::InputMap;
use crate::mondrian::policy::SplitPolicy;
use crate::parallel::Interrupt;
use rayon::ThreadPool;

/// The most rows at which reaching a power of two refits the forest.
pub const REFIT_ROWS: usize = 1 << 15;

/// Whether an update taking the rows from `before` to `after` refits the forest.
pub fn refit_is_due(before: usize, after: usize) -> bool {
    let reaches_power_of_two = after > before && (before == 0 || after.ilog2() > before.ilog2());
    after >= 2 * before.max(1) || (reaches_power_of_two && after <= REFIT_ROWS)
}

/// What an online update did to the trees.
pub struct Extension {
    /// Per tree, the leaves whose set of points changed (every leaf after a refit).
    pub changed: Vec<Vec<u32>>,
    /// Whether the trees were grown again on every row.
    pub refitted: bool,
}

impl MondrianForest {
    /// Adds the stored rows `rows` to the trees: by the conditional Mondrian, or by a refit
    /// when one is due ([`refit_is_due`]). A failure (rows on disk that cannot be read) drops
    /// the trees, as [`MondrianForest::extend`] does.
    pub fn extend_or_refit<P: SplitPolicy>(
        &mut self,
        rows: std::ops::Range<u32>,
        policy: &P,
        pool: &ThreadPool,
    ) -> Result<Extension> {
        if !refit_is_due(rows.start as usize, rows.end as usize) {
            let changed = self.extend(rows, policy, pool)?;
            return Ok(Extension {
                changed,
                refitted: false,
            });
        }
        if self.scale_inputs {
            self.map_to_range()?;
        }
        let count = self.trees.len();
        self.trees.clear();
        self.grow_trees(count, policy, pool, &Interrupt::default())?;
        let changed = (self.trees.iter())
            .map(|t| (0..t.n_nodes() as u32).filter(|&j| t.is_leaf(j)).collect())
            .collect();
        Ok(Extension {
            changed,
            refitted: true,
        })
    }

    /// Chooses the map to the unit box again from the range of every stored row and carries
    /// the stored rows to it (an increasing affine map per feature).
    fn map_to_range(&mut self) -> Result<()> {
        let Some(map) = self.input_map.clone() else {
            return Ok(());
        };
        let d = self.n_features;
        let mut ranges = vec![(f64::INFINITY, f64::NEG_INFINITY); d];
        self.x.for_each_block(|values| {
            for row in values.chunks_exact(d) {
                for ((lo, hi), &v) in ranges.iter_mut().zip(row) {
                    *lo = lo.min(v);
                    *hi = hi.max(v);
                }
            }
            Ok(())
        })?;
        // Back to raw units (the map's inverse), then the unit box of that range.
        for (k, (lo, hi)) in ranges.iter_mut().enumerate() {
            *lo = *lo * map.scale[k] + map.offset[k];
            *hi = *hi * map.scale[k] + map.offset[k];
        }
        let Ok(new) = InputMap::unit_box_of_ranges(&ranges) else {
            return Ok(()); // a range beyond float64: keep the map
        };
        let a: Vec<f64> = (map.scale.iter().zip(&new.scale))
            .map(|(s, t)| s / t)
            .collect();
        let b: Vec<f64> = (map.offset.iter().zip(&new.offset).zip(&new.scale))
            .map(|((o, p), t)| (o - p) / t)
            .collect();
        if !(a.iter().chain(&b)).all(|v| v.is_finite()) || a.iter().any(|&v| v <= 0.0) {
            return Ok(());
        }
        self.x.map_values(d, |k, z| a[k] * z + b[k])?;
        self.input_map = Some(new);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refits_at_powers_of_two_and_doublings() {
        let one_by_one: Vec<usize> = (1..70).filter(|&n| refit_is_due(n - 1, n)).collect();
        assert_eq!(one_by_one, vec![1, 2, 4, 8, 16, 32, 64]);
        assert!(refit_is_due(5, 9) && refit_is_due(0, 3) && refit_is_due(100_000, 200_000));
        assert!(!refit_is_due(9, 15) && !refit_is_due(8, 8));
        let beyond = REFIT_ROWS * 2;
        assert!(!refit_is_due(beyond - 1, beyond) && !refit_is_due(beyond, beyond + 10));
    }
}
