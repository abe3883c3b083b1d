//! Where a new point falls in a Mondrian tree restricted to training data: its root-to-leaf
//! path and how far it lies outside each path node's data box.
//!
//! Under the conditional Mondrian (NIPS 2014; Balog's report, Thm 1.14) a point x outside the
//! box of node j separates from j's points by a cut born between j's parent (time τ_p) and j
//! (time τ_j; the lifetime λ for a leaf) at rate η_j(x) = Σ_d max(0, l_jd − x_d) +
//! max(0, x_d − u_jd), so with probability 1 − exp(−η_j (τ_j − τ_p)). Forest prediction (the
//! branch-off mixture of `mondrian::branch_off`), Mondrian kernel features and Mondrian
//! partitions (the probability that x still shares its leaf, [`leaf_and_stay_prob`]) all use
//! this geometry.

use super::arena::{MondrianTree, NONE};

/// Reusable buffers for [`route`]: the path's node ids and each one's η.
#[derive(Debug, Default, Clone)]
pub struct RouteScratch {
    pub path: Vec<u32>,
    pub eta: Vec<f64>,
}

/// η_j(x): the linear dimension by which `x` lies outside the box `[lower, upper]`, at most
/// the largest float (a point 1e308 away would give ∞, and ∞ · 0 = NaN where a time
/// difference is 0).
#[inline]
pub fn outside_distance(lower: &[f64], upper: &[f64], x: &[f64]) -> f64 {
    x.iter()
        .zip(lower.iter().zip(upper))
        .map(|(&v, (&l, &u))| (l - v).max(0.0) + (v - u).max(0.0))
        .sum::<f64>()
        .min(f64::MAX)
}

/// Probability 1 − exp(−η · cost) that a point at distance `eta` outside a block that lived
/// `cost` separates from it: 0 when η = 0 or cost = 0, 1 when η > 0 and cost = ∞.
#[inline]
pub fn branch_off_prob(eta: f64, cost: f64) -> f64 {
    if eta <= 0.0 || cost <= 0.0 {
        0.0
    } else if cost.is_infinite() {
        1.0
    } else {
        -(-eta * cost).exp_m1()
    }
}

/// Fills `scratch.path` with the nodes from the root to the leaf alive at `lifetime` (≤ the
/// tree's own; the tree stopped at `lifetime` is a Mondrian tree with that lifetime) that `x`
/// routes to, and `scratch.eta` with η_j(x) for each of them.
///
/// Routing uses only the packed nodes; the η loop comes after, with independent box loads, so
/// the processor overlaps their cache misses instead of chaining them.
pub fn route(tree: &MondrianTree, x: &[f64], lifetime: f64, scratch: &mut RouteScratch) {
    let path = &mut scratch.path;
    path.clear();
    let mut node = tree.root;
    while node != NONE {
        path.push(node);
        let cut = &tree.nodes[node as usize];
        if cut.dim == NONE || cut.tau > lifetime {
            break;
        }
        node = if x[cut.dim as usize] <= cut.threshold {
            cut.left
        } else {
            cut.right
        };
    }
    fill_eta(tree, x, scratch);
}

/// Points routed together by [`route_group`]: enough independent routing chains to keep
/// the processor's outstanding cache misses busy.
pub const GROUP: usize = 16;

/// [`route`] for up to [`GROUP`] points at once (`rows` row-major, `d` wide; one scratch per
/// point): the points descend in lockstep, so the cut loads of different points overlap
/// instead of each point's chain of dependent loads running alone.
pub fn route_group(tree: &MondrianTree, rows: &[f64], d: usize, scratches: &mut [RouteScratch]) {
    let mut nodes = [NONE; GROUP];
    let n = scratches.len().min(GROUP).min(rows.len() / d.max(1));
    for (node, scratch) in nodes.iter_mut().zip(scratches.iter_mut()).take(n) {
        *node = tree.root;
        scratch.path.clear();
    }
    let mut active = true;
    while active {
        active = false;
        for k in 0..n {
            let node = nodes[k];
            if node == NONE {
                continue;
            }
            scratches[k].path.push(node);
            let cut = &tree.nodes[node as usize];
            nodes[k] = if cut.dim == NONE {
                NONE
            } else if rows[k * d + cut.dim as usize] <= cut.threshold {
                cut.left
            } else {
                cut.right
            };
            active |= nodes[k] != NONE;
        }
    }
    fill_eta_group(tree, rows, d, &mut scratches[..n]);
}

/// [`fill_eta`] for a group of routed points in lockstep, one level at a time from the
/// leaves up: the box loads of different points are independent and overlap.
fn fill_eta_group(tree: &MondrianTree, rows: &[f64], d: usize, scratches: &mut [RouteScratch]) {
    let mut active = [false; GROUP];
    for (a, scratch) in active.iter_mut().zip(scratches.iter_mut()) {
        scratch.eta.clear();
        scratch.eta.resize(scratch.path.len(), 0.0);
        *a = !scratch.path.is_empty();
    }
    let mut level = 1;
    while active.iter().any(|&a| a) {
        for (k, scratch) in scratches.iter_mut().enumerate() {
            if !active[k] {
                continue;
            }
            let at = scratch.path.len() - level;
            let j = scratch.path[at];
            let e = outside_distance(tree.lower(j), tree.upper(j), &rows[k * d..(k + 1) * d]);
            scratch.eta[at] = e;
            active[k] = e != 0.0 && at > 0;
        }
        level += 1;
    }
}

