//! Ridge regression / Bayesian linear regression on Mondrian kernel features (Balog et al.,
//! UAI 2016, §4): A = ΦᵀΦ + αI, weights w = A⁻¹ Φᵀ(y − ȳ) by a Cholesky factor of A, which is
//! the one C × C matrix kept. Targets are centred; ȳ is the intercept.
//!
//! Log marginal likelihood (the Bayesian view, supplement B of the paper): w ~ N(0, σ²/α I),
//! y − ȳ ~ N(Φw, σ²I), so y − ȳ ~ N(0, (σ²/α)(ΦΦᵀ + αI)). With the noise σ² at its maximum-
//! likelihood value σ̂² = (‖y − ȳ‖² − ‖z‖²)/N, z = L⁻¹Φᵀ(y − ȳ), and
//! det(ΦΦᵀ + αI_N) = α^(N−C) det A:
//!   log p = −N/2 · log(2π σ̂²) − N/2 + C/2 · log α − 1/2 · log det A.
//!
//! Row weights v_i (`sample_weight`) make row i's noise σ²/v_i — an integer weight is the row
//! repeated — so everything above holds for √V y and √V Φ: A = ΦᵀVΦ + αI, ȳ the weighted
//! mean, ‖y − ȳ‖² weighted, and log p gains the Jacobian 1/2 Σ log v_i.

use super::features::{transform, FeatureMap};
use super::gram::{gram_packed, row_columns};
use crate::error::{Error, Result};
use crate::forest::MondrianForest;
use crate::linalg::cholesky::Cholesky;
use crate::linalg::dot;
use crate::mondrian::route::RouteScratch;
use crate::points::Points;
use crate::sparse::Csr;
use crate::training_data::check_targets_and_weights;
use ndarray::{Array1, Array2, ArrayView1};
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
    /// Σ v_i y_i / √M over each column's rows, and Σ v_i / √M.
    pub(crate) phi_t_y: Vec<f64>,
    pub(crate) column_mass: Vec<f64>,
    pub(crate) n_rows: usize,
    /// Σ v_i, Σ log v_i, Σ v_i y_i and Σ v_i y_i² over the rows (v_i = 1 without weights).
    pub(crate) sum_w: f64,
    pub(crate) sum_log_w: f64,
    pub(crate) sum_y: f64,
    pub(crate) sum_y2: f64,
    /// z = L⁻¹ Φᵀ(y − ȳ) and w = L⁻ᵀ z.
    pub(crate) z: Vec<f64>,
    pub(crate) weights: Vec<f64>,
}

impl KernelRidge {
    /// Errors, before the dense C × C factor is allocated, when `forest`'s trees give more
    /// than `max_columns` feature columns C (one per leaf): its memory grows as C² and its
    /// factorisation as C³ (19,550 columns for 442 rows had not finished after 120 s).
    pub fn check_size(forest: &MondrianForest, max_columns: usize) -> Result<()> {
        let c: usize = forest.trees.iter().map(|t| t.n_leaves()).sum();
        if c > max_columns {
            return Err(Error::InvalidParameter {
                name: "max_dense_features",
                reason: format!(
                    "the trees give C = {c} feature columns (one per leaf), more than \
                     max_dense_features = {max_columns}: the dense C × C factor would take \
                     {:.3} GiB and O(C³) time. Lower lifetime or n_estimators, raise \
                     max_dense_features, or use MondrianKernelRidgeCV, whose path switches to \
                     conjugate gradients beyond it",
                    (c as f64).powi(2) * 4.0 / f64::from(1u32 << 30)
                ),
            });
        }
        Ok(())
    }

    /// Ridge on the features of `forest`'s trees stopped at `lifetime` (≤ the trees' own),
    /// with targets `y` for the forest's stored points.
    pub fn from_forest(
        forest: MondrianForest,
        lifetime: f64,
        alpha: f64,
        y: &ArrayView1<f64>,
        pool: &ThreadPool,
    ) -> Result<Self> {
        Self::from_forest_weighted(forest, lifetime, alpha, y, None, pool)
    }

