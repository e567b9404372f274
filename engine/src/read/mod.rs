//! Read snapshots: sessions, records in order (zero copy), entries, digests, the position stream.
//!
//! A [`Snapshot`] is one redb read transaction, with, in a store shared between processes, the
//! shared log's frames above that transaction laid over it (`log/overlay.rs`): everything it
//! returns is from one committed state, whatever other threads or processes write meanwhile.
//! Every read of a table goes through the lookups here, so none misses the frames.

use std::collections::BTreeMap;
use std::ops::Range as OpsRange;

use redb::{ReadTransaction, ReadableTable};

mod journal;
mod lookups;
mod opened;
pub(crate) mod portable;
pub(crate) mod verify;

pub(crate) use journal::JournalRange;
pub use journal::Records;
pub(crate) use lookups::range_with_frames;
pub use lookups::TableSize;
use opened::Opened;

use crate::codec;
use crate::digest::Digest;
use crate::error::{Failure, ReadError};
use crate::hash::Hash;
use crate::log::overlay::Layer;
use crate::log::ChangeMark;
use crate::packing::HeldRecord;
use crate::tables::SessionRow;
use crate::view::RecordView;

/// What a store knows about one session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    /// The session's name.
    pub name: String,
    /// The session it was forked from.
    pub parent: Option<String>,
    /// Records `[0, fork_at)` are the parent's.
    pub fork_at: Option<u64>,
    /// Visible records, inherited ones included; also the next sourceOrder.
    pub len: u64,
    /// The chain hash of the last record (zero when empty).
    pub head: Hash,
}

/// Where an entry lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryLocation {
    /// The session that appended it.
    pub session: String,
    /// Its sourceOrder there.
    pub source_order: u64,
}

/// One step of the store-wide position stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionEntry {
    /// The store-wide position, gapless from 0.
    pub position: u64,
    /// The session appended to.
    pub session: String,
    /// The record's sourceOrder there.
    pub source_order: u64,
}

/// A stretch of a session's records held under one session key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segment {
    pub(crate) key: u64,
    pub(crate) orders: (u64, u64),
}

/// Resolves session rows by name and key, inside a read or a write transaction.
pub(crate) trait SessionLookup {
    fn row_by_name(&self, name: &str) -> Result<Option<SessionRow>, Failure>;
    fn name_by_key(&self, key: u64) -> Result<String, Failure>;

    fn row_by_key(&self, key: u64) -> Result<SessionRow, Failure> {
        let name = self.name_by_key(key)?;
        self.row_by_name(&name)?
            .ok_or_else(|| Failure::Corrupted(format!("session key {key} names {name:?}, which has no row")))
    }

    /// The segments of a session's visible records, oldest first.
    fn lineage(&self, row: &SessionRow) -> Result<Vec<Segment>, Failure> {
        let mut segments = Vec::new();
        let mut current = *row;
        let mut end = row.next;
        loop {
            let start = if current.parent_key().is_some() { current.fork_at.min(end) } else { 0 };
            segments.push(Segment { key: current.key, orders: (start, end) });
            match current.parent_key() {
                Some(parent) if start > 0 => {
                    if segments.len() > 100_000 {
                        return Err(Failure::Corrupted("session fork chain loops".into()));
                    }
                    end = start;
                    current = self.row_by_key(parent)?;
                }
                _ => break,
            }
        }
        segments.reverse();
        Ok(segments)
    }
}

/// A consistent read view of the store.
pub struct Snapshot {
    /// The log's frames laid over the transaction; none when it has none above the
    /// transaction, or the store has no log (custom storage without one).
    layer: Option<Layer>,
    tables: Opened,
    /// What the journal held when the snapshot began; none without a log.
    mark: Option<ChangeMark>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").finish_non_exhaustive()
    }
}

impl SessionLookup for Snapshot {
    fn row_by_name(&self, name: &str) -> Result<Option<SessionRow>, Failure> {
        if let Some(row) = self.layer.as_ref().and_then(|l| l.maps().session(name, l.window)) {
            return Ok(Some(row));
        }
        Ok(self.tables.sessions()?.get(name)?.map(|row| SessionRow::decode(&row.value())))
    }

    fn name_by_key(&self, key: u64) -> Result<String, Failure> {
        if let Some(name) = self.layer.as_ref().and_then(|l| l.maps().name(key, l.window)) {
            return Ok(name);
        }
        self.tables
            .names()?
            .get(key)?
            .map(|name| name.value().to_owned())
            .ok_or_else(|| Failure::Corrupted(format!("no session has key {key}")))
    }
}

