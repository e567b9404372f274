//! The Pi importer on lines shaped as Pi's session manager writes them (version 3 with ids and
//! parents, and the older header without them), and its detection against look-alikes.

use super::super::{detect_format, parse_transcript, TranscriptFormat};
use annal_engine::{Block, Role};

const SESSION: &str = r#"{"type":"session","version":3,"id":"7d3f0c1e-5b9a-4c1e-9d7e-2f1a3b4c5d6e","timestamp":"2026-11-30T10:00:00.000Z","cwd":"/src/app"}
{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-11-30T10:00:01.000Z","message":{"role":"user","content":"fix the 解析器\u3000🦀 please","timestamp":1764496801000}}
{"type":"message","id":"b2c3d4e5","parentId":"a1b2c3d4","timestamp":"2026-11-30T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"look first","thinkingSignature":"sig"},{"type":"text","text":"Reading it."},{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"src/parse.rs"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":10,"output":5},"stopReason":"toolUse","timestamp":1764496802000}}
{"type":"message","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":"2026-11-30T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"fn parse() {}"},{"type":"image","data":"aGk=","mimeType":"image/png"}],"isError":false,"timestamp":1764496803000}}
{"type":"message","id":"d4e5f6a7","parentId":"c3d4e5f6","timestamp":"2026-11-30T10:00:04.000Z","message":{"role":"bashExecution","command":"cargo test","output":"1 failed","exitCode":101,"cancelled":false,"truncated":false,"timestamp":1764496804000}}
{"type":"model_change","id":"e5f6a7b8","parentId":"d4e5f6a7","timestamp":"2026-11-30T10:00:05.000Z","provider":"openai","modelId":"gpt-5"}
{"type":"compaction","id":"f6a7b8c9","parentId":"e5f6a7b8","timestamp":"2026-11-30T10:00:06.000Z","summary":"The user asked to fix the parser; tests fail.","firstKeptEntryId":"c3d4e5f6","tokensBefore":51234}
{"type":"branch_summary","id":"a7b8c9d0","parentId":"a1b2c3d4","timestamp":"2026-11-30T10:00:07.000Z","fromId":"f6a7b8c9","summary":"Abandoned: reading first."}
"#;

#[test]
fn each_entry_becomes_a_record() {
    assert_eq!(detect_format(SESSION.as_bytes()), Some(TranscriptFormat::Pi));
    let parsed = parse_transcript(SESSION.as_bytes(), TranscriptFormat::Pi, "2026-11-30T10-00-00-000Z_x");
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    assert_eq!((parsed.recognised, parsed.unrecognised), (8, 0));
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "7d3f0c1e-5b9a-4c1e-9d7e-2f1a3b4c5d6e");
    let records = &session.records;
    assert_eq!(records.len(), 8);
    assert_eq!(records[0].role, Role::System);
    assert_eq!(records[0].entry_id, "pi:7d3f0c1e-5b9a-4c1e-9d7e-2f1a3b4c5d6e:1");
    assert_eq!(records[0].meta["cwd"], "\"/src/app\"");
    assert_eq!(records[1].entry_id, "pi:7d3f0c1e-5b9a-4c1e-9d7e-2f1a3b4c5d6e/a1b2c3d4");
    assert_eq!(records[1].role, Role::User);
    assert_eq!(records[1].blocks, [Block::Text { text: "fix the 解析器\u{3000}🦀 please".into() }]);
    assert_eq!(records[1].timestamp.as_deref(), Some("2026-11-30T10:00:01.000Z"));
    assert_eq!(records[2].role, Role::Assistant);
    assert_eq!(
        records[2].blocks,
        [
            Block::Thinking { text: "look first".into() },
            Block::Text { text: "Reading it.".into() },
            Block::ToolCall {
                call_id: "call_1".into(),
                tool: "read".into(),
                input: r#"{"path":"src/parse.rs"}"#.into(),
                target: String::new()
            },
        ]
    );
    assert!(records[2].meta["message"].contains("\"model\":\"claude-opus-4-5\""));
    assert!(records[2].meta["contentExtra"].contains("\"thinkingSignature\":\"sig\""));
    assert_eq!(records[2].meta["parentId"], "\"a1b2c3d4\"");
    assert_eq!(records[3].role, Role::Tool);
    assert_eq!(
        records[3].blocks,
        [
            Block::ToolResult {
                call_id: "call_1".into(),
                tool: "read".into(),
                is_error: false,
                output: "fn parse() {}".into()
            },
            Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() },
        ]
    );
    assert_eq!(records[4].role, Role::Tool);
    assert!(
        matches!(&records[4].blocks[0], Block::ToolCall { tool, input, .. } if tool == "bash" && input == r#"{"command":"cargo test"}"#)
    );
    assert!(
        matches!(&records[4].blocks[1], Block::ToolResult { is_error: true, output, .. } if output == "1 failed")
    );
    assert_eq!(records[5].role, Role::System);
    assert!(records[5].blocks.is_empty());
    assert_eq!(records[5].meta["modelId"], "\"gpt-5\"");
    assert_eq!(
        records[6].blocks,
        [Block::Text { text: "The user asked to fix the parser; tests fail.".into() }]
    );
    assert_eq!(records[6].meta["firstKeptEntryId"], "\"c3d4e5f6\"");
    assert_eq!(records[6].meta["type"], "\"compaction\"");
    assert_eq!(records[7].blocks, [Block::Text { text: "Abandoned: reading first.".into() }]);
}

