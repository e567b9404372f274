//! `annal import` on files that only look like a transcript, or hold lines of another agent's,
//! read as a user would: a JSON document of another shape is refused with its reason (detected
//! or forced with `--format`), a foreign line is reported as `file:line: reason`, and a real
//! session with one foreign first line is still read as what most of its lines are.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::{status, Run, Sandbox};

/// A transcript of the shared corpus (`ANNAL_CORPUS`); missing data fails the test.
pub(crate) fn corpus_file(folder: &str, name: &str) -> PathBuf {
    let root = std::env::var_os("ANNAL_CORPUS").expect("ANNAL_CORPUS names the corpus folder");
    let path = Path::new(&root).join(folder).join(name);
    assert!(path.is_file(), "{} is missing", path.display());
    path
}

fn import(sandbox: &Sandbox, path: &Path, format: Option<&str>) -> Run {
    let mut args = vec!["import", path.to_str().expect("a UTF-8 path"), "--json"];
    if let Some(format) = format {
        args.extend(["--format", format]);
    }
    sandbox.annal(&args, "")
}

/// The session's records as `annal export` writes them (the header left out).
pub(crate) fn exported(sandbox: &Sandbox, session: &str) -> Vec<Value> {
    let run = sandbox.annal(&["export", session], "").ok();
    let lines = crate::support::json_lines(&run.stdout);
    lines.into_iter().skip(1).collect()
}

/// A Postman collection, pretty-printed as Postman exports it: its first key is `info`.
const POSTMAN: &str = r#"{
  "info": {
    "_postman_id": "8b1f6a2e-1c1e-4c59-9b3a-6f0f3c1e2d4a",
    "name": "Café orders — 東京 🍰",
    "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"
  },
  "item": [
    {
      "name": "List orders\u3000(すべて)",
      "request": {"method": "GET", "header": [], "url": {"raw": "https://api.example.com/orders?q=caf\u0065\u0301", "host": ["api", "example", "com"]}}
    }
  ]
}
"#;

#[test]
fn documents_of_another_shape_are_refused_with_the_reason() {
    let sandbox = Sandbox::new();
    let postman = sandbox.dir().join("orders.postman_collection.json");
    std::fs::write(&postman, POSTMAN).expect("the collection");
    let object = sandbox.dir().join("settings.json");
    std::fs::write(
        &object,
        json!({"editor.fontFamily": "Fira Code, 思源黑体", "files.eol": "\n"}).to_string(),
    )
    .expect("the object");
    let trajectory = corpus_file("swe-agent-traj", "SWE-agent__SWE-agent__swe-agent__test-repo-i1.traj");

    let detected = import(&sandbox, &postman, None);
    assert_eq!(detected.code, Some(status::BAD_INPUT), "{detected:?}");
    assert!(
        detected.stderr.contains("orders.postman_collection.json: not a transcript annal can read"),
        "{detected:?}"
    );
    for (file, format) in [(&postman, "opencode"), (&object, "opencode"), (&trajectory, "opencode")] {
        let run = import(&sandbox, file, Some(format));
        assert_eq!(run.code, Some(status::BAD_INPUT), "{}: {run:?}", file.display());
        let reason = "an OpenCode export is an object with an \"info\" object and a \"messages\" array";
        assert!(run.stderr.contains(reason), "{}: {}", file.display(), run.stderr);
    }
    // Every other JSON format forced on them refuses them too, each with its reason.
    for format in
        ["continue", "vscode", "amp", "cline", "gemini", "openhands", "claude", "codex", "annal", "aider"]
    {
        for file in [&postman, &trajectory] {
            let run = import(&sandbox, file, Some(format));
            assert_eq!(run.code, Some(status::BAD_INPUT), "{format} {}: {run:?}", file.display());
            assert!(run.stderr.contains(&format!("read as {format}, ")), "{format}: {}", run.stderr);
            assert!(run.stderr.contains("(first line "), "{format}: {}", run.stderr);
        }
    }
    let run = sandbox.annal(&["sessions", "--json"], "").ok();
    assert!(run.stdout.trim().is_empty() || run.stdout.trim() == "[]", "nothing stored: {}", run.stdout);
}

/// A Codex CLI rollout line, as an agent pasting between tools leaves one.
fn codex_line(text: &str) -> String {
    json!({"timestamp": "2026-11-30T10:00:00.000Z", "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}})
    .to_string()
}

/// A real Claude Code session, and how many records it stores on its own.
fn claude_session() -> (String, u64) {
    let real = corpus_file(
        "claude-code-jsonl",
        "d-kimuson__claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    );
    let text = std::fs::read_to_string(&real).expect("the corpus session");
    let sandbox = Sandbox::new();
    let clean = import(&sandbox, &real, None).ok();
    let clean: Value = serde_json::from_str(&clean.stdout).expect("a JSON summary");
    let records = clean["recordsNew"].as_u64().expect("a count");
    assert!(records > 10, "{clean}");
    (text, records)
}

#[test]
fn a_foreign_line_in_a_claude_session_is_reported_not_stored() {
    let (text, records) = claude_session();
    let lines: Vec<&str> = text.lines().collect();
    let middle = lines.len() / 2;
    let sandbox = Sandbox::new();
    let mixed = sandbox.dir().join("mixed.jsonl");
    let mut with_middle: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    with_middle.insert(middle, codex_line("ビルドして 🦀"));
    std::fs::write(&mixed, with_middle.join("\n") + "\n").expect("the mixed file");
    let run = import(&sandbox, &mixed, None).ok();
    let expected = format!(
        "{}:{}: not a valid record (a line in codex's format, not claude's)",
        mixed.display(),
        middle + 1
    );
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
    let summary: Value = serde_json::from_str(&run.stdout).expect("a JSON summary");
    assert_eq!(summary["recordsNew"].as_u64(), Some(records), "{summary}");
}

#[test]
fn a_claude_session_with_a_foreign_first_line_is_still_read() {
    let (text, records) = claude_session();
    let sandbox = Sandbox::new();
    let first = sandbox.dir().join("first.jsonl");
    std::fs::write(&first, format!("{}\n{text}", codex_line("première ligne"))).expect("the file");
    let run = import(&sandbox, &first, None).ok();
    assert!(
        run.stderr.contains(&format!("{}:1: not a valid record (a line in codex's format", first.display())),
        "{}",
        run.stderr
    );
    let summary: Value = serde_json::from_str(&run.stdout).expect("a JSON summary");
    assert_eq!(summary["recordsNew"].as_u64(), Some(records), "{summary}");
    let sessions = sandbox.annal(&["sessions", "--json"], "").ok();
    assert!(
        sessions.stdout.contains("\"name\": \"5c0375b4-57a5-4f26-b12d-d022ee4e51b7\""),
        "{}",
        sessions.stdout
    );
}
