//! GitHub Copilot CLI session events (`~/.copilot/session-state/<session>/events.jsonl`): one
//! typed event per line, `{id, type, timestamp, parentId, data}`, appended.
//!
//! Every event is one record whose entryId is its `id`. `session.start` names the session
//! (`data.sessionId`; else the session's folder) and is a system record of meta;
//! `user.message` is a user record of its `content`; `assistant.message` an assistant record of
//! its `content` (`data.reasoningText`, where a build writes it, as thinking);
//! `tool.execution_start` an assistant record of the call (`toolCallId`, `toolName`,
//! `arguments`); `tool.execution_complete` a tool record of its result (failed unless
//! `success`, the `error`'s message when there is no content). Every other event (turn
//! boundaries, usage, streamed deltas, whose text the finished message repeats, title changes,
//! errors) is a system record of meta. What no block holds stays in `meta` under its own key
//! (`data` without what went into blocks, `parentId`, `type`).
//!
//! The older whole-session documents (`history-session-state/*.json`) are read by `legacy.rs`.
//!
//! The CLI is closed source: the shapes followed are those the Copilot Chat extension for VS
//! Code reads back (docs/import.md names the version).

use serde_json::{Map, Value};

use super::lines::read_json_lines;
use super::session::{
    line_object, put, put_all, str_of, take_str, text_of, usable_id, usable_name, SessionBuilder,
};
use super::{ParseOptions, ParsedTranscript, TranscriptFormat};
use annal_engine::{Block, Record, Role};

/// The namespaces of the event types the CLI writes.
const NAMESPACES: [&str; 6] = ["session", "user", "assistant", "tool", "subagent", "hook"];

mod legacy;

pub(super) use self::legacy::{is_legacy_document, is_legacy_session};

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    if is_legacy_document(bytes) {
        return legacy::parse(bytes, stem, options);
    }
    let mut builder = SessionBuilder::new("copilot", true);
    let mut name: Option<String> = None;
    let mut parsed = ParsedTranscript::default();
    read_json_lines(
        bytes,
        options,
        TranscriptFormat::Copilot,
        is_copilot_line,
        &mut parsed,
        |number, value| {
            if name.is_none() {
                name = session_id(&value);
            }
            builder.push(number, event_record(value), None);
        },
    );
    if !builder.is_empty() {
        parsed.sessions.push(builder.finish(name.unwrap_or_else(|| stem.to_owned()), None, None, &[]));
    }
    parsed
}

/// Whether a line is an event: a namespaced `type` (`user.message`), its `data` object, its
/// `id` and `timestamp`, and no `payload` (Codex's envelope).
pub(super) fn is_copilot_line(map: &Map<String, Value>) -> bool {
    let namespaced = str_of(map, "type")
        .and_then(|kind| kind.split_once('.'))
        .is_some_and(|(namespace, rest)| NAMESPACES.contains(&namespace) && !rest.is_empty());
    namespaced
        && map.get("data").is_some_and(Value::is_object)
        && map.get("id").is_some_and(Value::is_string)
        && map.get("timestamp").is_some_and(Value::is_string)
        && !map.contains_key("payload")
}

/// The session id a `session.start` event names.
fn session_id(value: &Value) -> Option<String> {
    let map = value.as_object().filter(|map| str_of(map, "type") == Some("session.start"))?;
    let id = map.get("data")?.get("sessionId")?.as_str()?;
    usable_name(id).then(|| id.to_owned())
}

/// The record of one event (see the module comment).
fn event_record(value: Value) -> Record {
    let mut record = Record::new(String::new(), Role::System, Vec::new());
    let Some(mut map) = line_object(value, &mut record) else { return record };
    if let Some(id) = str_of(&map, "id").filter(|id| usable_id(id)) {
        record.entry_id = id.to_owned();
    }
    let kind = str_of(&map, "type").unwrap_or_default().to_owned();
    if let Some(Value::Object(mut data)) = map.remove("data") {
        data_into(&kind, &mut data, &mut record);
        put(&mut record.meta, "data", &Value::Object(data));
    }
    put_all(&mut record.meta, map);
    record
}

/// The blocks and role an event's `data` gives, taking what went into blocks out of it.
fn data_into(kind: &str, data: &mut Map<String, Value>, record: &mut Record) {
    match kind {
        "user.message" => {
            record.role = Role::User;
            if let Some(text) = take_str(data, "content") {
                record.blocks.push(Block::Text { text });
            }
        }
        "assistant.message" => {
            record.role = Role::Assistant;
            if let Some(text) = take_str(data, "reasoningText").filter(|text| !text.is_empty()) {
                record.blocks.push(Block::Thinking { text });
            }
            if let Some(text) = take_str(data, "content").filter(|text| !text.is_empty()) {
                record.blocks.push(Block::Text { text });
            }
        }
        "tool.execution_start" => {
            let (Some(call_id), Some(tool)) = (take_str(data, "toolCallId"), take_str(data, "toolName"))
            else {
                return;
            };
            record.role = Role::Assistant;
            let input = data.remove("arguments").map_or_else(|| "{}".to_owned(), |args| text_of(&args));
            record.blocks.push(Block::ToolCall { call_id, tool, input, target: String::new() });
        }
        "tool.execution_complete" => {
            let Some(call_id) = take_str(data, "toolCallId") else { return };
            record.role = Role::Tool;
            let tool = take_str(data, "toolName").unwrap_or_default();
            let is_error = data.get("success").and_then(Value::as_bool) != Some(true);
            let content =
                data.get_mut("result").and_then(Value::as_object_mut).and_then(|r| take_str(r, "content"));
            let error = data.get("error").and_then(|e| e.get("message")).and_then(Value::as_str);
            let output = content.or_else(|| error.map(str::to_owned)).unwrap_or_default();
            record.blocks.push(Block::ToolResult { call_id, tool, is_error, output });
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
