//! Python face of `input_map`: the map to the unit box fixed on training points; the
//! estimators hand it over with their points and the core reads the points through it.

use super::arrays::{AnyPoints, VectorPair};
use super::error::to_py_err;
use crate::input_map::InputMap;
use crate::points::finite_ranges;
use numpy::IntoPyArray;
use pyo3::prelude::*;

/// `(offset, scale)` of the map taking the bounding box of `x` (finite; dense or sparse) to
/// the unit box.
#[pyfunction]
pub fn unit_box<'py>(py: Python<'py>, x: AnyPoints<'py>) -> PyResult<VectorPair<'py>> {
    let ranges = finite_ranges(&x.view()?).map_err(to_py_err)?;
    let map = InputMap::unit_box_of_ranges(&ranges).map_err(to_py_err)?;
    Ok((map.offset.into_pyarray(py), map.scale.into_pyarray(py)))
}
