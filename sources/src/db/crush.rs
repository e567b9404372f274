//! Crush's `crush.db` and the Go OpenCode's `opencode.db` (one schema): message rows changed
//! since the cursor, grouped by session, turned into records by the formats crate.
//!
//! The cursor is `messages.updated_at` and `sessions.updated_at`. The schema says milliseconds
//! but the agents write `strftime('%s','now')`, seconds; a value's size tells which (see
//! [`to_ms`]). Rows updated at or after the cursor are read, and the cursor moves to the newest
//! update seen: rows saved within that same second are read again and stored once, by entryId.
//!
//! The agent updates an assistant row in place while the model streams, and marks it finished
//! (a `finish` part, `finished_at` set) at the end. An unfinished assistant row updated within
//! the last [`STREAMING_MS`] is left for a later read, and the cursor stays at or before it so
//! that read finds it complete. An older unfinished row (the agent was stopped mid-reply) is
//! read as it is. Deleted rows are not noticed: what was stored stays stored.

use std::collections::BTreeMap;
use std::path::Path;

use super::sqlite::{begin, now_ms, open, query, table_columns, to_ms, Row};
use super::{DbReading, SessionRow};
use crate::error::SourceError;
use annal_formats::{parse_crush_session, CrushMessageRow, CrushSessionRow, ParsedSession};

/// How recently an unfinished assistant row must have changed to count as still streaming.
const STREAMING_MS: i64 = 60 * 60 * 1000;

const SESSION_COLUMNS: &[&str] = &["id", "parent_session_id", "title", "updated_at", "created_at"];
const MESSAGE_COLUMNS: &[&str] =
    &["id", "session_id", "role", "parts", "created_at", "updated_at", "finished_at"];
/// Rows whose `updated_at` is no number are read every time, so they are reported, not lost.
const MESSAGES_SQL: &str = "SELECT * FROM messages WHERE typeof(updated_at) NOT IN ('integer', 'real') \
     OR (CASE WHEN abs(updated_at) >= 100000000000 THEN updated_at ELSE updated_at * 1000 END) >= ?1 \
     ORDER BY session_id, created_at, rowid";

/// Reads the sessions changed at or after `since_ms` (all with `None`).
pub(crate) fn read(path: &Path, since_ms: Option<i64>) -> Result<DbReading, SourceError> {
    let conn = open(path)?;
    let tx = begin(&conn, path)?;
    table_columns(&tx, path, "sessions", SESSION_COLUMNS)?;
    table_columns(&tx, path, "messages", MESSAGE_COLUMNS)?;
    let messages = query(&tx, path, MESSAGES_SQL, [since_ms.unwrap_or(i64::MIN)])?;
    let sessions = query(&tx, path, "SELECT * FROM sessions ORDER BY id", ())?;
    drop(tx);
    Ok(assemble(&sessions, &messages, since_ms, now_ms()))
}

fn assemble(sessions: &[Row], messages: &[Row], since_ms: Option<i64>, now: i64) -> DbReading {
    let mut reading = DbReading::default();
    let mut newest = since_ms.unwrap_or(0);
    let mut held: Option<i64> = None;
    let mut groups: BTreeMap<String, Vec<CrushMessageRow>> = BTreeMap::new();
    for (index, row) in messages.iter().enumerate() {
        let updated = row.int("updated_at").map(to_ms);
        newest = newest.max(updated.unwrap_or(newest));
        match message_row(row) {
            Err(why) => reading.skipped.push(format!("message {}: {why}", row.name(index))),
            Ok(_) if updated.is_some_and(|at| now.saturating_sub(at) < STREAMING_MS) && streaming(row) => {
                let at = updated.unwrap_or(newest);
                held = Some(held.map_or(at, |held| held.min(at)));
            }
            Ok((session, message)) => groups.entry(session).or_default().push(message),
        }
    }
    reading.add_sessions::<CrushSessionRow>(sessions, &groups, since_ms, &mut newest);
    reading.since_ms = held.map_or(newest, |held| newest.min(held));
    reading.held = held.is_some();
    reading
}

