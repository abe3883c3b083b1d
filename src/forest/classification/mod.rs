//! Mondrian forest classification (Lakshminarayanan, Roy & Teh, "Mondrian Forests: Efficient
//! Online Random Forests", NIPS 2014): the same Mondrian trees as the regressor, except that a
//! block whose points all share one class pauses (and resumes when online updates bring
//! another class); every node keeps its class counts ([`counts`]); the predictive smooths them
//! hierarchically ([`smoothing`]) and integrates over where a test point may branch off its
//! path ([`predictive`]). Cuts may be guided by the labels ([`crate::mondrian::guided`], the
//! label-guided-splits poster) with information gain ([`entropy`]).
//!
//! Also here: [`sharpness`] (the trees' average sharpened), [`path`] (the lifetime path),
//! `stored` (the stored form) and `tests`.

pub mod counts;
pub mod entropy;
pub mod path;
pub mod predictive;
pub mod sharpness;
pub mod smoothing;
mod stored;

use super::weights::RowWeights;
use super::{Growing, MondrianForest};
use crate::error::{Error, Result};
use crate::mondrian::guided::{Guidance, Guided};
use crate::mondrian::policy::PausePureBlocks;
use crate::mondrian::MondrianTree;
use crate::parallel::is_small;
use crate::points::Points;
use crate::training_data::check_weights;
use counts::{tree_counts, update_counts, Labels};
use entropy::ClassEntropy;
use ndarray::ArrayView1;
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};
use smoothing::node_means;

/// A forest plus the classes and weights of its points and every node's class counts.
///
/// Stored (`stored.rs`) without the counts and the means, which follow from the rest.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "stored::StoredClassifier")]
pub struct ForestClassifier {
    pub forest: MondrianForest,
    /// Class index (0..K) of every stored point.
    labels: Vec<u32>,
    /// The row weights (frequencies: [`crate::forest::weights`]).
    weights: RowWeights,
    pub n_classes: usize,
    /// Per tree, the (weighted) class counts of every node (n_nodes × K, row-major).
    #[serde(skip)]
    counts: Vec<Vec<f64>>,
    /// Every node's posterior mean per tree (n_nodes × K), computed top-down after a fit;
    /// empty when stale (any count change moves the means of a whole subtree): predictions
    /// then compute the means along their own paths (O(depth · K)), until a large prediction
    /// makes computing them all cheaper. Not stored.
    #[serde(skip)]
    means: Vec<Vec<f64>>,
    /// γ of the discounts d_j = exp(−γ Δ_j) (the paper: 10 · D).
    pub discount_rate: f64,
    /// The least discount of any node (keeps every class's probability positive).
    pub min_discount: f64,
    /// τ of the sharpened average `p_k ∝ p̄_k^τ` ([`sharpness`]; 1: the trees' average).
    sharpness: f64,
    pub guidance: Guidance,
}

/// Path nodes a prediction's means cost, in units of one node of a full top-down pass (one
/// mean per path node, over a path of a few dozen nodes).
const PATH_MEAN_COST: usize = 32;

/// The classification trees' split policy: pure blocks pause; cuts guided by information
/// gain when `guidance` asks for candidates.
fn policy<'a>(
    (labels, weights): Labels<'a>,
    n_classes: usize,
    guidance: Guidance,
) -> Guided<PausePureBlocks<'a>, ClassEntropy<'a>> {
    Guided {
        base: PausePureBlocks { labels },
        guidance,
        impurity: ClassEntropy {
            labels,
            weights,
            n_classes,
        },
    }
}

impl ForestClassifier {
    /// Wraps an empty forest for `n_classes` classes.
    pub fn new(
        forest: MondrianForest,
        n_classes: usize,
        (discount_rate, min_discount): (f64, f64),
        guidance: Guidance,
    ) -> Self {
        Self {
            forest,
            labels: Vec::new(),
            weights: RowWeights::default(),
            n_classes,
            counts: Vec::new(),
            means: Vec::new(),
            discount_rate,
            min_discount,
            sharpness: 1.0,
            guidance,
        }
    }

