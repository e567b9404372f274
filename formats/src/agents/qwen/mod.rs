//! Qwen Code chat JSONL (`~/.qwen/projects/<project>/chats/<session>.jsonl`): one `ChatRecord`
//! per line, appended, no header.
//!
//! A record `{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd, version, message?, …}`
//! is one annal record whose entryId is its `uuid`. `message` is Google GenAI content
//! (`{role: "user" | "model", parts}`): `text` parts become text (thinking when `thought` is
//! set), `functionCall` parts calls, `functionResponse` parts results, `inlineData` blobs.
//! `user` is a user record, `assistant` an assistant record, `tool_result` a tool record,
//! `system` a system record whose text, for a `chat_compression`, is the summary that replaced
//! the history (the records it summarised stay). What no block holds stays in `meta` under its
//! own key (`message` without its parts, `contentExtra` for parts' other fields, `parentUuid`,
//! `systemPayload`, …). A sub-agent's file (`isSidechain` with an `agentId`) is a session of its
//! own, `<session>/agent-<id>`, named like Claude Code's.

use serde_json::{Map, Value};

use super::lines::read_json_lines;
use super::session::{
    base64_bytes, line_object, put, put_all, put_nonempty, str_of, take_str, text_of, usable_id, usable_name,
    SessionBuilder,
};
use super::{ParseOptions, ParsedTranscript, TranscriptFormat};
use annal_engine::{canonical_json, Block, Record, Role};

/// Record types Qwen Code writes.
const RECORD_TYPES: [&str; 4] = ["user", "assistant", "tool_result", "system"];

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut builder = SessionBuilder::new("qwen", true);
    let mut session: Option<String> = None;
    let mut agent: Option<String> = None;
    let mut parsed = ParsedTranscript::default();
    read_json_lines(bytes, options, TranscriptFormat::Qwen, is_qwen_line, &mut parsed, |number, value| {
        if let Some(map) = value.as_object().filter(|map| is_qwen_line(map)) {
            if session.is_none() {
                session = str_of(map, "sessionId").filter(|id| usable_name(id)).map(str::to_owned);
            }
            if agent.is_none() && map.get("isSidechain").and_then(Value::as_bool) == Some(true) {
                agent = str_of(map, "agentId").filter(|id| usable_name(id)).map(str::to_owned);
            }
        }
        builder.push(number, line_record(value), None);
    });
    if !builder.is_empty() {
        let (name, extra) = match (session, agent) {
            (Some(parent), Some(agent)) => {
                let parent_meta = canonical_json(&Value::String(parent.clone()));
                (format!("{parent}/agent-{agent}"), vec![("parentSession", parent_meta)])
            }
            (Some(id), None) => (id, Vec::new()),
            (None, _) => (stem.to_owned(), Vec::new()),
        };
        parsed.sessions.push(builder.finish(name, None, None, &extra));
    }
    parsed
}

/// Whether a line is a `ChatRecord`: its `uuid`, `sessionId` and a record type, and a message
/// of Google GenAI parts (never Claude Code's `content`) where it has one.
pub(super) fn is_qwen_line(map: &Map<String, Value>) -> bool {
    let has_str = |key| map.get(key).is_some_and(Value::is_string);
    let Some(kind) = str_of(map, "type").filter(|kind| RECORD_TYPES.contains(kind)) else { return false };
    if !(has_str("uuid") && has_str("sessionId") && has_str("timestamp")) {
        return false;
    }
    match map.get("message") {
        Some(Value::Object(message)) => message.get("parts").is_some_and(Value::is_array),
        Some(_) => false,
        None => kind == "system" && map.contains_key("systemPayload"),
    }
}

