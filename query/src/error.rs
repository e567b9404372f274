//! Typed errors, one enum per operation, each with a human `Display`.
//!
//! tantivy's errors are classified once, here, into I/O (the disk said no), `Corrupted`
//! (index files are not what was written: the index is derived, so the fix is a rebuild),
//! `Busy` (another process holds the index writer) and the rest; journal failures keep the
//! engine's `ReadError`, so a caller can tell a damaged journal from a damaged index.

use std::io;
use std::path::PathBuf;

use annal_engine::{ErrorKind, ReadError};
use tantivy::directory::error::LockError;
use tantivy::TantivyError;

/// Opening, building or closing a search index failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// The index folder could not be created, read or written.
    #[error("cannot use the search index at {path}: {source}")]
    Io {
        /// The index folder.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// The index files are damaged. The index is derived from the journal: `annal reindex`
    /// (or deleting the folder) rebuilds it.
    #[error("the search index at {path} is damaged ({reason}); rebuild it with `annal reindex`")]
    Corrupted {
        /// The index folder.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Something that is not a folder (a file) is where the index folder goes. It is not the
    /// index, so it is left alone: moving or deleting it lets the index be rebuilt there.
    #[error(
        "the search index folder {path} is not a folder; move or delete it, and the index is rebuilt \
         from the journal"
    )]
    NotAFolder {
        /// The index folder's path.
        path: PathBuf,
    },
    /// Another process holds the index writer.
    #[error("another process is writing the search index at {path}; try again when it is closed")]
    Busy {
        /// The index folder.
        path: PathBuf,
    },
    /// The store has no file (custom storage) and no index folder was given.
    #[error("the store has no file to put its search index beside; set IndexOptions::folder")]
    NoFolder,
    /// Reading the journal failed.
    #[error("cannot read the journal to index it: {0}")]
    Journal(#[from] ReadError),
    /// The indexer thread stopped after a failure.
    #[error("the indexer stopped: {reason}")]
    Stopped {
        /// Why.
        reason: String,
        /// The kind of the failure that stopped it (damage in the journal stops it as
        /// [`ErrorKind::Corrupted`]).
        cause: ErrorKind,
    },
    /// tantivy failed in a way that is neither I/O nor damage.
    #[error("the search index at {path} failed: {reason}")]
    Internal {
        /// The index folder.
        path: PathBuf,
        /// tantivy's message.
        reason: String,
    },
}

impl IndexError {
    /// Classifies a tantivy error for the index at `path`.
    pub(crate) fn tantivy(path: &std::path::Path, err: TantivyError) -> IndexError {
        let path = path.to_path_buf();
        match err {
            TantivyError::LockFailure(LockError::LockBusy, _) => IndexError::Busy { path },
            TantivyError::LockFailure(LockError::IoError(source), _) | TantivyError::IoError(source) => {
                IndexError::Io { path, source: io::Error::new(source.kind(), source.to_string()) }
            }
            TantivyError::DataCorruption(_)
            | TantivyError::IncompatibleIndex(_)
            | TantivyError::DeserializeError(_)
            | TantivyError::SchemaError(_) => IndexError::Corrupted { path, reason: one_line(&err) },
            TantivyError::OpenReadError(_)
            | TantivyError::OpenWriteError(_)
            | TantivyError::OpenDirectoryError(_) => {
                IndexError::Io { path, source: io::Error::other(one_line(&err)) }
            }
            other => IndexError::Internal { path, reason: one_line(&other) },
        }
    }

    /// Whether the index files are damaged or of another format (rebuilding fixes it).
    pub(crate) fn is_damage(&self) -> bool {
        matches!(self, IndexError::Corrupted { .. })
    }
}

impl IndexError {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            IndexError::Io { .. } | IndexError::NotAFolder { .. } => ErrorKind::Io,
            IndexError::Corrupted { .. } => ErrorKind::Corrupted,
            IndexError::Busy { .. } => ErrorKind::Busy,
            IndexError::NoFolder => ErrorKind::BadInput,
            IndexError::Journal(err) => err.kind(),
            IndexError::Stopped { cause, .. } => *cause,
            IndexError::Internal { .. } => ErrorKind::Internal,
        }
    }
}

