//! `annal sync` of the Kimi CLI over a made-up home laid out as Kimi lays out its files: a
//! session's context file, the files Kimi sets aside when it clears, compacts or undoes, a
//! sub-agent's, the legacy one-file layout, `KIMI_SHARE_DIR`, and a bad line.

use std::fs;

use annal::sync::{Agent, Environment};
use annal::Annal;

use crate::sync_sources::{append, options, session_len, source, texts, TestResult, TEXT};

fn lines(values: &[serde_json::Value]) -> String {
    values.iter().map(|value| format!("{value}\n")).collect()
}

fn user(text: &str) -> serde_json::Value {
    serde_json::json!({"role": "user", "content": text})
}

fn checkpoint(id: u64) -> serde_json::Value {
    serde_json::json!({"role": "_checkpoint", "id": id})
}

#[test]
fn kimi_sessions_their_set_aside_files_and_sub_agents() -> TestResult {
    let home = tempfile::tempdir()?;
    let session = home.path().join(".kimi/sessions/5d41402abc4b2a76b9719d911017c592/9ab0c1d2");
    fs::create_dir_all(session.join("subagents/a7"))?;
    let context = session.join("context.jsonl");
    let prompt = serde_json::json!({"role": "_system_prompt", "content": "You are Kimi."});
    let reply = serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": "Reading it."}],
        "tool_calls": [{"type": "function", "id": "ReadFile:0", "function": {"name": "ReadFile", "arguments": "{}"}}]});
    fs::write(&context, lines(&[prompt.clone(), checkpoint(0), user(TEXT), reply]))?;
    // Kimi's event log beside it, and its state: never read.
    fs::write(session.join("wire.jsonl"), "{\"type\":\"metadata\",\"protocol_version\":\"1.10\"}\n")?;
    fs::write(session.join("state.json"), "{\"custom_title\":\"fix\"}")?;
    fs::write(session.join("subagents/a7/context.jsonl"), lines(&[checkpoint(0), user("look up 🦀")]))?;

    let annal = Annal::open(home.path().join("annal.redb"))?;
    let kimi = options(home.path(), &[Agent::Kimi]);
    let first = annal.sync(&kimi)?;
    let report = source(&first, Agent::Kimi);
    assert_eq!((report.units, report.records_new), (2, 6), "{report:?}");
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!((session_len(&annal, "9ab0c1d2")?, session_len(&annal, "9ab0c1d2/agent-a7")?), (4, 2));
    assert_eq!(source(&annal.sync(&kimi)?, Agent::Kimi).units_read, 0);

    // The tool's result, then a bad line and a good one after it.
    let result = serde_json::json!({"role": "tool", "content": "fn main() {}", "tool_call_id": "ReadFile:0"});
    append(&context, &format!("{result}\nnot json\n{}\n", user("and now?")))?;
    let grown = annal.sync(&kimi)?;
    let report = source(&grown, Agent::Kimi);
    assert_eq!(report.records_new, 2, "{report:?}");
    assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
    assert!(
        report.skipped[0].ends_with("context.jsonl:line 6: not JSON (expected ident at column 2)"),
        "{:?}",
        report.skipped
    );

    // `/clear`: the file set aside as `context_1.jsonl`, a new one begun that repeats the
    // first message. Only the new file's records are new, and nothing is stored twice.
    fs::rename(&context, session.join("context_1.jsonl"))?;
    fs::write(&context, lines(&[prompt, checkpoint(0), user("start over 🦀"), user(TEXT)]))?;
    assert_eq!(source(&annal.sync(&kimi)?, Agent::Kimi).records_new, 2);
    assert_eq!(session_len(&annal, "9ab0c1d2")?, 8);
    let stored = texts(&annal, "9ab0c1d2")?;
    assert_eq!(stored[stored.len() - 2..], ["start over 🦀".to_owned(), TEXT.to_owned()]);
    assert!(annal.verify(None)?.is_ok());
    Ok(())
}

#[test]
fn a_session_cleared_before_its_first_sync_is_stored_in_order() -> TestResult {
    let root = tempfile::tempdir()?;
    let session = root.path().join("share/sessions/0a1b/s1");
    fs::create_dir_all(&session)?;
    fs::write(session.join("context_2.jsonl"), lines(&[checkpoint(0), user("second")]))?;
    fs::write(session.join("context_1.jsonl"), lines(&[checkpoint(0), user("first")]))?;
    fs::write(session.join("context.jsonl"), lines(&[checkpoint(0), user("third")]))?;
    // The one-file layout of Kimi's first versions.
    fs::write(root.path().join("share/sessions/0a1b/s0.jsonl"), lines(&[checkpoint(0), user("legacy")]))?;
    let annal = Annal::open(root.path().join("annal.redb"))?;
    let mut kimi = options(root.path(), &[Agent::Kimi]);
    kimi.environment = Environment::with_home(root.path()).var("KIMI_SHARE_DIR", root.path().join("share"));
    let report = annal.sync(&kimi)?;
    assert_eq!(source(&report, Agent::Kimi).units, 2, "{report:?}");
    assert_eq!(texts(&annal, "s1")?, ["first", "second", "third"]);
    assert_eq!(session_len(&annal, "s0")?, 2);
    // `annal import` of the folder reads them the same way, and stores nothing again.
    let files = annal::import::transcript_files(&root.path().join("share"))?;
    let mut new = 0;
    annal.import_files(&files, None, |_, outcome| {
        new += outcome.map_or(1, |summary| summary.records_new);
        true
    });
    assert_eq!(new, 0);
    Ok(())
}
