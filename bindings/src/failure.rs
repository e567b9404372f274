//! What a failed call reports in either binding: the error class of its kind (one class a kind,
//! the same names in Python and TypeScript), the one line the command line prints for the same
//! failure, and a conflict's positions. Each binding raises it as its language's error.

use std::path::Path;

use annal::error::ErrorKind;
use annal::Error;

/// The error class of each kind of failure: one class a kind, so the class a caller catches
/// says what the command line's exit status and the MCP server's tool error say. The match is
/// exhaustive, so a new kind stops this compiling until it has its class.
pub fn class_of(kind: ErrorKind) -> &'static str {
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

/// A failure as a binding reports it: its kind, its line, and a conflict's positions
/// (expected, actual).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: ErrorKind,
    pub message: String,
    pub conflict: Option<(u64, u64)>,
}

impl Failure {
    /// `err`, raised by a call on the store at `store`: its line names the store.
    pub fn of(err: &Error, store: &Path) -> Failure {
        Failure {
            kind: err.kind(),
            message: annal::error::message_in(err, store),
            conflict: err.conflict_positions(),
        }
    }

    /// A failure of `kind` found before the store was asked.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Failure {
        Failure { kind, message: message.into(), conflict: None }
    }

    /// Bad input: a record or an argument that does not parse or is out of range.
    pub fn bad_input(message: impl Into<String>) -> Failure {
        Failure::new(ErrorKind::BadInput, message)
    }

    /// The store at `store` was closed before this call.
    pub fn closed(store: &Path) -> Failure {
        Failure::new(ErrorKind::Closed, format!("store {} is closed", store.display()))
    }

    /// The name of the error class this failure is raised as.
    pub fn class(&self) -> &'static str {
        class_of(self.kind)
    }
}
