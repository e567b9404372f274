//! The five steps of `sync_each_source`, for every source that reads a database: each agent's
//! database built from its own schema where the agent keeps it, then discovery (a survey finds
//! it and reads nothing), a first sync, a second that reads nothing, rows added as the agent
//! adds them (only what is new is stored), and a row that cannot be read (named, nothing else
//! lost). What is particular to each reader (revisions, compactions, locks, unknown schemas,
//! `annal import` by path) is in `sync_databases`, `sync_cursor` and `sync_kiro`.

use annal::sync::Agent;
use annal::Annal;
use annal_support::agent_schemas;
use rusqlite::{params, Connection};
use serde_json::{json, Value};

use crate::sync_cursor::{bubble, cli_chat, composer, put};
use crate::sync_databases::{agent_db, opencode_message, settle, zed_save};
use crate::sync_each_source::first_steps;
use crate::sync_kiro::{entry, save};
use crate::sync_sources::{options, session_len, source, TestResult, TEXT};

type Step = fn(&Connection) -> TestResult;

/// One database source's fixture: where the agent keeps its database and its schema, the rows
/// it holds at first, the rows added later and how many records they make, and a row that
/// cannot be read with what its report names.
struct Case {
    name: &'static str,
    agent: Agent,
    file: &'static str,
    schema: &'static str,
    session: &'static str,
    first: Step,
    grow: Step,
    added: u64,
    bad: Step,
    said: &'static str,
    /// The project folder to sync, for an agent that keeps its database in projects.
    project: Option<&'static str>,
}

