//! Parameters of a Mondrian tree on data.
//!
//! Their domains are checked where users set them (the Python estimators' parameter tables);
//! the core only asks [`TreeParams::is_valid`] of a deserialised model.

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
    pub fn new(lifetime: f64, min_samples_split: usize) -> Self {
        Self {
            lifetime,
            min_samples_split,
        }
    }

    /// A lifetime in [0, ∞] and `min_samples_split >= 1`.
    pub fn is_valid(&self) -> bool {
        self.lifetime >= 0.0 && self.min_samples_split >= 1
    }

    /// A block with `n_samples` points and linear dimension `linear_dimension` does not split
    /// (pauses): too few points, or all points identical.
    #[inline]
    pub fn is_paused(&self, n_samples: usize, linear_dimension: f64) -> bool {
        n_samples < self.min_samples_split || linear_dimension <= 0.0
    }
}
