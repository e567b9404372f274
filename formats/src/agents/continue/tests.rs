//! The Continue importer on sessions shaped as Continue's history manager saves them, a save
//! that grows the history, and detection against look-alikes.

use super::super::{detect_format, parse_transcript, TranscriptFormat};
use annal_engine::{Block, Role};

const SESSION: &str = r#"{
  "sessionId": "9d1c7f0e-2a3b-4c5d-8e9f-0a1b2c3d4e5f",
  "title": "Fix the parser",
  "workspaceDirectory": "file:///src/app",
  "history": [
    {"message": {"role": "user", "content": [{"type": "text", "text": "fix the 解析器\u3000🦀"}, {"type": "imageUrl", "imageUrl": {"url": "data:image/png;base64,aGk="}}]}, "contextItems": []},
    {"message": {"role": "thinking", "content": "look first", "signature": "sig"}, "contextItems": []},
    {"message": {"role": "assistant", "content": "Reading it.", "toolCalls": [{"id": "t1", "type": "function", "function": {"name": "read_file", "arguments": "{\"filepath\":\"src/a.rs\"}"}}]}, "contextItems": [], "reasoning": {"active": false, "text": "the file first", "startAt": 1}, "toolCallStates": [{"toolCallId": "t1", "status": "done"}]},
    {"message": {"role": "tool", "content": "fn main() {}", "toolCallId": "t1"}, "contextItems": []},
    {"message": {"role": "assistant", "content": "Done."}, "contextItems": [], "conversationSummary": "The user asked for a fix."}
  ],
  "mode": "agent",
  "chatModelTitle": "Claude"
}
"#;

#[test]
fn each_history_item_becomes_a_record() {
    assert_eq!(detect_format(SESSION.as_bytes()), Some(TranscriptFormat::Continue));
    let parsed = parse_transcript(SESSION.as_bytes(), TranscriptFormat::Continue, "x");
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    assert_eq!((parsed.recognised, parsed.unrecognised), (6, 0));
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "9d1c7f0e-2a3b-4c5d-8e9f-0a1b2c3d4e5f");
    let records = &session.records;
    assert_eq!(records.len(), 6);
    assert_eq!(records[0].entry_id, "continue:9d1c7f0e-2a3b-4c5d-8e9f-0a1b2c3d4e5f:1");
    assert_eq!(records[0].role, Role::User);
    assert_eq!(
        records[0].blocks,
        [
            Block::Text { text: "fix the 解析器\u{3000}🦀".into() },
            Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() }
        ]
    );
    assert_eq!(
        (records[1].role, &records[1].blocks[..]),
        (Role::Assistant, &[Block::Thinking { text: "look first".into() }][..])
    );
    assert_eq!(
        records[2].blocks,
        [
            Block::Thinking { text: "the file first".into() },
            Block::Text { text: "Reading it.".into() },
            Block::ToolCall {
                call_id: "t1".into(),
                tool: "read_file".into(),
                input: r#"{"filepath":"src/a.rs"}"#.into(),
                target: String::new()
            },
        ]
    );
    assert!(records[2].meta["toolCallStates"].contains("\"done\""));
    assert_eq!(
        records[3].blocks,
        [Block::ToolResult {
            call_id: "t1".into(),
            tool: "read_file".into(),
            is_error: false,
            output: "fn main() {}".into()
        }]
    );
    assert_eq!(records[4].meta["conversationSummary"], "\"The user asked for a fix.\"");
    assert_eq!(records[5].role, Role::System);
    assert!(records[5].entry_id.starts_with("continue:9d1c7f0e-2a3b-4c5d-8e9f-0a1b2c3d4e5f:session:"));
    assert_eq!(records[5].meta["title"], "\"Fix the parser\"");
}

