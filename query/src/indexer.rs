//! The indexer thread: tails the store's position stream and turns each committed record into
//! block documents.
//!
//! It is woken by the store's commit feed (this process's appends, forwarded over a crossbeam
//! channel) and polls the journal's end every `poll_interval` for other processes' appends.
//! While it holds the writer it adds documents as soon as records are committed and commits at
//! most once per `commit_interval`, each commit carrying the indexed position as its payload.
//! While another process holds the writer it follows that process's commits and tries to take
//! the writer over on each poll (see `handover.rs`). A process takes the writer only when the
//! journal holds records its index does not: until then it only follows.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use annal_engine::{PositionEntry, ReadError, Snapshot, Store};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use tantivy::IndexReader;

use crate::clock::Clock;
use crate::error::{IndexError, WaitError};
use crate::folder::Folder;
use crate::handover::{try_take, Tidy, WriterSettings, Writing};
use crate::query::QueryReader;
use crate::schema::{record_documents, BlockDocument};

/// Positions read from the journal per batch.
const BATCH_POSITIONS: usize = 512;

/// A load is over once nobody has noted one for this long; the index then commits at the
/// live interval and merges its segments down.
const LOAD_QUIET: Duration = Duration::from_secs(1);

/// A backlog of this many positions is a load whoever wrote it (a sync's first pass, a
/// follower catching up): live appends arrive a few at a time.
const LOAD_BACKLOG_POSITIONS: u64 = 4 * BATCH_POSITIONS as u64;

/// How long the commit feed lets appends gather before it tells the indexer of them again.
const GATHER: Duration = Duration::from_millis(10);

/// Messages to the indexer thread.
#[derive(Debug)]
pub(crate) enum Control {
    /// This process committed appends.
    Committed,
    /// Somebody waits for what is indexed: commit once caught up, even during a load.
    Flush,
    /// Close: commit what is pending and stop.
    Stop,
}

/// What waiters and `status` see.
#[derive(Clone, Debug, Default)]
pub(crate) struct Progress {
    /// Every position below this is searchable.
    pub(crate) searchable: u64,
    /// This process holds the writer.
    pub(crate) writing: bool,
    /// Why the indexer stopped, if it failed.
    pub(crate) failure: Option<(String, annal_engine::ErrorKind)>,
}

/// State shared by the index handle, searches and the indexer thread.
pub(crate) struct Shared {
    pub(crate) folder: Folder,
    pub(crate) reader: IndexReader,
    pub(crate) queries: QueryReader,
    progress: Mutex<Progress>,
    changed: Condvar,
    /// When a bulk load last said it was going on (see [`Shared::note_load`]).
    load_noted: Mutex<Option<Instant>>,
    /// A load was seen since the last tidy: the first commit after it merges down whole.
    load_seen: AtomicBool,
    /// What `load_noted` is read from.
    clock: Clock,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("folder", &self.folder).finish_non_exhaustive()
    }
}

impl Shared {
    pub(crate) fn new(folder: Folder, reader: IndexReader, searchable: u64, clock: Clock) -> Shared {
        let queries = QueryReader::new(folder.index.schema(), folder.fields);
        Shared {
            folder,
            reader,
            queries,
            progress: Mutex::new(Progress { searchable, ..Progress::default() }),
            changed: Condvar::new(),
            load_noted: Mutex::new(None),
            load_seen: AtomicBool::new(false),
            clock,
        }
    }

    /// A bulk load goes on: commits wait for the load's end, a waiter or the load interval.
    pub(crate) fn note_load(&self) {
        *self.load_noted.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(self.clock.now());
        self.load_seen.store(true, Ordering::Release);
    }

    fn loading(&self) -> bool {
        let noted = *self.load_noted.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let loading = noted.is_some_and(|at| self.clock.since(at) < LOAD_QUIET);
        if loading {
            self.load_seen.store(true, Ordering::Release);
        }
        loading
    }

