//! Mondrian trees: the arena, batch sampling and conditional extension.

pub mod arena;
pub mod extend;
pub mod leaf_samples;
pub mod params;
pub(crate) mod partition;
pub mod route;
pub mod sample;

pub use arena::{MondrianTree, NONE};
pub use params::TreeParams;
