//! One error type for the whole core; the Python layer maps it to `ValueError`/`RuntimeError`.

use thiserror::Error;

/// Everything that can go wrong in the core. Invalid user input is always one of these,
/// never a panic.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A parameter the core cannot work with. The domain of each parameter (`n_estimators >= 1`,
    /// a finite lifetime, a solver's name) is the estimators' parameter tables' rule, checked
    /// in Python; here it is either a value that conflicts with the data or the fitted state
    /// (a lifetime beyond the trees', more feature columns than `max_dense_features`, a tree
    /// past its node budget, a point store's directory) or a guard that keeps the core from
    /// misbehaving (a zero count, a non-positive tolerance) when a caller skipped the tables.
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

/// The value of the option called `value` among `choices` (name, value) of the parameter
/// `parameter`; else an [`Error::InvalidParameter`] listing them ("must be 'a', 'b' or 'c',
/// got \"x\"").
pub fn one_of<T: Copy>(parameter: &'static str, value: &str, choices: &[(&str, T)]) -> Result<T> {
    if let Some(&(_, chosen)) = choices.iter().find(|(name, _)| *name == value) {
        return Ok(chosen);
    }
    let quoted: Vec<String> = choices
        .iter()
        .map(|(name, _)| format!("'{name}'"))
        .collect();
    let listed = match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    Err(Error::InvalidParameter {
        name: parameter,
        reason: format!("must be {listed}, got {value:?}"),
    })
}

/// Declares the string options of the parameter `$parameter` on the enum `$choice`:
/// `PARAMETER`, `CHOICES` (each choice's name: the one list of them, which the estimators'
/// parameter tables read through the bindings, so a name is checked once, in Python) and
/// `named`, which converts a checked name.
macro_rules! string_options {
    ($choice:ty, $parameter:literal, [$($name:literal => $variant:ident),+ $(,)?]) => {
        impl $choice {
            /// The parameter these choices are the values of.
            pub const PARAMETER: &'static str = $parameter;
            /// Each choice's name.
            pub const CHOICES: &'static [(&'static str, Self)] = &[$(($name, Self::$variant)),+];

            /// The choice called `name` (one of [`Self::CHOICES`]).
            pub fn named(name: &str) -> $crate::error::Result<Self> {
                $crate::error::one_of(Self::PARAMETER, name, Self::CHOICES)
            }
        }
    };
}
pub(crate) use string_options;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_of_finds_the_named_choice_or_lists_them_all() {
        let choices = [("a", 1), ("b", 2), ("c", 3)];
        assert_eq!(one_of("p", "b", &choices), Ok(2));
        let Err(Error::InvalidParameter { name, reason }) = one_of("p", "x", &choices) else {
            panic!("an unknown name is refused");
        };
        assert_eq!(
            (name, reason.as_str()),
            ("p", "must be 'a', 'b' or 'c', got \"x\"")
        );
        let Err(Error::InvalidParameter { reason, .. }) = one_of("p", "x", &choices[..2]) else {
            panic!("an unknown name is refused");
        };
        assert_eq!(reason, "must be 'a' or 'b', got \"x\"");
    }
}
