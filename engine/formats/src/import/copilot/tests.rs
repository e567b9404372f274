//! The Copilot CLI importer on events shaped as the CLI writes them (as the Copilot Chat
//! extension reads them back), and its detection against look-alikes.

use super::super::{detect_format, parse_transcript, TranscriptFormat};
use annal_engine::{Block, Role};

const EVENTS: &str = r#"{"type":"session.start","data":{"sessionId":"5f0c2e9a-1b2c-4d3e-8f9a-0b1c2d3e4f5a","version":1,"producer":"copilot-agent","copilotVersion":"0.0.354","startTime":"2026-11-30T10:00:00.000Z","selectedModel":"claude-sonnet-4.5","context":{"cwd":"/src/app"}},"id":"e1","timestamp":"2026-11-30T10:00:00.000Z","parentId":null}
{"type":"user.message","data":{"content":"fix the 解析器\u3000🦀","attachments":[]},"id":"e2","timestamp":"2026-11-30T10:00:01.000Z","parentId":"e1"}
{"type":"assistant.turn_start","data":{"turnId":"0"},"id":"e3","timestamp":"2026-11-30T10:00:02.000Z","parentId":"e2"}
{"type":"assistant.message","data":{"messageId":"m1","content":"Reading it.","toolRequests":[{"toolCallId":"t1","name":"view","arguments":{"path":"src/a.rs"}}]},"id":"e4","timestamp":"2026-11-30T10:00:03.000Z","parentId":"e3"}
{"type":"tool.execution_start","data":{"toolCallId":"t1","toolName":"view","arguments":{"path":"src/a.rs"}},"id":"e5","timestamp":"2026-11-30T10:00:04.000Z","parentId":"e4"}
{"type":"tool.execution_complete","data":{"toolCallId":"t1","success":true,"result":{"content":"fn main() {}","detailedContent":"1. fn main() {}"}},"id":"e6","timestamp":"2026-11-30T10:00:05.000Z","parentId":"e5"}
{"type":"tool.execution_start","data":{"toolCallId":"t2","toolName":"bash","arguments":{"command":"cargo test"}},"id":"e7","timestamp":"2026-11-30T10:00:06.000Z","parentId":"e6"}
{"type":"tool.execution_complete","data":{"toolCallId":"t2","success":false,"error":{"message":"exit code 101","code":"failure"}},"id":"e8","timestamp":"2026-11-30T10:00:07.000Z","parentId":"e7"}
"#;

#[test]
fn each_event_becomes_a_record() {
    assert_eq!(detect_format(EVENTS.as_bytes()), Some(TranscriptFormat::Copilot));
    let parsed = parse_transcript(EVENTS.as_bytes(), TranscriptFormat::Copilot, "events");
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    assert_eq!((parsed.recognised, parsed.unrecognised), (8, 0));
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "5f0c2e9a-1b2c-4d3e-8f9a-0b1c2d3e4f5a");
    let records = &session.records;
    let ids: Vec<&str> = records.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!(ids, ["e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8"]);
    assert_eq!(records[0].role, Role::System);
    assert!(records[0].meta["data"].contains("\"copilotVersion\":\"0.0.354\""));
    assert_eq!(
        (records[1].role, &records[1].blocks[..]),
        (Role::User, &[Block::Text { text: "fix the 解析器\u{3000}🦀".into() }][..])
    );
    assert_eq!(records[2].role, Role::System);
    assert_eq!(records[3].blocks, [Block::Text { text: "Reading it.".into() }]);
    assert!(records[3].meta["data"].contains("toolRequests"));
    assert_eq!(
        records[4].blocks,
        [Block::ToolCall {
            call_id: "t1".into(),
            tool: "view".into(),
            input: r#"{"path":"src/a.rs"}"#.into(),
            target: String::new()
        }]
    );
    assert_eq!(
        records[5].blocks,
        [Block::ToolResult {
            call_id: "t1".into(),
            tool: "view".into(),
            is_error: false,
            output: "fn main() {}".into()
        }]
    );
    assert_eq!(records[5].role, Role::Tool);
    assert_eq!(
        records[7].blocks,
        [Block::ToolResult {
            call_id: "t2".into(),
            tool: "bash".into(),
            is_error: true,
            output: "exit code 101".into()
        }]
    );
}

#[test]
fn look_alikes_are_not_copilot_events() {
    let others = [
        r#"{"timestamp":"2026-11-30T10:00:00Z","type":"session_meta","payload":{"id":"c1","cwd":"/src"}}"#,
        r#"{"type":"session","version":3,"id":"p1","timestamp":"2026-11-30T10:00:00.000Z","cwd":"/src"}"#,
        r#"{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":"hi"}}"#,
    ];
    for other in others {
        assert_ne!(detect_format(other.as_bytes()), Some(TranscriptFormat::Copilot), "{other}");
        assert_eq!(
            parse_transcript(other.as_bytes(), TranscriptFormat::Copilot, "s").recognised,
            0,
            "{other}"
        );
    }
    for format in TranscriptFormat::ALL.into_iter().filter(|&f| f != TranscriptFormat::Copilot) {
        let parsed = parse_transcript(EVENTS.as_bytes(), format, "s");
        assert!(
            parsed.record_count() == 0 || parsed.unrecognised > parsed.recognised,
            "{format} would store it"
        );
    }
}
