//! What every lifetime path (Balog et al. UAI 2016 §4; Balog's report §4.1–4.2) sweeps: the
//! cuts of all trees in birth-time order, each tree's points arranged so that every node's
//! points are contiguous (a cut then hands each child a slice), and the checkpoints where a
//! path stops to evaluate.

use crate::error::{Error, Result};
use crate::mondrian::{MondrianTree, NONE};

/// The cut that splits `node` of tree `tree`, born at `time`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CutEvent {
    pub time: f64,
    pub tree: u32,
    pub node: u32,
}

/// Depth of every node (root 0).
fn depths(tree: &MondrianTree) -> Vec<u32> {
    let mut depth = vec![0u32; tree.n_nodes()];
    let mut stack = vec![tree.root];
    while let Some(j) = stack.pop() {
        let cut = tree.nodes[j as usize];
        if cut.dim != NONE {
            for child in [cut.left, cut.right] {
                depth[child as usize] = depth[j as usize] + 1;
                stack.push(child);
            }
        }
    }
    depth
}

/// Every cut born by `max_time`, sorted by birth time; ties (of probability zero, but
/// possible in floating point) go by tree, then depth, so a parent's cut always comes first.
pub fn cuts_in_birth_order(trees: &[MondrianTree], max_time: f64) -> Vec<CutEvent> {
    let mut keyed: Vec<(CutEvent, u32)> = Vec::new();
    for (t, tree) in trees.iter().enumerate() {
        if tree.root == NONE {
            continue;
        }
        let depth = depths(tree);
        let mut stack = vec![tree.root];
        while let Some(j) = stack.pop() {
            let cut = tree.nodes[j as usize];
            let time = tree.tau(j);
            if cut.dim == NONE || time > max_time {
                continue;
            }
            keyed.push((
                CutEvent {
                    time,
                    tree: t as u32,
                    node: j,
                },
                depth[j as usize],
            ));
            stack.extend([cut.left, cut.right]);
        }
    }
    keyed.sort_by(|(a, da), (b, db)| {
        a.time
            .total_cmp(&b.time)
            .then(a.tree.cmp(&b.tree))
            .then(da.cmp(db))
            .then(a.node.cmp(&b.node))
    });
    keyed.into_iter().map(|(e, _)| e).collect()
}

/// A tree's points in depth-first order of their leaves: node j's points are
/// `rows[start[j]..start[j] + len[j]]`.
#[derive(Debug, Clone, Default)]
pub struct RowOrder {
    pub rows: Vec<u32>,
    pub start: Vec<u32>,
    pub len: Vec<u32>,
}

impl RowOrder {
    /// The tree's training rows (its leaves' samples).
    pub fn new(tree: &MondrianTree) -> Self {
        let len = (tree.nodes.iter()).map(|n| n.n_samples).collect();
        let mut order = Self {
            rows: Vec::with_capacity(tree.nodes.first().map_or(0, |n| n.n_samples) as usize),
            start: vec![0; tree.n_nodes()],
            len,
        };
        if tree.root == NONE {
            return order;
        }
        let mut stack = vec![tree.root];
        while let Some(j) = stack.pop() {
            order.start[j as usize] = order.rows.len() as u32;
            let cut = tree.nodes[j as usize];
            if cut.dim == NONE {
                order.rows.extend_from_slice(
                    tree.samples
                        .of(j, tree.nodes[j as usize].n_samples as usize),
                );
            } else {
                stack.extend([cut.right, cut.left]);
            }
        }
        order
    }

    /// Points `0..leaves.len()` that lie in the leaves `leaves` (one leaf id per point).
    pub fn of_points(tree: &MondrianTree, leaves: &[u32]) -> Self {
        let n = tree.n_nodes();
        let mut len = vec![0u32; n];
        for &leaf in leaves {
            len[leaf as usize] += 1;
        }
        let preorder = tree.preorder();
        for &j in preorder.iter().rev() {
            let cut = tree.nodes[j as usize];
            if cut.dim != NONE {
                len[j as usize] = len[cut.left as usize] + len[cut.right as usize];
            }
        }
        let mut start = vec![0u32; n];
        for &j in &preorder {
            let cut = tree.nodes[j as usize];
            if cut.dim != NONE {
                start[cut.left as usize] = start[j as usize];
                start[cut.right as usize] = start[j as usize] + len[cut.left as usize];
            }
        }
        let mut next = start.clone();
        let mut rows = vec![0u32; leaves.len()];
        for (i, &leaf) in leaves.iter().enumerate() {
            rows[next[leaf as usize] as usize] = i as u32;
            next[leaf as usize] += 1;
        }
        Self { rows, start, len }
    }

