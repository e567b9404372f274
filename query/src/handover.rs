//! The writer lock and its handover between processes.
//!
//! Any number of processes may have a store and its index open; tantivy lets one of them hold
//! the index writer (a lock file in the index folder, released by the OS when its holder
//! exits or crashes). The holder indexes for everyone. The others search what has been
//! committed, watching `meta.json` for new commits, and try to take the writer each time they
//! look; the first to find it free takes over from the position in the last commit's payload.
//!
//! **Invariant:** a process that takes the writer reads the payload after taking it, so it
//! continues exactly where the previous holder's last commit ended: nothing is indexed twice,
//! nothing is skipped. As a guard, taking the writer deletes any document at or past that
//! position (there should be none) before anything is added: delete-before-add for the whole
//! range the new holder is about to index, in one operation.

use std::time::{Duration, Instant};

use std::ops::Bound;

use tantivy::indexer::{IndexWriterOptions, NoMergePolicy};
use tantivy::query::RangeQuery;
use tantivy::{IndexWriter, Term};

use crate::clock::Clock;
use crate::error::IndexError;
use crate::folder::{payload, Folder};
use crate::schema::BlockDocument;

/// The smallest memory budget tantivy accepts for an indexing thread.
const WRITER_MEMORY_MIN_BYTES: usize = 15_000_000;

/// The most segments an index keeps once a load is over: every search opens each segment's
/// files, so a CLI search pays for each one.
pub(crate) const SEGMENTS_MAX: usize = 4;

/// The fewest documents a run of like-sized segments must hold for the end of a load to merge
/// it whole (see [`whole_merge_count`]).
pub(crate) const WHOLE_MERGE_DOCS_MIN: u64 = 20_000;

/// How far [`Writing::tidy`] merges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tidy {
    /// After a load and when the writer is let go: like-sized segments merged whole, and at
    /// most [`SEGMENTS_MAX`] remain (see [`whole_merge_count`]).
    Whole,
    /// Between live commits: only small segments of like size.
    Live,
}

/// How many of the smallest segments (`sizes` ascending) a live commit merges: a run from the
/// smallest (see [`doubling_run`]), and no more than bring the count to [`SEGMENTS_MAX`]. The
/// large segments of a load stay as they are until the writer is let go.
pub(crate) fn live_merge_count(sizes: &[u64]) -> usize {
    let needed = sizes.len().saturating_sub(SEGMENTS_MAX - 1);
    doubling_run(&sizes[..needed])
}

/// How many of the smallest segments (`sizes` ascending) the end of a load merges: the longest
/// run from the smallest whose largest segment is at most twice the rest of it, so an import
/// into a new store leaves one segment (a search opens each segment's files and looks each term
/// up in each), and at least enough that at most [`SEGMENTS_MAX`] remain. A merged segment is
/// at least 1.5 times the largest it absorbs, so a document is still rewritten O(log n) times,
/// and a small load into a large index merges only its own small segments. A run of fewer than
/// [`WHOLE_MERGE_DOCS_MIN`] documents is left to the count alone: merging it would cost more in
/// the merge's syncs (a tenth of a second on a small import) than its searches gain.
pub(crate) fn whole_merge_count(sizes: &[u64]) -> usize {
    let needed = sizes.len().saturating_sub(SEGMENTS_MAX - 1);
    let mut before = 0u64;
    let mut longest = 0;
    for (index, &size) in sizes.iter().enumerate() {
        let with = before.saturating_add(size);
        if index > 0 && size <= before.saturating_mul(2) && with >= WHOLE_MERGE_DOCS_MIN {
            longest = index + 1;
        }
        before = with;
    }
    let count = longest.max(needed);
    if count < 2 {
        0
    } else {
        count
    }
}

/// The run from the smallest of `sizes` (ascending), each next segment taken while it is at
/// most twice the run so far; 0 for a run of one (one segment alone is no merge). Segments thus
/// double before they are merged again, so a document is rewritten O(log n) times however many
/// commits and loads add to the index.
fn doubling_run(sizes: &[u64]) -> usize {
    let mut run = 0;
    let mut run_docs = 0u64;
    for &size in sizes {
        if run > 0 && size > run_docs.saturating_mul(2) {
            break;
        }
        run += 1;
        run_docs = run_docs.saturating_add(size);
    }
    if run < 2 {
        0
    } else {
        run
    }
}

