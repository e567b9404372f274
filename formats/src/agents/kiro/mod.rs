//! Kiro CLI conversations (formerly the Amazon Q Developer CLI): one row of its SQLite
//! `conversations_v2` table per conversation (`conversations`, one per folder, in older
//! builds), whose `value` is the whole conversation as JSON, replaced on every turn.
//!
//! A conversation `{conversation_id, history: [{user, assistant, request_metadata?}],
//! latest_summary?, model_info?, …}` gives two records per history entry (a two-element array
//! in builds before July 2025): the user's message (`Prompt` a user record of its text and
//! images; `ToolUseResults` and `CancelledToolUses` a tool record of the results) and the
//! assistant's (`Response` its text and thinking, `ToolUse` with its calls). Kiro keeps no id on
//! a user message and trims the history when it compacts, so an entry's records are named by
//! its content, `kiro:<conversation>/<16 hex digits>` (`…/user`, `…/assistant`): an entry keeps
//! its ids when earlier ones are dropped. A compaction's `latest_summary` is a system record of
//! its text (the entries it replaced stay stored); the conversation's steady fields (the
//! folder, the model) follow in a system record named by their hash. What no block holds stays
//! in `meta`.

use serde_json::{Map, Value};

use super::session::{fields_record, put, put_all, put_nonempty, str_of, take_str, text_of, usable_name};
use super::session::{take_timestamp, SessionBuilder};
use super::ParsedSession;
use annal_engine::{canonical_json, Block, Record, Role};

/// One row of `conversations_v2` (or of the older `conversations`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KiroConversationRow {
    /// `key`: the folder the conversation was held in.
    pub key: String,
    /// `conversation_id` (the value's own id in the older table).
    pub conversation_id: String,
    /// `value`: the conversation's JSON.
    pub value: Vec<u8>,
}

/// The conversation fields kept in its system record: those a turn does not change.
const STEADY_FIELDS: [&str; 3] = ["conversation_id", "model", "model_info"];

/// The records of one conversation; or why its value cannot be read.
///
/// # Errors
/// A line naming what is wrong with the value (not JSON, not a conversation).
pub fn parse_kiro_conversation(row: &KiroConversationRow) -> Result<ParsedSession, String> {
    let mut conversation = match serde_json::from_slice::<Value>(&row.value) {
        Ok(Value::Object(conversation)) => conversation,
        Ok(_) => return Err("its value is not a JSON object".into()),
        Err(err) => return Err(format!("its value is not JSON ({err})")),
    };
    let Some(Value::Array(history)) = conversation.remove("history") else {
        return Err("its value has no history".into());
    };
    let id = str_of(&conversation, "conversation_id").unwrap_or(&row.conversation_id).to_owned();
    let name = if usable_name(&id) { id } else { "kiro".to_owned() };
    let mut builder = SessionBuilder::new("kiro", true);
    for (index, entry) in history.into_iter().enumerate() {
        let hash = blake3::hash(canonical_json(&entry).as_bytes()).to_hex();
        let id = format!("kiro:{name}/{}", &hash.as_str()[..16]);
        for record in entry_records(entry, &id) {
            builder.push(index + 1, record, None);
        }
    }
    if let Some(summary) = conversation.remove("latest_summary").filter(|summary| !summary.is_null()) {
        builder.push(0, summary_record(&name, summary), None);
    }
    let mut steady: Map<String, Value> = conversation
        .into_iter()
        .filter(|(key, value)| STEADY_FIELDS.contains(&key.as_str()) && !value.is_null())
        .collect();
    steady.insert("key".into(), Value::String(row.key.clone()));
    builder.push(0, fields_record(&format!("kiro:{name}"), steady), None);
    Ok(builder.finish(name, None, None, &[]))
}

/// A history entry's records: `{user, assistant, request_metadata}`, or `[user, assistant]`.
fn entry_records(entry: Value, id: &str) -> Vec<Record> {
    let (user, assistant, metadata) = match entry {
        Value::Object(mut entry) => {
            let (user, assistant) = (entry.remove("user"), entry.remove("assistant"));
            (user, assistant, (!entry.is_empty()).then_some(Value::Object(entry)))
        }
        Value::Array(pair) => {
            let mut pair = pair.into_iter();
            let (user, assistant) = (pair.next(), pair.next());
            let rest: Vec<Value> = pair.collect();
            (user, assistant, (!rest.is_empty()).then_some(Value::Array(rest)))
        }
        other => {
            let mut record = Record::new(id.to_owned(), Role::System, Vec::new());
            put(&mut record.meta, "entry", &other);
            return vec![record];
        }
    };
    let mut out = Vec::new();
    if let Some(user) = user {
        out.push(user_record(user, &format!("{id}/user")));
    }
    if let Some(assistant) = assistant {
        let mut record = assistant_record(assistant, &format!("{id}/assistant"));
        if let Some(metadata) = &metadata {
            put(&mut record.meta, "request_metadata", metadata);
        }
        out.push(record);
    }
    out
}

