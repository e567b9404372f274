//! The search side of [`Annal`]: the index opened with the store or on first use, searches once
//! it has caught up with the journal, originals read back by id, and rebuilding the index.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::{Arc, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use annal_engine::ProjectOptions;
use annal_query::{
    get_original, index_folder, Hit, IndexStatus, Original, RebuildSummary, SearchIndex, SearchRequest,
    WaitError,
};

use crate::{Annal, Error};

/// How often a wait for the index looks at its progress.
const CATCH_UP_TICK: Duration = Duration::from_millis(200);

impl Annal {
    /// The search index, opened on first use.
    pub(crate) fn index(&self) -> Result<Arc<SearchIndex>, Error> {
        let mut slot = self.index_slot();
        if let Some(index) = slot.as_ref() {
            return Ok(Arc::clone(index));
        }
        let index = Arc::new(SearchIndex::open(Arc::clone(&self.store), self.options.index())?);
        *slot = Some(Arc::clone(&index));
        Ok(index)
    }

    /// Tells an open index that a bulk load goes on, so it commits rarely and merges at the end.
    pub(crate) fn note_load(&self) {
        if let Some(index) = self.index_slot().as_ref() {
            index.note_load();
        }
    }

    fn index_slot(&self) -> MutexGuard<'_, Option<Arc<SearchIndex>>> {
        // A panic elsewhere cannot leave the slot half-written: it holds a handle or nothing.
        self.index.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The search index's folder.
    pub fn index_folder(&self) -> PathBuf {
        self.options.index_folder.clone().unwrap_or_else(|| index_folder(&self.path))
    }

    /// How far the search index is: every position below `searchable` is searchable.
    ///
    /// # Errors
    /// [`Error::Index`] if the index cannot be opened.
    pub fn index_status(&self) -> Result<IndexStatus, Error> {
        Ok(self.index()?.status())
    }

    /// Searches every original, best matches first, once everything committed before the call
    /// is searchable (waiting up to [`Options::search_wait`](crate::Options::search_wait)).
    ///
    /// # Errors
    /// [`Error::Search`] for a query that cannot be parsed or an unknown session;
    /// [`Error::Wait`] if the index did not catch up in time; [`Error::Read`] if the journal's
    /// end cannot be read; [`Error::Index`] if the index cannot be opened.
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
        let index = self.index()?;
        let wait = self.options.search_wait;
        if !wait.is_zero() {
            let end = self.store.snapshot()?.position_end()?;
            index.wait_for_position(end, wait)?;
        }
        match (&request.unseen, &request.session) {
            (Some(options), Some(session)) => {
                let mut request = request.clone();
                request.hidden.extend(self.seen(session, options)?.into_iter().map(|o| (session.clone(), o)));
                Ok(index.search(&request)?)
            }
            _ => Ok(index.search(request)?),
        }
    }

    /// The sourceOrders of `session`'s own records that its projection under `options` carries
    /// whole: every one from its fork point on that no omission names (an omission names what
    /// the view leaves out, cuts or covers with a summary).
    fn seen(&self, session: &str, options: &ProjectOptions) -> Result<Vec<u64>, Error> {
        let projection = self.store.project(session, options)?;
        let snapshot = self.store.snapshot()?;
        let Some(info) = snapshot.session(session)? else { return Ok(Vec::new()) };
        let mut omitted: Vec<(u64, u64)> =
            projection.omissions.iter().map(|o| (o.first.source_order, o.last.source_order)).collect();
        omitted.sort_unstable();
        let named = |order: u64| {
            let at = omitted.partition_point(|&(first, _)| first <= order);
            omitted[..at].iter().any(|&(_, last)| last >= order)
        };
        Ok((info.fork_at.unwrap_or(0)..info.len).filter(|&order| !named(order)).collect())
    }

    /// Waits until everything committed before the call is searchable, for as long as the index
    /// makes progress: `progress(searchable, target)` is called while it waits, and the wait
    /// ends early when the index has not moved for `stall` (another process holds the index
    /// writer and is not keeping up). Returns how many positions are still not searchable (0
    /// when it caught up); a later [`Annal::search`] then searches what is indexed.
    ///
    /// # Errors
    /// [`Error::Index`] if the index cannot be opened or its indexer failed; [`Error::Read`].
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use annal::{Annal, Options, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let options = Options { index_eagerly: false, ..Options::default() };
    /// let annal = Annal::open_with(dir.path().join("s.redb"), &options)?;
    /// annal.append("s", None, vec![Record::text("u1", Role::User, "hi")])?;
    /// assert_eq!(annal.catch_up(Duration::from_secs(30), |_, _| {})?, 0);
    /// # Ok(()) }
    /// ```
    pub fn catch_up(&self, stall: Duration, mut progress: impl FnMut(u64, u64)) -> Result<u64, Error> {
        let index = self.index()?;
        let target = self.store.snapshot()?.position_end()?;
        let (mut last, mut moved) = (index.status().searchable, Instant::now());
        loop {
            match index.wait_for_position(target, CATCH_UP_TICK) {
                Ok(_) => return Ok(0),
                Err(WaitError::Timeout { searchable, .. }) => {
                    if searchable > last {
                        (last, moved) = (searchable, Instant::now());
                    }
                    progress(searchable, target);
                    if moved.elapsed() >= stall {
                        return Ok(target.saturating_sub(searchable));
                    }
                }
                Err(other) => return Err(other.into()),
            }
        }
    }

    /// The original named by `id` (`entryId`, as projection markers name it, or
    /// `entryId#block`, as search hits do), verbatim from the journal; with `lines`, only lines
    /// `lines` (from 1, inclusive) of each text.
    ///
    /// # Errors
    /// [`Error::Get`]: no such entry or block, an empty or reversed range, a read failure.
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, Record, Role};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// annal.append("s", None, vec![Record::text("a1", Role::Assistant, "one\ntwo\nthree\n")])?;
    /// assert_eq!(annal.get("a1#0", None)?.blocks[0].text.as_deref(), Some("one\ntwo\nthree\n"));
    /// assert_eq!(annal.get("a1#0", Some(2..=2))?.blocks[0].text.as_deref(), Some("two\n"));
    /// assert!(annal.get("a9", None).is_err());
    /// # Ok(()) }
    /// ```
    pub fn get(&self, id: &str, lines: Option<RangeInclusive<usize>>) -> Result<Original, Error> {
        Ok(get_original(&self.store.snapshot()?, id, lines)?)
    }

    /// Rebuilds the search index from the journal in this thread, replacing every document in
    /// one commit (searches see the old index until then); `progress(done, total)` is called
    /// after each batch. The index must not be open in another process or handle.
    ///
    /// # Errors
    /// `IndexError::Busy` if another process holds the index writer; I/O and journal errors.
    pub fn reindex(&self, progress: &mut dyn FnMut(u64, u64)) -> Result<RebuildSummary, Error> {
        // An index this handle holds would keep the writer: close it first, reopen on next use.
        if let Some(open) = self.index_slot().take() {
            if let Ok(index) = Arc::try_unwrap(open) {
                index.close()?;
            }
        }
        Ok(SearchIndex::rebuild(&self.store, &self.options.index(), progress)?)
    }
}
