//! The class counts every node of a classification tree keeps (n_jk: training points of class
//! k in node j, row-major n_nodes × K), computed once after a batch fit and, after an online
//! update, only for the changed leaves and their ancestors.

use crate::mondrian::MondrianTree;

/// The counts of every node of `tree` whose points have the classes `labels` (`k` classes).
pub fn tree_counts(tree: &MondrianTree, labels: &[u32], k: usize) -> Vec<u32> {
    let mut counts = vec![0u32; tree.n_nodes() * k];
    for &j in tree.preorder().iter().rev() {
        count_node(tree, labels, k, &mut counts, j);
    }
    counts
}

/// After an extension: the counts of the leaves in `changed` (listed by the extension: leaves
/// that received points and leaves of new subtrees) and of their ancestors, recomputed; new
/// nodes get rows. Each ancestor's last recomputation follows those of all changed leaves
/// below it (every walk from such a leaf passes it), so it ends exact.
pub fn update_counts(
    tree: &MondrianTree,
    labels: &[u32],
    k: usize,
    counts: &mut Vec<u32>,
    changed: &[u32],
) {
    counts.resize(tree.n_nodes() * k, 0);
    for &leaf in changed {
        if tree.is_leaf(leaf) {
            count_node(tree, labels, k, counts, leaf);
        }
    }
    for &leaf in changed {
        let mut j = tree.parent[leaf as usize];
        while j != crate::mondrian::NONE {
            count_node(tree, labels, k, counts, j);
            j = tree.parent[j as usize];
        }
    }
}

/// Node j's counts: from its points at a leaf, the sum of its children's otherwise.
fn count_node(tree: &MondrianTree, labels: &[u32], k: usize, counts: &mut [u32], j: u32) {
    let ju = j as usize;
    let cut = tree.nodes[ju];
    if tree.is_leaf(j) {
        let row = &mut counts[ju * k..(ju + 1) * k];
        row.fill(0);
        for &i in tree.samples.of(j, cut.n_samples as usize) {
            row[labels[i as usize] as usize] += 1;
        }
    } else {
        let (l, r) = (cut.left as usize, cut.right as usize);
        for c in 0..k {
            counts[ju * k + c] = counts[l * k + c] + counts[r * k + c];
        }
    }
}
