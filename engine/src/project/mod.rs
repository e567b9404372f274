//! Projections: the deterministic view of a session for the next model request (why it is
//! built this way: docs/design.md, "Projections").
//!
//! Planning runs over the digests only (`outline`, `tail`, `history`, `evidence`); `resolve`
//! settles what digests cannot know by reading the few records involved; `render` borrows the
//! text of the records it shows from one read transaction. `view` picks what the next request
//! is: a committed checkpoint plus every later record, or a fresh derivation.
//! docs/projection.md describes the algorithm, its constants and the output shape.

mod budget;
mod cache;
mod current;
mod evidence;
mod history;
mod item;
mod key;
mod loaded;
mod message;
mod omitted;
mod outline;
mod plan;
mod receipt;
mod render;
mod resolve;
mod source;
mod stats;
mod stored;
mod tail;
mod text;
mod verbatim;
mod view;

use std::io::{self, Write};

pub use self::budget::{Algorithm, Budget, BudgetError, CAPACITY_TOKENS_MIN, HISTORY_TOKENS_MAX};
pub use self::key::checkpoint_key;
pub use self::message::{projection_hash, write_messages_json, Message, MessageBlock};
pub use self::omitted::{Omission, OmissionReason, OmittedEntry};
pub use self::source::ProjectionSnapshot;
pub use self::stats::{stats_json, KeptCounts, OmittedCounts, PartTokens, ProjectionStats};
pub use self::view::PreparedProjection;

pub(crate) use self::current::{checkpoint_at, read_receipt, Current};
pub(crate) use self::history::Fate;
pub(crate) use self::outline::Outline;
pub(crate) use self::plan::{BlockCut, Plan, RowRef, UserCut};
pub(crate) use self::receipt::{receipt_record, receipt_summary_owned, ReceiptBody, ReceiptInfo};
pub(crate) use self::resolve::{derive, DeriveInput};
pub(crate) use self::stored::encode_plan;

use crate::error::ReadError;
use crate::hash::{hash_to_hex, Hash};

/// What to project and under which budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProjectOptions {
    /// The token budget.
    pub budget: Budget,
    /// The algorithm a compaction commits (a view shows whichever checkpoint is current).
    pub algorithm: Algorithm,
}

impl ProjectOptions {
    /// `deterministic-v1` under `budget`.
    pub fn new(budget: Budget) -> ProjectOptions {
        ProjectOptions { budget, algorithm: Algorithm::DeterministicV1 }
    }
}

/// Where a view comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewSource {
    /// Every record verbatim: no checkpoint applies and the session fits under the trigger.
    Live,
    /// Derived from the originals now: no checkpoint applies and the session is over the
    /// trigger. Compacting commits exactly this, so later requests keep its prefix.
    Derived,
    /// A committed checkpoint plus every record after it, verbatim.
    Checkpoint {
        /// The checkpoint key.
        key: Hash,
        /// The sourceOrder of the receipt that made it current.
        receipt: u64,
    },
}

/// A projection: messages for the next model request, their hash, and what they keep and omit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Projection<'a> {
    /// The algorithm whose output this is.
    pub algorithm: Algorithm,
    /// blake3 of the messages' canonical JSON (see [`projection_hash`]).
    pub hash: Hash,
    /// Provider-neutral messages, with no call lacking its result and no result lacking its call.
    pub messages: Vec<Message<'a>>,
    /// Kept and omitted counts, tokens per part.
    pub stats: ProjectionStats,
    /// What the view leaves out or cuts, in sourceOrder, naming each original.
    pub omissions: Vec<Omission>,
    /// The budget it was asked for.
    pub budget: Budget,
    /// Checkpoint, derivation or live records.
    pub source: ViewSource,
    /// Whether compacting now would change the view: it is derived (nothing committed keeps its
    /// prefix stable) or it has grown past the trigger.
    pub compaction_due: bool,
    /// A retired algorithm version the newest checkpoint was written with (it is not used; the
    /// next compaction re-covers it).
    pub retired_checkpoint: Option<String>,
}

