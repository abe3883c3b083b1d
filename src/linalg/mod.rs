//! Linear algebra the models need: one dot product, one Cholesky factor (with the updates
//! the lifetime path and online ridge make), an explicit symmetric inverse (the report's
//! route), and solvers on operators that are only available through products: conjugate
//! gradients, Lanczos, and block Lanczos with its orthonormalisation.

pub mod block;
pub mod block_lanczos;
pub mod cg;
pub mod cholesky;
pub mod inverse;
pub mod lanczos;
pub mod operator;
pub mod orthonormal;
pub mod symeig;

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
