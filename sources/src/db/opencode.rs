//! OpenCode's SQLite database `opencode.db` (OpenCode 1.2 and later, in its data folder:
//! `$XDG_DATA_HOME/opencode`, by default `~/.local/share/opencode`), and the assembly of changed
//! messages into sessions that the older storage tree shares.
//!
//! Tables read, as OpenCode's first migration (`20260127222353_familiar_lady_ursula`) creates
//! them: `session` (a session's info in columns: `id`, `parent_id`, `title`, `directory`,
//! `time_created`, `time_updated`, …), `message` (`id`, `session_id`, `time_created`,
//! `time_updated`, `data`: the message info as JSON) and `part` (`id`, `message_id`,
//! `session_id`, `time_created`, `time_updated`, `data`). Columns later versions add to
//! `session` are read too.
//!
//! Every write, an in-place update included, sets the row's `time_updated` to the time of the
//! write (ms), and writes are serialised by SQLite's write lock, so a read from a cursor takes the
//! rows updated at or after it, and the next cursor is the newest `time_updated` seen (rows at
//! exactly that time are read again; appends are idempotent by entryId). A message is read whole
//! when it or any of its parts changed.
//!
//! OpenCode writes an assistant message while it streams: its text parts grow and its tool parts
//! go pending → running → completed in place, and only at the end does the message get
//! `time.completed` (or an `error`). Such a message is not imported, nor are the messages queued
//! after it in its session (their order is kept), and the next cursor is the smaller of the
//! newest `time_updated` seen and the newest update of each message held back, so the next read
//! takes them again. A message was cut off (the agent was killed) rather than streaming when
//! another assistant message follows it, or when nothing touched it for [`ABANDONED_AFTER_MS`]
//! while the database moved on: it is imported as it is, and cannot hold the cursor for ever.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use annal_formats::{parse_opencode_rows, OpenCodeMessageRows};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Row};
use serde_json::{Map, Value};

use super::sqlite::{begin, db_error, open, table_columns};
use super::DbReading;
use crate::error::SourceError;

/// How long a message still being written may go untouched, while newer rows appear in the
/// database, before it counts as cut off.
pub(crate) const ABANDONED_AFTER_MS: i64 = 6 * 60 * 60 * 1000;

/// The tables and columns read; other columns may come and go.
const REQUIRED: [(&str, &[&str]); 3] = [
    ("session", &["id", "parent_id", "time_created", "time_updated"]),
    ("message", &["id", "session_id", "time_created", "time_updated", "data"]),
    ("part", &["id", "message_id", "time_updated", "data"]),
];

/// Messages changed since a cursor, read from the database or the storage tree.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    /// Session id → the session's info as export JSON, for every session to report.
    pub(crate) sessions: BTreeMap<String, String>,
    pub(crate) messages: Vec<ChangedMessage>,
    /// The newest update time seen at or after the cursor.
    pub(crate) newest: Option<i64>,
    pub(crate) skipped: Vec<String>,
}

/// One changed message with all its parts.
#[derive(Debug)]
pub(crate) struct ChangedMessage {
    pub(crate) session: String,
    /// When the message was created: the order within its session.
    pub(crate) created: i64,
    /// The newest update time of the message or any of its parts.
    pub(crate) active: i64,
    pub(crate) rows: OpenCodeMessageRows,
}

/// Reads the sessions changed at or after `since_ms` (all with `None`).
pub(crate) fn read(path: &Path, since_ms: Option<i64>) -> Result<DbReading, SourceError> {
    let connection = open(path)?;
    // One read transaction: every query sees the same commit, whatever the agent writes meanwhile.
    let tx = begin(&connection, path)?;
    for (table, needed) in REQUIRED {
        table_columns(&tx, path, table, needed)?;
    }
    let mut changes = changes(&tx, since_ms).map_err(|err| db_error(path, err))?;
    for line in &mut changes.skipped {
        *line = format!("{}: {line}", path.display());
    }
    Ok(assemble(changes, since_ms, path))
}

const NEWEST: &str = "SELECT max(t) FROM (
    SELECT max(time_updated) AS t FROM session WHERE typeof(time_updated) = 'integer' AND time_updated >= ?1
    UNION ALL SELECT max(time_updated) FROM message WHERE typeof(time_updated) = 'integer' AND time_updated >= ?1
    UNION ALL SELECT max(time_updated) FROM part WHERE typeof(time_updated) = 'integer' AND time_updated >= ?1)";
