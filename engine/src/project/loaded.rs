//! The stored records a projection renders, held inside one read transaction so rendering
//! borrows their text in place (zero copy).
//!
//! Each record is checked in full (structure, content hash, seal) the first time it is viewed;
//! later views of the same bytes check their structure only. The bytes cannot change in between:
//! they are pages of one read transaction, which redb never modifies (copy on write).

use std::cell::OnceCell;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::codec;
use crate::error::ReadError;
use crate::packing::HeldRecord;
use crate::view::RecordView;

use super::outline::Outline;
use super::source::ProjectionSnapshot;

/// One stored record.
struct Stored<'s> {
    order: u64,
    bytes: HeldRecord<'s>,
    /// Its content hash and seal were checked.
    checked: AtomicBool,
}

/// Stored records by sourceOrder, loaded in contiguous ranges and kept sorted.
#[derive(Default)]
pub(crate) struct Loaded<'s> {
    records: Vec<Stored<'s>>,
}

impl std::fmt::Debug for Loaded<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loaded").field("records", &self.records.len()).finish()
    }
}

impl<'s> Loaded<'s> {
    fn position(&self, order: u64) -> Result<usize, usize> {
        self.records.binary_search_by_key(&order, |r| r.order)
    }

    /// Loads whichever of `orders` are not loaded yet, from where `outline` says they are stored.
    pub(crate) fn ensure(
        &mut self,
        source: &'s ProjectionSnapshot,
        outline: &Outline,
        orders: &[u64],
    ) -> Result<(), ReadError> {
        let mut missing: Vec<u64> = orders.iter().copied().filter(|o| self.position(*o).is_err()).collect();
        if missing.is_empty() {
            return Ok(());
        }
        missing.sort_unstable();
        missing.dedup();
        let snapshot = source.snapshot();
        let mut start = 0;
        while start < missing.len() {
            let (key, first) = outline.stored_at(missing[start]).ok_or_else(|| ReadError::Corrupted {
                reason: format!("sourceOrder {} is past the session's records", missing[start]),
            })?;
            // A run of consecutive orders stored under one key is read as one range.
            let mut end = start + 1;
            while end < missing.len()
                && missing[end] == missing[end - 1] + 1
                && outline.stored_at(missing[end]).map(|at| at.0) == Some(key)
            {
                end += 1;
            }
            let last = missing[end - 1];
            let mut expected = first;
            for entry in snapshot.journal_range(key, (first, last + 1))? {
                let (order, bytes) = entry?;
                if order != expected {
                    break;
                }
                expected += 1;
                self.records.push(Stored { order, bytes, checked: AtomicBool::new(false) });
            }
            if expected != last + 1 {
                return Err(ReadError::Corrupted {
                    reason: format!(
                        "the journal has no record at sourceOrder {expected} (session key {key})"
                    ),
                });
            }
            start = end;
        }
        self.records.sort_by_key(|r| r.order);
        Ok(())
    }

    /// Views of the loaded records, each made the first time it is asked for.
    pub(crate) fn views(&self) -> Views<'_, 's> {
        Views { records: &self.records, views: self.records.iter().map(|_| OnceCell::new()).collect() }
    }
}

/// Validated, borrowed views of loaded records, by sourceOrder.
pub(crate) struct Views<'g, 's> {
    records: &'g [Stored<'s>],
    views: Vec<OnceCell<RecordView<'g>>>,
}

impl<'g> Views<'g, '_> {
    /// The record at `order`; planning loaded every record rendering asks for, so a missing one
    /// means the stored plan names a record the journal does not have.
    pub(crate) fn get(&self, order: u64) -> Result<RecordView<'g>, ReadError> {
        let at = self.records.binary_search_by_key(&order, |r| r.order).map_err(|_| {
            ReadError::Corrupted { reason: format!("record at sourceOrder {order} was not loaded") }
        })?;
        if let Some(view) = self.views[at].get() {
            return Ok(*view);
        }
        let stored = &self.records[at];
        let corrupted = |reason: String| ReadError::Corrupted {
            reason: format!("record at sourceOrder {order}: {reason}"),
        };
        let archived = codec::access(stored.bytes.archive().map_err(corrupted)?).map_err(corrupted)?;
        if !stored.checked.load(Ordering::Relaxed) {
            // Structure alone is not enough: a flipped byte inside a text is still valid UTF-8.
            crate::hash::check_archived(archived).map_err(|reason| corrupted(reason.into()))?;
            stored.checked.store(true, Ordering::Relaxed);
        }
        let view = RecordView::new(archived, order).ok_or_else(|| corrupted("unknown role tag".into()))?;
        let _ = self.views[at].set(view);
        Ok(view)
    }
}