    fn lock(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Updates the progress and wakes the waiters.
    pub(crate) fn publish(&self, update: impl FnOnce(&mut Progress)) {
        update(&mut self.lock());
        self.changed.notify_all();
    }

    pub(crate) fn progress(&self) -> Progress {
        self.lock().clone()
    }

    /// Waits until positions below `target` are searchable.
    pub(crate) fn wait_for(&self, target: u64, timeout: Duration) -> Result<u64, WaitError> {
        let deadline = Instant::now() + timeout;
        let mut progress = self.lock();
        loop {
            if progress.searchable >= target {
                return Ok(progress.searchable);
            }
            if let Some((reason, cause)) = &progress.failure {
                return Err(WaitError::Index(IndexError::Stopped { reason: reason.clone(), cause: *cause }));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(WaitError::Timeout { searchable: progress.searchable, target });
            }
            progress = match self.changed.wait_timeout(progress, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Commits, makes the commit searchable here and tells the waiters; outside a load, then
    /// merges segments: down to [`crate::handover::SEGMENTS_MAX`] on the first commit after a
    /// load, only small ones of like size between live commits.
    fn commit(&self, writing: &mut Writing) -> Result<(), IndexError> {
        let committed = writing.commit(&self.folder)?;
        self.reader.reload().map_err(|e| IndexError::tantivy(&self.folder.path, e))?;
        self.publish(|p| p.searchable = p.searchable.max(committed));
        if !self.loading() {
            let after_load = self.load_seen.swap(false, Ordering::AcqRel);
            self.tidy(writing, if after_load { Tidy::Whole } else { Tidy::Live })?;
        }
        Ok(())
    }

    /// Merges segments as `tidy` says, and shows the merge to searches.
    fn tidy(&self, writing: &mut Writing, tidy: Tidy) -> Result<(), IndexError> {
        if writing.tidy(&self.folder, tidy)? {
            self.reader.reload().map_err(|e| IndexError::tantivy(&self.folder.path, e))?;
            writing.collect_garbage(&self.folder)?;
        }
        Ok(())
    }
}

/// Counts of what a stretch of indexing added.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Added {
    pub(crate) documents: u64,
    pub(crate) text_bytes: u64,
}

/// The documents of the records at `entries` (consecutive positions), read in runs of one
/// session's consecutive sourceOrders so each run is one range read.
fn batch_documents(
    folder: &Folder,
    snapshot: &Snapshot,
    entries: &[PositionEntry],
    out: &mut Vec<BlockDocument>,
) -> Result<(), ReadError> {
    let mut start = 0;
    while start < entries.len() {
        let mut end = start + 1;
        while end < entries.len()
            && entries[end].session == entries[start].session
            && entries[end].source_order == entries[end - 1].source_order + 1
        {
            end += 1;
        }
        let run = &entries[start..end];
        let first = run[0].source_order;
        let mut records = snapshot.records(&run[0].session, first..first + run.len() as u64)?;
        for entry in run {
            let guard = records.next().transpose()?.ok_or_else(|| ReadError::Corrupted {
                reason: format!(
                    "position {} names sourceOrder {} of session {:?}, which is missing",
                    entry.position, entry.source_order, entry.session
                ),
            })?;
            let view = guard.view()?;
            record_documents(&folder.fields, snapshot, &entry.session, entry.position, &view, out)?;
        }
        start = end;
    }
    Ok(())
}

/// Adds the documents of positions `[writing.indexed, end)` from `snapshot`, batch by batch,
/// calling `after_batch` after each; stops early when `stop` is set.
pub(crate) fn index_range(
    folder: &Folder,
    writing: &mut Writing,
    snapshot: &Snapshot,
    end: u64,
    stop: &AtomicBool,
    mut after_batch: impl FnMut(&mut Writing) -> Result<(), IndexError>,
) -> Result<Added, IndexError> {
    let mut added = Added::default();
    let mut documents = Vec::new();
    while writing.indexed < end && !stop.load(Ordering::Acquire) {
        let entries = snapshot.positions(writing.indexed, BATCH_POSITIONS)?;
        let Some(last) = entries.last() else { break };
        let next = last.position + 1;
        batch_documents(folder, snapshot, &entries, &mut documents)?;
        added.documents += documents.len() as u64;
        added.text_bytes += documents.iter().map(|d| d.text_bytes).sum::<u64>();
        writing.add(folder, std::mem::take(&mut documents), next)?;
        after_batch(writing)?;
    }
    Ok(added)
}

/// How the thread runs.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) commit_interval: Duration,
    /// The commit interval while a bulk load goes on.
    pub(crate) load_commit_interval: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) writer: WriterSettings,
}

impl Config {
    /// The commit interval now: longer while a bulk load goes on.
    fn interval(&self, shared: &Shared) -> Duration {
        if shared.loading() {
            self.load_commit_interval
        } else {
            self.commit_interval
        }
    }
}

/// Forwards the store's commit feed into the control channel until `stop` is set (checked
/// between waits, so it ends within one wait after the index closes).
///
/// After each message it lets [`GATHER`] pass before it looks again, so the appends of a writer
/// appending a turn at a time are indexed every few turns in one pass, not one by one: each pass
/// is a snapshot and a wake-up of the indexing threads, which would compete with the writer's
/// next append for the two cores and the shared log's lock. The indexer reads the journal's end
/// itself, so one message covers every append before it; a search that waits for what is
/// appended asks the indexer directly and does not wait for this.
pub(crate) fn forward_commits(
    store: &Store,
    control: Sender<Control>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<()> {
    let feed = store.commit_feed();
    std::thread::Builder::new().name("annal-index-feed".into()).spawn(move || {
        while !stop.load(Ordering::Acquire) {
            if feed.next(Duration::from_millis(200)).is_some() {
                if control.send(Control::Committed).is_err() {
                    break;
                }
                std::thread::sleep(GATHER);
            }
        }
    })?;
    Ok(())
}

/// The indexer thread's body: runs until told to stop; a failure is published for waiters.
pub(crate) fn run(
    shared: Arc<Shared>,
    store: Arc<Store>,
    control: Receiver<Control>,
    stop: Arc<AtomicBool>,
    config: Config,
) {
    if let Err(err) = drive(&shared, &store, &control, &stop, &config) {
        shared.publish(|p| {
            p.failure = Some((err.to_string(), err.kind()));
            p.writing = false;
        });
    }
}

fn drive(
    shared: &Shared,
    store: &Store,
    control: &Receiver<Control>,
    stop: &AtomicBool,
    config: &Config,
) -> Result<(), IndexError> {
    let mut writing: Option<Writing> = None;
    let mut seen_opstamp = None;
    let mut flush = false;
    loop {
        // The writer is taken only when the journal is ahead of the index: a process that
        // opens an index to search what is already there (every CLI search) never pays for a
        // writer, its threads and its memory arena, nor waits for them at close.
        if writing.is_none() && store.snapshot()?.position_end()? > shared.progress().searchable {
            writing = try_take(&shared.folder, &config.writer)?;
            if let Some(taken) = &writing {
                // The reader may be behind the last commit of the process that held the writer.
                shared.reader.reload().map_err(|e| IndexError::tantivy(&shared.folder.path, e))?;
                let committed = taken.committed;
                shared.publish(|p| {
                    p.writing = true;
                    p.searchable = p.searchable.max(committed);
                });
            }
        }
        match writing.as_mut() {
            Some(taken) => lead(shared, store, taken, stop, config, std::mem::take(&mut flush))?,
            None => follow(shared, &mut seen_opstamp)?,
        }
        if stop.load(Ordering::Acquire) {
            break;
        }
        let timeout = match &writing {
            Some(taken) if taken.is_dirty() => {
                taken.until_commit(config.interval(shared)).min(config.poll_interval)
            }
            _ => config.poll_interval,
        };
        match control.recv_timeout(timeout) {
            Ok(Control::Stop) | Err(RecvTimeoutError::Disconnected) => break,
            Ok(Control::Flush) => flush = true,
            Ok(Control::Committed) | Err(RecvTimeoutError::Timeout) => {}
        }
    }
    if let Some(taken) = writing.as_mut() {
        if taken.is_dirty() {
            shared.commit(taken)?;
        }
        // Whatever stopped the index (the end of an import, a sync or a server), the segments
        // are merged down before the writer is let go.
        shared.tidy(taken, Tidy::Whole)?;
    }
    Ok(())
}

/// Holding the writer: index everything committed to the journal, committing when due.
fn lead(
    shared: &Shared,
    store: &Store,
    writing: &mut Writing,
    stop: &AtomicBool,
    config: &Config,
    flush: bool,
) -> Result<(), IndexError> {
    let snapshot = store.snapshot()?;
    let end = snapshot.position_end()?;
    if end.saturating_sub(writing.indexed) >= LOAD_BACKLOG_POSITIONS {
        shared.note_load();
    }
    index_range(&shared.folder, writing, &snapshot, end, stop, |writing| {
        if writing.until_commit(config.interval(shared)).is_zero() {
            shared.commit(writing)?;
        }
        Ok(())
    })?;
    if writing.is_dirty() && (flush || writing.until_commit(config.interval(shared)).is_zero()) {
        shared.commit(writing)?;
    }
    Ok(())
}

/// Another process holds the writer: pick up its commits.
fn follow(shared: &Shared, seen_opstamp: &mut Option<u64>) -> Result<(), IndexError> {
    // The payload is read before the reader reloads, so what the reader sees covers it.
    let (position, opstamp) = shared.folder.committed_position()?;
    if *seen_opstamp != Some(opstamp) {
        shared.reader.reload().map_err(|e| IndexError::tantivy(&shared.folder.path, e))?;
        *seen_opstamp = Some(opstamp);
        shared.publish(|p| p.searchable = p.searchable.max(position));
    }
    Ok(())
}
