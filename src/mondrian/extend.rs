//! Conditional extension of a fitted tree with new points (online learning).
//!
//! "ExtendMondrianBlock" of Lakshminarayanan et al. (NIPS 2014), applied to a batch of new
//! points at once (Balog's report, Thm 1.14): the result has the distribution of a batch fit on
//! old and new points together.
//!
//! At node j with parent time t and new points P: e_low = max(0, l_j − min P),
//! e_up = max(0, max P − u_j), η = Σ_d (e_low + e_up). Unless j is a paused leaf, draw
//! E ~ Exp(η). If E < τ_j − t a new parent is born at t + E with a cut outside j's box (dimension
//! ∝ e_low + e_up, side ∝ e_low vs e_up, location uniform in the gap); the new points beyond
//! the cut form a sibling sampled afresh, the rest continue into j. Otherwise j's box grows,
//! the points descend by j's cut, and a paused leaf that no longer pauses is sampled afresh
//! from t with all its points.
//!
//! The cut of a new parent lies outside j's box, in a gap no old point occupies, so no split
//! policy can choose it (it stays the Mondrian's, which keeps the batch distribution for the
//! label-blind trees); subtrees sampled afresh follow the policy.

use super::arena::{MondrianTree, NONE};
use super::policy::{uniform_in, SplitPolicy};
use super::sample::{grow, Growth, Link};
use super::split_rows::partition_with_boxes;
use crate::rng::{exponential, weighted_index};

/// Working memory of [`extend_tree`], reused across trees and calls so that a stream
/// of small updates does not allocate per tree.
#[derive(Debug, Default)]
pub struct ExtendScratch {
    points: Vec<u32>,
    rows: Vec<f64>,
    here: Vec<f64>,
    bounds: Vec<f64>,
    sides: Vec<f64>,
    gap: Vec<f64>,
    grow: Vec<f64>,
    stack: Vec<(u32, usize, usize, f64)>,
}

/// Adds the rows `new_rows` of `on.x` (row-major, all rows so far) to the tree, and appends
/// to `changed` every leaf whose set of points changed (leaves that received points and the
/// leaves of new subtrees), so that models built on the tree update only those.
pub fn extend_tree<P: SplitPolicy>(
    tree: &mut MondrianTree,
    on: &Growth<'_, P>,
    new_rows: &[u32],
    scratch: &mut ExtendScratch,
    changed: &mut Vec<u32>,
) {
    if new_rows.is_empty() {
        return;
    }
    let (x, params) = (on.x, on.params);
    let ExtendScratch {
        points,
        rows,
        here,
        bounds,
        sides,
        gap,
        grow: scratch,
        stack,
    } = scratch;
    if tree.root == NONE {
        let start = tree.samples.push_block(new_rows);
        grow(
            tree,
            on,
            start,
            new_rows.len(),
            0.0,
            Link::Root,
            scratch,
            changed,
        );
        return;
    }
    let d = tree.n_features;
    points.clear();
    points.extend_from_slice(new_rows);
    // Working copy of the new rows, partitioned along with `points` so that each level reads
    // them sequentially; the partition also yields each side's box.
    rows.clear();
    x.gather(points, d, rows);
    // `bounds` is a stack of the boxes ([lower, upper], 2d values) of the points of each
    // `stack` entry, pushed and popped in step; `here` is the current entry's box.
    here.clear();
    here.resize(d, f64::INFINITY);
    here.resize(2 * d, f64::NEG_INFINITY);
    for row in rows.chunks_exact(d) {
        for k in 0..d {
            here[k] = here[k].min(row[k]);
            here[d + k] = here[d + k].max(row[k]);
        }
    }
    bounds.clear();
    bounds.extend_from_slice(here);
    sides.resize(4 * d, 0.0);
    gap.resize(2 * d, 0.0);
    // (node, range of `points`, birth time of the node's parent)
    stack.clear();
    stack.push((tree.root, 0usize, points.len(), 0.0f64));
    while let Some((node, start, len, t_parent)) = stack.pop() {
        here.copy_from_slice(&bounds[bounds.len() - 2 * d..]);
        bounds.truncate(bounds.len() - 2 * d);
        let (new_lower, new_upper) = here.split_at(d);
        let j = node as usize;
        let pts = &mut points[start..start + len];
        let pts_rows = &mut rows[start * d..(start + len) * d];
        // gap[2k] = how far the new points reach below the box, gap[2k+1] above it.
        let mut eta = 0.0;
        {
            let (lower, upper) = (tree.lower(node), tree.upper(node));
            for k in 0..d {
                gap[2 * k] = (lower[k] - new_lower[k]).max(0.0);
                gap[2 * k + 1] = (new_upper[k] - upper[k]).max(0.0);
                eta += gap[2 * k] + gap[2 * k + 1];
            }
        }
        let n_old = tree.nodes[j].n_samples as usize;
        let paused = tree.is_leaf(node)
            && (params.is_paused(n_old, tree.linear_dimension(node))
                || on.policy.pauses(tree.samples.of(node, n_old)));
        let e = if paused {
            f64::INFINITY
        } else {
            exponential(&mut tree.rng, eta)
        };
        // E is ∞ when the points lie inside the box (η = 0): skip the node's time then.
        if e.is_finite() && e < tree.nodes[j].tau - t_parent {
            let t_new = t_parent + e;
            let side = weighted_index(&mut tree.rng, gap.iter().copied(), eta);
            let (dim, below) = (side / 2, side % 2 == 0);
            let (a, b) = if below {
                (new_lower[dim], tree.lower(node)[dim])
            } else {
                (tree.upper(node)[dim], new_upper[dim])
            };
            let cut = uniform_in(&mut tree.rng, a, b);
            // Points with x[dim] <= cut go first; the new sibling takes the far side.
            let n_left = split(pts_rows, pts, d, dim, cut, sides, here);
            let (far, near, near_side) = if below {
                (start..start + n_left, (start + n_left, len - n_left), 1)
            } else {
                (start + n_left..start + len, (start, n_left), 0)
            };
            let parent = insert_parent(tree, node, dim, cut, t_new, below);
            let p = parent as usize;
            tree.bounds
                .copy_within(2 * d * j..2 * d * (j + 1), 2 * d * p);
            enlarge(tree.boxes_mut(parent, 1), here);
            tree.nodes[p].n_samples = tree.nodes[j].n_samples + len as u32;
            let far_start = tree.samples.push_block(&points[far.clone()]);
            let link = if below {
                Link::Left(parent)
            } else {
                Link::Right(parent)
            };
            grow(
                tree,
                on,
                far_start,
                far.len(),
                t_new,
                link,
                scratch,
                changed,
            );
            if near.1 > 0 {
                stack.push((node, near.0, near.1, t_new));
                bounds.extend_from_slice(&sides[near_side * 2 * d..(near_side + 1) * 2 * d]);
            }
            continue;
        }
        if eta > 0.0 {
            enlarge(tree.boxes_mut(node, 1), here);
        }
        tree.nodes[j].n_samples += len as u32;
        if tree.is_leaf(node) {
            tree.samples.append(node, n_old, pts);
            // Listed even when it resumes splitting below: it is then no longer a leaf, and
            // its owner must forget what it kept for it.
            changed.push(node);
            let n_now = n_old + len;
            let resumes = paused
                && !params.is_paused(n_now, tree.linear_dimension(node))
                && !on.policy.pauses(tree.samples.of(node, n_now));
            if resumes {
                let range_start = tree.samples.start[j];
                tree.samples.release(node, n_now);
                grow(
                    tree,
                    on,
                    range_start,
                    n_now,
                    t_parent,
                    Link::Reuse(node),
                    scratch,
                    changed,
                );
            }
        } else {
            let (dim, cut) = (tree.nodes[j].dim as usize, tree.nodes[j].threshold);
            let n_left = split(pts_rows, pts, d, dim, cut, sides, here);
            let t = tree.nodes[j].tau;
            let children = [
                (tree.nodes[j].left, start, n_left),
                (tree.nodes[j].right, start + n_left, len - n_left),
            ];
            // Right first, so the left child is popped first.
            for side in [1, 0] {
                let (child, child_start, child_len) = children[side];
                if child_len > 0 {
                    stack.push((child, child_start, child_len, t));
                    bounds.extend_from_slice(&sides[side * 2 * d..(side + 1) * 2 * d]);
                }
            }
        }
    }
    let nodes = &tree.nodes;
    tree.samples.maybe_compact(|j| nodes[j].n_samples as usize);
}

