//! Read snapshots: sessions, records in order (zero copy), entries, digests, the position stream.
//!
//! A [`Snapshot`] is one redb read transaction, with, in a store shared between processes, the
//! shared log's frames above that transaction laid over it (`shared/overlay.rs`): everything it
//! returns is from one committed state, whatever other threads or processes write meanwhile.
//! Every read of a table goes through the lookups here, so none misses the frames.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range as OpsRange;

use redb::{ReadOnlyTable, ReadTransaction, ReadableTable, ReadableTableMetadata};

mod journal;

pub(crate) use journal::JournalRange;
pub use journal::Records;

use crate::codec;
use crate::digest::{Digest, DIGEST_LEN};
use crate::error::{Failure, ReadError};
use crate::hash::Hash;
use crate::packing::{unpack, Held, HeldRecord};
use crate::record::{Block, Record};
use crate::shared::overlay::Layer;
use crate::tables::{
    meta_u64, SessionRow, BLOBS, DIGESTS, ENTRIES, JOURNAL, META, POSITIONS, SESSIONS, SESSION_NAMES,
    SESSION_ROW_LEN,
};
use crate::view::{BlockView, Payload, RecordView};

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
    _txn: ReadTransaction,
    /// The shared log's frames laid over the transaction; none for a store opened alone.
    layer: Option<Layer>,
    meta: ReadOnlyTable<&'static str, &'static [u8]>,
    sessions: ReadOnlyTable<&'static str, [u8; SESSION_ROW_LEN]>,
    names: ReadOnlyTable<u64, &'static str>,
    journal: ReadOnlyTable<(u64, u64), &'static [u8]>,
    digests: ReadOnlyTable<(u64, u64), [u8; DIGEST_LEN]>,
    entries: ReadOnlyTable<&'static str, (u64, u64)>,
    positions: ReadOnlyTable<u64, (u64, u64)>,
    blobs: ReadOnlyTable<[u8; 32], &'static [u8]>,
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
        Ok(self.sessions.get(name)?.map(|row| SessionRow::decode(&row.value())))
    }

    fn name_by_key(&self, key: u64) -> Result<String, Failure> {
        if let Some(name) = self.layer.as_ref().and_then(|l| l.maps().name(key, l.window)) {
            return Ok(name);
        }
        self.names
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
        Ok(Snapshot {
            layer,
            meta: txn.open_table(META).map_err(ReadError::storage)?,
            sessions: txn.open_table(SESSIONS).map_err(ReadError::storage)?,
            names: txn.open_table(SESSION_NAMES).map_err(ReadError::storage)?,
            journal: txn.open_table(JOURNAL).map_err(ReadError::storage)?,
            digests: txn.open_table(DIGESTS).map_err(ReadError::storage)?,
            entries: txn.open_table(ENTRIES).map_err(ReadError::storage)?,
            positions: txn.open_table(POSITIONS).map_err(ReadError::storage)?,
            blobs: txn.open_table(BLOBS).map_err(ReadError::storage)?,
            _txn: txn,
        })
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
        for item in self.sessions.iter().map_err(ReadError::storage)? {
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
        Ok(self.entries.get(entry_id).map_err(ReadError::storage)?.map(|location| location.value()))
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
        for item in self.positions.range(from..).map_err(ReadError::storage)?.take(limit) {
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
            .positions
            .last()
            .map_err(ReadError::storage)?
            .map_or(0, |(position, _)| position.value() + 1);
        let framed = self.layer.as_ref().map_or(0, |l| l.maps().position_end(l.window));
        Ok(stored.max(framed))
    }

    /// A blob's bytes.
    ///
    /// # Errors
    /// [`ReadError::Corrupted`] if the blob is missing, I/O.
    pub fn blob(&self, hash: &Hash) -> Result<Vec<u8>, ReadError> {
        match self.blob_value(hash)? {
            Some(bytes) => match unpack(hash, bytes.value()) {
                Ok(original) => Ok(original.into_owned()),
                Err(reason) => Err(ReadError::Corrupted { reason }),
            },
            None => Err(ReadError::Corrupted {
                reason: format!("blob {} is missing", crate::hash::hash_to_hex(hash)),
            }),
        }
    }

    /// A payload's text: borrowed when inline, loaded from the blob table otherwise.
    ///
    /// # Errors
    /// [`ReadError::Corrupted`] if the blob is missing or not UTF-8, I/O.
    pub fn text<'a>(&self, payload: Payload<'a>) -> Result<Cow<'a, str>, ReadError> {
        match payload {
            Payload::Inline(text) => Ok(Cow::Borrowed(text)),
            Payload::Blob { hash, .. } => {
                String::from_utf8(self.blob(&hash)?).map(Cow::Owned).map_err(|_| ReadError::Corrupted {
                    reason: format!("text blob {} is not UTF-8", crate::hash::hash_to_hex(&hash)),
                })
            }
        }
    }

    /// An owned copy of a stored record, with its payloads loaded.
    ///
    /// # Errors
    /// As [`Snapshot::text`] and [`Snapshot::blob`].
    pub fn to_record(&self, view: &RecordView<'_>) -> Result<Record, ReadError> {
        let mut blocks = Vec::with_capacity(view.block_count());
        for block in view.blocks() {
            blocks.push(match block {
                BlockView::Text { text } => Block::Text { text: self.text(text)?.into_owned() },
                BlockView::Thinking { text } => Block::Thinking { text: self.text(text)?.into_owned() },
                BlockView::ToolCall { call_id, tool, input, target } => Block::ToolCall {
                    call_id: call_id.to_owned(),
                    tool: tool.to_owned(),
                    input: self.text(input)?.into_owned(),
                    target: target.to_owned(),
                },
                BlockView::ToolResult { call_id, tool, is_error, output } => Block::ToolResult {
                    call_id: call_id.to_owned(),
                    tool: tool.to_owned(),
                    is_error,
                    output: self.text(output)?.into_owned(),
                },
                BlockView::Blob { hash, media_type, .. } => {
                    Block::Blob { media_type: media_type.to_owned(), data: self.blob(&hash)? }
                }
            });
        }
        Ok(Record {
            entry_id: view.entry_id().to_owned(),
            role: view.role(),
            timestamp: view.timestamp().map(str::to_owned),
            blocks,
            meta: view.meta().map(|(k, v)| (k.to_owned(), v.to_owned())).collect(),
        })
    }

    /// Bytes stored per table, for `stats`.
    ///
    /// # Errors
    /// I/O or corruption.
    pub fn table_sizes(&self) -> Result<Vec<TableSize>, ReadError> {
        fn size(name: &'static str, table: &impl ReadableTableMetadata) -> Result<TableSize, ReadError> {
            let stats = table.stats().map_err(ReadError::storage)?;
            Ok(TableSize {
                table: name,
                entries: table.len().map_err(ReadError::storage)?,
                stored_bytes: stats.stored_bytes(),
            })
        }
        let mut sizes = vec![
            size("sessions", &self.sessions)?,
            size("journal", &self.journal)?,
            size("digests", &self.digests)?,
            size("entries", &self.entries)?,
            size("positions", &self.positions)?,
            size("blobs", &self.blobs)?,
        ];
        // What the shared log's frames hold is the store's too, until a checkpoint folds it in.
        if let Some(layer) = &self.layer {
            for (size, (_, entries, bytes)) in sizes.iter_mut().zip(layer.maps().sizes(layer.window)) {
                size.entries += entries;
                size.stored_bytes += bytes;
            }
        }
        Ok(sizes)
    }

    /// The stored value of a blob (the payload, or a zstd frame of it).
    pub(crate) fn blob_value(&self, hash: &Hash) -> Result<Option<Held<'_>>, ReadError> {
        if let Some(bytes) = self.layer.as_ref().and_then(|l| l.maps().blob(hash, l.window)) {
            return Ok(Some(Held::Frame(bytes)));
        }
        Ok(self.blobs.get(hash).map_err(ReadError::storage)?.map(Held::Page))
    }

    /// Every blob's key and stored value, for `verify`.
    pub(crate) fn each_blob(
        &self,
        mut visit: impl FnMut(&Hash, &[u8]) -> Result<(), ReadError>,
    ) -> Result<(), ReadError> {
        for item in self.blobs.iter().map_err(ReadError::storage)? {
            let (key, bytes) = item.map_err(ReadError::storage)?;
            visit(&key.value(), bytes.value())?;
        }
        if let Some(layer) = &self.layer {
            let maps = layer.maps();
            for hash in maps.blob_hashes(layer.window) {
                // Blobs already in redb are never put again, so none is visited twice.
                if let Some(bytes) = maps.blob(&hash, layer.window) {
                    visit(&hash, &bytes)?;
                }
            }
        }
        Ok(())
    }

    /// The stored record at `key`.
    pub(crate) fn journal_get(&self, key: (u64, u64)) -> Result<Option<HeldRecord<'_>>, ReadError> {
        if let Some(bytes) = self.layer.as_ref().and_then(|l| l.maps().journal(key, l.window)) {
            return Ok(Some(HeldRecord::new(Held::Frame(bytes))));
        }
        Ok(self.journal.get(key).map_err(ReadError::storage)?.map(|g| HeldRecord::new(Held::Page(g))))
    }

    /// The stored records of session key `key` with sourceOrders in `[orders.0, orders.1)`.
    pub(crate) fn journal_range(&self, key: u64, orders: (u64, u64)) -> Result<JournalRange<'_>, ReadError> {
        JournalRange::new(self, key, orders)
    }

    /// The stored digests of session key `key` with sourceOrders in `[orders.0, orders.1)`.
    pub(crate) fn digest_range(
        &self,
        key: u64,
        orders: (u64, u64),
    ) -> Result<Vec<(u64, [u8; DIGEST_LEN])>, ReadError> {
        let mut out = Vec::new();
        if orders.0 >= orders.1 {
            return Ok(out);
        }
        for item in self.digests.range((key, orders.0)..(key, orders.1)).map_err(ReadError::storage)? {
            let (stored, bytes) = item.map_err(ReadError::storage)?;
            out.push((stored.value().1, bytes.value()));
        }
        if let Some(layer) = &self.layer {
            let after = out.last().map_or(orders.0, |(order, _)| order + 1);
            out.extend(layer.maps().digest_range(key, (after, orders.1), layer.window));
        }
        Ok(out)
    }

    /// The digest stored at `key`.
    pub(crate) fn digest_at(&self, key: (u64, u64)) -> Result<Option<[u8; DIGEST_LEN]>, ReadError> {
        if let Some(digest) = self.layer.as_ref().and_then(|l| l.maps().digest(key, l.window)) {
            return Ok(Some(digest));
        }
        Ok(self.digests.get(key).map_err(ReadError::storage)?.map(|d| d.value()))
    }

    /// A u64 of the meta table (0 when absent).
    pub(crate) fn meta_at(&self, key: &str) -> Result<u64, ReadError> {
        if let Some(layer) = &self.layer {
            if let Some(value) = layer.maps().meta(key, layer.window)? {
                return Ok(value);
            }
        }
        Ok(meta_u64(&self.meta, key)?)
    }

    /// The frames laid over redb, if any.
    pub(crate) fn layer(&self) -> Option<&Layer> {
        self.layer.as_ref()
    }

    pub(crate) fn session_row(&self, session: &str) -> Result<SessionRow, ReadError> {
        self.row(session)
    }
}

/// How much one table holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSize {
    /// The table's name.
    pub table: &'static str,
    /// Its number of entries.
    pub entries: u64,
    /// Bytes of keys and values stored.
    pub stored_bytes: u64,
}
