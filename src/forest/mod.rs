//! A forest of Mondrian trees over one shared copy of the training points: the machinery
//! every model on the trees shares (regression in [`regression`]; the kernel features and
//! partitions build on it too). Models own their labels and their per-node statistics; the
//! forest grows and extends the trees under the model's split policy and reports which leaves
//! an extension changed.
//!
//! Tree `m` draws from the stream `tree_rng(seed, m)`, trees are sampled and extended in
//! parallel on a local pool, and every reduction over trees runs in tree order, so results do
//! not depend on the number of threads.
//!
//! Besides the two models ([`regression`], [`classification`]): [`data`] (the points stored
//! and queried), [`point_store`] (kept in memory or in a file), [`weights`] (row weights),
//! [`refit`] (refits of an online forest), [`lifetime_path`] (training and validation scores
//! along λ), `stored` (the stored form of the trees) and `tests`.

pub mod classification;
pub mod data;
pub mod lifetime_path;
pub mod point_store;
pub mod refit;
pub mod regression;
mod stored;
pub mod weights;

use crate::error::{Error, Result};
use crate::input_map::InputMap;
use crate::mondrian::extend::{extend_tree, ExtendScratch};
use crate::mondrian::policy::SplitPolicy;
use crate::mondrian::route::warm_paths;
use crate::mondrian::sample::{sample_tree, Growth, SampleScratch};
use crate::mondrian::{MondrianTree, TreeParams};
use crate::parallel::{is_small, Interrupt};
use crate::points::Points;
use crate::rng::tree_rng;
use ndarray::Array2;
use point_store::PointStore;
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// How a batch fit grows its trees: how many, how many between progress reports, on which
/// pool, and the flag that stops it.
#[derive(Clone, Copy)]
pub struct Growing<'a> {
    pub n_trees: usize,
    pub slice: usize,
    pub pool: &'a ThreadPool,
    pub interrupt: &'a Interrupt,
}

/// Trees plus the points they were grown on (row-major, appended by online updates), in the
/// coordinates of the optional [`InputMap`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "stored::StoredForest")]
pub struct MondrianForest {
    pub params: TreeParams,
    pub n_features: usize,
    pub seed: u64,
    /// Index of this forest's first tree in a larger forest whose trees are spread over
    /// several processes ([`Self::offset_trees`]): tree m here is seeded as tree
    /// `tree_offset + m` there. Only growing reads it (grown trees carry their own streams),
    /// so it is not stored.
    #[serde(skip)]
    pub tree_offset: u64,
    /// Whether inputs are mapped to the unit box of the first training points.
    scale_inputs: bool,
    /// That map, once the first points have arrived.
    input_map: Option<InputMap>,
    /// The training points, in memory or on disk ([`point_store`]).
    x: PointStore,
    /// Stored without their data boxes, rebuilt from `x` on load (`stored.rs`).
    #[serde(serialize_with = "stored::serialize_trees")]
    pub trees: Vec<MondrianTree>,
}

impl MondrianForest {
    /// An empty forest for points with `n_features` coordinates.
    pub fn new(params: TreeParams, n_features: usize, seed: u64) -> Result<Self> {
        if n_features == 0 {
            return Err(Error::InvalidInput(
                "points need at least one feature".into(),
            ));
        }
        Ok(Self {
            params,
            n_features,
            seed,
            tree_offset: 0,
            scale_inputs: false,
            input_map: None,
            x: PointStore::default(),
            trees: Vec::new(),
        })
    }

    /// The same forest mapping its inputs to the unit box of the first training points
    /// (every later input, training or query, goes through the same map).
    pub fn with_unit_box_inputs(mut self) -> Self {
        self.scale_inputs = true;
        self
    }

