//! Linear algebra on operators that are only available through products.

pub mod block;
pub mod block_lanczos;
pub mod cg;
pub mod lanczos;
pub mod operator;
pub mod symeig;
