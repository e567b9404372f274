//! Errors: [`Error`], what a call on an [`Annal`](crate::Annal) can fail with, one variant per
//! operation, each wrapping that operation's own typed error (also in this module).

use std::path::PathBuf;

pub use annal_engine::{
    AppendError, BudgetError, CloseError, CompactError, ForkError, OpenError, PortableError, ProjectError,
    ReadError, SummarizeError,
};
pub use annal_formats::{ExportError, LoadError};
pub use annal_query::{GetError, IndexError, SearchError, WaitError};
pub use annal_sources::{SourceError, SyncError};

/// A call on an [`Annal`](crate::Annal) failed.
///
/// Each variant wraps the typed error of the operation that failed, so a caller can match on
/// the cause (`Error::Append(AppendError::Conflict { .. })`), ask what kind of failure it is
/// ([`Error::is_poisoned`], [`Error::is_corrupted`]) or just print it: the messages name the
/// session, entry or path involved.
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
        "{name}: not read as {format}: {unrecognised} of its {total} items are of no kind {format} writes (another format, or a newer version of it); nothing was stored"
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
    },
    /// A sync could not store what it read (the store failed; see [`Annal::sync`](crate::Annal::sync)).
    #[error(transparent)]
    Sync(#[from] SyncError),
    /// A parsed transcript session could not be loaded into the store.
    #[error(transparent)]
    Load(#[from] LoadError),
}

impl Error {
    /// Whether an earlier I/O error on the write path stopped writes: the store refuses writes
    /// until it is closed and opened again (nothing acknowledged was lost).
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
        matches!(
            self,
            Error::Append(AppendError::Poisoned)
                | Error::Fork(ForkError::Poisoned)
                | Error::Compact(CompactError::Poisoned)
                | Error::Load(LoadError::Append { error: AppendError::Poisoned, .. })
                | Error::Sync(SyncError::Append(AppendError::Poisoned))
        )
    }

    /// Whether stored bytes were found damaged (a failed hash, checksum or validation): the
    /// journal is never read as altered text; `verify` lists what is damaged.
    pub fn is_corrupted(&self) -> bool {
        let read = |err: &ReadError| matches!(err, ReadError::Corrupted { .. });
        match self {
            Error::Open(err) => matches!(err, OpenError::Corrupted { .. }),
            Error::Append(err)
            | Error::Load(LoadError::Append { error: err, .. })
            | Error::Sync(SyncError::Append(err)) => {
                matches!(err, AppendError::Corrupted { .. })
            }
            Error::Fork(err) => matches!(err, ForkError::Corrupted { .. }),
            Error::Read(err)
            | Error::Load(LoadError::Read { error: err, .. })
            | Error::Sync(SyncError::Read(err)) => read(err),
            Error::Project(err) => matches!(err, ProjectError::Corrupted { .. }),
            Error::Compact(err) => matches!(err, CompactError::Corrupted { .. }),
            Error::Index(err) => matches!(err, IndexError::Corrupted { .. }),
            Error::Search(err) => matches!(err, SearchError::Corrupted { .. }),
            Error::Get(GetError::Journal(err)) | Error::Export(ExportError::Read(err)) => read(err),
            _ => false,
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

/// [`message`], naming the store where the command line names it: an unknown session or
/// entry, a stale `expected_next`, a fork name in use. The command line and the bindings
/// describe these failures of a store at `store` in the same words.
///
/// ```
/// use annal::error::{message_in, ReadError};
/// let err = annal::Error::Read(ReadError::UnknownSession("s".into()));
/// assert_eq!(message_in(&err, "work.redb".as_ref()), "no session named \"s\" in work.redb");
/// ```
pub fn message_in(err: &Error, store: &std::path::Path) -> String {
    let store = store.display();
    match err {
        Error::Read(ReadError::UnknownSession(name))
        | Error::Fork(ForkError::UnknownSession(name))
        | Error::Project(ProjectError::UnknownSession(name))
        | Error::Compact(CompactError::UnknownSession(name))
        | Error::Search(SearchError::UnknownSession(name))
        | Error::Export(ExportError::Read(ReadError::UnknownSession(name))) => {
            format!("no session named {name:?} in {store}")
        }
        Error::Get(GetError::UnknownEntry(id)) => {
            format!("no entry {id:?} in {store} (ids look like ENTRY or ENTRY#BLOCK)")
        }
        Error::Append(AppendError::Conflict { session, expected, actual }) => format!(
            "conflict: session {session:?} in {store} has {actual} records, so its next sourceOrder is \
             {actual}, not {expected}; nothing was appended"
        ),
        Error::Fork(ForkError::NameTaken(name)) => {
            format!("a session named {name:?} already exists in {store}")
        }
        other => message(other),
    }
}
