//! Pickling for every fitted Rust handle: the versioned byte format of [`crate::serialize`],
//! a structural check of what is read back, and `__reduce__` pointing at the class's
//! `from_bytes` — written once, given to each class by [`pickled!`].

use super::error::to_py_err;
use super::run::Handle;
use crate::error::Error;
use crate::serialize;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde::{de::DeserializeOwned, Serialize};

/// The versioned bytes of the model in `handle` (serialised with the GIL released).
pub fn to_py_bytes<'py, T: Serialize + Send + Sync>(
    py: Python<'py>,
    handle: &Handle<T>,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = handle
        .peek(py, |model| serialize::to_bytes(model))
        .map_err(to_py_err)?;
    Ok(PyBytes::new(py, &bytes))
}

/// Reads `bytes` back into a handle; `is_consistent` must accept the model (corrupt or
/// foreign bytes give `ValueError`, never a panic later).
pub fn from_py_bytes<T: DeserializeOwned + Send + Sync>(
    bytes: &[u8],
    is_consistent: impl FnOnce(&T) -> bool,
) -> PyResult<Handle<T>> {
    let value: T = serialize::from_bytes(bytes).map_err(to_py_err)?;
    if !is_consistent(&value) {
        return Err(to_py_err(Error::Corrupt(
            "the stored model fails its consistency checks".into(),
        )));
    }
    Ok(Handle::new(value))
}

/// `(mondrian_learn._core.<class_name>.from_bytes, (bytes,))` for `__reduce__`.
pub fn reduce<'py>(
    py: Python<'py>,
    class_name: &str,
    bytes: Bound<'py, PyBytes>,
) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
    let restore = py
        .import("mondrian_learn._core")?
        .getattr(class_name)?
        .getattr("from_bytes")?;
    Ok((restore, (bytes,)))
}

/// `to_bytes`, `from_bytes` and `__reduce__` for a `#[pyclass]` whose model sits in a field
/// `inner: Handle<T>`; `$check` validates a deserialised `T`.
macro_rules! pickled {
    ($class:ident, $check:path) => {
        #[pyo3::pymethods]
        impl $class {
            /// Versioned bytes of the whole fitted state.
            fn to_bytes<'py>(
                &self,
                py: pyo3::Python<'py>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyBytes>> {
                $crate::python::pickle::to_py_bytes(py, &self.inner)
            }

            /// Inverse of `to_bytes`; corrupt or foreign bytes raise `ValueError`.
            #[staticmethod]
            fn from_bytes(bytes: &[u8]) -> pyo3::PyResult<Self> {
                let inner = $crate::python::pickle::from_py_bytes(bytes, $check)?;
                Ok(Self { inner })
            }

            #[allow(clippy::type_complexity)]
            fn __reduce__<'py>(
                &self,
                py: pyo3::Python<'py>,
            ) -> pyo3::PyResult<(
                pyo3::Bound<'py, pyo3::PyAny>,
                (pyo3::Bound<'py, pyo3::types::PyBytes>,),
            )> {
                $crate::python::pickle::reduce(py, stringify!($class), self.to_bytes(py)?)
            }
        }
    };
}
pub(crate) use pickled;
