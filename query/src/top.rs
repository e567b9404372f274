//! The best documents of a search in the order of hits, found in one pass over its matches.
//!
//! tantivy's top-k collector keeps an arbitrary subset of the documents tied at its cut (the
//! ones it reads first), so which of them were listed would depend on the segment layout.
//! [`Top`] keeps every document that scores at least as well as the `limit`th best so far: the
//! pruning threshold it hands the scorer sits one step below that score, so tied documents still
//! reach it. While few documents tie at the cut they are all kept, and the caller's sort by
//! [`crate::search::rank`] decides among them. When more than [`TIES_KEPT`] tie, they are told
//! apart by their record's store position (newest first), read from the `position` column,
//! which is opened only then: a search that matches fewer documents than its limit, or whose
//! best scores differ, opens no column (opening one reads its block index, see `schema.rs`).
//! Blocks of one record share its position, so they are all kept; their block order decides.

use std::cmp::Ordering;
use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::ColumnValues;
use tantivy::fastfield::FastFieldReaders;
use tantivy::query::{Query, Weight};
use tantivy::{DocAddress, DocId, Score, Searcher, SegmentOrdinal, SegmentReader};

use crate::schema::Fields;

/// Documents tied at the cut kept beyond the limit before their positions are read: about what
/// reading each one's stored fields (which the caller does for every document kept) costs no
/// more than opening the column.
const TIES_KEPT: usize = 16;

/// A document kept, with its record's store position once that was read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate {
    pub(crate) score: Score,
    pub(crate) address: DocAddress,
    position: Option<u64>,
}

/// The least a document must reach to be kept: the cut's score and, once positions decide a
/// tie, the cut's position.
#[derive(Clone, Copy, Debug)]
struct Cut {
    score: Score,
    position: Option<u64>,
}

/// The best `limit` documents `query` matches and every document tied with the last of them
/// (see the module's documentation), in no particular order: the caller reads their places
/// and sorts by [`crate::search::rank`].
pub(crate) fn best(
    searcher: &Searcher,
    fields: &Fields,
    query: &dyn Query,
    limit: usize,
) -> tantivy::Result<Vec<Candidate>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let position = searcher.schema().get_field_name(fields.position).to_owned();
    let mut kept = searcher.search(query, &Top { limit, position: position.clone() })?;
    // Each segment kept its own best; across segments the same selection applies.
    let mut columns: Vec<Option<Arc<dyn ColumnValues<u64>>>> = vec![None; searcher.segment_readers().len()];
    let mut failed = None;
    select(&mut kept, limit, |address| {
        let ordinal = address.segment_ord as usize;
        if columns[ordinal].is_none() {
            match open(searcher.segment_reader(address.segment_ord).fast_fields(), &position) {
                Ok(column) => columns[ordinal] = Some(column),
                Err(e) => {
                    failed = Some(e);
                    return 0;
                }
            }
        }
        columns[ordinal].as_ref().map_or(0, |column| column.get_val(address.doc_id))
    });
    failed.map_or(Ok(kept), Err)
}

/// A record's position column, a document without one reading as 0.
fn open(fast: &FastFieldReaders, position: &str) -> tantivy::Result<Arc<dyn ColumnValues<u64>>> {
    Ok(fast.u64(position)?.first_or_default_col(0))
}