/// An assistant row the agent has not marked finished.
fn streaming(row: &Row) -> bool {
    let parts = row.text("parts").ok().flatten().unwrap_or_default();
    row.text("role").ok().flatten().as_deref() == Some("assistant")
        && row.int("finished_at").is_none()
        && !parts.contains(r#""type":"finish""#)
}

fn message_row(row: &Row) -> Result<(String, CrushMessageRow), String> {
    let created_at = row.int("created_at");
    let mut except = vec!["id", "session_id", "role", "parts", "updated_at"];
    except.extend(created_at.map(|_| "created_at"));
    let message = CrushMessageRow {
        id: row.required_text("id")?,
        role: row.required_text("role")?,
        parts: row.required_text("parts")?,
        created_at,
        columns: row.json_columns(&except),
    };
    Ok((row.required_text("session_id")?, message))
}

impl SessionRow for CrushSessionRow {
    type Message = CrushMessageRow;

    fn updated_ms(row: &Row) -> Option<i64> {
        row.int("updated_at").map(to_ms)
    }

    fn read(row: &Row) -> Result<CrushSessionRow, String> {
        Ok(CrushSessionRow {
            id: row.required_text("id")?,
            parent_session_id: row.text("parent_session_id").ok().flatten(),
            updated_at: row.int("updated_at"),
            columns: row.json_columns(&[]),
        })
    }

    fn id(&self) -> &str {
        &self.id
    }

    fn without_row(id: &str) -> CrushSessionRow {
        CrushSessionRow { id: id.to_owned(), ..Default::default() }
    }

    fn parse(&self, messages: &[CrushMessageRow]) -> (ParsedSession, Vec<String>) {
        parse_crush_session(self, messages)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::error::Error;

    use annal_engine::{Block, Store, StoreOptions};
    use rusqlite::{params, Connection};
    use serde_json::Value;

    use crate::db::sqlite::BUSY_TIMEOUT_MS;

    use super::*;

    type TestResult = Result<(), Box<dyn Error>>;

    use annal_support::agent_schemas::CRUSH as SCHEMA;

    fn agent_db(dir: &Path, wal: bool) -> Result<Connection, Box<dyn Error>> {
        let db = Connection::open(dir.join("crush.db"))?;
        if wal {
            // Crush's own settings; no checkpoint, so what the tests write stays in the WAL.
            db.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")?;
        }
        db.execute_batch(SCHEMA)?;
        db.execute_batch(
            "INSERT INTO sessions (id, parent_session_id, title, updated_at, created_at) VALUES
                ('s1', NULL, 'Refactor 日本語 ✨', strftime('%s','now'), strftime('%s','now')),
                ('s2', 's1', 'Sub-agent', strftime('%s','now'), strftime('%s','now'));",
        )?;
        Ok(db)
    }

    fn message(db: &Connection, id: &str, session: &str, role: &str, parts: &str, ago_s: i64) -> TestResult {
        let finished = (role == "assistant" && parts.contains("finish")).then_some(1_751_991_383);
        db.execute(
            "INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at, finished_at)
             VALUES (?1, ?2, ?3, ?4, 'gpt-4o', 'openai', strftime('%s','now') - ?5, strftime('%s','now') - ?5, ?6)",
            params![id, session, role, parts, ago_s, finished],
        )?;
        Ok(())
    }

    fn text(text: &str) -> String {
        format!(
            r#"[{{"type":"text","data":{{"text":{}}}}},{{"type":"finish","data":{{"reason":"stop","time":1}}}}]"#,
            Value::from(text)
        )
    }

    /// Appends a reading as a sync would; returns the entryIds that were new to the store.
    fn sync(store: &Store, reading: &DbReading) -> Result<Vec<String>, Box<dyn Error>> {
        let mut new = Vec::new();
        for session in &reading.sessions {
            let receipt = store.append(&session.name, None, session.records.clone())?;
            let first_new = receipt.next - receipt.appended as u64;
            let orders = session.records.iter().zip(&receipt.source_orders);
            new.extend(orders.filter(|(_, order)| **order >= first_new).map(|(r, _)| r.entry_id.clone()));
        }
        Ok(new.into_iter().filter(|id| !id.contains(":session:")).collect())
    }

    #[test]
    fn reads_what_changed_and_nothing_twice() -> TestResult {
        let dir = tempfile::tempdir()?;
        let db = agent_db(dir.path(), true)?;
        let long = format!("中文 🦀 e\u{301} {}", "ü".repeat(300_000));
        message(&db, "m1", "s1", "user", &text(&long), 0)?;
        let call = r#"[{"type":"tool_call","data":{"id":"c1","name":"bash","input":"{\"command\":\"ls\"}","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1}}]"#;
        message(&db, "m2", "s1", "assistant", call, 0)?;
        let result = r#"[{"type":"tool_result","data":{"tool_call_id":"c1","name":"bash","content":"a\nb","is_error":false}}]"#;
        message(&db, "m3", "s1", "tool", result, 0)?;
        message(&db, "m4", "s2", "user", "[{\"type\":", 0)?;
        db.execute("INSERT INTO messages VALUES ('m5', 's2', 'user', X'FF', NULL, 1, 1, NULL, NULL, 0)", [])?;
        assert!(
            std::fs::metadata(dir.path().join("crush.db-wal"))?.len() > 0,
            "the data is still in the WAL"
        );

        let store = Store::open(dir.path().join("store.redb"), StoreOptions::default())?;
        let first = read(&dir.path().join("crush.db"), None)?;
        assert_eq!(sync(&store, &first)?, ["crush:m1", "crush:m2", "crush:m3"]);
        let blocks = &first.sessions[0].records[0].blocks;
        assert!(matches!(&blocks[0], Block::Text { text } if *text == long));
        assert_eq!(first.sessions[1].records[0].meta["parentSession"], "\"s1\"");
        assert_eq!(first.skipped.len(), 2, "{:?}", first.skipped);
        assert_eq!(first.skipped[0], "message \"m5\": column parts is not UTF-8 text");
        assert!(first.skipped[1].starts_with("session \"s2\", message \"m4\": parts is not JSON"));

        let second = read(&dir.path().join("crush.db"), Some(first.since_ms))?;
        assert!(sync(&store, &second)?.is_empty());
        assert_eq!(second.since_ms, first.since_ms);
        message(&db, "m6", "s1", "user", &text("次へ 👍"), 0)?;
        let third = read(&dir.path().join("crush.db"), Some(second.since_ms))?;
        assert_eq!(sync(&store, &third)?, ["crush:m6"]);
        Ok(())
    }

    #[test]
    fn an_assistant_reply_is_read_once_finished() -> TestResult {
        let dir = tempfile::tempdir()?;
        let db = agent_db(dir.path(), true)?;
        let path = dir.path().join("crush.db");
        message(&db, "old", "s1", "assistant", r#"[{"type":"text","data":{"text":"cut off"}}]"#, 7200)?;
        message(&db, "m1", "s1", "assistant", r#"[{"type":"text","data":{"text":"Stream"}}]"#, 0)?;
        let store = Store::open(dir.path().join("store.redb"), StoreOptions::default())?;
        let streaming = read(&path, None)?;
        assert_eq!(sync(&store, &streaming)?, ["crush:old"], "an abandoned reply is read as it is");
        let updated: i64 =
            db.query_row("SELECT updated_at FROM messages WHERE id = 'm1'", [], |r| r.get(0))?;
        assert!(streaming.since_ms <= updated * 1000);

        db.execute("UPDATE messages SET parts = ?1 WHERE id = 'm1'", [text("Streaming ✍️")])?;
        db.execute("UPDATE messages SET finished_at = 1751991383 WHERE id = 'm1'", [])?;
        let done = read(&path, Some(streaming.since_ms))?;
        assert_eq!(sync(&store, &done)?, ["crush:m1"]);
        assert_eq!(done.sessions[0].records[0].blocks[0], Block::text("Streaming ✍️"));
        Ok(())
    }

    #[test]
    fn schema_and_file_problems_are_errors() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("crush.db");
        Connection::open(&path)?.execute_batch("CREATE TABLE sessions (id TEXT, parent_session_id TEXT, title TEXT, updated_at INTEGER, created_at INTEGER);")?;
        let err = read(&path, None).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            err.ends_with("unknown schema: expected table \"messages\" (the database has no such table)"),
            "{err}"
        );
        Connection::open(&path)?
            .execute_batch("CREATE TABLE messages (id TEXT, session_id TEXT, role TEXT);")?;
        let err = read(&path, None).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.ends_with("\"messages\" with column \"parts\", \"created_at\", \"updated_at\", \"finished_at\" (missing)"), "{err}");
        let text = dir.path().join("notes.db");
        std::fs::write(&text, "Crush notes ✨\n".repeat(100))?;
        assert!(matches!(read(&text, None), Err(SourceError::Database { .. })));
        assert!(matches!(read(&dir.path().join("gone.db"), None), Err(SourceError::Io { .. })));
        Ok(())
    }

    #[test]
    fn a_writer_holding_the_database_is_reported_as_locked() -> TestResult {
        let dir = tempfile::tempdir()?;
        let db = agent_db(dir.path(), false)?;
        db.execute_batch("BEGIN EXCLUSIVE;")?;
        message(&db, "m1", "s1", "user", &text("hi"), 0)?;
        let result = read(&dir.path().join("crush.db"), None);
        assert!(matches!(result, Err(SourceError::Locked { waited_ms: BUSY_TIMEOUT_MS, .. })), "{result:?}");
        db.execute_batch("COMMIT;")?;
        let ids: HashSet<String> = read(&dir.path().join("crush.db"), None)?.sessions[0]
            .records
            .iter()
            .map(|r| r.entry_id.clone())
            .collect();
        assert!(ids.contains("crush:m1"));
        Ok(())
    }
}
