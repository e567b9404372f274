//! The bad-input catalogue (docs/errors.md) through the real binary: each hostile input gives one
//! clear error or a clean recovery, and no stored record is lost. Large inputs are generated
//! here, in a temporary folder.
#![allow(clippy::unwrap_used)]

use crate::support::status;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{Run, Sandbox};
use annal_engine::{Block, Record, Role, Sharing, Store, StoreOptions};
use serde_json::{json, Value};

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

#[test]
fn a_file_in_an_unknown_format() {
    let sandbox = Sandbox::new();
    let notes = sandbox.dir().join("notes.jsonl");
    std::fs::write(&notes, "{\"a\": 1}\n{\"b\": 2}\n").unwrap();
    let run = sandbox.annal(&["import", notes.to_str().unwrap()], "");
    // The hint names every format `--format` takes, as the registry lists them.
    let formats = annal::import::TranscriptFormat::in_agent_order();
    assert_eq!(formats.len(), annal::import::TranscriptFormat::ALL.len());
    let names: Vec<&str> = formats.into_iter().map(|format| format.name()).collect();
    assert_eq!(
        error_line(&run, status::BAD_INPUT),
        format!(
            "annal: 1 file given is not a transcript annal can read (see above); --format {} reads a \
             file as that format",
            names.join("|")
        )
    );
    assert!(
        run.stderr.starts_with(&format!(
            "{}: not a transcript annal can read; skipped, nothing stored\n",
            notes.display()
        )),
        "{}",
        run.stderr
    );

    // Found in a folder beside a transcript, it is skipped and the rest imported.
    let folder = sandbox.dir().join("mixed");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(&notes, folder.join("package.json")).unwrap();
    std::fs::write(folder.join("chat.jsonl"), claude_user("s-mixed", "u1", "hi") + "\n").unwrap();
    let (summary, stderr) = import_json(&sandbox, &folder);
    assert_eq!(summary["filesUnrecognised"], 1);
    assert_eq!(summary["recordsNew"], 1);
    assert!(stderr.contains("package.json: not a transcript annal can read; skipped"), "{stderr}");

    // Read as a format it only looks like (Gemini CLI's log shares Claude Code's `type` and
    // `sessionId`), it is reported and nothing of it is stored.
    let gemini = sandbox.dir().join("gemini.jsonl");
    let lines = [
        r#"{"sessionId":"g1","projectHash":"p","startTime":"2026-11-30T10:00:00Z"}"#,
        r#"{"id":"m1","timestamp":"2026-11-30T10:00:01Z","type":"user","content":"hi"}"#,
        r#"{"id":"m2","timestamp":"2026-11-30T10:00:02Z","type":"gemini","content":"hello"}"#,
    ];
    std::fs::write(&gemini, lines.join("\n") + "\n").unwrap();
    let run = sandbox.annal(&["import", "--format", "claude", gemini.to_str().unwrap()], "");
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let reason = format!(
        "{}: read as claude, 3 of its 3 items are of no kind claude writes (first line 1: not a valid record (a line in gemini's format, not claude's)); skipped, nothing stored",
        gemini.display()
    );
    assert!(run.stderr.contains(&reason), "{}", run.stderr);
    assert!(!sandbox.annal(&["sessions"], "").ok().stdout.contains("g1"));

    // A format annal does not know by name is a usage error.
    let run = sandbox.annal(&["import", "--format", "vim", notes.to_str().unwrap()], "");
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("invalid value 'vim' for '--format <FORMAT>'"), "{}", run.stderr);
    assert_eq!(entry_ids(&sandbox.db, "s-mixed"), ["u1"]);
}

#[test]
fn a_missing_file() {
    let sandbox = Sandbox::new();
    let missing = sandbox.dir().join("gone.jsonl");
    let run = sandbox.annal(&["import", missing.to_str().unwrap()], "");
    assert_eq!(
        error_line(&run, status::NOT_FOUND),
        format!("annal: cannot read {}: No such file or directory (os error 2)", missing.display())
    );
    assert!(!sandbox.db.exists(), "a failed import creates no store");
    // A reading command never creates a store either.
    let run = sandbox.annal(&["sessions"], "");
    assert_eq!(
        error_line(&run, status::NOT_FOUND),
        format!("annal: no store at {} (the first `annal append` creates it)", sandbox.db.display())
    );
    assert!(!sandbox.db.exists());
}