fn opencode_first(db: &Connection) -> TestResult {
    db.execute_batch(
        "INSERT INTO project VALUES ('p1', '/src/app', 'git', NULL, NULL, NULL, 1, 1, NULL, '[]');
         INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
            VALUES ('ses_1', 'p1', 'quiet-owl', '/src/app', '解析器の修正 🦀', '1.2.6', 1, 1);",
    )?;
    opencode_message(db, "msg_1", 1000, r#"{"role":"user","time":{"created":1000}}"#, TEXT)
}

fn opencode_grow(db: &Connection) -> TestResult {
    let done =
        r#"{"role":"assistant","parentID":"msg_1","time":{"created":2000,"completed":2500},"finish":"stop"}"#;
    opencode_message(db, "msg_2", 2500, done, "done ✓")
}

fn opencode_bad(db: &Connection) -> TestResult {
    db.execute("INSERT INTO message VALUES ('msg_bad', 'ses_1', 3000, 3000, '{\"role\": \"us')", [])?;
    Ok(())
}

fn crush_first(db: &Connection) -> TestResult {
    // Crush's triggers stamp rows with the wall clock's second, so what a pass reads would
    // depend on when it runs; the session row's versions are `sync_databases`' subject.
    db.execute_batch(
        "DROP TRIGGER update_sessions_updated_at; DROP TRIGGER update_messages_updated_at;
         DROP TRIGGER update_session_message_count_on_insert;
         INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('cs1', 'Refactor 日本語', 1751991000, 1751991000);
         INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES
            ('m1', 'cs1', 'user', '[{\"type\":\"text\",\"data\":{\"text\":\"fix the build 🦀\"}}]', 1751991001, 1751991001);",
    )?;
    Ok(())
}

fn crush_grow(db: &Connection) -> TestResult {
    db.execute_batch(
        "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at, finished_at) VALUES
            ('m2', 'cs1', 'assistant', '[{\"type\":\"text\",\"data\":{\"text\":\"built\u{3000}✓\"}}]', 1751991002, 1751991002, 1751991003);",
    )?;
    Ok(())
}

fn crush_bad(db: &Connection) -> TestResult {
    db.execute_batch(
        "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES
            ('bad', 'cs1', 'user', '[{\"type\":\"te', 1751991004, 1751991004);",
    )?;
    Ok(())
}

fn goose_message(db: &Connection, id: &str, role: &str, content: &str, at: i64) -> TestResult {
    db.execute(
        "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) VALUES
            (?1, '20261130_1', ?2, ?3, ?4)",
        params![id, role, content, at],
    )?;
    Ok(())
}

fn goose_first(db: &Connection) -> TestResult {
    db.execute(
        "INSERT INTO sessions (id, name, working_dir) VALUES ('20261130_1', 'Café ☕', '/src/app')",
        [],
    )?;
    let content = json!([{"type": "text", "text": TEXT}]).to_string();
    goose_message(db, "msg_a", "user", &content, 1_764_496_800)
}

fn goose_grow(db: &Connection) -> TestResult {
    goose_message(db, "msg_b", "assistant", r#"[{"type":"text","text":"a.rs b.rs"}]"#, 1_764_496_801)
}

fn goose_bad(db: &Connection) -> TestResult {
    goose_message(db, "msg_bad", "user", r#"[{"type":"te"#, 1_764_496_802)
}

fn zed_user() -> Value {
    json!({"User": {"id": "u1", "content": [{"Text": TEXT}]}})
}

fn zed_reply(text: &str) -> Value {
    json!({"Agent": {"content": [{"Text": text}], "tool_results": {}}})
}

fn zed_first(db: &Connection) -> TestResult {
    zed_save(db, "z1", "2026-11-30T10:00:00Z", &[zed_user(), zed_reply("Reading")])
}

fn zed_grow(db: &Connection) -> TestResult {
    let messages = [zed_user(), zed_reply("Reading"), zed_user()];
    zed_save(db, "z1", "2026-11-30T10:01:00Z", &messages)
}

fn zed_bad(db: &Connection) -> TestResult {
    db.execute(
        "INSERT INTO threads (id, summary, updated_at, data_type, data)
         VALUES ('bad', 'bad', '2026-11-30T10:02:00Z', 'zstd', x'28b52ffd00')",
        [],
    )?;
    Ok(())
}

fn cursor_first(db: &Connection) -> TestResult {
    put(db, "cursorDiskKV", "composerData:c1", &composer("c1", &[("b1", 1), ("b2", 2)]))?;
    put(db, "cursorDiskKV", "bubbleId:c1:b1", &bubble("b1", 1, TEXT))?;
    put(db, "cursorDiskKV", "bubbleId:c1:b2", &bubble("b2", 2, "Reading"))
}

fn cursor_grow(db: &Connection) -> TestResult {
    put(db, "cursorDiskKV", "bubbleId:c1:b3", &bubble("b3", 1, "thanks 🦀"))?;
    put(db, "cursorDiskKV", "composerData:c1", &composer("c1", &[("b1", 1), ("b2", 2), ("b3", 1)]))
}

fn cursor_bad(db: &Connection) -> TestResult {
    put(db, "cursorDiskKV", "bubbleId:bad:x1", "{\"type\": 1, \"text\": \"cut")
}

fn chat_user() -> String {
    json!({"role": "user", "content": [{"type": "text", "text": TEXT}]}).to_string()
}

fn chat_answer() -> String {
    json!({"role": "assistant", "content": [{"type": "text", "text": "On it."}]}).to_string()
}

fn chat_first(db: &Connection) -> TestResult {
    cli_chat(db, &[([1; 32], &chat_user()), ([2; 32], &chat_answer())])
}

fn chat_grow(db: &Connection) -> TestResult {
    let more = json!({"role": "user", "content": [{"type": "text", "text": "and the tests 🦀"}]}).to_string();
    cli_chat(db, &[([1; 32], &chat_user()), ([2; 32], &chat_answer()), ([3; 32], &more)])
}

fn chat_bad(db: &Connection) -> TestResult {
    let more = json!({"role": "user", "content": [{"type": "text", "text": "and the tests 🦀"}]}).to_string();
    let blobs = [
        ([1; 32], chat_user()),
        ([2; 32], chat_answer()),
        ([3; 32], more),
        ([9; 32], "{\"role\": \"us".into()),
    ];
    let blobs: Vec<([u8; 32], &str)> = blobs.iter().map(|(id, data)| (*id, data.as_str())).collect();
    cli_chat(db, &blobs)
}

fn kiro_first(db: &Connection) -> TestResult {
    save(db, "k1", vec![entry(TEXT, "On it.")], Value::Null, 1_764_496_800_000)
}

fn kiro_grow(db: &Connection) -> TestResult {
    save(db, "k1", vec![entry(TEXT, "On it."), entry("and now?", "Done.")], Value::Null, 1_764_496_900_000)
}

fn kiro_bad(db: &Connection) -> TestResult {
    db.execute(
        "INSERT INTO conversations_v2 VALUES ('/src', 'bad', '{\"history\": [', 1764497000000, 1764497000000)",
        [],
    )?;
    Ok(())
}

/// One case, its steps given in order: the first rows, the rows added (and the records they
/// make), the row that cannot be read (and what its report names).
#[allow(clippy::too_many_arguments)]
fn case(
    name: &'static str,
    agent: Agent,
    file: &'static str,
    schema: &'static str,
    session: &'static str,
    (first, grow, added): (Step, Step, u64),
    (bad, said): (Step, &'static str),
) -> Case {
    Case { name, agent, file, schema, session, first, grow, added, bad, said, project: None }
}

fn cases() -> Vec<Case> {
    vec![
        case(
            "opencode",
            Agent::OpenCode,
            ".local/share/opencode/opencode.db",
            agent_schemas::OPENCODE,
            "ses_1",
            (opencode_first, opencode_grow, 1),
            (opencode_bad, "message \"msg_bad\""),
        ),
        Case {
            project: Some("code"),
            ..case(
                "crush",
                Agent::Crush,
                "code/app/.crush/crush.db",
                agent_schemas::CRUSH,
                "cs1",
                (crush_first, crush_grow, 1),
                (crush_bad, "message \"bad\""),
            )
        },
        case(
            "goose",
            Agent::Goose,
            ".local/share/goose/sessions/sessions.db",
            agent_schemas::GOOSE,
            "20261130_1",
            (goose_first, goose_grow, 1),
            (goose_bad, "message row 3"),
        ),
        case(
            "zed",
            Agent::Zed,
            ".local/share/zed/threads/threads.db",
            agent_schemas::ZED,
            "z1",
            // The new message; the thread's fields moved only in its time, which is no record's.
            (zed_first, zed_grow, 1),
            (zed_bad, "thread \"bad\""),
        ),
        case(
            "cursor (editor)",
            Agent::Cursor,
            ".config/Cursor/User/globalStorage/state.vscdb",
            agent_schemas::CURSOR,
            "c1",
            (cursor_first, cursor_grow, 1),
            (cursor_bad, "conversation \"bad\""),
        ),
        case(
            "cursor (CLI)",
            Agent::Cursor,
            ".cursor/chats/0a1b2c3d/a1/store.db",
            agent_schemas::CURSOR_CHAT,
            "a1",
            (chat_first, chat_grow, 1),
            (chat_bad, "blob 0909"),
        ),
        case(
            "kiro",
            Agent::Kiro,
            ".local/share/kiro-cli/data.sqlite3",
            agent_schemas::KIRO,
            "k1",
            (kiro_first, kiro_grow, 2),
            (kiro_bad, "conversation \"bad\""),
        ),
    ]
}

#[test]
fn every_database_source_finds_syncs_grows_and_reports_bad_rows() -> TestResult {
    for case in cases() {
        let name = case.name;
        let home = tempfile::tempdir()?;
        let path = home.path().join(case.file);
        let db = agent_db(&path, case.schema)?;
        (case.first)(&db)?;
        settle(&path)?;
        let annal = Annal::open(home.path().join("annal.redb"))?;
        let mut sync = options(home.path(), &[case.agent]);
        sync.projects.extend(case.project.map(|project| home.path().join(project)));

        let stored = first_steps(&annal, &sync, case.agent, case.session, name)?;

        (case.grow)(&db)?;
        settle(&path)?;
        let grown = annal.sync(&sync)?;
        let report = source(&grown, case.agent);
        assert!(report.problems.is_empty() && report.skipped.is_empty(), "{name}: {report:?}");
        assert_eq!(report.records_new, case.added, "{name}: {report:?}");
        assert_eq!(session_len(&annal, case.session)?, stored + case.added, "{name}");

        (case.bad)(&db)?;
        settle(&path)?;
        let bad = annal.sync(&sync)?;
        let report = source(&bad, case.agent);
        assert_eq!(report.records_new, 0, "{name}: {report:?}");
        let said = report.problems.iter().chain(&report.skipped).any(|line| line.contains(case.said));
        assert!(said, "{name}: the bad row is not named: {report:?}");
        assert_eq!(session_len(&annal, case.session)?, stored + case.added, "{name}");
        assert!(annal.verify(None)?.is_ok(), "{name}");
    }
    Ok(())
}