/// A stored record's bytes, held inside the snapshot; [`RecordGuard::view`] validates and borrows.
pub struct RecordGuard<'s> {
    source_order: u64,
    bytes: HeldRecord<'s>,
}

impl std::fmt::Debug for RecordGuard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordGuard").field("source_order", &self.source_order).finish_non_exhaustive()
    }
}

impl RecordGuard<'_> {
    /// The record's position in the session read.
    pub fn source_order(&self) -> u64 {
        self.source_order
    }

    /// The archived record, validated, borrowed in place.
    ///
    /// # Errors
    /// [`ReadError::Corrupted`] if the stored bytes are not a valid record.
    pub fn view(&self) -> Result<RecordView<'_>, ReadError> {
        let corrupted = |reason: String| ReadError::Corrupted {
            reason: format!("record at sourceOrder {}: {reason}", self.source_order),
        };
        let archived = codec::access(self.bytes.archive().map_err(corrupted)?).map_err(corrupted)?;
        // Structure alone is not enough: a flipped byte inside a text is still valid UTF-8.
        crate::hash::check_archived(archived).map_err(|reason| corrupted(reason.into()))?;
        RecordView::new(archived, self.source_order).ok_or_else(|| corrupted("unknown role tag".into()))
    }
}

impl Snapshot {
    /// A snapshot of `txn` with `layer` laid over it.
    pub(crate) fn layered(txn: ReadTransaction, layer: Option<Layer>) -> Result<Snapshot, ReadError> {
        Ok(Snapshot { layer, tables: Opened::new(txn), mark: None })
    }

    /// The snapshot, with the mark of the moment it began.
    pub(crate) fn marked(mut self, mark: Option<ChangeMark>) -> Snapshot {
        self.mark = mark;
        self
    }

    /// What the journal held when this snapshot began: where [`Store::mark_now`] gives the same
    /// mark later, no session was appended to, forked or made since, so what was read from this
    /// snapshot still holds. None for a store without a log.
    ///
    /// [`Store::mark_now`]: crate::Store::mark_now
    pub fn mark(&self) -> Option<ChangeMark> {
        self.mark
    }

    fn info(&self, name: String, row: &SessionRow) -> Result<SessionInfo, ReadError> {
        let parent = match row.parent_key() {
            Some(key) => Some(self.name_by_key(key)?),
            None => None,
        };
        Ok(SessionInfo {
            name,
            fork_at: parent.as_ref().map(|_| row.fork_at),
            parent,
            len: row.next,
            head: row.head,
        })
    }

    fn row(&self, session: &str) -> Result<SessionRow, ReadError> {
        self.row_by_name(session)?.ok_or_else(|| ReadError::UnknownSession(session.to_owned()))
    }

    /// One session, if it exists.
    ///
    /// # Errors
    /// I/O or corruption of the sessions table.
    pub fn session(&self, name: &str) -> Result<Option<SessionInfo>, ReadError> {
        match self.row_by_name(name)? {
            Some(row) => Ok(Some(self.info(name.to_owned(), &row)?)),
            None => Ok(None),
        }
    }

    /// Every session, by name.
    ///
    /// # Errors
    /// I/O or corruption of the sessions table.
    pub fn sessions(&self) -> Result<Vec<SessionInfo>, ReadError> {
        let mut rows: BTreeMap<String, SessionRow> = BTreeMap::new();
        for item in self.tables.sessions()?.iter().map_err(ReadError::storage)? {
            let (name, row) = item.map_err(ReadError::storage)?;
            rows.insert(name.value().to_owned(), SessionRow::decode(&row.value()));
        }
        if let Some(layer) = &self.layer {
            rows.extend(layer.maps().sessions(layer.window));
        }
        rows.into_iter().map(|(name, row)| self.info(name, &row)).collect()
    }

