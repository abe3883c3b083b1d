//! Which training points each leaf holds, as ranges of one index array.
//!
//! Batch sampling partitions the index array in place, so every leaf owns a contiguous range
//! (O(N) memory per tree). Online updates append to a leaf; when its range is full the range
//! moves to the end of the array with a quarter more room than it needs (amortised O(1) per
//! point), and the array is compacted in place when more than a quarter of it is dead space:
//! at most 4/3 × 5/4 = 5/3 slots per point. (Doubled ranges compacted at half dead space held
//! up to 4 slots per point, and the copy made in compacting a fifth: a forest streamed over
//! 6·10⁶ rows took 1.25 GB for 5 trees whose ids are 120 MB.)

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
        let new_cap = (needed + needed / 4).clamp(8, u32::MAX as usize);
        let old = self.start[n];
        let new_start = self.data.len();
        self.data.extend_from_within(old..old + len);
        self.data.extend_from_slice(indices);
        self.data.resize(new_start + new_cap, u32::MAX);
        self.garbage += self.cap[n] as usize;
        self.start[n] = new_start;
        self.cap[n] = new_cap as u32;
    }

    /// Rewrites the array without dead space, in place, when it is more than a quarter dead;
    /// every range keeps its capacity. `len_of(node)` gives the number of points a leaf
    /// holds.
    pub(crate) fn maybe_compact(&mut self, len_of: impl Fn(usize) -> usize) {
        if self.garbage * 4 <= self.data.len() {
            return;
        }
        let mut owners: Vec<usize> = (0..self.start.len()).filter(|&n| self.cap[n] > 0).collect();
        owners.sort_unstable_by_key(|&n| self.start[n]);
        // A deserialised array is trusted only as far as the tree's checks go (each leaf's
        // points inside it): ranges that overlap, reach past the array or hold more than
        // their capacity leave it as it is (a corrupt file gave a panic here).
        let mut end = 0;
        for &n in &owners {
            let (s, cap) = (self.start[n], self.cap[n] as usize);
            if s < end || len_of(n) > cap || s.checked_add(cap).is_none_or(|e| e > self.data.len())
            {
                return;
            }
            end = s + cap;
        }
        // Ranges move down in order of their starts, so none is overwritten before it moves.
        let mut write = 0;
        for n in owners {
            let (s, len) = (self.start[n], len_of(n));
            self.data.copy_within(s..s + len, write);
            self.start[n] = write;
            write += self.cap[n] as usize;
        }
        self.data.truncate(write);
        self.data.shrink_to_fit();
        self.garbage = 0;
    }

    /// True when the per-node arrays have `n_nodes` entries and the dead-space count is
    /// possible (the tree checks each leaf's range against its point count).
    pub(crate) fn is_consistent(&self, n_nodes: usize) -> bool {
        self.garbage <= self.data.len() && self.start.len() == n_nodes && self.cap.len() == n_nodes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_keep_contents_and_bound_the_slots() {
        // 50 leaves fed a few ids at a time, as a stream's chunks feed them.
        let mut s = LeafSamples::default();
        let mut held: Vec<Vec<u32>> = vec![Vec::new(); 50];
        for _ in 0..50 {
            s.push_node();
        }
        let mut next = 0u32;
        for round in 0..400 {
            for (n, ids) in held.iter_mut().enumerate() {
                let k = 1 + (n * 7 + round) % 5;
                let new: Vec<u32> = (next..next + k as u32).collect();
                next += k as u32;
                s.append(n as u32, ids.len(), &new);
                ids.extend(&new);
            }
            s.maybe_compact(|n| held[n].len());
            for (n, ids) in held.iter().enumerate() {
                assert_eq!(s.of(n as u32, ids.len()), ids.as_slice());
            }
            let live: usize = held.iter().map(Vec::len).sum();
            // Ranges at most 5/4 of what they hold (or 8), dead space at most a quarter.
            assert!(
                s.data.len() * 3 <= 4 * (live + live / 4 + 8 * 50),
                "{round}"
            );
        }
    }

    #[test]
    fn inconsistent_ranges_are_left_uncompacted() {
        // Two leaves whose ranges overlap (as corrupt bytes could give): no panic, no move.
        let mut s = LeafSamples::default();
        s.push_node();
        s.push_node();
        s.data = (0..20).collect();
        s.set_range(0, 0, 12);
        s.set_range(1, 10, 10);
        s.garbage = 15;
        s.maybe_compact(|_| 10);
        assert_eq!(s.data, (0..20).collect::<Vec<u32>>());
        assert_eq!((s.start[1], s.cap[1]), (10, 10));
    }
}
