//! `annal sync` of Kiro CLI over a `data.sqlite3` built from its own migrations, where Kiro
//! keeps it: conversations read from their `updated_at` cursor, a turn added and a compaction
//! stored as what is new, a value that cannot be read reported, and `annal import` of the file.

use annal::sync::Agent;
use annal::Annal;
use rusqlite::{params, Connection};
use serde_json::{json, Value};

use crate::sync_databases::{agent_db, settle};
use crate::sync_sources::{options, session_len, source, TestResult, TEXT};

pub(crate) fn entry(text: &str, answer: &str) -> Value {
    json!({"user": {"additional_context": "", "env_context": {}, "content": {"Prompt": {"prompt": text}},
        "timestamp": "2026-11-30T10:00:00.000+00:00"},
        "assistant": {"Response": {"message_id": null, "content": answer}}})
}

/// Saves a conversation as Kiro does: the whole value, upserted, with its update time.
pub(crate) fn save(db: &Connection, id: &str, history: Vec<Value>, summary: Value, at: i64) -> TestResult {
    let value = json!({"conversation_id": id, "history": history, "latest_summary": summary,
        "transcript": [], "tools": {}, "model_info": {"model_id": "auto"}});
    db.execute(
        "INSERT INTO conversations_v2 VALUES ('/src/app', ?1, ?2, ?3, ?3)
         ON CONFLICT (key, conversation_id) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        params![id, value.to_string(), at],
    )?;
    Ok(())
}

#[test]
fn kiro_conversations_read_from_their_cursor() -> TestResult {
    let home = tempfile::tempdir()?;
    let path = home.path().join(".local/share/kiro-cli/data.sqlite3");
    let db = agent_db(&path, annal_support::agent_schemas::KIRO)?;
    db.execute("INSERT INTO auth_kv VALUES ('token', 'secret')", [])?;
    save(&db, "k1", vec![entry(TEXT, "On it.")], Value::Null, 1_764_496_800_000)?;
    save(&db, "k0", vec![entry("older 🦀", "ok")], Value::Null, 1_764_410_400_000)?;
    settle(&path)?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let kiro = options(home.path(), &[Agent::Kiro]);
    let first = annal.sync(&kiro)?;
    let report = source(&first, Agent::Kiro);
    // Per conversation: the prompt, the answer and the conversation's fields.
    assert_eq!((report.units, report.records_new), (1, 6), "{report:?}");
    assert!(report.problems.is_empty() && report.skipped.is_empty(), "{report:?}");
    assert_eq!((session_len(&annal, "k1")?, session_len(&annal, "k0")?), (3, 3));
    assert_eq!(source(&annal.sync(&kiro)?, Agent::Kiro).units_read, 0);

    // A turn, then `/compact`: the first entry dropped for a summary. The kept entry is known
    // by its content; the new one and the summary are what is new.
    save(&db, "k1", vec![entry(TEXT, "On it."), entry("and now?", "Done.")], Value::Null, 1_764_496_900_000)?;
    save(&db, "k1", vec![entry("and now?", "Done.")], json!("We fixed the parser."), 1_764_497_000_000)?;
    // A value that cannot be read.
    db.execute(
        "INSERT INTO conversations_v2 VALUES ('/src', 'k2', '{\"history\": [', 1764497000000, 1764497000000)",
        [],
    )?;
    settle(&path)?;
    let second = annal.sync(&kiro)?;
    let report = source(&second, Agent::Kiro);
    assert_eq!(report.records_new, 3, "{report:?}");
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    assert!(report.skipped[0].starts_with("conversation \"k2\": its value is not JSON"), "{report:?}");
    assert_eq!(session_len(&annal, "k1")?, 6);

    // Given by its path, as `annal import` takes it.
    let copy = Annal::open(home.path().join("imported.redb"))?;
    let imported = copy.import_file(&path, None)?;
    assert_eq!(imported.agent, Some(Agent::Kiro));
    assert_eq!((imported.records_new, imported.skipped_rows.len()), (7, 1), "{imported:?}");
    assert!(annal.verify(None)?.is_ok() && copy.verify(None)?.is_ok());
    Ok(())
}
