//! The arena: a Mondrian tree as parallel arrays indexed by `u32` node ids.

use super::leaf_samples::LeafSamples;
use super::params::TreeParams;
use crate::rng::TreeRng;
use serde::{Deserialize, Serialize};

/// Marks "no node" in `parent`, `Node::left`, `Node::right` and `Node::dim`.
pub const NONE: u32 = u32::MAX;

/// What routing a point through node `j` and updating it online need — its cut, the cut's
/// birth time and its number of points — packed into 32 aligned bytes because prediction and
/// online updates visit nodes in random order: one cache line per visit, never two, instead
/// of one per field. (The data box, 2·D values, lives in [`MondrianTree::bounds`].)
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[repr(C, align(32))]
pub struct Node {
    /// Points with `x[dim] <= threshold` go left (NaN for a leaf).
    pub threshold: f64,
    /// Birth time of the cut; the lifetime λ (possibly ∞) for a leaf.
    pub tau: f64,
    /// Cut dimension; `NONE` for a leaf.
    pub dim: u32,
    pub left: u32,
    pub right: u32,
    /// Number of training points in the block.
    pub n_samples: u32,
}

impl Node {
    /// A leaf without points (its time is set when it stops growing).
    pub const LEAF: Node = Node {
        threshold: f64::NAN,
        tau: f64::INFINITY,
        dim: NONE,
        left: NONE,
        right: NONE,
        n_samples: 0,
    };
}

/// A Mondrian tree restricted to its training points (struct-of-arrays).
///
/// Node `j` has the data box `lower[j*D..(j+1)*D]`, `upper[..]` (min/max of its training
/// points), the number of points `nodes[j].n_samples` and a time `tau(j)` (in `nodes[j]`): the birth
/// time of its cut for an internal node, the lifetime λ (possibly ∞) for a leaf. So for every
/// node `tau(j) - tau(parent)` is how long the block lived (the reference code's
/// `max_split_cost`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MondrianTree {
    pub n_features: usize,
    pub root: u32,
    pub parent: Vec<u32>,
    pub nodes: Vec<Node>,
    /// Data boxes, 2·D values per node: the lower corner, then the upper corner (side by side
    /// because prediction reads both for the same random node).
    pub bounds: Vec<f64>,
    pub samples: LeafSamples,
    /// The tree's own random stream; it advances with every draw, online updates included.
    pub rng: TreeRng,
}

impl MondrianTree {
    /// A tree with no node yet (before the first points arrive).
    pub fn empty(n_features: usize, rng: TreeRng) -> Self {
        Self {
            n_features,
            root: NONE,
            parent: Vec::new(),
            nodes: Vec::new(),
            bounds: Vec::new(),
            samples: LeafSamples::default(),
            rng,
        }
    }

    /// Reserves room for `additional` more nodes, so that growing a large tree does not
    /// re-allocate (and copy, and page in twice) its arrays again and again.
    pub(crate) fn reserve_nodes(&mut self, additional: usize) {
        self.parent.reserve(additional);
        self.nodes.reserve(additional);
        self.bounds.reserve(2 * additional * self.n_features);
        self.samples.start.reserve(additional);
        self.samples.cap.reserve(additional);
    }

    /// Appends a blank leaf and returns its id.
    pub(crate) fn push_node(&mut self, parent: u32) -> u32 {
        let id = self.parent.len() as u32;
        self.parent.push(parent);
        self.nodes.push(Node::LEAF);
        let d = self.n_features;
        self.bounds.extend(std::iter::repeat_n(f64::INFINITY, d));
        self.bounds
            .extend(std::iter::repeat_n(f64::NEG_INFINITY, d));
        self.samples.push_node();
        id
    }

    /// Number of nodes in the arena (every one reachable from the root).
    pub fn n_nodes(&self) -> usize {
        self.parent.len()
    }

    /// Bytes of the state the tree keeps alive: its node arrays and its leaves' point ids
    /// (spare capacity and dead space of the id array, which compaction bounds, excluded).
    pub fn retained_bytes(&self) -> usize {
        let n = self.n_nodes();
        let ids: usize = (self.nodes.iter())
            .filter(|c| c.dim == NONE)
            .map(|c| c.n_samples as usize)
            .sum();
        n * (size_of::<u32>() + size_of::<Node>() + 2 * self.n_features * size_of::<f64>())
            + n * (size_of::<usize>() + size_of::<u32>())
            + ids * size_of::<u32>()
    }

    /// Node ids with every parent before its children (empty for a tree without points).
    pub fn preorder(&self) -> Vec<u32> {
        let mut order = Vec::with_capacity(self.n_nodes());
        if self.root == NONE {
            return order;
        }
        let mut stack = vec![self.root];
        while let Some(j) = stack.pop() {
            order.push(j);
            let cut = &self.nodes[j as usize];
            if cut.dim != NONE {
                stack.push(cut.right);
                stack.push(cut.left);
            }
        }
        order
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.nodes.iter().filter(|c| c.dim == NONE).count()
    }

    #[inline]
    pub fn is_leaf(&self, node: u32) -> bool {
        self.nodes[node as usize].dim == NONE
    }

    /// Lower corner of the data box of `node`.
    #[inline]
    pub fn lower(&self, node: u32) -> &[f64] {
        let s = 2 * node as usize * self.n_features;
        &self.bounds[s..s + self.n_features]
    }

    /// Upper corner of the data box of `node`.
    #[inline]
    pub fn upper(&self, node: u32) -> &[f64] {
        let s = (2 * node as usize + 1) * self.n_features;
        &self.bounds[s..s + self.n_features]
    }

