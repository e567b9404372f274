//! [`Error`]: what a call on an [`Annal`](crate::Annal) can fail with, one variant per layer,
//! each wrapping the engine's or the search index's own typed error.

use std::path::PathBuf;

use annal_engine::{
    AppendError, CloseError, CompactError, ExportError, ForkError, LoadError, OpenError, ProjectError,
    ReadError,
};
use annal_query::{GetError, IndexError, SearchError, WaitError};

/// A call on an [`Annal`](crate::Annal) failed.
///
/// Each variant wraps the typed error of the layer that failed, so a caller can match on the
/// cause (`Error::Append(AppendError::Conflict { .. })`) or just print it: the messages name
/// the session, entry or path involved.
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
    #[error("{name}: not a transcript annal can read (Claude Code, Codex, OpenCode or an annal export)")]
    UnknownFormat {
        /// The name the bytes were given under.
        name: String,
    },
    /// A parsed transcript session could not be loaded into the store.
    #[error(transparent)]
    Load(#[from] LoadError),
}
