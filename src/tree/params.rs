//! Hyper-parameters of a Mondrian tree, validated once at construction.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Parameters shared by every tree of a forest.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TreeParams {
    /// Lifetime λ of the Mondrian process (`f64::INFINITY` allowed): a block whose split time
    /// would exceed it becomes a leaf.
    pub lifetime: f64,
    /// A block holding fewer points pauses (does not split) until online updates bring more.
    pub min_samples_split: usize,
}

impl TreeParams {
    /// Checks the domain of every parameter.
    pub fn new(lifetime: f64, min_samples_split: usize) -> Result<Self> {
        if lifetime.is_nan() || lifetime < 0.0 {
            return Err(Error::InvalidParameter {
                name: "lifetime",
                reason: format!("must be a non-negative number or infinity, got {lifetime}"),
            });
        }
        if min_samples_split < 1 {
            return Err(Error::InvalidParameter {
                name: "min_samples_split",
                reason: format!("must be at least 1, got {min_samples_split}"),
            });
        }
        Ok(Self {
            lifetime,
            min_samples_split,
        })
    }

    /// A block with `n_samples` points and linear dimension `linear_dimension` does not split
    /// (pauses): too few points, or all points identical.
    #[inline]
    pub fn is_paused(&self, n_samples: usize, linear_dimension: f64) -> bool {
        n_samples < self.min_samples_split || linear_dimension <= 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_values() {
        assert!(TreeParams::new(-1.0, 2).is_err());
        assert!(TreeParams::new(f64::NAN, 2).is_err());
        assert!(TreeParams::new(1.0, 0).is_err());
        assert!(TreeParams::new(f64::INFINITY, 1).is_ok());
    }
}
