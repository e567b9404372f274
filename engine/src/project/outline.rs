//! The outline of a session: one small item per visible record, read from the digests table,
//! plus the compaction receipts. Everything a projection plans over; no record text is read.
//!
//! Receipts are records of the session (they take sourceOrders and are exported like any
//! other), but no projection shows them: they are left out of the items and listed apart.

use std::sync::{Arc, OnceLock};

use crate::digest::Digest;
use crate::error::ReadError;
use crate::read::{Segment, SessionLookup};

use super::cache::{CachedOutline, Lookup};
use super::history::{slots, Slot};
use super::item::{Item, ReceiptRef};
use super::source::ProjectionSnapshot;

/// A session's items and receipts, as of one snapshot. Cheap to clone: the items are shared
/// with the store's cache.
#[derive(Clone, Debug)]
pub(crate) struct Outline {
    /// The session's next sourceOrder (receipts included).
    pub(crate) len: u64,
    items: Arc<Vec<Item>>,
    /// How many of `items` this snapshot sees.
    count: usize,
    receipts: Arc<Vec<ReceiptRef>>,
    receipt_count: usize,
    /// Where each stretch of the session's records is stored.
    segments: Vec<Segment>,
    /// The items' history slots, made once: planning, measuring and rendering all walk them.
    slots: OnceLock<Vec<Slot>>,
}

/// Reads the items and receipts of `[from, to)` across a lineage.
fn read_range(
    source: &ProjectionSnapshot,
    session: &str,
    lineage: &[Segment],
    from: u64,
    to: u64,
) -> Result<(Vec<Item>, Vec<ReceiptRef>), ReadError> {
    let snapshot = source.snapshot();
    let mut receipts = Vec::new();
    for segment in lineage {
        let (start, end) = (segment.orders.0.max(from), segment.orders.1.min(to));
        if start >= end {
            continue;
        }
        for (order, key) in source.receipt_range(segment.key, (start, end))? {
            receipts.push(ReceiptRef { order, key });
        }
    }
    let mut items = Vec::with_capacity(usize::try_from(to.saturating_sub(from)).unwrap_or(0));
    let mut next_receipt = receipts.iter().map(|r| r.order).peekable();
    let mut expected = from;
    for segment in lineage {
        let (start, end) = (segment.orders.0.max(from), segment.orders.1.min(to));
        if start >= end {
            continue;
        }
        for (order, bytes) in snapshot.digest_range(segment.key, (start, end))? {
            if order != expected {
                return Err(ReadError::Corrupted {
                    reason: format!(
                        "digests of session {session:?} skip from sourceOrder {expected} to {order}"
                    ),
                });
            }
            expected += 1;
            if next_receipt.peek() == Some(&order) {
                next_receipt.next();
                continue;
            }
            let digest = Digest::decode(&bytes).ok_or_else(|| ReadError::Corrupted {
                reason: format!("digest of sourceOrder {order} in session {session:?} has an unknown role"),
            })?;
            items.push(Item::from_digest(order, &digest));
        }
    }
    if expected != to {
        return Err(ReadError::Corrupted {
            reason: format!("session {session:?} has {to} records but digests end at {expected}"),
        });
    }
    Ok((items, receipts))
}

impl Outline {
    /// The outline of `session` in this snapshot: from the store's cache, reading only the
    /// digests appended since it was filled, or in one pass over the session's digests (a
    /// fork's inherited ones included).
    pub(crate) fn load(source: &ProjectionSnapshot, session: &str) -> Result<Outline, ReadError> {
        let snapshot = source.snapshot();
        let row = snapshot.session_row(session)?;
        let segments = snapshot.lineage(&row)?;
        let identity = (row.key, row.parent, row.fork_at);
        let cached = match source.cache() {
            Some(cache) => cache.lookup(session, identity, row.next),
            None => Lookup::Miss,
        };
        let outline = match cached {
            Lookup::Covers(cached) => cached,
            Lookup::Short(mut cached) => {
                let (items, receipts) = read_range(source, session, &segments, cached.len, row.next)?;
                Arc::make_mut(&mut cached.items).extend(items);
                Arc::make_mut(&mut cached.receipts).extend(receipts);
                cached.len = row.next;
                cached
            }
            Lookup::Miss => {
                let (items, receipts) = read_range(source, session, &segments, 0, row.next)?;
                CachedOutline {
                    name: session.to_owned(),
                    identity,
                    len: row.next,
                    items: Arc::new(items),
                    receipts: Arc::new(receipts),
                }
            }
        };
        if let Some(cache) = source.cache() {
            cache.keep(outline.clone());
        }
        let count = outline.items.partition_point(|item| item.order < row.next);
        let receipt_count = outline.receipts.partition_point(|r| r.order < row.next);
        Ok(Outline {
            len: row.next,
            items: outline.items,
            count,
            receipts: outline.receipts,
            receipt_count,
            segments,
            slots: OnceLock::new(),
        })
    }

