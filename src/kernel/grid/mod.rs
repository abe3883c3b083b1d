//! The Mondrian grid (Balog, *The Mondrian Process in Machine Learning*, ch. 5): M grids, each
//! cutting every dimension d by an independent 1-D Poisson process with its own lifetime λ_d,
//! whose occupied cells' indicator features (scaled 1/√M) estimate the ARD Laplace kernel
//! exp(−Σ_d λ_d |x_d − x'_d|).
//!
//! - [`process`]: the cuts on the search points — per gap between neighbouring coordinates and
//!   per grid, the birth time of its first cut, drawn lazily; per dimension, all grids' cuts
//!   in birth order.
//! - [`search`]: the lifetime search's state — the grids at the current (λ_d), the ridge
//!   solution kept by the lifetime path's solver through every split and merge of cells
//!   (`moves.rs`), and trial moves undone exactly (§5.1–5.3). The optimisers that drive it
//!   live in Python.
//! - [`model`]: ridge on the grid features at fixed lifetimes, fitted from scratch, and its
//!   predictions for new points with the gaps' unseen cuts integrated out.
//! - `tests`: the search against fits from scratch, move by move.

pub mod model;
mod moves;
pub mod process;
pub mod search;

#[cfg(test)]
mod tests;

pub use model::{GridCut, GridRidge};
use moves::missing_cut;
pub use process::{Cut, Knots, Process};
pub use search::{GridPoint, GridSearch};
