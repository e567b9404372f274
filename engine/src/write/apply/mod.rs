//! Appends and forks decided and applied against the journal's tables: redb's own inside the
//! writer's transaction ([`Tables`]), or, in a store shared between processes, redb's last
//! commit with the shared log's frames laid over it (`log/deciding.rs`). Both reach the
//! tables through [`Access`], so the rules are written once.
//!
//! Invariant: each request is checked completely (conflicts, duplicates, names) before it
//! writes anything, so a request that fails leaves the transaction as it found it and the
//! other requests of the group commit normally. Only storage failures abort the group.

mod access;

use std::collections::HashMap;

use redb::{ReadableTable, Table, WriteTransaction};

use crate::claim::Claim;
use crate::codec;
use crate::codec::StoredBlock;
use crate::digest::{Digest, DIGEST_LEN};
use crate::error::{AppendError, Failure};
use crate::hash::{chain_hash, hash_to_hex, seal, Hash, ZERO_HASH};
use crate::packing::{pack_record, patch_record, unpack_record};
use crate::prepare::{settle_ids, Prepared};
use crate::read::{Segment, SessionLookup};
use crate::receipts::receipt_key_of;
use crate::redo::{self, Target};
use crate::tables::{
    SessionRow, BLOBS, DIGESTS, ENTRIES, JOURNAL, META, META_NEXT_POSITION, META_NEXT_SESSION_KEY, NO_PARENT,
    POSITIONS, RECEIPTS, SESSIONS, SESSION_NAMES, SESSION_ROW_LEN,
};
pub(crate) use access::Access;

/// What an append did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppendReceipt {
    /// The sourceOrder of each record of the batch, in batch order: new or, for a duplicate
    /// entryId with the same content, the existing one.
    pub source_orders: Vec<u64>,
    /// How many records were new (the rest were already stored).
    pub appended: usize,
    /// The session's next sourceOrder after the append.
    pub next: u64,
}

pub(crate) struct Tables<'txn> {
    pub(crate) meta: Table<'txn, &'static str, &'static [u8]>,
    pub(crate) sessions: Table<'txn, &'static str, [u8; SESSION_ROW_LEN]>,
    pub(crate) names: Table<'txn, u64, &'static str>,
    pub(crate) journal: Table<'txn, (u64, u64), &'static [u8]>,
    pub(crate) digests: Table<'txn, (u64, u64), [u8; DIGEST_LEN]>,
    pub(crate) entries: Table<'txn, &'static str, (u64, u64)>,
    pub(crate) positions: Table<'txn, u64, (u64, u64)>,
    pub(crate) blobs: Table<'txn, [u8; 32], &'static [u8]>,
    /// Compaction receipts by (session key, sourceOrder): indexed by every append.
    pub(crate) receipts: Table<'txn, (u64, u64), [u8; 32]>,
}

impl SessionLookup for Tables<'_> {
    fn row_by_name(&self, name: &str) -> Result<Option<SessionRow>, Failure> {
        Ok(self.sessions.get(name)?.map(|row| SessionRow::decode(&row.value())))
    }

    fn name_by_key(&self, key: u64) -> Result<String, Failure> {
        self.names
            .get(key)?
            .map(|name| name.value().to_owned())
            .ok_or_else(|| Failure::Corrupted(format!("no session has key {key}")))
    }
}

/// Where a batch's records go: each one's sourceOrder, in batch order, and how many are new.
pub(crate) struct Placed {
    orders: Vec<u64>,
    new_count: u64,
}

/// A new record ready to write.
pub(crate) struct Encoded {
    entry_id: String,
    order: u64,
    position: u64,
    hash: Hash,
    prev_hash: Hash,
    bytes: Vec<u8>,
    digest: Digest,
    blobs: Vec<(Hash, Vec<u8>)>,
    /// The checkpoint whose receipt this record is.
    receipt: Option<[u8; 32]>,
}

