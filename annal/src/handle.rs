//! [`Annal`]: one handle owning a store and its search index, with the calls an agent loop
//! makes (append, project, compact, search, get, fork, export, import), each a thin delegation
//! to the engine or the search index.

use std::io::Write;
use std::ops::RangeInclusive;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use annal_engine::{
    export_jsonl, AppendReceipt, CompactOptions, CompactOutcome, ExportSummary, ProjectOptions, Projection,
    Record, SessionInfo, Store, StoreOptions, TranscriptFormat, VerifyReport,
};
use annal_query::{get_original, Hit, IndexOptions, Original, SearchIndex, SearchRequest};

use crate::import::{import_bytes, import_file, ImportSummary};
use crate::Error;

/// How long [`Annal::search`] waits by default for the index to reach the journal's end.
pub const SEARCH_WAIT_DEFAULT: Duration = Duration::from_secs(30);

/// A store and its search index, opened together: what an agent framework holds.
///
/// Every record appended through it (or by another process sharing the file) becomes
/// searchable; [`Annal::search`] waits until everything committed before the call is indexed,
/// so a search sees the turns just appended.
///
/// `Annal` is `Send + Sync`: share one (in an `Arc`) between threads. Appends from many threads
/// are committed together by the store's one writer thread, each acknowledged after its commit;
/// reads and searches run in parallel with them.
#[derive(Debug)]
pub struct Annal {
    store: Arc<Store>,
    index: SearchIndex,
    search_wait: Duration,
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
    /// annal.close()?;
    /// # Ok(()) }
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Annal, Error> {
        Annal::open_with(path, StoreOptions::default(), IndexOptions::default())
    }