const MESSAGES: &str = "SELECT id, session_id, time_created, time_updated, data FROM message AS m
    WHERE ?1 IS NULL OR time_updated >= ?1
       OR EXISTS (SELECT 1 FROM part AS p WHERE p.message_id = m.id AND p.time_updated >= ?1)";
const PARTS: &str = "SELECT id, time_updated, data FROM part WHERE message_id = ?1 ORDER BY id";

fn changes(db: &Connection, since: Option<i64>) -> rusqlite::Result<Changes> {
    let mut changes = Changes {
        newest: db.query_row(NEWEST, [since.unwrap_or(i64::MIN)], |row| row.get(0))?,
        ..Changes::default()
    };
    let mut parts = db.prepare(PARTS)?;
    let mut statement = db.prepare(MESSAGES)?;
    let mut rows = statement.query([since])?;
    while let Some(row) = rows.next()? {
        match message_row(row) {
            Ok((session, created, updated, id, data)) => {
                let (parts, active) = message_parts(&mut parts, &id, updated, &mut changes.skipped)?;
                let rows = OpenCodeMessageRows { id, data, parts };
                changes.messages.push(ChangedMessage { session, created, active, rows });
            }
            Err(why) => changes.skipped.push(why),
        }
    }
    let mut ids: BTreeSet<String> = changes.messages.iter().map(|m| m.session.clone()).collect();
    let mut statement = db.prepare("SELECT id FROM session WHERE ?1 IS NULL OR time_updated >= ?1")?;
    for id in statement.query_map([since], |row| row.get::<_, Option<String>>(0))? {
        ids.extend(id.ok().flatten());
    }
    let mut statement = db.prepare("SELECT * FROM session WHERE id = ?1")?;
    for id in ids {
        let info = match statement.query_row([&id], |row| Ok(session_info(row))) {
            Err(rusqlite::Error::QueryReturnedNoRows) => Map::new(),
            other => other?,
        };
        changes.sessions.insert(id, Value::Object(info).to_string());
    }
    Ok(changes)
}

type MessageRow = (String, i64, i64, String, String);

/// A message row's session, creation and update times, id and data, or why it cannot be read.
fn message_row(row: &Row<'_>) -> Result<MessageRow, String> {
    let id = text(row, 0).ok_or_else(|| "a message row with no id: skipped".to_owned())?;
    let named = |column: &str, want: &str| format!("message {id:?}: {column} is not {want}: skipped");
    let session = text(row, 1).ok_or_else(|| named("session_id", "text"))?;
    let created = integer(row, 2).ok_or_else(|| named("time_created", "an integer"))?;
    let updated = integer(row, 3).ok_or_else(|| named("time_updated", "an integer"))?;
    let data = text(row, 4).ok_or_else(|| named("data", "text"))?;
    Ok((session, created, updated, id, data))
}

/// A message's parts in order, and the newest update time of the message and its parts.
fn message_parts(
    statement: &mut rusqlite::Statement<'_>,
    message: &str,
    updated: i64,
    skipped: &mut Vec<String>,
) -> rusqlite::Result<(Vec<(String, String)>, i64)> {
    let mut parts = Vec::new();
    let mut active = updated;
    let mut rows = statement.query([message])?;
    while let Some(row) = rows.next()? {
        let id = text(row, 0).unwrap_or_default();
        match (integer(row, 1), text(row, 2)) {
            (Some(time), Some(data)) if !id.is_empty() => {
                active = active.max(time);
                parts.push((id, data));
            }
            _ => skipped.push(format!(
                "part {id:?} of message {message:?}: an id, an integer time_updated and text data are needed: skipped"
            )),
        }
    }
    Ok((parts, active))
}

fn text(row: &Row<'_>, index: usize) -> Option<String> {
    match row.get_ref(index).ok()? {
        ValueRef::Text(bytes) => String::from_utf8(bytes.to_vec()).ok(),
        _ => None,
    }
}

fn integer(row: &Row<'_>, index: usize) -> Option<i64> {
    match row.get_ref(index).ok()? {
        ValueRef::Integer(value) => Some(value),
        _ => None,
    }
}

