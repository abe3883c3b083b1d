//! Linear algebra the models need: dense factorisations written for their update patterns,
//! and solvers on operators that are only available through products.

pub mod block;
pub mod block_lanczos;
pub mod cg;
pub mod cholesky;
pub mod inverse;
pub mod lanczos;
pub mod operator;
pub mod symeig;
