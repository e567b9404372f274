//! annal-engine: the durable, append-only journal of agent sessions.
//!
//! A [`Store`] is one redb file. Every record of a session (user text, assistant text, tool
//! calls and results) is appended once with [`Store::append`] and never rewritten; reads go
//! through a [`Snapshot`], which borrows record text in place from the stored bytes. Sessions
//! fork in O(1) with [`Store::fork`], and [`Store::verify`] proves each session's hash chain.
//!
//! ```
//! use annal_engine::{Record, Role, Store, StoreOptions};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let store = Store::open(dir.path().join("annal.redb"), StoreOptions::default())?;
//! let receipt = store.append("demo", Some(0), vec![Record::text("e1", Role::User, "hello")])?;
//! assert_eq!(receipt.source_orders, vec![0]);
//! let snapshot = store.snapshot()?;
//! for guard in snapshot.records("demo", 0..u64::MAX)? {
//!     let guard = guard?;
//!     let record = guard.view()?;
//!     assert_eq!(record.entry_id(), "e1");
//! }
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod checkpoint;
mod error;
mod kind;
mod log;
mod model;
mod project;
mod read;
mod store;
mod write;

// The groups' modules, named from the root so that each keeps one short path.
use crate::log::{redo, replay};
use crate::model::{canonical, codec, digest, hash, packing, record, target, time, tokens, view};
use crate::read::{portable, verify};
use crate::store::{open, options, storage, sync, tables, upgrade};
use crate::write::{apply, claim, fork, group, json_string, prepare, receipts, reply, watermark, writer};

pub use crate::apply::AppendReceipt;
#[cfg(loom)]
#[doc(hidden)]
pub use crate::checkpoint::loom_model;
pub use crate::checkpoint::{
    CompactError, CompactOptions, CompactOutcome, CompactStatus, SummarizeError, Summarizer, SummaryRequest,
    LEASE_DEFAULT, SUMMARIZER_TIMEOUT_DEFAULT,
};
pub use crate::claim::Claim;
pub use crate::digest::{flags as digest_flags, Digest};
pub use crate::error::{AppendError, CloseError, ForkError, OpenError, ReadError};
pub use crate::hash::{hash_from_hex, hash_to_hex, Hash, ZERO_HASH};
pub use crate::kind::ErrorKind;
#[cfg(any(loom, test))]
#[doc(hidden)]
pub use crate::log::loom_model as shared_loom_model;
pub use crate::log::ChangeMark;
pub use crate::open::log_path;
pub use crate::options::{Limits, Sharing, StoreOptions};
pub use crate::portable::{
    canonical_input, canonical_json, is_rfc3339, portable_json, record_from_json, record_to_json,
    unplaced_json, PortableError, PortableRecord,
};
pub use crate::prepare::chain_records;
pub use crate::project::{
    checkpoint_key, projection_hash, stats_json, write_messages_json, Algorithm, Budget, BudgetError,
    KeptCounts, Message, MessageBlock, Omission, OmissionReason, OmittedCounts, OmittedEntry, PartTokens,
    PreparedProjection, ProjectError, ProjectOptions, Projection, ProjectionSnapshot, ProjectionStats,
    ViewSource, CAPACITY_TOKENS_MIN, HISTORY_TOKENS_MAX,
};
pub use crate::read::{EntryLocation, PositionEntry, RecordGuard, Records, SessionInfo, Snapshot, TableSize};
pub use crate::receipts::RECEIPT_META_KEY;
pub use crate::record::{Block, Record, Role};
#[cfg(loom)]
#[doc(hidden)]
pub use crate::reply::loom_model as reply_loom_model;
pub use crate::storage::StorageFile;
pub use crate::store::{CommitFeed, Store};
pub use crate::tables::CURSOR_BYTES_MAX;
pub use crate::tables::FORMAT_VERSION;
pub use crate::target::{derive_target, is_priority_target};
pub use crate::time::{rfc3339_from_millis, rfc3339_from_seconds};
pub use crate::tokens::{CharsPerFour, TokenCounter};
/// The fuzz target of the record codec reads bytes through this (the `fuzzing` feature).
#[cfg(feature = "fuzzing")]
pub use crate::verify::check_record_bytes;
pub use crate::verify::{Problem, VerifyReport};
pub use crate::view::{BlockView, Payload, RecordView};
pub use crate::watermark::Watermark;
