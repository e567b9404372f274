//! Factory's Droid session JSONL (`~/.factory/sessions/<cwd>/<session>.jsonl`): a
//! `session_start` line, then one typed line per event, appended.
//!
//! `session_start` (`{id, title, sessionTitle, owner, version, cwd, callingSessionId?,
//! callingToolUseId?}`) names the session by its `id` and is a system record of meta; a
//! sub-agent's session (a Task run) names the session that called it, kept in
//! `meta.parentSession` on every record. `message` lines (`{id, parentId?, timestamp,
//! message: {role, content}}`) are records whose entryId is their `id`, `content` Anthropic
//! Messages parts (text, thinking, tool uses, tool results, images); a user message of tool
//! results only is a tool record. `compaction_state` is a system record whose text is the
//! summary (`summaryText`; the messages it summarised stay); `todo_state`,
//! `session_settings`, `agent_turn_outcome` and other lines system records of meta. What no
//! block holds stays in `meta` under its own key (`message` without its content,
//! `contentExtra` for parts' other fields, `parentId`).
//!
//! Droid is closed source: docs/import.md names the readers followed.

use serde_json::{Map, Value};

use super::anthropic::{content_blocks, Dialect};
use super::lines::read_json_lines;
use super::session::{
    line_object, put, put_all, put_nonempty, str_of, take_str, usable_id, usable_name, SessionBuilder,
};
use super::{ParseOptions, ParsedTranscript, TranscriptFormat};
use annal_engine::{canonical_json, Block, Record, Role};

/// The line types Droid writes besides `message`.
const LINE_TYPES: [&str; 6] = [
    "session_start",
    "todo_state",
    "compaction_state",
    "session_settings",
    "agent_turn_outcome",
    "session_end",
];
/// The roles of a message.
const ROLES: [&str; 3] = ["user", "assistant", "system"];

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut builder = SessionBuilder::new("factory", true);
    let (mut name, mut caller): (Option<String>, Option<String>) = (None, None);
    let mut parsed = ParsedTranscript::default();
    read_json_lines(
        bytes,
        options,
        TranscriptFormat::Factory,
        is_factory_line,
        &mut parsed,
        |number, value| {
            if let Some(start) = value.as_object().filter(|map| str_of(map, "type") == Some("session_start"))
            {
                if name.is_none() {
                    name = str_of(start, "id").filter(|id| usable_name(id)).map(str::to_owned);
                    caller = str_of(start, "callingSessionId").map(str::to_owned);
                }
            }
            builder.push(number, line_record(value), None);
        },
    );
    if !builder.is_empty() {
        let parent: Vec<(&str, String)> = caller
            .into_iter()
            .map(|caller| ("parentSession", canonical_json(&Value::String(caller))))
            .collect();
        parsed.sessions.push(builder.finish(name.unwrap_or_else(|| stem.to_owned()), None, None, &parent));
    }
    parsed
}

/// Whether a line is the session's first (`session_start` with its `id` and `title`), which
/// only Droid writes.
pub(super) fn is_factory_signature(map: &Map<String, Value>) -> bool {
    str_of(map, "type") == Some("session_start")
        && map.get("id").is_some_and(Value::is_string)
        && (map.contains_key("title") || map.contains_key("sessionTitle"))
        && !map.contains_key("payload")
}

/// Whether a line is one Droid writes: the start, a message (its `id`, `timestamp` and a
/// message of a known role whose content is parts or text, with no time of its own, which
/// Pi's messages carry), or a line of another type Droid writes.
pub(super) fn is_factory_line(map: &Map<String, Value>) -> bool {
    match str_of(map, "type") {
        Some("message") => {
            let Some(message) = map.get("message").and_then(Value::as_object) else { return false };
            map.get("id").is_some_and(Value::is_string)
                && map.get("timestamp").is_some_and(Value::is_string)
                && str_of(message, "role").is_some_and(|role| ROLES.contains(&role))
                && message.get("content").is_some_and(|c| c.is_array() || c.is_string())
                && !message.contains_key("timestamp")
        }
        Some("session_start") => is_factory_signature(map),
        Some(kind) => {
            LINE_TYPES.contains(&kind) && !map.contains_key("payload") && !map.contains_key("sessionId")
        }
        None => false,
    }
}

/// The record of one line (see the module comment).
fn line_record(value: Value) -> Record {
    let mut record = Record::new(String::new(), Role::System, Vec::new());
    let Some(mut map) = line_object(value, &mut record) else { return record };
    let kind = str_of(&map, "type").unwrap_or_default().to_owned();
    if kind == "message" {
        if let Some(id) = str_of(&map, "id").filter(|id| usable_id(id)) {
            record.entry_id = id.to_owned();
        }
        if let Some(Value::Object(mut message)) = map.remove("message") {
            message_into(&mut message, &mut record);
            put(&mut record.meta, "message", &Value::Object(message));
        }
        map.remove("type");
        map.remove("id");
    } else if kind == "compaction_state" {
        if let Some(summary) = take_str(&mut map, "summaryText") {
            record.blocks.push(Block::Text { text: summary });
        }
    }
    put_all(&mut record.meta, map);
    record
}

/// A message's role and content parts into `record`, taken out of `message`.
fn message_into(message: &mut Map<String, Value>, record: &mut Record) {
    let mut only_results = false;
    match message.remove("content") {
        Some(Value::Array(parts)) => {
            let content = content_blocks(parts, Dialect::ClaudeCode);
            record.blocks = content.blocks;
            only_results = content.only_results;
            put_nonempty(&mut record.meta, "contentExtra", content.extra);
        }
        Some(Value::String(text)) => record.blocks.push(Block::Text { text }),
        Some(other) => {
            message.insert("content".into(), other);
        }
        None => {}
    }
    record.role = match str_of(message, "role") {
        Some("user") if only_results => Role::Tool,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        _ => Role::System,
    };
}

#[cfg(test)]
mod tests;
