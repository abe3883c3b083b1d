//! Batch sampling of a Mondrian tree on data (Lakshminarayanan et al. AISTATS 2016, Alg. 1–2,
//! with a finite lifetime λ and `min_samples_split`).
//!
//! At a block with parent time t: if it pauses (too few points, or all identical) it is a
//! leaf; else E ~ Exp(linear dimension); if t + E > λ it is a leaf; else the cut dimension is
//! drawn ∝ extent, the location uniformly in the extent, and the block's index range is
//! partitioned in place.

use super::arena::{MondrianTree, Node, NONE};
use super::params::TreeParams;
use super::partition::partition_with_boxes;
use crate::rng::{exponential, uniform, weighted_index, TreeRng};

/// Where the root of a freshly sampled subtree goes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Link {
    /// It becomes the tree's root.
    Root,
    /// It is a new left / right child of the given node.
    Left(u32),
    Right(u32),
    /// It overwrites this existing (leaf) node in place, keeping its parent.
    Reuse(u32),
}

/// Samples the subtree over the indices `samples.data[start..start + len]` (partitioned in
/// place) from time `t_start`, and returns the id of its root.
///
/// The rows are first gathered into a working copy in index order and partitioned along
/// with the indices, so that every level reads memory sequentially; the partition pass also
/// computes both children's boxes, so each level costs one pass over its points.
#[allow(clippy::too_many_arguments)]
pub(crate) fn grow(
    tree: &mut MondrianTree,
    x: &[f64],
    start: usize,
    len: usize,
    t_start: f64,
    link: Link,
    params: &TreeParams,
    scratch: &mut Vec<f64>,
) -> u32 {
    let d = tree.n_features;
    // `scratch` is reused across calls so a forest fit does not page in a fresh copy per tree.
    let rows = scratch;
    rows.clear();
    rows.reserve(len * d);
    for &i in &tree.samples.data[start..start + len] {
        rows.extend_from_slice(&x[i as usize * d..(i as usize + 1) * d]);
    }
    let root = match link {
        Link::Reuse(j) => {
            reset_node(tree, j);
            j
        }
        Link::Root => {
            let j = tree.push_node(NONE);
            tree.root = j;
            j
        }
        Link::Left(p) => {
            let j = tree.push_node(p);
            tree.nodes[p as usize].left = j;
            j
        }
        Link::Right(p) => {
            let j = tree.push_node(p);
            tree.nodes[p as usize].right = j;
            j
        }
    };
    let r = root as usize;
    tree.nodes[r].n_samples = len as u32;
    let (lower, upper) = tree.boxes_mut(root, 1).split_at_mut(d);
    lower.fill(f64::INFINITY);
    upper.fill(f64::NEG_INFINITY);
    for row in rows.chunks_exact(d) {
        add_to_box(row, lower, upper);
    }
    // (node, offset of its points in `rows`, their number, birth time of its parent)
    let mut stack = vec![(root, 0usize, len, t_start)];
    while let Some((node, offset, len, t)) = stack.pop() {
        let j = node as usize;
        let linear_dimension = tree.linear_dimension(node);
        let mut split = None;
        if !params.is_paused(len, linear_dimension) {
            let time = t + exponential(&mut tree.rng, linear_dimension);
            if time.is_finite() && time <= params.lifetime {
                let (lower, upper) = tree.bounds[2 * j * d..2 * (j + 1) * d].split_at(d);
                let (dim, cut) = draw_cut(&mut tree.rng, lower, upper, linear_dimension);
                split = Some((time, dim, cut));
            }
        }
        let Some((time, dim, cut)) = split else {
            tree.nodes[j].tau = params.lifetime;
            tree.samples.set_range(node, start + offset, len as u32);
            tree.touched.push(node);
            continue;
        };
        tree.nodes[j].tau = time;
        tree.nodes[j].dim = dim as u32;
        tree.nodes[j].threshold = cut;
        let left = tree.push_node(node);
        let right = tree.push_node(node);
        tree.nodes[j].left = left;
        tree.nodes[j].right = right;
        let n_left = partition_with_boxes(
            &mut rows[offset * d..(offset + len) * d],
            &mut tree.samples.data[start + offset..start + offset + len],
            d,
            dim,
            cut,
            // The two children are consecutive nodes, so their boxes are one slice.
            &mut tree.bounds[2 * left as usize * d..2 * (left as usize + 2) * d],
        );
        tree.nodes[left as usize].n_samples = n_left as u32;
        tree.nodes[right as usize].n_samples = (len - n_left) as u32;
        stack.push((right, offset + n_left, len - n_left, time));
        stack.push((left, offset, n_left, time));
    }
    root
}

/// Turns an existing node back into a blank leaf before it is resampled.
fn reset_node(tree: &mut MondrianTree, j: u32) {
    let j = j as usize;
    tree.nodes[j] = Node::LEAF;
    tree.samples.cap[j] = 0;
}

#[inline]
fn add_to_box(row: &[f64], lower: &mut [f64], upper: &mut [f64]) {
    for ((l, u), &v) in lower.iter_mut().zip(upper.iter_mut()).zip(row) {
        *l = l.min(v);
        *u = u.max(v);
    }
}

/// Cut dimension ∝ extent and a location uniform in it, with `lower[dim] <= cut < upper[dim]`
/// so that both sides receive at least one point.
fn draw_cut(rng: &mut TreeRng, lower: &[f64], upper: &[f64], total: f64) -> (usize, f64) {
    let dim = weighted_index(rng, lower.iter().zip(upper).map(|(l, u)| u - l), total);
    let (l, u) = (lower[dim], upper[dim]);
    loop {
        // Convex combination: cannot overflow even when u − l would.
        let w = uniform(rng);
        let cut = (1.0 - w) * l + w * u;
        if cut >= l && cut < u {
            return (dim, cut);
        }
    }
}

/// Samples a whole tree on the rows `0..n_rows` of `x`; `scratch` is working memory that
/// callers sampling many trees on one thread can reuse.
pub fn sample_tree(
    x: &[f64],
    n_features: usize,
    params: &TreeParams,
    rng: TreeRng,
    scratch: &mut Vec<f64>,
) -> MondrianTree {
    let mut tree = MondrianTree::empty(n_features, rng);
    let n_rows = x.len().checked_div(n_features).unwrap_or(0);
    if n_rows > 0 {
        // About 2N/mss leaves when λ = ∞ (fewer with a finite lifetime); twice that many nodes.
        tree.reserve_nodes(4 * n_rows / params.min_samples_split.max(2) + 16);
        tree.samples.data.extend(0..n_rows as u32);
        grow(&mut tree, x, 0, n_rows, 0.0, Link::Root, params, scratch);
    }
    // Every leaf is new in a fresh tree: owners know that without a list of them.
    tree.touched = Vec::new();
    tree
}
