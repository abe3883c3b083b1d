//! Batch sampling of a Mondrian tree on data (Lakshminarayanan et al. AISTATS 2016, Alg. 1–2,
//! with a finite lifetime λ and `min_samples_split`).
//!
//! At a block with parent time t: if it pauses (too few points, all identical, or a reason of
//! the split policy) it is a leaf; else E ~ Exp(linear dimension); if t + E > λ it is a leaf;
//! else the policy chooses the cut (the pure Mondrian: dimension ∝ extent, location uniform)
//! and the block's index range is partitioned in place. Its unit tests are in `tests.rs`.

use super::arena::{MondrianTree, Node, NONE};
use super::params::TreeParams;
use super::policy::{Block, SplitPolicy};
use super::rows::RowSource;
use super::split_rows::partition_with_boxes;
use crate::rng::{exponential, TreeRng};

/// What growing a subtree reads: all training points (row-major, read by id), the tree
/// parameters and the split policy.
#[derive(Debug, Clone, Copy)]
pub struct Growth<'a, P> {
    pub x: &'a dyn RowSource,
    pub params: &'a TreeParams,
    pub policy: &'a P,
}

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
/// place) from time `t_start`, appends its leaves to `new_leaves`, and returns its root.
///
/// The rows are first gathered into a working copy in index order and partitioned along
/// with the indices, so that every level reads memory sequentially; the partition pass also
/// computes both children's boxes, so each level costs one pass over its points.
#[allow(clippy::too_many_arguments)]
pub(crate) fn grow<P: SplitPolicy>(
    tree: &mut MondrianTree,
    on: &Growth<'_, P>,
    start: usize,
    len: usize,
    t_start: f64,
    link: Link,
    scratch: &mut Vec<f64>,
    new_leaves: &mut Vec<u32>,
) -> u32 {
    let (x, params) = (on.x, on.params);
    let d = tree.n_features;
    // `scratch` is reused across calls so a forest fit does not page in a fresh copy per tree.
    let rows = scratch;
    rows.clear();
    rows.reserve(len * d);
    x.gather(&tree.samples.data[start..start + len], d, rows);
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
        let points = start + offset..start + offset + len;
        let mut split = None;
        if !(params.is_paused(len, linear_dimension)
            || on.policy.pauses(&tree.samples.data[points.clone()]))
        {
            let time = t + exponential(&mut tree.rng, linear_dimension);
            if time.is_finite() && time <= params.lifetime {
                let (lower, upper) = tree.bounds[2 * j * d..2 * (j + 1) * d].split_at(d);
                let block = Block {
                    lower,
                    upper,
                    linear_dimension,
                    points: &tree.samples.data[points.clone()],
                    rows: &rows[offset * d..(offset + len) * d],
                };
                let (dim, cut) = on.policy.cut(&mut tree.rng, &block);
                split = Some((time, dim, cut));
            }
        }
        let Some((time, dim, cut)) = split else {
            tree.nodes[j].tau = params.lifetime;
            tree.samples.set_range(node, start + offset, len as u32);
            new_leaves.push(node);
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

/// Samples a whole tree on the rows `0..n_rows` of `on.x` (`n_features` wide); `scratch` is
/// working memory that callers sampling many trees on one thread can reuse.
pub fn sample_tree<P: SplitPolicy>(
    on: &Growth<'_, P>,
    n_features: usize,
    rng: TreeRng,
    scratch: &mut SampleScratch,
) -> MondrianTree {
    let mut tree = MondrianTree::empty(n_features, rng);
    let n_rows = on.x.n_values().checked_div(n_features).unwrap_or(0);
    if n_rows > 0 {
        // About 2N/mss leaves when λ = ∞ (fewer with a finite lifetime); twice that many nodes.
        tree.reserve_nodes(4 * n_rows / on.params.min_samples_split.max(2) + 16);
        tree.samples.data.extend(0..n_rows as u32);
        let SampleScratch { rows, leaves } = scratch;
        grow(&mut tree, on, 0, n_rows, 0.0, Link::Root, rows, leaves);
        // Every leaf is new in a fresh tree: no owner needs the list.
        leaves.clear();
    }
    tree
}

/// Working memory of [`sample_tree`], reused across the trees one thread samples.
#[derive(Debug, Default)]
pub struct SampleScratch {
    rows: Vec<f64>,
    leaves: Vec<u32>,
}

#[cfg(test)]
mod tests;
