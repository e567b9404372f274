//! Amp threads (`~/.local/share/amp/threads/T-<id>.json`, and what `amp threads export`
//! prints): one JSON document per thread, `{v, id, created, title?, env?, relationships?,
//! messages: [...], …}`, rewritten whole as the thread goes on.
//!
//! Each message `{role, messageId, content: [...], meta?, usage?, state?}` is one record,
//! `amp:<thread>:<messageId>` (Amp numbers a thread's messages and never reuses a number):
//! `user` a user record of its text and images (a tool record when it holds only tool
//! results), `assistant` an assistant record of its thinking, text and tool uses, `info` a
//! system record whose text is the summary a compaction or hand-off left. A `tool_result`
//! (`toolUseID`, `run: {status, result}`) is the result of its call, failed unless `done`. What
//! no block holds stays in `meta` (`contentExtra` by part index). The thread's other fields
//! (title, mode, environment, related threads) follow in a system record named by their hash;
//! a message changed by a later save is kept by the loader as a revision.
//!
//! Amp is closed source, and current versions keep threads on Amp's server: docs/import.md
//! names the readers followed.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::lines::{document_object, note_shape};
use super::session::{
    base64_bytes, content_parts, drop_lone_type, fields_record, put, put_all, put_nonempty, str_of,
    take_array, take_str, text_of, usable_name, SessionBuilder,
};
use super::{ParseOptions, ParsedTranscript};
use annal_engine::{canonical_json, Block, Record, Role};

/// Message roles Amp writes.
const ROLES: [&str; 3] = ["user", "assistant", "info"];

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut parsed = ParsedTranscript::default();
    let Some(mut thread) = document_object(bytes, options, &mut parsed, "an Amp thread") else {
        return parsed;
    };
    let shaped =
        thread.get("id").is_some_and(Value::is_string) && thread.get("messages").is_some_and(Value::is_array);
    note_shape(&mut parsed, shaped, "an Amp thread is an object with an \"id\" and a \"messages\" array");
    let name = str_of(&thread, "id").filter(|id| usable_name(id)).unwrap_or(stem).to_owned();
    let mut builder = SessionBuilder::new("amp", true);
    for (index, message) in take_array(&mut thread, "messages").into_iter().enumerate() {
        let (record, known) = message_record(message, &name);
        *if known { &mut parsed.recognised } else { &mut parsed.unrecognised } += 1;
        builder.push(index + 1, record, None);
    }
    let own = thread.contains_key("id") && thread.get("v").is_some_and(Value::is_u64);
    *if own { &mut parsed.recognised } else { &mut parsed.unrecognised } += 1;
    // What changes with every message is no field of the thread's.
    thread.remove("nextMessageId");
    builder.push(0, fields_record(&format!("amp:{name}"), thread), None);
    parsed.sessions.push(builder.finish(name, None, None, &[]));
    parsed
}

/// Whether a parsed document is an Amp thread (see [`is_amp_document`]).
pub(super) fn is_amp_thread(map: &Map<String, Value>) -> bool {
    let message_ok = |message: &Value| {
        message.get("role").and_then(Value::as_str).is_some_and(|role| ROLES.contains(&role))
            && message.get("content").is_some_and(Value::is_array)
    };
    map.get("v").is_some_and(Value::is_u64)
        && map.get("id").and_then(Value::as_str).is_some_and(|id| id.starts_with("T-"))
        && map.get("created").is_some_and(Value::is_number)
        && map
            .get("messages")
            .and_then(Value::as_array)
            .is_some_and(|messages| messages.iter().all(message_ok))
}

/// Whether `bytes` is an Amp thread: an object with a numeric `v`, an `id` of Amp's form
/// (`T-…`), a numeric `created` and `messages` of roles Amp writes, each with its content parts.
pub(super) fn is_amp_document(bytes: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(rename = "v")]
        _v: u64,
        id: String,
        #[serde(rename = "created")]
        _created: serde::de::IgnoredAny,
        messages: Vec<Message>,
    }
    #[derive(Deserialize)]
    struct Message {
        role: String,
        #[serde(rename = "content")]
        _content: Vec<serde::de::IgnoredAny>,
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    serde_json::from_slice::<Probe>(bytes).is_ok_and(|probe| {
        probe.id.starts_with("T-") && probe.messages.iter().all(|m| ROLES.contains(&m.role.as_str()))
    })
}