/// A session row as the info OpenCode's export prints (its `fromRow`): ids in camel case,
/// `share_url` as `share.url`, `summary_*`, `tokens_*` and `time_*` gathered into objects, JSON
/// columns parsed. Columns it does not know are kept under their own names; NULLs are left out.
fn session_info(row: &Row<'_>) -> Map<String, Value> {
    let mut info = Map::new();
    let names: Vec<String> = row.as_ref().column_names().map(str::to_owned).collect();
    for (index, name) in names.iter().enumerate() {
        let mut value = row.get_ref(index).map_or(Value::Null, json_of);
        if value.is_null() {
            continue;
        }
        if ["model", "revert", "permission", "metadata", "summary_diffs"].contains(&name.as_str()) {
            value = value.as_str().and_then(|t| serde_json::from_str(t).ok()).unwrap_or(value);
        }
        let path: Vec<&str> = match name.as_str() {
            "project_id" => vec!["projectID"],
            "workspace_id" => vec!["workspaceID"],
            "parent_id" => vec!["parentID"],
            "share_url" => vec!["share", "url"],
            "tokens_cache_read" => vec!["tokens", "cache", "read"],
            "tokens_cache_write" => vec!["tokens", "cache", "write"],
            other => match other.split_once('_') {
                Some((group @ ("summary" | "tokens" | "time"), key)) => vec![group, key],
                _ => vec![other],
            },
        };
        insert_at(&mut info, &path, value);
    }
    // As `fromRow`: a summary has all three counts once one is known; an empty URL is no share.
    if let Some(Value::Object(summary)) = info.get_mut("summary") {
        for key in ["additions", "deletions", "files"] {
            summary.entry(key).or_insert(Value::from(0));
        }
    }
    if info.get("share").and_then(|share| share.get("url")).is_some_and(|url| url == "") {
        info.remove("share");
    }
    info
}

/// Sets `value` at `path` in `map`, making the objects on the way.
fn insert_at(map: &mut Map<String, Value>, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut at = map;
    for key in parents {
        let slot = at.entry(*key).or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            *slot = Value::Object(Map::new());
        }
        let Value::Object(next) = slot else { return };
        at = next;
    }
    at.insert((*last).to_owned(), value);
}

fn json_of(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(n) => Value::from(n),
        ValueRef::Real(x) => serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number),
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => {
            Value::String(String::from_utf8_lossy(bytes).into_owned())
        }
    }
}

/// The sessions of `changes`, with messages still being written held back (see the module
/// comment), and the cursor for the next read. `origin` (the database or tree) starts each line
/// of what the conversion skipped; the lines already in `changes` are kept as they are.
pub(crate) fn assemble(changes: Changes, since: Option<i64>, origin: &Path) -> DbReading {
    let Changes { sessions, messages, newest, mut skipped } = changes;
    let newest = newest.or(since).unwrap_or(0);
    let mut by_session: BTreeMap<String, Vec<ChangedMessage>> =
        sessions.keys().map(|id| (id.clone(), Vec::new())).collect();
    for message in messages {
        by_session.entry(message.session.clone()).or_default().push(message);
    }
    let mut since_ms = newest;
    let mut held = false;
    let mut parsed = Vec::with_capacity(by_session.len());
    for (id, mut messages) in by_session {
        messages.sort_by(|a, b| (a.created, &a.rows.id).cmp(&(b.created, &b.rows.id)));
        if let Some(first) = streaming(&messages, newest) {
            since_ms = messages[first..].iter().map(|m| m.active).fold(since_ms, i64::min);
            held = true;
            messages.truncate(first);
        }
        let rows: Vec<OpenCodeMessageRows> = messages.into_iter().map(|m| m.rows).collect();
        let (session, lines) =
            parse_opencode_rows(&id, sessions.get(&id).map_or("{}", String::as_str), &rows);
        skipped.extend(lines.into_iter().map(|line| format!("{}: {line}", origin.display())));
        parsed.push(session);
    }
    DbReading { sessions: parsed, since_ms, skipped, held }
}

/// Where the session's last assistant message is, if OpenCode is still writing it: one that
/// an assistant message follows was cut off, as was one untouched for [`ABANDONED_AFTER_MS`]
/// while the database moved on (judged by the database's rows, not the clock, so a message
/// left unfinished is stored once the agent next writes anything).
fn streaming(messages: &[ChangedMessage], newest: i64) -> Option<usize> {
    for (index, message) in messages.iter().enumerate().rev() {
        let Ok(Value::Object(info)) = serde_json::from_str::<Value>(&message.rows.data) else { continue };
        if info.get("role").and_then(Value::as_str) != Some("assistant") {
            // A user message can be queued while the answer before it streams.
            continue;
        }
        let done = info.get("time").and_then(|t| t.get("completed")).is_some_and(|c| !c.is_null());
        let failed = info.get("error").is_some_and(|e| !e.is_null());
        let recent = message.active > newest.saturating_sub(ABANDONED_AFTER_MS);
        return (!done && !failed && recent).then_some(index);
    }
    None
}

#[cfg(test)]
mod tests;
