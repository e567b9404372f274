//! Imports every Claude Code, Codex and OpenCode transcript in the folder named by
//! `ANNAL_CORPUS` (real transcripts from public repositories, read-only): each parses without
//! panicking, detects as its format, yields the record count counted by hand, pairs every tool
//! result with an earlier call, is imported through the facade (`annal::Annal::import_file`, as
//! `annal import` does) into a fresh store that then verifies, and imports again as a no-op; its
//! sessions exported (`Annal::export`) and imported again keep every hash. The parser's own
//! claims (counts, skipped lines, cut transcripts, sub-agent names) are checked on
//! `annal_formats`. A missing corpus, format folder or counted file fails the test.
//!
//! Run: `ANNAL_CORPUS=<corpus folder> cargo test -p annal-tests --features corpus --test corpus -- import::`

use std::collections::{BTreeMap, HashMap, HashSet};
use std::error::Error;
use std::path::{Path, PathBuf};

use annal::{Annal, Block, ExportOptions, Options};
use annal_formats::{detect_format, parse_transcript, ParsedSession, SkipReason, TranscriptFormat};
use annal_support::corpus::{corpus_root, format_file, format_files, FORMAT_FOLDERS};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

/// What one corpus file must parse to, counted by hand.
struct Expected {
    folder: &'static str,
    file: &'static str,
    records: usize,
    /// Line numbers reported as skipped.
    skipped: &'static [usize],
    /// Tool results with no call earlier in their session (none in this corpus).
    unpaired: usize,
}

const fn claude(file: &'static str, records: usize, skipped: &'static [usize]) -> Expected {
    Expected { folder: "claude-code-jsonl", file, records, skipped, unpaired: 0 }
}

const fn codex(file: &'static str, records: usize) -> Expected {
    Expected { folder: "codex-rollout-jsonl", file, records, skipped: &[], unpaired: 0 }
}

const fn opencode(file: &'static str, records: usize) -> Expected {
    Expected { folder: "opencode-export-json", file, records, skipped: &[], unpaired: 0 }
}

const EXPECTED: &[Expected] = &[
    // Claude Code: one record per line that is JSON. Counted with `wc -l`, and python3 `json.loads`
    // on each line (it succeeds on every line of these files unless noted).
    // 53 lines: 25 user, 28 assistant.
    claude("d-kimuson__claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", 53, &[]),
    // 438 lines: 1 summary, 175 user, 262 assistant.
    claude("d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", 438, &[]),
    // 536 lines: 24 file-history-snapshot, 170 user, 326 assistant, 16 system.
    claude("jimmc414__cctrace__raw_messages.jsonl", 536, &[]),
    // 26 lines: 4 file-history-snapshot, 9 user, 13 assistant.
    claude("lanegrid__agtrace__claude_session.jsonl", 26, &[]),
    // 86 lines: 10 file-history-snapshot, 24 user, 25 assistant, 14 queue-operation, 11 system,
    // 1 progress, 1 summary.
    claude("moredip__session-share__0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl", 86, &[]),
    // The sub-agent files of that session: 7, 6, 6, 6 and 7 lines (user, assistant, progress).
    claude("moredip__session-share__agent-a5bdbc1.jsonl", 7, &[]),
    claude("moredip__session-share__agent-a9cad17.jsonl", 6, &[]),
    claude("moredip__session-share__agent-aa5ef13.jsonl", 6, &[]),
    claude("moredip__session-share__agent-ac27727.jsonl", 6, &[]),
    claude("moredip__session-share__agent-afbbf75.jsonl", 7, &[]),
    // 562 lines; `grep -n '^//'`: lines 1 and 2 are comments; `json.loads` accepts the other 560.
    claude("moredip__session-share__general-tool-calls.jsonl", 560, &[1, 2]),
    // Codex: one record per line; 55 lines (`wc -l`), each one JSON object: 1 session_meta,
    // 23 response_item, 24 event_msg, 7 turn_context.
    codex("lanegrid__agtrace__codex_session.jsonl", 55),
    // OpenCode: one record per message, one more per message with a completed or failed tool part
    // (its results), one for the session info. python3 `json.load` and a walk over `messages`:
    // 77 messages (`grep -c '"role": "'` agrees), 54 of them with a finished tool part.
    opencode(
        "victoryforphil__dark-factory__session__kind-meadow__ses_39b9a333bffeVNXMK6bSZru9Uq.json",
        77 + 54 + 1,
    ),
    // 64 messages (`grep -c '"role": "'` agrees), 56 of them with a finished tool part.
    opencode(
        "victoryforphil__dark-factory__session__silent-panda__ses_39b3d0892ffeaCoiaHPszzRI8d.json",
        64 + 56 + 1,
    ),
];