/// This process holds the index writer.
pub(crate) struct Writing {
    writer: IndexWriter,
    /// Every position below this has its documents added (committed or not).
    pub(crate) indexed: u64,
    /// Every position below this is committed.
    pub(crate) committed: u64,
    last_commit: Option<Instant>,
    /// What `last_commit` is read from.
    clock: Clock,
    /// Test hook: abort the process instead of committing.
    abort_before_commit: bool,
}

impl std::fmt::Debug for Writing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writing").field("indexed", &self.indexed).field("committed", &self.committed).finish()
    }
}

/// How the writer is configured.
#[derive(Clone, Debug)]
pub(crate) struct WriterSettings {
    pub(crate) memory_bytes: usize,
    pub(crate) threads: usize,
    pub(crate) abort_before_commit: bool,
    pub(crate) clock: Clock,
}

/// Takes the writer if it is free.
pub(crate) fn try_take(folder: &Folder, settings: &WriterSettings) -> Result<Option<Writing>, IndexError> {
    // Two indexing threads keep up with the journal reader; more gain little.
    let threads = match settings.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(2)),
        n => n,
    };
    let options = IndexWriterOptions::builder()
        .num_worker_threads(threads)
        .memory_budget_per_thread((settings.memory_bytes / threads).max(WRITER_MEMORY_MIN_BYTES))
        .num_merge_threads(1)
        .build();
    let writer = match folder.index.writer_with_options(options) {
        Ok(writer) => writer,
        Err(err) => {
            return match IndexError::tantivy(&folder.path, err) {
                IndexError::Busy { .. } => Ok(None),
                other => Err(other),
            }
        }
    };
    // Read after taking the lock: whoever held it before has committed all it ever will.
    let (position, _) = folder.committed_position()?;
    if position > 0 {
        // Deletes apply to documents added before them, so this clears the range about to be
        // indexed and nothing of what follows.
        let range = RangeQuery::new(
            Bound::Included(Term::from_field_u64(folder.fields.position, position)),
            Bound::Unbounded,
        );
        writer.delete_query(Box::new(range)).map_err(|e| IndexError::tantivy(&folder.path, e))?;
    }
    // Merges are chosen by `tidy`, between commits, never by tantivy in the background: a
    // background merge during a load rewrites segments the next commit makes obsolete, and one
    // still running would refuse the merge `tidy` asks for.
    writer.set_merge_policy(Box::new(NoMergePolicy));
    Ok(Some(Writing {
        writer,
        indexed: position,
        committed: position,
        last_commit: None,
        clock: settings.clock.clone(),
        abort_before_commit: settings.abort_before_commit,
    }))
}

impl Writing {
    /// Adds the documents of the records at positions up to `next` (exclusive).
    pub(crate) fn add(
        &mut self,
        folder: &Folder,
        documents: Vec<BlockDocument>,
        next: u64,
    ) -> Result<(), IndexError> {
        for document in documents {
            self.writer.add_document(document.document).map_err(|e| IndexError::tantivy(&folder.path, e))?;
        }
        self.indexed = self.indexed.max(next);
        Ok(())
    }

    /// Removes every document (a rebuild); committed with the next commit.
    pub(crate) fn clear(&mut self, folder: &Folder) -> Result<(), IndexError> {
        self.writer.delete_all_documents().map_err(|e| IndexError::tantivy(&folder.path, e))?;
        self.indexed = 0;
        self.committed = 0;
        Ok(())
    }

    /// Whether added documents wait for a commit.
    pub(crate) fn is_dirty(&self) -> bool {
        self.indexed > self.committed
    }

    /// How long until a commit is allowed (commits are at most one per `interval`).
    pub(crate) fn until_commit(&self, interval: Duration) -> Duration {
        self.last_commit.map_or(Duration::ZERO, |at| interval.saturating_sub(self.clock.since(at)))
    }

    /// Merges the smallest committed segments into one and waits for the merge; returns
    /// whether it merged. A merge keeps the last commit's payload, so the indexed position is
    /// unchanged. [`Tidy::Whole`] leaves at most [`SEGMENTS_MAX`]; [`Tidy::Live`] merges only
    /// small segments of like size (see [`live_merge_count`]), so a live index never rewrites
    /// a large segment to absorb one commit.
    pub(crate) fn tidy(&mut self, folder: &Folder, tidy: Tidy) -> Result<bool, IndexError> {
        let tantivy = |e| IndexError::tantivy(&folder.path, e);
        let mut segments = folder.index.searchable_segment_metas().map_err(tantivy)?;
        segments.sort_by_key(|meta| meta.num_docs());
        let sizes: Vec<u64> = segments.iter().map(|meta| u64::from(meta.num_docs())).collect();
        let count = match tidy {
            Tidy::Whole => whole_merge_count(&sizes),
            Tidy::Live => live_merge_count(&sizes),
        };
        if count < 2 {
            return Ok(false);
        }
        let merged: Vec<_> = segments[..count].iter().map(|meta| meta.id()).collect();
        self.writer.merge(&merged).wait().map_err(tantivy)?;
        Ok(true)
    }

