//! The Cursor transcript reader on lines shaped as public readers of these files show them,
//! and its detection against look-alikes.

use super::super::{detect_format, parse_transcript, transcript_stem, TranscriptFormat};
use annal_engine::{Block, Role};

const TRANSCRIPT: &str = r#"{"role":"user","message":{"content":[{"type":"text","text":"<timestamp>Friday, May 8, 2026, 6:05 AM (UTC+5:30)</timestamp>\n<user_query>\nfix the 解析器\u3000🦀\n</user_query>"}]}}
{"role":"assistant","message":{"content":[{"type":"text","text":"**Planning**\n\nRouter first."},{"type":"tool_use","name":"ReadFile","input":{"path":"/src/router.ts","offset":1,"limit":200}}]}}
{"role":"assistant","message":{"content":[{"type":"tool_use","name":"ApplyPatch","input":"*** Begin Patch\n*** Add File: /src/health.ts\n+export function health() {}\n*** End Patch"}]}}
{"role":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}
{"type":"turn_ended","status":"success"}
{"role":"user","message":{"content":"and the tests"}}
"#;

#[test]
fn each_line_becomes_a_record() {
    assert_eq!(detect_format(TRANSCRIPT.as_bytes()), Some(TranscriptFormat::CursorTranscript));
    let parsed = parse_transcript(TRANSCRIPT.as_bytes(), TranscriptFormat::CursorTranscript, "4e1f");
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    assert_eq!((parsed.recognised, parsed.unrecognised), (6, 0));
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "4e1f/transcript");
    let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
    let expected: Vec<String> = (1..=6).map(|line| format!("cursor:4e1f/transcript:{line}")).collect();
    assert_eq!(ids, expected);
    let records = &session.records;
    assert_eq!(records[0].role, Role::User);
    assert!(
        matches!(&records[0].blocks[0], Block::Text { text } if text.contains("fix the 解析器\u{3000}🦀"))
    );
    assert_eq!(records[1].role, Role::Assistant);
    assert_eq!(records[1].blocks[0], Block::Text { text: "**Planning**\n\nRouter first.".into() });
    assert!(matches!(&records[1].blocks[1], Block::ToolCall { call_id, tool, input, .. }
        if call_id.is_empty() && tool == "ReadFile" && input.contains("\"path\":\"/src/router.ts\"")));
    // A patch given as text stays the text.
    assert!(
        matches!(&records[2].blocks[0], Block::ToolCall { input, .. } if input.starts_with("*** Begin Patch\n"))
    );
    assert_eq!(records[3].role, Role::Tool);
    assert_eq!((records[4].role, records[4].meta["status"].as_str()), (Role::System, "\"success\""));
    assert_eq!(records[5].blocks, [Block::Text { text: "and the tests".into() }]);

    // Grown by a line: the same records, and one more.
    let grown = format!(
        "{TRANSCRIPT}{}\n",
        r#"{"role":"assistant","message":{"content":[{"type":"text","text":"Done."}]}}"#
    );
    let again = parse_transcript(grown.as_bytes(), TranscriptFormat::CursorTranscript, "4e1f");
    assert_eq!(again.sessions[0].records[..6], records[..]);
    assert_eq!(again.sessions[0].records.len(), 7);
}

#[test]
fn a_sub_agent_names_its_parent() {
    let stem = transcript_stem(std::path::Path::new("p/agent-transcripts/4e1f/subagents/7c2d.jsonl"));
    let parsed = parse_transcript(TRANSCRIPT.as_bytes(), TranscriptFormat::CursorTranscript, &stem);
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "7c2d/transcript");
    assert_eq!(session.records[0].entry_id, "cursor:7c2d/transcript:1");
    assert!(session.records.iter().all(|r| r.meta["parentSession"] == "\"4e1f/transcript\""));
}

#[test]
fn lines_with_more_than_role_and_message_are_not_cursor_lines() {
    // Claude Code's and Pi's lines carry a message too, inside an envelope of their own.
    let claude = r#"{"type":"user","uuid":"u1","sessionId":"s1","role":"user","message":{"role":"user","content":"hi"}}"#;
    assert_ne!(detect_format(claude.as_bytes()), Some(TranscriptFormat::CursorTranscript));
    let chat = r#"{"role":"user","content":"hi"}"#;
    assert_eq!(detect_format(chat.as_bytes()), None);
    let system = r#"{"role":"system","message":{"content":"hi"}}"#;
    assert_eq!(detect_format(system.as_bytes()), None);
}
