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

/// An older CLI's session document as its `saveHistorySession` writes it (`JSON.stringify` with
/// two spaces): the model's messages and the timeline the user saw.
const LEGACY: &str = r#"{
  "sessionId": "9b1f7c2e-5d4a-4e3b-8c2d-1a0b9c8d7e6f",
  "startTime": "2025-10-04T05:36:00.000Z",
  "chatMessages": [
    {"role": "system", "content": "You are the GitHub Copilot CLI."},
    {"role": "user", "content": "fix the 解析器\u3000🦀"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "toolu_01", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]},
    {"role": "tool", "content": "a.rs", "tool_call_id": "toolu_01"}
  ],
  "timeline": [
    {"type": "user", "id": "63be8d18-0001", "timestamp": "2025-10-04T05:36:01.000Z", "text": "fix the 解析器\u3000🦀", "mentions": []},
    {"type": "tool_call_requested", "id": "63be8d18-0002", "timestamp": "2025-10-04T05:36:04.736Z", "callId": "toolu_01", "name": "bash", "toolTitle": "bash", "intentionSummary": "List the files", "arguments": {"command": "ls", "description": "List the files", "sessionId": "main", "async": false}},
    {"type": "tool_call_completed", "id": "63be8d18-0003", "timestamp": "2025-10-04T05:36:05.000Z", "callId": "toolu_01", "name": "bash", "intentionSummary": "List the files", "arguments": {"command": "ls"}, "result": {"type": "success", "log": "a.rs"}},
    {"type": "copilot", "id": "63be8d18-0004", "timestamp": "2025-10-04T05:36:06.000Z", "text": "There is one file: a.rs.", "isStreaming": false},
    {"type": "tool_call_completed", "id": "63be8d18-0005", "timestamp": "2025-10-04T05:36:07.000Z", "callId": "toolu_02", "name": "edit", "arguments": {}, "result": {"type": "rejected", "markdown": "The user rejected this."}},
    {"type": "info", "id": "63be8d18-0006", "timestamp": "2025-10-04T05:36:08.000Z", "text": "Model changed"}
  ],
  "selectedModel": "claude-sonnet-4.5"
}
"#;

#[test]
fn an_older_session_document_becomes_a_record_per_timeline_entry() {
    assert_eq!(detect_format(LEGACY.as_bytes()), Some(TranscriptFormat::Copilot));
    let one_line = serde_json::from_str::<serde_json::Value>(LEGACY).expect("JSON").to_string();
    assert_eq!(detect_format(one_line.as_bytes()), Some(TranscriptFormat::Copilot));
    let stem = "session_9b1f7c2e-5d4a-4e3b-8c2d-1a0b9c8d7e6f_1759556160000";
    let parsed = parse_transcript(LEGACY.as_bytes(), TranscriptFormat::Copilot, stem);
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    assert_eq!((parsed.recognised, parsed.unrecognised), (7, 0));
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "9b1f7c2e-5d4a-4e3b-8c2d-1a0b9c8d7e6f");
    let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!(ids[0], "copilot:9b1f7c2e-5d4a-4e3b-8c2d-1a0b9c8d7e6f:chat:1");
    assert_eq!(
        ids[1..7],
        [
            "63be8d18-0001",
            "63be8d18-0002",
            "63be8d18-0003",
            "63be8d18-0004",
            "63be8d18-0005",
            "63be8d18-0006"
        ]
    );
    assert!(ids[7].starts_with("copilot:9b1f7c2e-5d4a-4e3b-8c2d-1a0b9c8d7e6f:session:"));
    let records = &session.records;
    assert_eq!(records[0].role, Role::System);
    assert_eq!(records[0].blocks, [Block::Text { text: "You are the GitHub Copilot CLI.".into() }]);
    assert_eq!(
        (records[1].role, records[1].timestamp.as_deref()),
        (Role::User, Some("2025-10-04T05:36:01.000Z"))
    );
    assert_eq!(records[1].blocks, [Block::Text { text: "fix the 解析器\u{3000}🦀".into() }]);
    assert_eq!(records[2].role, Role::Assistant);
    assert!(matches!(&records[2].blocks[0], Block::ToolCall { call_id, tool, input, .. }
        if call_id == "toolu_01" && tool == "bash" && input.contains("\"command\":\"ls\"")));
    assert!(records[2].meta["intentionSummary"].contains("List the files"));
    assert_eq!(
        records[3].blocks,
        [Block::ToolResult {
            call_id: "toolu_01".into(),
            tool: "bash".into(),
            is_error: false,
            output: "a.rs".into()
        }]
    );
    assert_eq!(records[4].role, Role::Assistant);
    assert_eq!(records[4].blocks, [Block::Text { text: "There is one file: a.rs.".into() }]);
    assert!(
        matches!(&records[5].blocks[0], Block::ToolResult { is_error: true, output, .. } if output == "The user rejected this.")
    );
    assert_eq!(
        (records[6].role, &records[6].blocks[..]),
        (Role::System, &[Block::Text { text: "Model changed".into() }][..])
    );
    assert!(records[7].meta["selectedModel"].contains("claude-sonnet-4.5"));

    // Saved again after the reply went on: the same ids, the changed entry differs.
    let later = LEGACY.replace("There is one file: a.rs.", "There is one file: a.rs. Done.");
    let again = parse_transcript(later.as_bytes(), TranscriptFormat::Copilot, stem);
    assert_eq!(again.sessions[0].records.len(), records.len());
    assert_eq!(again.sessions[0].records[4].entry_id, records[4].entry_id);
    assert_ne!(again.sessions[0].records[4], records[4]);
}

#[test]
fn a_document_missing_a_list_is_not_an_older_session() {
    let no_timeline = r#"{"sessionId": "s", "startTime": "2025-10-04T05:36:00.000Z", "chatMessages": []}"#;
    assert_ne!(detect_format(no_timeline.as_bytes()), Some(TranscriptFormat::Copilot));
}