    /// A session's records with sourceOrder in `orders`, in order, inherited ones included.
    ///
    /// # Errors
    /// [`ReadError::UnknownSession`], or I/O and corruption (also per item).
    pub fn records(&self, session: &str, orders: OpsRange<u64>) -> Result<Records<'_>, ReadError> {
        let row = self.row(session)?;
        let segments: Vec<Segment> = self
            .lineage(&row)?
            .into_iter()
            .filter_map(|s| {
                let start = s.orders.0.max(orders.start);
                let end = s.orders.1.min(orders.end);
                (start < end).then_some(Segment { key: s.key, orders: (start, end) })
            })
            .collect();
        Ok(Records::new(self, segments))
    }

    /// The record at `source_order` of `session`, if there is one.
    ///
    /// # Errors
    /// [`ReadError::UnknownSession`], I/O or corruption.
    pub fn record(&self, session: &str, source_order: u64) -> Result<Option<RecordGuard<'_>>, ReadError> {
        self.records(session, source_order..source_order.saturating_add(1))?.next().transpose()
    }

    /// Where an entry lives.
    ///
    /// # Errors
    /// I/O or corruption.
    pub fn entry(&self, entry_id: &str) -> Result<Option<EntryLocation>, ReadError> {
        match self.entry_at(entry_id)? {
            Some((key, source_order)) => {
                Ok(Some(EntryLocation { session: self.name_by_key(key)?, source_order }))
            }
            None => Ok(None),
        }
    }

    /// Where an entry is stored, by session key.
    pub(crate) fn entry_at(&self, entry_id: &str) -> Result<Option<(u64, u64)>, ReadError> {
        if let Some(at) = self.layer.as_ref().and_then(|l| l.maps().entry(entry_id, l.window)) {
            return Ok(Some(at));
        }
        Ok(self.tables.entries()?.get(entry_id).map_err(ReadError::storage)?.map(|location| location.value()))
    }

    /// The record with this entryId.
    ///
    /// # Errors
    /// [`ReadError::UnknownEntry`], I/O or corruption.
    pub fn record_by_entry(&self, entry_id: &str) -> Result<(EntryLocation, RecordGuard<'_>), ReadError> {
        let location = self.entry(entry_id)?.ok_or_else(|| ReadError::UnknownEntry(entry_id.to_owned()))?;
        let guard = self.record(&location.session, location.source_order)?.ok_or_else(|| {
            ReadError::Corrupted { reason: format!("entry {entry_id:?} points at a missing record") }
        })?;
        Ok((location, guard))
    }

    /// The digests of a session's records with sourceOrder in `orders`: what projections plan over.
    ///
    /// # Errors
    /// [`ReadError::UnknownSession`], I/O or corruption.
    pub fn digests(&self, session: &str, orders: OpsRange<u64>) -> Result<Vec<(u64, Digest)>, ReadError> {
        let row = self.row(session)?;
        let mut out = Vec::new();
        for segment in self.lineage(&row)? {
            let start = segment.orders.0.max(orders.start);
            let end = segment.orders.1.min(orders.end);
            if start >= end {
                continue;
            }
            for (order, bytes) in self.digest_range(segment.key, (start, end))? {
                let digest = Digest::decode(&bytes).ok_or_else(|| ReadError::Corrupted {
                    reason: format!(
                        "digest of sourceOrder {order} in session {session:?} has an unknown role"
                    ),
                })?;
                out.push((order, digest));
            }
        }
        Ok(out)
    }

    /// Up to `limit` steps of the store-wide position stream from `from`: the order appends
    /// committed in, what an indexer tails.
    ///
    /// # Errors
    /// I/O or corruption.
    pub fn positions(&self, from: u64, limit: usize) -> Result<Vec<PositionEntry>, ReadError> {
        let mut located: Vec<(u64, (u64, u64))> = Vec::new();
        for item in self.tables.positions()?.range(from..).map_err(ReadError::storage)?.take(limit) {
            let (position, location) = item.map_err(ReadError::storage)?;
            located.push((position.value(), location.value()));
        }
        if let Some(layer) = self.layer.as_ref().filter(|_| located.len() < limit) {
            let after = located.last().map_or(from, |(position, _)| position + 1);
            let frames = layer.maps().positions(after, layer.window);
            located.extend(frames.into_iter().take(limit - located.len()));
        }
        let mut out = Vec::with_capacity(located.len());
        let mut names: BTreeMap<u64, String> = BTreeMap::new();
        for (position, (key, source_order)) in located {
            let session = match names.get(&key) {
                Some(name) => name.clone(),
                None => {
                    let name = self.name_by_key(key)?;
                    names.insert(key, name.clone());
                    name
                }
            };
            out.push(PositionEntry { position, session, source_order });
        }
        Ok(out)
    }

    /// The next position the store will assign: every position below it is committed.
    ///
    /// # Errors
    /// I/O or corruption.
    pub fn position_end(&self) -> Result<u64, ReadError> {
        let stored = self
            .tables
            .positions()?
            .last()
            .map_err(ReadError::storage)?
            .map_or(0, |(position, _)| position.value() + 1);
        let framed = self.layer.as_ref().map_or(0, |l| l.maps().position_end(l.window));
        Ok(stored.max(framed))
    }
}
