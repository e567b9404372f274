//! Codex CLI rollout JSONL: one `{timestamp, type, payload}` per line, one record per line.
//!
//! `response_item` payloads become blocks (messages, reasoning, tool calls and their outputs);
//! `session_meta`, `turn_context`, `event_msg` and unknown lines become system records whose
//! payload is kept in `meta["payload"]`. Every record keeps what no block holds in
//! `meta["payload"]` (the payload's `type` always among it). Each line is its own record rather
//! than being folded into a neighbour, so a rollout that grows parses to the same records plus
//! new ones. Rollouts have no record ids: entryIds are `codex:<session>:<line>`.

use serde_json::{Map, Value};

use super::lines::read_json_lines;
use super::responses::item_into;
use super::session::{line_object, put, put_all, str_of, take_str, usable_name, SessionBuilder};
use super::{ParseOptions, ParsedTranscript, TranscriptFormat};
use annal_engine::{Block, Record, Role};

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut builder = SessionBuilder::new("codex", true);
    let mut name: Option<String> = None;
    let mut first = true;
    let mut parsed = ParsedTranscript::default();
    read_json_lines(bytes, options, TranscriptFormat::Codex, is_codex_line, &mut parsed, |number, value| {
        if name.is_none() {
            name = session_id(&value, first);
        }
        first = false;
        builder.push(number, line_record(value), None);
    });
    if !builder.is_empty() {
        parsed.sessions.push(builder.finish(name.unwrap_or_else(|| stem.to_owned()), None, None, &[]));
    }
    parsed
}

/// Whether a line is one a rollout holds: an enveloped item, or an older rollout's bare item or
/// session facts.
pub(super) fn is_codex_line(map: &Map<String, Value>) -> bool {
    let kind = str_of(map, "type");
    if kind.is_some_and(|k| CODEX_TYPES.contains(&k)) && map.get("payload").is_some_and(Value::is_object) {
        return true;
    }
    // An older rollout's first line: `{id, timestamp, instructions, git?}`, no type.
    let has_str = |key| map.get(key).is_some_and(Value::is_string);
    let legacy_facts = kind.is_none()
        && has_str("id")
        && has_str("timestamp")
        && (map.contains_key("instructions") || map.get("git").is_some_and(Value::is_object));
    is_bare_item(map) || legacy_facts || str_of(map, "record_type") == Some("state")
}

/// Whether `map` is an older rollout's bare item: an item type with the fields that type always
/// has (a message its role and content, a call its name and call id, an output its call id and
/// output). A line of another format that only shares a type name (Pi's
/// `{"type":"message","message":{…}}`) is not one.
fn is_bare_item(map: &Map<String, Value>) -> bool {
    if map.contains_key("payload") {
        return false;
    }
    let has_str = |key| map.get(key).is_some_and(Value::is_string);
    match str_of(map, "type") {
        Some("message") => {
            has_str("role") && map.get("content").is_some_and(|c| c.is_array() || c.is_string())
        }
        Some("reasoning") => map.get("summary").is_some_and(Value::is_array),
        Some("function_call" | "custom_tool_call") => has_str("name") && has_str("call_id"),
        Some("function_call_output" | "custom_tool_call_output") => {
            has_str("call_id") && map.contains_key("output")
        }
        Some("local_shell_call") => map.get("action").is_some_and(Value::is_object),
        Some("web_search_call") => map.contains_key("action") || has_str("status"),
        _ => false,
    }
}

/// Line types of a rollout's envelope.
pub(super) const CODEX_TYPES: [&str; 5] =
    ["session_meta", "response_item", "event_msg", "turn_context", "compacted"];

/// The session id a `session_meta` line (or an older rollout's unenveloped first line) names.
fn session_id(value: &Value, first: bool) -> Option<String> {
    let map = value.as_object()?;
    let meta = match str_of(map, "type") {
        Some("session_meta") => map.get("payload")?.as_object()?,
        None if first && map.contains_key("timestamp") => map,
        _ => return None,
    };
    str_of(meta, "id").filter(|id| usable_name(id)).map(str::to_owned)
}

fn line_record(value: Value) -> Record {
    let mut record = Record::new(String::new(), Role::System, Vec::new());
    let Some(mut map) = line_object(value, &mut record) else { return record };
    let kind = str_of(&map, "type").unwrap_or_default().to_owned();
    if is_bare_item(&map) {
        // An older rollout line: the item itself, without the envelope.
        item_into(map, &mut record);
        return record;
    }
    match (kind.as_str(), map.remove("payload")) {
        ("response_item", Some(Value::Object(payload))) => item_into(payload, &mut record),
        ("compacted", Some(Value::Object(mut payload))) => {
            // The summary that replaced the history: text worth reading and searching.
            if let Some(text) = take_str(&mut payload, "message") {
                record.blocks.push(Block::Text { text });
            }
            put(&mut record.meta, "payload", &Value::Object(payload));
        }
        (_, Some(payload)) => put(&mut record.meta, "payload", &payload),
        (_, None) => {}
    }
    put_all(&mut record.meta, map);
    record
}

