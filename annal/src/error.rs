//! Errors: [`Error`], what a call on an `Annal` handle can fail with, one variant per
//! operation, each wrapping that operation's own typed error (also in this module).

use std::path::PathBuf;

pub use annal_engine::{
    AppendError, BudgetError, CloseError, CompactError, ErrorKind, ForkError, OpenError, PortableError,
    ProjectError, ReadError, SummarizeError,
};
pub use annal_fleet::FleetError;
pub use annal_formats::{ExportError, LoadError};
pub use annal_query::{GetError, IndexError, SearchError, WaitError};
pub use annal_sources::{SourceError, SyncError};

/// A call on an [`Annal`](crate::Annal) failed.
///
/// Each variant wraps the typed error of the operation that failed, so a caller can match on
/// the cause (`Error::Append(AppendError::Conflict { .. })`), ask what kind of failure it is
/// ([`Error::kind`]) or just print it: the messages name the session, entry or path involved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The store could not be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// An append was refused or failed; nothing of its batch was stored.
    #[error(transparent)]
    Append(#[from] AppendError),
    /// A fork was refused or failed.
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// Reading the journal failed (an unknown session, damaged bytes, I/O).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A projection could not be made.
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// A compaction failed (a failed summary is not an error: it falls back).
    #[error(transparent)]
    Compact(#[from] CompactError),
    /// The search index could not be opened or stopped.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A search was refused (query syntax, unknown session) or failed.
    #[error(transparent)]
    Search(#[from] SearchError),
    /// The search index did not catch up with the journal in time.
    #[error(transparent)]
    Wait(#[from] WaitError),
    /// An original could not be read back by its id.
    #[error(transparent)]
    Get(#[from] GetError),
    /// An export failed.
    #[error(transparent)]
    Export(#[from] ExportError),
    /// Closing the store failed.
    #[error(transparent)]
    Close(#[from] CloseError),
    /// A transcript file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Bytes given to import are not in a format annal reads.
    #[error(
        "{name}: not a transcript annal can read (Claude Code, Codex, OpenCode, Gemini CLI, aider, Cline or an annal export)"
    )]
    UnknownFormat {
        /// The name the bytes were given under.
        name: String,
    },
    /// A transcript read as `format` is mostly lines that format does not have: it is in
    /// another format (or a newer version of this one), so nothing of it was stored.
    #[error(
        "{name}: not read as {format}: {unrecognised} of its {total} items are of no kind {format} writes (another format, or a newer version of it){}; nothing was stored",
        reason.as_ref().map(|reason| format!(", first {reason}")).unwrap_or_default()
    )]
    Unrecognised {
        /// The name the bytes were given under.
        name: String,
        /// The format tried.
        format: annal_formats::TranscriptFormat,
        /// Items not recognised.
        unrecognised: usize,
        /// Items read.
        total: usize,
        /// The first part that could not be read, and why (`line N: reason`).
        reason: Option<String>,
    },
    /// A sync could not store what it read (the store failed; see [`Annal::sync`](crate::Annal::sync)).
    #[error(transparent)]
    Sync(#[from] SyncError),
    /// A parsed transcript session could not be loaded into the store.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// An agent's database or storage folder given to import could not be read as one (a
    /// schema annal does not know, a damaged file, a database its agent keeps locked).
    #[error(transparent)]
    Source(#[from] SourceError),
    /// Publishing to, following or sharing through a fleet failed.
    #[error(transparent)]
    Fleet(#[from] FleetError),
}

impl Error {
    /// What kind of failure this is: the one classification the command line's exit status,
    /// the MCP server's tool errors and the Python exception classes are read from.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// use annal::{error::ErrorKind, Record, Role};
    /// let annal = annal::Annal::open(dir.path().join("s.redb"))?;
    /// annal.append("s", Some(0), vec![Record::text("u1", Role::User, "hi")])?;
    /// let stale = annal.append("s", Some(0), vec![Record::text("u2", Role::User, "again")]);
    /// assert_eq!(stale.map(|_| ()).map_err(|err| err.kind()), Err(ErrorKind::Conflict));
    /// # Ok(()) }
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Open(err) => err.kind(),
            Error::Append(err) => err.kind(),
            Error::Fork(err) => err.kind(),
            Error::Read(err) => err.kind(),
            Error::Project(err) => err.kind(),
            Error::Compact(err) => err.kind(),
            Error::Index(err) => err.kind(),
            Error::Search(err) => err.kind(),
            Error::Wait(err) => err.kind(),
            Error::Get(err) => err.kind(),
            Error::Export(err) => err.kind(),
            Error::Close(err) => err.kind(),
            // A file named by the caller that is not there is theirs to fix.
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => ErrorKind::NotFound,
            Error::Io { .. } => ErrorKind::Io,
            Error::UnknownFormat { .. } | Error::Unrecognised { .. } => ErrorKind::BadInput,
            Error::Sync(err) => err.kind(),
            Error::Load(err) => err.kind(),
            Error::Source(err) => err.kind(),
            Error::Fleet(err) => err.kind(),
        }
    }

    /// Whether an earlier I/O error on the write path stopped writes: the store refuses writes
    /// until it is closed and opened again (nothing acknowledged was lost). The same as
    /// `self.kind() == ErrorKind::Poisoned`.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = annal::Annal::open(dir.path().join("s.redb"))?;
    /// match annal.append("s", None, vec![annal::Record::text("u1", annal::Role::User, "hi")]) {
    ///     Err(err) if err.is_poisoned() => { /* reopen the store, then retry */ }
    ///     other => { other?; }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn is_poisoned(&self) -> bool {
        self.kind() == ErrorKind::Poisoned
    }

    /// Whether stored bytes were found damaged (a failed hash, checksum or validation): the
    /// journal is never read as altered text; `verify` lists what is damaged. The same as
    /// `self.kind() == ErrorKind::Corrupted`.
    pub fn is_corrupted(&self) -> bool {
        self.kind() == ErrorKind::Corrupted
    }

    /// The positions of a stale append, `(expected, actual)`, when this is a conflict: what
    /// the caller passed as `expected_next`, and the session's next sourceOrder.
    pub fn conflict_positions(&self) -> Option<(u64, u64)> {
        match self {
            Error::Append(AppendError::Conflict { expected, actual, .. })
            | Error::Fleet(FleetError::Append(AppendError::Conflict { expected, actual, .. })) => {
                Some((*expected, *actual))
            }
            _ => None,
        }
    }
}

/// The one line the command line prints for `err` (after `annal: `): its message, then each
/// cause it does not already quote, joined by `: `, folded onto one line. The language bindings
/// raise their exceptions with the same text.
///
/// ```
/// let err = annal::Error::UnknownFormat { name: "notes".into() };
/// assert!(annal::error::message(&err).starts_with("notes: not a transcript annal can read"));
/// ```
pub fn message(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut cause = Some(err);
    while let Some(err) = cause {
        let line = err.to_string();
        if !text.contains(&line) {
            text = if text.is_empty() { line } else { format!("{text}: {line}") };
        }
        cause = err.source();
    }
    text.split(['\n', '\r']).map(str::trim).filter(|part| !part.is_empty()).collect::<Vec<_>>().join(" ")
}

/// [`message`], naming the store at `store` where the error itself cannot: before a session,
/// entry or block that is not there, and before a conflict. The command line and the bindings
/// describe a failure of a store in the same words.
///
/// ```
/// use annal::error::{message_in, ReadError};
/// let err = annal::Error::Read(ReadError::UnknownSession("s".into()));
/// assert_eq!(message_in(&err, "work.redb".as_ref()), "work.redb: no session named \"s\"");
/// ```
pub fn message_in(err: &Error, store: &std::path::Path) -> String {
    let text = message(err);
    match err.kind() {
        ErrorKind::NotFound | ErrorKind::Conflict => format!("{}: {text}", store.display()),
        ErrorKind::BadInput
        | ErrorKind::Busy
        | ErrorKind::ReadOnly
        | ErrorKind::Closed
        | ErrorKind::Poisoned
        | ErrorKind::Corrupted
        | ErrorKind::Unsupported
        | ErrorKind::Io
        | ErrorKind::Internal
        | ErrorKind::Forked => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_error_has_the_kind_of_what_it_wraps() {
        // Once classified by hand and missed: a fork inside a sync.
        let poisoned = Error::Sync(SyncError::Fork(ForkError::Poisoned));
        assert!(poisoned.is_poisoned() && poisoned.kind() == ErrorKind::Poisoned);
        let damaged = Error::Sync(SyncError::Fork(ForkError::Corrupted { reason: "x".into() }));
        assert!(damaged.is_corrupted());
        let receipt = Error::Compact(CompactError::Receipt(AppendError::Conflict {
            session: "s".into(),
            expected: 0,
            actual: 1,
        }));
        assert_eq!(receipt.kind(), ErrorKind::Conflict);
        let load =
            Error::Load(LoadError::Read { session: "s".into(), error: ReadError::UnknownEntry("e".into()) });
        assert_eq!(load.kind(), ErrorKind::NotFound);
        let stopped = Error::Wait(WaitError::Index(IndexError::Stopped {
            reason: "the journal is damaged".into(),
            cause: ErrorKind::Corrupted,
        }));
        assert!(stopped.is_corrupted());
    }

    #[test]
    fn the_store_is_named_where_the_error_cannot_name_it() {
        let store = std::path::Path::new("work.redb");
        let unknown = Error::Get(GetError::UnknownEntry("e1".into()));
        assert_eq!(
            message_in(&unknown, store),
            "work.redb: no entry \"e1\" (ids look like ENTRY or ENTRY#BLOCK)"
        );
        let stale = Error::Append(AppendError::Conflict { session: "s".into(), expected: 0, actual: 2 });
        assert!(message_in(&stale, store).starts_with("work.redb: conflict: session \"s\" has 2 records"));
        assert_eq!(stale.conflict_positions(), Some((0, 2)));
        let bad = Error::UnknownFormat { name: "notes 日本".into() };
        assert_eq!(message_in(&bad, store), message(&bad), "bad input names its own input");
        let kinds: std::collections::BTreeSet<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(kinds.len(), ErrorKind::ALL.len());
    }
}