    /// Deletes the files of segments nothing uses any more. tantivy keeps a segment's files
    /// while a searcher of this process holds it, so this runs after the reader has reloaded:
    /// a process that exits after a merge then leaves only the segments the index uses.
    pub(crate) fn collect_garbage(&self, folder: &Folder) -> Result<(), IndexError> {
        self.writer.garbage_collect_files().wait().map_err(|e| IndexError::tantivy(&folder.path, e))?;
        Ok(())
    }

    /// Merges every segment into one and waits for it, then lets go of the writer: after a
    /// rebuild, one segment is the smallest index and the fastest to search (each indexing
    /// thread writes segments of its own). The merge keeps the last commit's payload.
    pub(crate) fn merge_all(mut self, folder: &Folder) -> Result<(), IndexError> {
        let tantivy = |e| IndexError::tantivy(&folder.path, e);
        let segments = folder.index.searchable_segment_ids().map_err(tantivy)?;
        if segments.len() > 1 {
            self.writer.merge(&segments).wait().map_err(tantivy)?;
        }
        self.writer.wait_merging_threads().map_err(tantivy)
    }

    /// Commits what was added, with the indexed position as payload.
    pub(crate) fn commit(&mut self, folder: &Folder) -> Result<u64, IndexError> {
        if self.abort_before_commit {
            // A crash between adding documents and committing them, for the crash tests.
            std::process::abort();
        }
        let mut prepared = self.writer.prepare_commit().map_err(|e| IndexError::tantivy(&folder.path, e))?;
        prepared.set_payload(&payload(self.indexed));
        prepared.commit().map_err(|e| IndexError::tantivy(&folder.path, e))?;
        self.committed = self.indexed;
        self.last_commit = Some(self.clock.now());
        Ok(self.committed)
    }
}

#[cfg(test)]
mod tests {
    use super::{live_merge_count, whole_merge_count};

    #[test]
    fn live_commits_merge_small_segments_of_like_size_only() {
        // Four large segments from a load and one commit: nothing large is rewritten.
        assert_eq!(live_merge_count(&[1, 90_000, 100_000, 110_000, 120_000]), 0);
        assert_eq!(live_merge_count(&[1, 1, 90_000, 100_000, 110_000, 120_000]), 2);
        // A run grows while each next segment is at most twice it.
        assert_eq!(live_merge_count(&[1, 1, 2, 3, 100, 200, 300]), 4);
        assert_eq!(live_merge_count(&[1, 2, 7, 100, 200, 300]), 2);
        // Never more than needed to bring the count to the most an index keeps.
        assert_eq!(live_merge_count(&[1, 1, 1, 1, 1, 1]), 3);
        assert_eq!(live_merge_count(&[5, 5, 5, 5]), 0);
        assert_eq!(live_merge_count(&[]), 0);
    }

    #[test]
    fn the_end_of_a_load_merges_like_sized_segments_whole_and_leaves_at_most_four() {
        // An import into a new store: one segment, the small last commits included.
        assert_eq!(whole_merge_count(&[63_714, 63_726, 64_248, 190_833]), 4);
        assert_eq!(whole_merge_count(&[227, 456, 62_635, 62_743, 63_105, 64_416, 64_455, 64_484]), 8);
        // A small load into a large index: the small segments only, once they are worth it.
        assert_eq!(whole_merge_count(&[9_000, 15_000, 1_000_000]), 2);
        assert_eq!(whole_merge_count(&[3_000, 5_000, 1_000_000]), 0);
        // A small index is merged only to keep at most four.
        assert_eq!(whole_merge_count(&[5, 5, 5]), 0);
        assert_eq!(whole_merge_count(&[5, 5, 5, 5, 5]), 2);
        assert_eq!(whole_merge_count(&[3_000, 1_000_000]), 0);
        // However unlike their sizes, no more than four remain.
        assert_eq!(whole_merge_count(&[1, 10, 100, 1_000, 10_000, 100_000]), 3);
        assert_eq!(whole_merge_count(&[7]), 0);
        assert_eq!(whole_merge_count(&[]), 0);
    }
}
