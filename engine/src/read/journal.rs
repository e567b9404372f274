//! Reading the journal in order: one session key's stored records over a range of sourceOrders
//! (redb's, then the shared log's frames above them), and a session's records across its
//! lineage.

use bytes::Bytes;

use crate::error::ReadError;
use crate::packing::{Held, HeldRecord};

use super::{RecordGuard, Segment, Snapshot};

/// One session key's stored records with sourceOrders in a range, in key order: those in redb's
/// pages, then those of the frames laid over them (always after: frames only add records).
pub(crate) struct JournalRange<'s> {
    pages: Option<redb::Range<'s, (u64, u64), &'static [u8]>>,
    snapshot: &'s Snapshot,
    key: u64,
    /// Where the frames' part starts: past the last record read from the pages.
    next: u64,
    end: u64,
    frames: Option<std::vec::IntoIter<(u64, Bytes)>>,
}

impl<'s> JournalRange<'s> {
    pub(crate) fn new(snapshot: &'s Snapshot, key: u64, orders: (u64, u64)) -> Result<Self, ReadError> {
        let pages = if orders.0 < orders.1 {
            Some(
                snapshot
                    .tables
                    .journal()?
                    .range((key, orders.0)..(key, orders.1))
                    .map_err(ReadError::storage)?,
            )
        } else {
            None
        };
        Ok(JournalRange { pages, snapshot, key, next: orders.0, end: orders.1, frames: None })
    }
}

impl<'s> Iterator for JournalRange<'s> {
    type Item = Result<(u64, HeldRecord<'s>), ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(pages) = &mut self.pages {
            match pages.next() {
                Some(Ok((key, bytes))) => {
                    let order = key.value().1;
                    self.next = order + 1;
                    return Some(Ok((order, HeldRecord::new(Held::Page(bytes)))));
                }
                Some(Err(err)) => {
                    self.pages = None;
                    self.frames = Some(Vec::new().into_iter());
                    return Some(Err(ReadError::storage(err)));
                }
                None => self.pages = None,
            }
        }
        let frames = self.frames.get_or_insert_with(|| match self.snapshot.layer() {
            Some(layer) if self.next < self.end => {
                layer.maps().journal_range(self.key, (self.next, self.end), layer.window).into_iter()
            }
            _ => Vec::new().into_iter(),
        });
        frames.next().map(|(order, bytes)| Ok((order, HeldRecord::new(Held::Frame(bytes)))))
    }
}

/// A session's records in order; see [`Snapshot::records`].
pub struct Records<'s> {
    snapshot: &'s Snapshot,
    segments: std::vec::IntoIter<Segment>,
    range: Option<JournalRange<'s>>,
    expected: u64,
}

impl std::fmt::Debug for Records<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records").field("next", &self.expected).finish_non_exhaustive()
    }
}

impl<'s> Records<'s> {
    pub(crate) fn new(snapshot: &'s Snapshot, segments: Vec<Segment>) -> Records<'s> {
        let expected = segments.first().map_or(0, |s| s.orders.0);
        Records { snapshot, segments: segments.into_iter(), range: None, expected }
    }
}

impl<'s> Iterator for Records<'s> {
    type Item = Result<RecordGuard<'s>, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(range) = &mut self.range {
                match range.next() {
                    Some(Ok((order, bytes))) => {
                        if order != self.expected {
                            self.range = None;
                            self.segments = Vec::new().into_iter();
                            return Some(Err(ReadError::Corrupted {
                                reason: format!(
                                    "journal skips from sourceOrder {} to {order}",
                                    self.expected
                                ),
                            }));
                        }
                        self.expected += 1;
                        return Some(Ok(RecordGuard { source_order: order, bytes }));
                    }
                    Some(Err(err)) => {
                        self.range = None;
                        return Some(Err(err));
                    }
                    None => self.range = None,
                }
            }
            let segment = self.segments.next()?;
            self.expected = segment.orders.0;
            match self.snapshot.journal_range(segment.key, segment.orders) {
                Ok(range) => self.range = Some(range),
                Err(err) => return Some(Err(err)),
            }
        }
    }
}