/// Keeps the best `limit` of `kept` and those tied with the last of them: by score alone while
/// at most [`TIES_KEPT`] more tie, else by score and then position (`position` reads it for
/// the tied ones). Returns the cut, or `None` while `limit` are not yet reached.
fn select(
    kept: &mut Vec<Candidate>,
    limit: usize,
    mut position: impl FnMut(DocAddress) -> u64,
) -> Option<Cut> {
    if kept.len() < limit || limit == 0 {
        return None;
    }
    kept.sort_unstable_by(|a, b| b.score.total_cmp(&a.score));
    let cut = kept[limit - 1].score;
    let tied_end = kept.partition_point(|c| c.score.total_cmp(&cut) != Ordering::Less);
    kept.truncate(tied_end);
    if kept.len() <= limit.saturating_add(TIES_KEPT) {
        return Some(Cut { score: cut, position: None });
    }
    let above = kept.partition_point(|c| c.score.total_cmp(&cut) == Ordering::Greater);
    let tied = &mut kept[above..];
    for candidate in tied.iter_mut() {
        if candidate.position.is_none() {
            candidate.position = Some(position(candidate.address));
        }
    }
    tied.sort_unstable_by_key(|c| std::cmp::Reverse(c.position));
    // `above < limit`, since the `limit`th scores at the cut.
    let floor = tied[limit - above - 1].position;
    let end = above + tied.partition_point(|c| c.position >= floor);
    kept.truncate(end);
    Some(Cut { score: cut, position: floor })
}

/// The collector of [`best`]; what it returns still needs the selection across segments.
struct Top {
    limit: usize,
    /// The name of the position column.
    position: String,
}

impl Collector for Top {
    type Fruit = Vec<Candidate>;
    type Child = SegmentTop;

