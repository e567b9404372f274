//! OpenHands events: one JSON object per event file (the CLI's
//! `~/.openhands/conversations/<id>/events/event-<n>-<uuid>.json`, the older server's
//! `~/.openhands/sessions/<id>/events/<n>.json`), or an array of them (a trajectory export).
//!
//! Two schemas, told apart by their fields:
//! - the current one (the agent SDK's, `kind`-tagged, `id` a UUID): a `MessageEvent` is a user
//!   or assistant record of its `llm_message` text; an `ActionEvent` an assistant record of its
//!   thought (text), reasoning (thinking) and tool call; an `ObservationEvent` a tool record of
//!   the result for its `tool_call_id`. entryIds are the event ids.
//! - the older one (`id` a number, `action` or `observation`): a `message` action is a user or
//!   assistant record (by `source`); another agent action an assistant record of its call (the
//!   tool call's id and function where `tool_call_metadata` names them); an observation a tool
//!   record of its `content`, failed for an `error` observation. entryIds are
//!   `openhands:<session>:<id>`.
//!
//! Other events (state changes, system prompts, condensations, …) are system records of meta;
//! what no block holds stays in `meta` under its own key. The session is named by the
//! conversation's folder (the caller's stem); timestamps without a time zone stay in `meta`.

use serde_json::{Map, Value};

use super::lines::{document_value, note_shape};
use super::session::{line_object, put_all, str_of, take_str, text_of, usable_id, SessionBuilder};
use super::{ParseOptions, ParsedTranscript, SkipReason, Skipped};
use annal_engine::{Block, Record, Role};

/// Where an event came from.
const SOURCES: [&str; 4] = ["user", "agent", "environment", "hook"];

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut parsed = ParsedTranscript::default();
    let events = match document_value(bytes, options, &mut parsed) {
        Some(Value::Array(events)) => events,
        Some(event @ Value::Object(_)) => vec![event],
        Some(_) => {
            let reason = SkipReason::Invalid("an OpenHands event is a JSON object".into());
            parsed.skipped.push(Skipped { line: 1, reason });
            return parsed;
        }
        None => return parsed,
    };
    let shaped = events.iter().any(|event| event.as_object().is_some_and(is_event));
    let reason = "an OpenHands event is an object with its \"id\", \"timestamp\" and \"source\"";
    note_shape(&mut parsed, shaped, reason);
    let mut builder = SessionBuilder::new("openhands", true);
    for (index, event) in events.into_iter().enumerate() {
        let known = event.as_object().is_some_and(is_event);
        *if known { &mut parsed.recognised } else { &mut parsed.unrecognised } += 1;
        builder.push(index + 1, event_record(event, stem), None);
    }
    if !builder.is_empty() {
        parsed.sessions.push(builder.finish(stem.to_owned(), None, None, &[]));
    }
    parsed
}

/// Whether an object is an event: an `id`, a `timestamp`, a `source` OpenHands names, and a
/// `kind` (current) or, with a numeric id, no `kind` (older).
pub(super) fn is_event(map: &Map<String, Value>) -> bool {
    let source = str_of(map, "source").is_some_and(|source| SOURCES.contains(&source));
    let current =
        map.get("kind").is_some_and(Value::is_string) && map.get("id").is_some_and(Value::is_string);
    let older = map.get("id").is_some_and(Value::is_u64)
        && !map.contains_key("kind")
        && (map.contains_key("action") || map.contains_key("observation") || map.contains_key("message"));
    source && map.get("timestamp").is_some_and(Value::is_string) && (current || older)
}

/// Whether `bytes` is an event file or a trajectory (an array of events).
pub(super) fn is_events_document(bytes: &[u8]) -> bool {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(event)) => is_event(&event),
        Ok(Value::Array(events)) => {
            !events.is_empty() && events.iter().all(|e| e.as_object().is_some_and(is_event))
        }
        _ => false,
    }
}

fn event_record(event: Value, session: &str) -> Record {
    let mut record = Record::new(String::new(), Role::System, Vec::new());
    let Some(mut map) = line_object(event, &mut record) else { return record };
    let from_user = str_of(&map, "source") == Some("user");
    if let Some(kind) = str_of(&map, "kind").map(str::to_owned) {
        if let Some(id) = str_of(&map, "id").filter(|id| usable_id(id)) {
            record.entry_id = id.to_owned();
        }
        current_into(&kind, from_user, &mut map, &mut record);
    } else {
        if let Some(id) = map.get("id").and_then(Value::as_u64) {
            record.entry_id = format!("openhands:{session}:{id}");
        }
        older_into(from_user, &mut map, &mut record);
    }
    put_all(&mut record.meta, map);
    record
}

