//! Typed errors, one enum per operation, each with a human `Display` naming what and where.
//!
//! Storage failures are split at the boundary into I/O (the disk said no) and `Corrupted`
//! (bytes on disk are not what the store wrote), so a caller can tell a full disk from damage.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use crate::kind::ErrorKind;

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

/// Appending records failed. Nothing of the failed batch is stored.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppendError {
    /// `expected_next` did not match: another writer appended first.
    #[error(
        "conflict: session {session:?} has {actual} records, so its next sourceOrder is {actual}, not \
         {expected}; nothing was appended"
    )]
    Conflict {
        /// The session.
        session: String,
        /// What the caller expected.
        expected: u64,
        /// The session's actual next sourceOrder.
        actual: u64,
    },
    /// A session the append was guarded by no longer has the length the caller read: another
    /// writer changed it first (see
    /// [`Store::append_portable_if_unchanged`](crate::Store::append_portable_if_unchanged)).
    #[error(
        "conflict: session {session:?} changed since it was read ({} then, {} now); nothing was \
         appended",
        length_text(*.expected),
        length_text(*.actual)
    )]
    Changed {
        /// The session that changed.
        session: String,
        /// The length the caller read of it (None: it did not exist).
        expected: Option<u64>,
        /// Its length now (None: it does not exist).
        actual: Option<u64>,
    },
    /// The entryId is already stored with different content.
    #[error("session {session:?}: entry {entry_id:?} already exists with different content (sourceOrder {source_order})")]
    EntryMismatch {
        /// The session appended to.
        session: String,
        /// The duplicate id.
        entry_id: String,
        /// Where the stored entry is.
        source_order: u64,
    },
    /// The same entryId appears twice in one batch with different content.
    #[error("session {session:?}: entry {entry_id:?} appears twice in one batch with different content (records {first} and {again} of the batch)")]
    DuplicateInBatch {
        /// The session appended to.
        session: String,
        /// The repeated id.
        entry_id: String,
        /// Its first index in the batch.
        first: u64,
        /// The index where it appears again.
        again: u64,
    },
    /// The entryId belongs to a record another session holds.
    #[error("entry {entry_id:?} already belongs to session {owner:?}, not {session:?}")]
    EntryInOtherSession {
        /// The session appended to.
        session: String,
        /// The duplicate id.
        entry_id: String,
        /// The session that holds it.
        owner: String,
    },
    /// A record's claimed sourceOrder, hash or prevHash (see [`Claim`](crate::Claim)) differs
    /// from what the append would store; nothing of the batch is stored.
    #[error("record {index} of the batch claims {field} {claimed}, but it would be {actual}")]
    ClaimMismatch {
        /// The record's index in the batch.
        index: u64,
        /// `sourceOrder`, `hash` or `prevHash`.
        field: &'static str,
        /// What the caller claimed.
        claimed: String,
        /// What the store holds or would hold.
        actual: String,
        /// The session's next sourceOrder before the append (its length).
        next: u64,
    },
    /// A record, batch or name broke a named limit (see [`Limits`](crate::Limits)).
    #[error("session {session:?}: {what} is {actual}, over the limit of {limit}")]
    LimitExceeded {
        /// The session.
        session: String,
        /// Which limit, with the entry it applies to.
        what: String,
        /// The offending size.
        actual: u64,
        /// The limit.
        limit: u64,
    },
    /// A record is malformed (empty entryId, bad timestamp, a blob without data, ...).
    #[error("session {session:?}: entry {entry_id:?}: {reason}")]
    InvalidRecord {
        /// The session.
        session: String,
        /// The entry.
        entry_id: String,
        /// What is wrong.
        reason: String,
        /// The record's index in the batch.
        index: u64,
    },
    /// The session name is empty or too long.
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
    /// The write failed in the storage layer. The store now refuses writes until reopened.
    #[error("write failed: {source}")]
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

/// A session's length as [`AppendError::Changed`] says it: its records, or that it is none.
fn length_text(length: Option<u64>) -> String {
    match length {
        Some(records) => format!("{records} records"),
        None => "no session".to_owned(),
    }
}

impl AppendError {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            AppendError::Conflict { .. } | AppendError::Changed { .. } => ErrorKind::Conflict,
            AppendError::EntryMismatch { .. }
            | AppendError::DuplicateInBatch { .. }
            | AppendError::EntryInOtherSession { .. }
            | AppendError::ClaimMismatch { .. }
            | AppendError::LimitExceeded { .. }
            | AppendError::InvalidRecord { .. }
            | AppendError::InvalidSessionName { .. } => ErrorKind::BadInput,
            AppendError::Busy { .. } => ErrorKind::Busy,
            AppendError::Poisoned => ErrorKind::Poisoned,
            AppendError::Io { .. } => ErrorKind::Io,
            AppendError::Corrupted { .. } => ErrorKind::Corrupted,
            AppendError::Closed => ErrorKind::Closed,
            AppendError::ReadOnly => ErrorKind::ReadOnly,
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
