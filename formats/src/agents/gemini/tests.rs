//! Both forms of Gemini CLI sessions end to end: records, revisions, torn lines, detection.

use serde_json::json;

use super::super::{detect_format, parse_transcript, TranscriptFormat};
use super::*;
use annal_engine::Block;

/// Real-world text: CJK, emoji sequences, combining marks, multi-byte spaces.
const CJK: &str = "日本語のテキスト、中文字符，한국어 텍스트";
const EMOJI: &str = "完成 🚀 👩‍💻 🏳️‍🌈";
const MARKS: &str = "cafe\u{301} n\u{303}o a\u{3000}b\u{a0}c\u{2003}d";

fn jsonl(values: &[Value]) -> String {
    values.iter().map(|value| format!("{value}\n")).collect()
}

fn parse(text: &str) -> ParsedTranscript {
    parse_transcript(text.as_bytes(), TranscriptFormat::Gemini, "session-2026-03-18T01-58-s1")
}

/// A log as Gemini CLI writes it: a message written again as tokens, calls and results come.
fn log() -> Vec<Value> {
    let t = "2026-03-18T02:00:00.000Z";
    let gemini = json!({"id": "m2", "timestamp": t, "type": "gemini", "content": EMOJI, "model": "gemini-3",
        "thoughts": [{"subject": "Plan", "description": MARKS, "timestamp": t}], "tokens": null});
    let mut tokens = gemini.clone();
    tokens["tokens"] = json!({"input": 8196, "output": 121, "total": 8317});
    let mut calling = tokens.clone();
    calling["toolCalls"] = json!([{"id": "read_file_1", "name": "read_file",
        "args": {"file_path": "GEMINI.md"},
        "status": "executing", "timestamp": t}]);
    let mut done = calling.clone();
    done["toolCalls"][0]["status"] = json!("success");
    let response = json!({"id": "read_file_1", "name": "read_file", "response": {"output": CJK}});
    done["toolCalls"][0]["result"] = json!([{ "functionResponse": response }]);
    vec![
        json!({"sessionId": "s1", "projectHash": "ph", "startTime": "2026-03-18T01:58:27.222Z",
            "lastUpdated": "2026-03-18T01:58:27.222Z", "kind": "main"}),
        json!({"id": "m1", "timestamp": "2026-03-18T01:59:50.941Z", "type": "user",
            "content": [{"text": CJK}]}),
        json!({"$set": {"lastUpdated": "2026-03-18T01:59:51.000Z"}}),
        gemini,
        tokens,
        calling,
        done,
        json!({"id": "m3", "timestamp": t, "type": "info", "content": "Request cancelled."}),
        json!({"$rewindTo": "m2"}),
    ]
}

fn ids(session: &super::super::ParsedSession) -> Vec<&str> {
    session.records.iter().map(|r| r.entry_id.as_str()).collect()
}

