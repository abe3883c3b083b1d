//! Array conversions between numpy and the core: any array numpy can make comes in (copied
//! to a C-ordered buffer only when it is not one already), results go out without a copy.

use super::error::to_py_err;
use crate::error::Error;
use crate::sparse::Csr;
use numpy::ndarray::{Array2, ArrayView2, CowArray, Ix2};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

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

/// A matrix of points as numpy holds it: float64, or float32, which the forests read a row
/// block at a time instead of through a float64 copy of the whole matrix.
#[derive(FromPyObject)]
pub enum AnyPoints<'py> {
    F64(PyReadonlyArray2<'py, f64>),
    F32(PyReadonlyArray2<'py, f32>),
}

/// A view of [`AnyPoints`] (what the work released from the GIL holds).
#[derive(Clone, Copy)]
pub enum PointsView<'a> {
    F64(ArrayView2<'a, f64>),
    F32(ArrayView2<'a, f32>),
}

impl AnyPoints<'_> {
    pub fn view(&self) -> PointsView<'_> {
        match self {
            Self::F64(a) => PointsView::F64(a.as_array()),
            Self::F32(a) => PointsView::F32(a.as_array()),
        }
    }
}

/// Evaluates `$body` with `$x` bound to the [`PointsView`] `$points`'s array, of either
/// element type (the core's forest functions are generic over it).
macro_rules! with_points {
    ($points:expr, |$x:ident| $body:expr) => {
        match $points {
            $crate::python::arrays::PointsView::F64($x) => $body,
            $crate::python::arrays::PointsView::F32($x) => $body,
        }
    };
}
pub(crate) use with_points;

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
