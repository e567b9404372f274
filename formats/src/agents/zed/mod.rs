//! Zed agent threads: one row of `threads.db`'s `threads` table per thread, whose `data` is
//! the whole thread as JSON (zstd-compressed by current Zed, decompressed by the caller),
//! replaced on every save.
//!
//! The thread `{title, messages: [...], updated_at, model?, version, …}` gives one record per
//! message, `zed:<thread>:<index>` (from 1): `{"User": {id, content}}` a user record of its text
//! and images (mentions, the files and symbols attached, stay in `meta`), `{"Agent": {content,
//! tool_results}}` an assistant record of its text, thinking and tool uses, followed by a tool
//! record `…/results` of its tool results (Zed keeps them inside the message, keyed by tool use),
//! and `"Resume"` a system record. Threads of Zed before the 0.3 format (`{role, segments,
//! tool_uses, tool_results}` messages) read the same way. The thread's other fields follow in one
//! system record, `zed:<thread>:thread`, without the counters Zed moves at every save
//! (`updated_at`, `cumulative_token_usage`, the sum of the requests'); a request's token usage
//! (`request_token_usage`, keyed by the user message that started it) goes to the `meta` of the
//! reply that follows that message, as `requestTokenUsage`. A message changed by a later save (a reply that went on
//! streaming, an edit that replaced it) is kept by the loader as a revision. A sub-agent's
//! thread names its parent in `meta.parentSession`.

use serde_json::{Map, Value};

use super::session::{
    base64_bytes, put, put_all, put_nonempty, str_of, take_array, take_str, text_of, usable_name,
    SessionBuilder,
};
use super::ParsedSession;
use annal_engine::{canonical_json, Block, Record, Role};

/// One row of the `threads` table, its `data` already decompressed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZedThreadRow {
    /// `id`: the thread's id, its session name.
    pub id: String,
    /// `parent_id`: the thread a sub-agent's thread was started from.
    pub parent_id: Option<String>,
    /// The thread's JSON.
    pub json: Vec<u8>,
}

/// The records of one thread; or why its data cannot be read.
///
/// # Errors
/// A line naming what is wrong with the data (not JSON, not a thread).
pub fn parse_zed_thread(row: &ZedThreadRow) -> Result<ParsedSession, String> {
    let mut thread = match serde_json::from_slice::<Value>(&row.json) {
        Ok(Value::Object(thread)) => thread,
        Ok(_) => return Err("its data is not a JSON object".into()),
        Err(err) => return Err(format!("its data is not JSON ({err})")),
    };
    if !thread.get("messages").is_some_and(Value::is_array) {
        return Err("its data has no messages".into());
    }
    let name = if usable_name(&row.id) { row.id.clone() } else { "zed".to_owned() };
    let mut builder = SessionBuilder::new("zed", true);
    let mut usage = match thread.remove("request_token_usage") {
        Some(Value::Object(usage)) => usage,
        Some(other) => Map::from_iter([("request_token_usage".to_owned(), other)]),
        None => Map::new(),
    };
    // The user message the next reply answers.
    let mut asked: Option<String> = None;
    for (index, message) in take_array(&mut thread, "messages").into_iter().enumerate() {
        let id = format!("zed:{name}:{}", index + 1);
        let user = message.get("User").and_then(|user| user.get("id")).and_then(Value::as_str);
        let is_reply = message.get("Agent").is_some();
        if let Some(user) = user {
            asked = Some(user.to_owned());
        }
        let mut records = message_records(message, &id);
        if let (true, Some(first)) = (is_reply, records.first_mut()) {
            if let Some(spent) = asked.take().and_then(|user| usage.remove(&user)) {
                put(&mut first.meta, "requestTokenUsage", &spent);
            }
        }
        for record in records {
            builder.push(index + 1, record, None);
        }
    }
    for key in ["updated_at", "cumulative_token_usage"] {
        thread.remove(key);
    }
    // Usage of a request whose reply is not in the thread (yet) waits for it; a value of
    // another shape stays with the thread.
    if let Some(other) = usage.remove("request_token_usage").filter(|_| usage.is_empty()) {
        thread.insert("request_token_usage".into(), other);
    }
    let mut session = Record::new(format!("zed:{name}:thread"), Role::System, Vec::new());
    put_all(&mut session.meta, thread);
    builder.push(0, session, None);
    let parent: Vec<(&str, String)> =
        row.parent_id.iter().map(|p| ("parentSession", canonical_json(&Value::String(p.clone())))).collect();
    Ok(builder.finish(name, None, None, &parent))
}

