//! Linear algebra the models need: one dot product, one Cholesky factor (with the updates
//! the lifetime path and online ridge make), an explicit symmetric inverse (the report's
//! route), and solvers on operators that are only available through products: conjugate
//! gradients, Lanczos, and block Lanczos with its orthonormalisation.
//!
//! - [`cholesky`] (factor and updates), [`inverse`] (the explicit inverse).
//! - [`operator`] (the one "apply to a block" interface), [`block`] (blocks of vectors).
//! - [`cg`], [`lanczos`], [`block_lanczos`] with [`orthonormal`], and [`symeig`] (the small
//!   dense eigenproblems Rayleigh–Ritz produces).

pub mod block;
pub mod block_lanczos;
pub mod cg;
pub mod cholesky;
pub mod inverse;
pub mod lanczos;
pub mod operator;
pub mod orthonormal;
pub mod symeig;

use crate::error::{Error, Result};

/// The error for a matrix that stopped being positive definite at `column`, where the
/// `pivot` (named `name`: "pivot", "Schur complement") is not positive.
fn not_positive_definite(column: usize, name: &str, pivot: f64) -> Error {
    Error::InvalidInput(format!(
        "matrix is not numerically positive definite at column {column} \
         ({name} {pivot:e}); increase the ridge parameter alpha"
    ))
}

/// Checks a row and column about to be appended to an `n × n` `matrix` ("factor",
/// "inverse"): `len` off-diagonal entries, and a positive, finite pivot (`name`, `pivot`).
fn check_appended_row(
    matrix: &str,
    n: usize,
    len: usize,
    (name, pivot): (&str, f64),
) -> Result<()> {
    if len != n {
        return Err(Error::InvalidInput(format!(
            "a new row of a {n} × {n} {matrix} needs {n} entries, got {len}"
        )));
    }
    if !(pivot > 0.0 && pivot.is_finite()) {
        return Err(not_positive_definite(n, name, pivot));
    }
    Ok(())
}

/// Σ a_k b_k with eight independent partial sums (so the loop vectorises).
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    (acc[0] + acc[4]) + (acc[1] + acc[5]) + (acc[2] + acc[6]) + (acc[3] + acc[7]) + tail
}
