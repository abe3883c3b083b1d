//! The names of the core's string options, for the estimators' parameter tables: each list
//! lives once, in its enum's `CHOICES` (`error::string_options`).

use crate::forest::regression::evidence::PriorCriterion;
use crate::forest::regression::online::PosteriorMode;
use crate::forest::regression::prior::NoiseVariance;
use crate::kernel::path::SolverChoice;
use crate::partition::operators::Preconditioner;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// Adds `OPTIONS`, `{parameter: (name, ...)}`, to the module `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let options = PyDict::new(m.py());
    for (parameter, names) in [
        (SolverChoice::PARAMETER, names(SolverChoice::CHOICES)),
        (Preconditioner::PARAMETER, names(Preconditioner::CHOICES)),
        (NoiseVariance::PARAMETER, names(NoiseVariance::CHOICES)),
        (PriorCriterion::PARAMETER, names(PriorCriterion::CHOICES)),
        (PosteriorMode::PARAMETER, names(PosteriorMode::CHOICES)),
    ] {
        options.set_item(parameter, PyTuple::new(m.py(), names)?)?;
    }
    m.add("OPTIONS", options)
}

fn names<T>(choices: &[(&'static str, T)]) -> Vec<&'static str> {
    choices.iter().map(|(name, _)| *name).collect()
}
