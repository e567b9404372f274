//! `annal sync` through the facade (`annal::Annal::sync`, and `import_file` given a database's
//! path) over the agents that keep sessions in SQLite (OpenCode, Crush, goose, Zed), with databases
//! built from each agent's own schema where the agent puts them: found, read, read again only
//! when the database or its write-ahead log changed, a message finished in place stored once
//! complete, and a locked or unknown database reported while the rest is read.

use std::error::Error;
use std::path::{Path, PathBuf};

use annal::sync::{Agent, Environment, SourceReport, SyncOptions, SyncReport};
use annal::Annal;
use annal_support::agent_schemas::{CRUSH, GOOSE, OPENCODE};
use rusqlite::{params, Connection};

type TestResult = Result<(), Box<dyn Error>>;

fn options(home: &Path, agents: &[Agent], projects: Vec<PathBuf>) -> SyncOptions {
    SyncOptions { agents: agents.to_vec(), environment: Environment::with_home(home), projects }
}

fn source(report: &SyncReport, agent: Agent) -> &SourceReport {
    report.sources.iter().find(|s| s.agent == agent).expect("the agent was synced")
}

fn session_len(annal: &Annal, name: &str) -> Result<u64, Box<dyn Error>> {
    Ok(annal.snapshot()?.session(name)?.map_or(0, |s| s.len))
}

/// An OpenCode database in WAL mode, as OpenCode keeps it, with one session.
fn opencode_db(path: &Path) -> Result<Connection, Box<dyn Error>> {
    std::fs::create_dir_all(path.parent().ok_or("a folder")?)?;
    let db = Connection::open(path)?;
    db.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")?;
    db.execute_batch(OPENCODE)?;
    db.execute_batch(
        "INSERT INTO project VALUES ('p1', '/src/app', 'git', NULL, NULL, NULL, 1, 1, NULL, '[]');",
    )?;
    db.execute(
        "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
         VALUES ('ses_1', 'p1', 'quiet-owl', '/src/app', '解析器の修正 🦀', '1.2.6', 1, 1)",
        [],
    )?;
    Ok(db)
}

pub(crate) fn opencode_message(db: &Connection, id: &str, at: i64, data: &str, text: &str) -> TestResult {
    db.execute(
        "INSERT INTO message VALUES (?1, 'ses_1', ?2, ?2, ?3)
         ON CONFLICT (id) DO UPDATE SET data = excluded.data, time_updated = excluded.time_updated",
        params![id, at, data],
    )?;
    let part = serde_json::json!({"type": "text", "text": text}).to_string();
    db.execute(
        "INSERT INTO part VALUES (?1, ?2, 'ses_1', ?3, ?3, ?4)
         ON CONFLICT (id) DO UPDATE SET data = excluded.data, time_updated = excluded.time_updated",
        params![format!("prt_{id}"), id, at, part],
    )?;
    Ok(())
}

/// Ages a database and its log as if their last write were seconds ago: a database written
/// within the last moments is read again at every pass (see the test below).
pub(crate) fn settle(db: &Path) -> TestResult {
    let before = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    for path in [db.as_os_str().to_owned(), wal] {
        if let Ok(file) = std::fs::File::options().append(true).open(&path) {
            file.set_modified(before)?;
        }
    }
    Ok(())
}

/// A database at `path` in WAL mode, as the agents keep theirs, made from `schema`.
pub(crate) fn agent_db(path: &Path, schema: &str) -> Result<Connection, Box<dyn Error>> {
    std::fs::create_dir_all(path.parent().ok_or("a folder")?)?;
    let db = Connection::open(path)?;
    db.execute_batch("PRAGMA journal_mode = WAL;")?;
    db.execute_batch(schema)?;
    Ok(db)
}

