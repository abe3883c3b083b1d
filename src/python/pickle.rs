//! Pickling for every fitted Rust handle: the versioned byte format of [`crate::serialize`],
//! a structural check of what is read back, and `__reduce__` pointing at the class's
//! `from_bytes` — written once, given to each class by [`pickled!`].

use super::error::to_py_err;
use super::run::Handle;
use crate::error::{Error, Result};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The bytes `encode` writes of the model in `handle` (with the GIL released).
pub fn to_py_bytes<'py, T: Send + Sync>(
    py: Python<'py>,
    handle: &Handle<T>,
    encode: impl FnOnce(&T) -> Result<Vec<u8>> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = handle.peek(py, encode).map_err(to_py_err)?;
    Ok(PyBytes::new(py, &bytes))
}

/// Reads `bytes` back into a handle by `decode`; `is_consistent` must accept the model
/// (corrupt or foreign bytes give `ValueError`, never a panic later).
pub fn from_py_bytes<T: Send + Sync>(
    bytes: &[u8],
    decode: impl FnOnce(&[u8]) -> Result<T>,
    is_consistent: impl FnOnce(&T) -> bool,
) -> PyResult<Handle<T>> {
    let value = decode(bytes).map_err(to_py_err)?;
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
/// `inner: Handle<T>`; `$check` validates a deserialised `T`. The model is written as itself
/// ([`crate::serialize`]) unless `encode` and `decode` say otherwise; `$name` is the class's
/// name in Python when it is not the Rust name.
macro_rules! pickled {
    ($class:ident, $name:expr, $check:expr, $encode:expr, $decode:expr) => {
        #[pyo3::pymethods]
        impl $class {
            /// Versioned bytes of the whole fitted state.
            fn to_bytes<'py>(
                &self,
                py: pyo3::Python<'py>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyBytes>> {
                $crate::python::pickle::to_py_bytes(py, &self.inner, $encode)
            }

            /// Inverse of `to_bytes`; corrupt or foreign bytes raise `ValueError`.
            #[staticmethod]
            fn from_bytes(bytes: &[u8]) -> pyo3::PyResult<Self> {
                let inner = $crate::python::pickle::from_py_bytes(bytes, $decode, $check)?;
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
                $crate::python::pickle::reduce(py, $name, self.to_bytes(py)?)
            }
        }
    };
    ($class:ident, $check:path) => {
        $crate::python::pickle::pickled!(
            $class,
            stringify!($class),
            $check,
            $crate::serialize::to_bytes,
            $crate::serialize::from_bytes
        );
    };
}
pub(crate) use pickled;
