//! The Mondrian kernel (Balog, Lakshminarayanan, Ghahramani, Roy & Teh, UAI 2016): random
//! features from Mondrian trees ([`features`], [`mondrian_features`]), ridge regression on
//! them ([`ridge`], with its Gram matrix in [`gram`]), online updates ([`online`]), and the
//! lifetime path that evaluates every kernel width up to Λ for about the price of one fit
//! ([`path`]). The Mondrian grid, a lifetime per dimension with its lifetimes searched, is in
//! [`grid`].

pub mod features;
pub mod gram;
pub mod grid;
pub mod mondrian_features;
pub mod online;
pub mod path;
pub mod ridge;
