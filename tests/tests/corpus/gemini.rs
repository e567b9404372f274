//! Imports every Gemini CLI session in `$ANNAL_CORPUS/gemini-cli-json/` (real whole-file JSON
//! sessions from public repositories, read-only): each detects as Gemini, parses to one record
//! per message (the counts of the corpus's SOURCES.md), pairs every tool result with an earlier
//! call, and is imported through the facade (`annal::Annal::import_file`, as `annal import` does)
//! into a fresh store that verifies and takes the same file again as a no-op. Each is also
//! rewritten as the JSONL log Gemini CLI migrates it to, which must parse to the same message
//! records and, imported beside it, add only its metadata. A missing corpus, folder or counted file fails the test.
//!
//! Run: `ANNAL_CORPUS=<corpus folder> cargo test -p annal-tests --features corpus --test corpus -- gemini::`

use std::collections::{BTreeMap, HashMap};
use std::error::Error;
use std::path::Path;

use annal::{Annal, Block, Options, Record, Role};
use annal_formats::{detect_format, parse_transcript, ParsedSession, TranscriptFormat};
use annal_support::corpus::{corpus_root, Corpus};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

const FOLDER: &str = "gemini-cli-json";

/// What one corpus file holds (SOURCES.md; checked against the file with python3 `json.load`
/// and a walk over `messages`). Files not listed get the same checks against their own counts.
struct Expected {
    file: &'static str,
    /// Messages per `type`.
    types: &'static [(&'static str, usize)],
    tool_calls: usize,
    kind: Option<&'static str>,
}

const EXPECTED: &[Expected] = &[
    Expected {
        file: "yoavf__ai-sessions__gemini-cli-pomodoro-timer.json",
        types: &[("gemini", 14), ("user", 5)],
        tool_calls: 11,
        kind: None,
    },
    Expected {
        file: "BrianV1981__aim__session-2026-03-18T02-47-daa0ceb2.json",
        types: &[("error", 1), ("gemini", 305), ("info", 1), ("user", 71)],
        tool_calls: 270,
        kind: Some("main"),
    },
    Expected {
        file: "BrianV1981__aim__session-2026-03-18T02-37-29f3682e.json",
        types: &[("gemini", 11), ("user", 2)],
        tool_calls: 0,
        kind: Some("subagent"),
    },
    Expected {
        file: "BrianV1981__aim__session-2026-03-18T01-58-b26e4930.json",
        types: &[("error", 1), ("gemini", 2), ("info", 2), ("user", 2)],
        tool_calls: 8,
        kind: Some("main"),
    },
];

/// Tool results whose call id no earlier block of the session carries with the same tool.
fn unpaired_results(session: &ParsedSession) -> Vec<String> {
    let mut calls: HashMap<&str, &str> = HashMap::new();
    let mut unpaired = Vec::new();
    for block in session.records.iter().flat_map(|record| &record.blocks) {
        match block {
            Block::ToolCall { call_id, tool, .. } => {
                calls.insert(call_id, tool);
            }
            Block::ToolResult { call_id, tool, .. }
                if calls.get(call_id.as_str()) != Some(&tool.as_str()) =>
            {
                unpaired.push(format!("call {call_id}, tool {tool:?}"));
            }
            _ => {}
        }
    }
    unpaired
}

/// Message records by `type`: every record but the tool results and the session record.
fn message_types(records: &[Record]) -> BTreeMap<String, usize> {
    let mut types = BTreeMap::new();
    for record in records.iter().filter(|r| r.role != Role::Tool && r.meta.contains_key("id")) {
        let kind = record.meta.get("type").map(|t| t.trim_matches('"').to_owned()).unwrap_or_default();
        *types.entry(kind).or_default() += 1;
    }
    types
}