/// A corpus file: its name under the corpus folder, its path, its format.
type CorpusFile = (String, PathBuf, TranscriptFormat);

/// The corpus files, and a check that every file counted by hand in [`EXPECTED`] is among them.
fn corpus_files() -> Result<Vec<CorpusFile>, Box<dyn Error>> {
    let files = format_files(&corpus_root()?)?;
    for expect in EXPECTED {
        format_file(&files, &format!("{}/{}", expect.folder, expect.file))?;
    }
    Ok(files.into_iter().map(|file| (file.name, file.path, file.format)).collect())
}

/// Counts records independently of the importer: JSON lines for the line formats; messages,
/// messages with finished tools, and the session info for OpenCode.
fn independent_count(bytes: &[u8], format: TranscriptFormat) -> usize {
    if format == TranscriptFormat::OpenCode {
        let Ok(document) = serde_json::from_slice::<Value>(bytes) else { return 0 };
        let messages = document.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
        let finished = |part: &Value| {
            part.get("type").and_then(Value::as_str) == Some("tool")
                && matches!(
                    part.pointer("/state/status").and_then(Value::as_str),
                    Some("completed" | "error")
                )
        };
        let with_results = messages
            .iter()
            .filter(|m| {
                m.get("parts").and_then(Value::as_array).is_some_and(|parts| parts.iter().any(finished))
            })
            .count();
        return messages.len() + with_results + 1;
    }
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| std::str::from_utf8(line).ok())
        .filter(|line| !line.trim().is_empty() && serde_json::from_str::<Value>(line).is_ok())
        .count()
}

/// Tool results whose call id no earlier block of the session carries, or whose tool name
/// differs from the call's.
fn unpaired_results(session: &ParsedSession) -> Vec<String> {
    let mut calls: HashMap<&str, &str> = HashMap::new();
    let mut unpaired = Vec::new();
    for record in &session.records {
        for block in &record.blocks {
            match block {
                Block::ToolCall { call_id, tool, .. } => {
                    calls.insert(call_id, tool);
                }
                Block::ToolResult { call_id, tool, .. } => match calls.get(call_id.as_str()) {
                    Some(called) if called == tool => {}
                    _ => unpaired.push(format!("{} (call {call_id}, tool {tool:?})", record.entry_id)),
                },
                _ => {}
            }
        }
    }
    unpaired
}

/// A store in `dir` opened as `annal import` opens one: these tests never search, so the index
/// is not opened (it would only index in the background).
fn open(path: &Path) -> Result<Annal, annal::Error> {
    Annal::open_with(path, &Options { index_eagerly: false, ..Options::default() })
}

/// Imports the transcript at `path` into a fresh store as a user does (its format detected),
/// checks what the import says against what the parser read, verifies the store, and imports
/// again as a no-op. Returns the records stored.
fn import_and_verify(
    path: &Path,
    format: TranscriptFormat,
    parsed: &annal_formats::ParsedTranscript,
    dir: &Path,
) -> Result<u64, Box<dyn Error>> {
    let annal = open(&dir.join("corpus.redb"))?;
    let name = path.display();
    let summary = annal.import_file(path, None)?;
    assert_eq!(summary.format, Some(format), "{name}: the import detected another format");
    assert!(summary.failed.is_empty(), "{name}: sessions not stored: {:?}", summary.failed);
    assert_eq!(summary.skipped, parsed.skipped, "{name}: skipped lines");
    let sessions: Vec<&str> = parsed.sessions.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(summary.sessions, sessions, "{name}: sessions");
    assert_eq!((summary.records_present, summary.records_elsewhere), (0, 0), "{name}: {summary:?}");
    let report = annal.verify(None)?;
    let problems: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
    assert!(report.is_ok(), "verify found problems: {problems:?}");
    let stored: u64 = annal.sessions()?.iter().map(|s| s.len).sum();
    assert_eq!(stored, summary.records_new, "{name}: {summary:?}");
    let again = annal.import_file(path, None)?;
    assert_eq!((again.records_new, again.records_revised), (0, 0), "re-importing {name} added records");
    assert_eq!(again.records_present, summary.records_new, "{name}: {again:?}");
    assert!(annal.close()?);
    Ok(summary.records_new)
}

