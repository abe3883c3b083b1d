//! The one crossing from core errors to Python exceptions.

use crate::error::Error;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::PyErr;

/// Bad parameters or data are `ValueError`, failed file I/O `OSError`; anything else
/// `RuntimeError`.
pub fn to_py_err(e: Error) -> PyErr {
    match e {
        Error::InvalidParameter { .. } | Error::InvalidInput(_) | Error::Corrupt(_) => {
            PyValueError::new_err(e.to_string())
        }
        Error::Io(_) => PyOSError::new_err(e.to_string()),
        Error::Interrupted(_) | Error::ThreadPool(_) | Error::Internal(_) => {
            PyRuntimeError::new_err(e.to_string())
        }
    }
}