/// The blocks of an event of the agent SDK's schema.
fn current_into(kind: &str, from_user: bool, map: &mut Map<String, Value>, record: &mut Record) {
    match kind {
        "MessageEvent" => {
            record.role = if from_user { Role::User } else { Role::Assistant };
            if let Some(Value::Object(message)) = map.get_mut("llm_message") {
                if let Some(text) = message.remove("content").map(|content| content_text(&content)) {
                    record.blocks.push(Block::Text { text });
                }
            }
        }
        "ActionEvent" => {
            record.role = Role::Assistant;
            if let Some(text) = take_str(map, "reasoning_content").filter(|text| !text.is_empty()) {
                record.blocks.push(Block::Thinking { text });
            }
            if let Some(thought) = map.remove("thought") {
                let text = content_text(&thought);
                if !text.is_empty() {
                    record.blocks.push(Block::Text { text });
                }
            }
            let call_id = take_str(map, "tool_call_id").unwrap_or_default();
            let tool = take_str(map, "tool_name").unwrap_or_default();
            let arguments = map.get("tool_call").and_then(|call| call.get("arguments")).map(text_of);
            let input = arguments.or_else(|| map.get("action").map(text_of)).unwrap_or_else(|| "{}".into());
            record.blocks.push(Block::ToolCall { call_id, tool, input, target: String::new() });
        }
        "ObservationEvent" | "AgentErrorEvent" | "UserRejectObservation" => {
            record.role = Role::Tool;
            let call_id = take_str(map, "tool_call_id").unwrap_or_default();
            let tool = take_str(map, "tool_name").unwrap_or_default();
            let observation = map.get("observation");
            let content = observation.and_then(|o| o.get("content")).or_else(|| map.get("error"));
            let output = content.map(content_text).unwrap_or_default();
            let is_error = kind != "ObservationEvent"
                || observation.and_then(|o| o.get("is_error")).and_then(Value::as_bool) == Some(true);
            record.blocks.push(Block::ToolResult { call_id, tool, is_error, output });
        }
        _ => {}
    }
}

/// The blocks of an event of the older schema.
fn older_into(from_user: bool, map: &mut Map<String, Value>, record: &mut Record) {
    let metadata = map.get("tool_call_metadata");
    let call_id = metadata.and_then(|m| m.get("tool_call_id")).and_then(Value::as_str).map(str::to_owned);
    let function = metadata.and_then(|m| m.get("function_name")).and_then(Value::as_str).map(str::to_owned);
    if let Some(action) = str_of(map, "action").map(str::to_owned) {
        let args = map.get("args").and_then(Value::as_object);
        if action == "message" {
            record.role = if from_user { Role::User } else { Role::Assistant };
            if let Some(text) = args.and_then(|args| str_of(args, "content")) {
                record.blocks.push(Block::Text { text: text.to_owned() });
            }
        } else if str_of(map, "source") == Some("agent") {
            record.role = Role::Assistant;
            if let Some(thought) = args.and_then(|args| str_of(args, "thought")).filter(|t| !t.is_empty()) {
                record.blocks.push(Block::Text { text: thought.to_owned() });
            }
            let id = map.get("id").and_then(Value::as_u64).unwrap_or_default();
            let input = args.map_or_else(|| "{}".to_owned(), |args| text_of(&Value::Object(args.clone())));
            record.blocks.push(Block::ToolCall {
                call_id: call_id.unwrap_or_else(|| format!("openhands:{id}")),
                tool: function.unwrap_or(action),
                input,
                target: String::new(),
            });
        }
    } else if let Some(observation) = str_of(map, "observation").map(str::to_owned) {
        if str_of(map, "source") == Some("agent") || call_id.is_some() {
            record.role = Role::Tool;
            let cause = map.get("cause").and_then(Value::as_u64).unwrap_or_default();
            let output = take_str(map, "content").unwrap_or_default();
            record.blocks.push(Block::ToolResult {
                call_id: call_id.unwrap_or_else(|| format!("openhands:{cause}")),
                tool: function.unwrap_or_else(|| observation.clone()),
                is_error: observation == "error",
                output,
            });
        }
    }
}

/// Message content as text: a string, or the text of its parts (`{type: "text", text}`).
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => {
            let texts: Vec<&str> =
                parts.iter().filter_map(|part| part.get("text").and_then(Value::as_str)).collect();
            texts.join("\n")
        }
        Value::Object(part) => str_of(part, "text").map_or_else(|| text_of(content), str::to_owned),
        other => text_of(other),
    }
}

#[cfg(test)]
mod tests;
