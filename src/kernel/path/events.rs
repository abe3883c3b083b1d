//! The cuts of all trees in birth-time order (the lifetime path's events, Balog et al.
//! UAI 2016 §4), and each tree's training rows arranged so that every node's rows are
//! contiguous (a cut then hands each child a slice).

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

/// A tree's training rows in depth-first order: node j's rows are
/// `rows[start[j]..start[j] + n_samples[j]]`.
#[derive(Debug, Clone, Default)]
pub struct RowOrder {
    pub rows: Vec<u32>,
    pub start: Vec<u32>,
}

impl RowOrder {
    /// Depth-first walk collecting the leaves' points.
    pub fn new(tree: &MondrianTree) -> Self {
        let mut order = Self {
            rows: Vec::with_capacity(tree.nodes.first().map_or(0, |n| n.n_samples) as usize),
            start: vec![0; tree.n_nodes()],
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

    /// The rows held by `node`.
    #[inline]
    pub fn of(&self, tree: &MondrianTree, node: u32) -> &[u32] {
        let s = self.start[node as usize] as usize;
        &self.rows[s..s + tree.nodes[node as usize].n_samples as usize]
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
            let mut all = order.of(t, t.root).to_vec();
            all.sort_unstable();
            assert_eq!(all, (0..100).collect::<Vec<u32>>());
            for j in 0..t.n_nodes() as u32 {
                let cut = t.nodes[j as usize];
                if cut.dim != NONE {
                    let (l, r) = (order.of(t, cut.left), order.of(t, cut.right));
                    assert_eq!([l, r].concat(), order.of(t, j));
                    let side = |&i: &u32| x[i as usize * 3 + cut.dim as usize] <= cut.threshold;
                    assert!(l.iter().all(side) && !r.iter().any(side));
                }
            }
        }
    }
}