    /// Makes this (still treeless) forest the trees `first, first + 1, …` of a forest with the
    /// same seed: they are grown with the streams those trees would have there, so trees
    /// `[a, b)` grown in one process equal trees `a..b` of the whole forest grown in another.
    pub fn offset_trees(&mut self, first: u64) -> Result<()> {
        if !self.trees.is_empty() {
            return Err(Error::InvalidInput(
                "the first tree's index is set before any tree is grown".into(),
            ));
        }
        self.tree_offset = first;
        Ok(())
    }

    /// The input map in use (`None` before the first points, or when inputs are raw).
    pub fn input_map(&self) -> Option<&InputMap> {
        self.input_map.as_ref()
    }

    /// Samples `count` more trees on all stored points under `policy` (batch fit). Stops
    /// early, adding no tree, when `interrupt` is raised.
    pub fn grow_trees<P: SplitPolicy>(
        &mut self,
        count: usize,
        policy: &P,
        pool: &ThreadPool,
        interrupt: &Interrupt,
    ) -> Result<()> {
        let first = self.tree_offset + self.trees.len() as u64;
        let (d, seed) = (self.n_features, self.seed);
        let on = Growth {
            x: &self.x,
            params: &self.params,
            policy,
        };
        let new: Vec<Option<MondrianTree>> = pool.install(|| {
            (first..first + count as u64)
                .into_par_iter()
                .map_init(SampleScratch::default, |scratch, m| {
                    (!interrupt.is_requested())
                        .then(|| sample_tree(&on, d, tree_rng(seed, m), scratch))
                })
                .collect()
        });
        interrupt.check()?;
        // Trees grown on rows that could not be read are not kept.
        self.x.take_read_error()?;
        self.trees.extend(new.into_iter().flatten());
        Ok(())
    }

    /// Grows the forest to `how.n_trees` trees, `how.slice` at a time, calling
    /// `progress(trees so far)` after each slice (an error from it, or the interrupt, stops
    /// the fit). Tree m is seeded by (seed, m), so the result does not depend on the slicing
    /// or the pool.
    pub fn grow_to<P: SplitPolicy>(
        &mut self,
        policy: &P,
        how: &Growing<'_>,
        mut progress: impl FnMut(usize) -> Result<()>,
    ) -> Result<()> {
        while self.trees.len() < how.n_trees {
            let count = how.slice.max(1).min(how.n_trees - self.trees.len());
            self.grow_trees(count, policy, how.pool, how.interrupt)?;
            progress(self.trees.len())?;
        }
        Ok(())
    }

    /// Extends every tree with the stored rows `rows` (conditional Mondrian) under `policy`,
    /// and returns, per tree, the leaves whose set of points changed (leaves that received
    /// points, and the leaves of new subtrees). Nothing of it is kept: owners that keep
    /// per-leaf statistics update them from this list, the others drop it.
    ///
    /// Errors only when points on disk could not be read back; the trees are then dropped
    /// (they were extended on NaN rows), so the model must be fitted again.
    pub fn extend<P: SplitPolicy>(
        &mut self,
        rows: std::ops::Range<u32>,
        policy: &P,
        pool: &ThreadPool,
    ) -> Result<Vec<Vec<u32>>> {
        let changed = self.extend_trees(rows, policy, pool);
        if let Err(error) = self.x.take_read_error() {
            self.trees.clear();
            return Err(Error::Io(format!(
                "{error}; the trees extended on the rows it could not read were dropped: \
                 fit the model again"
            )));
        }
        Ok(changed)
    }

