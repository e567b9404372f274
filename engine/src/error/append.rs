//! The errors of an append: [`AppendError`], what each says and its kind.

use std::io;
use std::time::Duration;

use crate::kind::ErrorKind;

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