#[test]
fn a_folder_with_no_transcripts() {
    let sandbox = Sandbox::new();
    let folder = sandbox.dir().join("docs");
    std::fs::create_dir_all(folder.join("nested")).unwrap();
    std::fs::write(folder.join("README.md"), "# notes\n").unwrap();
    std::fs::write(folder.join("nested").join("log.txt"), "text\n").unwrap();
    let run = sandbox.annal(&["import", folder.to_str().unwrap()], "");
    assert_eq!(
        error_line(&run, status::BAD_INPUT),
        format!(
            "annal: no transcripts (.jsonl, .json or .aider.chat.history.md files) in {}",
            folder.display()
        )
    );
    assert!(!sandbox.db.exists());
}

#[test]
fn the_store_opened_by_a_second_process_at_the_same_time() {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s-first"], "{\"entryId\":\"f1\",\"role\":\"user\"}\n").ok();
    // An import and a series of appends, in separate processes, at once: both complete.
    let file = sandbox.dir().join("long.jsonl");
    let lines: Vec<String> = (0..3_000).map(|i| claude_user("s-import", &format!("i{i}"), "text")).collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let mut import = sandbox
        .command(&["import", file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for i in 0..10 {
        let run =
            sandbox.annal(&["append", "s-side"], &format!("{{\"entryId\":\"side{i}\",\"role\":\"user\"}}\n"));
        assert_eq!(run.ok().lines(), [i.to_string()]);
    }
    assert!(import.wait().unwrap().success());
    assert_eq!(entry_ids(&sandbox.db, "s-import").len(), 3_000);
    assert_eq!(entry_ids(&sandbox.db, "s-side").len(), 10);

    // An embedder that opened the store for itself alone excludes everyone else, clearly.
    let exclusive =
        Store::open(&sandbox.db, StoreOptions { sharing: Sharing::Exclusive, ..StoreOptions::default() })
            .unwrap();
    let run = sandbox.annal(&["sessions"], "");
    let line = error_line(&run, status::BUSY);
    assert!(
        line.starts_with(&format!(
            "annal: store {} is already open by another process that excludes sharing",
            sandbox.db.display()
        )),
        "{line}"
    );
    let run = sandbox.annal(&["append", "s-first"], "{\"entryId\":\"f2\",\"role\":\"user\"}\n");
    assert!(error_line(&run, status::BUSY).contains("already open by another process"), "{}", run.stderr);
    exclusive.close().unwrap();
    assert_eq!(entry_ids(&sandbox.db, "s-first"), ["f1"]);
    verified(&sandbox);
}

/// The effective user id, from the owner of this process's own `/proc` entry.
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|meta| meta.uid() == 0).unwrap_or(false)
}

