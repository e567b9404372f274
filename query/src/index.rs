//! `SearchIndex`: the handle an embedder holds. Opening it starts the indexer thread (or, on
//! demand, the first time the index is behind); closing it commits what is pending and stops
//! the thread. `rebuild` indexes a store from nothing.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use annal_engine::Store;
use crossbeam_channel::{Receiver, Sender};
use tantivy::{ReloadPolicy, TantivyDocument};

use crate::clock::Clock;
use crate::error::{IndexError, WaitError};
use crate::folder::{folder_bytes, index_folder, Folder};
use crate::handover::{try_take, WriterSettings};
use crate::indexer::{self, forward_commits, index_range, Config, Control, Shared};
use crate::protect::Protection;

/// How a search index is opened.
#[derive(Clone, Debug)]
pub struct IndexOptions {
    /// The index folder; default `<store file>.index` beside the store.
    pub folder: Option<PathBuf>,
    /// Commits happen at most this often. Shorter: less lag between an append and its being
    /// searchable; longer: fewer, larger segments.
    pub commit_interval: Duration,
    /// Commits happen at most this often while a bulk load goes on
    /// ([`SearchIndex::note_load`]); a search waiting for the index commits at once.
    pub load_commit_interval: Duration,
    /// How often the journal's end (other processes' appends) and, when another process holds
    /// the writer, its commits are checked.
    pub poll_interval: Duration,
    /// The writer's memory budget: what it buffers before writing a segment.
    pub writer_memory_bytes: usize,
    /// tantivy indexing threads (the thread reading the journal is one more); 0, the default,
    /// is one per core, at most two.
    pub writer_threads: usize,
    /// Start the indexer thread only when it has work: when a wait finds the index behind the
    /// journal, or a load is announced. A command that opens the index to search what is
    /// already there then starts no thread at all. Off (the default), the thread starts at
    /// open and follows the journal from then on, as a long-running process wants.
    pub indexer_on_demand: bool,
    /// The time the commit policy reads (the last commit, the last noted load): the system's
    /// clock, or a [`crate::ManualClock`]'s, which lets a test end a load without waiting.
    pub clock: Clock,
    /// Crash drills only (the `crash-hooks` feature, off in every build a user gets): abort the
    /// process where a commit would happen, leaving added documents uncommitted, as a crash
    /// would.
    #[cfg(feature = "crash-hooks")]
    pub abort_before_commit: bool,
}

impl Default for IndexOptions {
    fn default() -> IndexOptions {
        IndexOptions {
            folder: None,
            commit_interval: Duration::from_millis(500),
            // A crash during a load loses at most this much indexing, which the next open
            // catches up from the journal.
            load_commit_interval: Duration::from_secs(30),
            poll_interval: Duration::from_millis(200),
            // 256 MiB made a load about 3% faster (fewer segments to merge at the end); the sync
            // benchmark's idle `--watch` memory was the same with both, but one reading of a
            // watching process's memory map found 20 MiB more with 256. Kept where it was.
            writer_memory_bytes: 64 << 20,
            // Counted when a writer is made (reading the CPU quota takes a few file reads that a
            // search-only open should not pay).
            writer_threads: 0,
            indexer_on_demand: false,
            clock: Clock::system(),
            #[cfg(feature = "crash-hooks")]
            abort_before_commit: false,
        }
    }
}

impl IndexOptions {
    fn folder_for(&self, store: &Store) -> Result<PathBuf, IndexError> {
        match (&self.folder, store.path()) {
            (Some(folder), _) => Ok(folder.clone()),
            (None, Some(file)) => Ok(index_folder(file)),
            (None, None) => Err(IndexError::NoFolder),
        }
    }

    fn writer(&self) -> WriterSettings {
        #[cfg(feature = "crash-hooks")]
        let abort_before_commit = self.abort_before_commit;
        #[cfg(not(feature = "crash-hooks"))]
        let abort_before_commit = false;
        WriterSettings {
            memory_bytes: self.writer_memory_bytes,
            threads: self.writer_threads,
            abort_before_commit,
            clock: self.clock.clone(),
        }
    }
}

/// Where an index stands.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct IndexStatus {
    /// Every store position below this is searchable.
    pub searchable: u64,
    /// Whether this process holds the index writer (and so indexes for every process).
    pub writing: bool,
    /// Documents (blocks) searchable now.
    pub documents: u64,
}