/// Splits the points of one stack entry by `x[dim] <= cut` (their box is `here`), writing
/// both sides' boxes into `sides`; returns the number on the left. One point (the common
/// case of online learning) needs no partition pass: its box is `here` on its side.
fn split(
    rows: &mut [f64],
    points: &mut [u32],
    d: usize,
    dim: usize,
    cut: f64,
    sides: &mut [f64],
    here: &[f64],
) -> usize {
    if points.len() != 1 {
        return partition_with_boxes(rows, points, d, dim, cut, sides);
    }
    let left = rows[dim] <= cut;
    let side = usize::from(!left);
    sides[side * 2 * d..(side + 1) * 2 * d].copy_from_slice(here);
    usize::from(left)
}

/// Grows the box `target` to hold the box `other` (each `[lower, upper]`, 2d values).
fn enlarge(target: &mut [f64], other: &[f64]) {
    let d = target.len() / 2;
    let (lower, upper) = target.split_at_mut(d);
    for k in 0..d {
        lower[k] = lower[k].min(other[k]);
        upper[k] = upper[k].max(other[d + k]);
    }
}

/// Inserts a new internal node between `node` and its parent; `node` becomes its right child
/// when the cut lies below the box (`node_is_right`), else its left child. Returns the new id.
fn insert_parent(
    tree: &mut MondrianTree,
    node: u32,
    dim: usize,
    cut: f64,
    tau: f64,
    node_is_right: bool,
) -> u32 {
    let old_parent = tree.parent[node as usize];
    let p = tree.push_node(old_parent);
    match old_parent {
        NONE => tree.root = p,
        q if tree.nodes[q as usize].left == node => tree.nodes[q as usize].left = p,
        q => tree.nodes[q as usize].right = p,
    }
    tree.parent[node as usize] = p;
    let pi = p as usize;
    tree.nodes[pi].dim = dim as u32;
    tree.nodes[pi].threshold = cut;
    tree.nodes[pi].tau = tau;
    if node_is_right {
        tree.nodes[pi].right = node;
    } else {
        tree.nodes[pi].left = node;
    }
    p
}