    fn for_segment(&self, segment: SegmentOrdinal, reader: &SegmentReader) -> tantivy::Result<SegmentTop> {
        Ok(SegmentTop {
            limit: self.limit,
            segment,
            fast: reader.fast_fields().clone(),
            name: self.position.clone(),
            column: None,
            failed: None,
            kept: Vec::new(),
            capacity: self.limit.saturating_add(TIES_KEPT).saturating_mul(2),
            cut: None,
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Vec<Candidate>>) -> tantivy::Result<Vec<Candidate>> {
        Ok(fruits.into_iter().flatten().collect())
    }

    /// As tantivy's own top-k collector does: through `for_each_pruning`, whose scorer may skip
    /// blocks of documents that cannot reach the threshold returned.
    fn collect_segment(
        &self,
        weight: &dyn Weight,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<Vec<Candidate>> {
        let mut top = self.for_segment(segment, reader)?;
        let alive = reader.alive_bitset();
        weight.for_each_pruning(Score::MIN, reader, &mut |doc, score| {
            if alive.is_none_or(|alive| alive.is_alive(doc)) {
                top.offer(doc, score);
            }
            top.threshold()
        })?;
        if let Some(e) = top.failed.take() {
            return Err(e);
        }
        Ok(top.harvest())
    }
}

/// One segment's part of [`Top`].
struct SegmentTop {
    limit: usize,
    segment: SegmentOrdinal,
    fast: FastFieldReaders,
    name: String,
    column: Option<Arc<dyn ColumnValues<u64>>>,
    /// Opening the column failed: reported once the segment is read.
    failed: Option<tantivy::TantivyError>,
    kept: Vec<Candidate>,
    /// How many are kept before the next selection.
    capacity: usize,
    cut: Option<Cut>,
}

impl SegmentTop {
    fn offer(&mut self, doc: DocId, score: Score) {
        let mut position = None;
        if let Some(cut) = self.cut {
            match score.total_cmp(&cut.score) {
                Ordering::Less => return,
                Ordering::Equal => {
                    if let Some(floor) = cut.position {
                        let at = self.position(doc);
                        if at < floor {
                            return;
                        }
                        position = Some(at);
                    }
                }
                Ordering::Greater => {}
            }
        }
        self.kept.push(Candidate { score, address: DocAddress::new(self.segment, doc), position });
        if self.kept.len() >= self.capacity {
            self.reselect();
        }
    }

    fn reselect(&mut self) {
        let mut kept = std::mem::take(&mut self.kept);
        let limit = self.limit;
        self.cut = select(&mut kept, limit, |address| self.position(address.doc_id));
        self.kept = kept;
        // Blocks of one record tied at the cut are all kept, however many: the next selection
        // waits until as many more have come.
        self.capacity = self.capacity.max(self.kept.len().saturating_mul(2));
    }

    /// What the scorer may skip: every document scoring below the cut.
    fn threshold(&self) -> Score {
        self.cut.map_or(Score::MIN, |cut| cut.score.next_down())
    }

    fn position(&mut self, doc: DocId) -> u64 {
        if self.column.is_none() {
            match open(&self.fast, &self.name) {
                Ok(column) => self.column = Some(column),
                Err(e) => {
                    self.failed = Some(e);
                    return 0;
                }
            }
        }
        self.column.as_ref().map_or(0, |column| column.get_val(doc))
    }
}

impl SegmentCollector for SegmentTop {
    type Fruit = Vec<Candidate>;

    fn collect(&mut self, doc: DocId, score: Score) {
        self.offer(doc, score);
    }

    fn harvest(mut self) -> Vec<Candidate> {
        self.reselect();
        self.kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Candidates of one segment: (score, position) for documents 0, 1, 2, ….
    fn candidates(scores: &[(f32, u64)]) -> Vec<Candidate> {
        (0..scores.len())
            .map(|doc| Candidate {
                score: scores[doc].0,
                address: DocAddress::new(0, doc as DocId),
                position: None,
            })
            .collect()
    }

    /// The best `limit` by score, then position (newest first), as a sorted list of documents.
    fn expected(scores: &[(f32, u64)], limit: usize) -> Vec<DocId> {
        let mut all: Vec<DocId> = (0..scores.len() as DocId).collect();
        all.sort_by(|&a, &b| {
            let (a, b) = (scores[a as usize], scores[b as usize]);
            b.0.total_cmp(&a.0).then(b.1.cmp(&a.1))
        });
        all.truncate(limit);
        all.sort_unstable();
        all
    }

    fn selected(scores: &[(f32, u64)], limit: usize) -> (Vec<DocId>, usize) {
        let mut kept = candidates(scores);
        let mut read = 0;
        select(&mut kept, limit, |address| {
            read += 1;
            scores[address.doc_id as usize].1
        });
        let mut docs: Vec<DocId> = kept.iter().map(|c| c.address.doc_id).collect();
        docs.sort_unstable();
        (docs, read)
    }

    #[test]
    fn distinct_scores_need_no_position() {
        let scores: Vec<(f32, u64)> = (0..100).map(|i| ((i * 37 % 100) as f32, i)).collect();
        let (docs, read) = selected(&scores, 10);
        assert_eq!(docs, expected(&scores, 10));
        assert_eq!(read, 0);
    }

    #[test]
    fn a_few_ties_at_the_cut_are_all_kept_for_the_sort() {
        // Ten above the cut's score but one, and five tied at it: all fifteen kept, unread.
        let mut scores: Vec<(f32, u64)> = (0..9).map(|i| (10.0 + i as f32, i)).collect();
        scores.extend((0..5).map(|i| (2.0, 100 + i)));
        scores.extend((0..50).map(|i| (1.0, 200 + i)));
        let (docs, read) = selected(&scores, 10);
        assert_eq!(docs, (0..14).collect::<Vec<_>>());
        assert_eq!(read, 0);
    }

    #[test]
    fn many_ties_at_the_cut_go_to_the_newest_records() {
        // Three ahead, then 500 documents of one score whose positions are shuffled, two blocks
        // of the record at the cut's position sharing it.
        let mut scores: Vec<(f32, u64)> = (0..3).map(|i| (5.0, 10_000 + i)).collect();
        scores.extend((0..500u64).map(|i| (1.0, i * 7919 % 500)));
        scores.push((1.0, 493));
        let (docs, read) = selected(&scores, 10);
        let mut want = expected(&scores, 10);
        // The best ten end at position 493, whose second block is kept beside it.
        want.push(503);
        want.sort_unstable();
        assert_eq!(docs, want);
        assert_eq!(read, 501);
    }

    #[test]
    fn fewer_than_the_limit_are_all_kept() {
        let scores = [(1.0, 3), (1.0, 2)];
        assert_eq!(selected(&scores, 10).0, [0, 1]);
        assert_eq!(selected(&scores, 0).0, [0, 1]);
    }
}
