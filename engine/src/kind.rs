//! [`ErrorKind`]: the one classification of every error annal returns, by what a caller can
//! do about it.
//!
//! Each error type of every layer has a `kind()` that matches its own variants exhaustively
//! and delegates to the error it wraps, so a variant added anywhere does not compile until it
//! is classified. The command line's exit status, the MCP server's tool errors and the Python
//! exception classes are all read off this one value; nothing re-matches nested enums.

/// What kind of failure an error is, by what the caller can do about it.
///
/// Deliberately not `#[non_exhaustive]`: a program that maps kinds to its own outcomes (exit
/// codes, exception classes, HTTP statuses) should fail to compile when a kind is added, not
/// fall through a catch-all arm.
///
/// ```
/// use annal_engine::{ErrorKind, ReadError};
/// let err = ReadError::UnknownSession("s".into());
/// assert_eq!(err.kind(), ErrorKind::NotFound);
/// assert_eq!(err.kind().to_string(), "not found");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// What was given cannot be stored or asked: a malformed record, an invalid or taken name,
    /// a budget too small, a query that does not parse, bytes in no known format. Change the
    /// input; retrying the same call fails the same way.
    BadInput,
    /// The session, entry or block named does not exist.
    NotFound,
    /// The session moved on: an append's expected position is stale. Read it again, decide
    /// again, retry.
    Conflict,
    /// Another process or call holds what this one needs (the write lock, a compaction claim,
    /// the index writer, an agent's database), or the index had not caught up in time. Retry
    /// later.
    Busy,
    /// The store cannot be written by this handle: opened read-only, or its file or file
    /// system is read-only.
    ReadOnly,
    /// The handle was closed.
    Closed,
    /// An earlier I/O error on the write path stopped writes: close and reopen the store.
    /// Nothing acknowledged was lost.
    Poisoned,
    /// A shared session's append could not reach its fleet: the records are stored, in a
    /// named fork of the session, not in the session. Decide whether to go on there.
    Forked,
    /// Stored bytes are not what was written (a failed hash, checksum or validation); `verify`
    /// lists what is damaged. A damaged search index is rebuilt by `reindex`.
    Corrupted,
    /// The file is of a format or version this build does not read (a newer store, an agent
    /// database of an unknown schema).
    Unsupported,
    /// The operating system refused: a file could not be read, written or synced.
    Io,
    /// A failure inside annal or a library it uses that fits no kind above: a bug to report.
    Internal,
}

impl ErrorKind {
    /// Every kind, in declaration order (for tables and tests that cover each one).
    pub const ALL: [ErrorKind; 12] = [
        ErrorKind::BadInput,
        ErrorKind::NotFound,
        ErrorKind::Conflict,
        ErrorKind::Busy,
        ErrorKind::ReadOnly,
        ErrorKind::Closed,
        ErrorKind::Poisoned,
        ErrorKind::Forked,
        ErrorKind::Corrupted,
        ErrorKind::Unsupported,
        ErrorKind::Io,
        ErrorKind::Internal,
    ];

    /// The kind's name in words, as the MCP server's tool errors begin.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::BadInput => "bad input",
            ErrorKind::NotFound => "not found",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Busy => "busy",
            ErrorKind::ReadOnly => "read-only",
            ErrorKind::Closed => "closed",
            ErrorKind::Poisoned => "poisoned",
            ErrorKind::Forked => "forked",
            ErrorKind::Corrupted => "corrupted",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Io => "i/o",
            ErrorKind::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
