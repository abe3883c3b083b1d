//! Ridge regression / Bayesian linear regression on Mondrian kernel features (Balog et al.,
//! UAI 2016, §4): A = ΦᵀΦ + αI, weights w = A⁻¹ Φᵀ(y − ȳ) by a Cholesky factor of A, which is
//! the one C × C matrix kept. Targets are centred; ȳ is the intercept.
//!
//! Log marginal likelihood (the Bayesian view, supplement B of the paper): w ~ N(0, σ²/α I),
//! y − ȳ ~ N(Φw, σ²I), so y − ȳ ~ N(0, (σ²/α)(ΦΦᵀ + αI)). With the noise σ² at its maximum-
//! likelihood value σ̂² = (‖y − ȳ‖² − ‖z‖²)/N, z = L⁻¹Φᵀ(y − ȳ), and
//! det(ΦΦᵀ + αI_N) = α^(N−C) det A:
//!   log p = −N/2 · log(2π σ̂²) − N/2 + C/2 · log α − 1/2 · log det A.

use super::features::{training_columns, transform, FeatureMap, NO_COLUMN};
use crate::error::{Error, Result};
use crate::forest::MondrianForest;
use crate::linalg::cholesky::{dot, Cholesky};
use crate::parallel::for_each_row_block;
use crate::sparse::Csr;
use ndarray::{Array1, ArrayView1, ArrayView2};
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// Ridge regression on the features of a forest's trees at one lifetime.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelRidge {
    pub forest: MondrianForest,
    pub alpha: f64,
    pub(crate) map: FeatureMap,
    /// A training row of each column (online updates find the column's node again by it).
    pub(crate) representative: Vec<u32>,
    pub(crate) factor: Cholesky,
    /// Σ y_i / √M over each column's rows, and Σ 1/√M.
    pub(crate) phi_t_y: Vec<f64>,
    pub(crate) column_mass: Vec<f64>,
    pub(crate) n_rows: usize,
    pub(crate) sum_y: f64,
    pub(crate) sum_y2: f64,
    /// z = L⁻¹ Φᵀ(y − ȳ) and w = L⁻ᵀ z.
    pub(crate) z: Vec<f64>,
    pub(crate) weights: Vec<f64>,
}

/// Errors unless `alpha` is a finite number > 0.
pub fn check_alpha(alpha: f64) -> Result<()> {
    if alpha > 0.0 && alpha.is_finite() {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            name: "alpha",
            reason: format!("must be a finite number > 0, got {alpha}"),
        })
    }
}

/// Errors unless `y` has `n` finite values.
pub fn check_targets(y: &ArrayView1<f64>, n: usize) -> Result<()> {
    if y.len() != n {
        return Err(Error::InvalidInput(format!(
            "y has {} values for {n} rows of X",
            y.len()
        )));
    }
    if y.iter().any(|v| !v.is_finite()) {
        return Err(Error::InvalidInput("y contains NaN or infinity".into()));
    }
    Ok(())
}

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

