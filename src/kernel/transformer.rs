//! A fitted Mondrian feature map: M trees sampled on training points with lifetime λ (every
//! block splits until λ or until its points coincide: `min_samples_split = 1`), and the
//! column numbering of their leaves.

use super::features::{check_lifetime, transform, FeatureMap};
use crate::error::{Error, Result};
use crate::forest::MondrianForest;
use crate::sparse::Csr;
use crate::tree::TreeParams;
use ndarray::ArrayView2;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// Samples `n_trees` Mondrian trees with lifetime `lifetime` on the rows of `x`, `slice`
/// trees at a time, calling `progress(trees_done)` in between; tree m is seeded by
/// (`seed`, m), so the result does not depend on `pool`'s size or the slicing.
pub fn grow_forest(
    x: &ArrayView2<f64>,
    n_trees: usize,
    lifetime: f64,
    seed: u64,
    slice: usize,
    pool: &ThreadPool,
    mut progress: impl FnMut(usize) -> Result<()>,
) -> Result<MondrianForest> {
    if n_trees == 0 {
        return Err(Error::InvalidParameter {
            name: "n_estimators",
            reason: "must be at least 1".into(),
        });
    }
    if !lifetime.is_finite() {
        return Err(Error::InvalidParameter {
            name: "lifetime",
            reason: format!("must be a finite number >= 0, got {lifetime}"),
        });
    }
    if x.nrows() == 0 {
        return Err(Error::InvalidInput("X has no rows".into()));
    }
    let mut forest = MondrianForest::new(TreeParams::new(lifetime, 1)?, x.ncols(), seed)?;
    forest.add_points(x)?;
    while forest.trees.len() < n_trees {
        let count = slice.max(1).min(n_trees - forest.trees.len());
        forest.grow_trees(count, pool);
        progress(forest.trees.len())?;
    }
    Ok(forest)
}

/// Trees plus the feature columns at their lifetime.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MondrianFeatures {
    pub forest: MondrianForest,
    pub map: FeatureMap,
}

impl MondrianFeatures {
    /// Features of a freshly grown forest, at its lifetime.
    pub fn new(forest: MondrianForest) -> Result<Self> {
        let map = FeatureMap::new(&forest.trees, forest.params.lifetime)?;
        Ok(Self { forest, map })
    }

    /// The features of the rows of `x`, at the trees' lifetime or at an earlier `lifetime`.
    pub fn transform(
        &self,
        x: &ArrayView2<f64>,
        lifetime: Option<f64>,
        pool: &ThreadPool,
    ) -> Result<Csr> {
        self.forest.check_points(x)?;
        let earlier;
        let map = match lifetime {
            None => &self.map,
            Some(l) => {
                self.check_earlier(l)?;
                earlier = FeatureMap::new(&self.forest.trees, l)?;
                &earlier
            }
        };
        let x = x.as_standard_layout();
        let flat = x.as_slice().unwrap_or(&[]);
        transform(&self.forest.trees, map, flat, self.forest.n_features, pool)
    }

    /// Number of columns at the trees' lifetime or at an earlier `lifetime`.
    pub fn n_columns(&self, lifetime: Option<f64>) -> Result<usize> {
        match lifetime {
            None => Ok(self.map.n_columns()),
            Some(l) => {
                self.check_earlier(l)?;
                Ok(FeatureMap::new(&self.forest.trees, l)?.n_columns())
            }
        }
    }

    fn check_earlier(&self, lifetime: f64) -> Result<()> {
        check_lifetime(&self.forest.trees, lifetime)?;
        if lifetime > self.forest.params.lifetime {
            return Err(Error::InvalidParameter {
                name: "lifetime",
                reason: format!(
                    "{lifetime} exceeds the lifetime {} the trees were sampled with",
                    self.forest.params.lifetime
                ),
            });
        }
        Ok(())
    }

    /// Structural checks after deserialising.
    pub fn is_consistent(&self) -> bool {
        self.forest.is_consistent()
            && self.map.is_consistent(&self.forest.trees)
            && self.map.lifetime == self.forest.params.lifetime
    }
}
