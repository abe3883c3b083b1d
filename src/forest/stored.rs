//! The stored form of a forest: its trees without their data boxes, which are the min/max of
//! each node's training points and so are rebuilt exactly from the stored points on load.
//! The boxes are 2·D floats per node — 60 % of a fully grown forest's bytes (512 of 860 MB
//! for 10 trees on 200,000 × 8 points).

use super::MondrianForest;
use crate::mondrian::arena::Node;
use crate::mondrian::leaf_samples::LeafSamples;
use crate::mondrian::{MondrianTree, NONE};
use crate::rng::TreeRng;
use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};

/// A tree as stored: every field but `bounds`, in [`MondrianTree`]'s order.
#[derive(Deserialize)]
pub(super) struct StoredTree {
    n_features: usize,
    root: u32,
    parent: Vec<u32>,
    nodes: Vec<Node>,
    samples: LeafSamples,
    rng: TreeRng,
}

/// Writes `tree` as a [`StoredTree`] (borrowing it: no copy of the arrays).
struct WithoutBounds<'a>(&'a MondrianTree);

impl Serialize for WithoutBounds<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut s = serializer.serialize_struct("StoredTree", 6)?;
        s.serialize_field("n_features", &t.n_features)?;
        s.serialize_field("root", &t.root)?;
        s.serialize_field("parent", &t.parent)?;
        s.serialize_field("nodes", &t.nodes)?;
        s.serialize_field("samples", &t.samples)?;
        s.serialize_field("rng", &t.rng)?;
        s.end()
    }
}

/// `serialize_with` for a forest's trees.
pub(super) fn serialize_trees<S: Serializer>(
    trees: &[MondrianTree],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut seq = serializer.serialize_seq(Some(trees.len()))?;
    for tree in trees {
        seq.serialize_element(&WithoutBounds(tree))?;
    }
    seq.end()
}

/// The forest as read back, before its boxes are rebuilt.
#[derive(Deserialize)]
pub(super) struct StoredForest {
    params: crate::mondrian::TreeParams,
    n_features: usize,
    seed: u64,
    scale_inputs: bool,
    input_map: Option<crate::input_map::InputMap>,
    x: Vec<f64>,
    trees: Vec<StoredTree>,
}

impl From<StoredForest> for MondrianForest {
    fn from(stored: StoredForest) -> Self {
        let x = stored.x;
        let trees = (stored.trees.into_iter())
            .map(|t| {
                let mut tree = MondrianTree {
                    n_features: t.n_features,
                    root: t.root,
                    parent: t.parent,
                    nodes: t.nodes,
                    bounds: Vec::new(),
                    samples: t.samples,
                    rng: t.rng,
                };
                tree.bounds = rebuilt_bounds(&tree, &x).unwrap_or_default();
                tree
            })
            .collect();
        MondrianForest {
            params: stored.params,
            n_features: stored.n_features,
            seed: stored.seed,
            tree_offset: 0,
            scale_inputs: stored.scale_inputs,
            input_map: stored.input_map,
            x: super::point_store::PointStore::Memory(x),
            trees,
        }
    }
}

/// Every node's data box from the points `x` (row-major) its leaves hold, children first;
/// `None` when the stored arrays do not describe a tree on these points (a corrupt file,
/// which the consistency check then refuses because the boxes are missing).
fn rebuilt_bounds(tree: &MondrianTree, x: &[f64]) -> Option<Vec<f64>> {
    let (n, d) = (tree.nodes.len(), tree.n_features);
    if n == 0 || d == 0 || tree.parent.len() != n || tree.root as usize >= n {
        return (n == 0).then(Vec::new);
    }
    let mut bounds = vec![f64::INFINITY; 2 * n * d];
    for j in 0..n {
        bounds[(2 * j + 1) * d..(2 * j + 2) * d].fill(f64::NEG_INFINITY);
    }
    // Parents before children, by a walk that refuses cycles and stray ids.
    let (mut order, mut stack) = (Vec::with_capacity(n), vec![tree.root]);
    while let Some(j) = stack.pop() {
        let node = *tree.nodes.get(j as usize)?;
        if order.len() >= n {
            return None;
        }
        order.push(j);
        if node.dim != NONE {
            stack.extend([node.left, node.right]);
        }
    }
    for &j in order.iter().rev() {
        let j = j as usize;
        let node = tree.nodes[j];
        let (lo, hi) = (2 * j * d, (2 * j + 1) * d);
        if node.dim == NONE {
            let start = *tree.samples.start.get(j)?;
            let ids =
                (tree.samples.data).get(start..start.checked_add(node.n_samples as usize)?)?;
            for &i in ids {
                let row = x.get(i as usize * d..(i as usize + 1) * d)?;
                for (k, &v) in row.iter().enumerate() {
                    bounds[lo + k] = bounds[lo + k].min(v);
                    bounds[hi + k] = bounds[hi + k].max(v);
                }
            }
        } else {
            for child in [node.left as usize, node.right as usize] {
                if child >= n {
                    return None;
                }
                for k in 0..d {
                    bounds[lo + k] = bounds[lo + k].min(bounds[2 * child * d + k]);
                    bounds[hi + k] = bounds[hi + k].max(bounds[(2 * child + 1) * d + k]);
                }
            }
        }
    }
    Some(bounds)
}