#[test]
fn a_grown_history_keeps_the_records_of_the_items_before() {
    let shorter = SESSION.replace(
        ",\n    {\"message\": {\"role\": \"assistant\", \"content\": \"Done.\"}, \"contextItems\": [], \"conversationSummary\": \"The user asked for a fix.\"}",
        "",
    );
    let before = parse_transcript(shorter.as_bytes(), TranscriptFormat::Continue, "x");
    let after = parse_transcript(SESSION.as_bytes(), TranscriptFormat::Continue, "x");
    assert_eq!(before.sessions[0].records.len(), 5);
    assert_eq!(before.sessions[0].records[..4], after.sessions[0].records[..4]);
}

#[test]
fn look_alikes_are_not_continue_sessions() {
    // A Gemini CLI document also names a sessionId; an index of sessions is an array.
    let gemini = r#"{"sessionId":"g","projectHash":"p","startTime":"2026-11-30T10:00:00Z","lastUpdated":"2026-11-30T10:00:00Z","messages":[]}"#;
    let index =
        r#"[{"sessionId":"s","title":"t","dateCreated":"1764496800000","workspaceDirectory":"/src"}]"#;
    for other in [gemini, index] {
        assert_ne!(detect_format(other.as_bytes()), Some(TranscriptFormat::Continue), "{other}");
        let parsed = parse_transcript(other.as_bytes(), TranscriptFormat::Continue, "s");
        assert!(parsed.record_count() == 0 || parsed.unrecognised > parsed.recognised, "{other}");
    }
}

#[test]
fn call_states_give_the_cn_cli_results_and_mark_failures() {
    // As the `cn` CLI saves a session: no `tool` items, each output in its call's state; and an
    // editor's session, whose `tool` item answers a call that failed.
    let text = r#"{"sessionId": "c1", "title": "t", "history": [
      {"message": {"role": "assistant", "content": "", "toolCalls": [{"id": "a", "type": "function", "function": {"name": "Bash", "arguments": "{}"}}, {"id": "b", "type": "function", "function": {"name": "Read", "arguments": "{}"}}]}, "contextItems": [],
       "toolCallStates": [{"toolCallId": "a", "status": "errored", "output": [{"content": "exit 101: 解析器 🦀", "name": "Tool Result", "description": "Tool execution result"}]},
                          {"toolCallId": "b", "status": "done", "output": [{"content": "fn main() {}", "name": "Tool Result", "description": "Tool execution result"}]}]},
      {"message": {"role": "assistant", "content": [{"type": "text", "text": ""}], "toolCalls": [{"id": "c", "type": "function", "function": {"name": "Edit", "arguments": "{}"}}]}, "contextItems": [],
       "toolCallStates": [{"toolCallId": "c", "status": "canceled", "output": [{"content": "interrupted"}]}]},
      {"message": {"role": "tool", "content": "interrupted", "toolCallId": "c"}, "contextItems": []}
    ]}"#;
    let parsed = parse_transcript(text.as_bytes(), TranscriptFormat::Continue, "x");
    let records = &parsed.sessions[0].records;
    let ids: Vec<&str> = records.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!(ids[..4], ["continue:c1:1", "continue:c1:1/result", "continue:c1:2", "continue:c1:3"]);
    assert!(records.iter().all(|r| !r.blocks.contains(&Block::Text { text: String::new() })));
    assert_eq!(records[1].role, Role::Tool);
    let result = |call: &str, tool: &str, is_error: bool, output: &str| Block::ToolResult {
        call_id: call.into(),
        tool: tool.into(),
        is_error,
        output: output.into(),
    };
    assert_eq!(
        records[1].blocks,
        [result("a", "Bash", true, "exit 101: 解析器 🦀"), result("b", "Read", false, "fn main() {}")]
    );
    // The outputs are not kept twice; the rest of the states stays.
    assert!(!records[0].meta["toolCallStates"].contains("Tool Result"));
    assert!(records[0].meta["toolCallStates"].contains("\"errored\""));
    // A call a `tool` item answers gets no second result; the item's result is marked failed.
    // (Results carry their call's tool name, as the session builder gives every result.)
    assert_eq!(records[2].blocks.len(), 1);
    assert_eq!(records[3].blocks, [result("c", "Edit", true, "interrupted")]);
}
