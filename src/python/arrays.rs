//! Array conversions between numpy and the core: any array numpy can make comes in (copied
//! to a C-ordered buffer only when it is not one already), results go out without a copy.

use super::error::to_py_err;
use super::run::{Handle, Length};
use crate::error::{Error, Result};
use crate::input_map::InputMap;
use crate::points::{CsrPoints, MappedPoints, Points, Ranges};
use crate::sparse::Csr;
use numpy::ndarray::{Array2, ArrayView2, CowArray, Ix2};
use numpy::{Element, IntoPyArray, PyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::ThreadPool;
use std::ops::Range;

/// The values of `a` in C order: a view when the array is already C-contiguous, else a copy
/// (so any array numpy can make is accepted, and none is copied needlessly).
pub fn c_order<'a, T: numpy::Element + Clone>(
    a: &'a PyReadonlyArray2<'_, T>,
) -> CowArray<'a, T, Ix2> {
    let view = a.as_array();
    if view.is_standard_layout() {
        CowArray::from(view)
    } else {
        CowArray::from(view.as_standard_layout().into_owned())
    }
}

/// A matrix of points as Python hands it over: a numpy array of float64, or float32 (which
/// the forests read a row block at a time instead of through a float64 copy of the whole
/// matrix), the parts of a canonical CSR matrix, or a dense array with the map to the unit
/// box its rows are read through (`_validation.as_core_points`).
#[derive(FromPyObject)]
pub enum AnyPoints<'py> {
    F64(PyReadonlyArray2<'py, f64>),
    F32(PyReadonlyArray2<'py, f32>),
    Csr(SparsePoints<'py>),
    MappedF64(MappedDense<'py, f64>),
    MappedF32(MappedDense<'py, f32>),
}

/// `(x, (offset, scale))`: a dense array read through an estimator's map to the unit box.
#[derive(FromPyObject)]
pub struct MappedDense<'py, T: numpy::Element>(
    PyReadonlyArray2<'py, T>,
    (PyReadonlyArray1<'py, f64>, PyReadonlyArray1<'py, f64>),
);

impl<T: numpy::Element + crate::coordinate::Coordinate> MappedDense<'_, T> {
    fn view(&self) -> PyResult<MappedPoints<ArrayView2<'_, T>>> {
        let MappedDense(x, (offset, scale)) = self;
        let map = InputMap {
            offset: offset.as_array().to_vec(),
            scale: scale.as_array().to_vec(),
        };
        MappedPoints::new(x.as_array(), map).map_err(to_py_err)
    }
}

/// `(data, indices, indptr, n_features, map)` of a CSR matrix, `map` an optional
/// `(offset, scale)` the rows are read through (the estimator's map to the unit box).
#[derive(FromPyObject)]
pub struct SparsePoints<'py>(
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, i32>,
    PyReadonlyArray1<'py, i64>,
    usize,
    Option<(PyReadonlyArray1<'py, f64>, PyReadonlyArray1<'py, f64>)>,
);

