//! `annal sync` of Cursor over a global `state.vscdb` built as the editor keeps it (its
//! key-value tables, values replaced whole by key), and `annal import` of the file by path:
//! conversations read from the last row read, a reply that changed kept as a revision, the
//! editor's other writes reading nothing, a bad value reported while the rest is stored; and
//! the CLI's chats, a store of blobs read from its root.

use annal::sync::Agent;
use annal::Annal;
use rusqlite::{params, Connection};
use serde_json::json;

use crate::sync_databases::{agent_db, settle};
use crate::sync_sources::{options, session_len, source, texts, TestResult, TEXT};

/// Writes a key as Cursor does: the table's `ON CONFLICT REPLACE` replaces the row.
pub(crate) fn put(db: &Connection, table: &str, key: &str, value: &str) -> TestResult {
    db.execute(&format!("INSERT INTO {table} (key, value) VALUES (?1, ?2)"), params![key, value])?;
    Ok(())
}

pub(crate) fn composer(id: &str, bubbles: &[(&str, u8)]) -> String {
    let headers: Vec<_> = bubbles.iter().map(|(id, kind)| json!({"bubbleId": id, "type": kind})).collect();
    json!({"_v": 10, "composerId": id, "name": "Fix the parser", "createdAt": 1_764_496_800_000_u64,
        "unifiedMode": "agent", "status": "completed", "fullConversationHeadersOnly": headers})
    .to_string()
}

pub(crate) fn bubble(id: &str, kind: u8, text: &str) -> String {
    json!({"_v": 3, "type": kind, "bubbleId": id, "text": text, "createdAt": "2026-11-30T10:00:00.000Z"})
        .to_string()
}

#[test]
fn cursor_conversations_read_from_the_last_row_read() -> TestResult {
    let home = tempfile::tempdir()?;
    let path = home.path().join(".config/Cursor/User/globalStorage/state.vscdb");
    let db = agent_db(&path, annal_support::agent_schemas::CURSOR)?;
    put(&db, "cursorDiskKV", "composerData:c1", &composer("c1", &[("b1", 1), ("b2", 2)]))?;
    put(&db, "cursorDiskKV", "bubbleId:c1:b1", &bubble("b1", 1, TEXT))?;
    put(&db, "cursorDiskKV", "bubbleId:c1:b2", &bubble("b2", 2, "Reading"))?;
    // The editor's other keys: file contents, and its own state.
    put(&db, "cursorDiskKV", "composer.content.0a1b", "fn main() {}")?;
    put(&db, "ItemTable", "workbench.panel.width", "300")?;
    settle(&path)?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let cursor = options(home.path(), &[Agent::Cursor]);
    let first = annal.sync(&cursor)?;
    let report = source(&first, Agent::Cursor);
    // Two messages and the conversation's fields.
    assert_eq!((report.units, report.records_new), (1, 3), "{report:?}");
    assert!(report.problems.is_empty() && report.skipped.is_empty(), "{report:?}");
    assert_eq!(texts(&annal, "c1")?, [TEXT, "Reading"]);
    assert_eq!(source(&annal.sync(&cursor)?, Agent::Cursor).units_read, 0);

    // The editor writes its own state: the file changes, no conversation does.
    put(&db, "ItemTable", "workbench.panel.width", "320")?;
    settle(&path)?;
    let again = annal.sync(&cursor)?;
    assert_eq!((source(&again, Agent::Cursor).units_read, source(&again, Agent::Cursor).records_new), (1, 0));

    // The reply finished streaming, and the user asked again: the reply as a revision, the
    // new message, and the same conversation fields (its order and status are not among them).
    put(&db, "cursorDiskKV", "bubbleId:c1:b2", &bubble("b2", 2, "Reading it. Done."))?;
    put(&db, "cursorDiskKV", "bubbleId:c1:b3", &bubble("b3", 1, "thanks 🦀"))?;
    put(&db, "cursorDiskKV", "composerData:c1", &composer("c1", &[("b1", 1), ("b2", 2), ("b3", 1)]))?;
    // A value that cannot be read, in another conversation.
    put(&db, "cursorDiskKV", "bubbleId:c2:x1", "{\"type\": 1, \"text\": \"cut")?;
    settle(&path)?;
    let grown = annal.sync(&cursor)?;
    let report = source(&grown, Agent::Cursor);
    assert_eq!((report.records_new, report.records_revised), (2, 1), "{report:?}");
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    assert!(report.skipped[0].contains("conversation \"c2\", bubble \"x1\": not JSON"), "{report:?}");
    assert_eq!(session_len(&annal, "c1")?, 5);

    // Given by its path, as `annal import` takes it: the same records, stored once.
    let copy = Annal::open(home.path().join("imported.redb"))?;
    let imported = copy.import_file(&path, None)?;
    assert_eq!(imported.agent, Some(Agent::Cursor));
    assert_eq!(imported.skipped_rows.len(), 1, "{imported:?}");
    assert_eq!(texts(&copy, "c1")?, [TEXT, "Reading it. Done.", "thanks 🦀"]);
    assert!(annal.verify(None)?.is_ok() && copy.verify(None)?.is_ok());
    Ok(())
}