fn visible(lineage: &[Segment], key: u64, order: u64) -> bool {
    lineage.iter().any(|s| s.key == key && s.orders.0 <= order && order < s.orders.1)
}

impl<'txn> Tables<'txn> {
    /// The tables of `txn`.
    pub(crate) fn open(txn: &'txn WriteTransaction) -> Result<Tables<'txn>, Failure> {
        Ok(Tables {
            meta: txn.open_table(META)?,
            sessions: txn.open_table(SESSIONS)?,
            names: txn.open_table(SESSION_NAMES)?,
            journal: txn.open_table(JOURNAL)?,
            digests: txn.open_table(DIGESTS)?,
            entries: txn.open_table(ENTRIES)?,
            positions: txn.open_table(POSITIONS)?,
            blobs: txn.open_table(BLOBS)?,
            receipts: txn.open_table(RECEIPTS)?,
        })
    }
}

/// The append and fork rules, for any [`Access`].
pub(crate) trait Decide: Access {
    /// The next position the store will assign.
    fn position_end(&self) -> Result<u64, Failure> {
        self.meta_at(META_NEXT_POSITION)
    }

    fn allocate_session_key(&mut self) -> Result<u64, Failure> {
        let key = self.meta_at(META_NEXT_SESSION_KEY)?;
        self.put(Target::Meta, META_NEXT_SESSION_KEY.as_bytes(), &(key + 1).to_le_bytes())?;
        Ok(key)
    }

    /// The chain hash of the record at `order` of a session whose lineage is given, and the
    /// hash before it.
    fn hashes_at(&self, lineage: &[Segment], order: u64) -> Result<(Hash, Hash), Failure> {
        let segment = lineage
            .iter()
            .find(|s| s.orders.0 <= order && order < s.orders.1)
            .ok_or_else(|| Failure::Corrupted(format!("no segment holds sourceOrder {order}")))?;
        let bytes = self.journal_value((segment.key, order))?.ok_or_else(|| {
            Failure::Corrupted(format!("record {order} of session key {} is missing", segment.key))
        })?;
        let archive = unpack_record(&bytes).map_err(Failure::Corrupted)?;
        let archived = codec::access(&archive).map_err(Failure::Corrupted)?;
        Ok((archived.hash, archived.prev_hash))
    }

    /// The refusal of an append guarded by `unchanged` (sessions with the length each must
    /// still have, None where none may exist yet): the first that differs; None when all hold.
    fn changed(&self, unchanged: &[(String, Option<u64>)]) -> Result<Option<AppendError>, Failure> {
        for (session, expected) in unchanged {
            let actual = self.row_by_name(session)?.map(|row| row.next);
            if actual != *expected {
                let session = session.clone();
                return Ok(Some(AppendError::Changed { session, expected: *expected, actual }));
            }
        }
        Ok(None)
    }

    /// Applies one append. The outer error aborts the group; the inner one is this request's.
    /// `claims` is empty or has one claim per record.
    fn append(
        &mut self,
        session: &str,
        expected_next: Option<u64>,
        mut prepared: Vec<Prepared>,
        claims: &[Claim],
    ) -> Result<Result<AppendReceipt, AppendError>, Failure> {
        let existing = self.row_by_name(session)?;
        let lineage = match &existing {
            Some(row) => self.lineage(row)?,
            None => Vec::new(),
        };
        let mut row = existing.unwrap_or(SessionRow {
            key: 0,
            parent: NO_PARENT,
            fork_at: 0,
            next: 0,
            head: ZERO_HASH,
        });
        settle_ids(session, row.next, &mut prepared);

        // Check phase: nothing is written until the whole request is known to succeed.
        let placed = match self.place(session, existing.is_some(), &lineage, row.next, &prepared)? {
            Ok(placed) => placed,
            Err(err) => return Ok(Err(err)),
        };
        let all_known = placed.new_count == 0 && !prepared.is_empty();
        if let Some(expected) = expected_next {
            if expected != row.next && !all_known {
                return Ok(Err(AppendError::Conflict {
                    session: session.to_owned(),
                    expected,
                    actual: row.next,
                }));
            }
        }
        let mismatch = |index: usize, field: &'static str, claimed: String, actual: String| {
            Ok(Err(AppendError::ClaimMismatch {
                index: index as u64,
                field,
                claimed,
                actual,
                next: row.next,
            }))
        };
        for (index, (claim, &order)) in claims.iter().zip(&placed.orders).enumerate() {
            if let Some(claimed) = claim.source_order.filter(|&claimed| claimed != order) {
                return mismatch(index, "sourceOrder", claimed.to_string(), order.to_string());
            }
        }