    fn extend_trees<P: SplitPolicy>(
        &mut self,
        rows: std::ops::Range<u32>,
        policy: &P,
        pool: &ThreadPool,
    ) -> Vec<Vec<u32>> {
        let new_rows: Vec<u32> = rows.collect();
        let on = Growth {
            x: &self.x,
            params: &self.params,
            policy,
        };
        let mut changed = vec![Vec::new(); self.trees.len()];
        if is_small(new_rows.len()) {
            // Waking the pool costs more than extending by a few points; walking their paths
            // in all trees at once first overlaps the cache misses that the extension of one
            // tree after another would take in turn.
            // (Points on disk are not read twice for it.)
            if let Some(x) = self.x.as_slice() {
                let d = self.n_features;
                for &i in &new_rows {
                    let row = &x[i as usize * d..(i as usize + 1) * d];
                    std::hint::black_box(warm_paths(&self.trees, row));
                }
            }
            let mut scratch = ExtendScratch::default();
            for (tree, leaves) in self.trees.iter_mut().zip(&mut changed) {
                extend_tree(tree, &on, &new_rows, &mut scratch, leaves);
            }
            return changed;
        }
        pool.install(|| {
            self.trees
                .par_iter_mut()
                .zip(changed.par_iter_mut())
                .for_each_init(ExtendScratch::default, |scratch, (tree, leaves)| {
                    extend_tree(tree, &on, &new_rows, scratch, leaves)
                })
        });
        changed
    }

    /// Leaf id of every point in every tree (N × M).
    pub fn apply<P: Points>(&self, x: &P, pool: &ThreadPool) -> Result<Array2<u32>> {
        let (m, d) = (self.trees.len(), self.n_features);
        let mut out = vec![0u32; x.n_rows() * m];
        self.for_each_query_block(x, pool, &mut out, m, |_, out, rows| {
            for (out_row, row) in out.chunks_exact_mut(m).zip(rows.chunks_exact(d)) {
                for (o, tree) in out_row.iter_mut().zip(&self.trees) {
                    *o = tree.leaf_of(row);
                }
            }
        })?;
        Array2::from_shape_vec((x.n_rows(), m), out).map_err(|e| Error::InvalidInput(e.to_string()))
    }

    /// Bytes of the state the forest keeps alive: the stored points and every tree
    /// ([`MondrianTree::retained_bytes`]).
    pub fn retained_bytes(&self) -> usize {
        self.x.memory_bytes()
            + self
                .trees
                .iter()
                .map(MondrianTree::retained_bytes)
                .sum::<usize>()
    }

    /// The mean number of nodes per tree (0 without trees).
    pub fn mean_tree_nodes(&self) -> usize {
        let total: usize = self.trees.iter().map(MondrianTree::n_nodes).sum();
        total / self.trees.len().max(1)
    }

    /// Errors unless at least one tree holds points.
    pub fn check_fitted(&self) -> Result<()> {
        if self.trees.is_empty() || self.n_rows() == 0 {
            return Err(Error::InvalidInput("the forest has no trees yet".into()));
        }
        Ok(())
    }

    /// Checks a deserialised forest.
    pub fn is_consistent(&self) -> bool {
        let params = &self.params;
        if self.n_features == 0 || !params.is_valid() {
            return false;
        }
        let n = self.n_rows();
        self.input_map
            .as_ref()
            .is_none_or(|m| m.is_consistent(self.n_features))
            && (self.input_map.is_none() || self.scale_inputs)
            && self.x.len() == n * self.n_features
            && (self.x.as_slice()).is_none_or(|x| x.iter().all(|v| v.is_finite()))
            && self
                .trees
                .iter()
                .all(|t| t.n_features == self.n_features && t.is_consistent(n, params))
    }
}

/// A forest model of either kind (what the bindings hold and pickle).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ForestModel {
    Regressor(regression::ForestRegressor),
    Classifier(classification::ForestClassifier),
}

impl ForestModel {
    /// The trees and points under the model.
    pub fn forest(&self) -> &MondrianForest {
        match self {
            Self::Regressor(model) => &model.forest,
            Self::Classifier(model) => &model.forest,
        }
    }

    /// The same, to change.
    pub fn forest_mut(&mut self) -> &mut MondrianForest {
        match self {
            Self::Regressor(model) => &mut model.forest,
            Self::Classifier(model) => &mut model.forest,
        }
    }

    /// Checks a deserialised model.
    pub fn is_consistent(&self) -> bool {
        match self {
            Self::Regressor(model) => model.is_consistent(),
            Self::Classifier(model) => model.is_consistent(),
        }
    }
}

#[cfg(test)]
mod tests;
