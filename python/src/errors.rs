//! What a failed call raises in Python: each `annal::Error` as one of the exception classes of
//! `annal.errors`, one class per [`ErrorKind`], carrying the one
//! line the command line prints for the same failure.

use std::path::Path;

use annal::error::ErrorKind;
use annal::Error;
use pyo3::prelude::*;

/// The `annal.errors` class of each kind of failure: one class a kind, so the class a caller
/// catches says what the command line's exit status and the MCP server's tool error say.
pub(crate) fn class_of(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::BadInput => "BadInputError",
        ErrorKind::NotFound => "NotFoundError",
        ErrorKind::Conflict => "ConflictError",
        ErrorKind::Busy => "BusyError",
        ErrorKind::ReadOnly => "ReadOnlyError",
        ErrorKind::Closed => "ClosedError",
        ErrorKind::Poisoned => "PoisonedError",
        ErrorKind::Corrupted => "CorruptedError",
        ErrorKind::Unsupported => "UnsupportedError",
        ErrorKind::Io => "StorageIoError",
        ErrorKind::Internal => "InternalError",
        ErrorKind::Forked => "ForkedError",
    }
}

/// The exception for `err`, raised by a call on the store at `store`.
pub(crate) fn to_py(py: Python<'_>, err: &Error, store: &Path) -> PyErr {
    raise(py, class_of(err.kind()), annal::error::message_in(err, store), err.conflict_positions())
}

/// An exception of `annal.errors`' class `class` with `message` (and a conflict's positions).
pub(crate) fn raise(py: Python<'_>, class: &str, message: String, conflict: Option<(u64, u64)>) -> PyErr {
    let made = py.import("annal.errors").and_then(|module| {
        let class = module.getattr(class)?;
        match conflict {
            Some((expected, actual)) => class.call1((message.clone(), expected, actual)),
            None => class.call1((message.clone(),)),
        }
    });
    match made {
        Ok(instance) => PyErr::from_value(instance),
        // The package's own module is missing: still one clear error, with the message.
        Err(_) => pyo3::exceptions::PyRuntimeError::new_err(message),
    }
}

/// Bad input found before the store was asked: a record or item that does not parse, say.
pub(crate) fn bad_input(py: Python<'_>, message: String) -> PyErr {
    raise(py, class_of(ErrorKind::BadInput), message, None)
}
