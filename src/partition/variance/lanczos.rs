//! LOVE (Pleiss et al. 2018): the two factors of one block Lanczos decomposition of `M` that
//! bound every new point's variance from above and below (the module notes of `variance`).

use super::inverse_cholesky_factor;
use crate::error::{Error, Result};
use crate::linalg::block::gram;
use crate::linalg::lanczos::krylov_basis;
use crate::linalg::operator::LinearOperator;
use rayon::ThreadPool;

/// Shift of the projected system of the upper bound, relative to its largest diagonal.
const SHIFT: f64 = 1e-13;

/// The two LOVE factors of [`lanczos_factors`] (`clusters × rank`, row-major): a gather
/// ([`crate::partition::kernel::PartitionKernel::gather_sums`], the mean over the partitions
/// of a point's clusters' rows) gives each new point a row whose squared norm is, for `upper`,
/// the Galerkin approximation of `k*ᵀ A⁻¹ k*` (so `s + σ² − ‖row‖²` bounds the variance from
/// above), for `lower`, that of `φ*ᵀ (M + ρI)⁻¹ φ*` (so `σ² + s (1 − ‖φ*‖²) + s ρ ‖row‖²`
/// bounds it from below).
#[derive(Debug, Clone)]
pub struct LanczosFactors {
    pub clusters: usize,
    pub rank: usize,
    pub upper: Vec<f64>,
    pub lower: Vec<f64>,
}

/// The LOVE factors (module notes) for the system whose `M` is `gram_op` (`C × C`, no shift),
/// from a block Lanczos decomposition of dimension `dim` in blocks of `b` started at the
/// `C × b` block `start` (`seed` draws replacements for dependent columns), for signal and
/// noise variances `(s, σ²)` and `m` partitions.
#[allow(clippy::too_many_arguments)]
pub fn lanczos_factors(
    gram_op: &dyn LinearOperator,
    start: &[f64],
    b: usize,
    dim: usize,
    seed: u64,
    (scale, noise): (f64, f64),
    n_partitions: usize,
    pool: &ThreadPool,
) -> Result<LanczosFactors> {
    if !(scale > 0.0 && noise > 0.0 && scale.is_finite() && noise.is_finite()) {
        return Err(Error::InvalidInput(
            "the variances must be positive and finite".into(),
        ));
    }
    let basis = krylov_basis(gram_op, start, b, dim, seed, pool)?;
    let (c, len) = (basis.n, basis.len);
    let p_y = gram(&basis.q, len, &basis.aq, len, pool);
    let y_y = gram(&basis.aq, len, &basis.aq, len, pool);
    let t: Vec<f64> = (0..len * len)
        .map(|at| 0.5 * (p_y[at] + p_y[(at % len) * len + at / len]))
        .collect();
    let root_m = (n_partitions as f64).sqrt();
    // H is singular in directions of P that M annihilates (a space of more clusters than
    // points, say): a shift of 1e-13 of its largest diagonal (far above its rounding, far
    // below what the bound resolves) makes it definite, and a larger H only lowers the
    // explained part, so the variance stays an upper bound.
    let mut h: Vec<f64> = y_y
        .iter()
        .zip(&t)
        .map(|(yy, t)| scale * yy + noise * t)
        .collect();
    let shift = SHIFT * (0..len).map(|i| h[i * len + i]).fold(0.0f64, f64::max);
    (0..len).for_each(|i| h[i * len + i] += shift.max(f64::MIN_POSITIVE));
    let upper = inverse_cholesky_factor(&basis.aq, &h, len, scale * root_m, pool)?;
    let rho = noise / scale;
    let mut shifted = t;
    (0..len).for_each(|i| shifted[i * len + i] += rho);
    let lower = inverse_cholesky_factor(&basis.q, &shifted, len, root_m, pool)?;
    Ok(LanczosFactors {
        clusters: c,
        rank: len,
        upper,
        lower,
    })
}
