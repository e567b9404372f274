//! Typed errors, one enum per operation, each with a human `Display` naming what and where.
//!
//! Storage failures are split at the boundary into I/O (the disk said no) and `Corrupted`
//! (bytes on disk are not what the store wrote), so a caller can tell a full disk from damage.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use crate::kind::ErrorKind;

mod append;

pub use append::AppendError;

/// A storage failure, classified once where redb's error enters the engine.
#[derive(Debug)]
pub(crate) enum Failure {
    Io(io::Error),
    Corrupted(String),
}

impl From<io::Error> for Failure {
    fn from(err: io::Error) -> Failure {
        Failure::Io(err)
    }
}

impl From<redb::Error> for Failure {
    fn from(err: redb::Error) -> Failure {
        match err {
            redb::Error::Corrupted(reason) => Failure::Corrupted(reason),
            redb::Error::Io(err) => Failure::Io(err),
            other => Failure::Io(io::Error::other(other.to_string())),
        }
    }
}

macro_rules! failure_from_redb {
    ($($ty:ty),*) => {$(
        impl From<$ty> for Failure {
            fn from(err: $ty) -> Failure {
                Failure::from(redb::Error::from(err))
            }
        }
    )*};
}
failure_from_redb!(
    redb::StorageError,
    redb::TableError,
    redb::TransactionError,
    redb::CommitError,
    redb::DatabaseError
);

/// Opening a store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The file could not be created, read or locked.
    #[error("cannot open store {path}: {source}")]
    Io {
        /// The store file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// The store file can be read but not written by this process: it lacks write permission
    /// for this user, or lies on a read-only file system. Opening a store always opens it for
    /// writing, so nothing was read.
    #[error(
        "store {path} cannot be opened for writing ({source}): the file or its file system is \
         read-only; annal needs write access to change it (commands that only read it work)"
    )]
    NotWritable {
        /// The store file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// Another process holds the store in a mode that excludes this one.
    #[error("store {path} is already open by another process that excludes sharing ({detail})")]
    AlreadyOpen {
        /// The store file.
        path: PathBuf,
        /// Why the lock was refused.
        detail: String,
    },
    /// The store was written by a newer annal.
    #[error(
        "store {path} has format version {found}, newer than the {supported} this annal reads; upgrade annal"
    )]
    NewerFormat {
        /// The store file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
    /// The file is a database, but not an annal store.
    #[error("{path} is not an annal store: {reason}")]
    NotAStore {
        /// The file.
        path: PathBuf,
        /// What is missing or wrong.
        reason: String,
    },
    /// The file is damaged.
    #[error("store {path} is corrupted: {reason}")]
    Corrupted {
        /// The store file.
        path: PathBuf,
        /// What was found.
        reason: String,
    },
}

/// Forking a session failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ForkError {
    /// No session by that name.
    #[error("no session named {0:?}")]
    UnknownSession(String),
    /// The fork point is past the parent's end.
    #[error("cannot fork {session:?} at {at}: it has {len} records")]
    OutOfRange {
        /// The parent.
        session: String,
        /// The requested fork point.
        at: u64,
        /// The parent's record count.
        len: u64,
    },
    /// The new name is taken.
    #[error("a session named {0:?} already exists")]
    NameTaken(String),
    /// The new name is empty or too long.
    #[error("invalid session name {name:?}: {reason}")]
    InvalidSessionName {
        /// The name given.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// Another process held the write lock for longer than the configured wait.
    #[error("store is busy: another process held the write lock for {waited:?}")]
    Busy {
        /// How long this call waited.
        waited: Duration,
    },
    /// An earlier I/O error on the write path; the store refuses writes until reopened.
    #[error("a previous I/O error stopped writes to this store; close and reopen it")]
    Poisoned,
    /// The write failed in the storage layer.
    #[error("fork failed: {source}")]
    Io {
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// Stored bytes are damaged.
    #[error("store is corrupted: {reason}")]
    Corrupted {
        /// What was found.
        reason: String,
    },
    /// The store was closed.
    #[error("the store is closed")]
    Closed,
    /// The store was opened read-only ([`Store::open_read_only`](crate::Store::open_read_only)).
    #[error("the store was opened read-only")]
    ReadOnly,
}

/// Reading failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// No session by that name.
    #[error("no session named {0:?}")]
    UnknownSession(String),
    /// No record with that entryId.
    #[error("no entry with id {0:?}")]
    UnknownEntry(String),
    /// Stored bytes are damaged.
    #[error("store is corrupted: {reason}")]
    Corrupted {
        /// Where and what.
        reason: String,
    },
    /// The read failed in the storage layer.
    #[error("read failed: {source}")]
    Io {
        /// What the system said.
        #[source]
        source: io::Error,
    },
}

/// A read inside a write (deciding an append against a snapshot) fails the write as storage
/// does: I/O stays I/O, anything else read is damage.
impl From<ReadError> for Failure {
    fn from(err: ReadError) -> Failure {
        match err {
            ReadError::Io { source } => Failure::Io(source),
            ReadError::Corrupted { reason } => Failure::Corrupted(reason),
            other => Failure::Corrupted(other.to_string()),
        }
    }
}

impl From<Failure> for ReadError {
    fn from(failure: Failure) -> ReadError {
        match failure {
            Failure::Io(source) => ReadError::Io { source },
            Failure::Corrupted(reason) => ReadError::Corrupted { reason },
        }
    }
}

impl ReadError {
    /// A storage layer's error met while reading, classified as I/O or damage. Not a `From`
    /// impl: that would put the storage library's types in this public type's API.
    pub(crate) fn storage(err: impl Into<Failure>) -> ReadError {
        ReadError::from(err.into())
    }
}

/// Closing a store failed; what was acknowledged before is durable regardless.
#[derive(Debug, thiserror::Error)]
#[error("closing the store failed: {source}")]
pub struct CloseError {
    #[source]
    pub(crate) source: io::Error,
}

impl OpenError {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            OpenError::Io { .. } => ErrorKind::Io,
            OpenError::NotWritable { .. } => ErrorKind::ReadOnly,
            OpenError::AlreadyOpen { .. } => ErrorKind::Busy,
            OpenError::NewerFormat { .. } => ErrorKind::Unsupported,
            OpenError::NotAStore { .. } => ErrorKind::BadInput,
            OpenError::Corrupted { .. } => ErrorKind::Corrupted,
        }
    }
}
impl ForkError {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ForkError::UnknownSession(_) => ErrorKind::NotFound,
            ForkError::OutOfRange { .. } | ForkError::NameTaken(_) | ForkError::InvalidSessionName { .. } => {
                ErrorKind::BadInput
            }
            ForkError::Busy { .. } => ErrorKind::Busy,
            ForkError::Poisoned => ErrorKind::Poisoned,
            ForkError::Io { .. } => ErrorKind::Io,
            ForkError::Corrupted { .. } => ErrorKind::Corrupted,
            ForkError::Closed => ErrorKind::Closed,
            ForkError::ReadOnly => ErrorKind::ReadOnly,
        }
    }
}

impl ReadError {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ReadError::UnknownSession(_) | ReadError::UnknownEntry(_) => ErrorKind::NotFound,
            ReadError::Corrupted { .. } => ErrorKind::Corrupted,
            ReadError::Io { .. } => ErrorKind::Io,
        }
    }
}

impl CloseError {
    /// What kind of failure this is: always [`ErrorKind::Io`].
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::Io
    }
}