/// What a rebuild did.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RebuildSummary {
    /// Store positions (records) indexed.
    pub positions: u64,
    /// Documents (blocks) written.
    pub documents: u64,
    /// Bytes of text indexed.
    pub text_bytes: u64,
    /// What the rebuilt index takes on disk.
    pub index_bytes: u64,
    /// How long it took.
    pub elapsed: Duration,
}

/// One indexed block, as the index has it (for checks against the journal).
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct IndexedBlock {
    /// The session the record was appended to.
    pub session: String,
    /// Its sourceOrder there.
    pub source_order: u64,
    /// The block's index.
    pub block_index: u64,
}

/// The full-text index over a store's originals, kept up to date by a background thread.
///
/// Several processes may open the index of one store: one of them holds tantivy's writer and
/// indexes; the others search what it commits and take the writer over when it is free.
pub struct SearchIndex {
    pub(crate) shared: Arc<Shared>,
    pub(crate) store: Arc<Store>,
    control: Sender<Control>,
    stop: Arc<AtomicBool>,
    indexer: Mutex<Indexer>,
}

/// The indexer thread: not started yet (with what it will need), running, or stopped.
enum Indexer {
    Idle { receiver: Receiver<Control>, config: Config },
    Running(JoinHandle<()>),
    Stopped,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex").field("folder", &self.shared.folder.path).finish_non_exhaustive()
    }
}

