//! The Cursor importer on values shaped as the editor writes them (as the public readers of
//! its database read them back).

use super::{parse_cursor_composer, CursorComposerRow};
use annal_engine::{Block, Role};

fn row(data: &str, bubbles: &[(&str, &str)]) -> CursorComposerRow {
    CursorComposerRow {
        id: "c0ffee".into(),
        data: Some(data.as_bytes().to_vec()),
        bubbles: bubbles.iter().map(|(id, json)| ((*id).to_owned(), json.as_bytes().to_vec())).collect(),
    }
}

const COMPOSER: &str = r#"{"_v":10,"composerId":"c0ffee","name":"Fix the parser","unifiedMode":"agent","createdAt":1764496800000,"lastUpdatedAt":1764496900000,"status":"completed","text":"draft being typed","fullConversationHeadersOnly":[{"bubbleId":"b1","type":1},{"bubbleId":"b2","type":2},{"bubbleId":"b3","type":2}],"subagentInfo":{"parentComposerId":"p1","subagentTypeName":"explore"}}"#;

#[test]
fn bubbles_in_the_conversations_order_with_tools_and_thinking() -> Result<(), String> {
    let bubbles = [
        (
            "b3",
            r#"{"_v":3,"type":2,"bubbleId":"b3","text":"","toolFormerData":{"tool":7,"toolCallId":"toolu_1","status":"completed","name":"read_file","rawArgs":"{\"target_file\": \"src/a.rs\"}","params":"{}","result":"{\"contents\":\"fn main() {}\"}","additionalData":{}}}"#,
        ),
        ("b1", "{\"_v\":3,\"type\":1,\"bubbleId\":\"b1\",\"createdAt\":\"2026-11-30T10:00:00.000Z\",\"text\":\"fix the 解析器\u{3000}🦀\u{1}\",\"images\":[\"data:image/png;base64,aGk=\"]}"),
        (
            "b2",
            r#"{"_v":3,"type":2,"bubbleId":"b2","text":"Reading it.","thinking":{"text":"Look first.","signature":"s"},"tokenCount":{"inputTokens":0,"outputTokens":0}}"#,
        ),
    ];
    let (session, skipped) = parse_cursor_composer(&row(COMPOSER, &bubbles))?;
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(session.name, "c0ffee");
    let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!(
        ids[..4],
        ["cursor:c0ffee:b1", "cursor:c0ffee:b2", "cursor:c0ffee:b3", "cursor:c0ffee:b3/result"]
    );
    let records = &session.records;
    assert_eq!(records[0].role, Role::User);
    assert_eq!(records[0].timestamp.as_deref(), Some("2026-11-30T10:00:00.000Z"));
    assert_eq!(
        records[0].blocks,
        [
            Block::Text { text: "fix the 解析器\u{3000}🦀\u{1}".into() },
            Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() }
        ]
    );
    assert_eq!(
        records[1].blocks,
        [Block::Thinking { text: "Look first.".into() }, Block::Text { text: "Reading it.".into() }]
    );
    assert!(records[1].meta["thinking"].contains("\"signature\":\"s\""));
    assert_eq!(
        records[2].blocks,
        [Block::ToolCall {
            call_id: "toolu_1".into(),
            tool: "read_file".into(),
            input: "{\"target_file\": \"src/a.rs\"}".into(),
            target: String::new()
        }]
    );
    assert_eq!(
        (records[3].role, &records[3].blocks[..]),
        (
            Role::Tool,
            &[Block::ToolResult {
                call_id: "toolu_1".into(),
                tool: "read_file".into(),
                is_error: false,
                output: "{\"contents\":\"fn main() {}\"}".into()
            }][..]
        )
    );
    // The conversation's steady fields, without the draft, status or order; and its parent.
    let fields = &records[4];
    assert_eq!(fields.role, Role::System);
    assert!(fields.entry_id.starts_with("cursor:c0ffee:session:"));
    assert_eq!(fields.meta["name"], "\"Fix the parser\"");
    assert!(!fields.meta.contains_key("text") && !fields.meta.contains_key("status"));
    assert!(records.iter().all(|r| r.meta["parentSession"] == "\"p1\""));
    Ok(())
}

#[test]
fn a_changed_order_or_status_keeps_the_same_records() -> Result<(), String> {
    let bubble = [("b1", r#"{"type":1,"bubbleId":"b1","text":"hi"}"#)];
    let (first, _) = parse_cursor_composer(&row(COMPOSER, &bubble))?;
    let later = COMPOSER.replace("\"completed\"", "\"generating\"").replace("draft being typed", "");
    let (second, _) = parse_cursor_composer(&row(&later, &bubble))?;
    assert_eq!(first, second);
    Ok(())
}

#[test]
fn inline_conversations_bad_bubbles_and_tool_errors() -> Result<(), String> {
    let legacy = r#"{"composerId":"c0ffee","conversation":[{"type":1,"bubbleId":"u1","text":"old 🦀"},{"type":2,"bubbleId":"a1","text":"reply"}]}"#;
    let bubbles = [
        ("x1", "{not json"),
        ("x2", "[1, 2]"),
        (
            "x3",
            r#"{"type":2,"bubbleId":"x3","toolFormerData":{"name":"run_terminal_cmd","status":"error","result":"exit 1"}}"#,
        ),
        ("x4", r#"{"type":2,"bubbleId":"x4","toolFormerData":{"additionalData":{"status":"error"}}}"#),
    ];
    let (session, skipped) = parse_cursor_composer(&row(legacy, &bubbles))?;
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(skipped[0].starts_with("bubble \"x1\": not JSON"), "{skipped:?}");
    let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!(
        ids[..5],
        [
            "cursor:c0ffee:x3",
            "cursor:c0ffee:x3/result",
            "cursor:c0ffee:x4",
            "cursor:c0ffee:u1",
            "cursor:c0ffee:a1"
        ]
    );
    let result = &session.records[1].blocks[0];
    assert!(matches!(result, Block::ToolResult { is_error: true, call_id, .. } if call_id == "x3"));
    assert!(session.records[2].blocks.is_empty());
    assert!(session.records[2].meta["toolFormerData"].contains("additionalData"));
    assert_eq!(session.records[3].blocks, [Block::Text { text: "old 🦀".into() }]);
    // A conversation value that is no object is the conversation's error.
    assert!(parse_cursor_composer(&row("[]", &[])).is_err());
    Ok(())
}
