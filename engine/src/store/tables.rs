//! The redb tables of a store, their key encodings, and the session row layout.
//!
//! docs/format.md is the reference for these; change both together, and bump
//! [`FORMAT_VERSION`] when a change is not readable by the previous version.

use redb::{ReadableTable, TableDefinition, WriteTransaction};

use crate::digest::DIGEST_LEN;
use crate::error::{AppendError, Failure};
use crate::hash::Hash;

/// The on-disk format this build writes and the newest it reads. Version 2 added the
/// durability log beside the file (`log_applied`, `store_id`) and zstd-compressed blobs;
/// version 3 the log shared by every process that has the store open, whose frames are part of
/// the store until a checkpoint folds them in (an older build would read redb without them). An
/// older store is upgraded when opened (docs/format.md).
pub const FORMAT_VERSION: u32 = 3;

/// `key → value` settings: `format_version`, `next_session_key`, `next_position`,
/// `log_applied` (u64 LE each) and `store_id` (16 bytes).
pub(crate) const META: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("meta");
/// Session name → [`SessionRow`].
pub(crate) const SESSIONS: TableDefinition<'_, &str, [u8; SESSION_ROW_LEN]> =
    TableDefinition::new("sessions");
/// Session key → session name.
pub(crate) const SESSION_NAMES: TableDefinition<'_, u64, &str> = TableDefinition::new("session_names");
/// (session key, sourceOrder) → the record: a tag byte, then its archive as it is or compressed
/// (packing.rs, codec.rs).
pub(crate) const JOURNAL: TableDefinition<'_, (u64, u64), &[u8]> = TableDefinition::new("journal");
/// (session key, sourceOrder) → digest (digest.rs).
pub(crate) const DIGESTS: TableDefinition<'_, (u64, u64), [u8; DIGEST_LEN]> = TableDefinition::new("digests");
/// entryId → (session key, sourceOrder) of the record that owns it.
pub(crate) const ENTRIES: TableDefinition<'_, &str, (u64, u64)> = TableDefinition::new("entries");
/// Store-wide position → (session key, sourceOrder): the order appends committed in.
pub(crate) const POSITIONS: TableDefinition<'_, u64, (u64, u64)> = TableDefinition::new("positions");
/// blake3 of a payload → the payload, stored once.
pub(crate) const BLOBS: TableDefinition<'_, [u8; 32], &[u8]> = TableDefinition::new("blobs");
/// Checkpoint key → the checkpoint's plan (checkpoint/codec.rs). Derived: a missing row is
/// re-derived from the receipt that names the key.
pub(crate) const CHECKPOINTS: TableDefinition<'_, [u8; 32], &[u8]> = TableDefinition::new("checkpoints");
/// (session key, sourceOrder) of a compaction receipt → the checkpoint key it names. Written by
/// every append of a record carrying receipt metadata, so an imported receipt is found too.
pub(crate) const RECEIPTS: TableDefinition<'_, (u64, u64), [u8; 32]> = TableDefinition::new("receipts");
/// Checkpoint key → the claim of a started, unresolved compaction (checkpoint/durable.rs).
pub(crate) const CLAIMS: TableDefinition<'_, [u8; 32], [u8; 40]> = TableDefinition::new("claims");

/// Cursor name → the reader's bytes (its own encoding; the store does not look inside).
pub(crate) const CURSORS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("cursors");

/// The longest cursor name and value the store accepts.
pub const CURSOR_BYTES_MAX: usize = 64 << 10;

pub(crate) const META_FORMAT_VERSION: &str = "format_version";
pub(crate) const META_NEXT_SESSION_KEY: &str = "next_session_key";
pub(crate) const META_NEXT_POSITION: &str = "next_position";
/// The sequence number of the last group of the durability log that the tables hold.
pub(crate) const META_LOG_APPLIED: &str = "log_applied";
/// 16 random bytes naming this store, written in its log's header and frame checks.
pub(crate) const META_STORE_ID: &str = "store_id";

