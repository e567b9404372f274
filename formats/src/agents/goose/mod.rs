//! goose: rows of its SQLite `sessions.db` (tables `sessions` and `messages`) as records.
//! Reading the database is the caller's; this turns rows into records.
//!
//! Each message row is one record. goose rewrites a session's rows when it compacts or edits
//! the conversation (delete, then insert again under new row ids, keeping each message's
//! `message_id`), so the entryId is `goose:<session>:<message_id>`; a row without one, or
//! whose `message_id` an earlier row already has (old versions stored a streamed reply as one
//! row per chunk), is `goose:<session>:row-<row id>`.
//!
//! `content_json` is a list of items tagged by `type`: `text` becomes a text block, `thinking`
//! a thinking block, `image` a blob, `toolRequest` and `frontendToolRequest` a tool call (when
//! the request parsed: `toolCall.status` is `success`), `toolResponse` a tool result (its text
//! items joined by newlines, its images as blobs; an `error` status is an error result). What
//! no block holds (signatures, annotations, confirmations, notifications, redacted thinking)
//! stays in `meta["content"]` in order, less the fields the blocks took; `metadata_json`
//! (visibility) is `meta["metadata"]` and other columns are `meta` under their names. goose
//! keeps tool results in user messages: a user row holding only tool responses is a tool
//! record. A row whose `content_json` is not a JSON list is skipped and reported.
//!
//! The session row is a system record `goose:<session>:session:<hash of the row>`, and a
//! session with a `parent_session_id` names it in every record's `meta["parentSession"]`.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

use super::crush::{parent_meta, put_columns, session_record, unix_time};
use super::session::{base64_bytes, put, str_of, take_str, text_of, SessionBuilder};
use super::ParsedSession;
use annal_engine::{is_rfc3339, Block, Record, Role};

/// One row of the `sessions` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GooseSessionRow {
    /// `id` (`20250601_3`): the session's name.
    pub id: String,
    /// `parent_session_id`, when the column exists and is set.
    pub parent_session_id: Option<String>,
    /// `updated_at` as SQLite keeps it (`2025-06-01 10:00:00`, UTC).
    pub updated_at: Option<String>,
    /// Every column of the row by name, each value as JSON text. Left empty for a session whose
    /// row is missing: then no session record is made.
    pub columns: Vec<(String, String)>,
}

/// One row of the `messages` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GooseMessageRow {
    /// `id`: the row id.
    pub id: i64,
    /// `message_id`, when the column exists and is set.
    pub message_id: Option<String>,
    /// `role`: `user` or `assistant`.
    pub role: String,
    /// `content_json`: the JSON list of content items.
    pub content_json: String,
    /// `created_timestamp`, Unix seconds (or milliseconds, which newer versions accept).
    pub created_timestamp: Option<i64>,
    /// `metadata_json`: the message's visibility flags.
    pub metadata_json: Option<String>,
    /// Whether an earlier row of the session (read now or before) has the same `message_id`:
    /// then the entryId comes from the row id, the same way in every read.
    pub repeated_id: bool,
    /// The other columns (`tokens`, …) by name, each value as JSON text. `timestamp` belongs in
    /// none of them: it is when the row was written, which a rewrite changes.
    pub columns: Vec<(String, String)>,
}

/// The records of one session's message rows (in the order given), then its session record;
/// and one line per row that could not be read, naming the row and why.
pub fn parse_goose_session(
    session: &GooseSessionRow,
    messages: &[GooseMessageRow],
) -> (ParsedSession, Vec<String>) {
    let name = if session.id.is_empty() { "goose".to_owned() } else { session.id.clone() };
    let mut builder = SessionBuilder::new("goose", true);
    let mut skipped = Vec::new();
    let mut seen = HashSet::new();
    for (index, row) in messages.iter().enumerate() {
        let message_id =
            row.message_id.as_deref().filter(|id| !id.is_empty() && !row.repeated_id && seen.insert(*id));
        let entry_id = match message_id {
            Some(id) => format!("goose:{name}:{id}"),
            None => format!("goose:{name}:row-{}", row.id),
        };
        match message_record(row, entry_id) {
            Ok(record) => builder.push(index + 1, record, None),
            Err(why) => skipped.push(format!("message row {}: {why}", row.id)),
        }
    }
    let timestamp = session.updated_at.as_deref().and_then(sql_time);
    if let Some(record) = session_record("goose", &name, &session.columns, timestamp) {
        builder.push(0, record, None);
    }
    let extra = parent_meta(session.parent_session_id.as_deref());
    (builder.finish(name, None, None, &extra), skipped)
}

