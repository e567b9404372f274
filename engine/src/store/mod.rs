//! The store: the handle over a redb file (opened in `store/opening.rs`, through `open.rs`), its
//! group commit, and the public read calls and forks (appends in `store/append.rs`).

use std::any::Any;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use redb::{Database, ReadOnlyDatabase, ReadTransaction, ReadableDatabase, TransactionError};

use crate::error::{CloseError, Failure, ForkError, ReadError};
use crate::group::GroupCommit;
use crate::log::overlay::Layer;
use crate::log::{ChangeMark, SharedLog};
use crate::open::log_path;
use crate::options::StoreOptions;
use crate::prepare::check_session_name;
use crate::read::{SessionInfo, Snapshot};
use crate::reply::reply;
use crate::verify::{verify, VerifyReport};
use crate::watermark::Watermark;
use crate::writer::{Request, Shared};

mod append;
pub(crate) mod cursors;
pub(crate) mod open;
mod opening;
pub(crate) mod options;
pub(crate) mod storage;
pub(crate) mod sync;
pub(crate) mod tables;
pub(crate) mod upgrade;

/// An open annal store: one redb file holding every session's journal, and a log beside it.
///
/// `Store` is `Send + Sync`: share it between threads (for example in an `Arc`). Appends from
/// all threads are committed in groups (one frame of the log and one sync each); reads run in
/// parallel on snapshots. Several processes may open the same file at once and share its log,
/// unless it is opened [`Sharing::Exclusive`](crate::options::Sharing::Exclusive), which has
/// the log to itself and folds and removes it at close.
pub struct Store {
    db: Db,
    path: Option<PathBuf>,
    options: StoreOptions,
    shared: Arc<Shared>,
    /// The writer; none for a store opened read-only.
    commit: Option<Arc<GroupCommit>>,
    /// Opened read-only, but writable underneath (to put back its durability log or upgrade
    /// its format first): it refuses writes all the same.
    writes_refused: bool,
    /// The log, shared with the other processes that have the store open unless it is opened
    /// alone; its frames are laid over every snapshot. None on custom storage without a log.
    log: Option<Arc<SharedLog>>,
    /// Per-store state of the layers above the journal (the projections' cache, this
    /// process's compaction claims), each made on first use. The journal holds them without
    /// knowing their types, so it depends on no layer above it.
    extensions: Mutex<Vec<Arc<dyn Any + Send + Sync>>>,
    /// Bytes this handle submitted to the journal and blob tables: a load makes `close`
    /// compact the file.
    appended_bytes: AtomicU64,
}

/// A handle that appended this much compacts the file when it closes: redb grows a file by
/// regions ahead of use, so a load leaves a long tail of reserved, unwritten pages.
const COMPACT_AFTER_BYTES: u64 = 16 << 20;

/// The redb handle: writable, or read-only (no transaction, lock or sync ever writes the file).
#[derive(Clone)]
enum Db {
    Writable(Arc<Database>),
    ReadOnly(Arc<ReadOnlyDatabase>),
}

impl Db {
    fn begin_read(&self) -> Result<ReadTransaction, TransactionError> {
        match self {
            Db::Writable(db) => db.begin_read(),
            Db::ReadOnly(db) => db.begin_read(),
        }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish_non_exhaustive()
    }
}

#[cfg(test)]
impl Store {
    /// Folds the log behind its tail first when `fold` (as the checkpoint thread does when
    /// appenders ask), then returns the last group of the log redb's last commit holds.
    pub(crate) fn log_applied_after(&self, fold: bool) -> u64 {
        let (Db::Writable(db), Some(log)) = (&self.db, &self.log) else { panic!("not writable with a log") };
        let wait = std::time::Duration::from_secs(10);
        assert!(!fold || crate::log::commit::fold_behind(db, log, wait).is_ok(), "the fold behind failed");
        crate::log::log_applied(&db.begin_read().expect("a read")).expect("log_applied")
    }
}

