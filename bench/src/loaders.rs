//! The two loaders of the import benchmark: annal's import step (a parsed session appended the
//! way `annal import` appends it) and SQLite loading the same parsed records, one row each.
//!
//! SQLite gets the schema and durability of the append benchmark ([`crate::sqlite::Sqlite`]):
//! WAL, `synchronous=FULL`, one row per record with the record as JSON text, a unique index on
//! `entry_id`. Each chunk of [`CHUNK_RECORDS`] records is one `BEGIN IMMEDIATE` transaction; a
//! record whose entryId is already stored is left alone (`ON CONFLICT (entry_id) DO NOTHING`),
//! as annal leaves it with the session that holds it.

use std::path::Path;
use std::time::{Duration, Instant};

use annal_engine::{Record, Store};
use annal_formats::ParsedSession;
use anyhow::{ensure, Context as _};
use rusqlite::{params, Connection, TransactionBehavior};
use serde_json::Value;

use crate::sqlite::NEXT_ORDER;

/// Records per append or transaction: the batch size of `annal import`.
pub const CHUNK_RECORDS: usize = 2_000;

/// What a loader stored, and where its time went beyond the append or commit itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Records stored.
    pub new: u64,
    /// Records not stored because their entryId was already stored (in this or another session).
    pub kept: u64,
    /// Sessions that failed (annal: an append error other than a poisoned store).
    pub failed_sessions: u64,
    /// Time in the loader's own work before the write: annal's entryId look-ups, SQLite's JSON.
    pub prepare: Duration,
}

/// Stores parsed sessions.
pub trait Loader {
    /// Stores one parsed session, counting into `loaded`.
    ///
    /// # Errors
    /// Whatever the system reports that would stop an import.
    fn load(&mut self, session: ParsedSession, loaded: &mut Loaded) -> anyhow::Result<()>;
}

/// annal's import step, as `annal import` runs it for each parsed session: look up every
/// entryId (a record another session holds stays there), then append in chunks of
/// [`CHUNK_RECORDS`] with no expected sourceOrder.
#[derive(Debug)]
pub struct AnnalImporter<'a> {
    /// The store being imported into.
    pub store: &'a Store,
}

impl Loader for AnnalImporter<'_> {
    fn load(&mut self, session: ParsedSession, loaded: &mut Loaded) -> anyhow::Result<()> {
        let started = Instant::now();
        let name = session.name;
        let snapshot = self.store.snapshot()?;
        let mut records: Vec<Record> = Vec::with_capacity(session.records.len());
        for record in session.records {
            match snapshot.entry(&record.entry_id)? {
                Some(location) if location.session != name => loaded.kept += 1,
                _ => records.push(record),
            }
        }
        drop(snapshot);
        loaded.prepare += started.elapsed();
        if records.is_empty() {
            // A transcript with no records still names a session; the CLI creates it.
            return self.append(&name, Vec::new(), loaded);
        }
        let mut pending = records.into_iter().peekable();
        while pending.peek().is_some() {
            let chunk: Vec<Record> = pending.by_ref().take(CHUNK_RECORDS).collect();
            self.append(&name, chunk, loaded)?;
        }
        Ok(())
    }
}

impl AnnalImporter<'_> {
    fn append(&self, name: &str, chunk: Vec<Record>, loaded: &mut Loaded) -> anyhow::Result<()> {
        let count = chunk.len() as u64;
        match self.store.append(name, None, chunk) {
            Ok(receipt) => {
                loaded.new += receipt.appended as u64;
                loaded.kept += count - receipt.appended as u64;
                Ok(())
            }
            Err(err) if !self.store.is_poisoned() => {
                eprintln!("annal: session {name:?} failed: {err}");
                loaded.failed_sessions += 1;
                Ok(())
            }
            Err(err) => Err(err).with_context(|| format!("session {name:?}")),
        }
    }
}

/// An insert that keeps a record whose entryId is stored already, as annal's import does.
pub const INSERT_OR_KEEP: &str =
    "INSERT INTO records (session, source_order, entry_id, role, timestamp, record)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (entry_id) DO NOTHING";

/// One connection to a database made by [`crate::sqlite::Sqlite::create`].
#[derive(Debug)]
pub struct SqliteLoader {
    conn: Connection,
}

impl SqliteLoader {
    /// Opens a connection in WAL mode with `synchronous=FULL`, and checks both took.
    ///
    /// # Errors
    /// If SQLite cannot open the file or refuses the settings.
    pub fn open(path: &Path) -> anyhow::Result<SqliteLoader> {
        let conn = Connection::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
        ensure!(mode.eq_ignore_ascii_case("wal"), "SQLite refused WAL mode (got {mode})");
        conn.execute_batch("PRAGMA synchronous = FULL;")?;
        let synchronous: i64 = conn.query_row("PRAGMA synchronous", [], |row| row.get(0))?;
        ensure!(synchronous == 2, "SQLite synchronous is {synchronous}, not FULL (2)");
        Ok(SqliteLoader { conn })
    }

    /// Closes the connection; SQLite then checkpoints its WAL into the main file.
    ///
    /// # Errors
    /// If SQLite cannot close cleanly.
    pub fn close(self) -> anyhow::Result<()> {
        self.conn.close().map_err(|(_, err)| err)?;
        Ok(())
    }
}

impl Loader for SqliteLoader {
    fn load(&mut self, session: ParsedSession, loaded: &mut Loaded) -> anyhow::Result<()> {
        let name = session.name;
        let mut pending = session.records.into_iter().peekable();
        while pending.peek().is_some() {
            let chunk: Vec<Record> = pending.by_ref().take(CHUNK_RECORDS).collect();
            let txn = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            {
                let mut next: i64 = txn.query_row(NEXT_ORDER, [&name], |row| row.get(0))?;
                let mut insert = txn.prepare_cached(INSERT_OR_KEEP)?;
                for record in &chunk {
                    let started = Instant::now();
                    let json = record_json(record);
                    loaded.prepare += started.elapsed();
                    let role = record.role.as_str();
                    let rows =
                        insert.execute(params![name, next, record.entry_id, role, record.timestamp, json])?;
                    if rows == 1 {
                        next += 1;
                        loaded.new += 1;
                    } else {
                        loaded.kept += 1;
                    }
                }
            }
            txn.commit()?;
        }
        Ok(())
    }
}

/// An owned record as JSON text in annal's portable format, without the place and chain that
/// the store's own columns hold (the engine's `unplaced_json`, the fields `annal import` reads).
pub fn record_json(record: &Record) -> String {
    Value::Object(annal_engine::unplaced_json(record)).to_string()
}

#[cfg(test)]
mod tests {
    use annal_engine::{Block, Role};

    use super::*;

    #[test]
    fn records_round_trip_through_the_portable_reader() {
        let mut record = Record::text("e1", Role::Assistant, "hi");
        record.blocks.push(Block::ToolCall {
            call_id: "c1".into(),
            tool: "Bash".into(),
            input: "{\"command\":\"ls\"}".into(),
            target: String::new(),
        });
        record.meta.insert("model".into(), "\"m\"".into());
        let value: Value = serde_json::from_str(&record_json(&record)).unwrap_or_default();
        let back = annal_engine::record_from_json(&value).map(|p| p.record);
        assert_eq!(back, Ok(record));
    }
}
