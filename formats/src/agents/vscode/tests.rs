//! The VS Code chat importer on a session as a whole document and as a change log that builds
//! the same state, and detection against look-alikes.

use super::super::{detect_format, parse_transcript, TranscriptFormat};
use annal_engine::{Block, Role};

const REQUEST: &str = r#"{"requestId":"request_1","timestamp":1764496800000,"message":{"text":"fix the 解析器\u3000🦀","parts":[]},"variableData":{"variables":[]},"response":[{"kind":"thinking","value":"look first"},{"value":"Reading it.","supportThemeIcons":false},{"kind":"toolInvocationSerialized","toolId":"copilot_readFile","toolCallId":"t1","invocationMessage":{"value":"Reading a.rs"},"pastTenseMessage":{"value":"Read a.rs"},"isComplete":true,"resultDetails":{"input":"{\"filePath\":\"/src/a.rs\"}","output":[{"type":"embed","value":"fn main() {}"}]}},{"kind":"codeblockUri","uri":{"path":"/src/a.rs"}}],"result":{"timings":{"totalElapsed":1200}},"modelId":"copilot/claude-sonnet-4.5"}"#;

fn document(requests: &str) -> String {
    format!(
        "{{\n  \"version\": 3,\n  \"requesterUsername\": \"u\",\n  \"responderUsername\": \"GitHub Copilot\",\n  \"sessionId\": \"8e1f\",\n  \"creationDate\": 1764496800000,\n  \"requests\": [{requests}]\n}}\n"
    )
}

#[test]
fn each_request_becomes_its_message_and_its_response() {
    let text = document(REQUEST);
    assert_eq!(detect_format(text.as_bytes()), Some(TranscriptFormat::VsCodeChat));
    let parsed = parse_transcript(text.as_bytes(), TranscriptFormat::VsCodeChat, "x");
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    assert_eq!((parsed.recognised, parsed.unrecognised), (2, 0));
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "8e1f");
    let records = &session.records;
    let ids: Vec<&str> = records.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!(ids, ["vscode:8e1f:request_1", "vscode:8e1f:request_1/response", "vscode:8e1f:session"]);
    assert_eq!(records[0].role, Role::User);
    assert_eq!(records[0].blocks, [Block::Text { text: "fix the 解析器\u{3000}🦀".into() }]);
    assert_eq!(records[0].timestamp.as_deref(), Some("2025-11-30T10:00:00.000Z"));
    assert_eq!(records[1].role, Role::Assistant);
    assert_eq!(
        records[1].blocks,
        [
            Block::Thinking { text: "look first".into() },
            Block::Text { text: "Reading it.".into() },
            Block::ToolCall {
                call_id: "t1".into(),
                tool: "copilot_readFile".into(),
                input: r#"{"filePath":"/src/a.rs"}"#.into(),
                target: String::new()
            },
            Block::ToolResult {
                call_id: "t1".into(),
                tool: "copilot_readFile".into(),
                is_error: false,
                output: "fn main() {}".into()
            },
        ]
    );
    assert!(records[1].meta["responseExtra"].contains("codeblockUri"));
    assert!(records[1].meta["result"].contains("totalElapsed"));
    assert_eq!(records[2].meta["responderUsername"], "\"GitHub Copilot\"");
}

#[test]
fn a_change_log_replays_to_the_same_records() {
    let empty = document("");
    let first: serde_json::Value = serde_json::from_str(&empty).unwrap_or_default();
    let request: serde_json::Value = serde_json::from_str(REQUEST).unwrap_or_default();
    let mut streaming = request.clone();
    streaming["response"] = serde_json::json!([]);
    let log = [
        serde_json::json!({"kind": 0, "v": first}),
        serde_json::json!({"kind": 2, "k": ["requests"], "v": [streaming]}),
        serde_json::json!({"kind": 1, "k": ["requests", 0, "response"], "v": request["response"]}),
        serde_json::json!({"kind": 1, "k": ["customTitle"], "v": "Parser fix"}),
        serde_json::json!({"kind": 3, "k": ["customTitle"]}),
    ]
    .iter()
    .map(|change| format!("{change}\n"))
    .collect::<String>();
    assert_eq!(detect_format(log.as_bytes()), Some(TranscriptFormat::VsCodeChat));
    let replayed = parse_transcript(log.as_bytes(), TranscriptFormat::VsCodeChat, "x");
    assert!(replayed.skipped.is_empty(), "{:?}", replayed.skipped);
    let whole = parse_transcript(document(REQUEST).as_bytes(), TranscriptFormat::VsCodeChat, "x");
    assert_eq!(replayed.sessions[0].records, whole.sessions[0].records);
}

#[test]
fn a_change_that_does_not_fit_is_reported_and_the_rest_applied() {
    let first: serde_json::Value = serde_json::from_str(&document("")).unwrap_or_default();
    let request: serde_json::Value = serde_json::from_str(REQUEST).unwrap_or_default();
    let log = [
        serde_json::json!({"kind": 0, "v": first}),
        serde_json::json!({"kind": 1, "k": ["requests", 7, "response"], "v": []}),
        serde_json::json!({"kind": 9}),
        serde_json::json!({"kind": 2, "k": ["requests"], "v": [request]}),
    ]
    .iter()
    .map(|change| format!("{change}\n"))
    .collect::<String>();
    let parsed = parse_transcript(log.as_bytes(), TranscriptFormat::VsCodeChat, "x");
    let lines: Vec<usize> = parsed.skipped.iter().map(|s| s.line).collect();
    assert_eq!(lines, [2, 3]);
    assert_eq!(parsed.sessions[0].records.len(), 3);
}

#[test]
fn look_alikes_are_not_chat_sessions() {
    let others = [
        r#"{"sessionId":"s","title":"t","workspaceDirectory":"/w","history":[]}"#,
        r#"{"kind":0,"v":{"sessionId":"s"}}"#,
        r#"{"type":"session","version":3,"id":"p1","timestamp":"2026-11-30T10:00:00.000Z","cwd":"/src"}"#,
    ];
    for other in others {
        assert_ne!(detect_format(other.as_bytes()), Some(TranscriptFormat::VsCodeChat), "{other}");
        let parsed = parse_transcript(other.as_bytes(), TranscriptFormat::VsCodeChat, "s");
        assert!(parsed.record_count() == 0 || parsed.unrecognised > parsed.recognised, "{other}");
    }
}

#[test]
fn a_log_of_another_shape_reports_its_skips_in_file_order() {
    let log = "{\"kind\":0,\"v\":{\"title\":\"没有\u{3000}🦀\"}}\n{\"kind\":1,\"k\":[\"requests\",0],\"v\":1}\n\"\u{1}\"\n";
    let parsed = parse_transcript(log.as_bytes(), TranscriptFormat::VsCodeChat, "x");
    let lines: Vec<usize> = parsed.skipped.iter().map(|s| s.line).collect();
    assert_eq!(lines, [1, 2, 3], "{:?}", parsed.skipped);
}