    /// The box of `node` as `[lower corner, upper corner]` (2·D values).
    #[inline]
    pub fn node_box(&self, node: u32) -> &[f64] {
        let s = 2 * node as usize * self.n_features;
        &self.bounds[s..s + 2 * self.n_features]
    }

    /// Mutable boxes of the `count` consecutive nodes from `first` (2·D values each).
    #[inline]
    pub(crate) fn boxes_mut(&mut self, first: u32, count: usize) -> &mut [f64] {
        let w = 2 * self.n_features;
        let s = first as usize * w;
        &mut self.bounds[s..s + count * w]
    }

    /// Σ_d (u_d − l_d): the rate of the block's split time.
    pub fn linear_dimension(&self, node: u32) -> f64 {
        self.lower(node)
            .iter()
            .zip(self.upper(node))
            .map(|(l, u)| u - l)
            .sum()
    }

    /// Birth time of node `j`'s cut (the lifetime for a leaf).
    #[inline]
    pub fn tau(&self, node: u32) -> f64 {
        self.nodes[node as usize].tau
    }

    /// Birth time of the parent's cut (0 for the root).
    #[inline]
    pub fn tau_parent(&self, node: u32) -> f64 {
        match self.parent[node as usize] {
            NONE => 0.0,
            p => self.nodes[p as usize].tau,
        }
    }

    /// How long the block lived: `tau − tau_parent` (the remaining lifetime for a leaf).
    #[inline]
    pub fn max_split_cost(&self, node: u32) -> f64 {
        self.tau(node) - self.tau_parent(node)
    }

    /// The leaf that `x` falls into when routed by the nodes (`x[d] <= threshold` goes left).
    #[inline]
    pub fn leaf_of(&self, x: &[f64]) -> u32 {
        let mut node = self.root;
        loop {
            let cut = &self.nodes[node as usize];
            if cut.dim == NONE {
                return node;
            }
            node = if x[cut.dim as usize] <= cut.threshold {
                cut.left
            } else {
                cut.right
            };
        }
    }

    /// The leaf of the tree stopped at time `lifetime` that `x` falls into (the node alive at
    /// `lifetime` on its path: the tree with lifetime Λ stopped at λ ≤ Λ is a Mondrian tree
    /// with lifetime λ).
    #[inline]
    pub fn leaf_alive_at(&self, x: &[f64], lifetime: f64) -> u32 {
        let mut node = self.root;
        loop {
            let cut = &self.nodes[node as usize];
            if cut.dim == NONE || cut.tau > lifetime {
                return node;
            }
            node = if x[cut.dim as usize] <= cut.threshold {
                cut.left
            } else {
                cut.right
            };
        }
    }

    /// Structural checks run on a deserialised tree so that corrupt bytes give an error,
    /// never an out-of-bounds panic, an endless loop or NaN predictions: array sizes; every
    /// node reached from the root exactly once through children that name their parent;
    /// times increasing down the tree up to the lifetime (leaves at the lifetime); counts
    /// adding up; finite boxes; leaf point ranges inside the index array and below `n_rows`.
    pub fn is_consistent(&self, n_rows: usize, params: &TreeParams) -> bool {
        let n = self.n_nodes();
        let d = self.n_features;
        let sizes_ok = self.nodes.len() == n
            && self.bounds.len() == 2 * n * d
            && self.samples.is_consistent(n);
        if !sizes_ok || (n == 0) != (self.root == NONE) {
            return false;
        }
        if n == 0 {
            return true;
        }
        if self.root as usize >= n || self.parent[self.root as usize] != NONE {
            return false;
        }
        let mut visited = 0usize;
        let mut stack = vec![self.root];
        while let Some(j) = stack.pop() {
            visited += 1;
            if visited > n || !self.node_is_consistent(j, n_rows, params) {
                return false;
            }
            let cut = self.nodes[j as usize];
            if cut.dim != NONE {
                stack.push(cut.left);
                stack.push(cut.right);
            }
        }
        visited == n
    }

    /// The checks of [`Self::is_consistent`] local to node `j` (its children's ids and
    /// parent links included, so that the walk from the root can trust them).
    fn node_is_consistent(&self, j: u32, n_rows: usize, params: &TreeParams) -> bool {
        let (n, ju) = (self.n_nodes(), j as usize);
        let count = self.nodes[ju].n_samples as u64;
        let boxes_ok = self
            .lower(j)
            .iter()
            .zip(self.upper(j))
            .all(|(l, u)| l.is_finite() && u.is_finite() && l <= u);
        let Node {
            threshold,
            tau,
            dim,
            left,
            right,
            ..
        } = self.nodes[ju];
        if count == 0 || !boxes_ok || tau.is_nan() || tau < self.tau_parent(j) {
            return false;
        }
        if dim == NONE {
            let (start, cap) = (self.samples.start[ju], self.samples.cap[ju] as u64);
            return tau == params.lifetime
                && count <= cap
                && start
                    .checked_add(count as usize)
                    .is_some_and(|end| end <= self.samples.data.len())
                && self
                    .samples
                    .of(j, count as usize)
                    .iter()
                    .all(|&i| (i as usize) < n_rows);
        }
        let children_ok = (dim as usize) < self.n_features
            && (left as usize) < n
            && (right as usize) < n
            && left != right
            && self.parent[left as usize] == j
            && self.parent[right as usize] == j;
        children_ok
            && threshold.is_finite()
            && tau.is_finite()
            && tau <= params.lifetime
            && count
                == self.nodes[left as usize].n_samples as u64
                    + self.nodes[right as usize].n_samples as u64
    }
}
