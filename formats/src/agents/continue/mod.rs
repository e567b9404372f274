//! Continue sessions (`~/.continue/sessions/<session>.json`): one JSON document per session,
//! `{sessionId, title, workspaceDirectory, history: [...], mode?, chatModelTitle?, usage?}`,
//! rewritten whole on every save (the VS Code and JetBrains extensions and the `cn` CLI share it).
//!
//! Each history item `{message, contextItems, reasoning?, toolCallStates?, conversationSummary?,
//! …}` is one record, `continue:<session>:<index>` (from 1): a `user` message a user record of
//! its text and images, `assistant` an assistant record of its text and `toolCalls` (the item's
//! `reasoning.text` as thinking before them), `thinking` an assistant record of thinking, `tool`
//! a tool record of the result for its `toolCallId`, `system` a system record. The `cn` CLI
//! writes no `tool` item: its tools' outputs are in the calls' states, so they become a tool
//! record `continue:<session>:<index>/result` after the assistant's, one result per call, failed
//! when the state's `status` is `errored` or `canceled`. Empty text (the content of an assistant
//! turn that only calls tools) is no block. The rest of the
//! item (context items, tool call states, a `conversationSummary` that compacted what came
//! before) stays in `meta`. The session's own fields, which change on every save, follow in a
//! system record whose entryId names a hash of them. An item changed by a later save (Continue
//! rewrites the last one as it streams, and edits earlier ones) is stored by the loader as a
//! revision of the one stored before; a save that adds items adds their records.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::lines::{document_object, note_shape};
use super::session::{
    data_url_blob, fields_record, put, put_all, put_nonempty, str_of, take_array, take_str, text_of,
    usable_name, SessionBuilder,
};
use super::{ParseOptions, ParsedTranscript};
use annal_engine::{Block, Record, Role};

/// Message roles Continue writes.
const ROLES: [&str; 5] = ["user", "assistant", "thinking", "tool", "system"];

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut parsed = ParsedTranscript::default();
    let Some(mut document) = document_object(bytes, options, &mut parsed, "a Continue session") else {
        return parsed;
    };
    let shaped = document.get("sessionId").is_some_and(Value::is_string)
        && document.get("history").is_some_and(Value::is_array);
    let reason = "a Continue session is an object with a \"sessionId\" and a \"history\" array";
    note_shape(&mut parsed, shaped, reason);
    let name = str_of(&document, "sessionId").filter(|id| usable_name(id)).unwrap_or(stem).to_owned();
    let items = take_array(&mut document, "history");
    let calls = CallStates::of(&items);
    let mut builder = SessionBuilder::new("continue", true);
    for (index, item) in items.into_iter().enumerate() {
        let id = format!("continue:{name}:{}", index + 1);
        let (mut record, known) = item_record(item, &id);
        *if known { &mut parsed.recognised } else { &mut parsed.unrecognised } += 1;
        let results = calls.results_of(&mut record, &format!("{id}/result"));
        builder.push(index + 1, record, None);
        if let Some(results) = results {
            builder.push(index + 1, results, None);
        }
    }
    let session_fields = document.contains_key("sessionId") && document.contains_key("title");
    *if session_fields { &mut parsed.recognised } else { &mut parsed.unrecognised } += 1;
    builder.push(0, fields_record(&format!("continue:{name}"), document), None);
    parsed.sessions.push(builder.finish(name, None, None, &[]));
    parsed
}

/// Whether a parsed document is a Continue session (see [`is_continue_document`]).
pub(super) fn is_continue_session(map: &Map<String, Value>) -> bool {
    let item_ok = |item: &Value| {
        let role = item.get("message").and_then(|message| message.get("role")).and_then(Value::as_str);
        role.is_some_and(|role| ROLES.contains(&role)) && item.get("contextItems").is_some()
    };
    map.get("sessionId").is_some_and(Value::is_string)
        && map.contains_key("title")
        && map.get("history").and_then(Value::as_array).is_some_and(|items| items.iter().all(item_ok))
}

