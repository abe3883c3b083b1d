//! A forest of Mondrian trees over one shared copy of the training points.
//!
//! Tree `m` draws from the stream `tree_rng(seed, m)`, trees are sampled and extended in
//! parallel on a local pool, and every reduction over trees runs in tree order, so results do
//! not depend on the number of threads.

pub mod hyperparameters;
pub mod input_map;
pub mod posterior;
pub mod predict;
pub mod predictive;
pub mod regression;

use crate::error::{Error, Result};
use crate::parallel::{for_each_row_block, is_small};
use crate::rng::tree_rng;
use crate::tree::extend::{extend_tree_with, ExtendScratch};
use crate::tree::route::warm_paths;
use crate::tree::{sample::sample_tree, MondrianTree, TreeParams};
use input_map::InputMap;
use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// Trees plus the points they were grown on (row-major, appended by online updates), in the
/// coordinates of the optional [`InputMap`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MondrianForest {
    pub params: TreeParams,
    pub n_features: usize,
    pub seed: u64,
    /// Whether inputs are mapped to the unit box of the first training points.
    scale_inputs: bool,
    /// That map, once the first points have arrived.
    input_map: Option<InputMap>,
    x: Vec<f64>,
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
            scale_inputs: false,
            input_map: None,
            x: Vec::new(),
            trees: Vec::new(),
        })
    }

    /// The same forest mapping its inputs to the unit box of the first training points
    /// (every later input, training or query, goes through the same map).
    pub fn with_unit_box_inputs(mut self) -> Self {
        self.scale_inputs = true;
        self
    }

    /// The input map in use (`None` before the first points, or when inputs are raw).
    pub fn input_map(&self) -> Option<&InputMap> {
        self.input_map.as_ref()
    }

    /// Number of training points stored.
    pub fn n_rows(&self) -> usize {
        self.x.len() / self.n_features
    }

    /// The stored training points, row-major.
    pub fn points(&self) -> &[f64] {
        &self.x
    }

    /// Checks that `x` has this forest's width and only finite values, also once mapped.
    pub fn check_points(&self, x: &ArrayView2<f64>) -> Result<()> {
        if x.ncols() != self.n_features {
            return Err(Error::InvalidInput(format!(
                "X has {} features, but the forest was fitted with {}",
                x.ncols(),
                self.n_features
            )));
        }
        if x.iter().any(|v| !v.is_finite()) {
            return Err(Error::InvalidInput("X contains NaN or infinity".into()));
        }
        if let Some(map) = &self.input_map {
            map.check(x.as_standard_layout().as_slice().unwrap_or(&[]))?;
        }
        Ok(())
    }

    /// Calls `work(first_row, out_block, rows_block)` on blocks of the rows of `x` (in this
    /// forest's coordinates) in parallel, after checking them; `out` holds `out_width` values
    /// per row. See [`for_each_row_block`].
    pub fn for_each_query_block<T: Send>(
        &self,
        x: &ArrayView2<f64>,
        pool: &ThreadPool,
        out: &mut [T],
        out_width: usize,
        work: impl Fn(usize, &mut [T], &[f64]) + Sync,
    ) -> Result<()> {
        self.check_points(x)?;
        self.check_fitted()?;
        let x = x.as_standard_layout();
        let flat = x.as_slice().unwrap_or(&[]);
        let d = self.n_features;
        for_each_row_block(
            pool,
            out,
            out_width,
            flat,
            d,
            |first, out, rows| match &self.input_map {
                None => work(first, out, rows),
                Some(map) => {
                    let mut mapped = Vec::with_capacity(rows.len());
                    map.map_into(rows, &mut mapped);
                    work(first, out, &mapped)
                }
            },
        );
        Ok(())
    }

    /// Stores new training points (mapped to the forest's coordinates) and returns their row
    /// ids. The first points fix the input map when inputs are scaled.
    pub fn add_points(&mut self, x: &ArrayView2<f64>) -> Result<std::ops::Range<u32>> {
        let first = self.n_rows();
        let last = first + x.nrows();
        if last >= u32::MAX as usize {
            return Err(Error::InvalidInput(format!(
                "at most {} training points are supported",
                u32::MAX - 1
            )));
        }
        let x = x.as_standard_layout();
        let rows = x.as_slice().unwrap_or(&[]);
        if self.scale_inputs && self.input_map.is_none() && x.ncols() == self.n_features {
            let map = InputMap::unit_box_of(rows, self.n_features)?;
            // A failed check below must not leave a map fixed by rejected points.
            self.check_points(&x.view()).and_then(|_| map.check(rows))?;
            self.input_map = Some(map);
        } else {
            self.check_points(&x.view())?;
        }
        match &self.input_map {
            None => self.x.extend_from_slice(rows),
            Some(map) => map.map_into(rows, &mut self.x),
        }
        Ok(first as u32..last as u32)
    }

    /// Samples `count` more trees on all stored points (batch fit; called in slices to show
    /// progress, with identical results however it is sliced).
    pub fn grow_trees(&mut self, count: usize, pool: &ThreadPool) {
        let first = self.trees.len() as u64;
        let (x, d, params, seed) = (&self.x, self.n_features, &self.params, self.seed);
        let new: Vec<MondrianTree> = pool.install(|| {
            (first..first + count as u64)
                .into_par_iter()
                .map_init(Vec::new, |scratch, m| {
                    sample_tree(x, d, params, tree_rng(seed, m), scratch)
                })
                .collect()
        });
        self.trees.extend(new);
    }

    /// Extends every tree with the stored rows `rows` (conditional Mondrian).
    pub fn extend(&mut self, rows: std::ops::Range<u32>, pool: &ThreadPool) {
        let new_rows: Vec<u32> = rows.collect();
        let (x, params) = (&self.x, &self.params);
        if is_small(new_rows.len()) {
            // Waking the pool costs more than extending by a few points; walking their paths
            // in all trees at once first overlaps the cache misses that the extension of one
            // tree after another would take in turn.
            let d = self.n_features;
            for &i in &new_rows {
                let row = &x[i as usize * d..(i as usize + 1) * d];
                std::hint::black_box(warm_paths(&self.trees, row));
            }
            let mut scratch = ExtendScratch::default();
            for tree in &mut self.trees {
                extend_tree_with(tree, x, &new_rows, params, &mut scratch);
            }
            return;
        }
        pool.install(|| {
            self.trees
                .par_iter_mut()
                .for_each_init(ExtendScratch::default, |scratch, tree| {
                    extend_tree_with(tree, x, &new_rows, params, scratch)
                })
        });
    }

    /// Leaf id of every point in every tree (N × M).
    pub fn apply(&self, x: &ArrayView2<f64>, pool: &ThreadPool) -> Result<Array2<u32>> {
        let (m, d) = (self.trees.len(), self.n_features);
        let mut out = vec![0u32; x.nrows() * m];
        self.for_each_query_block(x, pool, &mut out, m, |_, out, rows| {
            for (out_row, row) in out.chunks_exact_mut(m).zip(rows.chunks_exact(d)) {
                for (o, tree) in out_row.iter_mut().zip(&self.trees) {
                    *o = tree.leaf_of(row);
                }
            }
        })?;
        Array2::from_shape_vec((x.nrows(), m), out).map_err(|e| Error::InvalidInput(e.to_string()))
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
        if self.n_features == 0
            || TreeParams::new(params.lifetime, params.min_samples_split).is_err()
        {
            return false;
        }
        let n = self.n_rows();
        self.input_map
            .as_ref()
            .is_none_or(|m| m.is_consistent(self.n_features))
            && (self.input_map.is_none() || self.scale_inputs)
            && self.x.len() == n * self.n_features
            && self.x.iter().all(|v| v.is_finite())
            && self
                .trees
                .iter()
                .all(|t| t.n_features == self.n_features && t.is_consistent(n, params))
    }
}

#[cfg(test)]
mod tests;
