//! Agents' SQLite databases: opened read-only (WAL respected: readers see the last commit and
//! never block the agent), read from a cursor (the newest update time read), and turned into
//! sessions of records by the formats crate.

pub(crate) mod crush;
pub(crate) mod goose;
pub(crate) mod opencode;
mod sqlite;

use annal_formats::ParsedSession;

/// What one read of a database found.
#[derive(Debug, Default)]
pub(crate) struct DbReading {
    /// Sessions with records changed since the cursor (only those records).
    pub(crate) sessions: Vec<ParsedSession>,
    /// The cursor for the next read: rows updated at or after it are read again (appends are
    /// idempotent by entryId, so a row read twice is stored once).
    pub(crate) since_ms: i64,
    /// Rows that could not be read, each as one line naming the row and why.
    pub(crate) skipped: Vec<String>,
    /// A message still being written was left for a later read: the database must be read
    /// again even if it does not change (the agent may have stopped for good).
    pub(crate) held: bool,
}
