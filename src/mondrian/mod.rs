//! The Mondrian process on data: trees as arenas, batch sampling and conditional extension
//! under a split policy, routing of new points and the branch-off walk every model's
//! predictive is built from.
//!
//! - Trees: [`arena`] (the nodes as parallel arrays), [`leaf_samples`] (each leaf's points),
//!   [`params`].
//! - Growing: [`sample`] (batch sampling; its hot loop in `split_rows`), [`extend`]
//!   (conditional extension), [`rows`] (reading rows by id), under a split policy ([`policy`];
//!   label-guided cuts in [`guided`]).
//! - Reading: [`route`] (a new point's path and stay probabilities), [`branch_off`] (the
//!   branch-off walk) and [`birth_order`] (the cuts in birth-time order every lifetime path
//!   sweeps).

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
