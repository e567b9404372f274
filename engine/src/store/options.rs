//! Store configuration: named limits, the blob threshold, the token counter, lock waits.

use std::sync::Arc;
use std::time::Duration;

use crate::tokens::{CharsPerFour, TokenCounter};

/// Named limits; an append that breaks one fails with
/// [`AppendError::LimitExceeded`](crate::AppendError::LimitExceeded) and stores nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest record, counting its strings, payloads and metadata.
    pub record_size_bytes_max: usize,
    /// The most records in one append.
    pub batch_records_max: usize,
    /// The largest append, in bytes.
    pub batch_size_bytes_max: usize,
    /// The most blocks in one record.
    pub blocks_per_record_max: usize,
    /// The longest entryId.
    pub entry_id_bytes_max: usize,
    /// The longest session name.
    pub session_name_bytes_max: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            // Large enough for a 50 MB base64 screenshot in a tool result, small enough that one
            // record cannot exhaust memory on the way in.
            record_size_bytes_max: 256 << 20,
            batch_records_max: 100_000,
            batch_size_bytes_max: 1 << 30,
            blocks_per_record_max: 10_000,
            entry_id_bytes_max: 512,
            session_name_bytes_max: 1024,
        }
    }
}

/// Whether other processes may open the store while this one has it open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sharing {
    /// Any number of processes read and write the store at once. Their appends go to one log
    /// shared by all of them beside the store file, one sync each (a group of concurrent
    /// appends of one process shares it), and every process's reads see them at once; a
    /// checkpoint folds the log into the store file (docs/format.md).
    #[default]
    Processes,
    /// This process alone: another process's open fails with `OpenError::AlreadyOpen`. Appends
    /// go to the same log as a shared store's, one sync a group, which only this process
    /// reads; at close it is folded into the store file and removed, so the store is its one
    /// file again. The choice for an embedder that owns its store.
    Exclusive,
}

/// How a store is opened.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// Named limits on appends.
    pub limits: Limits,
    /// Text payloads longer than this go to the blob table, stored once by hash; the journal
    /// keeps a reference. Keeps journal pages dense for the reads projections make.
    pub blob_threshold_bytes: usize,
    /// Estimates tokens at append time (stored in the digests).
    pub token_counter: Arc<dyn TokenCounter>,
    /// How long an append waits for another process's write transaction before `Busy`.
    pub write_wait: Duration,
    /// redb's page cache.
    pub cache_size_bytes: usize,
    /// Whether other processes may have the store open at the same time.
    pub sharing: Sharing,
    /// The log beside the store file: its size, filled with zeros when made, so writing a frame
    /// never changes the file's length. A group of appends is durable after one sync of it, and
    /// the store file is synced when the log is full, when the store is idle and, opened alone,
    /// when it closes. The log is at least 64 KiB.
    pub log_size_bytes: usize,
    /// How long the store stays idle before the log's groups are checkpointed into the store
    /// file, so a reopen after a crash replays little; `None` checkpoints only when the log is
    /// full and at close (what tests that count syncs need).
    pub checkpoint_idle: Option<Duration>,
}

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            limits: Limits::default(),
            blob_threshold_bytes: 16 << 10,
            token_counter: Arc::new(CharsPerFour),
            write_wait: Duration::from_secs(10),
            cache_size_bytes: 256 << 20,
            sharing: Sharing::Processes,
            log_size_bytes: 4 << 20,
            checkpoint_idle: Some(Duration::from_millis(500)),
        }
    }
}