        // Encode phase: chain hashes and archives, still without writing.
        let encoded = self.encode(&row, &placed, prepared)?;
        for (index, (claim, &order)) in claims.iter().zip(&placed.orders).enumerate() {
            if claim.hash.is_none() && claim.prev_hash.is_none() {
                continue;
            }
            // New records are encoded in order from the session's end; older ones are stored.
            let new = order.checked_sub(row.next).and_then(|i| encoded.get(usize::try_from(i).ok()?));
            let (hash, prev_hash) = match new {
                Some(new) => (new.hash, new.prev_hash),
                None => self.hashes_at(&lineage, order)?,
            };
            for (field, claimed, actual) in
                [("hash", claim.hash, hash), ("prevHash", claim.prev_hash, prev_hash)]
            {
                if let Some(claimed) = claimed.filter(|claimed| *claimed != actual) {
                    return mismatch(index, field, hash_to_hex(&claimed), hash_to_hex(&actual));
                }
            }
        }
        if placed.new_count == 0 && existing.is_some() {
            return Ok(Ok(AppendReceipt { source_orders: placed.orders, appended: 0, next: row.next }));
        }

        // Write phase.
        if existing.is_none() {
            row.key = self.allocate_session_key()?;
            self.name_session(row.key, session)?;
        }
        self.write(&mut row, session, &encoded)?;
        Ok(Ok(AppendReceipt {
            source_orders: placed.orders,
            appended: placed.new_count as usize,
            next: row.next,
        }))
    }

    /// Where each record of a batch goes: its stored sourceOrder when the session already holds
    /// its entryId with the same content, else the next free one. Refuses a batch that repeats an
    /// id with other content, or names an entry another session holds.
    fn place(
        &self,
        session: &str,
        exists: bool,
        lineage: &[Segment],
        next: u64,
        prepared: &[Prepared],
    ) -> Result<Result<Placed, AppendError>, Failure> {
        let mut orders: Vec<u64> = Vec::with_capacity(prepared.len());
        let mut in_batch: HashMap<&str, (usize, Hash)> = HashMap::new();
        let mut new_count = 0u64;
        for (index, record) in prepared.iter().enumerate() {
            let id = record.entry_id.as_str();
            if let Some(&(first, hash)) = in_batch.get(id) {
                if hash != record.content_hash {
                    return Ok(Err(AppendError::DuplicateInBatch {
                        session: session.to_owned(),
                        entry_id: record.entry_id.clone(),
                        first: first as u64,
                        again: index as u64,
                    }));
                }
                orders.push(orders[first]);
                continue;
            }
            in_batch.insert(id, (index, record.content_hash));
            match self.entry_at(id)? {
                Some((key, order)) if exists && visible(lineage, key, order) => {
                    let digest =
                        self.digest_at((key, order))?.and_then(|d| Digest::decode(&d)).ok_or_else(|| {
                            Failure::Corrupted(format!("digest of sourceOrder {order} is missing"))
                        })?;
                    if digest.content_hash != record.content_hash {
                        return Ok(Err(AppendError::EntryMismatch {
                            session: session.to_owned(),
                            entry_id: record.entry_id.clone(),
                            source_order: order,
                        }));
                    }
                    orders.push(order);
                }
                Some((key, _)) => {
                    return Ok(Err(AppendError::EntryInOtherSession {
                        session: session.to_owned(),
                        entry_id: record.entry_id.clone(),
                        owner: self.name_by_key(key)?,
                    }));
                }
                None => {
                    orders.push(next + new_count);
                    new_count += 1;
                }
            }
        }
        Ok(Ok(Placed { orders, new_count }))
    }

