//! The Qwen Code importer on records shaped as its chat recording service writes them, a
//! sub-agent's file, and detection against Claude Code's look-alike lines.

use super::super::{detect_format, parse_transcript, TranscriptFormat};
use annal_engine::{Block, Role};

const CHAT: &str = r#"{"uuid":"q1","parentUuid":null,"sessionId":"s-1","timestamp":"2026-11-30T10:00:00.000Z","type":"user","cwd":"/src","version":"0.5.0","message":{"role":"user","parts":[{"text":"fix the 解析器\u3000🦀"},{"inlineData":{"mimeType":"image/png","data":"aGk="}}]}}
{"uuid":"q2","parentUuid":"q1","sessionId":"s-1","timestamp":"2026-11-30T10:00:01.000Z","type":"assistant","cwd":"/src","version":"0.5.0","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"look first","thought":true},{"text":"Reading."},{"functionCall":{"id":"c1","name":"read_file","args":{"absolute_path":"/src/a.rs"}}}]},"usageMetadata":{"promptTokenCount":10}}
{"uuid":"q3","parentUuid":"q2","sessionId":"s-1","timestamp":"2026-11-30T10:00:02.000Z","type":"tool_result","cwd":"/src","version":"0.5.0","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"fn main() {}"}}}]},"toolCallResult":{"callId":"c1","status":"success"}}
{"uuid":"q4","parentUuid":"q3","sessionId":"s-1","timestamp":"2026-11-30T10:00:03.000Z","type":"tool_result","cwd":"/src","version":"0.5.0","message":{"role":"user","parts":[{"functionResponse":{"id":"c2","name":"run_shell_command","response":{"error":"exit 1"}}}]},"toolCallResult":{"callId":"c2","status":"error"}}
{"uuid":"q5","parentUuid":"q4","sessionId":"s-1","timestamp":"2026-11-30T10:00:04.000Z","type":"system","subtype":"chat_compression","cwd":"/src","version":"0.5.0","systemPayload":{"summary":"The user wants the parser fixed.","info":{"originalTokenCount":9000}}}
"#;

#[test]
fn each_record_becomes_a_record() {
    assert_eq!(detect_format(CHAT.as_bytes()), Some(TranscriptFormat::Qwen));
    let parsed = parse_transcript(CHAT.as_bytes(), TranscriptFormat::Qwen, "s-1");
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    assert_eq!((parsed.recognised, parsed.unrecognised), (5, 0));
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "s-1");
    let records = &session.records;
    let ids: Vec<&str> = records.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!(ids, ["q1", "q2", "q3", "q4", "q5"]);
    assert_eq!(records[0].role, Role::User);
    assert_eq!(
        records[0].blocks,
        [
            Block::Text { text: "fix the 解析器\u{3000}🦀".into() },
            Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() }
        ]
    );
    assert_eq!(records[1].role, Role::Assistant);
    assert_eq!(
        records[1].blocks,
        [
            Block::Thinking { text: "look first".into() },
            Block::Text { text: "Reading.".into() },
            Block::ToolCall {
                call_id: "c1".into(),
                tool: "read_file".into(),
                input: r#"{"absolute_path":"/src/a.rs"}"#.into(),
                target: String::new()
            },
        ]
    );
    assert_eq!(records[1].meta["model"], "\"qwen3-coder-plus\"");
    assert_eq!(records[2].role, Role::Tool);
    assert_eq!(
        records[2].blocks,
        [Block::ToolResult {
            call_id: "c1".into(),
            tool: "read_file".into(),
            is_error: false,
            output: "fn main() {}".into()
        }]
    );
    assert!(
        matches!(&records[3].blocks[0], Block::ToolResult { is_error: true, output, .. } if output == "exit 1")
    );
    assert_eq!(records[4].role, Role::System);
    assert_eq!(records[4].blocks, [Block::Text { text: "The user wants the parser fixed.".into() }]);
    assert!(records[4].meta["systemPayload"].contains("originalTokenCount"));
}

#[test]
fn a_sub_agent_is_a_session_of_its_own() {
    let line = r#"{"uuid":"a1","parentUuid":null,"sessionId":"s-1","timestamp":"2026-11-30T10:00:00.000Z","type":"user","cwd":"/src","version":"0.5.0","isSidechain":true,"agentId":"x9","agentName":"explorer","message":{"role":"user","parts":[{"text":"look it up"}]}}"#;
    let parsed = parse_transcript(line.as_bytes(), TranscriptFormat::Qwen, "agent-x9");
    assert_eq!(parsed.sessions[0].name, "s-1/agent-x9");
    assert_eq!(parsed.sessions[0].records[0].meta["parentSession"], "\"s-1\"");
}

#[test]
fn claude_code_lines_are_not_qwen() {
    let claude = r#"{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-11-30T10:00:00Z","message":{"role":"user","content":"hi"}}"#;
    assert_eq!(detect_format(claude.as_bytes()), Some(TranscriptFormat::Claude));
    assert_eq!(parse_transcript(claude.as_bytes(), TranscriptFormat::Qwen, "s").recognised, 0);
    assert_eq!(parse_transcript(CHAT.as_bytes(), TranscriptFormat::Claude, "s").recognised, 0);
}
