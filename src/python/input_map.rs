//! Python face of `input_map`: the map to the unit box that the kernel and partition
//! estimators apply to their inputs (the forests apply it inside the core).

use super::arrays::{c_order, flat, to_array2, AnyPoints, VectorPair};
use super::error::to_py_err;
use crate::input_map::InputMap;
use crate::points::finite_ranges;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// `(offset, scale)` of the map taking the bounding box of `x` (finite; dense or sparse) to
/// the unit box.
#[pyfunction]
pub fn unit_box<'py>(py: Python<'py>, x: AnyPoints<'py>) -> PyResult<VectorPair<'py>> {
    let ranges = finite_ranges(&x.view()?).map_err(to_py_err)?;
    let map = InputMap::unit_box_of_ranges(&ranges).map_err(to_py_err)?;
    Ok((map.offset.into_pyarray(py), map.scale.into_pyarray(py)))
}

/// `(x − offset) / scale` row by row; an error if an image overflows float64.
#[pyfunction]
pub fn to_unit_box<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    offset: PyReadonlyArray1<'py, f64>,
    scale: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let x = c_order(&x);
    let (n, d) = x.dim();
    let map = InputMap {
        offset: offset.as_array().to_vec(),
        scale: scale.as_array().to_vec(),
    };
    map.require_consistent(d).map_err(to_py_err)?;
    let rows = flat(&x);
    let out = map.map(rows).map_err(to_py_err)?;
    Ok(to_array2(n, d, out)?.into_pyarray(py))
}
