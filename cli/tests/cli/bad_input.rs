//! The bad-input catalogue (docs/errors.md) through the real binary: each hostile input gives one
//! clear error or a clean recovery, and no stored record is lost. Large inputs are generated
//! here, in a temporary folder.
#![allow(clippy::unwrap_used)]

use crate::support::status;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{Run, Sandbox};
use annal_engine::{Block, Record, Role, Store, StoreOptions};
use serde_json::{json, Value};

mod paths;
mod store_files;

/// One Claude Code line: a user message (or, with `uuid` empty, a line without an id).
fn claude_user(session: &str, uuid: &str, text: &str) -> String {
    json!({"type": "user", "uuid": uuid, "sessionId": session,
           "message": {"role": "user", "content": text}})
    .to_string()
}

/// Asserts a failure with exit status `status` (its kind's) and a last stderr line starting
/// `annal: `; returns that line.
fn error_line(run: &Run, status: i32) -> String {
    assert_eq!(run.code, Some(status), "stdout: {} stderr: {}", run.stdout, run.stderr);
    let last = run.stderr.lines().last().unwrap_or_default().to_owned();
    assert!(last.starts_with("annal: "), "{:?}", run.stderr);
    last
}

fn import_json(sandbox: &Sandbox, path: &Path) -> (Value, String) {
    let run = sandbox.annal(&["import", path.to_str().unwrap(), "--json"], "").ok();
    (serde_json::from_str(&run.stdout).unwrap(), run.stderr)
}