/// A Cursor CLI chat: its blobs under the given ids, a root listing them, and the meta row
/// naming the root, as the CLI writes them.
pub(crate) fn cli_chat(db: &Connection, blobs: &[([u8; 32], &str)]) -> TestResult {
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let mut root = Vec::new();
    for (id, data) in blobs {
        db.execute("INSERT OR IGNORE INTO blobs VALUES (?1, ?2)", params![hex(id), data.as_bytes()])?;
        root.extend([0x0a, 32]);
        root.extend(id);
    }
    let root_id = hex(&[0xf0; 32][..]) + &hex(&[blobs.len() as u8]);
    db.execute("INSERT OR REPLACE INTO blobs VALUES (?1, ?2)", params![root_id, root])?;
    let meta = json!({"agentId": "a1", "name": "Fix it", "mode": "default", "createdAt": 1_764_496_800_000_u64,
        "latestRootBlobId": root_id});
    db.execute("INSERT OR REPLACE INTO meta VALUES ('0', ?1)", params![hex(meta.to_string().as_bytes())])?;
    Ok(())
}

#[test]
fn cursor_cli_chats_read_from_their_root() -> TestResult {
    let home = tempfile::tempdir()?;
    let path = home.path().join(".cursor/chats/0a1b2c3d/a1/store.db");
    let db = agent_db(&path, annal_support::agent_schemas::CURSOR_CHAT)?;
    let user = json!({"role": "user", "content": [{"type": "text", "text": TEXT}]}).to_string();
    let answer = json!({"role": "assistant", "content": [{"type": "text", "text": "On it."},
        {"type": "tool-call", "toolCallId": "t1", "toolName": "Shell", "args": {"command": "ls"}}]})
    .to_string();
    cli_chat(&db, &[([1; 32], &user), ([2; 32], &answer)])?;
    settle(&path)?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let cursor = options(home.path(), &[Agent::Cursor]);
    let first = annal.sync(&cursor)?;
    let report = source(&first, Agent::Cursor);
    assert_eq!((report.units, report.records_new), (1, 3), "{report:?}");
    assert!(report.problems.is_empty() && report.skipped.is_empty(), "{report:?}");
    assert_eq!(texts(&annal, "a1")?, [TEXT, "On it."]);
    assert_eq!(source(&annal.sync(&cursor)?, Agent::Cursor).units_read, 0);

    // The tool's result and the same request again: a new root over the old blobs and new ones.
    let result = json!({"role": "tool", "content": [{"type": "tool-result", "toolCallId": "t1",
        "toolName": "Shell", "result": "a.rs"}]})
    .to_string();
    cli_chat(&db, &[([1; 32], &user), ([2; 32], &answer), ([3; 32], &result), ([1; 32], &user)])?;
    settle(&path)?;
    let report = annal.sync(&cursor)?;
    assert_eq!(source(&report, Agent::Cursor).records_new, 2, "{report:?}");
    assert_eq!(texts(&annal, "a1")?, [TEXT, "On it.", TEXT]);
    // Given by its path.
    let copy = Annal::open(home.path().join("imported.redb"))?;
    let imported = copy.import_file(&path, None)?;
    assert_eq!((imported.agent, imported.records_new), (Some(Agent::Cursor), 5), "{imported:?}");
    assert!(annal.verify(None)?.is_ok());
    Ok(())
}
