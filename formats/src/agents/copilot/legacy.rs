//! GitHub Copilot CLI sessions before 0.0.342 (`~/.copilot/history-session-state/
//! session_<session>_<start ms>.json`): one JSON document per session, `{sessionId, startTime,
//! chatMessages, timeline, selectedModel?}`, rewritten whole after every change. Later CLIs
//! move a session to the event log when it is resumed and delete the file; the rest stay.
//!
//! The `timeline` is what the user saw, one entry `{id, timestamp, type, …}` per line of it,
//! and each entry is one record whose entryId is its `id`: `user` a user record of its `text`,
//! `copilot` an assistant record of its `text`, `tool_call_requested` an assistant record of
//! the call (`callId`, `name`, `arguments`), `tool_call_completed` a tool record of its result
//! (failed unless the result's `type` is `success`; its `log`, else its `markdown`), `info` and
//! `error` system records of their text. `chatMessages` are the same turns as sent to the
//! model; of them only the system and developer messages, which the timeline lacks, are kept,
//! each a system record `copilot:<session>:chat:<index>`. The session's other fields follow in
//! a system record named by their hash. An entry changed by a later save (a reply that went on
//! streaming) is stored by the loader as a revision; `/clear` empties both lists, and what was
//! stored stays.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::agents::lines::document_object;
use crate::agents::session::{
    fields_record, put, put_all, str_of, take_array, take_str, take_timestamp, text_of, usable_id,
    usable_name, SessionBuilder,
};
use crate::agents::{ParseOptions, ParsedTranscript};
use annal_engine::{Block, Record, Role};

/// The timeline entry types the CLI writes.
const ENTRY_TYPES: [&str; 6] =
    ["user", "copilot", "info", "error", "tool_call_requested", "tool_call_completed"];

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut parsed = ParsedTranscript::default();
    let Some(mut document) = document_object(bytes, options, &mut parsed, "a Copilot CLI session") else {
        return parsed;
    };
    let name = str_of(&document, "sessionId").filter(|id| usable_name(id)).unwrap_or(stem).to_owned();
    let mut builder = SessionBuilder::new("copilot", true);
    for (index, message) in take_array(&mut document, "chatMessages").into_iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str);
        if matches!(role, Some("system" | "developer")) {
            let mut record = Record::new(format!("copilot:{name}:chat:{}", index + 1), Role::System, vec![]);
            if let Value::Object(mut message) = message {
                if let Some(text) = message.get("content").and_then(Value::as_str).map(str::to_owned) {
                    message.remove("content");
                    record.blocks.push(Block::Text { text });
                }
                put_all(&mut record.meta, message);
            }
            builder.push(index + 1, record, None);
        }
    }
    for (index, entry) in take_array(&mut document, "timeline").into_iter().enumerate() {
        let (record, known) = entry_record(entry);
        *if known { &mut parsed.recognised } else { &mut parsed.unrecognised } += 1;
        builder.push(index + 1, record, None);
    }
    parsed.recognised += 1;
    builder.push(0, fields_record(&format!("copilot:{name}"), document), None);
    parsed.sessions.push(builder.finish(name, None, None, &[]));
    parsed
}

/// Whether a parsed document is such a session: a string `sessionId` and `startTime`, and the
/// `chatMessages` and `timeline` lists.
pub(in crate::agents) fn is_legacy_session(map: &Map<String, Value>) -> bool {
    map.get("sessionId").is_some_and(Value::is_string)
        && map.get("startTime").is_some_and(Value::is_string)
        && map.get("chatMessages").is_some_and(Value::is_array)
        && map.get("timeline").is_some_and(Value::is_array)
}

/// Whether `bytes` is such a session (see [`is_legacy_session`]), read without building it.
pub(in crate::agents) fn is_legacy_document(bytes: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(rename = "sessionId")]
        _session_id: String,
        #[serde(rename = "startTime")]
        _start_time: String,
        #[serde(rename = "chatMessages")]
        _chat_messages: Vec<IgnoredAny>,
        #[serde(rename = "timeline")]
        _timeline: Vec<IgnoredAny>,
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    serde_json::from_slice::<Probe>(bytes).is_ok()
}

/// One timeline entry as a record, and whether it is of a type the CLI writes.
fn entry_record(entry: Value) -> (Record, bool) {
    let mut record = Record::new(String::new(), Role::System, Vec::new());
    let Value::Object(mut entry) = entry else {
        put(&mut record.meta, "entry", &entry);
        return (record, false);
    };
    if let Some(id) = str_of(&entry, "id").filter(|id| usable_id(id)) {
        record.entry_id = id.to_owned();
        entry.remove("id");
    }
    record.timestamp = take_timestamp(&mut entry, "timestamp");
    let kind = str_of(&entry, "type").unwrap_or_default().to_owned();
    let known = ENTRY_TYPES.contains(&kind.as_str());
    match kind.as_str() {
        "user" | "copilot" | "info" | "error" => {
            record.role = match kind.as_str() {
                "user" => Role::User,
                "copilot" => Role::Assistant,
                _ => Role::System,
            };
            if let Some(text) = take_str(&mut entry, "text") {
                record.blocks.push(Block::Text { text });
            }
        }
        "tool_call_requested" => call_into(&mut entry, &mut record),
        "tool_call_completed" => result_into(&mut entry, &mut record),
        _ => {}
    }
    put_all(&mut record.meta, entry);
    (record, known)
}

/// A requested call's block, taken out of its entry.
fn call_into(entry: &mut Map<String, Value>, record: &mut Record) {
    let (Some(call_id), Some(tool)) = (take_str(entry, "callId"), take_str(entry, "name")) else { return };
    record.role = Role::Assistant;
    let input = entry.remove("arguments").map_or_else(|| "{}".to_owned(), |args| text_of(&args));
    record.blocks.push(Block::ToolCall { call_id, tool, input, target: String::new() });
}

/// A completed call's result block, taken out of its entry; its arguments stay in `meta`.
fn result_into(entry: &mut Map<String, Value>, record: &mut Record) {
    let Some(call_id) = take_str(entry, "callId") else { return };
    record.role = Role::Tool;
    let tool = take_str(entry, "name").unwrap_or_default();
    let mut output = String::new();
    let mut is_error = true;
    if let Some(result) = entry.get_mut("result").and_then(Value::as_object_mut) {
        is_error = str_of(result, "type") != Some("success");
        output = take_str(result, "log").or_else(|| take_str(result, "markdown")).unwrap_or_default();
    }
    record.blocks.push(Block::ToolResult { call_id, tool, is_error, output });
}
