//! goose's `sessions.db`: message rows written since the cursor, grouped by session, turned
//! into records by the formats crate. Opening and row access are shared with the Crush reader.
//!
//! goose inserts a message once it is complete and never updates its content in place; when it
//! compacts or edits a conversation it deletes the session's rows and inserts them again. The
//! cursor is therefore the row's `timestamp` (when it was written: `CURRENT_TIMESTAMP`, UTC text
//! to the second) and the session's `updated_at`; a database without the `timestamp` column
//! falls back to `created_timestamp`. Rows written at or after the cursor are read, and the
//! cursor moves to the newest time seen, so the rows of that same second are read again and
//! stored once, by entryId. A rewritten conversation is read again whole; its messages keep
//! their `message_id` and so their entryIds.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use annal_engine::rfc3339_from_seconds;
use annal_formats::{parse_goose_session, GooseMessageRow, GooseSessionRow, ParsedSession};

use super::sqlite::{begin, open, query, sql_time_ms, table_columns, to_ms, Row};
use super::{DbReading, SessionRow};
use crate::error::SourceError;

const SESSION_COLUMNS: &[&str] = &["id", "updated_at"];
const MESSAGE_COLUMNS: &[&str] = &["id", "session_id", "role", "content_json", "created_timestamp"];
/// Columns the row's own fields hold, and `timestamp`, which a rewrite changes: none of them
/// is passed on as a plain column (a value a field cannot hold is, so nothing is lost).
const FIELDS: &[&str] = &[
    "id",
    "message_id",
    "session_id",
    "role",
    "content_json",
    "created_timestamp",
    "metadata_json",
    "timestamp",
];

/// Reads the sessions changed at or after `since_ms` (all with `None`).
pub(crate) fn read(path: &Path, since_ms: Option<i64>) -> Result<DbReading, SourceError> {
    let conn = open(path)?;
    let tx = begin(&conn, path)?;
    table_columns(&tx, path, "sessions", SESSION_COLUMNS)?;
    let columns = table_columns(&tx, path, "messages", MESSAGE_COLUMNS)?;
    let has = |name: &str| columns.iter().any(|column| column == name);
    let messages = if has("timestamp") {
        // Text compares as text: `2025-06-01T…` sorts after `2025-06-01 …`, so a row in the
        // other form is read again rather than missed.
        let sql = "SELECT * FROM messages WHERE typeof(timestamp) != 'text' OR timestamp >= ?1 ORDER BY session_id, id";
        query(&tx, path, sql, [sql_cursor(since_ms)])?
    } else {
        let sql = "SELECT * FROM messages WHERE typeof(created_timestamp) NOT IN ('integer', 'real') \
            OR (CASE WHEN abs(created_timestamp) >= 100000000000 THEN created_timestamp \
            ELSE created_timestamp * 1000 END) >= ?1 ORDER BY session_id, id";
        query(&tx, path, sql, [since_ms.unwrap_or(i64::MIN)])?
    };
    let mut first_ids = HashMap::new();
    if has("message_id") {
        let sql =
            "SELECT session_id, message_id, MIN(id) AS first FROM messages WHERE message_id IS NOT NULL \
            GROUP BY session_id, message_id HAVING COUNT(*) > 1";
        for row in query(&tx, path, sql, ())? {
            let key = (row.text("session_id").ok().flatten(), row.text("message_id").ok().flatten());
            first_ids.insert(key, row.int("first"));
        }
    }
    let sessions = query(&tx, path, "SELECT * FROM sessions ORDER BY id", ())?;
    drop(tx);
    Ok(assemble(&sessions, &messages, &first_ids, since_ms))
}

/// `(session, message_id)` → the first row id, for message ids on more than one row.
type FirstIds = HashMap<(Option<String>, Option<String>), Option<i64>>;

fn assemble(sessions: &[Row], messages: &[Row], first_ids: &FirstIds, since_ms: Option<i64>) -> DbReading {
    let mut reading = DbReading::default();
    let mut newest = since_ms.unwrap_or(0);
    let mut groups: BTreeMap<String, Vec<GooseMessageRow>> = BTreeMap::new();
    for (index, row) in messages.iter().enumerate() {
        let written = row.text("timestamp").ok().flatten().and_then(|text| sql_time_ms(&text));
        let written = written.or_else(|| row.int("created_timestamp").map(to_ms));
        newest = newest.max(written.unwrap_or(newest));
        match message_row(row, first_ids) {
            Ok((session, message)) => groups.entry(session).or_default().push(message),
            Err(why) => reading.skipped.push(format!("message {}: {why}", row.name(index))),
        }
    }
    reading.add_sessions::<GooseSessionRow>(sessions, &groups, since_ms, &mut newest);
    reading.since_ms = newest;
    reading
}

