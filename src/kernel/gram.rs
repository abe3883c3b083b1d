//! ΦᵀΦ + αI of Mondrian kernel features on their training rows: each row of Φ has M
//! entries 1/√M, so the Gram matrix is exact counts of shared rows divided by M.

use super::features::{training_columns, FeatureMap, NO_COLUMN};
use crate::forest::MondrianForest;
use rayon::prelude::*;
use rayon::ThreadPool;

/// Column of every training row in every tree (row-major, N × M).
pub(crate) fn row_columns(
    forest: &MondrianForest,
    map: &FeatureMap,
    pool: &ThreadPool,
) -> Vec<u32> {
    let (n, m) = (forest.n_rows(), forest.trees.len());
    let per_tree: Vec<Vec<u32>> = pool.install(|| {
        forest
            .trees
            .par_iter()
            .zip(&map.column_of)
            .map(|(tree, columns)| training_columns(tree, columns, map.lifetime, n))
            .collect()
    });
    let mut out = vec![NO_COLUMN; n * m];
    for (t, columns) in per_tree.iter().enumerate() {
        for (i, &c) in columns.iter().enumerate() {
            out[i * m + t] = c;
        }
    }
    out
}

/// Lower triangle of ΦᵀWΦ + αI, row-packed (W the row weights, the identity when None).
pub(crate) fn gram_packed(
    map: &FeatureMap,
    cols: &[u32],
    m: usize,
    alpha: f64,
    weights: Option<&[f64]>,
    pool: &ThreadPool,
) -> Vec<f64> {
    let c = map.n_columns();
    // First column of each tree: columns are ordered by tree.
    let mut first = vec![c; m + 1];
    for (col, &(t, _)) in map.owner.iter().enumerate().rev() {
        first[t as usize] = col;
    }
    for t in (0..m).rev() {
        first[t] = first[t].min(first[t + 1]);
    }
    gram_by_partition(&first, cols, m, alpha, weights, pool)
}

/// Lower triangle of ΦᵀWΦ + αI, row-packed, for features with one column per partition and
/// row (`cols`, N × M, the Mondrian trees' leaves or the Mondrian grids' cells) whose
/// partition t owns the columns `first[t]..first[t + 1]`. Partition t's columns form a band of
/// rows, filled by one task from the rows' column lists, so the sums are exact (counts
/// without weights) in a fixed order.
pub(crate) fn gram_by_partition(
    first: &[usize],
    cols: &[u32],
    m: usize,
    alpha: f64,
    weights: Option<&[f64]>,
    pool: &ThreadPool,
) -> Vec<f64> {
    let c = first[m];
    let offset = |i: usize| i * (i + 1) / 2;
    let mut packed = vec![0.0; offset(c)];
    let mut bands = Vec::with_capacity(m);
    let mut rest = packed.as_mut_slice();
    for t in 0..m {
        let (band, tail) = rest.split_at_mut(offset(first[t + 1]) - offset(first[t]));
        bands.push((t, band));
        rest = tail;
    }
    let scale = 1.0 / m as f64;
    pool.install(|| {
        bands.par_iter_mut().for_each(|(t, band)| {
            let base = offset(first[*t]);
            for (i, row) in cols.chunks_exact(m).enumerate() {
                let ct = row[*t] as usize;
                let start = offset(ct) - base;
                let weight = weights.map_or(1.0, |w| w[i]);
                for &other in &row[..=*t] {
                    band[start + other as usize] += weight;
                }
            }
            for col in first[*t]..first[*t + 1] {
                let start = offset(col) - base;
                for v in &mut band[start..start + col + 1] {
                    *v *= scale;
                }
                band[start + col] += alpha;
            }
        })
    });
    packed
}
