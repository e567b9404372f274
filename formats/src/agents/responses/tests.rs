//! The Responses items' tests: items kept as written, their blocks, non-items, blocks back as items.

use super::*;

const CALL: &str = r#"{"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "run", "arguments": "{\"b\": 1, \"a\": \"日本 🚀\"}"}"#;

#[test]
fn an_item_keeps_its_own_text_and_gets_blocks() {
    let record = record_from_responses_item("e1", CALL).expect("an item");
    assert_eq!((record.entry_id.as_str(), record.role), ("e1", Role::Assistant));
    assert_eq!(
        record.blocks,
        [Block::ToolCall {
            call_id: "c1".into(),
            tool: "run".into(),
            input: r#"{"a":"日本 🚀","b":1}"#.into(),
            target: String::new()
        }]
    );
    let kept = responses_item_text(&record.meta[RESPONSES_ITEM_KEY]);
    assert_eq!(kept.as_deref(), Some(CALL), "the item's text, byte for byte");
    assert_eq!(record.meta.len(), 1);
}

#[test]
fn short_messages_outputs_and_reasoning() {
    let user = record_from_responses_item("u", r#"{"role": "user", "content": "ca\u0301fe\u3000ok"}"#);
    let user = user.expect("a short message");
    assert_eq!((user.role, user.blocks.clone()), (Role::User, vec![Block::text("ca\u{301}fe\u{3000}ok")]));
    let developer = record_from_responses_item("d", r#"{"role": "developer", "content": "rules"}"#);
    assert_eq!(developer.expect("a message").role, Role::System);
    let output = r#"{"type": "function_call_output", "call_id": "c1", "output": "Exit code: 2\nboom"}"#;
    let output = record_from_responses_item("o", output).expect("an output");
    assert!(
        matches!(&output.blocks[0], Block::ToolResult { is_error: true, output, .. } if output.ends_with("boom"))
    );
    let thought = r#"{"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": "hm"}]}"#;
    assert_eq!(
        record_from_responses_item("r", thought).expect("reasoning").blocks,
        [Block::Thinking { text: "hm".into() }]
    );
    let hosted_text = r#"{"type": "web_search_call", "id": "ws", "status": "completed"}"#;
    let hosted = record_from_responses_item("w", hosted_text).expect("any object is an item");
    assert_eq!(hosted.blocks, [Block::Text { text: hosted_text.into() }], "counted and searchable");
    assert!(hosted.meta.contains_key(RESPONSES_ITEM_KEY));
}

#[test]
fn what_is_not_an_item() {
    for text in ["", "[1, 2]", "\"text\"", "{\"type\": ", "nul"] {
        assert!(record_from_responses_item("x", text).is_err(), "{text:?}");
    }
}

#[test]
fn blocks_back_as_items() {
    let record = Record::new(
        "a",
        Role::Assistant,
        vec![
            Block::Thinking { text: "plan".into() },
            Block::text("Listing 日本."),
            Block::text("Then testing."),
            Block::tool_call("k1", "Bash", r#"{"command":"ls"}"#),
            Block::Blob { media_type: "image/png".into(), data: vec![1, 2, 3] },
        ],
    );
    let items = responses_items(record.role, &record_message_blocks(&record));
    let blob = hash_to_hex(blake3::hash(&[1, 2, 3]).as_bytes());
    assert_eq!(
        items,
        [
            json!({"role": "assistant", "content": "Listing 日本.\n\nThen testing."}),
            json!({"type": "function_call", "call_id": "k1", "name": "Bash", "arguments": "{\"command\":\"ls\"}"}),
            json!({"role": "assistant", "content": format!("[image/png, 3 bytes, blob {blob}]")}),
        ]
    );
    let result = Record::new("t", Role::Tool, vec![Block::tool_result("k1", "Bash", false, "a.rs")]);
    assert_eq!(
        responses_items(result.role, &record_message_blocks(&result)),
        [json!({"type": "function_call_output", "call_id": "k1", "output": "a.rs"})]
    );
    assert!(responses_items(Role::System, &[]).is_empty());
}

#[test]
fn failed_shell_output_and_output_shapes() {
    let mut blocks = Vec::new();
    assert!(tool_output(Value::String("Exit code: 1\nWall time: 0.1 seconds".into()), &mut blocks).1);
    assert_eq!(exit_code_line("Exit code: 0\n"), Some(0));
    assert_eq!(exit_code_line("exit 1"), None);
    let object = serde_json::json!({"content": "nope", "success": false});
    assert_eq!(tool_output(object, &mut blocks).0, "nope");
    let parts = serde_json::json!([{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]);
    assert_eq!(tool_output(parts, &mut blocks).0, "a\nb");
    assert!(blocks.is_empty());
}