fn message_row(row: &Row, first_ids: &FirstIds) -> Result<(String, GooseMessageRow), String> {
    let session = row.required_text("session_id")?;
    let id = row.int("id").ok_or("column id is not an integer")?;
    let message_id = row.text("message_id").ok().flatten();
    let first = first_ids.get(&(Some(session.clone()), message_id.clone()));
    let created_timestamp = row.int("created_timestamp");
    let metadata_json = row.text("metadata_json");
    let mut except = FIELDS.to_vec();
    except.retain(|name| match *name {
        "created_timestamp" => created_timestamp.is_some(),
        "metadata_json" => metadata_json.is_ok(),
        _ => true,
    });
    let message = GooseMessageRow {
        id,
        repeated_id: first.is_some_and(|first| *first != Some(id)),
        message_id,
        role: row.required_text("role")?,
        content_json: row.required_text("content_json")?,
        created_timestamp,
        metadata_json: metadata_json.ok().flatten(),
        columns: row.json_columns(&except),
    };
    Ok((session, message))
}

impl SessionRow for GooseSessionRow {
    type Message = GooseMessageRow;

    fn updated_ms(row: &Row) -> Option<i64> {
        match row.text("updated_at") {
            Ok(Some(text)) => sql_time_ms(&text),
            _ => row.int("updated_at").map(to_ms),
        }
    }

    fn read(row: &Row) -> Result<GooseSessionRow, String> {
        Ok(GooseSessionRow {
            id: row.required_text("id")?,
            parent_session_id: row.text("parent_session_id").ok().flatten(),
            updated_at: row.text("updated_at").ok().flatten(),
            columns: row.json_columns(&[]),
        })
    }

    fn id(&self) -> &str {
        &self.id
    }

    fn without_row(id: &str) -> GooseSessionRow {
        GooseSessionRow { id: id.to_owned(), ..Default::default() }
    }

    fn parse(&self, messages: &[GooseMessageRow]) -> (ParsedSession, Vec<String>) {
        parse_goose_session(self, messages)
    }
}