#[test]
fn corpus_transcripts_import_verify_and_reimport() -> TestResult {
    let files = corpus_files()?;
    let expected: BTreeMap<String, &Expected> =
        EXPECTED.iter().map(|e| (format!("{}/{}", e.folder, e.file), e)).collect();
    let mut per_format: BTreeMap<&str, usize> = BTreeMap::new();
    let mut counted = 0;
    for (name, path, format) in &files {
        let bytes = std::fs::read(path)?;
        assert_eq!(detect_format(&bytes), Some(*format), "{name}: detected format");
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("transcript");
        let parsed = parse_transcript(&bytes, *format, stem);
        assert_eq!(parse_transcript(&bytes, *format, stem), parsed, "{name}: parsing is not deterministic");
        let records = parsed.record_count();
        *per_format.entry(format.name()).or_default() += records;
        for skipped in &parsed.skipped {
            println!("{name}: skipped {skipped}");
        }
        assert_eq!(
            records,
            independent_count(&bytes, *format),
            "{name}: records against an independent count"
        );
        let unpaired: Vec<String> = parsed.sessions.iter().flat_map(unpaired_results).collect();
        if let Some(expect) = expected.get(name) {
            counted += 1;
            assert_eq!(records, expect.records, "{name}: records");
            let lines: Vec<usize> = parsed.skipped.iter().map(|s| s.line).collect();
            assert_eq!(lines, expect.skipped, "{name}: skipped lines");
            assert_eq!(unpaired.len(), expect.unpaired, "{name}: unpaired tool results {unpaired:?}");
        } else if !unpaired.is_empty() {
            println!("{name}: {} unpaired tool results: {unpaired:?}", unpaired.len());
        }
        let dir = tempfile::tempdir()?;
        let appended = import_and_verify(path, *format, &parsed, dir.path())?;
        // A line repeated verbatim (same id, same content) is one record in the store.
        let distinct: usize = parsed
            .sessions
            .iter()
            .map(|s| s.records.iter().map(|r| r.entry_id.as_str()).collect::<HashSet<_>>().len())
            .sum();
        assert_eq!(appended, distinct as u64, "{name}: every distinct record is new in a fresh store");
        println!("{name}: {records} records in {} session(s)", parsed.sessions.len());
    }
    println!("records per format: {per_format:?}");
    assert_eq!(counted, EXPECTED.len(), "files counted by hand that were not checked");
    for (folder, format) in FORMAT_FOLDERS {
        assert!(per_format.get(format.name()) > Some(&0), "no record imported from {folder}");
    }
    Ok(())
}

/// A transcript cut anywhere (a session still being written) parses to a prefix of the full
/// transcript's records, so importing it again later appends only what is new.
#[test]
fn a_cut_transcript_parses_to_a_prefix() -> TestResult {
    let mut compared = 0;
    for (name, path, format) in corpus_files()? {
        if format == TranscriptFormat::OpenCode {
            continue; // one document: a cut one is not an export
        }
        let bytes = std::fs::read(&path)?;
        let full = parse_transcript(&bytes, format, "stem");
        for cut in [bytes.len() / 3, bytes.len() / 2, bytes.len() * 9 / 10] {
            let part = parse_transcript(&bytes[..cut], format, "stem");
            let mid_line = cut > 0 && bytes[cut - 1] != b'\n';
            if mid_line {
                let last = part.skipped.last().map(|s| &s.reason);
                assert_eq!(last, Some(&SkipReason::Truncated), "{name} cut at {cut}");
            }
            for (short, long) in part.sessions.iter().zip(&full.sessions) {
                assert_eq!(short.name, long.name, "{name} cut at {cut}");
                assert!(short.records.len() <= long.records.len(), "{name} cut at {cut}");
                assert!(short.records[..] == long.records[..short.records.len()], "{name} cut at {cut}");
                compared += short.records.len();
            }
        }
    }
    assert!(compared > 0, "no record of a cut transcript was compared");
    Ok(())
}

