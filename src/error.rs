//! One error type for the whole core; the Python layer maps it to `ValueError`/`RuntimeError`.

use thiserror::Error;

/// Everything that can go wrong in the core. Invalid user input is always one of these,
/// never a panic.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A parameter outside its domain (e.g. `min_samples_split < 1`, negative lifetime).
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter { name: &'static str, reason: String },
    /// Input data of the wrong shape or content.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A serialized model that cannot be read back.
    #[error("cannot restore model: {0}")]
    Corrupt(String),
    /// A progress callback asked to stop (or failed).
    #[error("interrupted: {0}")]
    Interrupted(String),
    /// Reading or writing a file the core keeps (a forest's points on disk) failed.
    #[error("{0}")]
    Io(String),
    /// The thread pool could not be created.
    #[error("thread pool: {0}")]
    ThreadPool(String),
    /// A bug: the core panicked (caught at the crossing by `parallel::catch_panic`).
    #[error("internal error: the core panicked ({0}); please report it")]
    Internal(String),
}

/// Result alias used across the core.
pub type Result<T> = std::result::Result<T, Error>;