/// Walks the paths of `x` in all `trees` at once, reading each visited node's cut and data
/// box, so that the cache misses of the different trees overlap; an online update that
/// follows (one tree after another, each a chain of dependent loads) then finds the nodes in
/// cache. Returns a value computed from the loads so they cannot be optimised away.
pub fn warm_paths(trees: &[MondrianTree], x: &[f64]) -> f64 {
    let mut sink = 0.0;
    for chunk in trees.chunks(GROUP) {
        let mut nodes = [NONE; GROUP];
        for (node, tree) in nodes.iter_mut().zip(chunk) {
            *node = tree.root;
        }
        let mut active = true;
        while active {
            active = false;
            for (node, tree) in nodes.iter_mut().zip(chunk) {
                if *node == NONE {
                    continue;
                }
                // One value per cache line of the box (2·D values from a 16-byte multiple).
                let node_box = tree.node_box(*node);
                sink += node_box.iter().step_by(8).sum::<f64>() + node_box[node_box.len() - 1];
                let cut = &tree.nodes[*node as usize];
                if cut.dim == NONE {
                    // The leaf's range of point ids, which the update appends to.
                    sink += tree.samples.leaf_range_hint(*node) as f64;
                }
                *node = if cut.dim == NONE {
                    NONE
                } else if x[cut.dim as usize] <= cut.threshold {
                    cut.left
                } else {
                    cut.right
                };
                active |= *node != NONE;
            }
        }
    }
    sink
}

/// η for every node on `scratch.path`, computed from the leaf upwards: a node's data box
/// contains its children's, so once η is 0 it is 0 (exactly) for every ancestor and their
/// boxes need not be read.
fn fill_eta(tree: &MondrianTree, x: &[f64], scratch: &mut RouteScratch) {
    let RouteScratch { path, eta } = scratch;
    eta.clear();
    eta.resize(path.len(), 0.0);
    for (e, &j) in eta.iter_mut().zip(path.iter()).rev() {
        *e = outside_distance(tree.lower(j), tree.upper(j), x);
        if *e == 0.0 {
            break;
        }
    }
}

/// The leaf alive at `lifetime` that `x` routes to, and the probability that, under the
/// conditional Mondrian, no cut born by `lifetime` separates `x` from that leaf's points:
/// Π_j exp(−η_j (min(τ_j, λ) − τ_parent)) over the path (Balog's report, Thm 1.14).
pub fn leaf_and_stay_prob(
    tree: &MondrianTree,
    x: &[f64],
    lifetime: f64,
    scratch: &mut RouteScratch,
) -> (u32, f64) {
    route(tree, x, lifetime, scratch);
    let mut log_stay = 0.0;
    let mut t_parent = 0.0;
    for (&j, &eta) in scratch.path.iter().zip(&scratch.eta) {
        let end = tree.tau(j).min(lifetime);
        if eta > 0.0 {
            // η > 0 with an infinite remaining lifetime separates for sure.
            log_stay -= eta * (end - t_parent);
        }
        t_parent = end;
    }
    let leaf = scratch.path.last().copied().unwrap_or(NONE);
    (leaf, log_stay.exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mondrian::TreeParams;
    use crate::rng::{tree_rng, uniform};
    use crate::testing;

    #[test]
    fn inside_the_box_stays_with_certainty() {
        let mut rng = tree_rng(3, 0);
        let x: Vec<f64> = (0..400).map(|_| uniform(&mut rng)).collect();
        let params = TreeParams::new(4.0, 1);
        let tree = testing::tree(&x, 2, &params, 5, 1);
        let mut scratch = RouteScratch::default();
        for row in x.chunks_exact(2) {
            let (leaf, stay) = leaf_and_stay_prob(&tree, row, 4.0, &mut scratch);
            assert_eq!(leaf, tree.leaf_of(row));
            assert_eq!(stay, 1.0);
        }
        // Outside every box by 0.5 in one coordinate: the root alone gives exp(−0.5 τ_root).
        let (_, stay) = leaf_and_stay_prob(&tree, &[1.5, 0.5], 4.0, &mut scratch);
        assert!(stay < (-0.5 * tree.tau(tree.root)).exp() + 1e-15);
        assert!(stay > 0.0);
    }

    #[test]
    fn branch_off_prob_edges() {
        assert_eq!(branch_off_prob(0.0, f64::INFINITY), 0.0);
        assert_eq!(branch_off_prob(1.0, f64::INFINITY), 1.0);
        assert_eq!(branch_off_prob(1.0, 0.0), 0.0);
        assert!((branch_off_prob(2.0, 0.5) - (1.0 - (-1.0f64).exp())).abs() < 1e-15);
    }
}
