//! [`Annal`]: one handle owning a store and its search index, with the calls an agent loop
//! makes on the journal (project, compact, fork, export, verify), each a thin delegation to
//! the engine. Appends are in `append.rs`, search and reads by id in `search.rs`, imports in
//! `import.rs`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use annal_engine::{
    CompactOptions, CompactOutcome, ProjectOptions, Projection, SessionInfo, Snapshot, Store, VerifyReport,
};
use annal_formats::{export_jsonl, export_markdown, ExportSummary};
use annal_query::SearchIndex;

use crate::{Error, Options};

/// A store and its search index, opened together: what an agent framework holds.
///
/// Every record appended through it (or by another process sharing the file) becomes
/// searchable; [`Annal::search`] waits until everything committed before the call is indexed,
/// so a search sees the turns just appended.
///
/// `Annal` is `Send + Sync`: share one (in an `Arc`) between threads. Appends from many threads
/// are committed together (group commit), each acknowledged after its commit is durable;
/// reads and searches run in parallel with them.
#[derive(Debug)]
pub struct Annal {
    pub(crate) store: Arc<Store>,
    pub(crate) path: PathBuf,
    pub(crate) options: Options,
    /// Opened with the store, or by the first call that needs it (`Options::index_eagerly`).
    pub(crate) index: Mutex<Option<Arc<SearchIndex>>>,
}

/// How a session is written out by [`Annal::export`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportFormat {
    /// annal JSONL: lossless; [`Annal::import`] reads it back with identical hashes.
    #[default]
    Jsonl,
    /// Markdown for people.
    Markdown,
}

/// What [`Annal::export`] writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// JSONL (default) or Markdown.
    pub format: ExportFormat,
    /// Mask API keys, tokens, private keys and passwords (a redacted JSONL export carries no
    /// hashes, since its text is no longer the original).
    pub redact: bool,
}

impl Annal {
    /// Opens the store at `path` (created if missing) and its search index beside it
    /// (`<path>.index`, built from the journal if missing or damaged), with default options.
    ///
    /// # Errors
    /// [`Error::Open`] if the store cannot be opened or created (a newer format, no access);
    /// [`Error::Index`] if its search index cannot be.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let dir = tempfile::tempdir()?;
    /// let annal = annal::Annal::open(dir.path().join("sessions.redb"))?;
    /// assert!(annal.sessions()?.is_empty());
    /// assert!(annal.close()?);
    /// # Ok(()) }
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Annal, Error> {
        Annal::open_with(path, &Options::default())
    }

    /// Opens the store at `path` (created if missing) with `options`; see [`Options`].
    ///
    /// # Errors
    /// As [`Annal::open`].
    pub fn open_with(path: impl AsRef<Path>, options: &Options) -> Result<Annal, Error> {
        let path = path.as_ref().to_owned();
        let store = if options.read_only {
            Store::open_read_only(&path, options.store())?
        } else {
            Store::open(&path, options.store())?
        };
        let store = Arc::new(store);
        let annal = Annal { store, path, options: options.clone(), index: Mutex::new(None) };
        if options.index_eagerly {
            annal.index()?;
        }
        Ok(annal)
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The options it was opened with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The view of `session` for the next model request under `options`' budget: a committed
    /// checkpoint plus later records, or the records themselves. When
    /// [`Projection::compaction_due`] is set, call [`Annal::compact`].
    ///
    /// # Errors
    /// [`Error::Project`]: an unknown session, a budget that cannot be planned for, a read
    /// failure.
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, Budget, ProjectOptions, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// annal.append("s", None, vec![Record::text("u1", Role::User, "Fix the ledger.")])?;
    /// let view = annal.project("s", &ProjectOptions::new(Budget::new(200_000, 32_000)))?;
    /// assert_eq!(view.messages.len(), 1);
    /// assert!(!view.compaction_due);
    /// # Ok(()) }
    /// ```
    pub fn project(&self, session: &str, options: &ProjectOptions) -> Result<Projection<'static>, Error> {
        Ok(self.store.project(session, options)?)
    }