/// The cursor as SQLite writes `CURRENT_TIMESTAMP` (`2025-06-01 10:00:00`), to the second.
fn sql_cursor(since_ms: Option<i64>) -> String {
    let text = since_ms.and_then(|ms| rfc3339_from_seconds(ms.div_euclid(1000))).unwrap_or_default();
    text.get(..19).map(|text| text.replacen('T', " ", 1)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::error::Error;

    use annal_engine::{Block, Store, StoreOptions};
    use rusqlite::{params, Connection};

    use super::*;

    type TestResult = Result<(), Box<dyn Error>>;

    use annal_support::agent_schemas::GOOSE;

    /// Two sessions, the second a sub-agent of the first.
    const SESSIONS: &str = "INSERT INTO sessions (id, name, working_dir, parent_session_id) VALUES
            ('20250601_1', 'Café ☕ 修登录页', '/home/u/p', NULL),
            ('20250601_2', 'sub-agent', '/home/u/p', '20250601_1');";

    fn agent_db(dir: &Path, wal: bool) -> Result<Connection, Box<dyn Error>> {
        let db = Connection::open(dir.join("sessions.db"))?;
        if wal {
            db.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")?;
        }
        db.execute_batch(GOOSE)?;
        db.execute_batch(SESSIONS)?;
        Ok(db)
    }

    /// What goose's `add_message` does: the row, then the session's `updated_at`.
    fn add(db: &Connection, session: &str, id: &str, role: &str, content: &str, created: i64) -> TestResult {
        db.execute(
            "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json)
             VALUES (?1, ?2, ?3, ?4, ?5, '{\"userVisible\":true,\"agentVisible\":true}')",
            params![id, session, role, content, created],
        )?;
        db.execute("UPDATE sessions SET updated_at = datetime('now') WHERE id = ?1", [session])?;
        Ok(())
    }

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
        let (db, path) = (agent_db(dir.path(), true)?, dir.path().join("sessions.db"));
        let long = format!("中文 🦢 a\u{308}\u{301} {}", "ß".repeat(300_000));
        let conversation = [
            ("m1", "user", format!(r#"[{{"type":"text","text":{}}}]"#, serde_json::Value::from(long.as_str()))),
            ("m2", "assistant", r#"[{"type":"toolRequest","id":"t1","toolCall":{"status":"success","value":{"name":"shell","arguments":{"command":"ls"}}}}]"#.into()),
            ("m3", "user", r#"[{"type":"toolResponse","id":"t1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"a"}],"isError":false}}}]"#.into()),
        ];
        for (n, (id, role, content)) in (0..).zip(&conversation) {
            add(&db, "20250601_1", id, role, content, 1_740_171_566 + n)?;
        }
        add(&db, "20250601_2", "m4", "user", "{not json", 1_740_171_570)?;
        assert!(std::fs::metadata(dir.path().join("sessions.db-wal"))?.len() > 0);

        let store = Store::open(dir.path().join("store.redb"), StoreOptions::default())?;
        let first = read(&path, None)?;
        let prefix = "goose:20250601_1:";
        assert_eq!(
            sync(&store, &first)?,
            [format!("{prefix}m1"), format!("{prefix}m2"), format!("{prefix}m3")]
        );
        assert!(matches!(&first.sessions[0].records[0].blocks[0], Block::Text { text } if *text == long));
        assert_eq!(first.sessions[0].records[2].blocks[0], Block::tool_result("t1", "shell", false, "a"));
        assert_eq!(first.sessions[1].records[0].meta["parentSession"], "\"20250601_1\"");
        assert!(
            first.skipped[0].starts_with("session \"20250601_2\", message row 4: content_json is not JSON")
        );

        assert!(sync(&store, &read(&path, Some(first.since_ms))?)?.is_empty());
        add(&db, "20250601_1", "m5", "assistant", r#"[{"type":"text","text":"完了 ✅"}]"#, 1_740_171_600)?;
        let third = read(&path, Some(first.since_ms))?;
        assert_eq!(sync(&store, &third)?, [format!("{prefix}m5")]);
        // A compaction rewrites the rows under new row ids: the same messages, nothing new.
        db.execute("DELETE FROM messages WHERE session_id = '20250601_1'", [])?;
        for (n, (id, role, content)) in (0..).zip(&conversation) {
            add(&db, "20250601_1", id, role, content, 1_740_171_566 + n)?;
        }
        assert!(sync(&store, &read(&path, Some(third.since_ms))?)?.is_empty());
        Ok(())
    }

    #[test]
    fn chunks_sharing_a_message_id_keep_their_ids_across_reads() -> TestResult {
        let dir = tempfile::tempdir()?;
        let (db, path) = (agent_db(dir.path(), false)?, dir.path().join("sessions.db"));
        for n in 0..2 {
            add(
                &db,
                "20250601_1",
                "chunked",
                "assistant",
                &format!(r#"[{{"type":"text","text":"part {n}"}}]"#),
                1_740_171_566,
            )?;
        }
        let first = read(&path, None)?;
        let ids: Vec<&str> = first.sessions[0].records.iter().map(|r| r.entry_id.as_str()).collect();
        assert_eq!(ids[..2], ["goose:20250601_1:chunked", "goose:20250601_1:row-2"]);
        db.execute("UPDATE messages SET timestamp = '2000-01-01 00:00:00'", [])?;
        add(
            &db,
            "20250601_1",
            "chunked",
            "assistant",
            r#"[{"type":"text","text":"part 2"}]"#,
            1_740_171_567,
        )?;
        let later = read(&path, Some(first.since_ms))?;
        assert_eq!(later.sessions[0].records[0].entry_id, "goose:20250601_1:row-3");
        Ok(())
    }

    #[test]
    fn schema_lock_and_file_problems_are_errors() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("sessions.db");
        Connection::open(&path)?
            .execute_batch("CREATE TABLE sessions (id TEXT PRIMARY KEY, updated_at TIMESTAMP);")?;
        let err = read(&path, None).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.ends_with("expected table \"messages\" (the database has no such table)"), "{err}");
        Connection::open(&path)?
            .execute_batch("CREATE TABLE messages (id INTEGER, session_id TEXT, role TEXT);")?;
        let err = read(&path, None).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.ends_with("with column \"content_json\", \"created_timestamp\" (missing)"), "{err}");
        std::fs::write(dir.path().join("notes.db"), "goose 🪿 notes\n".repeat(100))?;
        assert!(matches!(read(&dir.path().join("notes.db"), None), Err(SourceError::Database { .. })));

        let locked = tempfile::tempdir()?;
        let db = agent_db(locked.path(), false)?;
        db.execute_batch("BEGIN EXCLUSIVE;")?;
        add(&db, "20250601_1", "m1", "user", "[]", 1)?;
        let result = read(&locked.path().join("sessions.db"), None);
        assert!(matches!(result, Err(SourceError::Locked { .. })), "{result:?}");
        Ok(())
    }

    #[test]
    fn sqlite_times_and_cursors() {
        assert_eq!(sql_time_ms("2025-06-01 10:00:00"), Some(1_748_772_000_000));
        assert_eq!(sql_time_ms("2025-06-01T10:00:00.5+02:00"), Some(1_748_764_800_500));
        assert_eq!(sql_time_ms("2025-06-01"), None);
        assert_eq!(sql_cursor(Some(1_748_772_000_999)), "2025-06-01 10:00:00");
        assert_eq!(sql_cursor(None), "");
    }
}