    /// Opens the store at `path` with `store` options (sharing mode, limits, token counter) and
    /// its index with `index` options (folder, commit interval).
    ///
    /// # Errors
    /// As [`Annal::open`].
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, IndexOptions, Sharing, StoreOptions};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let dir = tempfile::tempdir()?;
    /// // This process owns the store: faster single commits.
    /// let store = StoreOptions { sharing: Sharing::Exclusive, ..StoreOptions::default() };
    /// let annal = Annal::open_with(dir.path().join("s.redb"), store, IndexOptions::default())?;
    /// annal.close()?;
    /// # Ok(()) }
    /// ```
    pub fn open_with(
        path: impl AsRef<Path>,
        store: StoreOptions,
        index: IndexOptions,
    ) -> Result<Annal, Error> {
        let store = Arc::new(Store::open(path, store)?);
        let index = SearchIndex::open(Arc::clone(&store), index)?;
        Ok(Annal { store, index, search_wait: SEARCH_WAIT_DEFAULT })
    }

    /// Sets how long [`Annal::search`] waits for the index to catch up (default
    /// [`SEARCH_WAIT_DEFAULT`]); zero searches what is indexed without waiting.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// // A latency-bound caller: never wait; the newest appends may be missing from hits.
    /// let annal = annal::Annal::open(dir.path().join("s.redb"))?.with_search_wait(Duration::ZERO);
    /// assert!(annal.search(&annal::SearchRequest::new("anything"))?.is_empty());
    /// # Ok(()) }
    /// ```
    pub fn with_search_wait(mut self, wait: Duration) -> Annal {
        self.search_wait = wait;
        self
    }

    /// The store, for everything this handle does not wrap (snapshots, verify, the commit feed).
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The search index.
    pub fn index(&self) -> &SearchIndex {
        &self.index
    }

    /// Appends `records` to `session` (created if new) as one atomic batch, durable when this
    /// returns; see [`Store::append`]. With `expected_next`, it fails unless the session's next
    /// sourceOrder is that value. Re-appending an entryId with the same content is a no-op.
    ///
    /// # Errors
    /// [`Error::Append`]; nothing of the batch is stored.
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// let receipt = annal.append("s", Some(0), vec![Record::text("u1", Role::User, "hi")])?;
    /// assert_eq!(receipt.next, 1);
    /// // Someone else appended first: the expected position is stale.
    /// assert!(annal.append("s", Some(0), vec![Record::text("u2", Role::User, "hi")]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn append(
        &self,
        session: &str,
        expected_next: Option<u64>,
        records: Vec<Record>,
    ) -> Result<AppendReceipt, Error> {
        Ok(self.store.append(session, expected_next, records)?)
    }

    /// The view of `session` for the next model request under `options`' budget: a committed
    /// checkpoint plus later records, or the records themselves; see [`Store::project`]. When
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

    /// Commits a checkpoint of `session` so later views keep a stable prefix; nothing is
    /// written when the view fits. See [`Store::compact`].
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

    /// Searches every original, best matches first, once everything committed before the call
    /// is searchable (waiting up to the search wait).
    ///
    /// # Errors
    /// [`Error::Search`] for a query that cannot be parsed or an unknown session;
    /// [`Error::Wait`] if the index did not catch up in time; [`Error::Read`] if the journal's
    /// end cannot be read.
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, Record, Role, SearchRequest};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// annal.append("s", None, vec![Record::text("a1", Role::Assistant, "We chose SQLite.")])?;
    /// let hits = annal.search(&SearchRequest::new("sqlite"))?;
    /// assert_eq!(hits[0].id(), "a1#0");
    /// # Ok(()) }
    /// ```
    pub fn search(&self, request: &SearchRequest) -> Result<Vec<Hit>, Error> {
        if !self.search_wait.is_zero() {
            let end = self.store.snapshot()?.position_end()?;
            self.index.wait_for_position(end, self.search_wait)?;
        }
        Ok(self.index.search(request)?)
    }

    /// The original named by `id` (`entryId`, as projection markers name it, or
    /// `entryId#block`, as search hits do), verbatim from the journal.
    ///
    /// # Errors
    /// [`Error::Get`]: no such entry or block, or a read failure.
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// annal.append("s", None, vec![Record::text("a1", Role::Assistant, "one\ntwo\n")])?;
    /// let original = annal.get("a1#0")?;
    /// assert_eq!(original.blocks[0].text.as_deref(), Some("one\ntwo\n"));
    /// assert!(annal.get("a9").is_err());
    /// # Ok(()) }
    /// ```
    pub fn get(&self, id: &str) -> Result<Original, Error> {
        Ok(get_original(&self.store.snapshot()?, id, None)?)
    }

    /// As [`Annal::get`], only lines `lines` (from 1, inclusive) of each text.
    ///
    /// # Errors
    /// As [`Annal::get`]; also an empty or reversed range.
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// annal.append("s", None, vec![Record::text("a1", Role::Assistant, "one\ntwo\nthree\n")])?;
    /// assert_eq!(annal.get_lines("a1#0", 2..=2)?.blocks[0].text.as_deref(), Some("two\n"));
    /// # Ok(()) }
    /// ```
    pub fn get_lines(&self, id: &str, lines: RangeInclusive<usize>) -> Result<Original, Error> {
        Ok(get_original(&self.store.snapshot()?, id, Some(lines))?)
    }

    /// Every session, in name order.
    ///
    /// # Errors
    /// [`Error::Read`].
    ///
    /// # Examples
    /// See [`Annal::open`].
    pub fn sessions(&self) -> Result<Vec<SessionInfo>, Error> {
        Ok(self.store.snapshot()?.sessions()?)
    }

    /// Forks `session` at `at` into `new_name`, which shares records `[0, at)` without copying
    /// them; see [`Store::fork`].
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

    /// Writes `session` to `out` as annal JSONL, which [`Annal::import`] reads back with
    /// identical hashes; with `redact`, secrets are masked (and hashes left out).
    ///
    /// # Errors
    /// [`Error::Export`]: an unknown session, a read failure, or what `out` reports.
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// annal.append("s", None, vec![Record::text("u1", Role::User, "hi")])?;
    /// let mut jsonl = Vec::new();
    /// assert_eq!(annal.export("s", false, &mut jsonl)?.records, 1);
    /// let copy = Annal::open(dir.path().join("copy.redb"))?;
    /// assert_eq!(copy.import(&jsonl, "s")?.records_new, 1);
    /// # Ok(()) }
    /// ```
    pub fn export(&self, session: &str, redact: bool, out: &mut dyn Write) -> Result<ExportSummary, Error> {
        Ok(export_jsonl(&self.store.snapshot()?, session, redact, out)?)
    }

    /// Imports a transcript (Claude Code, Codex, OpenCode or an annal export, detected from
    /// the content) given as bytes; `name` (a file stem) names a session that carries no id.
    /// Unreadable lines are skipped and reported; importing again is a no-op.
    ///
    /// # Errors
    /// [`Error::UnknownFormat`] for bytes in no known format; [`Error::Load`] if storing fails
    /// or an export's records do not reproduce its hashes.
    ///
    /// # Examples
    /// See [`Annal::export`].
    pub fn import(&self, bytes: &[u8], name: &str) -> Result<ImportSummary, Error> {
        import_bytes(&self.store, bytes, name, None)
    }

    /// Imports the transcript file at `path`, in `format` or (with `None`) the format detected
    /// from its content.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be read; otherwise as [`Annal::import`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let file = dir.path().join("rollout.jsonl");
    /// std::fs::write(&file, r#"{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":"hi"}}"#)?;
    /// let annal = annal::Annal::open(dir.path().join("s.redb"))?;
    /// let summary = annal.import_file(&file, None)?;
    /// assert_eq!((summary.sessions.as_slice(), summary.records_new), (&["s1".to_owned()][..], 1));
    /// # Ok(()) }
    /// ```
    pub fn import_file(
        &self,
        path: impl AsRef<Path>,
        format: Option<TranscriptFormat>,
    ) -> Result<ImportSummary, Error> {
        import_file(&self.store, path.as_ref(), format)
    }

    /// Recomputes every content hash and hash chain (of `session`, or of all); see
    /// [`Store::verify`].
    ///
    /// # Errors
    /// [`Error::Read`]; damage is reported in the [`VerifyReport`], not as an error.
    ///
    /// # Examples
    /// See the crate's agent loop.
    pub fn verify(&self, session: Option<&str>) -> Result<VerifyReport, Error> {
        Ok(self.store.verify(session)?)
    }

    /// Commits what the index has pending, stops its thread, and closes the store once no
    /// other handle holds it. Dropping an `Annal` closes both too, without reporting errors.
    ///
    /// # Errors
    /// [`Error::Index`] if the indexer had failed; [`Error::Close`] if the store's writer had.
    ///
    /// # Examples
    /// See [`Annal::open`].
    pub fn close(self) -> Result<(), Error> {
        let Annal { store, index, .. } = self;
        index.close()?;
        match Arc::try_unwrap(store) {
            Ok(store) => Ok(store.close()?),
            // Someone kept `store()`: it closes when they let it go.
            Err(_) => Ok(()),
        }
    }
}