fn message_record(row: &GooseMessageRow, entry_id: String) -> Result<Record, String> {
    let items = match serde_json::from_str::<Value>(&row.content_json) {
        Ok(Value::Array(items)) => items,
        Ok(_) => return Err("content_json is not a JSON list".into()),
        Err(err) => return Err(format!("content_json is not JSON ({err})")),
    };
    let only_responses = !items.is_empty() && items.iter().all(|item| kind(item) == Some("toolResponse"));
    let role = match (row.role.as_str(), only_responses) {
        ("assistant", _) => Role::Assistant,
        ("user", true) => Role::Tool,
        ("user", false) => Role::User,
        _ => Role::System,
    };
    let mut record = Record {
        entry_id,
        role,
        timestamp: unix_time(row.created_timestamp),
        blocks: Vec::new(),
        meta: BTreeMap::new(),
    };
    put_columns(&mut record.meta, &row.columns);
    if role == Role::System {
        put(&mut record.meta, "role", &Value::String(row.role.clone()));
    }
    if let Some(id) = &row.message_id {
        put(&mut record.meta, "messageId", &Value::String(id.clone()));
    }
    if let Some(metadata) = &row.metadata_json {
        let value = serde_json::from_str(metadata).unwrap_or_else(|_| Value::String(metadata.clone()));
        put(&mut record.meta, "metadata", &value);
    }
    let kept: Vec<Value> = items.into_iter().map(|item| item_blocks(item, &mut record.blocks)).collect();
    put(&mut record.meta, "content", &Value::Array(kept));
    Ok(record)
}

fn kind(item: &Value) -> Option<&str> {
    item.as_object().and_then(|item| str_of(item, "type"))
}

/// One content item's blocks into `blocks`; returns what is left of the item.
fn item_blocks(item: Value, blocks: &mut Vec<Block>) -> Value {
    let Value::Object(mut item) = item else { return item };
    match str_of(&item, "type").unwrap_or_default() {
        "text" => blocks.extend(take_str(&mut item, "text").map(|text| Block::Text { text })),
        "thinking" => blocks.extend(take_str(&mut item, "thinking").map(|text| Block::Thinking { text })),
        "image" => blocks.extend(take_image(&mut item)),
        "toolRequest" | "frontendToolRequest" => blocks.extend(tool_request(&mut item)),
        "toolResponse" => tool_response(&mut item, blocks),
        _ => {}
    }
    Value::Object(item)
}

/// An MCP image (`{data, mimeType}`) as a blob, both fields taken out when it decodes.
fn take_image(item: &mut Map<String, Value>) -> Option<Block> {
    let data = str_of(item, "data").and_then(base64_bytes)?;
    item.remove("data");
    let media_type = take_str(item, "mimeType").unwrap_or_default();
    Some(Block::Blob { media_type, data })
}

fn tool_request(item: &mut Map<String, Value>) -> Option<Block> {
    let call = item.get_mut("toolCall").and_then(Value::as_object_mut)?;
    if str_of(call, "status") != Some("success") {
        return None;
    }
    let value = call.get_mut("value").and_then(Value::as_object_mut)?;
    let tool = take_str(value, "name")?;
    let input = match value.remove("arguments") {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(arguments) => text_of(&arguments),
    };
    let call_id = take_str(item, "id").unwrap_or_default();
    Some(Block::ToolCall { call_id, tool, input, target: String::new() })
}