    /// The view a compaction would commit now: derived from the originals under `options`,
    /// ignoring checkpoints.
    ///
    /// # Errors
    /// As [`Annal::project`].
    pub fn project_originals(
        &self,
        session: &str,
        options: &ProjectOptions,
    ) -> Result<Projection<'static>, Error> {
        let snapshot = self.store.projection_snapshot()?;
        let prepared = snapshot.prepare_originals(session, options)?;
        Ok(prepared.render()?.into_owned())
    }

    /// The view derived from the originals as if `session` ended before sourceOrder `end`:
    /// what `deterministic-v1` would have sent with the request after record `end - 1`,
    /// checkpoints aside. For looking back at how a session grew against its window.
    ///
    /// # Errors
    /// As [`Annal::project`].
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, Budget, ProjectOptions, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// let turns = vec![
    ///     Record::text("u1", Role::User, "Fix the ledger."),
    ///     Record::text("a1", Role::Assistant, "Fixed."),
    ///     Record::text("u2", Role::User, "Now the tests."),
    /// ];
    /// annal.append("s", None, turns)?;
    /// let options = ProjectOptions::new(Budget::new(200_000, 32_000));
    /// let first = annal.project_originals_until("s", &options, 1)?;
    /// assert_eq!(first.messages.len(), 1);
    /// assert!(first.stats.tokens.total < annal.project("s", &options)?.stats.tokens.total);
    /// # Ok(()) }
    /// ```
    pub fn project_originals_until(
        &self,
        session: &str,
        options: &ProjectOptions,
        end: u64,
    ) -> Result<Projection<'static>, Error> {
        let snapshot = self.store.projection_snapshot()?;
        let prepared = snapshot.prepare_originals_until(session, options, end)?;
        Ok(prepared.render()?.into_owned())
    }

    /// Commits a checkpoint of `session` so later views keep a stable prefix; nothing is
    /// written when the view fits.
    ///
    /// # Errors
    /// [`Error::Compact`]; a summarizer that fails is not an error (the checkpoint falls back
    /// to deterministic-v1 and says why).
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, Budget, CompactOptions, CompactStatus, ProjectOptions, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// annal.append("s", None, vec![Record::text("u1", Role::User, "Fix the ledger.")])?;
    /// let options = CompactOptions::new(ProjectOptions::new(Budget::new(200_000, 32_000)));
    /// assert_eq!(annal.compact("s", &options)?.status, CompactStatus::NotNeeded);
    /// # Ok(()) }
    /// ```
    pub fn compact(&self, session: &str, options: &CompactOptions) -> Result<CompactOutcome, Error> {
        Ok(self.store.compact(session, options)?)
    }

    /// A consistent read view of everything committed so far: sessions, records in order
    /// (borrowed in place), table sizes.
    ///
    /// # Errors
    /// [`Error::Read`].
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// annal.append("s", None, vec![Record::text("u1", Role::User, "hi")])?;
    /// let snapshot = annal.snapshot()?;
    /// for guard in snapshot.records("s", 0..u64::MAX)? {
    ///     let guard = guard?;
    ///     assert_eq!(guard.view()?.entry_id(), "u1");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn snapshot(&self) -> Result<Snapshot, Error> {
        Ok(self.store.snapshot()?)
    }

    /// What the journal holds now, to compare with a snapshot's [`Snapshot::mark`]: the same
    /// mark means no session was appended to, forked or made since that snapshot began, by any
    /// process, so what was read from it still holds. `None` when that cannot be told without
    /// waiting (another thread or process is appending or checkpointing): read a snapshot then.
    /// It never waits for a lock or a sync, so an event loop may ask.
    ///
    /// # Errors
    /// [`Error::Read`].
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// let read = annal.snapshot()?.mark();
    /// // None while the store's own threads hold the log (indexing, checkpointing): then read.
    /// if let Some(now) = annal.mark_now()? {
    ///     assert_eq!(Some(now), read);
    /// }
    /// annal.append("s", None, vec![Record::text("u1", Role::User, "hi")])?;
    /// assert_ne!(annal.mark_now()?, read);
    /// # Ok(()) }
    /// ```
    pub fn mark_now(&self) -> Result<Option<crate::snapshot::ChangeMark>, Error> {
        Ok(self.store.mark_now()?)
    }

    /// Every session, in name order.
    ///
    /// # Errors
    /// [`Error::Read`].
    pub fn sessions(&self) -> Result<Vec<SessionInfo>, Error> {
        Ok(self.store.snapshot()?.sessions()?)
    }

    /// Forks `session` at `at` into `new_name`, which shares records `[0, at)` without copying
    /// them.
    ///
    /// # Errors
    /// [`Error::Fork`]: an unknown parent, a name in use, a fork point past the end.
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// annal.append("s", None, vec![Record::text("u1", Role::User, "hi")])?;
    /// let retry = annal.fork("s", 1, "s-retry")?;
    /// assert_eq!((retry.parent.as_deref(), retry.len), (Some("s"), 1));
    /// # Ok(()) }
    /// ```
    pub fn fork(&self, session: &str, at: u64, new_name: &str) -> Result<SessionInfo, Error> {
        Ok(self.store.fork(session, at, new_name)?)
    }

    /// Writes `session` to `out` as `options` say: annal JSONL (which [`Annal::import`] reads
    /// back with identical hashes) or Markdown, optionally with secrets masked.
    ///
    /// # Errors
    /// [`Error::Export`]: an unknown session, a read failure, or what `out` reports.
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, ExportOptions, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// annal.append("s", None, vec![Record::text("u1", Role::User, "hi")])?;
    /// let mut jsonl = Vec::new();
    /// assert_eq!(annal.export("s", &ExportOptions::default(), &mut jsonl)?.records, 1);
    /// let copy = Annal::open(dir.path().join("copy.redb"))?;
    /// assert_eq!(copy.import(&jsonl, "s", None)?.records_new, 1);
    /// # Ok(()) }
    /// ```
    pub fn export(
        &self,
        session: &str,
        options: &ExportOptions,
        out: &mut dyn Write,
    ) -> Result<ExportSummary, Error> {
        let snapshot = self.store.snapshot()?;
        Ok(match options.format {
            ExportFormat::Jsonl => export_jsonl(&snapshot, session, options.redact, out)?,
            ExportFormat::Markdown => export_markdown(&snapshot, session, options.redact, out)?,
        })
    }

    /// Recomputes every content hash and hash chain (of `session`, or of all, with blobs), and
    /// checks each signature kept of a record from a fleet against the record it signed.
    ///
    /// # Errors
    /// [`Error::Read`]; damage is reported in the [`VerifyReport`], not as an error.
    ///
    /// # Examples
    /// See the crate's agent loop.
    pub fn verify(&self, session: Option<&str>) -> Result<VerifyReport, Error> {
        let mut report = self.store.verify(session)?;
        report.problems.extend(annal_fleet::check_signatures(&self.store, session)?);
        Ok(report)
    }

    /// Whether an earlier I/O error stopped writes (see [`Error::is_poisoned`]).
    pub fn is_poisoned(&self) -> bool {
        self.store.is_poisoned()
    }

    /// Commits what the index has pending, stops its thread, and closes the store. Returns
    /// whether the store closed now: `false` while a thread of this process still holds it (it
    /// then closes when that lets go). Dropping an `Annal` closes both too, without reporting
    /// errors.
    ///
    /// # Errors
    /// [`Error::Index`] if the indexer had failed; [`Error::Close`] if the store's writer had.
    ///
    /// # Examples
    /// See [`Annal::open`].
    pub fn close(self) -> Result<bool, Error> {
        let Annal { store, index, .. } = self;
        let index = index.into_inner().unwrap_or_else(PoisonError::into_inner);
        if let Some(index) = index.and_then(|index| Arc::try_unwrap(index).ok()) {
            index.close()?;
        }
        match Arc::try_unwrap(store) {
            Ok(store) => {
                store.close()?;
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    }
}
