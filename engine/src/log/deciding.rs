//! Deciding a group of appends and forks in a store shared between processes: against redb's
//! last commit with every frame of the shared log laid over it (a layered [`Snapshot`], taken
//! under the log's exclusive lock, so no other process appends meanwhile), and the group's own
//! writes so far. The writes become the group's redo form, the frame the log will hold; redb is
//! not written.

use bytes::Bytes;

use crate::apply::Access;
use crate::digest::DIGEST_LEN;
use crate::error::Failure;
use crate::hash::Hash;
use crate::read::{SessionLookup, Snapshot};
use crate::redo::{Redo, Target};
use crate::tables::SessionRow;

use super::overlay::{Maps, Window};

/// The tables an append in a shared store is decided against.
pub(crate) struct Deciding<'s> {
    base: &'s Snapshot,
    /// The group's writes, read back before the snapshot.
    own: Maps,
    pub(crate) redo: Redo,
}

/// The sequence number the group's own writes are kept under (any in [`Window::ALL`]).
const OWN: u64 = 1;

impl<'s> Deciding<'s> {
    pub(crate) fn new(base: &'s Snapshot) -> Deciding<'s> {
        Deciding { base, own: Maps::default(), redo: Redo::default() }
    }
}

impl SessionLookup for Deciding<'_> {
    fn row_by_name(&self, name: &str) -> Result<Option<SessionRow>, Failure> {
        match self.own.session(name, Window::ALL) {
            Some(row) => Ok(Some(row)),
            None => self.base.row_by_name(name),
        }
    }

    fn name_by_key(&self, key: u64) -> Result<String, Failure> {
        match self.own.name(key, Window::ALL) {
            Some(name) => Ok(name),
            None => self.base.name_by_key(key),
        }
    }
}

impl Access for Deciding<'_> {
    fn journal_value(&self, key: (u64, u64)) -> Result<Option<Vec<u8>>, Failure> {
        if let Some(bytes) = self.own.journal(key, Window::ALL) {
            return Ok(Some(bytes.to_vec()));
        }
        let held = self.base.journal_get(key).map_err(Failure::from)?;
        Ok(held.map(|held| held.stored().to_vec()))
    }

    fn entry_at(&self, entry_id: &str) -> Result<Option<(u64, u64)>, Failure> {
        match self.own.entry(entry_id, Window::ALL) {
            Some(at) => Ok(Some(at)),
            None => self.base.entry_at(entry_id).map_err(Failure::from),
        }
    }

    fn digest_at(&self, key: (u64, u64)) -> Result<Option<[u8; DIGEST_LEN]>, Failure> {
        match self.own.digest(key, Window::ALL) {
            Some(digest) => Ok(Some(digest)),
            None => self.base.digest_at(key).map_err(Failure::from),
        }
    }

    fn meta_at(&self, key: &str) -> Result<u64, Failure> {
        match self.own.meta(key, Window::ALL)? {
            Some(value) => Ok(value),
            None => self.base.meta_at(key).map_err(Failure::from),
        }
    }

    fn has_blob(&self, hash: &Hash) -> Result<bool, Failure> {
        if self.own.blob(hash, Window::ALL).is_some() {
            return Ok(true);
        }
        Ok(self.base.blob_value(hash).map_err(Failure::from)?.is_some())
    }

    fn put(&mut self, target: Target, key: &[u8], value: &[u8]) -> Result<(), Failure> {
        self.own.put(OWN, target, key, Bytes::copy_from_slice(value))?;
        self.redo.put(target, key, value);
        Ok(())
    }
}
