//! Importing a user's existing sessions: Claude Code, Codex and OpenCode transcripts (and annal
//! exports) from files or folders, detected by content, appended idempotently (importing again
//! adds nothing), then listed and searched.
//!
//! `cargo run -p annal --example import_sessions -- [--db STORE] [PATH...]`
//!
//! With no PATH it imports a small Claude Code transcript it writes itself; with no `--db` the
//! store is temporary. For example, your own Claude Code sessions: `-- ~/.claude/projects`.

use std::error::Error;
use std::path::{Path, PathBuf};

use annal::{Annal, SearchRequest};

/// A short Claude Code session, as Claude Code writes it (one JSON object per line).
const SAMPLE: &str = r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"sample-session","timestamp":"2026-01-02T03:04:05.000Z","message":{"role":"user","content":"The build fails on CI. Can you look?"}}
{"type":"assistant","uuid":"u2","sessionId":"sample-session","timestamp":"2026-01-02T03:04:09.000Z","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Running the build to see the error."},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cargo build"}}]}}
{"type":"user","uuid":"u3","sessionId":"sample-session","timestamp":"2026-01-02T03:04:20.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"error[E0432]: unresolved import `serde_json`"}]}}
{"type":"assistant","uuid":"u4","sessionId":"sample-session","timestamp":"2026-01-02T03:04:31.000Z","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"serde_json is missing from Cargo.toml; adding it fixes the build."}]}}
this line is not JSON, so it is reported and skipped
"#;

/// Every `.jsonl` and `.json` file under `path` (or `path` itself), in a stable order.
fn transcripts(path: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_file() {
        files.push(path.to_owned());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(path)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            transcripts(&entry, files)?;
        } else if matches!(entry.extension().and_then(|e| e.to_str()), Some("jsonl" | "json")) {
            files.push(entry);
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let scratch = tempfile::tempdir()?;
    let mut args = std::env::args_os().skip(1);
    let mut db = scratch.path().join("imported.redb");
    let mut paths = Vec::new();
    while let Some(arg) = args.next() {
        if arg == "--db" {
            db = args.next().ok_or("--db needs a store path")?.into();
        } else {
            paths.push(PathBuf::from(arg));
        }
    }
    if paths.is_empty() {
        let sample = scratch.path().join("sample-session.jsonl");
        std::fs::write(&sample, SAMPLE)?;
        println!("no paths given: importing a sample Claude Code transcript");
        paths.push(sample);
    }
    let mut files = Vec::new();
    for path in &paths {
        transcripts(path, &mut files).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    }

    let annal = Annal::open(&db)?;
    for round in ["import", "again"] {
        let (mut new, mut present) = (0, 0);
        for file in &files {
            match annal.import_file(file, None) {
                Ok(summary) => {
                    new += summary.records_new;
                    present += summary.records_present;
                    if round == "import" {
                        let format = summary.format.map_or("?", |f| f.name());
                        println!("{} ({format}): {} new records", file.display(), summary.records_new);
                        for skipped in &summary.skipped {
                            println!("  line {}: skipped, {}", skipped.line, skipped.reason);
                        }
                    }
                }
                // One unreadable file does not stop the others.
                Err(err) => println!("{}: {err}", file.display()),
            }
        }
        println!("{round}: {new} records added, {present} already present\n");
    }

    let sessions = annal.sessions()?;
    println!("{} session(s) in {}:", sessions.len(), db.display());
    for session in sessions.iter().take(20) {
        println!("  {} ({} records)", session.name, session.len);
    }

    // Failed tool calls across everything imported: a first thing to look at.
    let mut failures = SearchRequest::new("error");
    failures.errors_only = true;
    failures.limit = 5;
    for hit in annal.search(&failures)? {
        println!("failed: {} in {}: {}", hit.id(), hit.session, hit.snippet.marked("[", "]"));
    }
    annal.close()?;
    Ok(())
}