#[cfg(test)]
mod tests {
    use super::super::{parse_transcript, TranscriptFormat};
    use super::*;

    const ROLLOUT: &str = r#"{"timestamp":"2025-12-09T19:55:16.336Z","type":"session_meta","payload":{"id":"sess-1","cwd":"/w"}}
{"timestamp":"2025-12-09T19:55:17.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"},{"type":"input_image","image_url":"data:image/png;base64,aGk="}]}}
{"timestamp":"2025-12-09T19:55:18.000Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"thinking"}],"content":null,"encrypted_content":"gAAA"}}
{"timestamp":"2025-12-09T19:55:19.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"],\"b\":1}","call_id":"c1"}}
{"timestamp":"2025-12-09T19:55:20.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"boom\",\"metadata\":{\"exit_code\":2}}"}}
{"timestamp":"2025-12-09T19:55:21.000Z","type":"response_item","payload":{"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"*** Begin Patch"}}
{"timestamp":"2025-12-09T19:55:22.000Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c2","output":"Exit code: 0\nok"}}
{"timestamp":"2025-12-09T19:55:23.000Z","type":"event_msg","payload":{"type":"token_count","info":null}}
{"timestamp":"2025-12-09T19:55:24.000Z","type":"compacted","payload":{"message":"summary so far"}}
{"timestamp":"2025-12-09T19:55:25.000Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]}}
"#;

    #[test]
    fn each_line_becomes_a_record() {
        let parsed = parse_transcript(ROLLOUT.as_bytes(), TranscriptFormat::Codex, "rollout");
        assert!(parsed.skipped.is_empty());
        let session = &parsed.sessions[0];
        assert_eq!(session.name, "sess-1");
        let records = &session.records;
        assert_eq!(records.len(), 10);
        assert_eq!(records[0].entry_id, "codex:sess-1:1");
        assert_eq!(records[0].meta["payload"], r#"{"cwd":"/w","id":"sess-1"}"#);
        assert_eq!(records[0].meta["type"], "\"session_meta\"");
        assert_eq!(records[1].role, Role::User);
        assert_eq!(
            records[1].blocks,
            [
                Block::Text { text: "hello".into() },
                Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() }
            ]
        );
        assert_eq!(records[2].blocks, [Block::Thinking { text: "thinking".into() }]);
        assert!(records[2].meta["payload"].contains("\"encrypted_content\":\"gAAA\""));
        assert_eq!(
            records[3].blocks,
            [Block::ToolCall {
                call_id: "c1".into(),
                tool: "shell".into(),
                input: r#"{"b":1,"command":["ls"]}"#.into(),
                target: String::new()
            }]
        );
        assert_eq!(records[4].role, Role::Tool);
        assert_eq!(
            records[4].blocks,
            [Block::ToolResult {
                call_id: "c1".into(),
                tool: "shell".into(),
                is_error: true,
                output: "boom".into()
            }]
        );
        assert!(records[4].meta["payload"].contains(r#""outputJson":{"metadata":{"exit_code":2}}"#));
        assert!(matches!(&records[5].blocks[0], Block::ToolCall { input, .. } if input == "*** Begin Patch"));
        assert!(
            matches!(&records[6].blocks[0], Block::ToolResult { tool, is_error: false, .. } if tool == "apply_patch")
        );
        assert_eq!(records[7].role, Role::System);
        assert_eq!(records[8].blocks, [Block::Text { text: "summary so far".into() }]);
        assert_eq!(records[9].role, Role::System);
    }

    #[test]
    fn bad_lines_and_stem_fallback() {
        let text: &[u8] = b"{\"type\":\"event_msg\",\"payload\":{}}\n\xFFbad\n{\"type\":\"response_item\",\"payload\":7}\n\
            {\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"old\"}]}\n{\"type";
        let parsed = parse_transcript(text, TranscriptFormat::Codex, "rollout-1");
        let session = &parsed.sessions[0];
        assert_eq!(session.name, "rollout-1");
        assert_eq!(session.records.len(), 3);
        assert_eq!(session.records[1].meta["payload"], "7");
        assert_eq!(session.records[2].blocks, [Block::Text { text: "old".into() }]);
        let lines: Vec<usize> = parsed.skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, [2, 5]);
    }
}
