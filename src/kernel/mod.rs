//! The Mondrian kernel (Balog, Lakshminarayanan, Ghahramani, Roy & Teh, UAI 2016): random
//! features from Mondrian trees, ridge regression on them, the lifetime path that evaluates
//! every kernel width up to Λ for about the price of one fit, and online updates.

pub mod events;
pub mod features;
pub mod online;
pub mod path;
pub mod path_solver;
pub mod ridge;
pub mod transformer;
pub mod validation;

#[cfg(test)]
mod tests;
