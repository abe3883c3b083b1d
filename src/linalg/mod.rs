//! Dense linear algebra the models need, written for their update patterns.

pub mod cholesky;
pub mod inverse;