/// Marks "no parent" in a session row.
pub(crate) const NO_PARENT: u64 = u64::MAX;

pub(crate) const SESSION_ROW_LEN: usize = 64;

/// A session's row: 64 bytes, integers little endian.
/// ```text
///  0 key       u64   the session's key in journal and digest keys
///  8 parent    u64   the parent's key, or u64::MAX
/// 16 fork_at   u64   records [0, fork_at) are read from the parent
/// 24 next      u64   the next sourceOrder (= visible record count, inherited ones included)
/// 32 head      [u8; 32]  chain hash of the last visible record (zero when empty)
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SessionRow {
    pub(crate) key: u64,
    pub(crate) parent: u64,
    pub(crate) fork_at: u64,
    pub(crate) next: u64,
    pub(crate) head: Hash,
}

impl SessionRow {
    pub(crate) fn encode(&self) -> [u8; SESSION_ROW_LEN] {
        let mut out = [0u8; SESSION_ROW_LEN];
        out[0..8].copy_from_slice(&self.key.to_le_bytes());
        out[8..16].copy_from_slice(&self.parent.to_le_bytes());
        out[16..24].copy_from_slice(&self.fork_at.to_le_bytes());
        out[24..32].copy_from_slice(&self.next.to_le_bytes());
        out[32..64].copy_from_slice(&self.head);
        out
    }

    pub(crate) fn decode(bytes: &[u8; SESSION_ROW_LEN]) -> SessionRow {
        let u64_at = |at: usize| {
            let mut raw = [0u8; 8];
            raw.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(raw)
        };
        let mut head = [0u8; 32];
        head.copy_from_slice(&bytes[32..64]);
        SessionRow { key: u64_at(0), parent: u64_at(8), fork_at: u64_at(16), next: u64_at(24), head }
    }

    pub(crate) fn parent_key(&self) -> Option<u64> {
        (self.parent != NO_PARENT).then_some(self.parent)
    }
}

pub(crate) fn decode_u64(bytes: &[u8]) -> Result<u64, Failure> {
    let raw: [u8; 8] = bytes
        .try_into()
        .map_err(|_| Failure::Corrupted(format!("meta value of {} bytes, expected 8", bytes.len())))?;
    Ok(u64::from_le_bytes(raw))
}

/// Reads a u64 counter from the meta table (0 when absent).
pub(crate) fn meta_u64(
    table: &impl ReadableTable<&'static str, &'static [u8]>,
    key: &str,
) -> Result<u64, Failure> {
    match table.get(key)? {
        Some(value) => decode_u64(value.value()),
        None => Ok(0),
    }
}

/// Sets or removes cursors inside `txn` (made by the first write).
pub(crate) fn write_cursors(
    txn: &WriteTransaction,
    rows: &[(String, Option<Vec<u8>>)],
) -> Result<(), Failure> {
    let mut table = txn.open_table(CURSORS)?;
    for (name, value) in rows {
        match value {
            Some(bytes) => drop(table.insert(name.as_str(), bytes.as_slice())?),
            None => drop(table.remove(name.as_str())?),
        }
    }
    Ok(())
}

/// Refuses a cursor whose name or value is over [`CURSOR_BYTES_MAX`].
pub(crate) fn check_cursors(rows: &[(String, Option<Vec<u8>>)]) -> Result<(), AppendError> {
    let over = rows.iter().find(|(name, value)| {
        name.len() > CURSOR_BYTES_MAX || value.as_ref().is_some_and(|v| v.len() > CURSOR_BYTES_MAX)
    });
    match over {
        Some((name, _)) => Err(AppendError::InvalidRecord {
            session: String::new(),
            entry_id: name.chars().take(80).collect(),
            reason: format!("a cursor's name or value is over {CURSOR_BYTES_MAX} bytes"),
            index: 0,
        }),
        None => Ok(()),
    }
}