/// Whether `bytes` is a Continue session: an object with a string `sessionId`, a `title` and a
/// `history` whose items hold a `message` with a role Continue writes and their `contextItems`.
pub(super) fn is_continue_document(bytes: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(rename = "sessionId")]
        _session_id: String,
        #[serde(rename = "title")]
        _title: Value,
        history: Vec<Item>,
    }
    #[derive(Deserialize)]
    struct Item {
        message: Message,
        #[serde(rename = "contextItems")]
        _context_items: Value,
    }
    #[derive(Deserialize)]
    struct Message {
        role: String,
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    serde_json::from_slice::<Probe>(bytes)
        .is_ok_and(|probe| probe.history.iter().all(|item| ROLES.contains(&item.message.role.as_str())))
}

/// What the items' tool call states say: the `cn` CLI keeps a tool's output only in its call's
/// state (`toolCallStates[].output`, context items whose `content` is the text) and writes no
/// `tool` item, while the editor extensions write one too; `status` is `errored` for a tool that
/// failed and `canceled` for one stopped before it ran.
struct CallStates {
    /// The calls a `tool` item answers.
    answered: std::collections::HashSet<String>,
    /// Each call's status.
    status: std::collections::HashMap<String, String>,
}

impl CallStates {
    fn of(items: &[Value]) -> CallStates {
        let mut answered = std::collections::HashSet::new();
        let mut status = std::collections::HashMap::new();
        for item in items {
            let message = item.get("message");
            if message.and_then(|m| m.get("role")).and_then(Value::as_str) == Some("tool") {
                if let Some(id) = message.and_then(|m| m.get("toolCallId")).and_then(Value::as_str) {
                    answered.insert(id.to_owned());
                }
            }
            for state in item.get("toolCallStates").and_then(Value::as_array).into_iter().flatten() {
                if let (Some(id), Some(to)) = (state.get("toolCallId"), state.get("status")) {
                    if let (Some(id), Some(to)) = (id.as_str(), to.as_str()) {
                        status.insert(id.to_owned(), to.to_owned());
                    }
                }
            }
        }
        CallStates { answered, status }
    }

    fn failed(&self, call_id: &str) -> bool {
        matches!(self.status.get(call_id).map(String::as_str), Some("errored" | "canceled"))
    }

