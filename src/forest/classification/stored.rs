//! The stored form of a classification forest: everything but the class counts and the node
//! means, which follow exactly from the trees, the labels and the weights (recounted on load;
//! 8 bytes per node and class saved in the file).

use super::counts::tree_counts;
use super::ForestClassifier;
use crate::forest::weights::RowWeights;
use crate::forest::MondrianForest;
use crate::mondrian::guided::Guidance;
use serde::Deserialize;

/// The fields read back, in the order the model writes them (its serialised fields).
#[derive(Deserialize)]
pub(super) struct StoredClassifier {
    forest: MondrianForest,
    labels: Vec<u32>,
    weights: RowWeights,
    n_classes: usize,
    discount_rate: f64,
    min_discount: f64,
    sharpness: f64,
    guidance: Guidance,
}

impl From<StoredClassifier> for ForestClassifier {
    fn from(s: StoredClassifier) -> Self {
        // Counts only over a forest, labels and weights that check out (a corrupt file keeps
        // none, and the consistency check then refuses it).
        let valid = s.forest.is_consistent()
            && s.labels.len() == s.forest.n_rows()
            && s.labels.iter().all(|&c| (c as usize) < s.n_classes)
            && s.weights.is_consistent(s.labels.len());
        let counts = if valid {
            (s.forest.trees.iter())
                .map(|tree| tree_counts(tree, (&s.labels, &s.weights), s.n_classes))
                .collect()
        } else {
            Vec::new()
        };
        ForestClassifier {
            forest: s.forest,
            labels: s.labels,
            weights: s.weights,
            n_classes: s.n_classes,
            counts,
            means: Vec::new(),
            discount_rate: s.discount_rate,
            min_discount: s.min_discount,
            sharpness: s.sharpness,
            guidance: s.guidance,
        }
    }
}