/// A view of [`AnyPoints`] (what the work released from the GIL holds).
#[derive(Clone)]
pub enum PointsView<'a> {
    F64(ArrayView2<'a, f64>),
    F32(ArrayView2<'a, f32>),
    Csr(CsrPoints<'a>),
    MappedF64(MappedPoints<ArrayView2<'a, f64>>),
    MappedF32(MappedPoints<ArrayView2<'a, f32>>),
}

impl AnyPoints<'_> {
    /// The points, checked when sparse (a malformed CSR matrix is a `ValueError`).
    pub fn view(&self) -> PyResult<PointsView<'_>> {
        Ok(match self {
            Self::F64(a) => PointsView::F64(a.as_array()),
            Self::F32(a) => PointsView::F32(a.as_array()),
            Self::Csr(SparsePoints(data, indices, indptr, n_features, map)) => {
                let contiguous = |e: numpy::AsSliceError| {
                    to_py_err(Error::InvalidInput(format!("sparse X: {e}")))
                };
                let points = CsrPoints::new(
                    *n_features,
                    indptr.as_slice().map_err(contiguous)?,
                    indices.as_slice().map_err(contiguous)?,
                    data.as_slice().map_err(contiguous)?,
                )
                .map_err(to_py_err)?;
                PointsView::Csr(match map {
                    None => points,
                    Some((offset, scale)) => points
                        .with_map(InputMap {
                            offset: offset.as_array().to_vec(),
                            scale: scale.as_array().to_vec(),
                        })
                        .map_err(to_py_err)?,
                })
            }
            Self::MappedF64(x) => PointsView::MappedF64(x.view()?),
            Self::MappedF32(x) => PointsView::MappedF32(x.view()?),
        })
    }
}

/// Dispatch to the matrix of whichever kind (once per call or row block: the hot loops run on
/// the float64 blocks it hands out).
impl Points for PointsView<'_> {
    fn n_rows(&self) -> usize {
        match self {
            Self::F64(x) => x.n_rows(),
            Self::F32(x) => x.n_rows(),
            Self::Csr(x) => x.n_rows(),
            Self::MappedF64(x) => x.n_rows(),
            Self::MappedF32(x) => x.n_rows(),
        }
    }

    fn n_features(&self) -> usize {
        match self {
            Self::F64(x) => x.n_features(),
            Self::F32(x) => x.n_features(),
            Self::Csr(x) => x.n_features(),
            Self::MappedF64(x) => x.n_features(),
            Self::MappedF32(x) => x.n_features(),
        }
    }

    fn ranges(&self) -> Option<Ranges> {
        match self {
            Self::F64(x) => x.ranges(),
            Self::F32(x) => x.ranges(),
            Self::Csr(x) => x.ranges(),
            Self::MappedF64(x) => x.ranges(),
            Self::MappedF32(x) => x.ranges(),
        }
    }

    fn block<'b>(
        &'b self,
        rows: Range<usize>,
        map: Option<&InputMap>,
        buffer: &'b mut Vec<f64>,
    ) -> &'b [f64] {
        match self {
            Self::F64(x) => x.block(rows, map, buffer),
            Self::F32(x) => x.block(rows, map, buffer),
            Self::Csr(x) => x.block(rows, map, buffer),
            Self::MappedF64(x) => x.block(rows, map, buffer),
            Self::MappedF32(x) => x.block(rows, map, buffer),
        }
    }
}

/// A float64 vector, as numpy: what most calls on points return (a value per row).
pub type RowValues<'py> = PyResult<Bound<'py, PyArray1<f64>>>;

/// `work(model, points, pool)` on the model `handle` holds and the points `x`, the GIL
/// released for a call of `length`: a value (or a row of values) per point, as numpy.
pub fn per_row<'py, T: Send + Sync, O: IntoPyArray + Send>(
    handle: &Handle<T>,
    py: Python<'py>,
    x: AnyPoints<'py>,
    n_jobs: usize,
    length: Length,
    work: impl Fn(&T, &PointsView<'_>, &ThreadPool) -> Result<O> + Send + Sync,
) -> PyResult<Bound<'py, PyArray<O::Item, O::Dim>>> {
    let x = x.view()?;
    let out = handle.read(py, n_jobs, length, |m, call| work(m, &x, call.pool))?;
    Ok(out.into_pyarray(py))
}

/// A column of a dict of arrays: its name, and its value at each point.
pub type DictColumn<'a, P, T> = (&'a str, fn(&P) -> T);

/// `out[name]`, for each `(name, value)` of `columns`, becomes the array of `value(p)` over
/// `points` (a path's or a search's columns).
pub fn set_columns<P, T: Element>(
    out: &Bound<'_, PyDict>,
    points: &[P],
    columns: &[DictColumn<'_, P, T>],
) -> PyResult<()> {
    for (name, value) in columns {
        let column: Vec<T> = points.iter().map(value).collect();
        out.set_item(name, column.into_pyarray(out.py()))?;
    }
    Ok(())
}

/// The row-major values of a C-ordered array.
pub fn flat<'a, T>(a: &'a CowArray<'_, T, Ix2>) -> &'a [T] {
    a.as_slice().unwrap_or(&[])
}

/// A `rows × cols` array of `v` (row-major).
pub fn to_array2<T>(rows: usize, cols: usize, v: Vec<T>) -> PyResult<Array2<T>> {
    Array2::from_shape_vec((rows, cols), v)
        .map_err(|e| to_py_err(Error::InvalidInput(e.to_string())))
}

/// Two float64 vectors: a mean and a variance, an offset and a scale, a tridiagonal's
/// diagonal and off-diagonal.
pub type VectorPair<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

/// (data, indices, indptr, n_columns) of a CSR matrix, for `scipy.sparse.csr_matrix`.
pub type CsrParts<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<i32>>,
    Bound<'py, PyArray1<i64>>,
    usize,
);

pub fn csr_parts(py: Python<'_>, csr: Csr) -> CsrParts<'_> {
    (
        csr.data.into_pyarray(py),
        csr.indices.into_pyarray(py),
        csr.indptr.into_pyarray(py),
        csr.n_cols,
    )
}