    /// Errors unless `labels` are `n_rows` (> 0) class indices below K and the optional
    /// `weights` `n_rows` valid row weights.
    fn check_labels(
        &self,
        n_rows: usize,
        labels: &ArrayView1<u32>,
        weights: Option<&ArrayView1<f64>>,
    ) -> Result<()> {
        if let Some(w) = weights {
            check_weights(n_rows, w)?;
        }
        if n_rows != labels.len() || n_rows == 0 {
            return Err(Error::InvalidInput(format!(
                "X has {n_rows} rows but y has {} labels (both must be non-empty)",
                labels.len()
            )));
        }
        if let Some(&bad) = labels.iter().find(|&&c| c as usize >= self.n_classes) {
            return Err(Error::InvalidInput(format!(
                "class index {bad} out of range for {} classes",
                self.n_classes
            )));
        }
        Ok(())
    }

    /// Batch fit on rows `x` with classes `labels` and optional row weights, growing the trees
    /// as `how` says and calling `progress(done)` between slices.
    pub fn fit<P: Points>(
        &mut self,
        x: &P,
        labels: &ArrayView1<u32>,
        weights: Option<&ArrayView1<f64>>,
        how: &Growing<'_>,
        progress: impl FnMut(usize) -> Result<()>,
    ) -> Result<()> {
        self.check_labels(x.n_rows(), labels, weights)?;
        if !self.labels.is_empty() {
            return Err(Error::InvalidInput("fit needs a fresh model".into()));
        }
        self.forest.add_points(x)?;
        self.labels.extend(labels.iter());
        self.weights.append(0, labels.len(), weights);
        let guidance = (self.guidance).bounded(self.labels.len(), self.forest.n_features);
        let rule = policy((&self.labels, &self.weights), self.n_classes, guidance);
        self.forest.grow_to(&rule, how, progress)?;
        let (labels, k) = ((self.labels.as_slice(), &self.weights), self.n_classes);
        self.counts = how.pool.install(|| {
            (self.forest.trees.par_iter())
                .map(|tree| tree_counts(tree, labels, k))
                .collect()
        });
        self.ensure_means(how.pool);
        Ok(())
    }

    /// Online update: extends every tree (conditional Mondrian; paused pure leaves resume
    /// when a new class arrives) and updates the counts along the changed paths, or refits
    /// the trees on every row ([`crate::forest::refit`]) and counts them again.
    pub fn partial_fit<P: Points>(
        &mut self,
        x: &P,
        labels: &ArrayView1<u32>,
        weights: Option<&ArrayView1<f64>>,
        pool: &ThreadPool,
    ) -> Result<()> {
        self.check_labels(x.n_rows(), labels, weights)?;
        let rows = self.forest.add_online_points(x)?;
        self.weights
            .append(self.labels.len(), labels.len(), weights);
        self.labels.extend(labels.iter());
        let guidance = (self.guidance).bounded(self.labels.len(), self.forest.n_features);
        let rule = policy((&self.labels, &self.weights), self.n_classes, guidance);
        let update = self.forest.extend_or_refit(rows, &rule, pool)?;
        let (labels, k) = ((self.labels.as_slice(), &self.weights), self.n_classes);
        self.means.clear();
        if update.refitted {
            self.counts = pool.install(|| {
                (self.forest.trees.par_iter())
                    .map(|tree| tree_counts(tree, labels, k))
                    .collect()
            });
            return Ok(());
        }
        let changed = update.changed;
        let update = |((tree, counts), leaves): ((&MondrianTree, &mut Vec<f64>), &Vec<u32>)| {
            update_counts(tree, labels, k, counts, leaves)
        };
        let work = self.forest.trees.iter().zip(self.counts.iter_mut());
        if changed.iter().all(|c| is_small(c.len())) {
            // Waking the pool costs more than a few paths' counts.
            work.zip(&changed).for_each(update);
        } else {
            let work: Vec<_> = work.zip(&changed).collect();
            pool.install(|| work.into_par_iter().for_each(update));
        }
        Ok(())
    }

