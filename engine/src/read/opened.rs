//! A snapshot's redb tables, each opened at its first use.
//!
//! Opening a table is a lookup in redb's table of tables, and every shared append and every
//! search takes a snapshot: each opens only the tables it looks in.

use std::sync::OnceLock;

use redb::{Key, ReadOnlyTable, ReadTransaction, TableDefinition, Value};

use crate::digest::DIGEST_LEN;
use crate::error::ReadError;
use crate::tables::{
    BLOBS, DIGESTS, ENTRIES, JOURNAL, META, POSITIONS, SESSIONS, SESSION_NAMES, SESSION_ROW_LEN,
};

type Table<K, V> = OnceLock<ReadOnlyTable<K, V>>;

/// The read transaction of a snapshot and the tables opened from it so far.
pub(super) struct Opened {
    txn: ReadTransaction,
    meta: Table<&'static str, &'static [u8]>,
    sessions: Table<&'static str, [u8; SESSION_ROW_LEN]>,
    names: Table<u64, &'static str>,
    journal: Table<(u64, u64), &'static [u8]>,
    digests: Table<(u64, u64), [u8; DIGEST_LEN]>,
    entries: Table<&'static str, (u64, u64)>,
    positions: Table<u64, (u64, u64)>,
    blobs: Table<[u8; 32], &'static [u8]>,
}

/// The table in `cell`, opened from `txn` the first time.
fn opened<'c, K: Key + 'static, V: Value + 'static>(
    cell: &'c Table<K, V>,
    txn: &ReadTransaction,
    definition: TableDefinition<'static, K, V>,
) -> Result<&'c ReadOnlyTable<K, V>, ReadError> {
    if let Some(table) = cell.get() {
        return Ok(table);
    }
    let table = txn.open_table(definition).map_err(ReadError::storage)?;
    // Another thread may have opened it meanwhile: either copy reads the same transaction.
    Ok(cell.get_or_init(|| table))
}

impl Opened {
    pub(super) fn new(txn: ReadTransaction) -> Opened {
        Opened {
            txn,
            meta: OnceLock::new(),
            sessions: OnceLock::new(),
            names: OnceLock::new(),
            journal: OnceLock::new(),
            digests: OnceLock::new(),
            entries: OnceLock::new(),
            positions: OnceLock::new(),
            blobs: OnceLock::new(),
        }
    }

    pub(super) fn meta(&self) -> Result<&ReadOnlyTable<&'static str, &'static [u8]>, ReadError> {
        opened(&self.meta, &self.txn, META)
    }

    pub(super) fn sessions(&self) -> Result<&ReadOnlyTable<&'static str, [u8; SESSION_ROW_LEN]>, ReadError> {
        opened(&self.sessions, &self.txn, SESSIONS)
    }

    pub(super) fn names(&self) -> Result<&ReadOnlyTable<u64, &'static str>, ReadError> {
        opened(&self.names, &self.txn, SESSION_NAMES)
    }

    pub(super) fn journal(&self) -> Result<&ReadOnlyTable<(u64, u64), &'static [u8]>, ReadError> {
        opened(&self.journal, &self.txn, JOURNAL)
    }

    pub(super) fn digests(&self) -> Result<&ReadOnlyTable<(u64, u64), [u8; DIGEST_LEN]>, ReadError> {
        opened(&self.digests, &self.txn, DIGESTS)
    }

    pub(super) fn entries(&self) -> Result<&ReadOnlyTable<&'static str, (u64, u64)>, ReadError> {
        opened(&self.entries, &self.txn, ENTRIES)
    }

    pub(super) fn positions(&self) -> Result<&ReadOnlyTable<u64, (u64, u64)>, ReadError> {
        opened(&self.positions, &self.txn, POSITIONS)
    }

    pub(super) fn blobs(&self) -> Result<&ReadOnlyTable<[u8; 32], &'static [u8]>, ReadError> {
        opened(&self.blobs, &self.txn, BLOBS)
    }
}
