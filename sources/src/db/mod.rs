//! Agents' SQLite databases: opened read-only (WAL respected: readers see the last commit and
//! never block the agent), read from a cursor (the newest update time read), and turned into
//! sessions of records by the formats crate.

pub(crate) mod crush;
pub(crate) mod cursor;
pub(crate) mod cursor_cli;
pub(crate) mod goose;
pub(crate) mod kiro;
pub(crate) mod opencode;
mod sqlite;
pub(crate) mod zed;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use annal_formats::ParsedSession;

use self::sqlite::{open, table_columns, Row};
use crate::error::SourceError;
use annal_formats::Agent;

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

/// Reads the database at `path` whole, as the agent's whose tables it has: OpenCode's (a
/// `part` table), Crush's or the Go OpenCode's (`messages` with `parts`), goose's (`messages`
/// with `content_json`), Zed's (`threads` with `data_type`) Cursor's (`cursorDiskKV`) or Kiro CLI's (`conversations_v2`). Where it lies says nothing: a copy anywhere reads the same.
pub(crate) fn read_whole(path: &Path) -> Result<(Agent, DbReading), SourceError> {
    let agent = {
        let conn = open(path)?;
        // A table without the column is another agent's; any other failure is this read's.
        let has = |table: &str, column: &str| match table_columns(&conn, path, table, &[column]) {
            Ok(_) => Ok(true),
            Err(SourceError::Schema { .. }) => Ok(false),
            Err(err) => Err(err),
        };
        if has("part", "data")? {
            Agent::OpenCode
        } else if has("messages", "parts")? {
            Agent::Crush
        } else if has("messages", "content_json")? {
            Agent::Goose
        } else if has("threads", "data_type")? {
            Agent::Zed
        } else if has("cursorDiskKV", "value")? {
            Agent::Cursor
        } else if has("conversations_v2", "conversation_id")? {
            Agent::Kiro
        } else if has("blobs", "data")? && has("meta", "value")? {
            // The Cursor CLI's chat store: read below, it is not the editor's database.
            drop(conn);
            return Ok((Agent::Cursor, cursor_cli::read(path)?));
        } else {
            let message =
                "a SQLite database of no schema annal reads (OpenCode's, Crush's, goose's, Zed's, Cursor's (editor or CLI) or Kiro CLI's)";
            return Err(SourceError::Unrecognised { path: path.to_owned(), message: message.to_owned() });
        }
    };
    let reading = match agent {
        Agent::OpenCode => opencode::read(path, None)?,
        Agent::Crush => crush::read(path, None)?,
        Agent::Zed => zed::read(path, None)?,
        Agent::Cursor => cursor::read(path, None)?,
        Agent::Kiro => kiro::read(path, None)?,
        _ => goose::read(path, None)?,
    };
    Ok((agent, reading))
}

/// A session row of a database whose `sessions` and `messages` tables are read separately and
/// merged by [`DbReading::add_sessions`] (Crush's and goose's): how the row is read, and how a
/// session is parsed with its messages.
trait SessionRow: Sized {
    /// The formats crate's message row of the same database.
    type Message;
    /// When the row was last changed, in milliseconds, if it says.
    fn updated_ms(row: &Row) -> Option<i64>;
    /// The row's fields, or why they cannot be read.
    fn read(row: &Row) -> Result<Self, String>;
    /// The session's id.
    fn id(&self) -> &str;
    /// A session known only from its messages: its row is missing, or unchanged since the cursor.
    fn without_row(id: &str) -> Self;
    /// The session's records from this row and its messages, and one line per row skipped.
    fn parse(&self, messages: &[Self::Message]) -> (ParsedSession, Vec<String>);
}

impl DbReading {
    /// Adds the sessions whose row changed at or after `since_ms` (every one with `None`) or
    /// that have messages in `groups` (their messages read, by session id), each parsed with
    /// its messages, and moves `newest` to the newest change of a row that counted as changed.
    /// A row that cannot be read is reported only when it changed, so it is reported once.
    fn add_sessions<S: SessionRow>(
        &mut self,
        rows: &[Row],
        groups: &BTreeMap<String, Vec<S::Message>>,
        since_ms: Option<i64>,
        newest: &mut i64,
    ) {
        let mut sessions: BTreeMap<String, S> = BTreeMap::new();
        for (index, row) in rows.iter().enumerate() {
            let updated = S::updated_ms(row);
            let changed = since_ms.is_none() || updated.zip(since_ms).is_some_and(|(at, since)| at >= since);
            match S::read(row) {
                Ok(session) if changed || groups.contains_key(session.id()) => {
                    *newest = (*newest).max(updated.filter(|_| changed).unwrap_or(*newest));
                    sessions.insert(session.id().to_owned(), session);
                }
                Ok(_) => {}
                Err(why) if changed => self.skipped.push(format!("session {}: {why}", row.name(index))),
                Err(_) => {}
            }
        }
        let ids: BTreeSet<String> = sessions.keys().chain(groups.keys()).cloned().collect();
        for id in ids {
            let session = sessions.remove(&id).unwrap_or_else(|| S::without_row(&id));
            let (parsed, skipped) = session.parse(groups.get(&id).map_or(&[], Vec::as_slice));
            self.skipped.extend(skipped.into_iter().map(|line| format!("session {id:?}, {line}")));
            if !parsed.records.is_empty() {
                self.sessions.push(parsed);
            }
        }
    }
}