    /// Marks a `tool` record's result failed when its call's state says so; for an assistant
    /// record whose calls no `tool` item answers, takes their outputs out of its `meta` into a
    /// tool record `entry_id` of their results, in call order.
    fn results_of(&self, record: &mut Record, entry_id: &str) -> Option<Record> {
        for block in &mut record.blocks {
            if let Block::ToolResult { call_id, is_error, .. } = block {
                *is_error |= self.failed(call_id);
            }
        }
        let mut states: Vec<Value> = match record.meta.get("toolCallStates") {
            Some(text) => serde_json::from_str(text).ok()?,
            None => return None,
        };
        let mut results = Record::new(entry_id.to_owned(), Role::Tool, Vec::new());
        for state in &mut states {
            let Some(state) = state.as_object_mut() else { continue };
            let Some(call_id) = str_of(state, "toolCallId").map(str::to_owned) else { continue };
            if self.answered.contains(&call_id) || !state.get("output").is_some_and(Value::is_array) {
                continue;
            }
            let tool = state
                .get("toolCall")
                .and_then(|call| call.get("function"))
                .and_then(|function| function.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let output = state.remove("output").map(|output| output_text(&output)).unwrap_or_default();
            let is_error = self.failed(&call_id);
            results.blocks.push(Block::ToolResult { call_id, tool, is_error, output });
        }
        if results.blocks.is_empty() {
            return None;
        }
        put(&mut record.meta, "toolCallStates", &Value::Array(states));
        results.timestamp.clone_from(&record.timestamp);
        Some(results)
    }
}

/// A tool's output, context items `{name, description, content}`: their contents one after
/// another.
fn output_text(output: &Value) -> String {
    let items = output.as_array().map_or(&[][..], Vec::as_slice);
    let texts: Vec<&str> =
        items.iter().filter_map(|item| item.get("content").and_then(Value::as_str)).collect();
    if texts.is_empty() && !items.is_empty() {
        return text_of(output);
    }
    texts.join("\n")
}

/// One history item as a record with `entry_id`, and whether it is an item Continue writes.
fn item_record(item: Value, entry_id: &str) -> (Record, bool) {
    let mut record = Record::new(entry_id.to_owned(), Role::System, Vec::new());
    let Value::Object(mut item) = item else {
        put(&mut record.meta, "value", &item);
        return (record, false);
    };
    let Some(Value::Object(mut message)) = item.remove("message") else {
        put_all(&mut record.meta, item);
        return (record, false);
    };
    let role = str_of(&message, "role").unwrap_or_default().to_owned();
    let known = ROLES.contains(&role.as_str()) && item.contains_key("contextItems");
    let mut extra = Map::new();
    match role.as_str() {
        "user" | "system" => {
            record.role = if role == "user" { Role::User } else { Role::System };
            extra = content_into(message.remove("content"), &mut record.blocks);
        }
        "assistant" => {
            record.role = Role::Assistant;
            if let Some(Value::Object(reasoning)) = item.get_mut("reasoning") {
                if let Some(text) = take_str(reasoning, "text").filter(|text| !text.is_empty()) {
                    record.blocks.push(Block::Thinking { text });
                }
            }
            extra = content_into(message.remove("content"), &mut record.blocks);
            if let Some(Value::Array(calls)) = message.remove("toolCalls") {
                let mut left = Vec::new();
                for call in calls {
                    match tool_call(&call) {
                        Some(block) => record.blocks.push(block),
                        None => left.push(call),
                    }
                }
                if !left.is_empty() {
                    message.insert("toolCalls".into(), Value::Array(left));
                }
            }
        }
        "thinking" => {
            record.role = Role::Assistant;
            if let Some(text) = take_str(&mut message, "content").filter(|text| !text.is_empty()) {
                record.blocks.push(Block::Thinking { text });
            }
        }
        "tool" => {
            record.role = Role::Tool;
            let call_id = take_str(&mut message, "toolCallId").unwrap_or_default();
            let output = message.remove("content").map(|content| text_of(&content)).unwrap_or_default();
            record.blocks.push(Block::ToolResult { call_id, tool: String::new(), is_error: false, output });
        }
        _ => {}
    }
    put_nonempty(&mut record.meta, "contentExtra", extra);
    put(&mut record.meta, "message", &Value::Object(message));
    put_all(&mut record.meta, item);
    (record, known)
}

/// A `{id, type: "function", function: {name, arguments}}` call as a call block.
fn tool_call(call: &Value) -> Option<Block> {
    let call_id = call.get("id")?.as_str()?.to_owned();
    let function = call.get("function")?;
    let tool = function.get("name")?.as_str()?.to_owned();
    let input = function.get("arguments").map_or_else(|| "{}".to_owned(), text_of);
    Some(Block::ToolCall { call_id, tool, input, target: String::new() })
}

/// Message content (a string, or text and image parts) as blocks; returns, keyed by part index,
/// what no block holds.
fn content_into(content: Option<Value>, blocks: &mut Vec<Block>) -> Map<String, Value> {
    let mut extra = Map::new();
    let parts = match content {
        None => return extra,
        // An assistant turn of tool calls only has empty content: no block.
        Some(Value::String(text)) if text.is_empty() => return extra,
        Some(Value::String(text)) => {
            blocks.push(Block::Text { text });
            return extra;
        }
        Some(Value::Array(parts)) => parts,
        Some(other) => {
            extra.insert("content".into(), other);
            return extra;
        }
    };
    for (index, part) in parts.into_iter().enumerate() {
        let Value::Object(mut part) = part else {
            extra.insert(index.to_string(), part);
            continue;
        };
        let block = match str_of(&part, "type") {
            Some("text") => match take_str(&mut part, "text") {
                Some(text) if text.is_empty() => {
                    part.remove("type");
                    None
                }
                text => text.map(|text| Block::Text { text }),
            },
            Some("imageUrl") => {
                let url = part.get("imageUrl").and_then(|image| image.get("url")).and_then(Value::as_str);
                let blob = url.and_then(data_url_blob);
                if blob.is_some() {
                    part.remove("imageUrl");
                }
                blob
            }
            _ => None,
        };
        if let Some(block) = block {
            blocks.push(block);
            part.remove("type");
        }
        if !part.is_empty() {
            extra.insert(index.to_string(), Value::Object(part));
        }
    }
    extra
}

#[cfg(test)]
mod tests;