/// A user message: a prompt, or the results of the calls the last answer made.
fn user_record(user: Value, id: &str) -> Record {
    let mut record = Record::new(id.to_owned(), Role::User, Vec::new());
    let Value::Object(mut user) = user else {
        put(&mut record.meta, "user", &user);
        return record;
    };
    record.timestamp = take_timestamp(&mut user, "timestamp");
    if let Some(Value::Object(mut content)) = user.remove("content") {
        if let Some(Value::Object(mut prompt)) = content.remove("Prompt") {
            if let Some(text) = take_str(&mut prompt, "prompt") {
                record.blocks.push(Block::Text { text });
            }
            put_nonempty(&mut record.meta, "Prompt", prompt);
        }
        for kind in ["ToolUseResults", "CancelledToolUses"] {
            let Some(Value::Object(mut results)) = content.remove(kind) else { continue };
            record.role = Role::Tool;
            if let Some(text) = take_str(&mut results, "prompt") {
                record.blocks.push(Block::Text { text });
            }
            if let Some(Value::Array(items)) = results.remove("tool_use_results") {
                let kept: Vec<Value> =
                    items.into_iter().filter_map(|item| result_block(item, &mut record)).collect();
                if !kept.is_empty() {
                    results.insert("tool_use_results".into(), Value::Array(kept));
                }
            }
            put_nonempty(&mut record.meta, kind, results);
        }
        if !content.is_empty() {
            put(&mut record.meta, "content", &Value::Object(content));
        }
    }
    if let Some(Value::Array(images)) = user.remove("images") {
        let kept: Vec<Value> =
            images.into_iter().filter_map(|image| image_block(image, &mut record)).collect();
        if !kept.is_empty() {
            user.insert("images".into(), Value::Array(kept));
        }
    }
    put_all(&mut record.meta, user);
    record
}

/// A tool's result as a block of `record`; the item back when it is not one.
fn result_block(item: Value, record: &mut Record) -> Option<Value> {
    let Value::Object(mut item) = item else { return Some(item) };
    let Some(call_id) = take_str(&mut item, "tool_use_id") else { return Some(Value::Object(item)) };
    let parts = match item.remove("content") {
        Some(Value::Array(parts)) => parts,
        Some(other) => vec![other],
        None => Vec::new(),
    };
    let texts: Vec<String> = parts
        .iter()
        .map(|part| match part.get("Text").and_then(Value::as_str) {
            Some(text) => text.to_owned(),
            None => part.get("Json").map_or_else(|| text_of(part), text_of),
        })
        .collect();
    let is_error = str_of(&item, "status") == Some("Error");
    if str_of(&item, "status").is_some_and(|status| matches!(status, "Error" | "Success")) {
        item.remove("status");
    }
    record.blocks.push(Block::ToolResult {
        call_id,
        tool: String::new(),
        is_error,
        output: texts.join("\n"),
    });
    (!item.is_empty()).then_some(Value::Object(item))
}

/// An image the user attached (`{format, source: {Bytes: [...]}}`) as a blob of `record`; the
/// value back when it is not one.
fn image_block(image: Value, record: &mut Record) -> Option<Value> {
    let bytes =
        image.get("source").and_then(|s| s.get("Bytes")).and_then(Value::as_array).and_then(|bytes| {
            bytes.iter().map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok())).collect::<Option<Vec<u8>>>()
        });
    let Some(data) = bytes else { return Some(image) };
    let format = image.get("format").and_then(Value::as_str).unwrap_or_default().to_ascii_lowercase();
    let media_type = if format.is_empty() { String::new() } else { format!("image/{format}") };
    record.blocks.push(Block::Blob { media_type, data });
    None
}

/// An answer: `Response` (text, thinking) or `ToolUse` (text, thinking and calls).
fn assistant_record(assistant: Value, id: &str) -> Record {
    let mut record = Record::new(id.to_owned(), Role::Assistant, Vec::new());
    let Value::Object(mut assistant) = assistant else {
        put(&mut record.meta, "assistant", &assistant);
        return record;
    };
    for kind in ["Response", "ToolUse"] {
        let Some(Value::Object(mut answer)) = assistant.remove(kind) else { continue };
        if let Some(Value::Object(mut thinking)) = answer.remove("thinking") {
            if let Some(text) = take_str(&mut thinking, "text") {
                record.blocks.push(Block::Thinking { text });
            }
            put_nonempty(&mut record.meta, "thinking", thinking);
        }
        if let Some(text) = take_str(&mut answer, "content").filter(|text| !text.is_empty()) {
            record.blocks.push(Block::Text { text });
        }
        if let Some(Value::Array(uses)) = answer.remove("tool_uses") {
            let mut kept = Vec::new();
            for call in uses {
                let Value::Object(mut call) = call else {
                    kept.push(call);
                    continue;
                };
                let (Some(call_id), Some(tool)) = (take_str(&mut call, "id"), take_str(&mut call, "name"))
                else {
                    kept.push(Value::Object(call));
                    continue;
                };
                let input = call.remove("args").map_or_else(|| "{}".to_owned(), |args| canonical_json(&args));
                record.blocks.push(Block::ToolCall { call_id, tool, input, target: String::new() });
                kept.extend((!call.is_empty()).then_some(Value::Object(call)));
            }
            if !kept.is_empty() {
                answer.insert("tool_uses".into(), Value::Array(kept));
            }
        }
        put_nonempty(&mut record.meta, kind, answer);
    }
    put_all(&mut record.meta, assistant);
    record
}

/// The summary a compaction left: a string, or `{summary, …}` in later builds.
fn summary_record(conversation: &str, summary: Value) -> Record {
    let hash = blake3::hash(canonical_json(&summary).as_bytes()).to_hex();
    let mut record =
        Record::new(format!("kiro:{conversation}:summary:{}", &hash.as_str()[..16]), Role::System, vec![]);
    let text = match &summary {
        Value::String(text) => Some(text.clone()),
        Value::Array(items) => items.first().and_then(Value::as_str).map(str::to_owned),
        Value::Object(map) => str_of(map, "summary").map(str::to_owned),
        _ => None,
    };
    record.blocks.extend(text.map(|text| Block::Text { text }));
    put(&mut record.meta, "latest_summary", &summary);
    record
}

#[cfg(test)]
mod tests;