    /// The new records of a placed batch, chained after `row`'s head and encoded. New records
    /// have consecutive sourceOrders in batch order, so a record is new exactly when its order
    /// is the next one to write (a later duplicate of it carries the same, already passed order).
    fn encode(
        &self,
        row: &SessionRow,
        placed: &Placed,
        prepared: Vec<Prepared>,
    ) -> Result<Vec<Encoded>, Failure> {
        let mut position = self.meta_at(META_NEXT_POSITION)?;
        let mut head = row.head;
        let mut to_write = row.next;
        let mut encoded = Vec::with_capacity(placed.new_count as usize);
        for (record, &order) in prepared.into_iter().zip(&placed.orders) {
            if order != to_write {
                continue;
            }
            to_write += 1;
            let mut stored = record.stored;
            stored.prev_hash = head;
            stored.hash = chain_hash(&head, &record.content_hash);
            stored.seal = seal(
                &stored.hash,
                stored.blocks.iter().filter_map(|b| match b {
                    StoredBlock::ToolCall { target, .. } => Some(target.as_str()),
                    _ => None,
                }),
            );
            head = stored.hash;
            let fields = codec::chain_fields(&stored.prev_hash, &stored.hash, stored.seal);
            let bytes = match record.value {
                Some(mut value) => {
                    patch_record(&mut value, &fields).map_err(Failure::Corrupted)?;
                    value
                }
                None => pack_record(
                    &codec::encode(&stored)
                        .map_err(|e| Failure::Corrupted(format!("cannot encode record: {e}")))?,
                ),
            };
            let mut digest = record.digest;
            digest.position = position;
            encoded.push(Encoded {
                receipt: receipt_key_of(&stored.meta),
                entry_id: record.entry_id,
                order,
                position,
                hash: stored.hash,
                prev_hash: stored.prev_hash,
                bytes,
                digest,
                blobs: record.blobs,
            });
            position += 1;
        }
        Ok(encoded)
    }

    /// Writes encoded records of the session `row` names and moves its row and the store's
    /// position past them.
    fn write(&mut self, row: &mut SessionRow, session: &str, encoded: &[Encoded]) -> Result<(), Failure> {
        for record in encoded {
            let key = (row.key, record.order);
            let pair = redo::pair(key);
            if let Some(checkpoint) = &record.receipt {
                self.put(Target::Receipts, &pair, checkpoint)?;
            }
            self.put(Target::Journal, &pair, &record.bytes)?;
            self.put(Target::Digests, &pair, &record.digest.encode())?;
            self.put(Target::Entries, record.entry_id.as_bytes(), &pair)?;
            self.put(Target::Positions, &record.position.to_le_bytes(), &pair)?;
            for (hash, data) in &record.blobs {
                if !self.has_blob(hash)? {
                    self.put(Target::Blobs, hash, data)?;
                }
            }
        }
        if let Some(last) = encoded.last() {
            row.next = last.order + 1;
            row.head = last.hash;
            self.put(Target::Meta, META_NEXT_POSITION.as_bytes(), &(last.position + 1).to_le_bytes())?;
        }
        self.put_row(session, row)
    }

    fn name_session(&mut self, key: u64, name: &str) -> Result<(), Failure> {
        self.put(Target::Names, &key.to_le_bytes(), name.as_bytes())
    }

    fn put_row(&mut self, name: &str, row: &SessionRow) -> Result<(), Failure> {
        self.put(Target::Sessions, name.as_bytes(), &row.encode())
    }
}

impl<T: Access + ?Sized> Decide for T {}