#[test]
fn comment_lines_are_skipped_not_fatal() -> TestResult {
    let files = format_files(&corpus_root()?)?;
    let path =
        &format_file(&files, "claude-code-jsonl/moredip__session-share__general-tool-calls.jsonl")?.path;
    let parsed = parse_transcript(&std::fs::read(path)?, TranscriptFormat::Claude, "general-tool-calls");
    let reasons: Vec<(usize, &SkipReason)> = parsed.skipped.iter().map(|s| (s.line, &s.reason)).collect();
    assert_eq!(reasons, [(1, &SkipReason::Comment), (2, &SkipReason::Comment)]);
    assert_eq!(parsed.skipped[0].to_string(), "line 1: comment line (not JSON)");
    assert_eq!(parsed.sessions.len(), 1);
    assert_eq!(parsed.sessions[0].name, "88f04c6a-d128-40bf-96b3-6b2aa787f62c");
    Ok(())
}

#[test]
fn sub_agent_files_name_their_parent() -> TestResult {
    let files = corpus_files()?;
    let parent = "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68";
    let agents: Vec<&CorpusFile> =
        files.iter().filter(|(name, ..)| name.contains("moredip__session-share__agent-")).collect();
    let counted = EXPECTED.iter().filter(|e| e.file.contains("moredip__session-share__agent-")).count();
    assert!(counted > 0, "the table names no sub-agent file");
    assert!(agents.len() >= counted, "{} sub-agent files in the corpus, {counted} expected", agents.len());
    for (name, path, format) in agents {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let parsed = parse_transcript(&std::fs::read(path)?, *format, stem);
        let agent = stem.rsplit("__").next().unwrap_or_default();
        assert_eq!(parsed.sessions.len(), 1, "{name}");
        let session = &parsed.sessions[0];
        assert_eq!(session.name, format!("{parent}/{agent}"), "{name}");
        let quoted = format!("\"{parent}\"");
        assert!(session.records.iter().all(|r| r.meta.get("parentSession") == Some(&quoted)), "{name}");
    }
    Ok(())
}

/// Export → import round trip, as a user moves sessions between stores: every corpus transcript
/// imported into one store, each of its sessions exported as annal JSONL and imported into a
/// fresh store, reproduces every record's hash and the session's head; both stores verify.
#[test]
fn corpus_sessions_round_trip_through_export_with_identical_hashes() -> TestResult {
    let files = corpus_files()?;
    let dir = tempfile::tempdir()?;
    let source = open(&dir.path().join("source.redb"))?;
    for (name, path, _) in &files {
        let summary = source.import_file(path, None)?;
        assert!(summary.failed.is_empty(), "{name}: sessions not stored: {:?}", summary.failed);
    }
    let names: Vec<String> = source.sessions()?.into_iter().map(|s| s.name).collect();
    let snapshot = source.snapshot()?;
    let mut records = 0usize;
    for (index, name) in names.iter().enumerate() {
        let mut export = Vec::new();
        let exported = source.export(name, &ExportOptions::default(), &mut export)?;
        let parsed = parse_transcript(&export, TranscriptFormat::Annal, "export");
        assert!(parsed.skipped.is_empty(), "{name}: export lines skipped: {:?}", parsed.skipped);
        let [session] = parsed.sessions.as_slice() else { panic!("{name}: one session expected") };
        assert_eq!(&session.name, name);
        assert_eq!(exported.records, session.records.len() as u64, "{name}: records written");
        let target = open(&dir.path().join(format!("target-{index}.redb")))?;
        let imported = target.import(&export, "export", None)?;
        assert_eq!(imported.format, Some(TranscriptFormat::Annal), "{name}");
        assert_eq!(imported.sessions, std::slice::from_ref(name), "{name}");
        assert!(imported.failed.is_empty() && imported.skipped.is_empty(), "{name}: {imported:?}");
        assert_eq!(imported.records_new, exported.records, "{name}: records imported");
        let copy = target.snapshot()?;
        for (claim, guard) in session.claimed_hashes.iter().zip(copy.records(name, 0..u64::MAX)?) {
            let guard = guard?;
            let view = guard.view()?;
            assert_eq!(Some((view.hash(), view.prev_hash())), *claim, "{name}: {}", view.entry_id());
            records += 1;
        }
        let original = snapshot.session(name)?.ok_or("session vanished")?;
        assert_eq!(copy.session(name)?.ok_or("no copy")?.head, original.head, "{name}: head differs");
        assert!(target.verify(None)?.is_ok(), "{name}: the copy does not verify");
    }
    assert!(records > 0, "no records round-tripped");
    assert!(source.verify(None)?.is_ok());
    Ok(())
}