    /// The history slots among the items before `order`.
    pub(crate) fn slots_before(&self, order: u64) -> &[Slot] {
        let all = self.slots.get_or_init(|| slots(self.items()));
        &all[..all.partition_point(|slot| slot.order < order)]
    }

    /// The visible, non-receipt records, in order.
    pub(crate) fn items(&self) -> &[Item] {
        &self.items[..self.count]
    }

    /// The receipts, in order.
    pub(crate) fn receipts(&self) -> &[ReceiptRef] {
        &self.receipts[..self.receipt_count]
    }

    /// This outline seen only up to sourceOrder `end`.
    pub(crate) fn truncated(&self, end: u64) -> Outline {
        let mut outline = self.clone();
        outline.count = self.items().partition_point(|item| item.order < end);
        outline.receipt_count = self.receipts().partition_point(|r| r.order < end);
        outline.len = outline.len.min(end);
        outline
    }

    /// Where the record at `order` is stored: (session key, sourceOrder).
    pub(crate) fn stored_at(&self, order: u64) -> Option<(u64, u64)> {
        self.segments.iter().find(|s| s.orders.0 <= order && order < s.orders.1).map(|s| (s.key, order))
    }

    /// The items with sourceOrder below `upto`.
    pub(crate) fn items_before(&self, upto: u64) -> &[Item] {
        let items = self.items();
        &items[..items.partition_point(|item| item.order < upto)]
    }

    /// The newest receipt, if any.
    pub(crate) fn latest_receipt(&self) -> Option<ReceiptRef> {
        self.receipts().last().copied()
    }

    /// Where a compaction now would end: after the last item, less a trailing exchange whose
    /// calls have no results yet (those records stay after the checkpoint, verbatim, so their
    /// results pair with them when they arrive). A call followed by user text is abandoned, not
    /// pending.
    pub(crate) fn compaction_upto(&self) -> u64 {
        compaction_upto(self.items())
    }

    /// The sum of the items' token estimates below `upto`.
    pub(crate) fn tokens_before(&self, upto: u64) -> u64 {
        self.items_before(upto).iter().map(|item| u64::from(item.tokens_total)).sum()
    }
}

/// See [`Outline::compaction_upto`].
fn compaction_upto(items: &[Item]) -> u64 {
    let Some(last) = items.last() else { return 0 };
    let mut upto = last.order + 1;
    for item in items.iter().rev() {
        if item.is_result() || item.is_turn_start() {
            break;
        }
        if item.is_call() {
            upto = item.order;
        }
    }
    upto
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::flags;
    use crate::record::Role;

    fn item(order: u64, role: Role, flags: u8) -> Item {
        Item { order, role, flags, tokens_total: 10, tokens_text: 10, tool_key: 0, target_key: 0 }
    }

    fn upto(items: Vec<Item>) -> u64 {
        compaction_upto(&items)
    }

    #[test]
    fn pending_calls_stay_after_the_checkpoint() {
        let done = upto(vec![
            item(0, Role::User, flags::TEXT),
            item(1, Role::Assistant, flags::TOOL_CALL),
            item(2, Role::Tool, flags::TOOL_RESULT),
        ]);
        assert_eq!(done, 3);
        let pending = upto(vec![
            item(0, Role::User, flags::TEXT),
            item(1, Role::Assistant, flags::TOOL_CALL),
            item(2, Role::Tool, flags::TOOL_RESULT),
            item(3, Role::Assistant, flags::TOOL_CALL | flags::TEXT),
            item(4, Role::Assistant, flags::TOOL_CALL),
        ]);
        assert_eq!(pending, 3);
        let abandoned = upto(vec![
            item(0, Role::User, flags::TEXT),
            item(1, Role::Assistant, flags::TOOL_CALL),
            item(2, Role::User, flags::TEXT),
        ]);
        assert_eq!(abandoned, 3);
    }
}
