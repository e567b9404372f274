//! Compaction: committing a checkpoint (a projection plan and the receipt that makes it current)
//! under the claim protocol that keeps concurrent compactions of one key from both committing
//! (docs/projection.md, "Claims, leases and fencing"). What a checkpoint is, and how a view
//! reads one, is the projection layer's (`project/stored.rs`, `receipt.rs`, `current.rs`); this
//! layer only writes them.
//!
//! - `claims`: the claim/lease/fencing transitions and the in-memory registry (loom-checked);
//! - `durable`: the same transitions on the `claims` table, and commits, in the writer;
//! - `key`: claim owners and the lease clock;
//! - `summarize`: the summarizer trait and its timeout;
//! - `options`: what a compaction is asked and answers;
//! - `compact`: `Store::compact`.

mod claims;
mod compact;
mod durable;
mod key;
#[cfg(loom)]
pub mod loom_model;
mod options;
mod summarize;
mod writes;

use std::io;
use std::time::Duration;

pub use self::options::{CompactOptions, CompactOutcome, CompactStatus, LEASE_DEFAULT};
pub use self::summarize::{SummarizeError, Summarizer, SummaryRequest, SUMMARIZER_TIMEOUT_DEFAULT};

use crate::error::{AppendError, ReadError};
use crate::hash::{hash_to_hex, Hash};
use crate::project::{BudgetError, ProjectError};

/// Compacting a session failed. A summarizer's failure is never one of these: it makes the
/// compaction commit deterministic-v1 instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompactError {
    /// No session by that name.
    #[error("no session named {0:?}")]
    UnknownSession(String),
    /// The budget cannot be planned for.
    #[error("invalid budget: {0}")]
    Budget(BudgetError),
    /// Even cut to the bone, the session does not fit the capacity.
    #[error("session {session:?} does not fit: {tokens} tokens against a capacity of {capacity}")]
    DoesNotFit {
        /// The session.
        session: String,
        /// What the smallest plan measured.
        tokens: u64,
        /// The capacity.
        capacity: u64,
    },
    /// Another compaction holds the key and its lease has not expired.
    #[error(
        "session {session:?}: checkpoint {} is being compacted by another owner (claim {token}); its lease \
         runs {} s more (wait for it, or retry then)",
        &hash_to_hex(key)[..16],
        until_ms.saturating_sub(key::now_ms()).div_ceil(1000)
    )]
    Claimed {
        /// The session.
        session: String,
        /// The checkpoint key.
        key: Hash,
        /// The owner holding it.
        owner: [u8; 16],
        /// Its fencing token.
        token: u64,
        /// When its lease expires, in ms since the Unix epoch.
        until_ms: u64,
    },
    /// This compaction's claim was taken over after its lease expired: its work was discarded.
    #[error(
        "session {session:?}: checkpoint {} was taken over by another compaction after this one's lease ran \
         out (it held claim {token}, now {}); nothing was committed",
        &hash_to_hex(key)[..16],
        current.map_or_else(|| "committed".to_owned(), |c| format!("claim {c}"))
    )]
    Fenced {
        /// The session.
        session: String,
        /// The checkpoint key.
        key: Hash,
        /// The token this compaction held.
        token: u64,
        /// The current token, if the key is still claimed.
        current: Option<u64>,
    },
    /// The receipt could not be appended.
    #[error("the compaction receipt could not be appended: {0}")]
    Receipt(AppendError),
    /// Another process held the write lock for longer than the configured wait.
    #[error("store is busy: another process held the write lock for {waited:?}")]
    Busy {
        /// How long this call waited.
        waited: Duration,
    },
    /// An earlier I/O error on the write path; the store refuses writes until reopened.
    #[error("a previous I/O error stopped writes to this store; close and reopen it")]
    Poisoned,
    /// The store was closed.
    #[error("the store is closed")]
    Closed,
    /// Stored bytes are damaged.
    #[error("store is corrupted: {reason}")]
    Corrupted {
        /// What was found.
        reason: String,
    },
    /// A read or write failed in the storage layer.
    #[error("compaction failed: {source}")]
    Io {
        /// What the system said.
        #[source]
        source: io::Error,
    },
}

impl CompactError {
    /// What kind of failure this is.
    pub fn kind(&self) -> crate::ErrorKind {
        use crate::ErrorKind;
        match self {
            CompactError::UnknownSession(_) => ErrorKind::NotFound,
            CompactError::Budget(err) => err.kind(),
            CompactError::DoesNotFit { .. } => ErrorKind::BadInput,
            CompactError::Claimed { .. } | CompactError::Fenced { .. } | CompactError::Busy { .. } => {
                ErrorKind::Busy
            }
            CompactError::Receipt(err) => err.kind(),
            CompactError::Poisoned => ErrorKind::Poisoned,
            CompactError::Closed => ErrorKind::Closed,
            CompactError::Corrupted { .. } => ErrorKind::Corrupted,
            CompactError::Io { .. } => ErrorKind::Io,
        }
    }
}

impl From<ProjectError> for CompactError {
    fn from(err: ProjectError) -> CompactError {
        match err {
            ProjectError::UnknownSession(name) => CompactError::UnknownSession(name),
            ProjectError::Budget(err) => CompactError::Budget(err),
            ProjectError::DoesNotFit { session, tokens, capacity } => {
                CompactError::DoesNotFit { session, tokens, capacity }
            }
            ProjectError::Corrupted { reason } => CompactError::Corrupted { reason },
            ProjectError::Io { source } => CompactError::Io { source },
        }
    }
}

impl From<ReadError> for CompactError {
    fn from(err: ReadError) -> CompactError {
        CompactError::from(ProjectError::from(err))
    }
}
