//! A fitted Mondrian feature map: M trees sampled on training points with lifetime λ (every
//! block splits until λ or until its points coincide: `min_samples_split = 1`), and the
//! column numbering of their leaves; and the ridge model a lifetime-path search refits on
//! them.

use super::features::{check_lifetime, transform, FeatureMap};
use super::ridge::KernelRidge;
use crate::error::{Error, Result};
use crate::forest::{Growing, MondrianForest};
use crate::mondrian::policy::PureMondrian;
use crate::mondrian::TreeParams;
use crate::points::Points;
use crate::sparse::Csr;
use ndarray::ArrayView1;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// Samples label-blind Mondrian trees with lifetime `lifetime` on the rows of `x`, as `how`
/// says (see [`MondrianForest::grow_to`]).
pub fn grow_forest<P: Points>(
    x: &P,
    lifetime: f64,
    seed: u64,
    how: &Growing<'_>,
    progress: impl FnMut(usize) -> Result<()>,
) -> Result<MondrianForest> {
    if x.n_rows() == 0 {
        return Err(Error::InvalidInput("X has no rows".into()));
    }
    let mut forest = MondrianForest::new(TreeParams::new(lifetime, 1), x.n_features(), seed)?;
    forest.add_points(x)?;
    forest.grow_to(&PureMondrian, how, progress)?;
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
    pub fn transform<P: Points>(
        &self,
        x: &P,
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
        transform(&self.forest.trees, map, x, pool)
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

    /// Ridge regression on these trees stopped at `lifetime` (the refit after a lifetime
    /// search). With `held_out` points (the validation rows the search held out, read as
    /// the training points were: through their map when they carry one), a copy of the
    /// trees is first extended by them (conditional Mondrian), so the model uses every row;
    /// `y` holds the training targets, then the held-out ones, and `weights` (None: all 1)
    /// their row weights.
    pub fn refit(
        &self,
        y: &ArrayView1<f64>,
        weights: Option<&ArrayView1<f64>>,
        lifetime: f64,
        alpha: f64,
        held_out: Option<&dyn Points>,
        pool: &ThreadPool,
    ) -> Result<KernelRidge> {
        let mut forest = self.forest.clone();
        if let Some(x) = held_out {
            let rows = forest.add_points(&x)?;
            forest.extend(rows, &PureMondrian, pool)?;
        }
        KernelRidge::from_forest_weighted(forest, lifetime, alpha, y, weights, pool)
    }

    /// Structural checks after deserialising.
    pub fn is_consistent(&self) -> bool {
        self.forest.is_consistent()
            && self.map.is_consistent(&self.forest.trees)
            && self.map.lifetime == self.forest.params.lifetime
    }
}
