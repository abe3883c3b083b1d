//! Rows routed once through every tree, for a criterion that scores the same rows under many
//! priors (the held-out rule's search evaluates the held-out log density a hundred times on
//! one scoring forest): the paths and each path node's η depend on the trees and the rows,
//! not on the prior, and routing them was most of an evaluation.

use crate::mondrian::route::RouteScratch;
use crate::points::Points;
use std::sync::{Mutex, MutexGuard};

/// Row-trees (rows × trees) kept at most: the held-out rule's 2,000 rows × 8 scoring trees
/// fit; a large prediction is routed as it goes instead of holding its paths.
pub const MAX_ROUTED: usize = 1 << 17;

/// What identifies routed rows: a hash of the rows' values, their number, and the forest's
/// rows and nodes (an update changes those; fits and updates also clear the cache).
pub type RouteKey = (u64, usize, usize, usize);

/// The routes of one set of rows: per row, per tree, its path and η.
pub struct Routed {
    pub key: RouteKey,
    pub routes: Vec<Vec<RouteScratch>>,
}

/// A cache of one [`Routed`] set, shared by readers (predictions take the model by shared
/// reference, so the cache has its own lock).
#[derive(Default)]
pub struct RouteCache {
    inner: Mutex<Option<Routed>>,
}

impl RouteCache {
    /// The cache, locked (a poisoned lock only means a panic elsewhere: the cache is valid
    /// or empty either way).
    pub fn lock(&self) -> MutexGuard<'_, Option<Routed>> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Forgets the routes (the trees changed).
    pub fn clear(&self) {
        *self.lock() = None;
    }
}

impl Clone for RouteCache {
    /// A copy starts empty (routes are rebuilt when needed).
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for RouteCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RouteCache")
    }
}

/// A 64-bit FNV-1a hash of the rows' values (raw, before any input map).
pub fn rows_hash<P: Points>(x: &P) -> u64 {
    let mut buffer = Vec::new();
    let values = x.block(0..x.n_rows(), None, &mut buffer);
    values.iter().fold(0xcbf2_9ce4_8422_2325, |h: u64, v| {
        (h ^ v.to_bits()).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