/// One message as a record, and whether it is a message Amp writes.
fn message_record(message: Value, thread: &str) -> (Record, bool) {
    let mut record = Record::new(String::new(), Role::System, Vec::new());
    let Value::Object(mut message) = message else {
        put(&mut record.meta, "value", &message);
        return (record, false);
    };
    if let Some(number) = message.get("messageId").filter(|id| id.is_u64() || id.is_string()) {
        record.entry_id = format!("amp:{thread}:{}", text_of(number));
    }
    let role = str_of(&message, "role").unwrap_or_default().to_owned();
    let known = ROLES.contains(&role.as_str()) && message.get("content").is_some_and(Value::is_array);
    let mut only_results = false;
    if let Some(content @ Value::Array(_)) = message.remove("content") {
        let parts = content.as_array().map_or(&[][..], Vec::as_slice);
        only_results = !parts.is_empty()
            && parts.iter().all(|p| p.get("type").and_then(Value::as_str) == Some("tool_result"));
        let extra = content_parts(content, &mut record.blocks, |part| {
            let block = part_block(part);
            if block.is_some() {
                drop_lone_type(part);
            }
            block
        });
        put_nonempty(&mut record.meta, "contentExtra", extra);
    }
    record.role = match role.as_str() {
        "user" if only_results => Role::Tool,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => Role::System,
    };
    put_all(&mut record.meta, message);
    (record, known)
}

/// The block of one content part, taking what it holds out of `part`.
fn part_block(part: &mut Map<String, Value>) -> Option<Block> {
    let kind = str_of(part, "type")?.to_owned();
    match kind.as_str() {
        "text" => take_str(part, "text").map(|text| Block::Text { text }),
        "thinking" => take_str(part, "thinking").map(|text| Block::Thinking { text }),
        "tool_use" => {
            let (Some(call_id), Some(tool)) = (take_str(part, "id"), take_str(part, "name")) else {
                return None;
            };
            let input = part.remove("input").map_or_else(|| "{}".to_owned(), |input| canonical_json(&input));
            Some(Block::ToolCall { call_id, tool, input, target: String::new() })
        }
        "tool_result" => result_block(part),
        "image" => image_block(part),
        "summary" => {
            let summary = part.get_mut("summary").and_then(Value::as_object_mut)?;
            take_str(summary, "summary").map(|text| Block::Text { text })
        }
        _ => None,
    }
}

/// A tool's result: `{toolUseID, run: {status, result?, error?}}`.
fn result_block(part: &mut Map<String, Value>) -> Option<Block> {
    let call_id = take_str(part, "toolUseID")?;
    let mut run = match part.remove("run") {
        Some(Value::Object(run)) => run,
        Some(other) => {
            part.insert("run".into(), other);
            Map::new()
        }
        None => Map::new(),
    };
    let is_error = str_of(&run, "status") != Some("done");
    if !is_error {
        run.remove("status");
    }
    let output = match (run.remove("result"), run.remove("error")) {
        (Some(Value::Object(mut result)), error) => {
            let output = match take_str(&mut result, "output") {
                Some(output) => {
                    // What the result holds beside its output (an exit code) stays.
                    if !result.is_empty() {
                        run.insert("result".into(), Value::Object(result));
                    }
                    output
                }
                None => canonical_json(&Value::Object(result)),
            };
            run.extend(error.map(|error| ("error".to_owned(), error)));
            output
        }
        (Some(result), error) => {
            run.extend(error.map(|error| ("error".to_owned(), error)));
            text_of(&result)
        }
        (None, Some(error)) => text_of(&error),
        (None, None) => String::new(),
    };
    if !run.is_empty() {
        part.insert("run".into(), Value::Object(run));
    }
    Some(Block::ToolResult { call_id, tool: String::new(), is_error, output })
}

/// An image part with its data inline (`source: {type: "base64", mediaType, data}`).
fn image_block(part: &mut Map<String, Value>) -> Option<Block> {
    let source = part.get_mut("source").and_then(Value::as_object_mut)?;
    let data = base64_bytes(str_of(source, "data")?)?;
    source.remove("data");
    let media_type =
        take_str(source, "mediaType").or_else(|| take_str(source, "media_type")).unwrap_or_default();
    if source.get("type").and_then(Value::as_str) == Some("base64") && source.len() == 1 {
        part.remove("source");
    }
    Some(Block::Blob { media_type, data })
}

#[cfg(test)]
mod tests;
