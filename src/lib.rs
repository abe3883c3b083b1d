//! mondrian-learn: Mondrian processes, forests and kernels.
//!
//! The core is plain Rust; the Python bindings live in [`python`] behind the `python` feature.

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