fn tool_response(item: &mut Map<String, Value>, blocks: &mut Vec<Block>) {
    let Some(call_id) = take_str(item, "id") else { return };
    let result = item.get_mut("toolResult").and_then(Value::as_object_mut);
    let (is_error, output, images) = match result {
        Some(result) if str_of(result, "status") == Some("error") => {
            (true, take_str(result, "error").unwrap_or_default(), Vec::new())
        }
        Some(result) => match result.get_mut("value") {
            // The current form is an MCP CallToolResult; older sessions kept the list alone.
            Some(Value::Object(value)) => {
                let is_error = value.get("isError").and_then(Value::as_bool).unwrap_or(false);
                value.remove("isError");
                let (output, images) = contents(value.get_mut("content"));
                (is_error, output, images)
            }
            list => {
                let (output, images) = contents(list);
                (false, output, images)
            }
        },
        None => (false, String::new(), Vec::new()),
    };
    blocks.push(Block::ToolResult { call_id, tool: String::new(), is_error, output });
    blocks.extend(images);
}

/// The text items of an MCP content list joined by newlines, and its images as blobs; both are
/// taken out of the items, whose other fields (annotations, resources) stay.
fn contents(list: Option<&mut Value>) -> (String, Vec<Block>) {
    let Some(Value::Array(items)) = list else { return (String::new(), Vec::new()) };
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for item in items.iter_mut().filter_map(Value::as_object_mut) {
        match str_of(item, "type") {
            Some("text") => texts.extend(take_str(item, "text")),
            Some("image") => images.extend(take_image(item)),
            _ => {}
        }
    }
    (texts.join("\n"), images)
}

