//! What reading a source can fail with: one clear line naming the file or database and why.

use std::io;
use std::path::PathBuf;

/// Reading one source file, folder or database failed. Nothing is stored from a failed read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The file system said no.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The agent holds a lock on its database longer than we wait.
    #[error("{path} is locked by its agent (busy for over {waited_ms} ms); it is read at the next sync")]
    Locked {
        /// The database.
        path: PathBuf,
        /// How long we waited.
        waited_ms: u64,
    },
    /// The database is not laid out as this version of annal knows.
    #[error("{path}: unknown schema: expected table {table:?} {detail}")]
    Schema {
        /// The database.
        path: PathBuf,
        /// The table expected.
        table: String,
        /// What was missing or different (a column, say).
        detail: String,
    },
    /// SQLite refused otherwise (not a database, damaged).
    #[error("{path}: {message}")]
    Database {
        /// The database.
        path: PathBuf,
        /// SQLite's message.
        message: String,
    },
    /// A file in a source's place is not in the format its agent writes.
    #[error("{path}: {message}; nothing was stored")]
    Unrecognised {
        /// The file.
        path: PathBuf,
        /// What it looked like.
        message: String,
    },
    /// A folder links back into itself.
    #[error("{path}: symbolic link loop")]
    SymlinkLoop {
        /// The link.
        path: PathBuf,
    },
}

impl SourceError {
    /// What kind of failure this is. A source's failure is reported in a sync's report and
    /// read again next time; it never fails the sync.
    pub fn kind(&self) -> annal_engine::ErrorKind {
        use annal_engine::ErrorKind;
        match self {
            SourceError::Io { .. } => ErrorKind::Io,
            SourceError::Locked { .. } => ErrorKind::Busy,
            SourceError::Schema { .. } => ErrorKind::Unsupported,
            SourceError::Database { .. }
            | SourceError::Unrecognised { .. }
            | SourceError::SymlinkLoop { .. } => ErrorKind::BadInput,
        }
    }
}