#[test]
fn a_database_just_written_is_read_again_until_it_settles() -> TestResult {
    // SQLite publishes a commit in shared memory after syncing its log: a pass woken by the
    // log's writes can read the rows before they are visible, through files that will not
    // change again. Such a database is read again while its last write is recent.
    let home = tempfile::tempdir()?;
    let path = home.path().join(".local/share/opencode/opencode.db");
    let db = opencode_db(&path)?;
    opencode_message(&db, "msg_1", 1000, r#"{"role":"user","time":{"created":1000}}"#, "hello 世界")?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let opencode = options(home.path(), &[Agent::OpenCode], Vec::new());
    let first = annal.sync(&opencode)?;
    let report = source(&first, Agent::OpenCode);
    assert_eq!((report.units_read, report.units_unsettled), (1, 1), "{report:?}");
    let again = annal.sync(&opencode)?;
    let report = source(&again, Agent::OpenCode);
    assert_eq!(
        (report.units_read, report.records_new),
        (1, 0),
        "read again, nothing stored twice: {report:?}"
    );
    settle(&path)?;
    let settled = annal.sync(&opencode)?;
    assert_eq!(source(&settled, Agent::OpenCode).units_unsettled, 0);
    assert_eq!(source(&annal.sync(&opencode)?, Agent::OpenCode).units_read, 0, "then left alone");
    Ok(())
}

#[test]
fn opencode_database_read_from_its_cursor() -> TestResult {
    let home = tempfile::tempdir()?;
    let path = home.path().join(".local/share/opencode/opencode.db");
    let db = opencode_db(&path)?;
    let user = r#"{"role":"user","time":{"created":1000}}"#;
    opencode_message(&db, "msg_1", 1000, user, "rename the 解析器 module, s'il vous plai\u{302}t")?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let opencode = options(home.path(), &[Agent::OpenCode], Vec::new());
    settle(&path)?;
    let first = annal.sync(&opencode)?;
    let report = source(&first, Agent::OpenCode);
    assert_eq!((report.units, report.units_read), (1, 1), "{report:?}");
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    let stored = session_len(&annal, "ses_1")?;
    assert!(stored >= 1, "nothing stored");
    // Unchanged database and log: not even opened.
    assert_eq!(source(&annal.sync(&opencode)?, Agent::OpenCode).units_read, 0);
    // An answer being streamed is left for later, then stored once complete.
    let streaming = r#"{"role":"assistant","parentID":"msg_1","time":{"created":2000}}"#;
    opencode_message(&db, "msg_2", 2000, streaming, "Looking")?;
    settle(&path)?;
    let during = annal.sync(&opencode)?;
    assert_eq!(source(&during, Agent::OpenCode).units_read, 1);
    assert_eq!(session_len(&annal, "ses_1")?, stored, "a message still being written was stored");
    let done =
        r#"{"role":"assistant","parentID":"msg_1","time":{"created":2000,"completed":2500},"finish":"stop"}"#;
    opencode_message(&db, "msg_2", 2500, done, "Looking… done: src/parse.rs renamed ✓")?;
    settle(&path)?;
    let after = annal.sync(&opencode)?;
    assert!(source(&after, Agent::OpenCode).records_new >= 1);
    let grown = session_len(&annal, "ses_1")?;
    assert!(grown > stored);
    assert_eq!(source(&annal.sync(&opencode)?, Agent::OpenCode).records_new, 0);
    assert_eq!(session_len(&annal, "ses_1")?, grown);
    Ok(())
}

#[test]
fn a_locked_or_unknown_database_is_reported_and_read_again_later() -> TestResult {
    let home = tempfile::tempdir()?;
    let path = home.path().join(".local/share/opencode/opencode.db");
    let db = opencode_db(&path)?;
    db.execute_batch("PRAGMA journal_mode = DELETE;")?;
    opencode_message(&db, "msg_1", 1000, r#"{"role":"user","time":{"created":1000}}"#, "hello")?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let opencode = options(home.path(), &[Agent::OpenCode], Vec::new());
    // The agent holds a write lock: reported, nothing stored, nothing fatal.
    let writer = Connection::open(&path)?;
    writer.execute_batch("BEGIN EXCLUSIVE")?;
    let locked = annal.sync(&opencode)?;
    let problems = source(&locked, Agent::OpenCode).problems.join("\n");
    assert!(problems.contains("is locked by its agent"), "{problems}");
    writer.execute_batch("COMMIT")?;
    // Its cursor did not advance: the next sync reads it.
    let later = annal.sync(&opencode)?;
    assert!(source(&later, Agent::OpenCode).problems.is_empty());
    assert!(session_len(&annal, "ses_1")? >= 1);

    // goose's folder holding a database of another schema: named with the table expected.
    let goose = home.path().join(".local/share/goose/sessions");
    std::fs::create_dir_all(&goose)?;
    Connection::open(goose.join("sessions.db"))?
        .execute_batch("CREATE TABLE notes (id INTEGER, body TEXT);")?;
    let report = annal.sync(&options(home.path(), &[Agent::Goose], Vec::new()))?;
    let problems = source(&report, Agent::Goose).problems.join("\n");
    assert!(problems.contains("unknown schema: expected table \"sessions\""), "{problems}");
    Ok(())
}

#[test]
fn crush_in_project_folders_and_goose_in_its_data_folder() -> TestResult {
    let home = tempfile::tempdir()?;
    let crush_dir = home.path().join("code/app/.crush");
    std::fs::create_dir_all(&crush_dir)?;
    let crush = Connection::open(crush_dir.join("crush.db"))?;
    crush.execute_batch(CRUSH)?;
    crush.execute_batch(
        "INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('cs1', 'Refactor 日本語', 1751991000, 1751991000);
         INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES
            ('m1', 'cs1', 'user', '[{\"type\":\"text\",\"data\":{\"text\":\"fix the build 🦀\"}}]', 1751991001, 1751991001);",
    )?;
    let goose_dir = home.path().join(".local/share/goose/sessions");
    std::fs::create_dir_all(&goose_dir)?;
    let goose = Connection::open(goose_dir.join("sessions.db"))?;
    goose.execute_batch(GOOSE)?;
    goose.execute_batch(
        "INSERT INTO sessions (id, name, working_dir) VALUES ('20261130_1', 'Café ☕', '/src/app');
         INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) VALUES
            ('msg_a', '20261130_1', 'user', '[{\"type\":\"text\",\"text\":\"list the files\"}]', 1764496800);",
    )?;
    settle(&crush_dir.join("crush.db"))?;
    settle(&goose_dir.join("sessions.db"))?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let agents = options(home.path(), &[Agent::Goose, Agent::Crush], vec![home.path().join("code")]);
    let report = annal.sync(&agents)?;
    for agent in [Agent::Goose, Agent::Crush] {
        let source = source(&report, agent);
        assert_eq!((source.units, source.units_read), (1, 1), "{source:?}");
        assert!(source.records_new >= 1 && source.problems.is_empty(), "{source:?}");
    }
    assert!(session_len(&annal, "cs1")? >= 1);
    assert!(session_len(&annal, "20261130_1")? >= 1);
    let again = annal.sync(&agents)?;
    assert!(again.sources.iter().all(|s| s.units_read == 0), "{:?}", again.sources);
    goose.execute(
        "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) VALUES
            ('msg_b', '20261130_1', 'assistant', '[{\"type\":\"text\",\"text\":\"a.rs b.rs\"}]', 1764496801)",
        [],
    )?;
    settle(&goose_dir.join("sessions.db"))?;
    let grown = annal.sync(&agents)?;
    assert_eq!(source(&grown, Agent::Goose).records_new, 1);
    assert_eq!(source(&grown, Agent::Crush).units_read, 0);
    // Given by its path, as `annal import` takes it, a database is read as sync reads it.
    let copy = Annal::open(home.path().join("imported.redb"))?;
    let imported = copy.import_file(goose_dir.join("sessions.db"), None)?;
    assert_eq!((imported.agent, imported.format), (Some(Agent::Goose), None));
    assert_eq!(imported.sessions, vec!["20261130_1".to_owned()]);
    assert!(imported.failed.is_empty() && imported.skipped_rows.is_empty(), "{imported:?}");
    assert_eq!(session_len(&copy, "20261130_1")?, session_len(&annal, "20261130_1")?);
    assert_eq!(copy.import_file(goose_dir.join("sessions.db"), None)?.records_new, 0, "imported twice");
    Ok(())
}

/// A Zed thread as Zed saves it: its JSON, zstd-compressed, upserted whole.
pub(crate) fn zed_save(db: &Connection, id: &str, at: &str, messages: &[serde_json::Value]) -> TestResult {
    let thread = serde_json::json!({"title": "Fix the parser", "version": "0.3.0", "updated_at": at,
        "messages": messages});
    let data = zstd::encode_all(thread.to_string().as_bytes(), 3)?;
    db.execute(
        "INSERT INTO threads (id, summary, updated_at, data_type, data) VALUES (?1, 'Fix the parser', ?2, 'zstd', ?3)
         ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, data = excluded.data",
        params![id, at, data],
    )?;
    Ok(())
}

#[test]
fn zed_threads_saved_whole_are_read_from_their_cursor() -> TestResult {
    let home = tempfile::tempdir()?;
    let dir = home.path().join(".local/share/zed/threads");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("threads.db");
    let db = Connection::open(&path)?;
    db.execute_batch("PRAGMA journal_mode = WAL;")?;
    db.execute_batch(annal_support::agent_schemas::ZED)?;
    let user = serde_json::json!({"User": {"id": "u1", "content": [{"Text": "fix the 解析器 🦀"}]}});
    let reply = |text: &str| serde_json::json!({"Agent": {"content": [{"Text": text}], "tool_results": {}}});
    zed_save(&db, "z1", "2026-11-30T10:00:00Z", &[user.clone(), reply("Reading")])?;
    // A thread stored as plain JSON, as older Zed wrote them.
    let old =
        serde_json::json!({"title": "old", "updated_at": "2026-11-29T10:00:00Z", "messages": [user.clone()]});
    db.execute(
        "INSERT INTO threads (id, summary, updated_at, data_type, data) VALUES ('z0', 'old', '2026-11-29T10:00:00Z', 'json', ?1)",
        params![old.to_string()],
    )?;
    settle(&path)?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let zed = options(home.path(), &[Agent::Zed], Vec::new());
    let first = annal.sync(&zed)?;
    let report = source(&first, Agent::Zed);
    assert_eq!((report.units, report.records_new), (1, 5), "{report:?}");
    assert!(report.problems.is_empty() && report.skipped.is_empty(), "{report:?}");
    assert_eq!((session_len(&annal, "z1")?, session_len(&annal, "z0")?), (3, 2));

    // Saved again: the reply completed and one more message; the old thread untouched.
    zed_save(&db, "z1", "2026-11-30T10:01:00Z", &[user.clone(), reply("Reading it. Done."), user])?;
    settle(&path)?;
    let second = annal.sync(&zed)?;
    // The changed reply as a revision and the new message; the thread's fields moved only in
    // its time, which is no record's.
    assert_eq!(source(&second, Agent::Zed).records_new, 2, "{second:?}");
    assert_eq!(session_len(&annal, "z1")?, 5);
    assert_eq!(session_len(&annal, "z0")?, 2);
    assert_eq!(source(&annal.sync(&zed)?, Agent::Zed).units_read, 0);
    // A thread whose data cannot be read: reported, the rest kept.
    db.execute(
        "INSERT INTO threads (id, summary, updated_at, data_type, data) VALUES ('z2', 'bad', '2026-11-30T10:02:00Z', 'zstd', x'28b52ffd00')",
        [],
    )?;
    settle(&path)?;
    let bad = annal.sync(&zed)?;
    let report = source(&bad, Agent::Zed);
    assert_eq!((report.records_new, report.skipped.len()), (0, 1), "{report:?}");
    assert!(report.skipped[0].starts_with("thread \"z2\": data is not zstd"), "{report:?}");
    assert_eq!(session_len(&annal, "z1")?, 5);
    // Given by its path, as `annal import` takes it.
    let copy = Annal::open(home.path().join("imported.redb"))?;
    let imported = copy.import_file(&path, None)?;
    assert_eq!(imported.agent, Some(Agent::Zed));
    assert!(imported.failed.is_empty() && imported.skipped_rows.len() == 1, "{imported:?}");
    assert!(annal.verify(None)?.is_ok());
    Ok(())
}
