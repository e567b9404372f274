//! The Kiro CLI importer on conversations shaped as its serde types write them (no renaming:
//! snake_case fields, externally tagged enums), both history entry forms.

use super::{parse_kiro_conversation, KiroConversationRow};
use annal_engine::{Block, Role};
use serde_json::json;

fn row(value: &serde_json::Value) -> KiroConversationRow {
    KiroConversationRow {
        key: "/src/app".into(),
        conversation_id: "conv-1".into(),
        value: value.to_string().into_bytes(),
    }
}

fn prompt(text: &str, at: &str) -> serde_json::Value {
    json!({"additional_context": "", "env_context": {"env_state": {"operating_system": "linux",
        "current_working_directory": "/src/app"}}, "content": {"Prompt": {"prompt": text}}, "timestamp": at,
        "images": [{"format": "Png", "source": {"Bytes": [104, 105]}}]})
}

fn conversation(history: Vec<serde_json::Value>, summary: serde_json::Value) -> serde_json::Value {
    json!({"conversation_id": "conv-1", "next_message": null, "history": history, "valid_history_range": [0, 2],
        "transcript": ["> fix it"], "tools": {}, "latest_summary": summary,
        "model_info": {"model_id": "claude-sonnet-4", "context_window_tokens": 200000}})
}

#[test]
fn entries_become_user_and_assistant_records() -> Result<(), String> {
    let history = vec![
        json!({"user": prompt("fix the 解析器\u{3000}🦀", "2026-11-30T10:00:00.000+00:00"),
            "assistant": {"ToolUse": {"message_id": "a1", "content": "Reading it.",
                "tool_uses": [{"id": "tooluse_1", "name": "fs_read", "orig_name": "fs_read",
                    "args": {"path": "src/a.rs"}, "orig_args": {"path": "src/a.rs"}}]}},
            "request_metadata": {"message_id": "a1", "request_start_timestamp_ms": 1_764_496_800_000_u64}}),
        json!({"user": {"additional_context": "", "env_context": {}, "timestamp": "2026-11-30T10:00:02.000+00:00",
                "content": {"ToolUseResults": {"tool_use_results": [{"tool_use_id": "tooluse_1",
                    "content": [{"Text": "fn main() {}"}, {"Json": {"lines": 1}}], "status": "Error"}]}}},
            "assistant": {"Response": {"message_id": "a2", "content": "Done.",
                "thinking": {"text": "It ran.", "signature": "s"}}}}),
    ];
    let session = parse_kiro_conversation(&row(&conversation(history, json!(null))))?;
    assert_eq!(session.name, "conv-1");
    let roles: Vec<Role> = session.records.iter().map(|r| r.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant, Role::System]);
    let records = &session.records;
    assert!(records[0].entry_id.starts_with("kiro:conv-1/") && records[0].entry_id.ends_with("/user"));
    assert_eq!(records[0].timestamp.as_deref(), Some("2026-11-30T10:00:00.000+00:00"));
    assert_eq!(
        records[0].blocks,
        [
            Block::Text { text: "fix the 解析器\u{3000}🦀".into() },
            Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() }
        ]
    );
    assert!(records[0].meta["env_context"].contains("/src/app"));
    assert_eq!(
        records[1].blocks,
        [
            Block::Text { text: "Reading it.".into() },
            Block::ToolCall {
                call_id: "tooluse_1".into(),
                tool: "fs_read".into(),
                input: r#"{"path":"src/a.rs"}"#.into(),
                target: String::new()
            }
        ]
    );
    assert!(records[1].meta["request_metadata"].contains("request_start_timestamp_ms"));
    assert_eq!(
        records[2].blocks,
        [Block::ToolResult {
            call_id: "tooluse_1".into(),
            tool: "fs_read".into(),
            is_error: true,
            output: "fn main() {}\n{\"lines\":1}".into()
        }]
    );
    assert_eq!(
        records[3].blocks,
        [Block::Thinking { text: "It ran.".into() }, Block::Text { text: "Done.".into() }]
    );
    assert_eq!(records[4].meta["key"], "\"/src/app\"");
    assert!(records[4].meta["model_info"].contains("claude-sonnet-4"));
    Ok(())
}

#[test]
fn a_compacted_history_keeps_the_ids_of_the_entries_it_kept() -> Result<(), String> {
    let entry = |text: &str, answer: &str| json!([prompt(text, "2026-11-30T10:00:00.000+00:00"), {"Response": {"message_id": null, "content": answer}}]);
    let before = parse_kiro_conversation(&row(&conversation(
        vec![entry("one", "1"), entry("two", "2")],
        json!(null),
    )))?;
    // `/compact`: the first entry dropped, a summary in its place (an older build's string).
    let after = parse_kiro_conversation(&row(&conversation(vec![entry("two", "2")], json!("We did one."))))?;
    assert_eq!(before.records[2..4], after.records[..2]);
    let summary = &after.records[2];
    assert_eq!(
        (summary.role, &summary.blocks[..]),
        (Role::System, &[Block::Text { text: "We did one.".into() }][..])
    );
    Ok(())
}

#[test]
fn values_that_are_not_conversations() {
    let bad = |value: &[u8]| {
        let row = KiroConversationRow { value: value.to_vec(), ..KiroConversationRow::default() };
        parse_kiro_conversation(&row).err().unwrap_or_default()
    };
    assert!(bad(b"{\"history\": [").starts_with("its value is not JSON"));
    assert_eq!(bad(b"[]"), "its value is not a JSON object");
    assert_eq!(bad(b"{\"conversation_id\": \"c\"}"), "its value has no history");
}
