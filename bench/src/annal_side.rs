//! annal under test: a store with default options, appended to and read through its public API.
//!
//! Each writer passes the session's expected next sourceOrder (optimistic concurrency), as an
//! application that owns its session would; every call is durable when it returns, and
//! concurrent callers are served by the store's single writer thread with group commit.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use annal_engine::{log_path, BlockView, Payload, Record, Sharing, Store, StoreOptions};
use anyhow::{ensure, Context as _};

use crate::mirror::touch_str;
use crate::scenarios::{System, Writer};

/// An annal store in a scratch folder.
#[derive(Debug)]
pub struct Annal {
    store: Store,
    path: PathBuf,
}

impl Annal {
    /// Creates a fresh store at `path` with default options and the given sharing mode.
    ///
    /// # Errors
    /// If the store cannot be opened.
    pub fn create(path: &Path, sharing: Sharing) -> anyhow::Result<Annal> {
        let store = Store::open(path, StoreOptions { sharing, ..StoreOptions::default() })
            .with_context(|| format!("cannot open an annal store at {}", path.display()))?;
        Ok(Annal { store, path: path.to_path_buf() })
    }

    /// The store, for reads.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The bytes the journal table stores (keys and values), from the store's own statistics.
    ///
    /// # Errors
    /// If the store cannot be read.
    pub fn journal_bytes(&self) -> anyhow::Result<(u64, u64)> {
        let sizes = self.store.snapshot()?.table_sizes()?;
        let journal = sizes.iter().find(|t| t.table == "journal").context("no journal table")?;
        Ok((journal.entries, journal.stored_bytes))
    }

    /// The records stored across all sessions, to check a run stored what it was given.
    ///
    /// # Errors
    /// If the store cannot be read.
    pub fn count(&self) -> anyhow::Result<u64> {
        let snapshot = self.store.snapshot()?;
        Ok(snapshot.sessions()?.iter().map(|s| s.len).sum())
    }

    /// The bytes of keys and values stored in all tables, from the store's own statistics:
    /// the file size minus free pages, page slack and redb's own structures.
    ///
    /// # Errors
    /// If the store cannot be read.
    pub fn stored_bytes(&self) -> anyhow::Result<u64> {
        Ok(self.store.snapshot()?.table_sizes()?.iter().map(|t| t.stored_bytes).sum())
    }

    /// Closes the store and returns the size of its files (the store, and its durability log
    /// if one were left).
    ///
    /// # Errors
    /// If the store does not close cleanly or the file cannot be inspected.
    pub fn close(self) -> anyhow::Result<u64> {
        self.store.close()?;
        crate::files_bytes(&[log_path(&self.path), self.path])
    }
}

/// Appends through a shared store, remembering each session's next sourceOrder.
#[derive(Debug)]
pub struct AnnalWriter<'a> {
    store: &'a Store,
    next: HashMap<String, u64>,
}

impl System for Annal {
    type Writer<'a> = AnnalWriter<'a>;

    fn writer(&self) -> anyhow::Result<AnnalWriter<'_>> {
        Ok(AnnalWriter { store: &self.store, next: HashMap::new() })
    }
}

impl Writer for AnnalWriter<'_> {
    fn append(&mut self, session: &str, records: Vec<Record>) -> anyhow::Result<()> {
        let count = records.len() as u64;
        let expected = self.next.get(session).copied().unwrap_or(0);
        let receipt = self.store.append(session, Some(expected), records)?;
        ensure!(receipt.appended as u64 == count, "annal stored {} of {count} records", receipt.appended);
        self.next.insert(session.to_owned(), receipt.next);
        Ok(())
    }
}

fn touch_payload(payload: Payload<'_>) -> u64 {
    match payload {
        Payload::Inline(text) => touch_str(text),
        Payload::Blob { len_bytes, .. } => len_bytes,
    }
}

/// Reads every record of `session` through the public zero-copy path (a snapshot,
/// [`annal_engine::Snapshot::records`], [`annal_engine::RecordGuard::view`]) and touches each
/// text block the way [`crate::mirror::touch`] does. Returns the record count and a checksum.
///
/// # Errors
/// If the store cannot be read or a record fails validation.
pub fn read_session(store: &Store, session: &str) -> anyhow::Result<(usize, u64)> {
    let snapshot = store.snapshot()?;
    let mut count = 0;
    let mut sum = 0;
    for guard in snapshot.records(session, 0..u64::MAX)? {
        let guard = guard?;
        let view = guard.view()?;
        sum += touch_str(view.entry_id()) + role_tag(&view);
        for block in view.blocks() {
            sum += match block {
                BlockView::Text { text } | BlockView::Thinking { text } => touch_payload(text),
                BlockView::ToolCall { input, .. } => touch_payload(input),
                BlockView::ToolResult { output, .. } => touch_payload(output),
                BlockView::Blob { size_bytes, .. } => size_bytes,
            };
        }
        count += 1;
    }
    Ok((count, sum))
}

fn role_tag(view: &annal_engine::RecordView<'_>) -> u64 {
    annal_engine::Role::ALL.iter().position(|r| *r == view.role()).map_or(0, |i| i as u64)
}