/// One message's records: the message, and its tool results when it has any.
fn message_records(message: Value, id: &str) -> Vec<Record> {
    let mut record = Record::new(id.to_owned(), Role::System, Vec::new());
    let Value::Object(mut message) = message else {
        put(&mut record.meta, "message", &message);
        return vec![record];
    };
    let mut results = Vec::new();
    if let Some(Value::Object(mut user)) = message.remove("User") {
        record.role = Role::User;
        let extra = content_into(take_array(&mut user, "content"), &mut record.blocks);
        put_nonempty(&mut record.meta, "contentExtra", extra);
        put(&mut record.meta, "User", &Value::Object(user));
    } else if let Some(Value::Object(mut agent)) = message.remove("Agent") {
        record.role = Role::Assistant;
        let extra = content_into(take_array(&mut agent, "content"), &mut record.blocks);
        put_nonempty(&mut record.meta, "contentExtra", extra);
        results = match agent.remove("tool_results") {
            Some(Value::Object(by_use)) => by_use.into_iter().map(|(_, result)| result).collect(),
            Some(other) => {
                agent.insert("tool_results".into(), other);
                Vec::new()
            }
            None => Vec::new(),
        };
        put(&mut record.meta, "Agent", &Value::Object(agent));
    } else if let Some(role) = str_of(&message, "role").map(str::to_owned) {
        // Before the 0.3 format: `{id, role, segments, tool_uses, tool_results}`.
        record.role = match role.as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            _ => Role::System,
        };
        message.remove("role");
        let mut extra = Map::new();
        for (index, segment) in take_array(&mut message, "segments").into_iter().enumerate() {
            if let Some(block) = segment_block(&segment) {
                record.blocks.push(block);
            } else {
                extra.insert(index.to_string(), segment);
            }
        }
        for tool_use in take_array(&mut message, "tool_uses") {
            if let Some(block) = tool_call(&tool_use) {
                record.blocks.push(block);
            } else {
                extra.insert(format!("tool_use {}", extra.len()), tool_use);
            }
        }
        put_nonempty(&mut record.meta, "contentExtra", extra);
        results = take_array(&mut message, "tool_results");
    }
    put_all(&mut record.meta, message);
    let mut records = vec![record];
    if !results.is_empty() {
        records.push(results_record(results, id));
    }
    records
}

/// Content items (`{"Text": …}`, `{"Thinking": {text}}`, `{"ToolUse": {…}}`, `{"Image": …}`,
/// `{"Mention": …}`, …) as blocks; returns, keyed by index, the items no block holds.
fn content_into(items: Vec<Value>, blocks: &mut Vec<Block>) -> Map<String, Value> {
    let mut extra = Map::new();
    for (index, item) in items.into_iter().enumerate() {
        let block = match &item {
            Value::String(text) => Some(Block::Text { text: text.clone() }),
            Value::Object(map) if map.len() == 1 => match map.iter().next() {
                Some((kind, Value::String(text))) if kind == "Text" => {
                    Some(Block::Text { text: text.clone() })
                }
                Some((kind, Value::Object(inner))) if kind == "Thinking" => {
                    str_of(inner, "text").map(|text| Block::Thinking { text: text.to_owned() })
                }
                Some((kind, use_)) if kind == "ToolUse" => tool_call(use_),
                Some((kind, Value::Object(image))) if kind == "Image" => image_blob(image),
                _ => None,
            },
            _ => None,
        };
        if let Some(block) = block {
            blocks.push(block);
        } else {
            extra.insert(index.to_string(), item);
        }
    }
    extra
}

/// A tool use `{id, name, input, …}` as a call block.
fn tool_call(tool_use: &Value) -> Option<Block> {
    let call_id = tool_use.get("id")?.as_str()?.to_owned();
    let tool = tool_use.get("name")?.as_str()?.to_owned();
    let input = tool_use.get("input").map_or_else(|| "{}".to_owned(), text_of);
    Some(Block::ToolCall { call_id, tool, input, target: String::new() })
}

/// An image `{source: base64, size}` as a blob, its type told by its first bytes.
fn image_blob(image: &Map<String, Value>) -> Option<Block> {
    let data = base64_bytes(str_of(image, "source")?)?;
    let media_type = match data.as_slice() {
        [0x89, b'P', b'N', b'G', ..] => "image/png",
        [0xFF, 0xD8, ..] => "image/jpeg",
        [b'G', b'I', b'F', ..] => "image/gif",
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => "image/webp",
        _ => "application/octet-stream",
    };
    Some(Block::Blob { media_type: media_type.to_owned(), data })
}

/// A segment of the older format: `{type: "text" | "thinking", text}`.
fn segment_block(segment: &Value) -> Option<Block> {
    let text = segment.get("text")?.as_str()?.to_owned();
    match segment.get("type")?.as_str()? {
        "text" => Some(Block::Text { text }),
        "thinking" => Some(Block::Thinking { text }),
        _ => None,
    }
}

/// A message's tool results as one tool record, `<id>/results`.
fn results_record(results: Vec<Value>, id: &str) -> Record {
    let mut record = Record::new(format!("{id}/results"), Role::Tool, Vec::new());
    let mut extra = Map::new();
    for (index, result) in results.into_iter().enumerate() {
        let Value::Object(mut result) = result else {
            extra.insert(index.to_string(), result);
            continue;
        };
        let call_id = take_str(&mut result, "tool_use_id").unwrap_or_default();
        let tool = take_str(&mut result, "tool_name").unwrap_or_default();
        let is_error = result.remove("is_error").and_then(|v| v.as_bool()).unwrap_or(false);
        let output = result.remove("content").map(|content| result_text(&content)).unwrap_or_default();
        record.blocks.push(Block::ToolResult { call_id, tool, is_error, output });
        if !result.is_empty() {
            extra.insert(index.to_string(), Value::Object(result));
        }
    }
    put_nonempty(&mut record.meta, "contentExtra", extra);
    record
}

/// A result's content as text: a string, `{"Text": …}`, `{type: "text", text}`, or a list of
/// those; anything else as JSON.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Object(map) => match (map.get("Text"), str_of(map, "text")) {
            (Some(Value::String(text)), _) => text.clone(),
            (_, Some(text)) => text.to_owned(),
            _ => canonical_json(content),
        },
        Value::Array(items) => items.iter().map(result_text).collect::<Vec<_>>().join("\n"),
        other => canonical_json(other),
    }
}

#[cfg(test)]
mod tests;
