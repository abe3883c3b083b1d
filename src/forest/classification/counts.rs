//! The class counts every node of a classification tree keeps (n_jk: the weight of the
//! training points of class k in node j — their number with unit row weights — row-major
//! n_nodes × K), computed once after a batch fit and, after an online update, only for the
//! changed leaves and their ancestors.

use crate::forest::weights::RowWeights;
use crate::mondrian::{MondrianTree, NONE};

/// The classes and weights of the stored points.
pub type Labels<'a> = (&'a [u32], &'a RowWeights);

/// The counts of every node of `tree` whose points have the classes and weights `labels`
/// (`k` classes).
pub fn tree_counts(tree: &MondrianTree, labels: Labels<'_>, k: usize) -> Vec<f64> {
    let mut counts = vec![0.0; tree.n_nodes() * k];
    for &j in tree.preorder().iter().rev() {
        count_node(tree, labels, k, &mut counts, j);
    }
    counts
}

/// After an extension: the counts of the leaves in `changed` (listed by the extension: leaves
/// that received points and leaves of new subtrees) and of their ancestors, recomputed; new
/// nodes get rows.
///
/// A few changed leaves walk up to the root each (O(depth) apiece); many share most of their
/// ancestors, which are then marked once and recomputed children first.
pub fn update_counts(
    tree: &MondrianTree,
    labels: Labels<'_>,
    k: usize,
    counts: &mut Vec<f64>,
    changed: &[u32],
) {
    counts.resize(tree.n_nodes() * k, 0.0);
    for &leaf in changed {
        if tree.is_leaf(leaf) {
            count_node(tree, labels, k, counts, leaf);
        }
    }
    if changed.len() <= FEW {
        // Each ancestor's last recomputation follows those of all changed leaves below it
        // (every walk from such a leaf passes it), so it ends exact.
        for &leaf in changed {
            let mut j = tree.parent[leaf as usize];
            while j != NONE {
                count_node(tree, labels, k, counts, j);
                j = tree.parent[j as usize];
            }
        }
        return;
    }
    let mut dirty = vec![false; tree.n_nodes()];
    for &leaf in changed {
        let mut j = tree.parent[leaf as usize];
        while j != NONE && !dirty[j as usize] {
            dirty[j as usize] = true;
            j = tree.parent[j as usize];
        }
    }
    // Dirty nodes are closed under ancestors: a depth-first walk from the root through dirty
    // nodes reaches them all; each is recomputed after its children (post-order).
    if tree.root == NONE || !dirty[tree.root as usize] {
        return;
    }
    let mut stack = vec![(tree.root, false)];
    while let Some((j, children_done)) = stack.pop() {
        if children_done {
            count_node(tree, labels, k, counts, j);
            continue;
        }
        stack.push((j, true));
        let cut = tree.nodes[j as usize];
        for child in [cut.left, cut.right] {
            if child != NONE && dirty[child as usize] {
                stack.push((child, false));
            }
        }
    }
}

/// Changed leaves up to which ancestors are recounted by walking up from each.
const FEW: usize = 16;

/// Node j's counts: from its points at a leaf, the sum of its children's otherwise.
fn count_node(tree: &MondrianTree, labels: Labels<'_>, k: usize, counts: &mut [f64], j: u32) {
    let ju = j as usize;
    let cut = tree.nodes[ju];
    let (classes, weights) = labels;
    if tree.is_leaf(j) {
        let row = &mut counts[ju * k..(ju + 1) * k];
        row.fill(0.0);
        for &i in tree.samples.of(j, cut.n_samples as usize) {
            row[classes[i as usize] as usize] += weights.of(i);
        }
    } else {
        let (l, r) = (cut.left as usize, cut.right as usize);
        for c in 0..k {
            counts[ju * k + c] = counts[l * k + c] + counts[r * k + c];
        }
    }
}