impl SearchIndex {
    /// Opens (or creates) the index of `store` and starts its indexer thread, which catches up
    /// from the last commit and then follows the journal. A missing, damaged or outdated index
    /// folder is rebuilt from the journal.
    ///
    /// # Errors
    /// [`IndexError`]: the folder cannot be created or read, or the thread cannot start.
    pub fn open(store: Arc<Store>, options: IndexOptions) -> Result<SearchIndex, IndexError> {
        let path = options.folder_for(&store)?;
        let mut folder = Folder::open(&path, Protection::of_store(store.path()))?;
        let searchable = folder.opened_position;
        let reader = folder
            .index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| IndexError::tantivy(&path, e))?;
        folder.checked.clear();
        let shared = Arc::new(Shared::new(folder, reader, searchable, options.clock.clone()));
        let (control, receiver) = crossbeam_channel::unbounded();
        let config = Config {
            commit_interval: options.commit_interval,
            load_commit_interval: options.load_commit_interval,
            poll_interval: options.poll_interval,
            writer: options.writer(),
        };
        let index = SearchIndex {
            shared,
            store,
            control,
            stop: Arc::new(AtomicBool::new(false)),
            indexer: Mutex::new(Indexer::Idle { receiver, config }),
        };
        if !options.indexer_on_demand {
            index.start()?;
        }
        Ok(index)
    }

    /// Starts the indexer thread (and the thread that forwards this process's commits to it)
    /// unless it already runs.
    fn start(&self) -> Result<(), IndexError> {
        let mut indexer = self.indexer.lock().unwrap_or_else(PoisonError::into_inner);
        let Indexer::Idle { .. } = &*indexer else { return Ok(()) };
        let Indexer::Idle { receiver, config } = std::mem::replace(&mut *indexer, Indexer::Stopped) else {
            return Ok(());
        };
        let io = |source| IndexError::Io { path: self.shared.folder.path.clone(), source };
        forward_commits(&self.store, self.control.clone(), Arc::clone(&self.stop)).map_err(io)?;
        let (shared, store, stop) =
            (Arc::clone(&self.shared), Arc::clone(&self.store), Arc::clone(&self.stop));
        let thread = std::thread::Builder::new()
            .name("annal-indexer".into())
            .spawn(move || indexer::run(shared, store, receiver, stop, config))
            .map_err(io)?;
        *indexer = Indexer::Running(thread);
        Ok(())
    }

    /// What the index takes on disk now.
    ///
    /// # Errors
    /// If its folder cannot be read.
    pub fn size_bytes(&self) -> std::io::Result<u64> {
        folder_bytes(self.folder())
    }

    /// The index folder.
    pub fn folder(&self) -> &Path {
        &self.shared.folder.path
    }

    /// The store this index covers.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Where the index stands now.
    pub fn status(&self) -> IndexStatus {
        let progress = self.shared.progress();
        IndexStatus {
            searchable: progress.searchable,
            writing: progress.writing,
            documents: self.shared.reader.searcher().num_docs(),
        }
    }

    /// Waits until everything committed to the store so far (by any process) is searchable;
    /// returns the searchable position.
    ///
    /// # Errors
    /// [`WaitError::Timeout`] if `timeout` passes first; [`WaitError::Index`] if the indexer
    /// stopped after a failure.
    pub fn wait_searchable(&self, timeout: Duration) -> Result<u64, WaitError> {
        let target = self.store.snapshot()?.position_end()?;
        self.wait_for_position(target, timeout)
    }

    /// Waits until every store position below `position` is searchable.
    ///
    /// # Errors
    /// As [`SearchIndex::wait_searchable`].
    pub fn wait_for_position(&self, position: u64, timeout: Duration) -> Result<u64, WaitError> {
        let searchable = self.shared.progress().searchable;
        if searchable >= position {
            return Ok(searchable);
        }
        self.start()?;
        // Nudge the thread: the commit may be another handle's that the feed does not see, and
        // during a load the thread would otherwise wait for the load interval to commit.
        let _ = self.control.send(Control::Flush);
        self.shared.wait_for(position, timeout)
    }

    /// Says a bulk load (an import, a sync's first pass, a follower's catch-up) goes on: until
    /// a second passes without another note, the indexer commits at most once per
    /// [`IndexOptions::load_commit_interval`] (or when a search waits), and merges segments
    /// only once the load is over.
    pub fn note_load(&self) {
        self.shared.note_load();
        // A thread that cannot start is reported by the next wait, which tries again.
        let _ = self.start();
    }

    /// Commits what is pending, stops the indexer and releases the writer.
    ///
    /// # Errors
    /// [`IndexError::Stopped`] if the indexer had failed.
    pub fn close(mut self) -> Result<(), IndexError> {
        self.stop_thread();
        match self.shared.progress().failure {
            Some((reason, cause)) => Err(IndexError::Stopped { reason, cause }),
            None => Ok(()),
        }
    }

    fn stop_thread(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.control.send(Control::Stop);
        let indexer = std::mem::replace(
            &mut *self.indexer.lock().unwrap_or_else(PoisonError::into_inner),
            Indexer::Stopped,
        );
        if let Indexer::Running(thread) = indexer {
            let _ = thread.join();
        }
    }

    /// Rebuilds the index of `store` from the journal in this thread: every document is replaced
    /// in one commit, so searches see the old index until the new one is complete; then its
    /// segments are merged into one. `progress` is called with (positions done, positions in
    /// all) after each batch.
    ///
    /// # Errors
    /// [`IndexError::Busy`] if another process holds the index writer; I/O and journal errors.
    pub fn rebuild(
        store: &Store,
        options: &IndexOptions,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<RebuildSummary, IndexError> {
        let started = Instant::now();
        let path = options.folder_for(store)?;
        let mut folder = Folder::open(&path, Protection::of_store(store.path()))?;
        folder.checked.clear();
        let snapshot = store.snapshot()?;
        let end = snapshot.position_end()?;
        let mut writing =
            try_take(&folder, &options.writer())?.ok_or_else(|| IndexError::Busy { path: path.clone() })?;
        writing.clear(&folder)?;
        progress(0, end);
        let never = AtomicBool::new(false);
        let added = index_range(&folder, &mut writing, &snapshot, end, &never, |writing| {
            progress(writing.indexed, end);
            Ok(())
        })?;
        writing.commit(&folder)?;
        writing.merge_all(&folder)?;
        let index_bytes =
            folder_bytes(&path).map_err(|source| IndexError::Io { path: path.clone(), source })?;
        Ok(RebuildSummary {
            positions: end,
            documents: added.documents,
            text_bytes: added.text_bytes,
            index_bytes,
            elapsed: started.elapsed(),
        })
    }

    /// Every live document's block, read from its stored fields.
    ///
    /// # Errors
    /// If the index cannot be read.
    #[doc(hidden)]
    pub fn indexed_blocks(&self) -> Result<Vec<IndexedBlock>, IndexError> {
        let path = &self.shared.folder.path;
        let fields = &self.shared.folder.fields;
        let tantivy = |e| IndexError::tantivy(path, e);
        let searcher = self.shared.reader.searcher();
        let mut out = Vec::new();
        for segment in searcher.segment_readers() {
            let store =
                segment.get_store_reader(1).map_err(|e| IndexError::Io { path: path.clone(), source: e })?;
            for document in store.iter::<TantivyDocument>(segment.alive_bitset()) {
                let place = fields.place(&document.map_err(tantivy)?);
                out.push(IndexedBlock {
                    session: place.session,
                    source_order: place.order,
                    block_index: place.block,
                });
            }
        }
        out.sort();
        Ok(out)
    }
}

impl Drop for SearchIndex {
    fn drop(&mut self) {
        self.stop_thread();
    }
}