#[test]
fn a_read_only_store_file() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;

    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s-ro"], "{\"entryId\":\"r1\",\"role\":\"user\"}\n").ok();
    let before = std::fs::read(&sandbox.db).unwrap();
    // A store opened shared is its file and the log beside it (the record is in the log's
    // frames until a checkpoint): both read-only.
    let log = annal_engine::log_path(&sandbox.db);
    for file in [&sandbox.db, &log] {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    // Root writes through file permissions, so as root the binary runs as `nobody`, for whom the
    // file is read-only as for its owner. `nobody` may not reach the build folder (under a private
    // home, say): it runs a copy in the sandbox.
    let as_nobody = running_as_root().then(|| {
        std::fs::set_permissions(sandbox.dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let copy = sandbox.dir().join("annal");
        std::fs::copy(env!("CARGO_BIN_EXE_annal"), &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        copy
    });
    let command = |args: &[&str]| match &as_nobody {
        None => sandbox.command(args),
        Some(binary) => {
            let mut command = Command::new(binary);
            command
                .arg("--db")
                .arg(&sandbox.db)
                .args(args)
                .env_remove("ANNAL_DB")
                .env("HOME", sandbox.dir())
                .env("XDG_DATA_HOME", sandbox.dir().join("data"))
                .uid(65534)
                .gid(65534);
            command
        }
    };
    let expected = format!(
        "annal: store {} cannot be opened for writing (Permission denied (os error 13)): the file or its \
         file system is read-only; annal needs write access to change it (commands that only read it work)",
        sandbox.db.display()
    );
    // Commands that only read open it read-only and work.
    for args in [&["sessions"][..], &["verify"], &["show", "s-ro"], &["export", "s-ro"]] {
        let run = crate::support::run(command(args), "");
        assert_eq!(run.code, Some(0), "annal {args:?}: {}", run.stderr);
    }
    for args in [&["append", "s-ro"][..], &["fork", "s-ro", "--at", "1", "--name", "f"]] {
        let run = crate::support::run(command(args), "{\"entryId\":\"r2\",\"role\":\"user\"}\n");
        assert_eq!(error_line(&run, status::READ_ONLY), expected, "annal {args:?}");
    }
    assert!(std::fs::read(&sandbox.db).unwrap() == before, "the store file is unchanged");
    for file in [&sandbox.db, &log] {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    assert_eq!(entry_ids(&sandbox.db, "s-ro"), ["r1"]);
    verified(&sandbox);
}

#[test]
fn a_truncated_store_file() {
    let sandbox = Sandbox::new();
    let records: String = (0..300)
        .map(|i| format!("{{\"entryId\":\"t{i}\",\"role\":\"tool\",\"blocks\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}\n", "w".repeat(500)))
        .collect();
    sandbox.annal(&["append", "s-cut"], &records).ok();
    let full = std::fs::read(&sandbox.db).unwrap();
    let display = sandbox.db.display().to_string();
    let cut_to = |len: usize| std::fs::write(&sandbox.db, &full[..len]).unwrap();

    cut_to(full.len() / 2);
    let line = error_line(&sandbox.annal(&["verify"], ""), status::CORRUPTED);
    let expected = format!(
        "annal: store {display} is corrupted: File truncated below stored layout: file_len={}, layout_len={}",
        full.len() / 2,
        full.len()
    );
    assert_eq!(line, expected);
    cut_to(100);
    assert_eq!(
        error_line(&sandbox.annal(&["sessions"], ""), status::CORRUPTED),
        format!(
            "annal: store {display} is corrupted: the file ends inside its header (failed to fill whole \
             buffer); was it truncated?"
        )
    );
    cut_to(4);
    assert_eq!(
        error_line(&sandbox.annal(&["sessions"], ""), status::BAD_INPUT),
        format!("annal: {display} is not an annal store: Not a redb database: magic number mismatch")
    );
    // Cut to nothing, it is not mistaken for a new store, not even by a writing command.
    cut_to(0);
    for args in [&["sessions"][..], &["append", "s-cut"]] {
        let run = sandbox.annal(args, "{\"entryId\":\"late\",\"role\":\"user\"}\n");
        assert_eq!(
            error_line(&run, status::BAD_INPUT),
            format!("annal: {display} is not an annal store: the file is empty (a store is never empty; was it truncated?)")
        );
    }
    assert_eq!(std::fs::metadata(&sandbox.db).unwrap().len(), 0);
    // The whole file again: every record is there.
    std::fs::write(&sandbox.db, &full).unwrap();
    assert_eq!(entry_ids(&sandbox.db, "s-cut").len(), 300);
    verified(&sandbox);
}

/// The files of a folder (flat, as an index folder is) and their contents.
fn folder_files(folder: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

/// The first saved index file with this extension.
fn index_file(saved: &[(std::path::PathBuf, Vec<u8>)], extension: &str) -> std::path::PathBuf {
    let found = saved.iter().find(|(path, _)| path.extension().is_some_and(|e| e == extension));
    found.unwrap_or_else(|| panic!("no .{extension} file in the index")).0.clone()
}

#[test]
fn the_index_folder_deleted_or_corrupted_while_the_store_is_closed() {
    let sandbox = Sandbox::new();
    let file = sandbox.dir().join("work.jsonl");
    let call = json!({"type": "assistant", "uuid": "a1", "sessionId": "s-idx",
        "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
            "input": {"command": "curl -s localhost:8080/api/login"}}]}});
    let result = json!({"type": "user", "uuid": "r1", "sessionId": "s-idx",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
            "content": "Error: read ECONNRESET at src/api/client.ts"}]}});
    let lines = [
        claude_user("s-idx", "u1", "the login request times out after a deploy"),
        call.to_string(),
        result.to_string(),
        claude_user("s-idx", "u2", "retry the login with a longer timeout"),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    sandbox.annal(&["import", file.to_str().unwrap()], "").ok();
    sandbox.annal(&["append", "s-more"], "{\"entryId\":\"m1\",\"role\":\"user\",\"blocks\":[{\"type\":\"text\",\"text\":\"a timeout in src/api/client.ts\"}]}\n").ok();

    let queries = ["login", "ECONNRESET", "src/api/client.ts", "timeout", "localhost:8080"];
    let search = |query: &str| sandbox.annal(&["history", "search", query, "--json"], "").ok().stdout;
    let before: Vec<String> = queries.iter().map(|query| search(query)).collect();
    let hits = |text: &str| -> Vec<String> {
        let hits: Vec<Value> = serde_json::from_str(text).unwrap();
        hits.iter().map(|hit| format!("{}#{}", hit["entryId"].as_str().unwrap(), hit["blockIndex"])).collect()
    };
    assert_eq!(hits(&before[0]), ["u2#0", "a1#0", "u1#0"]);
    assert_eq!(hits(&before[2]), ["m1#0", "r1#0"]);
    let shown = |session: &str| sandbox.annal(&["show", session, "--json"], "").ok().stdout;
    let stored = (shown("s-idx"), shown("s-more"));

    let folder = annal_query::index_folder(&sandbox.db);
    let saved = folder_files(&folder);
    let restore = || {
        if folder.is_dir() {
            std::fs::remove_dir_all(&folder).unwrap();
        } else if folder.exists() {
            std::fs::remove_file(&folder).unwrap();
        }
        // As annal made it: readable by the store's owner only.
        std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
            .create(&folder)
            .unwrap();
        for (path, bytes) in &saved {
            std::fs::write(path, bytes).unwrap();
        }
    };
    let (idx, fast, term, pos) = (
        index_file(&saved, "idx"),
        index_file(&saved, "fast"),
        index_file(&saved, "term"),
        index_file(&saved, "pos"),
    );
    type Damage<'a> = Box<dyn Fn() + 'a>;
    let damages: Vec<(&str, Damage<'_>)> = vec![
        ("the folder deleted", Box::new(|| std::fs::remove_dir_all(&folder).unwrap())),
        (
            "the folder empty",
            Box::new(|| {
                std::fs::remove_dir_all(&folder).unwrap();
                // Made as annal makes it (readable by the store's owner only): this case is
                // about an empty index, not one left open to others.
                std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
                    .create(&folder)
                    .unwrap();
            }),
        ),
        ("garbage in meta.json", Box::new(|| std::fs::write(folder.join("meta.json"), "garbage").unwrap())),
        (
            "a segment file truncated",
            Box::new(|| {
                let bytes = std::fs::read(&idx).unwrap();
                std::fs::write(&idx, &bytes[..bytes.len() / 2]).unwrap();
            }),
        ),
        (
            "bytes inside a segment file overwritten",
            Box::new(|| {
                let mut bytes = std::fs::read(&fast).unwrap();
                let middle = bytes.len() / 2;
                bytes[middle - 8..middle].copy_from_slice(b"garbage!");
                std::fs::write(&fast, bytes).unwrap();
            }),
        ),
        (
            "a segment file zeroed",
            Box::new(|| {
                let len = std::fs::metadata(&term).unwrap().len() as usize;
                std::fs::write(&term, vec![0; len]).unwrap();
            }),
        ),
        ("a segment file deleted", Box::new(|| std::fs::remove_file(&pos).unwrap())),
    ];
    // Each is rebuilt from the journal by the next search (and, once, by `annal reindex`), which
    // finds what it found before; no stored record changes.
    for (round, (what, damage)) in damages.iter().enumerate() {
        restore();
        damage();
        if round == 2 {
            sandbox.annal(&["reindex"], "").ok();
        }
        for (query, expected) in queries.iter().zip(&before) {
            let run = sandbox.annal(&["history", "search", query, "--json"], "").ok();
            assert!(run.stderr.is_empty(), "{what}: {}", run.stderr);
            assert_eq!(&run.stdout, expected, "{what}: a search for {query}");
        }
        verified(&sandbox);
        assert_eq!((shown("s-idx"), shown("s-more")), stored, "{what}: the stored records changed");
    }

    // A file where the folder goes is not the index: it is named, left alone, and nothing is
    // searched until it is moved.
    std::fs::remove_dir_all(&folder).unwrap();
    std::fs::write(&folder, "notes").unwrap();
    let reason = format!(
        "the search index folder {} is not a folder; move or delete it, and the index is rebuilt from the \
         journal",
        folder.display()
    );
    assert_eq!(
        error_line(&sandbox.annal(&["history", "search", "login"], ""), status::IO),
        format!("annal: cannot open the search index of {}: {reason}", sandbox.db.display())
    );
    assert_eq!(error_line(&sandbox.annal(&["reindex"], ""), status::IO), format!("annal: {reason}"));
    assert_eq!(std::fs::read_to_string(&folder).unwrap(), "notes");
    verified(&sandbox);
    std::fs::remove_file(&folder).unwrap();
    assert_eq!(search("login"), before[0]);
    assert_eq!((shown("s-idx"), shown("s-more")), stored);
}