/// Runs a command with raw bytes on stdin (`support::run` takes text only).
fn run_bytes(mut command: Command, stdin: &[u8]) -> Run {
    let mut child =
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The entryIds of a session, in order, read through the library.
fn entry_ids(db: &Path, session: &str) -> Vec<String> {
    let store = Store::open(db, StoreOptions::default()).unwrap();
    let snapshot = store.snapshot().unwrap();
    let records = snapshot.records(session, 0..u64::MAX).unwrap();
    records.map(|guard| guard.unwrap().view().unwrap().entry_id().to_owned()).collect()
}

fn verified(sandbox: &Sandbox) {
    sandbox.annal(&["verify"], "").ok();
}

#[test]
fn truncated_last_line_is_skipped_then_imported_once_complete() {
    let sandbox = Sandbox::new();
    let file = sandbox.dir().join("live.jsonl");
    let last = claude_user("s-live", "u3", "the third message");
    let cut = &last[..last.len() / 2];
    let head = format!("{}\n{}\n", claude_user("s-live", "u1", "one"), claude_user("s-live", "u2", "two"));
    std::fs::write(&file, format!("{head}{cut}")).unwrap();

    let (summary, stderr) = import_json(&sandbox, &file);
    let expected = format!("{}:3: truncated (the file ends inside this line)", file.display());
    assert!(stderr.contains(&expected), "{stderr}");
    assert_eq!(summary["recordsNew"], 2);
    assert_eq!(summary["skippedLines"]["truncated"], 1);

    // The writer finishes the line: the next import adds it, and only it.
    std::fs::write(&file, format!("{head}{last}\n")).unwrap();
    let (summary, stderr) = import_json(&sandbox, &file);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(
        (summary["recordsNew"].as_u64(), summary["recordsAlreadyPresent"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(entry_ids(&sandbox.db, "s-live"), ["u1", "u2", "u3"]);
    verified(&sandbox);
}

#[test]
fn a_100_mb_line_is_skipped_and_the_rest_imported() {
    let sandbox = Sandbox::new();
    let file = sandbox.dir().join("huge.jsonl");
    let huge = claude_user("s-huge", "big", &"x".repeat(100_000_000));
    let text = format!(
        "{}\n{huge}\n{}\n",
        claude_user("s-huge", "u1", "before"),
        claude_user("s-huge", "u2", "after")
    );
    std::fs::write(&file, text).unwrap();
    let huge_len = huge.len();
    drop(huge);

    let (summary, stderr) = import_json(&sandbox, &file);
    let expected = format!("{}:2: too large ({huge_len} bytes, over the limit of 67108864)", file.display());
    assert!(stderr.contains(&expected), "{stderr}");
    assert_eq!(summary["recordsNew"], 2);
    assert_eq!(entry_ids(&sandbox.db, "s-huge"), ["u1", "u2"]);
    verified(&sandbox);
}

#[test]
fn invalid_utf8_is_reported_with_its_line() {
    let sandbox = Sandbox::new();
    let file = sandbox.dir().join("latin1.jsonl");
    let mut bytes = format!("{}\n", claude_user("s-utf", "u1", "fine")).into_bytes();
    bytes.extend_from_slice(b"{\"type\":\"user\",\"uuid\":\"u2\",\"message\":{\"content\":\"caf\xE9\"}}\n");
    bytes.extend_from_slice(format!("{}\n", claude_user("s-utf", "u3", "fine too")).as_bytes());
    std::fs::write(&file, bytes).unwrap();

    let (summary, stderr) = import_json(&sandbox, &file);
    let expected = format!("{}:2: not UTF-8 (invalid byte at offset 52)", file.display());
    assert!(stderr.contains(&expected), "{stderr}");
    assert_eq!(summary["recordsNew"], 2);
    assert_eq!(entry_ids(&sandbox.db, "s-utf"), ["u1", "u3"]);

    // On stdin the whole batch is refused, naming the line.
    let input = b"{\"entryId\":\"a\",\"role\":\"user\"}\n{\"role\":\"user\",\"blocks\":[{\"type\":\"text\",\"text\":\"\xFF\"}]}\n";
    let run = run_bytes(sandbox.command(&["append", "s-utf"]), input);
    let line = error_line(&run, status::BAD_INPUT);
    assert!(line.starts_with("annal: stdin:2: not UTF-8"), "{line}");
    assert_eq!(entry_ids(&sandbox.db, "s-utf"), ["u1", "u3"], "nothing was appended");
}

#[test]
fn json_nested_100000_deep_is_refused_without_crashing() {
    let sandbox = Sandbox::new();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let file = sandbox.dir().join("deep.jsonl");
    let text = format!(
        "{}\n{{\"type\":\"user\",\"uuid\":\"u2\",\"message\":{deep}}}\n{}\n",
        claude_user("s-deep", "u1", "a"),
        claude_user("s-deep", "u3", "b")
    );
    std::fs::write(&file, text).unwrap();
    let (summary, stderr) = import_json(&sandbox, &file);
    let expected = format!("{}:2: JSON nested too deeply (over 128 levels)", file.display());
    assert!(stderr.contains(&expected), "{stderr}");
    assert_eq!(summary["recordsNew"], 2);

    // A whole OpenCode document that deep.
    let document = sandbox.dir().join("deep.json");
    std::fs::write(&document, format!("{{\"info\":{{}},\"messages\":[{deep}]}}")).unwrap();
    let run = sandbox.annal(&["import", "--format", "opencode", document.to_str().unwrap()], "").ok();
    let expected = format!("{}:1: JSON nested too deeply (over 128 levels)", document.display());
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
    // Detection reads it as OpenCode by its opening, without parsing the depth.
    let run = sandbox.annal(&["import", document.to_str().unwrap()], "").ok();
    assert!(run.stderr.contains(&expected), "{}", run.stderr);

    let run =
        sandbox.annal(&["append", "s-deep"], &format!("{{\"role\":\"user\",\"meta\":{{\"x\":{deep}}}}}\n"));
    let line = error_line(&run, status::BAD_INPUT);
    assert!(line.starts_with("annal: stdin:1: not JSON: recursion limit exceeded"), "{line}");
    assert_eq!(entry_ids(&sandbox.db, "s-deep"), ["u1", "u3"]);
    verified(&sandbox);
}

#[test]
fn a_50_mb_image_in_a_tool_result_is_stored_once_as_a_blob() {
    // 50,000,001 bytes (three-byte groups, so its base64 is the group's four characters repeated).
    let groups = 16_666_667;
    let image: Vec<u8> = b"\x89PN".repeat(groups);
    let base64 = "iVBO".repeat(groups);
    let sandbox = Sandbox::new();
    let file = sandbox.dir().join("screenshot.jsonl");
    let call = json!({"type": "assistant", "uuid": "a1", "sessionId": "s-img",
        "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Screenshot", "input": {}}]}});
    let result = json!({"type": "user", "uuid": "r1", "sessionId": "s-img",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "the login page"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64}}]}]}});
    std::fs::write(&file, format!("{call}\n{result}\n")).unwrap();
    drop(result);

    let (summary, stderr) = import_json(&sandbox, &file);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(summary["recordsNew"], 2);
    // Every pass over 50 MB is slow in a debug build: each property is checked once, through the
    // library where the binary's output would be 50 MB of base64.
    let (hashes, image_hash) = {
        let store = Store::open(&sandbox.db, StoreOptions::default()).unwrap();
        let snapshot = store.snapshot().unwrap();
        let sizes = snapshot.table_sizes().unwrap();
        let of = |name: &str| sizes.iter().find(|t| t.table == name).map(|t| (t.entries, t.stored_bytes));
        let (blobs, blob_bytes) = of("blobs").unwrap();
        assert_eq!(blobs, 1, "the image is one blob");
        // A repeated pattern is kept compressed; it reads back whole below.
        assert!(blob_bytes < image.len() as u64 / 100, "{blob_bytes}");
        let journal_bytes = of("journal").unwrap().1;
        assert!(
            journal_bytes < 64 << 10,
            "the journal holds a reference, not the image: {journal_bytes} bytes"
        );
        let guard = snapshot.record("s-img", 1).unwrap().unwrap();
        let view = guard.view().unwrap();
        let Some(annal_engine::BlockView::Blob { hash: image_hash, .. }) = view.block(1) else {
            panic!("the image is not the result's second block")
        };
        let record = snapshot.to_record(&view).unwrap();
        assert!(matches!(&record.blocks[0], Block::ToolResult { output, .. } if output == "the login page"));
        match &record.blocks[1] {
            Block::Blob { media_type, data } => {
                assert_eq!(media_type, "image/png");
                assert!(data == &image, "the image reads back byte for byte");
            }
            other => panic!("expected the image blob, got {}", other.kind()),
        }
        let hashes = session_hashes(&snapshot, "s-img");
        // The same image in another record (of another session) is the same blob.
        let copy = Record {
            entry_id: "copy".into(),
            role: Role::User,
            timestamp: None,
            blocks: vec![Block::Blob { media_type: "image/png".into(), data: image.clone() }],
            meta: Default::default(),
        };
        store.append("s-copy", None, vec![copy]).unwrap();
        let sizes = store.snapshot().unwrap().table_sizes().unwrap();
        let blobs = sizes.iter().find(|t| t.table == "blobs").unwrap();
        assert_eq!((blobs.entries, blobs.stored_bytes), (1, blob_bytes), "the image was stored again");
        (hashes, image_hash)
    };

    // People's export names the image without inlining it.
    let markdown = sandbox.annal(&["export", "s-img", "--format", "markdown"], "").ok().stdout;
    assert!(markdown.contains("*[image/png, 50000001 bytes, blob "), "{markdown}");
    assert!(markdown.len() < 4096, "the Markdown export inlines the image ({} bytes)", markdown.len());
    // The JSONL export carries it, and imports into another store: an import of an annal export
    // checks every record against the hash the export claims, so success means identical hashes.
    let export = sandbox.dir().join("export.jsonl");
    sandbox.annal(&["export", "s-img", "-o", export.to_str().unwrap()], "").ok();
    let exported = std::fs::read_to_string(&export).unwrap();
    let claimed: Vec<String> = exported
        .lines()
        .skip(1)
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["hash"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(claimed, hashes.iter().map(annal_engine::hash_to_hex).collect::<Vec<_>>());
    let other = Sandbox::new();
    let (summary, stderr) = import_json(&other, &export);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(summary["recordsNew"], 2);

    // A projection describes the image (type, size, hash) and never inlines it.
    let projection = sandbox
        .annal(&["project", "s-img", "--window", "200000", "--max-output", "8000", "--json"], "")
        .ok()
        .stdout;
    assert!(projection.len() < 16 << 10, "the projection inlines the image ({} bytes)", projection.len());
    assert!(!projection.contains("iVBOiVBO"), "the projection holds the image's base64");
    let view: Value = serde_json::from_str(&projection).unwrap();
    let blocks: Vec<&Value> = view["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["blocks"].as_array().unwrap())
        .collect();
    let described = json!({"type": "blob", "hash": annal_engine::hash_to_hex(&image_hash),
        "mediaType": "image/png", "bytes": 50_000_001});
    assert!(blocks.contains(&&described), "no description of the image in {projection}");
    // The search index holds the tool result's text and not the image: a rebuild indexes the
    // call and the result (the image blocks have no document) and a few bytes of text.
    let hits = sandbox.annal(&["history", "search", "login page", "--json"], "").ok().stdout;
    let hits: Vec<Value> = serde_json::from_str(&hits).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!((hits[0]["entryId"].as_str(), hits[0]["blockIndex"].as_u64()), (Some("r1"), Some(0)));
    for query in ["iVBOiVBOiVBOiVBO", "iVBO", "image/png"] {
        let run = sandbox.annal(&["history", "search", query, "--literal", "--json"], "").ok();
        assert_eq!(run.stdout.trim(), "[]", "a search for {query} finds the image");
    }
    let rebuilt: Value =
        serde_json::from_str(&sandbox.annal(&["reindex", "--json"], "").ok().stdout).unwrap();
    assert_eq!(rebuilt["blocks"], 2, "{rebuilt}");
    assert!(rebuilt["textBytes"].as_u64().unwrap() < 1024, "{rebuilt}");
    assert!(rebuilt["indexBytes"].as_u64().unwrap() < 256 << 10, "the index holds the image: {rebuilt}");
}

/// Each record's chain hash, read without loading blobs.
fn session_hashes(snapshot: &annal_engine::Snapshot, session: &str) -> Vec<annal_engine::Hash> {
    let records = snapshot.records(session, 0..u64::MAX).unwrap();
    records.map(|guard| guard.unwrap().view().unwrap().hash()).collect()
}

#[test]
fn duplicate_entry_ids_with_different_content() {
    let sandbox = Sandbox::new();
    let file = sandbox.dir().join("dup.jsonl");
    // Within one file the later line keeps its content under an id derived from its place.
    let lines = [claude_user("s-dup", "u1", "first"), claude_user("s-dup", "u1", "edited copy")];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let (summary, stderr) = import_json(&sandbox, &file);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(summary["recordsNew"], 2);
    assert_eq!(entry_ids(&sandbox.db, "s-dup"), ["u1", "claude:s-dup:2"]);

    // The file changes under an id already stored: the change is kept as a revision beside
    // the original, which stays as it was.
    let changed = [claude_user("s-dup", "u1", "rewritten"), claude_user("s-dup", "u9", "new")];
    std::fs::write(&file, changed.join("\n") + "\n").unwrap();
    let (summary, stderr) = import_json(&sandbox, &file);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!((summary["recordsNew"].as_u64(), summary["recordsRevised"].as_u64()), (Some(2), Some(1)));
    let shown = sandbox.annal(&["show", "s-dup", "--json"], "").ok().stdout;
    let records = crate::support::json_lines(&shown);
    assert_eq!(records.len(), 4);
    assert_eq!(records[0]["blocks"][0]["text"], "first");
    assert_eq!(records[2]["blocks"][0]["text"], "rewritten");
    assert!(records[2]["entryId"].as_str().unwrap().starts_with("u1~rev-"), "{}", records[2]);
    assert_eq!(records[2]["meta"]["revises"], "u1");
    // Importing the changed file again stores nothing.
    let (again, _) = import_json(&sandbox, &file);
    assert_eq!((again["recordsNew"].as_u64(), again["recordsRevised"].as_u64()), (Some(0), Some(0)));

    // On stdin: against the store, and within one batch.
    let append = |input: &str| sandbox.annal(&["append", "s-dup"], input);
    let stored =
        "{\"entryId\":\"u1\",\"role\":\"user\",\"blocks\":[{\"type\":\"text\",\"text\":\"other\"}]}\n";
    assert_eq!(
        error_line(&append(stored), status::BAD_INPUT),
        "annal: stdin:1: entry \"u1\" is already stored at sourceOrder 0 of session \"s-dup\" with \
         different content; nothing was appended"
    );
    let twice = "{\"entryId\":\"n\",\"role\":\"user\"}\n{\"entryId\":\"n\",\"role\":\"system\"}\n";
    assert_eq!(
        error_line(&append(twice), status::BAD_INPUT),
        "annal: stdin:2: entry \"n\" appears again with different content (first on line 1); nothing \
         was appended"
    );
    assert_eq!(entry_ids(&sandbox.db, "s-dup").len(), 4);
    verified(&sandbox);
}
