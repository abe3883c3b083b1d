//! Which training points each leaf holds, as ranges of one index array.
//!
//! Batch sampling partitions the index array in place, so every leaf owns a contiguous range
//! (O(N) memory per tree). Online updates append to a leaf; when its range is full the range
//! moves to the end of the array with doubled capacity (amortised O(1) per point), and the
//! array is compacted when more than half of it is dead space.

use serde::{Deserialize, Serialize};

/// Per-node ranges into one shared index array. Internal nodes own no range (`cap == 0`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LeafSamples {
    pub(crate) data: Vec<u32>,
    pub(crate) start: Vec<usize>,
    pub(crate) cap: Vec<u32>,
    garbage: usize,
}

impl LeafSamples {
    /// Registers a node that owns nothing yet.
    pub(crate) fn push_node(&mut self) {
        self.start.push(0);
        self.cap.push(0);
    }

    /// Gives `node` the range `[start, start + cap)`.
    pub(crate) fn set_range(&mut self, node: u32, start: usize, cap: u32) {
        self.start[node as usize] = start;
        self.cap[node as usize] = cap;
    }

    /// `node` stops owning its range; `len` of its slots are handed on to its children,
    /// the rest becomes dead space.
    pub(crate) fn release(&mut self, node: u32, len: usize) {
        self.garbage += (self.cap[node as usize] as usize).saturating_sub(len);
        self.cap[node as usize] = 0;
    }

    /// Appends `indices` at the end of the array and returns where they start.
    pub(crate) fn push_block(&mut self, indices: &[u32]) -> usize {
        let start = self.data.len();
        self.data.extend_from_slice(indices);
        start
    }

    /// The first `len` indices held by `node`.
    pub fn of(&self, node: u32, len: usize) -> &[u32] {
        let s = self.start[node as usize];
        &self.data[s..s + len]
    }

    /// A value read from `node`'s entries and the first id of its range (for cache warming;
    /// 0 when the range is empty or out of bounds).
    #[inline]
    pub(crate) fn leaf_range_hint(&self, node: u32) -> u32 {
        let n = node as usize;
        let start = self.start.get(n).copied().unwrap_or(0);
        self.cap.get(n).copied().unwrap_or(0) ^ self.data.get(start).copied().unwrap_or(0)
    }

    /// Adds `indices` to leaf `node`, which holds `len` of them now.
    pub(crate) fn append(&mut self, node: u32, len: usize, indices: &[u32]) {
        let n = node as usize;
        let needed = len + indices.len();
        if needed <= self.cap[n] as usize {
            let s = self.start[n] + len;
            self.data[s..s + indices.len()].copy_from_slice(indices);
            return;
        }
        // Capacities are u32 like point ids (at most u32::MAX − 1 points in all).
        let new_cap = (2 * needed).clamp(8, u32::MAX as usize);
        let old = self.start[n];
        let new_start = self.data.len();
        self.data.extend_from_within(old..old + len);
        self.data.extend_from_slice(indices);
        self.data.resize(new_start + new_cap, u32::MAX);
        self.garbage += self.cap[n] as usize;
        self.start[n] = new_start;
        self.cap[n] = new_cap as u32;
    }

    /// Rewrites the array without dead space when it is more than half dead.
    /// `len_of(node)` gives the number of points a leaf holds.
    pub(crate) fn maybe_compact(&mut self, len_of: impl Fn(usize) -> usize) {
        if self.garbage * 2 <= self.data.len() {
            return;
        }
        let mut data = Vec::with_capacity(self.data.len().saturating_sub(self.garbage));
        for n in 0..self.start.len() {
            if self.cap[n] > 0 {
                let len = len_of(n);
                let s = self.start[n];
                self.start[n] = data.len();
                self.cap[n] = len as u32;
                data.extend_from_slice(&self.data[s..s + len]);
            }
        }
        self.data = data;
        self.garbage = 0;
    }

    /// True when the per-node arrays have `n_nodes` entries and the dead-space count is
    /// possible (the tree checks each leaf's range against its point count).
    pub(crate) fn is_consistent(&self, n_nodes: usize) -> bool {
        self.garbage <= self.data.len() && self.start.len() == n_nodes && self.cap.len() == n_nodes
    }
}
