//! [`Annal`]'s appends: records, portable records with their claims, and portable records
//! guarded by other sessions' lengths, each a delegation to the engine's store.

use annal_engine::{AppendReceipt, PortableRecord, Record};

use crate::{Annal, Error};

impl Annal {
    /// Appends `records` to `session` (created if new) as one atomic batch, durable when this
    /// returns. With `expected_next`, it fails unless the session's next sourceOrder is that
    /// value (optimistic concurrency). Re-appending an entryId with the same content is a no-op
    /// that returns its stored sourceOrder, so a retry never duplicates.
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

    /// Appends records read in the portable format ([`PortableRecord::parse`]), checking
    /// inside the write transaction what each claims (`sourceOrder`, `hash`, `prevHash`); a
    /// record without an entryId gets one derived from its place and text.
    ///
    /// # Errors
    /// As [`Annal::append`], and `AppendError::ClaimMismatch`; nothing of the batch is stored.
    ///
    /// # Examples
    /// ```
    /// use annal::{Annal, PortableRecord};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// let line = r#"{"role": "user", "sourceOrder": 0, "blocks": [{"type": "text", "text": "hi"}]}"#;
    /// let receipt = annal.append_portable("s", None, vec![PortableRecord::parse(line)?])?;
    /// assert_eq!(receipt.source_orders, vec![0]);
    /// // The same line claims sourceOrder 0 again, but would now land at 1.
    /// assert!(annal.append_portable("s", None, vec![PortableRecord::parse(line)?]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn append_portable(
        &self,
        session: &str,
        expected_next: Option<u64>,
        records: Vec<PortableRecord>,
    ) -> Result<AppendReceipt, Error> {
        Ok(self.store.append_portable(session, expected_next, records)?)
    }

    /// [`Annal::append_portable`], only while each session of `unchanged` still has the
    /// number of records given for it (None: while no session has that name), checked inside
    /// the write transaction: a writer that keeps its own index of several sessions (a branch
    /// and its forks) appends to one of them in one call, knowing none changed since it read.
    ///
    /// # Errors
    /// `AppendError::Changed` naming the first session that changed, and as
    /// [`Annal::append_portable`]; nothing of the batch is stored.
    ///
    /// # Examples
    /// ```
    /// use annal::error::AppendError;
    /// use annal::{Annal, Error, PortableRecord};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let annal = Annal::open(dir.path().join("s.redb"))?;
    /// let line = |id: &str| PortableRecord::parse(&format!(r#"{{"entryId": "{id}", "role": "user"}}"#));
    /// let read = vec![("s".to_owned(), None), ("s~fork".to_owned(), None)];
    /// annal.append_portable_if_unchanged("s", Some(0), vec![line("u1")?], read)?;
    /// // "s" has a record now: an append guarded by what was read before is refused.
    /// let stale = vec![("s".to_owned(), Some(0))];
    /// let refused = annal.append_portable_if_unchanged("s", Some(0), vec![line("u2")?], stale);
    /// assert!(matches!(refused, Err(Error::Append(AppendError::Changed { actual: Some(1), .. }))));
    /// # Ok(()) }
    /// ```
    pub fn append_portable_if_unchanged(
        &self,
        session: &str,
        expected_next: Option<u64>,
        records: Vec<PortableRecord>,
        unchanged: Vec<(String, Option<u64>)>,
    ) -> Result<AppendReceipt, Error> {
        Ok(self.store.append_portable_if_unchanged(session, expected_next, records, unchanged)?)
    }
}
