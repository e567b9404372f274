//! The store's appends: records, portable records with their claims, cursors set with them
//! and guards on other sessions' lengths, each handed to the group commit as one request.

use std::sync::atomic::Ordering;

use super::Store;
use crate::apply::AppendReceipt;
use crate::claim::Claim;
use crate::error::AppendError;
use crate::group::Appending;
use crate::portable::PortableRecord;
use crate::prepare::{prepare_batch, prepare_seeded, Prepared};
use crate::record::Record;
use crate::reply::reply;
use crate::writer::{Guard, Request};

impl Store {
    /// Appends `records` to `session` (created if new) as one atomic batch, durable when this
    /// returns.
    ///
    /// With `expected_next`, the append succeeds only if the session's next sourceOrder is that
    /// value (optimistic concurrency). An entryId already stored in this session with the same
    /// content is not appended again: its existing sourceOrder is returned, so retrying an append
    /// or re-importing a file never duplicates. An empty batch creates the session.
    ///
    /// # Errors
    /// [`AppendError`]; on any error nothing of the batch is stored.
    pub fn append(
        &self,
        session: &str,
        expected_next: Option<u64>,
        records: Vec<Record>,
    ) -> Result<AppendReceipt, AppendError> {
        self.check_writable()?;
        let _appending = self.appending();
        let prepared = prepare_batch(session, records, &self.options)?;
        self.submit_append(session, expected_next, prepared, Vec::new())
    }

    /// Appends records read in the portable format, as [`Store::append`] does, with what each
    /// one claims checked inside the write transaction: a record that carries a `sourceOrder`,
    /// `hash` or `prevHash` must land exactly there with exactly that chain (see [`Claim`]). A
    /// record without an entryId gets one derived from the session, the sourceOrder it takes and
    /// its portable text, so the same line at the same place always gets the same id.
    ///
    /// # Errors
    /// As [`Store::append`], and [`AppendError::ClaimMismatch`]; on any error nothing of the
    /// batch is stored.
    pub fn append_portable(
        &self,
        session: &str,
        expected_next: Option<u64>,
        records: Vec<PortableRecord>,
    ) -> Result<AppendReceipt, AppendError> {
        self.append_portable_noting(session, expected_next, records, Vec::new())
    }

    /// [`Store::append_portable`], setting (`Some`) or removing (`None`) `cursors` in the same
    /// transaction when the append succeeds: a reader of another source (a fleet's stream, say)
    /// notes how far it read together with what it read, in one commit.
    ///
    /// # Errors
    /// As [`Store::append_portable`], and [`AppendError::InvalidRecord`] for a cursor's name or
    /// value over [`CURSOR_BYTES_MAX`](crate::CURSOR_BYTES_MAX); on any error nothing of the
    /// batch is stored and no cursor changes.
    pub fn append_portable_noting(
        &self,
        session: &str,
        expected_next: Option<u64>,
        records: Vec<PortableRecord>,
        cursors: Vec<(String, Option<Vec<u8>>)>,
    ) -> Result<AppendReceipt, AppendError> {
        crate::tables::check_cursors(&cursors)?;
        let guard = Guard { cursors, unchanged: Vec::new() };
        self.append_portable_guarded(session, expected_next, records, guard)
    }

    /// [`Store::append_portable`], only while each session of `unchanged` still has the length
    /// given for it (None: while no session has that name), checked inside the write
    /// transaction: a writer that keeps its own index of several sessions appends to one of
    /// them in one call, knowing none changed since it read them.
    ///
    /// # Errors
    /// [`AppendError::Changed`] naming the first session that changed, and as
    /// [`Store::append_portable`]; on any error nothing of the batch is stored.
    pub fn append_portable_if_unchanged(
        &self,
        session: &str,
        expected_next: Option<u64>,
        records: Vec<PortableRecord>,
        unchanged: Vec<(String, Option<u64>)>,
    ) -> Result<AppendReceipt, AppendError> {
        let guard = Guard { cursors: Vec::new(), unchanged };
        self.append_portable_guarded(session, expected_next, records, guard)
    }

    fn append_portable_guarded(
        &self,
        session: &str,
        expected_next: Option<u64>,
        records: Vec<PortableRecord>,
        guard: Guard,
    ) -> Result<AppendReceipt, AppendError> {
        self.check_writable()?;
        let _appending = self.appending();
        let mut claims = Vec::with_capacity(records.len());
        let mut seeded = Vec::with_capacity(records.len());
        for portable in records {
            let (record, claim, seed) = portable.into_parts();
            claims.push(claim);
            seeded.push((record, seed));
        }
        if claims.iter().all(Claim::is_empty) {
            claims.clear();
        }
        let prepared = prepare_seeded(session, seeded.into_iter(), &self.options)?;
        self.submit_append_guarded(session, expected_next, prepared, claims, guard)
    }

    /// Counts this caller as appending until the guard drops, so a thread committing a group
    /// knows to wait a moment for its request (see `group.rs`).
    pub(super) fn appending(&self) -> Option<Appending<'_>> {
        self.commit.as_ref().map(|commit| commit.appending())
    }

    pub(super) fn check_writable(&self) -> Result<(), AppendError> {
        if self.is_read_only() {
            return Err(AppendError::ReadOnly);
        }
        if self.shared.poisoned.load(Ordering::Acquire) {
            return Err(AppendError::Poisoned);
        }
        Ok(())
    }

    fn submit_append(
        &self,
        session: &str,
        expected_next: Option<u64>,
        prepared: Vec<Prepared>,
        claims: Vec<Claim>,
    ) -> Result<AppendReceipt, AppendError> {
        self.submit_append_guarded(session, expected_next, prepared, claims, Guard::default())
    }

    fn submit_append_guarded(
        &self,
        session: &str,
        expected_next: Option<u64>,
        prepared: Vec<Prepared>,
        claims: Vec<Claim>,
        guard: Guard,
    ) -> Result<AppendReceipt, AppendError> {
        let bytes: usize = prepared.iter().map(Prepared::stored_bytes).sum();
        self.appended_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        let (reply, answer) = reply();
        let Guard { cursors, unchanged } = guard;
        let session = session.to_owned();
        let request = Request::Append { session, expected_next, prepared, claims, cursors, unchanged, reply };
        self.submit(request);
        answer.recv().map_err(|_| AppendError::Closed)?
    }
}
