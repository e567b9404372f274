//! The lookups every read of a [`Snapshot`] goes through, each laid over with the shared log's
//! frames of its window before redb's tables (blobs, records by key and range, digests, meta),
//! payloads loaded into owned records, and what each table holds.

use std::borrow::Cow;

use redb::{ReadOnlyTable, ReadableTable, ReadableTableMetadata};

use crate::digest::DIGEST_LEN;
use crate::error::ReadError;
use crate::hash::Hash;
use crate::log::overlay::Layer;
use crate::packing::{unpack, Held, HeldRecord};
use crate::record::{Block, Record};
use crate::tables::{meta_u64, SessionRow};
use crate::view::{BlockView, Payload, RecordView};

use super::{JournalRange, Snapshot};

/// A session key's fixed-size values with sourceOrders in `[orders.0, orders.1)`: redb's, then
/// `frames(after)`, those of the shared log's frames from `after` on (past redb's: frames only
/// ever add).
pub(crate) fn range_with_frames<const N: usize>(
    table: &ReadOnlyTable<(u64, u64), [u8; N]>,
    key: u64,
    orders: (u64, u64),
    frames: impl FnOnce(u64) -> Vec<(u64, [u8; N])>,
) -> Result<Vec<(u64, [u8; N])>, ReadError> {
    let mut out = Vec::new();
    if orders.0 >= orders.1 {
        return Ok(out);
    }
    for item in table.range((key, orders.0)..(key, orders.1)).map_err(ReadError::storage)? {
        let (stored, value) = item.map_err(ReadError::storage)?;
        out.push((stored.value().1, value.value()));
    }
    let after = out.last().map_or(orders.0, |(order, _)| order + 1);
    out.extend(frames(after));
    Ok(out)
}

impl Snapshot {
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
            size("sessions", self.tables.sessions()?)?,
            size("journal", self.tables.journal()?)?,
            size("digests", self.tables.digests()?)?,
            size("entries", self.tables.entries()?)?,
            size("positions", self.tables.positions()?)?,
            size("blobs", self.tables.blobs()?)?,
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
        Ok(self.tables.blobs()?.get(hash).map_err(ReadError::storage)?.map(Held::Page))
    }

    /// Every blob's key and stored value, for `verify`.
    pub(crate) fn each_blob(
        &self,
        mut visit: impl FnMut(&Hash, &[u8]) -> Result<(), ReadError>,
    ) -> Result<(), ReadError> {
        for item in self.tables.blobs()?.iter().map_err(ReadError::storage)? {
            let (key, bytes) = item.map_err(ReadError::storage)?;
            visit(&key.value(), bytes.value())?;
        }
        if let Some(layer) = &self.layer {
            // Blobs already in redb are never put again, so none is visited twice.
            for (hash, bytes) in layer.maps().blobs(layer.window) {
                visit(&hash, &bytes)?;
            }
        }
        Ok(())
    }

    /// The stored record at `key`.
    pub(crate) fn journal_get(&self, key: (u64, u64)) -> Result<Option<HeldRecord<'_>>, ReadError> {
        if let Some(bytes) = self.layer.as_ref().and_then(|l| l.maps().journal(key, l.window)) {
            return Ok(Some(HeldRecord::new(Held::Frame(bytes))));
        }
        Ok(self
            .tables
            .journal()?
            .get(key)
            .map_err(ReadError::storage)?
            .map(|g| HeldRecord::new(Held::Page(g))))
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
        range_with_frames(self.tables.digests()?, key, orders, |after| match &self.layer {
            Some(layer) => layer.maps().digest_range(key, (after, orders.1), layer.window),
            None => Vec::new(),
        })
    }

    /// The digest stored at `key`.
    pub(crate) fn digest_at(&self, key: (u64, u64)) -> Result<Option<[u8; DIGEST_LEN]>, ReadError> {
        if let Some(digest) = self.layer.as_ref().and_then(|l| l.maps().digest(key, l.window)) {
            return Ok(Some(digest));
        }
        Ok(self.tables.digests()?.get(key).map_err(ReadError::storage)?.map(|d| d.value()))
    }

    /// A u64 of the meta table (0 when absent).
    pub(crate) fn meta_at(&self, key: &str) -> Result<u64, ReadError> {
        if let Some(layer) = &self.layer {
            if let Some(value) = layer.maps().meta(key, layer.window)? {
                return Ok(value);
            }
        }
        Ok(meta_u64(self.tables.meta()?, key)?)
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
