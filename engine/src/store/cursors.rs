//! Cursors: small named byte strings that a reader of outside sources (`annal sync`) keeps in
//! the store beside what it imported, so that its next pass reads only what changed.
//!
//! The journal never reads them, and they are hints, not truth: a lost or stale cursor only
//! means a source is read again, and appends are idempotent by entryId. So they are written
//! after the records they describe, in a group of their own. The table is made by the first
//! write; a store without it (any store written before cursors existed) has none.

use redb::{TableError, WriteTransaction};

use crate::apply::Tables;
use crate::error::{AppendError, Failure, ReadError};
use crate::reply::{reply, Reply};
use crate::store::Store;
use crate::tables::{check_cursors, write_cursors, CURSORS};
use crate::writer::{Answer, Request, SideWrite, WriteFailure};

struct CursorWrite {
    rows: Vec<(String, Option<Vec<u8>>)>,
    reply: Reply<Result<(), WriteFailure>>,
}

impl SideWrite for CursorWrite {
    fn apply(&mut self, txn: &WriteTransaction, _tables: &mut Tables<'_>) -> Result<Answer, Failure> {
        write_cursors(txn, &self.rows)?;
        Ok(Answer::of(&self.reply, ()))
    }

    fn fail(self: Box<Self>, failure: WriteFailure) {
        // A caller that gave up waiting dropped its end: the answer goes with the slot.
        self.reply.send(Err(failure));
    }
}

impl Store {
    /// Sets (`Some`) or removes (`None`) cursors by name, atomically, durable when this returns.
    ///
    /// # Errors
    /// [`AppendError::InvalidRecord`] for a name or value over [`CURSOR_BYTES_MAX`](crate::CURSOR_BYTES_MAX); a store
    /// that is read-only, poisoned, busy or closed, or a failed write.
    pub fn put_cursors(&self, rows: Vec<(String, Option<Vec<u8>>)>) -> Result<(), AppendError> {
        if self.is_read_only() {
            return Err(AppendError::ReadOnly);
        }
        if self.is_poisoned() {
            return Err(AppendError::Poisoned);
        }
        check_cursors(&rows)?;
        if rows.is_empty() {
            return Ok(());
        }
        let (reply, answer) = reply();
        self.submit(Request::Side(Box::new(CursorWrite { rows, reply })));
        match answer.recv() {
            Err(_) => Err(AppendError::Closed),
            Ok(Ok(())) => Ok(()),
            Ok(Err(WriteFailure::Busy(waited))) => Err(AppendError::Busy { waited }),
            Ok(Err(WriteFailure::Io(source))) => Err(AppendError::Io { source }),
            Ok(Err(WriteFailure::Corrupted(reason))) => Err(AppendError::Corrupted { reason }),
            Ok(Err(WriteFailure::Poisoned)) => Err(AppendError::Poisoned),
        }
    }

    /// Every cursor whose name starts with `prefix`, by name.
    ///
    /// # Errors
    /// I/O or corruption.
    pub fn cursors(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>)>, ReadError> {
        let txn = self.begin_read().map_err(Failure::from)?;
        let table = match txn.open_table(CURSORS) {
            Ok(table) => table,
            Err(TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(err) => return Err(Failure::from(err).into()),
        };
        let mut out = Vec::new();
        for item in table.range(prefix..).map_err(Failure::from)? {
            let (name, value) = item.map_err(Failure::from)?;
            let name = name.value();
            if !name.starts_with(prefix) {
                break;
            }
            out.push((name.to_owned(), value.value().to_vec()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::options::StoreOptions;
    use crate::store::Store;

    #[test]
    fn cursors_are_set_read_by_prefix_and_removed() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("s.redb");
        let store = Store::open(&path, StoreOptions::default())?;
        assert!(store.cursors("")?.is_empty(), "a new store has no cursors");
        store.put_cursors(vec![
            ("claude:/a/b.jsonl".into(), Some(vec![1, 2])),
            ("claude:/a/c.jsonl".into(), Some(vec![3])),
            ("codex:/x".into(), Some(vec![4])),
        ])?;
        let claude = store.cursors("claude:")?;
        assert_eq!(
            claude,
            vec![("claude:/a/b.jsonl".into(), vec![1, 2]), ("claude:/a/c.jsonl".into(), vec![3])]
        );
        store.put_cursors(vec![("claude:/a/b.jsonl".into(), None)])?;
        store.close()?;
        let store = Store::open(&path, StoreOptions::default())?;
        assert_eq!(store.cursors("")?.len(), 2, "cursors survive a reopen, removals too");
        Ok(())
    }

    #[test]
    fn cursors_noted_with_an_append_change_only_when_it_lands() -> Result<(), Box<dyn std::error::Error>> {
        use crate::portable::PortableRecord;
        let dir = tempfile::tempdir()?;
        let store = Store::open(dir.path().join("s.redb"), StoreOptions::default())?;
        let line = r#"{"entryId": "e1", "role": "user", "blocks": [{"type": "text", "text": "日本 🚀"}]}"#;
        let noted = vec![("fleet:x:seq:s".to_owned(), Some(7u64.to_le_bytes().to_vec()))];
        store.append_portable_noting("s", Some(0), vec![PortableRecord::parse(line)?], noted)?;
        assert_eq!(store.cursors("fleet:")?, vec![("fleet:x:seq:s".to_owned(), 7u64.to_le_bytes().to_vec())]);
        // A stale expected position: nothing appended, and the cursor stays as it was.
        let again = vec![("fleet:x:seq:s".to_owned(), Some(8u64.to_le_bytes().to_vec()))];
        let line2 = r#"{"entryId": "e2", "role": "user", "blocks": [{"type": "text", "text": "x"}]}"#;
        assert!(store
            .append_portable_noting("s", Some(0), vec![PortableRecord::parse(line2)?], again)
            .is_err());
        assert_eq!(store.cursors("fleet:")?[0].1, 7u64.to_le_bytes().to_vec());
        let over = vec![("n".to_owned(), Some(vec![0; crate::tables::CURSOR_BYTES_MAX + 1]))];
        assert!(store.append_portable_noting("s", None, vec![PortableRecord::parse(line2)?], over).is_err());
        assert_eq!(
            store.snapshot()?.session("s")?.map(|info| info.len),
            Some(1),
            "nothing of a refused batch"
        );
        Ok(())
    }
}
