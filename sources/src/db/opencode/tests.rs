//! The OpenCode database reader over real databases built with OpenCode's own schema.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use annal_engine::{Block, Store, StoreOptions};
use annal_formats::{load_session, ParsedSession};
use rusqlite::params;

use annal_support::agent_schemas::OPENCODE;

use super::*;

/// A project for the sessions to belong to.
const PROJECT: &str =
    "INSERT INTO project VALUES ('p1', '/src/app', 'git', NULL, NULL, NULL, 1, 1, NULL, '[]');";

const T: i64 = 1_771_210_919_000;
const USER: &str = r#"{"role":"user","time":{"created":1771210919000},"agent":"build"}"#;
const DONE: &str = r#"{"role":"assistant","parentID":"msg_1","time":{"created":1771210919500,"completed":1771210930000},"finish":"stop"}"#;
const STREAMING: &str = r#"{"role":"assistant","parentID":"msg_3","time":{"created":1771210940000}}"#;

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    db: Connection,
}

/// A database like OpenCode's: one session (Japanese title) and its sub-agent, a finished
/// exchange with text in several scripts, an emoji and a combining accent.
fn fixture(journal: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opencode.db");
    let db = Connection::open(&path).unwrap();
    db.pragma_update(None, "journal_mode", journal).unwrap();
    db.execute_batch(OPENCODE).unwrap();
    db.execute_batch(PROJECT).unwrap();
    session(&db, "ses_1", None, "日本語のセッション", T);
    session(&db, "ses_2", Some("ses_1"), "sub-agent: café", T);
    message(&db, "ses_1", "msg_1", T, USER);
    part(&db, "msg_1", "prt_1", T, r#"{"type":"text","text":"list the files, s'il vous plai\u0302t 🙏"}"#);
    message(&db, "ses_1", "msg_2", T + 500, DONE);
    part(&db, "msg_2", "prt_2", T + 600, r#"{"type":"reasoning","text":"用 glob 找文件"}"#);
    part(&db, "msg_2", "prt_3", T + 700, &tool("c1", "completed", "a.rs\nb.rs"));
    message(&db, "ses_2", "msg_9", T + 800, USER);
    part(&db, "msg_9", "prt_9", T + 800, r#"{"type":"text","text":"Ελληνικά"}"#);
    Fixture { _dir: dir, path, db }
}

fn session(db: &Connection, id: &str, parent: Option<&str>, title: &str, updated: i64) {
    let sql = "INSERT OR REPLACE INTO session (id, project_id, parent_id, slug, directory, title, version,
        time_created, time_updated) VALUES (?1, 'p1', ?2, 'quiet-owl', '/src/app', ?3, '1.2.6', ?4, ?4)";
    db.execute(sql, params![id, parent, title, updated]).unwrap();
}

fn message(db: &Connection, session: &str, id: &str, updated: i64, data: &str) {
    let sql = "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)
        ON CONFLICT (id) DO UPDATE SET data = excluded.data, time_updated = excluded.time_updated";
    db.execute(sql, params![id, session, updated, data]).unwrap();
}

fn part(db: &Connection, message: &str, id: &str, updated: i64, data: &str) {
    let sql = "INSERT INTO part SELECT ?1, ?2, session_id, ?3, ?3, ?4 FROM message WHERE id = ?2
        ON CONFLICT (id) DO UPDATE SET data = excluded.data, time_updated = excluded.time_updated";
    db.execute(sql, params![id, message, updated, data]).unwrap();
}

fn tool(call: &str, status: &str, output: &str) -> String {
    let state = serde_json::json!({"status": status, "input": {"pattern": "*.rs"}, "output": output});
    serde_json::json!({"type": "tool", "callID": call, "tool": "glob", "state": state}).to_string()
}

fn ids(reading: &DbReading) -> Vec<String> {
    let ids = reading.sessions.iter().flat_map(|s| s.records.iter().map(|r| r.entry_id.clone()));
    ids.filter(|id| !id.contains(":info:")).collect()
}

fn store(sessions: &[ParsedSession], store: &Store) -> u64 {
    sessions.iter().map(|s| load_session(store, s.clone()).unwrap().appended).sum()
}

#[test]
fn reads_everything_then_only_what_changed() {
    let f = fixture("wal");
    let first = read(&f.path, None).unwrap();
    assert!(first.skipped.is_empty(), "{:?}", first.skipped);
    assert_eq!(ids(&first), ["msg_1", "msg_2", "msg_2/result", "msg_9"]);
    assert_eq!(first.since_ms, T + 800);
    let main = &first.sessions[0];
    assert_eq!(
        main.records[0].blocks,
        [Block::Text { text: "list the files, s'il vous plai\u{302}t 🙏".into() }]
    );
    assert!(main.records[3].meta["session"].contains(r#""title":"日本語のセッション""#));
    assert_eq!(first.sessions[1].records[0].meta["parentSession"], "\"ses_1\"");
    let dir = tempfile::tempdir().unwrap();
    let annal = Store::open(dir.path().join("s.annal"), StoreOptions::default()).unwrap();
    assert_eq!(store(&first.sessions, &annal), 6);

    // From the cursor: the rows at exactly its time come again, and store nothing new.
    let again = read(&f.path, Some(first.since_ms)).unwrap();
    assert_eq!(ids(&again), ["msg_9"]);
    assert_eq!(store(&again.sessions, &annal), 0);

    message(&f.db, "ses_1", "msg_3", T + 2000, USER);
    part(&f.db, "msg_3", "prt_4", T + 2000, r#"{"type":"text","text":"и ещё"}"#);
    let next = read(&f.path, Some(again.since_ms)).unwrap();
    assert_eq!(ids(&next), ["msg_3", "msg_9"]);
    assert_eq!(next.since_ms, T + 2000);
    assert_eq!(store(&next.sessions, &annal), 1);

    // A part changed in place: its message is read again, whole.
    part(&f.db, "msg_2", "prt_2", T + 3000, r#"{"type":"reasoning","text":"用 glob 找文件 ✓"}"#);
    let edited = read(&f.path, Some(next.since_ms)).unwrap();
    assert_eq!(ids(&edited), ["msg_2", "msg_2/result", "msg_3"], "msg_3 is at the cursor's time");
    assert_eq!(edited.sessions[0].records[0].blocks[0], Block::Thinking { text: "用 glob 找文件 ✓".into() });
}

#[test]
fn a_message_being_streamed_waits_until_it_is_complete() {
    let f = fixture("wal");
    let first = read(&f.path, None).unwrap();
    message(&f.db, "ses_1", "msg_3", T + 2000, USER);
    message(&f.db, "ses_1", "msg_4", T + 2100, STREAMING);
    part(&f.db, "msg_4", "prt_5", T + 2200, &tool("c2", "running", ""));
    part(&f.db, "msg_4", "prt_6", T + 2300, r#"{"type":"text","text":"Let me"}"#);
    let streaming = read(&f.path, Some(first.since_ms + 1)).unwrap();
    assert_eq!(ids(&streaming), ["msg_3"]);
    assert_eq!(streaming.since_ms, T + 2300, "held at the message's newest update");

    part(&f.db, "msg_4", "prt_6", T + 2500, r#"{"type":"text","text":"Let me look 👀"}"#);
    let still = read(&f.path, Some(streaming.since_ms)).unwrap();
    assert_eq!(ids(&still), Vec::<String>::new());
    assert_eq!(still.since_ms, T + 2500);

    part(&f.db, "msg_4", "prt_5", T + 2600, &tool("c2", "completed", "ok"));
    message(&f.db, "ses_1", "msg_4", T + 2700, &STREAMING.replace("0}", "0,\"completed\":1771210941000}"));
    let done = read(&f.path, Some(still.since_ms)).unwrap();
    assert_eq!(ids(&done), ["msg_4", "msg_4/result"]);
    assert_eq!(done.since_ms, T + 2700);
}

#[test]
fn a_message_cut_off_does_not_hold_the_cursor() {
    let f = fixture("wal");
    message(&f.db, "ses_1", "msg_4", T + 2100, STREAMING);
    message(&f.db, "ses_2", "msg_5", T + 2100 + ABANDONED_AFTER_MS + 1, USER);
    let reading = read(&f.path, None).unwrap();
    assert!(ids(&reading).contains(&"msg_4".to_owned()), "untouched for long");
    assert_eq!(reading.since_ms, T + 2100 + ABANDONED_AFTER_MS + 1);

    message(&f.db, "ses_2", "msg_6", T + 3000, STREAMING);
    message(&f.db, "ses_2", "msg_7", T + 3100, DONE);
    let reading = read(&f.path, Some(T + 2900)).unwrap();
    assert_eq!(ids(&reading), ["msg_6", "msg_7", "msg_5"], "another answer follows it");
}

#[test]
fn session_columns_become_the_export_info() {
    let f = fixture("delete");
    f.db.execute_batch(
        "ALTER TABLE session ADD COLUMN tokens_input integer DEFAULT 0 NOT NULL;
         ALTER TABLE session ADD COLUMN tokens_cache_read integer DEFAULT 0 NOT NULL;
         ALTER TABLE session ADD COLUMN model text;
         UPDATE session SET share_url = '', summary_files = 2, model = '{\"id\":\"m\"}', tokens_cache_read = 7;",
    )
    .unwrap();
    let mut statement = f.db.prepare("SELECT * FROM session WHERE id = 'ses_2'").unwrap();
    let info = statement.query_row([], |row| Ok(session_info(row))).unwrap();
    let expected = serde_json::json!({
        "id": "ses_2", "projectID": "p1", "parentID": "ses_1", "slug": "quiet-owl", "directory": "/src/app",
        "title": "sub-agent: café", "version": "1.2.6", "model": {"id": "m"},
        "summary": {"additions": 0, "deletions": 0, "files": 2},
        "tokens": {"input": 0, "cache": {"read": 7}}, "time": {"created": T, "updated": T}});
    assert_eq!(Value::Object(info), expected);
}

#[test]
fn bad_rows_are_skipped_and_named() {
    let f = fixture("wal");
    f.db.execute_batch(
        "PRAGMA ignore_check_constraints = 1;
         INSERT INTO message VALUES ('msg_a', 'ses_1', 1, 'soon', '{}');
         INSERT INTO message VALUES ('msg_b', 'ses_1', 1, 1771210919000, '{oops');
         INSERT INTO part VALUES ('prt_a', 'msg_1', 'ses_1', 1, 1771210919000, x'00ff');",
    )
    .unwrap();
    let reading = read(&f.path, None).unwrap();
    let lines = reading.skipped.join("\n");
    assert!(lines.contains(r#"message "msg_a": time_updated is not an integer"#), "{lines}");
    assert!(lines.contains(r#"message "msg_b": not JSON"#), "{lines}");
    assert!(lines.contains(r#"part "prt_a" of message "msg_1""#), "{lines}");
    assert!(reading.skipped.iter().all(|l| l.starts_with(&*f.path.to_string_lossy())), "{lines}");
    assert_eq!(ids(&reading), ["msg_1", "msg_2", "msg_2/result", "msg_9"]);
}

#[test]
fn what_is_not_opencodes_database_is_refused_by_name() {
    let f = fixture("wal");
    f.db.execute_batch("ALTER TABLE part DROP COLUMN data").unwrap();
    let err = read(&f.path, None).unwrap_err().to_string();
    assert!(err.ends_with(r#"unknown schema: expected table "part" with column "data" (missing)"#), "{err}");
    f.db.execute_batch("DROP TABLE message").unwrap();
    let err = read(&f.path, None).unwrap_err().to_string();
    assert!(err.contains(r#"expected table "message" (the database has no such table)"#), "{err}");

    let text = f.path.with_file_name("notes.db");
    std::fs::write(&text, "これはデータベースではありません\n".repeat(200)).unwrap();
    let err = read(&text, None).unwrap_err();
    assert!(matches!(err, SourceError::Database { .. }), "{err}");
    assert!(err.to_string().contains("notes.db: file is not a database"), "{err}");
    let err = read(&f.path.with_file_name("absent.db"), None).unwrap_err();
    assert!(matches!(err, SourceError::Io { .. }), "{err}");
}

#[test]
fn a_writer_holding_the_database_is_waited_for_then_reported() {
    let f = fixture("delete");
    let writer = Connection::open(&f.path).unwrap();
    writer.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let err = read(&f.path, None).unwrap_err();
    assert!(matches!(err, SourceError::Locked { waited_ms: 2_000, .. }), "{err}");
    writer.execute_batch("COMMIT").unwrap();
    assert_eq!(ids(&read(&f.path, None).unwrap()).len(), 4);
}

#[test]
fn commits_still_in_the_write_ahead_log_are_read() {
    let f = fixture("wal");
    f.db.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    message(&f.db, "ses_1", "msg_3", T + 2000, USER);
    let wal = std::fs::metadata(f.path.with_file_name("opencode.db-wal")).unwrap();
    assert!(wal.len() > 0);
    // The agent keeps its connection open, so nothing is checkpointed.
    let reading = read(&f.path, Some(T + 1000)).unwrap();
    assert_eq!(ids(&reading), ["msg_3"]);
}