    /// Every stored row as the trees see it: points (N × D, row-major, in the forest's
    /// coordinates), class indices and weights (None when every row weighs 1).
    #[allow(clippy::type_complexity)]
    pub fn training_rows(&self) -> Result<(Vec<f64>, &[u32], Option<&[f64]>)> {
        Ok((
            self.forest.copy_points()?,
            &self.labels,
            self.weights.values(),
        ))
    }

    /// τ of the sharpened average.
    pub fn sharpness(&self) -> f64 {
        self.sharpness
    }

    /// Sets τ (finite, > 0).
    pub fn set_sharpness(&mut self, tau: f64) -> Result<()> {
        if !sharpness::is_valid(tau) {
            return Err(Error::InvalidInput(format!(
                "sharpness {tau} out of range (finite, > 0)"
            )));
        }
        self.sharpness = tau;
        Ok(())
    }

    /// The discounts' rate γ and floor.
    pub fn discounts(&self) -> (f64, f64) {
        (self.discount_rate, self.min_discount)
    }

    /// Sets the discounts' rate γ (finite, ≥ 0) and floor (in [0, 1]); the trees and counts do
    /// not depend on them, only the node means, which are computed again when next needed.
    pub fn set_discounts(&mut self, rate: f64, floor: f64) -> Result<()> {
        if !(rate.is_finite() && rate >= 0.0 && (0.0..=1.0).contains(&floor)) {
            return Err(Error::InvalidInput(format!(
                "discount rate {rate} (finite, ≥ 0) or floor {floor} (in [0, 1]) out of range"
            )));
        }
        if (rate, floor) != (self.discount_rate, self.min_discount) {
            (self.discount_rate, self.min_discount) = (rate, floor);
            self.means.clear();
        }
        Ok(())
    }

    /// Whether a prediction of `n_rows` rows should first compute every node's mean
    /// ([`Self::ensure_means`]): when computing them along the rows' paths would cost more.
    pub fn means_worth_refreshing(&self, n_rows: usize) -> bool {
        !self.means_are_fresh()
            && n_rows.saturating_mul(PATH_MEAN_COST) >= self.forest.mean_tree_nodes()
    }

    /// Whether the node means are up to date (else predictions compute them on their paths).
    pub fn means_are_fresh(&self) -> bool {
        self.means.len() == self.forest.trees.len()
    }

    /// Computes every node's posterior mean if an update made them stale (O(nodes · K)).
    pub fn ensure_means(&mut self, pool: &ThreadPool) {
        if self.means_are_fresh() {
            return;
        }
        let (k, rates) = (self.n_classes, (self.discount_rate, self.min_discount));
        let work = self.forest.trees.par_iter().zip(self.counts.par_iter());
        self.means = pool.install(|| {
            work.map(|(tree, counts)| node_means(tree, counts, k, rates))
                .collect()
        });
    }

    /// The (weighted) class counts of every node of tree `index` (n_nodes × K).
    pub fn node_counts(&self, index: usize) -> Result<&[f64]> {
        self.counts.get(index).map(Vec::as_slice).ok_or_else(|| {
            Error::InvalidInput(format!(
                "tree index {index} out of range for {} trees",
                self.counts.len()
            ))
        })
    }

    /// Checks a deserialised model.
    pub fn is_consistent(&self) -> bool {
        let k = self.n_classes;
        self.forest.is_consistent()
            && k >= 1
            && self.discount_rate.is_finite()
            && self.discount_rate >= 0.0
            && (0.0..=1.0).contains(&self.min_discount)
            && sharpness::is_valid(self.sharpness)
            && self.guidance.tries >= 1
            && self.guidance.locations >= 1
            && self.labels.len() == self.forest.n_rows()
            && self.labels.iter().all(|&c| (c as usize) < k)
            && self.weights.is_consistent(self.labels.len())
            && self.counts.len() == self.forest.trees.len()
            && (self.counts.iter().zip(&self.forest.trees)).all(|(c, t)| c.len() == t.n_nodes() * k)
    }
}

#[cfg(test)]
mod tests;