/// The record of one line (see the module comment).
fn line_record(value: Value) -> Record {
    let mut record = Record::new(String::new(), Role::System, Vec::new());
    let Some(mut map) = line_object(value, &mut record) else { return record };
    if let Some(uuid) = str_of(&map, "uuid").filter(|id| usable_id(id)) {
        record.entry_id = uuid.to_owned();
    }
    record.role = match str_of(&map, "type") {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool_result") => Role::Tool,
        _ => Role::System,
    };
    if let Some(Value::Object(mut message)) = map.remove("message") {
        if let Some(Value::Array(parts)) = message.remove("parts") {
            let extra = parts_into(parts, &mut record.blocks);
            put_nonempty(&mut record.meta, "contentExtra", extra);
        }
        put(&mut record.meta, "message", &Value::Object(message));
    }
    if str_of(&map, "subtype") == Some("chat_compression") {
        let summary =
            map.get("systemPayload").and_then(|payload| payload.get("summary")).and_then(Value::as_str);
        if let Some(summary) = summary {
            record.blocks.push(Block::Text { text: summary.to_owned() });
        }
    }
    // A result's status is Qwen Code's own record of whether the call failed.
    let failed = map.get("toolCallResult").and_then(|result| result.get("status")).and_then(Value::as_str)
        == Some("error");
    if failed {
        for block in &mut record.blocks {
            if let Block::ToolResult { is_error, .. } = block {
                *is_error = true;
            }
        }
    }
    put_all(&mut record.meta, map);
    record
}

/// GenAI parts as blocks appended to `blocks`; returns, keyed by part index, each part's
/// fields that no block holds (a part of an unknown kind whole).
fn parts_into(parts: Vec<Value>, blocks: &mut Vec<Block>) -> Map<String, Value> {
    let mut extra = Map::new();
    for (index, part) in parts.into_iter().enumerate() {
        let Value::Object(mut part) = part else {
            extra.insert(index.to_string(), part);
            continue;
        };
        if let Some(block) = part_block(&mut part) {
            blocks.push(block);
        }
        if !part.is_empty() {
            extra.insert(index.to_string(), Value::Object(part));
        }
    }
    extra
}

/// The block of one part, taking what it uses out of `part`.
fn part_block(part: &mut Map<String, Value>) -> Option<Block> {
    if part.get("text").is_some_and(Value::is_string) {
        let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
        let text = take_str(part, "text")?;
        if thought {
            part.remove("thought");
            return Some(Block::Thinking { text });
        }
        return Some(Block::Text { text });
    }
    if let Some(Value::Object(mut call)) = part.remove("functionCall") {
        let tool = take_str(&mut call, "name").unwrap_or_default();
        let call_id = take_str(&mut call, "id").unwrap_or_default();
        let input = call.remove("args").map_or_else(|| "{}".to_owned(), |args| text_of(&args));
        if !call.is_empty() {
            part.insert("functionCall".into(), Value::Object(call));
        }
        return Some(Block::ToolCall { call_id, tool, input, target: String::new() });
    }
    if let Some(Value::Object(mut response)) = part.remove("functionResponse") {
        let tool = take_str(&mut response, "name").unwrap_or_default();
        let call_id = take_str(&mut response, "id").unwrap_or_default();
        let (output, is_error) = match response.remove("response") {
            Some(Value::Object(mut body)) => {
                let (output, error) = (body.remove("output"), body.remove("error"));
                let result = match (&output, &error) {
                    (_, Some(error)) => (text_of(error), true),
                    (Some(output), None) => (text_of(output), false),
                    (None, None) => (canonical_json(&Value::Object(std::mem::take(&mut body))), false),
                };
                // What the block does not hold (an output beside an error, other fields) stays.
                if let (Some(output), Some(_)) = (output, &error) {
                    body.insert("output".into(), output);
                }
                if !body.is_empty() {
                    response.insert("response".into(), Value::Object(body));
                }
                result
            }
            Some(other) => (text_of(&other), false),
            None => (String::new(), false),
        };
        if !response.is_empty() {
            part.insert("functionResponse".into(), Value::Object(response));
        }
        return Some(Block::ToolResult { call_id, tool, is_error, output });
    }
    if let Some(Value::Object(mut inline)) = part.remove("inlineData") {
        if let Some(data) = str_of(&inline, "data").and_then(base64_bytes) {
            let media_type = take_str(&mut inline, "mimeType").unwrap_or_default();
            inline.remove("data");
            if !inline.is_empty() {
                part.insert("inlineData".into(), Value::Object(inline));
            }
            return Some(Block::Blob { media_type, data });
        }
        part.insert("inlineData".into(), Value::Object(inline));
    }
    None
}

#[cfg(test)]
mod tests;