/// tantivy's messages can span lines; ours are one.
pub(crate) fn one_line(err: &dyn std::fmt::Display) -> String {
    err.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A search failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The query is not valid query syntax.
    #[error("cannot parse the query {query:?}: {reason} (quote the text to search it as written, or use --literal)")]
    Syntax {
        /// The query as given.
        query: String,
        /// What is wrong, on one line.
        reason: String,
    },
    /// The query is longer than a search reads.
    #[error(
        "the query is {bytes} bytes long, over the limit of {limit_bytes}; search for a shorter part of it"
    )]
    QueryTooLong {
        /// The query's length in bytes.
        bytes: usize,
        /// The longest query a search reads.
        limit_bytes: usize,
    },
    /// The query nests groups and `NOT`s deeper than a search reads.
    #[error(
        "the query nests groups and NOTs {depth} deep, over the limit of {limit}; write it with fewer \
         levels (or search it as written with --literal)"
    )]
    QueryTooDeep {
        /// How deep it nests.
        depth: usize,
        /// The deepest a query may nest.
        limit: usize,
    },
    /// The query has nothing to search for.
    #[error("the query is empty: give words or identifiers to search for")]
    EmptyQuery,
    /// `session` names no session of the store.
    #[error("no session named {0:?}")]
    UnknownSession(String),
    /// A filter value is not valid.
    #[error("invalid filter: {0}")]
    InvalidFilter(String),
    /// Reading the journal failed.
    #[error(transparent)]
    Journal(#[from] ReadError),
    /// The index points at a record or block the journal does not have: the index is damaged
    /// or belongs to another store.
    #[error("the search index does not match the journal ({reason}); rebuild it with `annal reindex`")]
    Corrupted {
        /// What was missing.
        reason: String,
    },
    /// The index could not be read.
    #[error(transparent)]
    Index(#[from] IndexError),
}

/// Waiting until the index has caught up failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// The index did not catch up in time.
    #[error("the search index reached position {searchable} of {target} before the wait ended")]
    Timeout {
        /// Every position below this is searchable.
        searchable: u64,
        /// The position waited for.
        target: u64,
    },
    /// The indexer stopped after a failure.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// Reading the journal's end failed.
    #[error(transparent)]
    Journal(#[from] ReadError),
}

/// Fetching an original by id failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GetError {
    /// No record has this entryId.
    #[error("no entry {0:?} (ids look like ENTRY or ENTRY#BLOCK)")]
    UnknownEntry(String),
    /// The record has no block with this index.
    #[error("entry {entry:?} has {blocks} block(s), so there is no block #{block}")]
    UnknownBlock {
        /// The entryId.
        entry: String,
        /// The block asked for.
        block: usize,
        /// How many blocks the record has.
        blocks: usize,
    },
    /// The line range is empty or reversed.
    #[error("invalid line range {0}: lines count from 1, and A:B needs A <= B")]
    InvalidLines(String),
    /// Reading the journal failed.
    #[error(transparent)]
    Journal(#[from] ReadError),
}

impl SearchError {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            SearchError::Syntax { .. }
            | SearchError::QueryTooLong { .. }
            | SearchError::QueryTooDeep { .. }
            | SearchError::EmptyQuery
            | SearchError::InvalidFilter(_) => ErrorKind::BadInput,
            SearchError::UnknownSession(_) => ErrorKind::NotFound,
            SearchError::Journal(err) => err.kind(),
            SearchError::Corrupted { .. } => ErrorKind::Corrupted,
            SearchError::Index(err) => err.kind(),
        }
    }
}

impl WaitError {
    /// What kind of failure this is: a wait that ran out is [`ErrorKind::Busy`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            WaitError::Timeout { .. } => ErrorKind::Busy,
            WaitError::Index(err) => err.kind(),
            WaitError::Journal(err) => err.kind(),
        }
    }
}

impl GetError {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            GetError::UnknownEntry(_) | GetError::UnknownBlock { .. } => ErrorKind::NotFound,
            GetError::InvalidLines(_) => ErrorKind::BadInput,
            GetError::Journal(err) => err.kind(),
        }
    }
}
