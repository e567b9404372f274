//! What a failed call raises in Python: each `annal::Error` as one of the exception classes of
//! `annal.errors` (conflict, corrupted, poisoned, not found, bad input, busy), carrying the one
//! line the command line prints for the same failure.

use annal::error::{
    AppendError, CompactError, ExportError, ForkError, GetError, OpenError, ProjectError, ReadError,
    SearchError, WaitError,
};
use std::path::Path;

use annal::Error;
use pyo3::prelude::*;

/// The `annal.errors` class for `err`, and a conflict's expected and actual positions.
fn class_of(err: &Error) -> (&'static str, Option<(u64, u64)>) {
    if err.is_poisoned() {
        return ("PoisonedError", None);
    }
    if err.is_corrupted() {
        return ("CorruptedError", None);
    }
    let class = match err {
        Error::Append(AppendError::Conflict { expected, actual, .. }) => {
            return ("ConflictError", Some((*expected, *actual)));
        }
        Error::Append(AppendError::Busy { .. })
        | Error::Fork(ForkError::Busy { .. })
        | Error::Open(OpenError::AlreadyOpen { .. })
        | Error::Wait(WaitError::Timeout { .. })
        | Error::Compact(CompactError::Claimed { .. } | CompactError::Fenced { .. }) => "BusyError",
        Error::Read(ReadError::UnknownSession(_) | ReadError::UnknownEntry(_))
        | Error::Fork(ForkError::UnknownSession(_))
        | Error::Project(ProjectError::UnknownSession(_))
        | Error::Compact(CompactError::UnknownSession(_))
        | Error::Search(SearchError::UnknownSession(_))
        | Error::Get(GetError::UnknownEntry(_) | GetError::UnknownBlock { .. })
        | Error::Export(ExportError::Read(ReadError::UnknownSession(_))) => "NotFoundError",
        Error::Append(
            AppendError::EntryMismatch { .. }
            | AppendError::DuplicateInBatch { .. }
            | AppendError::EntryInOtherSession { .. }
            | AppendError::ClaimMismatch { .. }
            | AppendError::LimitExceeded { .. }
            | AppendError::InvalidRecord { .. }
            | AppendError::InvalidSessionName { .. },
        )
        | Error::Fork(
            ForkError::OutOfRange { .. } | ForkError::NameTaken(_) | ForkError::InvalidSessionName { .. },
        )
        | Error::Project(ProjectError::Budget(_) | ProjectError::DoesNotFit { .. })
        | Error::Compact(CompactError::Budget(_) | CompactError::DoesNotFit { .. })
        | Error::Search(
            SearchError::Syntax { .. } | SearchError::EmptyQuery | SearchError::InvalidFilter(_),
        )
        | Error::Get(GetError::InvalidLines(_))
        | Error::UnknownFormat { .. }
        | Error::Unrecognised { .. } => "BadInputError",
        _ => "AnnalError",
    };
    (class, None)
}

/// The exception for `err`, raised by a call on the store at `store`.
pub(crate) fn to_py(py: Python<'_>, err: &Error, store: &Path) -> PyErr {
    let (class, conflict) = class_of(err);
    raise(py, class, annal::error::message_in(err, store), conflict)
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
    raise(py, "BadInputError", message, None)
}
