//! [`Access`]: what deciding and writing an append needs of the journal's tables, and redb's
//! own tables inside a write transaction ([`Tables`]) as one; every insert there is made from
//! the redo form's encoding, the same one replay puts back.

use redb::ReadableTable;

use crate::digest::DIGEST_LEN;
use crate::error::Failure;
use crate::hash::Hash;
use crate::read::SessionLookup;
use crate::redo::{fixed, text, u64_of, unpair, Target};
use crate::tables::{meta_u64, SESSION_ROW_LEN};

use super::Tables;

/// What deciding and writing an append needs of the tables, whichever holds them.
pub(crate) trait Access: SessionLookup {
    /// The stored bytes of the record at `key` (a tag byte, then its archive).
    fn journal_value(&self, key: (u64, u64)) -> Result<Option<Vec<u8>>, Failure>;
    /// Where an entryId is stored.
    fn entry_at(&self, entry_id: &str) -> Result<Option<(u64, u64)>, Failure>;
    /// The digest stored at `key`.
    fn digest_at(&self, key: (u64, u64)) -> Result<Option<[u8; DIGEST_LEN]>, Failure>;
    /// A u64 of the meta table (0 when absent).
    fn meta_at(&self, key: &str) -> Result<u64, Failure>;
    /// Whether the blob table holds `hash`.
    fn has_blob(&self, hash: &Hash) -> Result<bool, Failure>;
    /// Inserts one value, in the redo form's encoding of keys and values (`redo.rs`).
    fn put(&mut self, target: Target, key: &[u8], value: &[u8]) -> Result<(), Failure>;
}

impl Access for Tables<'_> {
    fn journal_value(&self, key: (u64, u64)) -> Result<Option<Vec<u8>>, Failure> {
        Ok(self.journal.get(key)?.map(|bytes| bytes.value().to_vec()))
    }

    fn entry_at(&self, entry_id: &str) -> Result<Option<(u64, u64)>, Failure> {
        Ok(self.entries.get(entry_id)?.map(|g| g.value()))
    }

    fn digest_at(&self, key: (u64, u64)) -> Result<Option<[u8; DIGEST_LEN]>, Failure> {
        Ok(self.digests.get(key)?.map(|d| d.value()))
    }

    fn meta_at(&self, key: &str) -> Result<u64, Failure> {
        meta_u64(&self.meta, key)
    }

    fn has_blob(&self, hash: &Hash) -> Result<bool, Failure> {
        Ok(self.blobs.get(hash)?.is_some())
    }

    fn put(&mut self, target: Target, key: &[u8], value: &[u8]) -> Result<(), Failure> {
        self.insert(target, key, value)
    }
}

impl Tables<'_> {
    /// Inserts one op of a redo form into its table: what a write records and what replay puts
    /// back. A form that does not parse is `Corrupted`.
    pub(crate) fn insert(&mut self, target: Target, key: &[u8], value: &[u8]) -> Result<(), Failure> {
        match target {
            Target::Meta => drop(self.meta.insert(text(key)?, value)?),
            Target::Sessions => drop(self.sessions.insert(text(key)?, fixed::<SESSION_ROW_LEN>(value)?)?),
            Target::Names => drop(self.names.insert(u64_of(key)?, text(value)?)?),
            Target::Journal => drop(self.journal.insert(unpair(key)?, value)?),
            Target::Digests => drop(self.digests.insert(unpair(key)?, fixed::<DIGEST_LEN>(value)?)?),
            Target::Entries => drop(self.entries.insert(text(key)?, unpair(value)?)?),
            Target::Positions => drop(self.positions.insert(u64_of(key)?, unpair(value)?)?),
            Target::Blobs => drop(self.blobs.insert(fixed::<32>(key)?, value)?),
            Target::Receipts => drop(self.receipts.insert(unpair(key)?, fixed::<32>(value)?)?),
        }
        Ok(())
    }
}