impl Store {
    /// A read transaction on the store's file, without the shared log's frames: for what only
    /// redb holds (sync cursors, compaction claims and checkpoints).
    pub(crate) fn begin_read(&self) -> Result<ReadTransaction, TransactionError> {
        self.db.begin_read()
    }

    /// A read transaction with the shared log's frames above it: one moment of the store.
    pub(crate) fn paired(&self) -> Result<(ReadTransaction, Option<Layer>), Failure> {
        self.paired_marked().map(|(txn, layer, _)| (txn, layer))
    }

    /// [`Store::paired`], with the mark of that moment (none without a log).
    fn paired_marked(&self) -> Result<(ReadTransaction, Option<Layer>, Option<ChangeMark>), Failure> {
        match &self.log {
            Some(log) => {
                let paired = log.pair(|| self.db.begin_read().map_err(Failure::from))?;
                Ok((paired.txn, paired.layer, Some(paired.mark)))
            }
            None => Ok((self.db.begin_read()?, None, None)),
        }
    }

    /// Whether the store was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.commit.is_none() || self.writes_refused
    }

    /// Hands a request to group commit; its answer comes on the request's reply slot, which
    /// is dropped unanswered once the store has closed.
    pub(crate) fn submit(&self, request: Request) {
        // Read-only: the request is dropped unanswered, which its caller sees as closed.
        if let (Some(commit), false) = (&self.commit, self.writes_refused) {
            commit.submit(request);
        }
    }

    /// This store's `T`, made on first use: the state a layer above the journal keeps per store.
    pub(crate) fn extension<T: Any + Default + Send + Sync>(&self) -> Arc<T> {
        // A panic elsewhere cannot leave the list half-written: it only ever grows by a push.
        let mut extensions = self.extensions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = extensions.iter().find_map(|e| Arc::clone(e).downcast::<T>().ok()) {
            return found;
        }
        let made = Arc::new(T::default());
        extensions.push(Arc::clone(&made) as Arc<dyn Any + Send + Sync>);
        made
    }

    /// The store file, unless on custom storage.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The options the store was opened with.
    pub fn options(&self) -> &StoreOptions {
        &self.options
    }

    /// Forks `session` at `at`: a new session `new_name` that reads the parent's records
    /// `[0, at)` and then its own. O(1): nothing is copied.
    ///
    /// # Errors
    /// [`ForkError`].
    pub fn fork(&self, session: &str, at: u64, new_name: &str) -> Result<SessionInfo, ForkError> {
        if self.is_read_only() {
            return Err(ForkError::ReadOnly);
        }
        if self.shared.poisoned.load(Ordering::Acquire) {
            return Err(ForkError::Poisoned);
        }
        check_session_name(new_name, &self.options.limits)
            .map_err(|reason| ForkError::InvalidSessionName { name: new_name.to_owned(), reason })?;
        let (reply, answer) = reply();
        let request = Request::Fork { parent: session.to_owned(), at, name: new_name.to_owned(), reply };
        self.submit(request);
        answer.recv().map_err(|_| ForkError::Closed)?
    }

    /// A consistent read view of everything committed so far.
    ///
    /// # Errors
    /// I/O or corruption.
    pub fn snapshot(&self) -> Result<Snapshot, ReadError> {
        let (txn, layer, mark) = self.paired_marked()?;
        Ok(Snapshot::layered(txn, layer)?.marked(mark))
    }

    /// What the journal holds now, as a mark to compare with a snapshot's ([`Snapshot::mark`]):
    /// equal marks mean no session was appended to, forked or made between them, by any
    /// process. None when that cannot be told without waiting (another thread or process holds
    /// the log's lock to append or checkpoint) or the store has no log: the caller then reads a
    /// snapshot. It never waits for a lock or a sync and reads nothing of the store file, only
    /// frames other processes wrote since, so a caller that must not block may ask.
    ///
    /// # Errors
    /// I/O, or a log that does not read.
    pub fn mark_now(&self) -> Result<Option<ChangeMark>, ReadError> {
        match &self.log {
            Some(log) => Ok(log.try_mark()?),
            None => Ok(None),
        }
    }

    /// Recomputes content hashes and hash chains of one session, or of every session and blob.
    ///
    /// # Errors
    /// [`ReadError::UnknownSession`], or I/O. Damage is reported in the [`VerifyReport`].
    pub fn verify(&self, session: Option<&str>) -> Result<VerifyReport, ReadError> {
        verify(&self.snapshot()?, session)
    }

    /// Whether an earlier I/O error stopped writes.
    pub fn is_poisoned(&self) -> bool {
        self.shared.poisoned.load(Ordering::Acquire)
    }

    /// How far this process knows the store-wide position stream durable: every position below
    /// it was committed (by this process's writer, or found committed at open). Commits by other
    /// processes are seen through [`Snapshot::position_end`].
    pub fn durable_position(&self) -> &Watermark {
        &self.shared.watermark
    }

    /// A feed of this process's commits: after each one, the store's position end. What the
    /// search indexer tails; a feed that is dropped is forgotten.
    pub fn commit_feed(&self) -> CommitFeed {
        let (sender, receiver) = crossbeam_channel::unbounded();
        self.shared.feeds.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(sender);
        CommitFeed { receiver }
    }

    /// Waits for the writer and closes the file, reporting any error that dropping would ignore.
    ///
    /// # Errors
    /// [`CloseError`] if redb cannot close the file cleanly.
    pub fn close(mut self) -> Result<(), CloseError> {
        self.finish();
        let db = self.db.clone();
        drop(self);
        let failed = |e: redb::DatabaseError| CloseError { source: io::Error::other(e.to_string()) };
        // Snapshots still alive keep the database open; it closes when the last one drops.
        match db {
            Db::Writable(db) => Arc::try_unwrap(db).map_or(Ok(()), |db| db.close().map_err(failed)),
            Db::ReadOnly(db) => Arc::try_unwrap(db).map_or(Ok(()), |db| db.close().map_err(failed)),
        }
    }

    /// Stops the writer and, after a load, compacts the file if nothing else holds it open in
    /// this process (a snapshot still alive keeps it as it is).
    fn finish(&mut self) {
        self.stop_writer();
        self.commit = None;
        let loaded = self.appended_bytes.swap(0, Ordering::Relaxed) >= COMPACT_AFTER_BYTES
            && !self.shared.poisoned.load(Ordering::Acquire);
        if let (true, Db::Writable(db)) = (loaded, &mut self.db) {
            if let Some(db) = Arc::get_mut(db) {
                // Best effort: another process reading the file refuses it, and the file is
                // whole either way (redb compacts with two-phase commits).
                let _ = db.compact();
            }
        }
    }

    fn stop_writer(&mut self) {
        let Some(commit) = &self.commit else { return };
        commit.close();
        // The closing checkpoint emptied the log of a store opened alone: a closed store is one
        // file. A shared store's log is never removed (other processes may have it open).
        if self.options.sharing != crate::options::Sharing::Exclusive {
            return;
        }
        if let Some(log) = self.path.as_deref().map(log_path) {
            if std::fs::metadata(&log).is_ok_and(|meta| meta.len() == 0) {
                let _ = std::fs::remove_file(log);
            }
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Commit notifications from a store's writer; see [`Store::commit_feed`].
#[derive(Debug)]
pub struct CommitFeed {
    receiver: crossbeam_channel::Receiver<u64>,
}

impl CommitFeed {
    /// Waits up to `timeout` for the next commit and returns the newest position end seen
    /// (later notifications already queued are folded in). `None` on timeout or if the store
    /// closed.
    pub fn next(&self, timeout: std::time::Duration) -> Option<u64> {
        let first = self.receiver.recv_timeout(timeout).ok()?;
        Some(self.receiver.try_iter().fold(first, u64::max))
    }
}