    /// The points in `node`.
    #[inline]
    pub fn of(&self, node: u32) -> &[u32] {
        let s = self.start[node as usize] as usize;
        &self.rows[s..s + self.len[node as usize] as usize]
    }
}

/// Where a path stops to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub enum Checkpoints {
    /// At λ = 0 and after every cut.
    EveryCut,
    /// At λ = 0 and after about every (n_cuts / k)-th cut, k checkpoints in all after λ = 0.
    Count(usize),
    /// At these lifetimes.
    Lifetimes(Vec<f64>),
}

impl Checkpoints {
    /// From the bindings' two optional arguments: lifetimes win, then a count, else every cut.
    pub fn from_options(count: Option<usize>, lifetimes: Option<Vec<f64>>) -> Self {
        match (count, lifetimes) {
            (_, Some(l)) => Self::Lifetimes(l),
            (Some(k), None) => Self::Count(k),
            (None, None) => Self::EveryCut,
        }
    }

    /// (number of cuts applied, lifetime) at each checkpoint, in order. A checkpoint after
    /// the k-th cut describes the trees on [τ_k, τ_{k+1}) and is recorded at λ = τ_k (or at
    /// the requested λ).
    pub fn plan(&self, events: &[CutEvent], max_lifetime: f64) -> Result<Vec<(usize, f64)>> {
        let e = events.len();
        let time = |k: usize| if k == 0 { 0.0 } else { events[k - 1].time };
        Ok(match self {
            Self::EveryCut => (0..=e).map(|k| (k, time(k))).collect(),
            Self::Count(count) => {
                // More checkpoints than cuts is every cut (and a count of 2⁶³ must not loop).
                let count = (*count).clamp(1, e.max(1));
                let mut plan = vec![(0, 0.0)];
                for i in 1..=count {
                    let k = (i * e).div_ceil(count);
                    if k > plan.last().map_or(0, |p| p.0) {
                        plan.push((k, time(k)));
                    }
                }
                plan
            }
            Self::Lifetimes(lifetimes) => {
                if lifetimes.iter().any(|l| !(*l >= 0.0 && *l <= max_lifetime)) {
                    return Err(Error::InvalidParameter {
                        name: "lifetimes",
                        reason: format!("must lie in [0, max_lifetime = {max_lifetime}]"),
                    });
                }
                let mut sorted = lifetimes.clone();
                sorted.sort_by(f64::total_cmp);
                sorted
                    .into_iter()
                    .map(|l| (events.partition_point(|ev| ev.time <= l), l))
                    .collect()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mondrian::TreeParams;
    use crate::testing::{tree, uniform_points};

    #[test]
    fn events_sorted_parents_first_and_rows_contiguous() {
        let x = uniform_points(100, 3, 9);
        let params = TreeParams::new(6.0, 1);
        let trees: Vec<_> = (0..3).map(|m| tree(&x, 3, &params, 4, m)).collect();
        let events = cuts_in_birth_order(&trees, 6.0);
        let internal: usize = trees.iter().map(|t| t.n_nodes() - t.n_leaves()).sum();
        assert_eq!(events.len(), internal);
        assert!(events.windows(2).all(|w| w[0].time <= w[1].time));
        let early = cuts_in_birth_order(&trees, 2.0);
        assert!(early.iter().all(|e| e.time <= 2.0));
        assert_eq!(&events[..early.len()], early.as_slice());
        for t in &trees {
            let order = RowOrder::new(t);
            let mut all = order.of(t.root).to_vec();
            all.sort_unstable();
            assert_eq!(all, (0..100).collect::<Vec<u32>>());
            let leaves: Vec<u32> = x.chunks_exact(3).map(|row| t.leaf_of(row)).collect();
            let routed = RowOrder::of_points(t, &leaves);
            for j in 0..t.n_nodes() as u32 {
                let (mut a, mut b) = (order.of(j).to_vec(), routed.of(j).to_vec());
                a.sort_unstable();
                b.sort_unstable();
                assert_eq!(a, b, "points of node {j}");
                let cut = t.nodes[j as usize];
                if cut.dim != NONE {
                    let (l, r) = (order.of(cut.left), order.of(cut.right));
                    assert_eq!([l, r].concat(), order.of(j));
                    let side = |&i: &u32| x[i as usize * 3 + cut.dim as usize] <= cut.threshold;
                    assert!(l.iter().all(side) && !r.iter().any(side));
                }
            }
        }
    }
}