/// Lower triangle of ΦᵀΦ + αI, row-packed. Tree t's columns form a band of rows, filled by
/// one task from the rows' column lists, so the sums are exact counts in a fixed order.
fn gram_packed(
    map: &FeatureMap,
    cols: &[u32],
    m: usize,
    alpha: f64,
    pool: &ThreadPool,
) -> Vec<f64> {
    let c = map.n_columns();
    let offset = |i: usize| i * (i + 1) / 2;
    let mut packed = vec![0.0; offset(c)];
    // First column of each tree: columns are ordered by tree.
    let mut first = vec![c; m + 1];
    for (col, &(t, _)) in map.owner.iter().enumerate().rev() {
        first[t as usize] = col;
    }
    for t in (0..m).rev() {
        first[t] = first[t].min(first[t + 1]);
    }
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
            for row in cols.chunks_exact(m) {
                let ct = row[*t] as usize;
                let start = offset(ct) - base;
                for &other in &row[..=*t] {
                    band[start + other as usize] += 1.0;
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

impl KernelRidge {
    /// Ridge on the features of `forest`'s trees stopped at `lifetime` (≤ the trees' own),
    /// with targets `y` for the forest's stored points.
    pub fn from_forest(
        forest: MondrianForest,
        lifetime: f64,
        alpha: f64,
        y: &ArrayView1<f64>,
        pool: &ThreadPool,
    ) -> Result<Self> {
        check_alpha(alpha)?;
        forest.check_fitted()?;
        check_targets(y, forest.n_rows())?;
        if lifetime > forest.params.lifetime {
            return Err(Error::InvalidParameter {
                name: "lifetime",
                reason: format!(
                    "{lifetime} exceeds the lifetime {} the trees were sampled with",
                    forest.params.lifetime
                ),
            });
        }
        let map = FeatureMap::new(&forest.trees, lifetime)?;
        let (n, m, c) = (forest.n_rows(), forest.trees.len(), map.n_columns());
        let cols = row_columns(&forest, &map, pool);
        let packed = gram_packed(&map, &cols, m, alpha, pool);
        let factor = Cholesky::factor(packed, c, Some(pool))?;
        let scale = 1.0 / (m as f64).sqrt();
        let mut representative = vec![0u32; c];
        let mut phi_t_y = vec![0.0; c];
        let mut column_mass = vec![0.0; c];
        for (i, row) in cols.chunks_exact(m).enumerate().rev() {
            for &col in row {
                representative[col as usize] = i as u32;
                phi_t_y[col as usize] += y[i] * scale;
                column_mass[col as usize] += scale;
            }
        }
        let mut model = Self {
            forest,
            alpha,
            map,
            representative,
            factor,
            phi_t_y,
            column_mass,
            n_rows: n,
            sum_y: y.sum(),
            sum_y2: y.iter().map(|v| v * v).sum(),
            z: Vec::new(),
            weights: Vec::new(),
        };
        model.solve();
        Ok(model)
    }

    /// Recomputes z and w from the factor and the target sums.
    pub(crate) fn solve(&mut self) {
        let mean = self.intercept();
        self.z = self
            .phi_t_y
            .iter()
            .zip(&self.column_mass)
            .map(|(r, s)| r - mean * s)
            .collect();
        self.factor.forward_solve(&mut self.z);
        self.weights = self.z.clone();
        self.factor.back_solve(&mut self.weights);
    }

    /// The lifetime λ of the features.
    pub fn lifetime(&self) -> f64 {
        self.map.lifetime
    }

    /// ȳ, added to every prediction.
    pub fn intercept(&self) -> f64 {
        if self.n_rows == 0 {
            0.0
        } else {
            self.sum_y / self.n_rows as f64
        }
    }

    /// Number of feature columns C.
    pub fn n_columns(&self) -> usize {
        self.map.n_columns()
    }

    /// The weights, in column order, and each column's (tree, node).
    pub fn weights(&self) -> (&[f64], &[(u32, u32)]) {
        (&self.weights, &self.map.owner)
    }

    /// log det(ΦᵀΦ + αI).
    pub fn log_det(&self) -> f64 {
        self.factor.log_det()
    }

    /// The log marginal likelihood with the noise variance profiled out (module docs).
    pub fn log_marginal_likelihood(&self) -> f64 {
        log_evidence(
            self.n_rows,
            self.centred_square_sum(),
            dot(&self.z, &self.z),
            self.n_columns(),
            self.alpha,
            self.log_det(),
        )
    }

    /// ‖y − ȳ‖².
    pub fn centred_square_sum(&self) -> f64 {
        (self.sum_y2 - self.sum_y * self.intercept()).max(0.0)
    }

    /// ȳ + φ(x)·w for every row of `x`.
    pub fn predict(&self, x: &ArrayView2<f64>, pool: &ThreadPool) -> Result<Array1<f64>> {
        self.forest.check_points(x)?;
        let d = self.forest.n_features;
        let x = x.as_standard_layout();
        let flat = x.as_slice().unwrap_or(&[]);
        let mut out = vec![0.0; x.nrows()];
        let intercept = self.intercept();
        for_each_row_block(pool, &mut out, 1, flat, d, |_, out, rows| {
            for (o, row) in out.iter_mut().zip(rows.chunks_exact(d)) {
                *o = intercept
                    + self
                        .map
                        .row_entries(&self.forest.trees, row)
                        .map(|(c, v)| v * self.weights[c as usize])
                        .sum::<f64>();
            }
        });
        Ok(Array1::from(out))
    }

    /// The features of the rows of `x` in this model's column order (that of `weights`).
    pub fn transform(&self, x: &ArrayView2<f64>, pool: &ThreadPool) -> Result<Csr> {
        self.forest.check_points(x)?;
        let x = x.as_standard_layout();
        let flat = x.as_slice().unwrap_or(&[]);
        transform(
            &self.forest.trees,
            &self.map,
            flat,
            self.forest.n_features,
            pool,
        )
    }

    /// Structural checks after deserialising.
    pub fn is_consistent(&self) -> bool {
        let c = self.map.n_columns();
        self.forest.is_consistent()
            && self.forest.n_rows() == self.n_rows
            && self.map.is_consistent(&self.forest.trees)
            && self.map.lifetime <= self.forest.params.lifetime
            && self.factor.dim() == c
            && [
                self.representative.len(),
                self.phi_t_y.len(),
                self.column_mass.len(),
                self.z.len(),
                self.weights.len(),
            ]
            .iter()
            .all(|&len| len == c)
            && self
                .representative
                .iter()
                .all(|&i| (i as usize) < self.n_rows)
    }
}

/// log p(y) of the module docs from its sufficient statistics: N, ‖y − ȳ‖², ‖z‖², C, α and
/// log det A.
pub fn log_evidence(
    n: usize,
    centred: f64,
    z_norm2: f64,
    c: usize,
    alpha: f64,
    log_det: f64,
) -> f64 {
    let n = n as f64;
    let sigma2 = ((centred - z_norm2) / n).max(f64::MIN_POSITIVE);
    -0.5 * n * (2.0 * std::f64::consts::PI * sigma2).ln() - 0.5 * n + 0.5 * c as f64 * alpha.ln()
        - 0.5 * log_det
}
