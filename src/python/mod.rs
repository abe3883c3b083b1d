//! Python bindings: the only code that touches pyo3. One file per core module it exposes;
//! they convert and delegate, the decisions are the core's.
//!
//! - The crossing: `run.rs` (GIL released, pools, Ctrl-C, callback exceptions, the `Handle`
//!   lock), `error.rs` (core errors to Python exceptions), `pickle.rs`, `arrays.rs` (numpy in
//!   and out), `tree_arrays.rs` (a tree's arena as a dict of arrays).
//! - Forests: `forest.rs` (what every forest class has), `forest_regression.rs`
//!   (`ForestRegressor`) and `forest_classification.rs` (`ForestClassifier`), each with the
//!   fold of a forest split into parts (`fold_moments`, `fold_proba`).
//! - `kernel.rs`, `kernel_grid.rs`, `density.rs`, `input_map.rs`, `partition.rs` (sampled
//!   partitions), `partition_operators.rs` (the partition kernel's systems and variances) and
//!   `linalg.rs` (the solvers, on the kernel held in Rust or on a Python callable).
//! - `options.rs`: the names of the core's string options, which the parameter tables read.

mod arrays;
mod density;
mod error;
mod forest;
mod forest_classification;
mod forest_regression;
mod input_map;
mod kernel;
mod kernel_grid;
mod linalg;
mod options;
mod partition;
mod partition_operators;
mod pickle;
mod run;
mod tree_arrays;

use pyo3::prelude::*;

/// The compiled core of mondrian_learn.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<density::Density>()?;
    m.add_class::<forest_classification::PyForestClassifier>()?;
    m.add_class::<forest_regression::PyForestRegressor>()?;
    m.add_class::<kernel::KernelFeatures>()?;
    m.add_class::<kernel::KernelRidge>()?;
    m.add_class::<kernel_grid::GridRidge>()?;
    m.add_class::<kernel_grid::GridSearch>()?;
    m.add_class::<partition::PartitionKernel>()?;
    m.add_class::<forest_regression::ScaledMixtures>()?;
    m.add_function(wrap_pyfunction!(forest_classification::sharpen, m)?)?;
    m.add_function(wrap_pyfunction!(input_map::unit_box, m)?)?;
    m.add_function(wrap_pyfunction!(partition_operators::precondition, m)?)?;
    m.add_function(wrap_pyfunction!(partition_operators::solve, m)?)?;
    m.add_function(wrap_pyfunction!(partition_operators::lanczos, m)?)?;
    m.add_function(wrap_pyfunction!(partition_operators::top_eigen, m)?)?;
    m.add_function(wrap_pyfunction!(
        partition_operators::predictive_variance,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(partition_operators::variance_factors, m)?)?;
    m.add_function(wrap_pyfunction!(linalg::operator_solve, m)?)?;
    m.add_function(wrap_pyfunction!(linalg::operator_lanczos, m)?)?;
    m.add_function(wrap_pyfunction!(linalg::operator_top_eigen, m)?)?;
    m.add_function(wrap_pyfunction!(linalg::operator_variance_factors, m)?)?;
    options::register(m)?;
    m.add("FORMAT_VERSION", crate::serialize::FORMAT_VERSION)?;
    Ok(())
}