impl Projection<'_> {
    /// A copy that owns its text.
    pub fn into_owned(self) -> Projection<'static> {
        Projection {
            algorithm: self.algorithm,
            hash: self.hash,
            messages: self.messages.into_iter().map(Message::into_owned).collect(),
            stats: self.stats,
            omissions: self.omissions,
            budget: self.budget,
            source: self.source,
            compaction_due: self.compaction_due,
            retired_checkpoint: self.retired_checkpoint,
        }
    }

    /// The stats object of [`Projection::write_json`]: [`ProjectionStats::to_json`] plus the view's
    /// source, whether compaction is due, and the budget's numbers.
    pub(crate) fn stats_json(&self) -> serde_json::Value {
        let mut stats = stats_json(&self.stats);
        let b = &self.budget;
        let source = match self.source {
            ViewSource::Live => serde_json::json!({"kind": "live"}),
            ViewSource::Derived => serde_json::json!({"kind": "derived"}),
            ViewSource::Checkpoint { key, receipt } => {
                serde_json::json!({"kind": "checkpoint", "key": hash_to_hex(&key), "receipt": receipt})
            }
        };
        if let Some(object) = stats.as_object_mut() {
            object.insert("source".into(), source);
            object.insert("compactionDue".into(), self.compaction_due.into());
            object.insert("retiredCheckpoint".into(), self.retired_checkpoint.clone().into());
            object.insert(
                "budget".into(),
                serde_json::json!({
                    "windowTokens": b.window_tokens,
                    "maxOutputTokens": b.max_output_tokens,
                    "marginTokens": b.margin_tokens(),
                    "triggerTokens": b.trigger_tokens(),
                    "capacityTokens": b.capacity_tokens(),
                    "tailTokens": b.tail_tokens,
                    "evidenceTokens": b.evidence_tokens,
                    "historyTokens": b.history_tokens,
                    "summaryTokens": b.summary_tokens,
                }),
            );
        }
        stats
    }

    /// Writes `{"algorithmVersion","hash","messages","stats","omitted"}` as one line of JSON;
    /// `messages` are the canonical bytes the hash covers, `omitted` the [`Omission`]s.
    ///
    /// # Errors
    /// What `out` reports.
    pub fn write_json(&self, out: &mut impl Write) -> io::Result<()> {
        write!(
            out,
            "{{\"algorithmVersion\":\"{}\",\"hash\":\"{}\",\"messages\":",
            self.algorithm,
            hash_to_hex(&self.hash)
        )?;
        write_messages_json(out, &self.messages)?;
        out.write_all(b",\"stats\":")?;
        serde_json::to_writer(&mut *out, &self.stats_json()).map_err(io::Error::from)?;
        out.write_all(b",\"omitted\":")?;
        let omitted: Vec<serde_json::Value> = self.omissions.iter().map(Omission::to_json).collect();
        serde_json::to_writer(&mut *out, &omitted).map_err(io::Error::from)?;
        out.write_all(b"}")
    }
}

/// Projecting a session failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProjectError {
    /// No session by that name.
    #[error("no session named {0:?}")]
    UnknownSession(String),
    /// The budget cannot be planned for.
    #[error("invalid budget: {0}")]
    Budget(#[from] BudgetError),
    /// Even cut to the bone, the session does not fit the capacity (pathological records, such
    /// as one record with thousands of blocks, under a small window).
    #[error("session {session:?} does not fit: {tokens} tokens against a capacity of {capacity}")]
    DoesNotFit {
        /// The session.
        session: String,
        /// What the smallest plan measured.
        tokens: u64,
        /// The capacity.
        capacity: u64,
    },
    /// Stored bytes are damaged, or a stored plan names records the journal does not have.
    #[error("store is corrupted: {reason}")]
    Corrupted {
        /// What was found.
        reason: String,
    },
    /// A read failed in the storage layer.
    #[error("read failed: {source}")]
    Io {
        /// What the system said.
        #[source]
        source: io::Error,
    },
}

impl From<ReadError> for ProjectError {
    fn from(err: ReadError) -> ProjectError {
        match err {
            ReadError::UnknownSession(name) => ProjectError::UnknownSession(name),
            ReadError::UnknownEntry(id) => {
                ProjectError::Corrupted { reason: format!("entry {id:?} is named but not stored") }
            }
            ReadError::Corrupted { reason } => ProjectError::Corrupted { reason },
            ReadError::Io { source } => ProjectError::Io { source },
        }
    }
}

impl ProjectError {
    /// What kind of failure this is.
    pub fn kind(&self) -> crate::ErrorKind {
        use crate::ErrorKind;
        match self {
            ProjectError::UnknownSession(_) => ErrorKind::NotFound,
            ProjectError::Budget(err) => err.kind(),
            ProjectError::DoesNotFit { .. } => ErrorKind::BadInput,
            ProjectError::Corrupted { .. } => ErrorKind::Corrupted,
            ProjectError::Io { .. } => ErrorKind::Io,
        }
    }
}
