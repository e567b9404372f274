//! What a failed call raises in Python: each failure (`annal_bindings::Failure`, the class of its
//! kind and the one line the command line prints for it) as an instance of that class of
//! `annal.errors`.

use std::path::Path;

use annal::error::ErrorKind;
use annal::Error;
use annal_bindings::Failure;
use pyo3::prelude::*;

/// The exception for `err`, raised by a call on the store at `store`.
pub(crate) fn to_py(py: Python<'_>, err: &Error, store: &Path) -> PyErr {
    failed(py, Failure::of(err, store))
}

/// The exception of `annal.errors` for `failure`.
pub(crate) fn failed(py: Python<'_>, failure: Failure) -> PyErr {
    raise(py, failure.class(), failure.message, failure.conflict)
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
    failed(py, Failure::bad_input(message))
}

/// A failure of `kind` found without the store: its class with `message`.
pub(crate) fn of_kind(py: Python<'_>, kind: ErrorKind, message: String) -> PyErr {
    failed(py, Failure::new(kind, message))
}
