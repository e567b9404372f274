//! The commands' happy paths through the real binary: append, show, sessions, fork, verify,
//! stats, the default store location, and the demo.

use crate::support::{json_lines, Sandbox};
use serde_json::{json, Value};

/// Three records covering every common block type, one line each.
fn batch() -> String {
    let lines = [
        json!({"entryId": "u1", "role": "user", "timestamp": "2026-03-02T09:12:00Z",
               "blocks": [{"type": "text", "text": "Fix the failing test, please."}],
               "meta": {"cwd": "/home/dev/ledger"}}),
        json!({"entryId": "a1", "role": "assistant", "timestamp": "2026-03-02T09:12:07Z",
               "blocks": [{"type": "thinking", "text": "Read the test first."},
                          {"type": "text", "text": "Running the tests."},
                          {"type": "toolCall", "callId": "c1", "tool": "Bash",
                           "input": {"command": "cargo test", "description": "Run tests"}}]}),
        json!({"entryId": "t1", "role": "tool", "timestamp": "2026-03-02T09:12:19Z",
               "blocks": [{"type": "toolResult", "callId": "c1", "tool": "Bash", "isError": true,
                           "output": (1..=40).map(|n| format!("line {n}\n")).collect::<String>()}]}),
    ];
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// The fields a record keeps through a round trip.
fn content(record: &Value) -> Value {
    json!({
        "entryId": record["entryId"],
        "role": record["role"],
        "timestamp": record["timestamp"],
        "blocks": record["blocks"].as_array().map(|blocks| blocks.iter().map(|b| {
            let mut b = b.clone();
            if let Some(object) = b.as_object_mut() {
                object.remove("target");
            }
            b
        }).collect::<Vec<_>>()),
        "meta": record.get("meta").cloned().unwrap_or_else(|| json!({})),
    })
}

#[test]
fn append_then_show_json_round_trips() {
    let sandbox = Sandbox::new();
    let input = batch();
    let appended = sandbox.annal(&["append", "s"], &input).ok();
    assert_eq!(appended.lines(), ["0", "1", "2"]);

    let shown = sandbox.annal(&["show", "s", "--json"], "").ok();
    let records = json_lines(&shown.stdout);
    let sent = json_lines(&input);
    assert_eq!(records.len(), 3);
    for (index, (record, sent)) in records.iter().zip(&sent).enumerate() {
        assert_eq!(content(record), content(sent), "record {index}");
        assert_eq!(record["sourceOrder"], json!(index));
    }
    assert_eq!(records[0]["prevHash"], json!("0".repeat(64)));
    assert_eq!(records[1]["prevHash"], records[0]["hash"]);
    assert_eq!(records[2]["prevHash"], records[1]["hash"]);

    // The export appends into another store with the same hashes (checked by append itself).
    let other = Sandbox::new();
    other.annal(&["append", "copy"], &shown.stdout).ok();
    let copied = other.annal(&["show", "copy", "--json"], "").ok();
    assert_eq!(copied.stdout, shown.stdout);
}

#[test]
fn reappending_a_batch_stores_nothing_new() {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s"], &batch()).ok();
    let again = sandbox.annal(&["append", "s", "--expect", "0"], &batch()).ok();
    assert_eq!(again.lines(), ["0", "1", "2"]);
    let sessions = sandbox.annal(&["sessions", "--json"], "").ok();
    let sessions: Value = serde_json::from_str(&sessions.stdout).expect("JSON");
    assert_eq!(sessions[0]["records"], json!(3));
}

#[test]
fn lines_without_entry_ids_get_deterministic_ones() {
    let line = "{\"role\": \"user\", \"blocks\": [{\"type\": \"text\", \"text\": \"hi\"}]}\n\n";
    let ids: Vec<String> = (0..2)
        .map(|_| {
            let sandbox = Sandbox::new();
            sandbox.annal(&["append", "s"], line).ok();
            let shown = sandbox.annal(&["show", "s", "--json"], "").ok();
            json_lines(&shown.stdout)[0]["entryId"].as_str().unwrap_or_default().to_owned()
        })
        .collect();
    assert!(ids[0].starts_with("e-") && ids[0].len() == 34, "{ids:?}");
    assert_eq!(ids[0], ids[1]);

    // The same line appended again later is a new record with a new id.
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s"], line).ok();
    assert_eq!(sandbox.annal(&["append", "s"], line).ok().lines(), ["1"]);
}

#[test]
fn sessions_json_has_names_counts_and_lineage() {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s"], &batch()).ok();
    sandbox.annal(&["fork", "s", "--at", "1", "--name", "child"], "").ok();
    let listed = sandbox.annal(&["sessions", "--json"], "").ok();
    let sessions: Value = serde_json::from_str(&listed.stdout).expect("sessions --json is JSON");
    let expected = json!([
        {"name": "child", "records": 1, "parent": "s", "forkAt": 1},
        {"name": "s", "records": 3, "parent": null, "forkAt": null},
    ]);
    let sessions = sessions.as_array().expect("an array");
    assert_eq!(sessions.len(), 2);
    for (session, expected) in sessions.iter().zip(expected.as_array().into_iter().flatten()) {
        for key in ["name", "records", "parent", "forkAt"] {
            assert_eq!(session[key], expected[key], "{key} of {session}");
        }
    }

    let table = sandbox.annal(&["sessions"], "").ok();
    assert_eq!(table.lines()[0].split_whitespace().next(), Some("SESSION"));
    assert!(table.stdout.contains("child"), "{}", table.stdout);
}

#[test]
fn fork_then_show_child() {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s"], &batch()).ok();
    assert_eq!(sandbox.annal(&["fork", "s", "--at", "2"], "").ok().stdout, "s-fork-2\n");
    assert_eq!(sandbox.annal(&["fork", "s", "--at", "2"], "").ok().stdout, "s-fork-2-2\n");
    let line = r#"{"entryId": "c1", "role": "user", "blocks": [{"type": "text", "text": "other way"}]}"#;
    assert_eq!(sandbox.annal(&["append", "s-fork-2", "--expect", "2"], line).ok().lines(), ["2"]);

    let child = json_lines(&sandbox.annal(&["show", "s-fork-2", "--json"], "").ok().stdout);
    let ids: Vec<&str> = child.iter().filter_map(|r| r["entryId"].as_str()).collect();
    assert_eq!(ids, ["u1", "a1", "c1"]);
    let parent = json_lines(&sandbox.annal(&["show", "s", "--json"], "").ok().stdout);
    let ids: Vec<&str> = parent.iter().filter_map(|r| r["entryId"].as_str()).collect();
    assert_eq!(ids, ["u1", "a1", "t1"]);

    let readable = sandbox.annal(&["show", "s-fork-2", "--from", "2"], "").ok();
    assert!(readable.lines()[0].starts_with("#2  user"), "{}", readable.stdout);
    assert!(readable.stdout.contains("other way"));
}

#[test]
fn show_readable_cuts_long_output() {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s"], &batch()).ok();
    let shown = sandbox.annal(&["show", "s"], "").ok();
    let text = &shown.stdout;
    assert!(text.contains("#1  assistant  2026-03-02T09:12:07Z  a1"), "{text}");
    assert!(text.contains("(thinking) Read the test first."), "{text}");
    assert!(text.contains("→ Bash cargo test"), "{text}");
    assert!(text.contains("← Bash ERROR (40 lines"), "{text}");
    assert!(text.contains("… 32 lines left out …"), "{text}");
    assert!(!text.contains("line 20\n"), "{text}");
    let ranged = sandbox.annal(&["show", "s", "--from", "1", "--to", "2"], "").ok();
    assert!(ranged.stdout.starts_with("#1 ") && !ranged.stdout.contains("#2 "), "{}", ranged.stdout);
}

#[test]
fn verify_and_stats_on_a_good_store() {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s"], &batch()).ok();
    let verified = sandbox.annal(&["verify"], "").ok();
    assert!(verified.stdout.starts_with("checked 1 session, 3 records, 0 blobs"), "{}", verified.stdout);
    let report: Value =
        serde_json::from_str(&sandbox.annal(&["verify", "s", "--json"], "").ok().stdout).expect("JSON");
    assert_eq!(report["ok"], json!(true));
    assert_eq!(report["records"], json!(3));

    let stats: Value =
        serde_json::from_str(&sandbox.annal(&["stats", "--json"], "").ok().stdout).expect("JSON");
    assert_eq!(stats["sessions"], json!(1));
    assert_eq!(stats["records"], json!(3));
    assert!(stats["fileBytes"].as_u64().unwrap_or(0) > 0);
    let tables: Vec<&str> =
        stats["tables"].as_array().into_iter().flatten().filter_map(|t| t["table"].as_str()).collect();
    assert!(tables.contains(&"journal") && tables.contains(&"blobs"), "{tables:?}");
}

#[cfg(unix)]
#[test]
fn default_store_lives_in_a_private_data_folder() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_annal"));
    command
        .args(["append", "s"])
        .env_remove("ANNAL_DB")
        .env("HOME", sandbox.dir())
        .env("XDG_DATA_HOME", sandbox.dir().join("data"));
    crate::support::run(command, &batch()).ok();
    let folder = sandbox.dir().join("data").join("annal");
    let mode = std::fs::metadata(&folder).expect("the store folder exists").permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    assert!(folder.join("annal.redb").is_file());
    assert!(!sandbox.db.exists(), "nothing was written where --db would point");
}

#[test]
fn demo_runs_without_setup() {
    let sandbox = Sandbox::new();
    let demo = crate::support::run(sandbox.command(&["demo"]), "").ok();
    let text = &demo.stdout;
    assert!(text.lines().count() <= 120, "{} lines", text.lines().count());
    for expected in ["Group commit", ": 0 new,", "so its next sourceOrder is", "ledger-fix-alt", "all intact"]
    {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert!(demo.stderr.is_empty(), "{}", demo.stderr);
}
