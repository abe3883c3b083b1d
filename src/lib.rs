//! mondrian-learn: Mondrian processes, forests and kernels.
//!
//! The core is plain Rust; the Python bindings live in `python` behind the `python` feature.
//!
//! - [`mondrian`]: the Mondrian process on data, the trees every model is built on.
//! - [`forest`]: forests of Mondrian trees and their two models, regression and classification.
//! - [`kernel`]: the Mondrian kernel (features, ridge, the lifetime path) and the Mondrian grid.
//! - [`density`]: Mondrian density estimation on a box.
//! - [`partition`]: random partition kernels, their samplers, products and GP variances.
//! - [`linalg`]: one dot, one Cholesky, the explicit inverse, CG, Lanczos, block Lanczos.
//! - The points the models read: [`points`] (dense views, sparse rows), [`coordinate`] (their
//!   element types), [`sparse`] (CSR output), [`input_map`] (the map to the unit box) and
//!   [`training_data`] (the checks on training rows, targets and row weights).
//! - Shared machinery: [`error`], [`rng`] (per-tree streams), [`parallel`] (local pools and the
//!   interrupt flag), [`fair_lock`], [`serialize`] (the byte format of fitted models), and
//!   `testing` (helpers of the unit tests).

pub mod coordinate;
pub mod density;
pub mod error;
pub mod fair_lock;
pub mod forest;
pub mod input_map;
pub mod kernel;
pub mod linalg;
pub mod mondrian;
pub mod parallel;
pub mod partition;
pub mod points;
pub mod rng;
pub mod serialize;
pub mod sparse;
#[cfg(test)]
mod testing;
pub mod training_data;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, Result};