/// RFC 3339 text of a time as SQLite writes it (`2025-06-01 10:00:00`, UTC) or as RFC 3339.
fn sql_time(text: &str) -> Option<String> {
    if is_rfc3339(text) {
        return Some(text.to_owned());
    }
    let candidate = format!("{}Z", text.replacen(' ', "T", 1));
    is_rfc3339(&candidate).then_some(candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, message_id: Option<&str>, role: &str, content: &str) -> GooseMessageRow {
        GooseMessageRow {
            id,
            message_id: message_id.map(str::to_owned),
            role: role.into(),
            content_json: content.into(),
            created_timestamp: Some(1_740_171_566),
            metadata_json: Some(r#"{"userVisible":true,"agentVisible":true}"#.into()),
            columns: vec![("tokens".into(), "null".into())],
            repeated_id: false,
        }
    }

    fn parse() -> (ParsedSession, Vec<String>) {
        let long = format!("中文 🦢 a\u{308}\u{301} {}", "x".repeat(100_000));
        let user = format!(
            r#"[{{"type":"text","text":{}}},{{"type":"image","data":"aGk=","mimeType":"image/png"}}]"#,
            Value::String(long)
        );
        let assistant = r#"[{"type":"thinking","thinking":"まず","signature":"s"},{"type":"text","text":"Looking."},
            {"type":"toolRequest","id":"t1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls"}}}},
            {"type":"toolRequest","id":"t2","toolCall":{"status":"error","error":"-32602: bad json"}}]"#;
        let results = r#"[{"type":"toolResponse","id":"t1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"a\n🦢"},{"type":"image","data":"aGk=","mimeType":"image/png"}],"isError":false}}},
            {"type":"toolResponse","id":"t2","toolResult":{"status":"error","error":"failed"}},
            {"type":"toolResponse","id":"t3","toolResult":{"status":"success","value":[{"type":"text","text":"old form","annotations":{"audience":["user"]}}]}}]"#;
        let session = GooseSessionRow {
            id: "20250601_3".into(),
            parent_session_id: Some("20250601_1".into()),
            updated_at: Some("2025-06-01 10:00:00".into()),
            columns: vec![("id".into(), "\"20250601_3\"".into()), ("name".into(), "\"Café ☕\"".into())],
        };
        let rows = [
            row(1, Some("msg_a"), "user", &user),
            row(2, Some("msg_b"), "assistant", assistant),
            row(3, None, "user", results),
            row(4, Some("msg_b"), "assistant", r#"[{"type":"text","text":"chunk"}]"#),
            GooseMessageRow { repeated_id: true, ..row(7, Some("msg_e"), "user", "[]") },
            row(5, Some("msg_c"), "user", r#"{"type":"text"}"#),
            row(6, Some("msg_d"), "user", "not json"),
        ];
        parse_goose_session(&session, &rows)
    }

    #[test]
    fn items_become_blocks_and_the_rest_is_meta() {
        let (parsed, skipped) = parse();
        assert_eq!(parsed, parse().0, "deterministic");
        let ids: Vec<&str> = parsed.records.iter().map(|r| r.entry_id.as_str()).collect();
        assert_eq!(
            ids[..4],
            [
                "goose:20250601_3:msg_a",
                "goose:20250601_3:msg_b",
                "goose:20250601_3:row-3",
                "goose:20250601_3:row-4"
            ]
        );
        assert!(ids[5].starts_with("goose:20250601_3:session:"), "{ids:?}");
        let [user, assistant, tool, chunk, _, info] = &parsed.records[..] else { panic!("{ids:?}") };
        assert_eq!((user.role, user.timestamp.as_deref()), (Role::User, Some("2025-02-21T20:59:26Z")));
        assert!(
            matches!(&user.blocks[0], Block::Text { text } if text.starts_with("中文 🦢 a\u{308}\u{301}"))
        );
        assert_eq!(user.blocks[1], Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() });
        assert_eq!(user.meta["metadata"], r#"{"agentVisible":true,"userVisible":true}"#);
        assert_eq!(assistant.blocks[0], Block::Thinking { text: "まず".into() });
        assert_eq!(assistant.blocks[2], Block::tool_call("t1", "developer__shell", r#"{"command":"ls"}"#));
        assert_eq!(assistant.blocks.len(), 3, "a request that did not parse stays in meta");
        assert!(
            assistant.meta["content"].contains("bad json")
                && assistant.meta["content"].contains(r#""signature":"s""#)
        );
        assert_eq!(tool.role, Role::Tool);
        assert_eq!(tool.blocks[0], Block::tool_result("t1", "developer__shell", false, "a\n🦢"));
        assert!(matches!(&tool.blocks[1], Block::Blob { .. }));
        assert_eq!(tool.blocks[2], Block::tool_result("t2", "", true, "failed"));
        assert_eq!(tool.blocks[3], Block::tool_result("t3", "", false, "old form"));
        assert!(tool.meta["content"].contains("audience"));
        assert_eq!(chunk.meta["messageId"], "\"msg_b\"");
        assert!(ids.contains(&"goose:20250601_3:row-7"), "{ids:?}");
        assert_eq!(info.timestamp.as_deref(), Some("2025-06-01T10:00:00Z"));
        assert!(info.meta["session"].contains("Café ☕"));
        assert!(parsed.records.iter().all(|r| r.meta["parentSession"] == "\"20250601_1\""));
        assert_eq!(skipped[0], "message row 5: content_json is not a JSON list");
        assert!(skipped[1].starts_with("message row 6: content_json is not JSON ("), "{skipped:?}");
    }

    #[test]
    fn odd_rows_still_make_records() {
        let session = GooseSessionRow::default();
        let rows =
            [row(1, Some(""), "system", "[]"), row(2, None, "user", "[1, {\"type\":\"toolResponse\"}]")];
        let (parsed, skipped) = parse_goose_session(&session, &rows);
        assert!(skipped.is_empty());
        assert_eq!(parsed.name, "goose");
        assert_eq!(parsed.records[0].entry_id, "goose:goose:row-1");
        assert_eq!(parsed.records[0].meta["role"], "\"system\"");
        assert_eq!(parsed.records[1].role, Role::User);
        assert_eq!(sql_time("2025-06-01 10:00:00.123").as_deref(), Some("2025-06-01T10:00:00.123Z"));
        assert_eq!(sql_time("yesterday"), None);
    }
}