    /// [`Self::from_forest`] with row weights (module docs; None: all 1).
    pub fn from_forest_weighted(
        forest: MondrianForest,
        lifetime: f64,
        alpha: f64,
        y: &ArrayView1<f64>,
        weights: Option<&ArrayView1<f64>>,
        pool: &ThreadPool,
    ) -> Result<Self> {
        forest.check_fitted()?;
        check_targets_and_weights(forest.n_rows(), y, weights)?;
        let weights: Option<Vec<f64>> = weights.map(|w| w.to_vec());
        let weight = |i: usize| weights.as_ref().map_or(1.0, |w| w[i]);
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
        let packed = gram_packed(&map, &cols, m, alpha, weights.as_deref(), pool);
        let factor = Cholesky::factor(packed, c, Some(pool))?;
        let scale = 1.0 / (m as f64).sqrt();
        let mut representative = vec![0u32; c];
        let mut phi_t_y = vec![0.0; c];
        let mut column_mass = vec![0.0; c];
        for (i, row) in cols.chunks_exact(m).enumerate().rev() {
            for &col in row {
                representative[col as usize] = i as u32;
                phi_t_y[col as usize] += weight(i) * y[i] * scale;
                column_mass[col as usize] += weight(i) * scale;
            }
        }
        // Without weights, the sums as ndarray forms them (the unweighted model's bits).
        let (sum_w, sum_log_w, sum_y, sum_y2) = match &weights {
            None => (n as f64, 0.0, y.sum(), y.iter().map(|v| v * v).sum()),
            Some(w) => (
                w.iter().sum(),
                w.iter().map(|v| v.ln()).sum(),
                (0..n).map(|i| w[i] * y[i]).sum(),
                (0..n).map(|i| w[i] * y[i] * y[i]).sum(),
            ),
        };
        let mut model = Self {
            forest,
            alpha,
            map,
            representative,
            factor,
            phi_t_y,
            column_mass,
            n_rows: n,
            sum_w,
            sum_log_w,
            sum_y,
            sum_y2,
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

    /// ȳ (weighted), added to every prediction.
    pub fn intercept(&self) -> f64 {
        if self.n_rows == 0 {
            0.0
        } else {
            self.sum_y / self.sum_w
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
        0.5 * self.sum_log_w
            + log_evidence(
                self.n_rows,
                self.centred_square_sum(),
                dot(&self.z, &self.z),
                self.n_columns(),
                self.alpha,
                self.log_det(),
            )
    }

    /// ‖y − ȳ‖² (weighted).
    pub fn centred_square_sum(&self) -> f64 {
        (self.sum_y2 - self.sum_y * self.intercept()).max(0.0)
    }

    /// σ̂² = (‖y − ȳ‖² − ‖z‖²)/N, the noise variance at its maximum-likelihood value.
    pub fn noise_variance(&self) -> f64 {
        let residual = self.centred_square_sum() - dot(&self.z, &self.z);
        (residual / self.n_rows.max(1) as f64).max(0.0)
    }

    /// The predictive variance of a new target at every row of `x` in the Bayesian view (module
    /// docs): σ̂² (1 + φ(x)ᵀ(ΦᵀΦ + αI)⁻¹φ(x)) = σ̂² (1 + ‖L⁻¹φ(x)‖²), one triangular solve
    /// (O(C²)) per row; ȳ is treated as known.
    pub fn predict_variance<P: Points>(&self, x: &P, pool: &ThreadPool) -> Result<Array1<f64>> {
        let (d, c, noise) = (
            self.forest.n_features,
            self.n_columns(),
            self.noise_variance(),
        );
        let mut out = vec![0.0; x.n_rows()];
        self.forest
            .for_each_query_block(x, pool, &mut out, 1, |_, out, rows| {
                let (mut scratch, mut phi) = (RouteScratch::default(), vec![0.0; c]);
                for (o, row) in out.iter_mut().zip(rows.chunks_exact(d)) {
                    phi.fill(0.0);
                    for (col, v) in self.map.row_entries(&self.forest.trees, row, &mut scratch) {
                        phi[col as usize] += v;
                    }
                    self.factor.forward_solve(&mut phi);
                    *o = noise * (1.0 + dot(&phi, &phi));
                }
            })?;
        Ok(Array1::from(out))
    }

    /// L⁻¹φ(x) for every row of `x`, one row of C values each (n × C): with B its transpose,
    /// BᵀB = Φ* A⁻¹ Φ*ᵀ, the joint predictive covariance's part beyond the noise, from the
    /// factor the fit keeps (no training rows needed). O(C²) per row.
    pub fn whitened<P: Points>(&self, x: &P, pool: &ThreadPool) -> Result<Array2<f64>> {
        let (d, c, n) = (self.forest.n_features, self.n_columns(), x.n_rows());
        let size = n.checked_mul(c).ok_or_else(|| {
            Error::InvalidInput(format!("{n} rows × {c} features overflow a matrix"))
        })?;
        let mut out = vec![0.0; size];
        self.forest
            .for_each_query_block(x, pool, &mut out, c, |_, out, rows| {
                let mut scratch = RouteScratch::default();
                for (phi, row) in out.chunks_exact_mut(c).zip(rows.chunks_exact(d)) {
                    for (col, v) in self.map.row_entries(&self.forest.trees, row, &mut scratch) {
                        phi[col as usize] += v;
                    }
                    self.factor.forward_solve(phi);
                }
            })?;
        Array2::from_shape_vec((n, c), out)
            .map_err(|e| Error::InvalidInput(format!("whitened features: {e}")))
    }

    /// ȳ + φ(x)·w for every row of `x`.
    pub fn predict<P: Points>(&self, x: &P, pool: &ThreadPool) -> Result<Array1<f64>> {
        let d = self.forest.n_features;
        let mut out = vec![0.0; x.n_rows()];
        let intercept = self.intercept();
        self.forest
            .for_each_query_block(x, pool, &mut out, 1, |_, out, rows| {
                let mut scratch = RouteScratch::default();
                for (o, row) in out.iter_mut().zip(rows.chunks_exact(d)) {
                    *o = intercept
                        + self
                            .map
                            .row_entries(&self.forest.trees, row, &mut scratch)
                            .map(|(c, v)| v * self.weights[c as usize])
                            .sum::<f64>();
                }
            })?;
        Ok(Array1::from(out))
    }

    /// The features of the rows of `x` in this model's column order (that of `weights`).
    pub fn transform<P: Points>(&self, x: &P, pool: &ThreadPool) -> Result<Csr> {
        self.forest.check_points(x)?;
        transform(&self.forest.trees, &self.map, x, pool)
    }

    /// Bytes of the state the model keeps alive: the forest, the column map, the factor and
    /// the per-column vectors (spare capacity excluded).
    pub fn retained_bytes(&self) -> usize {
        let c = self.map.n_columns();
        let column_of: usize = self.map.column_of.iter().map(Vec::len).sum();
        self.forest.retained_bytes()
            + column_of * size_of::<u32>()
            + c * (size_of::<(u32, u32)>() + size_of::<u32>() + 4 * size_of::<f64>())
            + c * (c + 1) / 2 * size_of::<f64>()
    }

    /// Structural checks after deserialising.
    pub fn is_consistent(&self) -> bool {
        let c = self.map.n_columns();
        self.forest.is_consistent()
            && self.forest.n_rows() == self.n_rows
            && self.sum_w.is_finite()
            && (self.sum_w > 0.0 || self.n_rows == 0)
            && self.sum_log_w.is_finite()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::pool;
    use crate::testing::{assert_rel, dense_ridge, kernel_forest, regression_data};

    #[test]
    fn ridge_equals_dense_solve_and_predicts_with_features() {
        let (x, y) = regression_data(80, 2, 1);
        let p = pool(2).expect("pool");
        let f = kernel_forest(&x, 4, 3.0, 7);
        let map = FeatureMap::new(&f.trees, 3.0).expect("valid");
        let points = ndarray::ArrayView2::from_shape((80, 2), f.points().expect("in memory"))
            .expect("80 × 2");
        let phi = transform(&f.trees, &map, &points, &p)
            .expect("csr")
            .to_dense();
        let model = KernelRidge::from_forest(f, 3.0, 1e-3, &y.view(), &p).expect("fit");
        let c = model.n_columns();
        let (w, log_det) = dense_ridge(&phi, 80, c, y.as_slice().expect("contiguous"), 1e-3);
        assert_rel(model.weights().0, &w, 1e-9);
        assert!((model.log_det() - log_det).abs() < 1e-9 * log_det.abs());
        // predictions on the training points = ȳ + Φw
        let pred = model.predict(&x.view(), &p).expect("predict");
        let mean = y.mean().expect("rows");
        let direct: Vec<f64> = (0..80)
            .map(|i| mean + (0..c).map(|j| phi[i * c + j] * w[j]).sum::<f64>())
            .collect();
        assert_rel(pred.as_slice().expect("contiguous"), &direct, 1e-9);
    }

    #[test]
    fn a_constant_weight_is_a_rescaled_penalty() {
        // (ΦᵀcΦ + αI) w = cΦᵀ(y − ȳ) is the unweighted ridge with penalty α/c; the evidence
        // gains N/2 log c from the Jacobian and loses it in σ̂² (which is c times larger).
        let (x, y) = regression_data(60, 2, 3);
        let p = pool(1).expect("pool");
        let f = kernel_forest(&x, 3, 3.0, 5);
        let weights = ndarray::Array1::from_elem(60, 4.0);
        let weighted = KernelRidge::from_forest_weighted(
            f.clone(),
            3.0,
            1e-2,
            &y.view(),
            Some(&weights.view()),
            &p,
        )
        .expect("fit");
        let plain = KernelRidge::from_forest(f, 3.0, 1e-2 / 4.0, &y.view(), &p).expect("fit");
        assert_rel(weighted.weights().0, plain.weights().0, 1e-9);
        assert!((weighted.intercept() - plain.intercept()).abs() < 1e-12);
        assert!((weighted.noise_variance() - 4.0 * plain.noise_variance()).abs() < 1e-9);
        let bad = ndarray::Array1::from_elem(60, 0.0);
        let f = kernel_forest(&x, 3, 3.0, 5);
        assert!(
            KernelRidge::from_forest_weighted(f, 3.0, 1.0, &y.view(), Some(&bad.view()), &p)
                .is_err()
        );
    }
}
