//! The SQLite baseline: the schema and settings a careful user would pick for a durable journal.
//!
//! WAL mode with `synchronous=FULL`, so every commit is fsync'd before it returns: the same
//! promise annal makes. One row per record with its session, gapless sourceOrder, entryId,
//! role, timestamp and the record as JSON text; `UNIQUE(session, source_order)` and a unique
//! index on `entry_id`, like annal's journal key and entries table. Each append is one
//! `BEGIN IMMEDIATE` transaction that reads the session's next sourceOrder and inserts its rows.

use std::path::{Path, PathBuf};
use std::time::Duration;

use annal_engine::Record;
use anyhow::{ensure, Context as _};
use rusqlite::{params, Connection, TransactionBehavior};

use crate::records::to_json;
use crate::scenarios::{System, Writer};

/// The records table and its entryId index.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS records (
    session      TEXT    NOT NULL,
    source_order INTEGER NOT NULL,
    entry_id     TEXT    NOT NULL,
    role         TEXT    NOT NULL,
    timestamp    TEXT,
    record       TEXT    NOT NULL,
    UNIQUE (session, source_order)
);
CREATE UNIQUE INDEX IF NOT EXISTS records_entry_id ON records (entry_id);
";

/// The session's next sourceOrder.
pub const NEXT_ORDER: &str = "SELECT COALESCE(MAX(source_order) + 1, 0) FROM records WHERE session = ?1";
const INSERT: &str = "INSERT INTO records (session, source_order, entry_id, role, timestamp, record)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

/// A SQLite database file set up as a record journal.
#[derive(Debug)]
pub struct Sqlite {
    path: PathBuf,
}

/// Opens a connection with the durability settings of the benchmark and checks they took.
fn connect(path: &Path) -> anyhow::Result<Connection> {
    let conn = Connection::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    conn.busy_timeout(Duration::from_secs(30))?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    ensure!(mode.eq_ignore_ascii_case("wal"), "SQLite refused WAL mode (got {mode})");
    // synchronous is per connection: FULL makes every WAL commit fsync before it returns.
    conn.execute_batch("PRAGMA synchronous = FULL;")?;
    let synchronous: i64 = conn.query_row("PRAGMA synchronous", [], |row| row.get(0))?;
    ensure!(synchronous == 2, "SQLite synchronous is {synchronous}, not FULL (2)");
    Ok(conn)
}

impl Sqlite {
    /// Creates the database at `path` with its schema.
    ///
    /// # Errors
    /// If SQLite cannot create the file or refuses the settings.
    pub fn create(path: &Path) -> anyhow::Result<Sqlite> {
        let conn = connect(path)?;
        conn.execute_batch(SCHEMA)?;
        conn.close().map_err(|(_, err)| err)?;
        Ok(Sqlite { path: path.to_path_buf() })
    }

    /// The database file and its WAL and shared-memory side files.
    pub fn files(&self) -> Vec<PathBuf> {
        let side = |suffix: &str| {
            let mut name = self.path.clone().into_os_string();
            name.push(suffix);
            PathBuf::from(name)
        };
        vec![self.path.clone(), side("-wal"), side("-shm")]
    }

    /// The bytes of all its files, after closing every connection (SQLite then checkpoints the
    /// WAL into the main file and removes it).
    ///
    /// # Errors
    /// If a file cannot be inspected.
    pub fn file_bytes(&self) -> anyhow::Result<u64> {
        crate::files_bytes(&self.files())
    }

    /// The number of rows, to check a run stored what it was given.
    ///
    /// # Errors
    /// If the database cannot be read.
    pub fn count(&self) -> anyhow::Result<u64> {
        let conn = connect(&self.path)?;
        let count: i64 = conn.query_row("SELECT COUNT(*) FROM records", [], |row| row.get(0))?;
        Ok(u64::try_from(count)?)
    }
}

/// One connection, used by one thread.
#[derive(Debug)]
pub struct SqliteWriter {
    conn: Connection,
}

impl System for Sqlite {
    type Writer<'a> = SqliteWriter;

    fn writer(&self) -> anyhow::Result<SqliteWriter> {
        Ok(SqliteWriter { conn: connect(&self.path)? })
    }
}

impl Writer for SqliteWriter {
    fn append(&mut self, session: &str, records: Vec<Record>) -> anyhow::Result<()> {
        let txn = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let next: i64 = txn.query_row(NEXT_ORDER, [session], |row| row.get(0))?;
            let mut insert = txn.prepare_cached(INSERT)?;
            for (offset, record) in (0i64..).zip(&records) {
                insert.execute(params![
                    session,
                    next + offset,
                    record.entry_id,
                    record.role.as_str(),
                    record.timestamp,
                    to_json(record),
                ])?;
            }
        }
        txn.commit()?;
        Ok(())
    }
}