#[test]
fn a_log_keeps_every_line_and_revises_repeated_messages() {
    let parsed = parse(&jsonl(&log()));
    assert!(parsed.skipped.is_empty());
    assert_eq!((parsed.recognised, parsed.unrecognised), (9, 0));
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "s1");
    let expected = [
        "gemini:s1:1",
        "m1",
        "gemini:s1:3",
        "m2",
        "m2~2",
        "m2~3",
        "m2~4",
        "m2~4/result",
        "m3",
        "gemini:s1:9",
    ];
    assert_eq!(ids(session), expected);
    let r = &session.records;
    assert_eq!((r[0].role, r[0].meta["kind"].as_str()), (Role::System, "\"main\""));
    assert_eq!(r[0].timestamp.as_deref(), Some("2026-03-18T01:58:27.222Z"));
    assert_eq!((r[1].role, r[1].blocks.as_slice()), (Role::User, &[Block::text(CJK)][..]));
    assert_eq!(r[2].meta["$set"], r#"{"lastUpdated":"2026-03-18T01:59:51.000Z"}"#);
    assert_eq!(r[2].timestamp.as_deref(), Some("2026-03-18T01:59:51.000Z"));
    let thinking = Block::Thinking { text: format!("**Plan**\n\n{MARKS}") };
    assert_eq!((r[3].role, r[3].blocks.clone()), (Role::Assistant, vec![thinking, Block::text(EMOJI)]));
    assert_eq!(r[3].meta["thoughts"], r#"[{"subject":"Plan","timestamp":"2026-03-18T02:00:00.000Z"}]"#);
    assert_eq!(r[3].meta["tokens"], "null");
    // Revisions: only what is new, the rest of the message in meta.
    assert!(r[4].blocks.is_empty());
    assert_eq!(
        (r[4].meta["revises"].as_str(), r[4].meta["tokens"].as_str()),
        ("\"m2\"", r#"{"input":8196,"output":121,"total":8317}"#)
    );
    assert_eq!(r[5].blocks, [Block::tool_call("read_file_1", "read_file", r#"{"file_path":"GEMINI.md"}"#)]);
    assert!(r[6].blocks.is_empty());
    assert!(r[6].meta["toolCalls"].contains(r#""status":"success""#));
    assert_eq!(r[7].role, Role::Tool);
    assert_eq!(r[7].blocks, [Block::tool_result("read_file_1", "read_file", false, CJK)]);
    assert_eq!((r[8].role, r[8].blocks.as_slice()), (Role::System, &[Block::text("Request cancelled.")][..]));
    assert_eq!((r[9].meta["$rewindTo"].as_str(), r[9].meta["rewindsTo"].as_str()), ("\"m2\"", "\"m2\""));
}

#[test]
fn a_set_of_messages_adds_only_what_changed() {
    let mut lines = log();
    let mut masked = lines[6].clone();
    masked["toolCalls"][0]["result"] = json!([{"text": "<tool_output_masked>"}]);
    let summary =
        json!({"id": "m5", "timestamp": "2026-03-18T03:00:00Z", "type": "gemini", "content": "要約"});
    let checkpoint = [lines[1].clone(), masked, summary, json!({"odd": 1})];
    lines.push(json!({"$set": {"messages": checkpoint, "lastUpdated": "2026-03-18T03:00:01Z"}}));
    let parsed = parse(&jsonl(&lines));
    let session = &parsed.sessions[0];
    assert_eq!(ids(session)[10..], ["gemini:s1:10", "m2~5", "m5"]);
    let r = &session.records;
    assert_eq!(
        r[10].meta["$set"],
        r#"{"lastUpdated":"2026-03-18T03:00:01Z","messages":["m1","m2","m5",{"odd":1}]}"#
    );
    // The masked result is kept in meta, not as a second result for the same call.
    assert!(r[11].blocks.is_empty());
    assert!(r[11].meta["toolCalls"].contains("<tool_output_masked>"));
    assert_eq!(r[12].blocks, [Block::text("要約")]);
}

#[test]
fn a_torn_line_waits_and_appended_lines_keep_the_prefix() {
    let text = jsonl(&log());
    let full = parse(&text);
    for cut in 0..text.len() {
        let part = parse_transcript(&text.as_bytes()[..cut], TranscriptFormat::Gemini, "stem");
        // A line complete but for its newline is read; one cut inside waits for the rest.
        if cut > 0 && text.as_bytes()[cut - 1] != b'\n' && text.as_bytes()[cut] != b'\n' {
            assert_eq!(part.skipped.last().map(|s| &s.reason), Some(&SkipReason::Truncated), "cut at {cut}");
        }
        let (Some(short), Some(long)) = (part.sessions.first(), full.sessions.first()) else { continue };
        assert_eq!(short.name, long.name);
        assert_eq!(short.records[..], long.records[..short.records.len()], "cut at {cut}");
    }
}

/// A session's fields, with `messages`, as Gemini CLI's older whole-file JSON holds them.
fn document(messages: &[Value]) -> Value {
    json!({"sessionId": "sub-1", "projectHash": "ph", "startTime": "2026-03-18T02:37:50.007Z",
        "lastUpdated": "2026-03-18T02:47:38.795Z", "kind": "subagent", "summary": "サンドボックス",
        "messages": messages})
}

#[test]
fn the_whole_file_form_and_its_log_form_give_the_same_messages() {
    let long = format!("{CJK}{EMOJI}{MARKS}").repeat(3000);
    let mut messages = log()[1..8].iter().filter(|v| v.get("id").is_some()).cloned().collect::<Vec<_>>();
    messages.drain(1..4); // the last version of m2 only, as the whole file keeps it
    messages.push(json!({"id": "m4", "timestamp": "2026-03-18T02:40:00Z", "type": "error", "content": long}));
    let pretty = serde_json::to_string_pretty(&document(&messages)).unwrap_or_default();
    let parsed = parse(&format!("\u{feff}{pretty}"));
    assert!(parsed.skipped.is_empty());
    assert_eq!((parsed.recognised, parsed.unrecognised), (5, 0));
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "sub-1");
    assert_eq!(ids(session)[..5], ["m1", "m2", "m2/result", "m3", "m4"]);
    assert_eq!(session.records[4].blocks, [Block::text(long)]);
    let info = &session.records[5];
    assert!(info.entry_id.starts_with("gemini:sub-1:session:"));
    assert_eq!(
        (info.meta["kind"].as_str(), info.meta["summary"].as_str()),
        ("\"subagent\"", "\"サンドボックス\"")
    );
    // Gemini CLI's migration to the log: the metadata line, then each message.
    let mut log_form = vec![document(&[])];
    log_form[0].as_object_mut().map(|m| m.remove("messages"));
    log_form.extend(messages.iter().cloned());
    let from_log = parse(&jsonl(&log_form));
    assert_eq!(from_log.sessions[0].name, "sub-1");
    assert_eq!(from_log.sessions[0].records[1..], session.records[..5]);
    // The file rewritten with one more message: the same records, the new one, a new info.
    messages.push(json!({"id": "m6", "timestamp": "2026-03-18T02:41:00Z", "type": "user",
            "content": "続けて"}));
    let grown = parse(&document(&messages).to_string());
    assert_eq!(grown.sessions[0].records[..5], session.records[..5]);
    assert_eq!(ids(&grown.sessions[0])[5], "m6");
}

#[test]
fn bad_lines_and_documents_are_reported() {
    let text = "{\"sessionId\":\"s\",\"projectHash\":\"p\"}\nnot json\n[1]\n{\"other\":1}\n\
                {\"id\":\"x\",\"type\":\"compression\"}\n{\"id\":\"y\",\"type\":\"user\",\"content\":\"h";
    let parsed = parse(text);
    let skipped: Vec<String> = parsed.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(
        skipped,
        [
            "line 2: not JSON (expected ident at column 2)",
            "line 6: truncated (the file ends inside this line)"
        ]
    );
    assert_eq!((parsed.recognised, parsed.unrecognised), (1, 3));
    assert_eq!(ids(&parsed.sessions[0]), ["gemini:s:1", "gemini:s:3", "gemini:s:4", "x"]);
    let cut = serde_json::to_string_pretty(&document(&log()[1..2])).unwrap_or_default();
    let parsed = parse_transcript(&cut.as_bytes()[..cut.len() - 20], TranscriptFormat::Gemini, "f");
    assert!(parsed.sessions.is_empty());
    assert_eq!(parsed.skipped[0].reason, SkipReason::Truncated);
    let options = ParseOptions { max_document_bytes: 8, ..ParseOptions::default() };
    let too_large = super::parse(cut.as_bytes(), "f", &options);
    assert!(matches!(too_large.skipped[0].reason, SkipReason::TooLarge { limit: 8, .. }));
}

/// The opening of a session file Gemini CLI was rewriting (its keys in the order it writes them).
const CUT: &str =
    "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"ph\",\n  \"messages\": [\n    {\n      \"id\": \"m";

#[test]
fn detection_tells_gemini_from_claude_and_codex() {
    let log = jsonl(&log());
    assert_eq!(detect_format(log.as_bytes()), Some(TranscriptFormat::Gemini));
    let pretty = serde_json::to_string_pretty(&document(&[])).unwrap_or_default();
    for text in [format!("\u{feff}{pretty}"), document(&[]).to_string(), CUT.to_owned()] {
        assert_eq!(detect_format(text.as_bytes()), Some(TranscriptFormat::Gemini), "{text}");
    }
    let object = |value: Value| value.as_object().cloned().unwrap_or_default();
    let claude = json!({"type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "s1",
        "timestamp": "2026-01-02T03:04:05Z", "message": {"role": "user", "content": "hi"}});
    let codex = json!({"timestamp": "t", "type": "response_item", "payload": {"type": "message"}});
    assert!(!is_gemini_line(&object(claude.clone())));
    assert!(!is_gemini_line(&object(codex)));
    assert!(!is_gemini_line(&object(json!({"id": "m", "type": "user", "timestamp": "t", "sessionId": "s"}))));
    assert!(is_gemini_line(&object(json!({"id": "m", "type": "gemini", "timestamp": "t", "content": ""}))));
    assert_eq!(detect_format(format!("{claude}\n").as_bytes()), Some(TranscriptFormat::Claude));
    assert!(!is_gemini_document(br#"{"sessionId": "s", "messages": [{"type": "assistant"}]}"#));
    assert!(!is_gemini_document(b"{\"info\": {}, \"messages\": []}"));
}