#[test]
fn a_grown_file_parses_to_the_same_records_and_more() {
    let lines: Vec<&str> = SESSION.lines().collect();
    let first = parse_transcript(lines[..4].join("\n").as_bytes(), TranscriptFormat::Pi, "s");
    let whole = parse_transcript(SESSION.as_bytes(), TranscriptFormat::Pi, "s");
    assert_eq!(first.sessions[0].records[..], whole.sessions[0].records[..4]);
}

#[test]
fn the_older_header_without_ids_is_read_too() {
    let old = r#"{"type":"session","id":"ffae836b","timestamp":"2025-12-09T00:53:29.825Z","cwd":"/w","provider":"anthropic","modelId":"claude-opus-4-5","thinkingLevel":"off"}
{"type":"message","timestamp":"2025-12-08T22:41:05.306Z","message":{"role":"user","content":[{"type":"text","text":"alright"}],"timestamp":1765233665292}}
{"type":"thinking_level_change","timestamp":"2025-12-08T22:41:06.000Z","thinkingLevel":"high"}
"#;
    assert_eq!(detect_format(old.as_bytes()), Some(TranscriptFormat::Pi));
    let parsed = parse_transcript(old.as_bytes(), TranscriptFormat::Pi, "s");
    let ids: Vec<&str> = parsed.sessions[0].records.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!(ids, ["pi:ffae836b:1", "pi:ffae836b:2", "pi:ffae836b:3"]);
    assert_eq!(parsed.sessions[0].records[1].blocks, [Block::Text { text: "alright".into() }]);
}

#[test]
fn look_alikes_are_not_pi() {
    // A Codex rollout's first line, an older rollout's bare message, a Claude Code line.
    let others = [
        r#"{"timestamp":"2026-11-30T10:00:00Z","type":"session_meta","payload":{"id":"c1","cwd":"/src","timestamp":"2026-11-30T10:00:00Z"}}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#,
        r#"{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-11-30T10:00:00Z","message":{"role":"user","content":"hi"}}"#,
    ];
    for other in others {
        assert_ne!(detect_format(other.as_bytes()), Some(TranscriptFormat::Pi), "{other}");
        assert_eq!(parse_transcript(other.as_bytes(), TranscriptFormat::Pi, "s").recognised, 0, "{other}");
    }
    // And Pi's lines are no older rollout's.
    let codex = parse_transcript(SESSION.as_bytes(), TranscriptFormat::Codex, "s");
    assert_eq!(codex.recognised, 0);
}
