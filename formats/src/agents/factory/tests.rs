//! The Droid importer on lines shaped as Droid writes them (as the public readers of its
//! sessions quote them), and its detection against Pi's look-alike envelope.

use super::super::{detect_format, parse_transcript, TranscriptFormat};
use annal_engine::{Block, Role};

const SESSION: &str = r#"{"type":"session_start","id":"0b34cbcb-108c-4800-b68e-af7093c8cae9","title":"fix the parser","sessionTitle":"fix the parser","owner":"u","version":2,"cwd":"/src/app"}
{"type":"message","id":"m1","timestamp":"2026-11-30T10:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"fix the 解析器\u3000🦀"}]}}
{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-11-30T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Run it.","signature":"s"},{"type":"tool_use","id":"tu1","name":"Execute","input":{"command":"ls /nope"}}]}}
{"type":"message","id":"m3","parentId":"m2","timestamp":"2026-11-30T10:00:02.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","is_error":true,"content":"ls: /nope: No such file or directory"}]}}
{"type":"todo_state","id":"t1","timestamp":"2026-11-30T10:00:03.000Z","todos":{"todos":[{"id":"a","content":"fix","status":"in_progress"}]},"messageIndex":2}
{"type":"compaction_state","id":"c1","timestamp":"2026-11-30T10:00:04.000Z","summaryText":"We listed /nope.","summaryTokens":5,"anchorMessage":{"id":"m2","index":1},"removedCount":2}
{"type":"message","id":"m4","timestamp":"2026-11-30T10:00:05.000Z","message":{"role":"assistant","content":"Done."}}
"#;

#[test]
fn each_line_becomes_a_record() {
    assert_eq!(detect_format(SESSION.as_bytes()), Some(TranscriptFormat::Factory));
    let parsed = parse_transcript(SESSION.as_bytes(), TranscriptFormat::Factory, "stem");
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    assert_eq!((parsed.recognised, parsed.unrecognised), (7, 0));
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "0b34cbcb-108c-4800-b68e-af7093c8cae9");
    let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
    let start = "factory:0b34cbcb-108c-4800-b68e-af7093c8cae9:1";
    assert_eq!(ids[0], start);
    assert_eq!(ids[1..4], ["m1", "m2", "m3"]);
    assert_eq!(ids[6], "m4");
    let roles: Vec<Role> = session.records.iter().map(|r| r.role).collect();
    use Role::*;
    assert_eq!(roles, [System, User, Assistant, Tool, System, System, Assistant]);
    let records = &session.records;
    assert_eq!(records[0].meta["cwd"], "\"/src/app\"");
    assert_eq!(records[1].blocks, [Block::Text { text: "fix the 解析器\u{3000}🦀".into() }]);
    assert_eq!(records[1].timestamp.as_deref(), Some("2026-11-30T10:00:00.000Z"));
    assert_eq!(records[2].blocks[0], Block::Thinking { text: "Run it.".into() });
    assert_eq!(
        records[2].blocks[1],
        Block::ToolCall {
            call_id: "tu1".into(),
            tool: "Execute".into(),
            input: r#"{"command":"ls /nope"}"#.into(),
            target: String::new()
        }
    );
    assert_eq!(records[2].meta["parentId"], "\"m1\"");
    assert_eq!(
        records[3].blocks,
        [Block::ToolResult {
            call_id: "tu1".into(),
            tool: "Execute".into(),
            is_error: true,
            output: "ls: /nope: No such file or directory".into()
        }]
    );
    assert!(records[4].meta["todos"].contains("in_progress"));
    assert_eq!(records[5].blocks, [Block::Text { text: "We listed /nope.".into() }]);
    assert_eq!(records[5].meta["removedCount"], "2");
    assert_eq!(records[6].blocks, [Block::Text { text: "Done.".into() }]);
}

#[test]
fn a_sub_agent_names_the_session_that_called_it() {
    let start = r##"{"type":"session_start","id":"30b3","title":"# Task Tool Invocation","sessionTitle":"worker: make it","callingSessionId":"0b34","callingToolUseId":"toolu_1","version":2,"cwd":"/src"}
{"type":"message","id":"w1","timestamp":"2026-11-30T10:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"make it"}]}}
"##;
    let parsed = parse_transcript(start.as_bytes(), TranscriptFormat::Factory, "30b3");
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "30b3");
    assert!(session.records.iter().all(|r| r.meta["parentSession"] == "\"0b34\""));
}

#[test]
fn pi_and_droid_messages_are_told_apart() {
    // Pi stamps a time on each message; Droid does not.
    let pi = r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-11-30T10:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1764496801000}}"#;
    let droid = r#"{"type":"message","id":"m1","timestamp":"2026-11-30T10:00:01.000Z","message":{"role":"user","content":"hi"}}"#;
    assert_eq!(detect_format(pi.as_bytes()), Some(TranscriptFormat::Pi));
    assert_eq!(detect_format(droid.as_bytes()), Some(TranscriptFormat::Factory));
    let as_droid = parse_transcript(pi.as_bytes(), TranscriptFormat::Factory, "s");
    assert_eq!((as_droid.recognised, as_droid.unrecognised), (0, 1));
    let as_pi = parse_transcript(droid.as_bytes(), TranscriptFormat::Pi, "s");
    assert_eq!((as_pi.recognised, as_pi.unrecognised), (0, 1));
}
