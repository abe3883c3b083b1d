//! The stored form of a regression forest: what cannot be recomputed exactly. The leaf
//! statistics follow from the targets and the trees' leaves; the posterior messages from the
//! prior in use by one belief-propagation pass, which the first prediction after loading runs.
//! Together 192 of 348 MB for 10 fully grown trees on 200,000 points.

use super::leaf_stats::{refresh_nodes, LeafStats};
use super::prior::{GaussianPrior, PriorOverrides, TargetStats};
use super::{ForestRegressor, PosteriorMode, TreePosterior};
use crate::forest::weights::RowWeights;
use crate::forest::MondrianForest;
use crate::mondrian::guided::Guidance;
use serde::{Deserialize, Serialize, Serializer};

/// The fields written, borrowed from the model.
#[derive(Serialize)]
struct StoredRef<'a> {
    forest: &'a MondrianForest,
    y: &'a [f64],
    weights: &'a RowWeights,
    target_stats: &'a TargetStats,
    overrides: &'a PriorOverrides,
    mode: &'a PosteriorMode,
    guidance: &'a Guidance,
    prior: Option<&'a GaussianPrior>,
    posteriors: &'a [TreePosterior],
    rows_at_prior_choice: usize,
    spread: f64,
}

/// The fields read back, in the same order.
#[derive(Deserialize)]
pub(super) struct StoredRegressor {
    forest: MondrianForest,
    y: Vec<f64>,
    weights: RowWeights,
    target_stats: TargetStats,
    overrides: PriorOverrides,
    mode: PosteriorMode,
    guidance: Guidance,
    prior: Option<GaussianPrior>,
    /// Read to keep the format (always empty when written now), then dropped.
    #[allow(dead_code)]
    posteriors: Vec<TreePosterior>,
    rows_at_prior_choice: usize,
    spread: f64,
}

impl Serialize for ForestRegressor {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        StoredRef {
            forest: &self.forest,
            y: &self.y,
            weights: &self.weights,
            target_stats: &self.target_stats,
            overrides: &self.overrides,
            mode: &self.mode,
            guidance: &self.guidance,
            prior: self.prior.as_ref(),
            posteriors: &[],
            rows_at_prior_choice: self.rows_at_prior_choice,
            spread: self.spread,
        }
        .serialize(serializer)
    }
}

impl From<StoredRegressor> for ForestRegressor {
    fn from(s: StoredRegressor) -> Self {
        // Leaf statistics only over a forest and targets that check out (a corrupt file keeps
        // none, and the consistency check then refuses it).
        let valid = s.forest.is_consistent()
            && s.y.len() == s.forest.n_rows()
            && s.y.iter().all(|v| v.is_finite())
            && s.weights.is_consistent(s.y.len());
        let leaf_stats = if valid {
            (s.forest.trees.iter())
                .map(|tree| {
                    let mut stats = LeafStats::default();
                    let nodes: Vec<u32> = (0..tree.n_nodes() as u32).collect();
                    refresh_nodes(tree, (&s.y, &s.weights), &mut stats, &nodes);
                    stats
                })
                .collect()
        } else {
            Vec::new()
        };
        ForestRegressor {
            forest: s.forest,
            y: s.y,
            weights: s.weights,
            target_stats: s.target_stats,
            leaf_stats,
            overrides: s.overrides,
            mode: s.mode,
            guidance: s.guidance,
            prior: s.prior,
            // Recomputed from the prior by the first prediction (older versions stored
            // messages whose cavities an approximate online update had left stale).
            posteriors: Vec::new(),
            rows_at_prior_choice: s.rows_at_prior_choice,
            spread: s.spread,
            routes: super::routes::RouteCache::default(),
        }
    }
}
