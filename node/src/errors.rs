//! What a failed call rejects with: each `annal::Error` as a Node-API error whose message is one
//! JSON object (the error class of its kind, the one line the command line prints for the same
//! failure, a conflict's positions), which `lib/errors.ts` turns into an instance of the class.

use std::path::Path;

use annal::error::ErrorKind;
use annal::Error;
use serde_json::json;

/// What begins the message of every error the addon raises, so the TypeScript side tells its
/// own apart from Node's.
pub(crate) const MARK: &str = "annal-error:";

/// The error class of each kind of failure: one class a kind, named as the Python package's.
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

/// A failure as the addon reports it: its kind, its line, and a conflict's positions.
#[derive(Debug)]
pub struct Failure {
    kind: ErrorKind,
    message: String,
    conflict: Option<(u64, u64)>,
}

impl Failure {
    /// `err`, raised by a call on the store at `store`.
    pub(crate) fn of(err: &Error, store: &Path) -> Failure {
        Failure {
            kind: err.kind(),
            message: annal::error::message_in(err, store),
            conflict: err.conflict_positions(),
        }
    }

    /// A failure of `kind` found before the store was asked.
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Failure {
        Failure { kind, message: message.into(), conflict: None }
    }

    /// Bad input: a record or an argument that does not parse or is out of range.
    pub(crate) fn bad_input(message: impl Into<String>) -> Failure {
        Failure::new(ErrorKind::BadInput, message)
    }

    /// The Node-API error carrying this failure.
    pub(crate) fn into_napi(self) -> napi::Error {
        let mut body = json!({"class": class_of(self.kind), "message": self.message});
        if let Some((expected, actual)) = self.conflict {
            body["expected"] = json!(expected);
            body["actual"] = json!(actual);
        }
        napi::Error::new(napi::Status::GenericFailure, format!("{MARK}{body}"))
    }
}

impl From<Failure> for napi::Error {
    fn from(failure: Failure) -> napi::Error {
        failure.into_napi()
    }
}
