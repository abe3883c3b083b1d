//! The Mondrian process on data: trees as arenas, batch sampling and conditional extension
//! under a split policy, routing of new points and the branch-off walk every model's
//! predictive is built from.

pub mod arena;
pub mod birth_order;
pub mod branch_off;
pub mod extend;
pub mod guided;
pub mod leaf_samples;
pub mod params;
pub mod policy;
pub mod route;
pub mod rows;
pub mod sample;
pub(crate) mod split_rows;

pub use arena::{MondrianTree, NONE};
pub use params::TreeParams;