/// Imports the file at `path` as a user does (its format detected), checking it is read as
/// Gemini's and stored whole; returns the records stored now.
fn import(annal: &Annal, path: &Path, name: &str) -> Result<u64, Box<dyn Error>> {
    let summary = annal.import_file(path, None)?;
    assert_eq!(summary.format, Some(TranscriptFormat::Gemini), "{name}: imported as");
    assert!(summary.failed.is_empty() && summary.skipped.is_empty(), "{name}: {summary:?}");
    Ok(summary.records_new)
}

/// The JSONL log Gemini CLI migrates a whole-file session to: the metadata line, each message,
/// then a metadata update.
fn as_log(document: &Value) -> String {
    let mut metadata = document.clone();
    let messages = metadata.as_object_mut().and_then(|m| m.remove("messages")).unwrap_or_default();
    let mut lines = vec![metadata];
    lines.extend(messages.as_array().into_iter().flatten().cloned());
    lines.push(serde_json::json!({"$set": {"lastUpdated": "2026-03-18T09:00:00.000Z"}}));
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// Messages per `type`, tool calls and tool calls with a result, counted in the document.
fn document_counts(document: &Value) -> (BTreeMap<String, usize>, usize, usize) {
    let mut types = BTreeMap::new();
    let (mut calls, mut results) = (0, 0);
    for message in document["messages"].as_array().into_iter().flatten() {
        *types.entry(message["type"].as_str().unwrap_or_default().to_owned()).or_default() += 1;
        for call in message["toolCalls"].as_array().into_iter().flatten() {
            calls += 1;
            results += usize::from(!call["result"].is_null());
        }
    }
    (types, calls, results)
}

fn check_file(path: &Path, expect: Option<&Expected>, dir: &Path) -> TestResult {
    let name = path.file_name().and_then(|f| f.to_str()).unwrap_or_default();
    let bytes = std::fs::read(path)?;
    let document: Value = serde_json::from_slice(&bytes)?;
    let (types, tool_calls, tool_results) = document_counts(&document);
    if let Some(expect) = expect {
        let counted: BTreeMap<String, usize> =
            expect.types.iter().map(|(t, n)| ((*t).to_owned(), *n)).collect();
        assert_eq!(types, counted, "{name}: messages by type in the file");
        assert_eq!((tool_calls, tool_results), (expect.tool_calls, expect.tool_calls), "{name}: tool calls");
    }
    assert_eq!(detect_format(&bytes), Some(TranscriptFormat::Gemini), "{name}: detected format");
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    let parsed = parse_transcript(&bytes, TranscriptFormat::Gemini, stem);
    assert_eq!(parse_transcript(&bytes, TranscriptFormat::Gemini, stem), parsed, "{name}: not deterministic");
    assert!(parsed.skipped.is_empty(), "{name}: skipped {:?}", parsed.skipped);
    let messages: usize = types.values().sum();
    assert_eq!((parsed.recognised, parsed.unrecognised), (messages + 1, 0), "{name}: items read");

    let [session] = parsed.sessions.as_slice() else { return Err(format!("{name}: one session").into()) };
    assert_eq!(Some(session.name.as_str()), document["sessionId"].as_str(), "{name}: session name");
    let items = document["messages"].as_array().ok_or("no messages")?;
    let with_results = items
        .iter()
        .filter(|m| {
            m["toolCalls"].as_array().is_some_and(|calls| calls.iter().any(|c| !c["result"].is_null()))
        })
        .count();
    assert_eq!(session.records.len(), messages + with_results + 1, "{name}: records");
    assert_eq!(message_types(&session.records), types, "{name}: message records by type");
    let blocks = || session.records.iter().flat_map(|r| &r.blocks);
    let calls = blocks().filter(|b| matches!(b, Block::ToolCall { .. })).count();
    let results = blocks().filter(|b| matches!(b, Block::ToolResult { .. })).count();
    assert_eq!((calls, results), (tool_calls, tool_results), "{name}: tool call and result blocks");
    assert_eq!(unpaired_results(session), Vec::<String>::new(), "{name}: unpaired results");
    for record in session.records.iter().filter(|r| r.role == Role::System && r.meta.contains_key("id")) {
        assert!(matches!(record.blocks.as_slice(), [Block::Text { .. }]), "{name}: {}", record.entry_id);
    }
    let info = session.records.last().ok_or("no records")?;
    let kind = document.get("kind").map(Value::to_string);
    assert_eq!(info.meta.get("kind"), kind.as_ref(), "{name}: session kind");
    assert!(info.meta.contains_key("projectHash"), "{name}: session fields");
    if let Some(expect) = expect {
        assert_eq!(kind, expect.kind.map(|k| format!("\"{k}\"")), "{name}: kind in the file");
    }

    // Never searched: the index is left closed.
    let options = Options { index_eagerly: false, ..Options::default() };
    let annal = Annal::open_with(dir.join("gemini.redb"), &options)?;
    assert_eq!(import(&annal, path, name)?, session.records.len() as u64, "{name}: imported");
    assert_eq!(
        annal.sessions()?.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        [session.name.as_str()]
    );
    assert!(annal.verify(None)?.is_ok(), "{name}: the store does not verify");
    assert_eq!(import(&annal, path, name)?, 0, "{name}: re-importing added records");

    check_log_form(&document, session, &annal, dir, name)
}

/// The JSONL form of the same session parses to the same message records, so importing it into
/// the store that holds the whole-file import adds only its two metadata records.
fn check_log_form(
    document: &Value,
    session: &ParsedSession,
    annal: &Annal,
    dir: &Path,
    name: &str,
) -> TestResult {
    let path = dir.join("session-converted.jsonl");
    std::fs::write(&path, as_log(document))?;
    let bytes = std::fs::read(&path)?;
    assert_eq!(detect_format(&bytes), Some(TranscriptFormat::Gemini), "{name}: JSONL detected");
    let parsed = parse_transcript(&bytes, TranscriptFormat::Gemini, "session-converted");
    assert!(parsed.skipped.is_empty(), "{name}: JSONL skipped {:?}", parsed.skipped);
    let [log] = parsed.sessions.as_slice() else { return Err(format!("{name}: one JSONL session").into()) };
    assert_eq!(log.name, session.name, "{name}: JSONL session name");
    let messages = session.records.len() - 1;
    assert_eq!(log.records.len(), messages + 2, "{name}: JSONL records");
    assert!(log.records[1..=messages] == session.records[..messages], "{name}: JSONL message records differ");
    assert_eq!(import(annal, &path, name)?, 2, "{name}: JSONL imported beyond the metadata");
    assert!(annal.verify(None)?.is_ok(), "{name}: the store does not verify after the JSONL");
    // Cut anywhere, the log parses to a prefix of its records.
    for cut in [bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
        let part = parse_transcript(&bytes[..cut], TranscriptFormat::Gemini, "session-converted");
        let short = part.sessions.first().map_or(&[][..], |s| &s.records[..]);
        assert!(short == &log.records[..short.len()], "{name}: JSONL cut at {cut}");
    }
    Ok(())
}

#[test]
fn gemini_sessions_import_pair_tools_and_match_their_jsonl_form() -> TestResult {
    let folder = corpus_root()?.join(FOLDER);
    let files = Corpus::find(&folder)?.files;
    let mut checked = 0;
    for path in &files {
        let file = path.file_name().and_then(|f| f.to_str()).unwrap_or_default();
        let expect = EXPECTED.iter().find(|e| e.file == file);
        let dir = tempfile::tempdir()?;
        check_file(path, expect, dir.path())?;
        checked += usize::from(expect.is_some());
    }
    for expect in EXPECTED {
        assert!(files.iter().any(|p| p.ends_with(expect.file)), "the corpus has no {FOLDER}/{}", expect.file);
    }
    assert_eq!(checked, EXPECTED.len(), "files counted by hand that were not checked");
    Ok(())
}
