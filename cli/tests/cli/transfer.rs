//! `annal import` and `annal export` through the real binary: bad lines reported and skipped,
#![allow(clippy::unwrap_used)]
//! re-import a no-op, a grown file adds only its new records, exports round-trip.

use crate::support::status;
use crate::support::Sandbox;

/// A small Claude Code transcript written by hand: a user turn, an assistant tool call, its
/// result, and the assistant's answer.
fn claude_lines(session: &str) -> Vec<String> {
    let line = |value: serde_json::Value| value.to_string();
    vec![
        line(serde_json::json!({"type": "user", "uuid": "u-1", "sessionId": session,
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": "why does the build fail?"}})),
        line(serde_json::json!({"type": "assistant", "uuid": "a-1", "sessionId": session,
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cargo build"}}]}})),
        line(serde_json::json!({"type": "user", "uuid": "t-1", "sessionId": session,
            "timestamp": "2026-01-01T00:00:02Z",
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true,
                 "content": "error[E0425]: cannot find value `x`"}]}})),
        line(serde_json::json!({"type": "assistant", "uuid": "a-2", "sessionId": session,
            "timestamp": "2026-01-01T00:00:03Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "`x` is undefined."}]}})),
    ]
}

#[test]
fn import_reports_bad_lines_and_reimport_is_a_no_op() {
    let sandbox = Sandbox::new();
    let file = sandbox.dir().join("chat.jsonl");
    let mut lines = claude_lines("s-1");
    lines.insert(1, "this line is not json".into());
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let path = file.to_str().unwrap();

    let first = sandbox.annal(&["import", path, "--json"], "").ok();
    assert!(first.stderr.contains(&format!("{path}:2: not JSON")), "{}", first.stderr);
    let summary: serde_json::Value = serde_json::from_str(&first.stdout).unwrap();
    assert_eq!(summary["recordsNew"], 4);
    assert_eq!(summary["skippedLines"]["not JSON"], 1);

    let again: serde_json::Value =
        serde_json::from_str(&sandbox.annal(&["import", path, "--json"], "").ok().stdout).unwrap();
    assert_eq!(again["recordsNew"], 0);
    assert_eq!(again["recordsAlreadyPresent"], 4);

    // The file grows: only the new record is imported.
    let grown = serde_json::json!({"type": "user", "uuid": "u-2", "sessionId": "s-1",
        "message": {"role": "user", "content": "thanks"}});
    std::fs::write(&file, lines.join("\n") + "\n" + &grown.to_string() + "\n").unwrap();
    let grew: serde_json::Value =
        serde_json::from_str(&sandbox.annal(&["import", path, "--json"], "").ok().stdout).unwrap();
    assert_eq!(grew["recordsNew"], 1);
    let sessions: serde_json::Value =
        serde_json::from_str(&sandbox.annal(&["sessions", "--json"], "").ok().stdout).unwrap();
    assert_eq!(sessions[0]["name"], "s-1");
    assert_eq!(sessions[0]["records"], 5);
    sandbox.annal(&["verify"], "").ok();
}

#[test]
fn export_then_import_into_another_store_reproduces_the_session() {
    let sandbox = Sandbox::new();
    let file = sandbox.dir().join("chat.jsonl");
    std::fs::write(&file, claude_lines("s-2").join("\n") + "\n").unwrap();
    sandbox.annal(&["import", file.to_str().unwrap()], "").ok();
    let export = sandbox.dir().join("s-2.annal.jsonl");
    sandbox.annal(&["export", "s-2", "-o", export.to_str().unwrap()], "").ok();
    let original = sandbox.annal(&["show", "s-2", "--json"], "").ok().stdout;

    let other = Sandbox::new();
    other.annal(&["import", export.to_str().unwrap()], "").ok();
    assert_eq!(other.annal(&["show", "s-2", "--json"], "").ok().stdout, original);

    let markdown = sandbox.annal(&["export", "s-2", "--format", "markdown"], "").ok().stdout;
    assert!(markdown.contains("**Tool call** `Bash` → `cargo build`"), "{markdown}");
    assert!(markdown.contains("**error** ✗"));
}

#[test]
fn import_errors_name_the_path() {
    let sandbox = Sandbox::new();
    let missing = sandbox.dir().join("nope.jsonl");
    let run = sandbox.annal(&["import", missing.to_str().unwrap()], "");
    assert_eq!(run.code, Some(status::NOT_FOUND));
    assert!(run.stderr.contains("nope.jsonl"), "{}", run.stderr);

    let empty = sandbox.dir().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "not a transcript").unwrap();
    let run = sandbox.annal(&["import", empty.to_str().unwrap()], "");
    assert_eq!(run.code, Some(status::BAD_INPUT));
    assert!(run.stderr.contains("no transcripts"), "{}", run.stderr);

    let run = sandbox.annal(&["export", "ghost"], "");
    assert_eq!(run.code, Some(status::NOT_FOUND));
}
