//! OpenAI Responses-API items as records, and blocks back as items: what Codex rollouts carry
//! as `response_item` payloads, and what the OpenAI Agents SDK keeps as session items.
//!
//! Reading: messages, reasoning, function and custom tool calls and their outputs become blocks
//! (text, thinking, tool calls, tool results, images). A session kept for the Agents SDK also
//! stores each item's own JSON text, so it is handed back exactly as it came
//! ([`record_from_responses_item`], [`RESPONSES_ITEM_KEY`]). Writing: a projection's messages, or a
//! record that came from another agent, become items the Responses API accepts as input
//! ([`responses_items`]): text as plain role messages, calls as `function_call` and outputs as
//! `function_call_output`.

use std::borrow::Cow;

use serde_json::{json, Map, Value};

use super::session::{data_url_blob, put, str_of, take_str, text_of};
use std::ops::Range;

use annal_engine::{canonical_input, canonical_json, hash_to_hex, Block, MessageBlock, Record, Role};
use annal_engine::{ReadError, Snapshot, RECEIPT_META_KEY};

/// The `meta` key holding an item's own JSON text, as a JSON string.
pub const RESPONSES_ITEM_KEY: &str = "responsesItem";

/// The `meta` key of a record that ends a generation of an Agents SDK session (its pop or
/// clear): it holds no item.
pub const RESPONSES_SEAL_KEY: &str = "responsesSeal";

/// The items of `session`'s records in `orders`, each with its record's sourceOrder: an item
/// stored as one comes back as its own text; another record gives the items of its blocks
/// (none, one or several). Compaction receipts and generation seals hold no item.
///
/// # Errors
/// [`ReadError`]: an unknown session, damaged bytes.
pub fn session_items(
    snapshot: &Snapshot,
    session: &str,
    orders: Range<u64>,
) -> Result<Vec<(u64, String)>, ReadError> {
    let mut items = Vec::new();
    for guard in snapshot.records(session, orders)? {
        let guard = guard?;
        let view = guard.view()?;
        let order = view.source_order();
        let mut kept = None;
        let mut none = false;
        for (key, value) in view.meta() {
            match key {
                RESPONSES_ITEM_KEY => kept = responses_item_text(value),
                RECEIPT_META_KEY | RESPONSES_SEAL_KEY => none = true,
                _ => {}
            }
        }
        if none {
            continue;
        }
        if let Some(text) = kept {
            items.push((order, text));
            continue;
        }
        let record = snapshot.to_record(&view)?;
        for item in responses_items(record.role, &record_message_blocks(&record)) {
            items.push((order, item.to_string()));
        }
    }
    Ok(items)
}

/// Why a Responses item could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a Responses item: {0}")]
pub struct ItemError(String);

impl ItemError {
    /// What kind of failure this is: an item is the caller's input.
    pub fn kind(&self) -> annal_engine::ErrorKind {
        annal_engine::ErrorKind::BadInput
    }
}

/// The record of one Responses-API item given as JSON text, with `entry_id`: its blocks for
/// projections and search, and the text itself in `meta[RESPONSES_ITEM_KEY]` so it reads back
/// verbatim. An item without `type` but with `role` is a message (the SDK's short form).
///
/// # Errors
/// [`ItemError`] when the text is not a JSON object.
pub fn record_from_responses_item(entry_id: &str, item: &str) -> Result<Record, ItemError> {
    let value: Value = serde_json::from_str(item).map_err(|e| ItemError(format!("not JSON: {e}")))?;
    let Value::Object(mut map) = value else {
        return Err(ItemError("an item must be a JSON object".into()));
    };
    if !map.contains_key("type") && map.contains_key("role") {
        map.insert("type".into(), "message".into());
    }
    let mut record = Record::new(entry_id, Role::System, Vec::new());
    // What no block holds is not kept apart: the whole item is, below.
    drop(item_blocks(map, &mut record));
    if record.blocks.is_empty() {
        // An item of no known kind (a hosted tool's call, a screenshot): its text as one block,
        // so a view counts what it costs and a search finds it.
        record.blocks.push(Block::Text { text: item.to_owned() });
    }
    put(&mut record.meta, RESPONSES_ITEM_KEY, &Value::String(item.to_owned()));
    Ok(record)
}

/// The item text a record keeps under [`RESPONSES_ITEM_KEY`], if it came from one.
pub fn responses_item_text(record_meta: &str) -> Option<String> {
    match serde_json::from_str::<Value>(record_meta) {
        Ok(Value::String(text)) => Some(text),
        _ => None,
    }
}

/// Blocks of one message (a projection's, or a stored record's) as Responses input items:
/// consecutive texts as one `{"role", "content"}` message, each call as a `function_call`,
/// each result as a `function_call_output`. Reasoning is left out (the API takes reasoning
/// back only by the ids it issued), and a binary block is named in a text.
pub fn responses_items(role: Role, blocks: &[MessageBlock<'_>]) -> Vec<Value> {
    let speaker = match role {
        Role::User | Role::Tool => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
    };
    let mut items = Vec::new();
    let mut texts: Vec<Cow<'_, str>> = Vec::new();
    let flush = |texts: &mut Vec<Cow<'_, str>>, items: &mut Vec<Value>| {
        if !texts.is_empty() {
            items.push(json!({"role": speaker, "content": texts.join("\n\n")}));
            texts.clear();
        }
    };
    for block in blocks {
        match block {
            MessageBlock::Text { text } => texts.push(Cow::Borrowed(text.as_ref())),
            MessageBlock::Thinking { .. } => {}
            MessageBlock::Blob { hash, media_type, size_bytes } => texts
                .push(Cow::Owned(format!("[{media_type}, {size_bytes} bytes, blob {}]", hash_to_hex(hash)))),
            MessageBlock::ToolCall { call_id, tool, input, .. } => {
                flush(&mut texts, &mut items);
                items.push(
                    json!({"type": "function_call", "call_id": call_id, "name": tool, "arguments": input}),
                );
            }
            MessageBlock::ToolResult { call_id, output, .. } => {
                flush(&mut texts, &mut items);
                items.push(json!({"type": "function_call_output", "call_id": call_id, "output": output}));
            }
        }
    }
    flush(&mut texts, &mut items);
    items
}

/// A stored record's blocks as message blocks, for [`responses_items`].
pub fn record_message_blocks(record: &Record) -> Vec<MessageBlock<'_>> {
    record
        .blocks
        .iter()
        .map(|block| match block {
            Block::Text { text } => MessageBlock::Text { text: Cow::Borrowed(text) },
            Block::Thinking { text } => MessageBlock::Thinking { text: Cow::Borrowed(text) },
            Block::ToolCall { call_id, tool, input, target } => MessageBlock::ToolCall {
                call_id: Cow::Borrowed(call_id),
                tool: Cow::Borrowed(tool),
                input: Cow::Borrowed(input),
                target: Cow::Borrowed(target),
            },
            Block::ToolResult { call_id, tool, is_error, output } => MessageBlock::ToolResult {
                call_id: Cow::Borrowed(call_id),
                tool: Cow::Borrowed(tool),
                is_error: *is_error,
                output: Cow::Borrowed(output),
            },
            Block::Blob { media_type, data } => MessageBlock::Blob {
                hash: *blake3::hash(data).as_bytes(),
                media_type: Cow::Borrowed(media_type),
                size_bytes: data.len() as u64,
            },
        })
        .collect()
}

/// Fills `record` (role, blocks, `meta["payload"]` with what no block holds) from one item.
pub(super) fn item_into(item: Map<String, Value>, record: &mut Record) {
    let rest = item_blocks(item, record);
    put(&mut record.meta, "payload", &Value::Object(rest));
}

/// Sets `record`'s role and blocks from one item; returns what no block holds.
fn item_blocks(mut item: Map<String, Value>, record: &mut Record) -> Map<String, Value> {
    let kind = str_of(&item, "type").unwrap_or_default().to_owned();
    let blocks = &mut record.blocks;
    record.role = match kind.as_str() {
        "message" => {
            let role = match str_of(&item, "role") {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                _ => Role::System,
            };
            match item.remove("content") {
                Some(Value::Array(parts)) => {
                    item.insert("content".into(), Value::Array(content_parts(parts, blocks)));
                }
                Some(Value::String(text)) => blocks.push(Block::Text { text }),
                Some(other) => {
                    item.insert("content".into(), other);
                }
                None => {}
            }
            role
        }
        "reasoning" => {
            for key in ["summary", "content"] {
                if let Some(Value::Array(parts)) = item.remove(key) {
                    item.insert(key.into(), Value::Array(content_parts(parts, blocks)));
                }
            }
            Role::Assistant
        }
        "function_call" | "custom_tool_call" | "local_shell_call" => {
            let call_id = take_str(&mut item, "call_id").unwrap_or_default();
            let (tool, input) = match kind.as_str() {
                // Arguments are JSON in a string: stored canonical, or verbatim if not JSON.
                "function_call" => (
                    take_str(&mut item, "name"),
                    take_str(&mut item, "arguments").map(|a| canonical_input(&a)),
                ),
                // A custom tool's input is free text (a patch, say): kept verbatim.
                "custom_tool_call" => (take_str(&mut item, "name"), take_str(&mut item, "input")),
                _ => (Some("local_shell".to_owned()), item.remove("action").map(|a| canonical_json(&a))),
            };
            let tool = tool.unwrap_or_default();
            blocks.push(Block::ToolCall {
                call_id,
                tool,
                input: input.unwrap_or_default(),
                target: String::new(),
            });
            Role::Assistant
        }
        "function_call_output" | "custom_tool_call_output" => {
            let call_id = take_str(&mut item, "call_id").unwrap_or_default();
            let output = item.remove("output").unwrap_or(Value::Null);
            let (text, is_error, rest) = tool_output(output, blocks);
            blocks.insert(0, Block::ToolResult { call_id, tool: String::new(), is_error, output: text });
            if let Some((key, rest)) = rest {
                item.insert(key.into(), rest);
            }
            Role::Tool
        }
        _ => Role::System,
    };
    item
}

/// Text and image parts as blocks; returns what is left of each part, in order.
fn content_parts(parts: Vec<Value>, blocks: &mut Vec<Block>) -> Vec<Value> {
    let mut rest = Vec::with_capacity(parts.len());
    for part in parts {
        let Value::Object(mut part) = part else {
            rest.push(part);
            continue;
        };
        match str_of(&part, "type") {
            Some("input_text" | "output_text" | "text") => {
                blocks.extend(take_str(&mut part, "text").map(|text| Block::Text { text }));
            }
            Some("summary_text" | "reasoning_text") => {
                blocks.extend(take_str(&mut part, "text").map(|text| Block::Thinking { text }));
            }
            Some("input_image") => {
                if let Some(blob) = str_of(&part, "image_url").and_then(data_url_blob) {
                    part.remove("image_url");
                    blocks.push(blob);
                }
            }
            _ => {}
        }
        rest.push(Value::Object(part));
    }
    rest
}

/// A tool output as `(text, is_error, what else it carried)`; images become blobs.
fn tool_output(output: Value, blocks: &mut Vec<Block>) -> (String, bool, Option<(&'static str, Value)>) {
    match output {
        Value::String(text) => {
            // Some tools wrap their output as `{"output": text, "metadata": {"exit_code": n}}`.
            if let Ok(Value::Object(mut wrapper)) = serde_json::from_str::<Value>(&text) {
                if let Some(inner) = take_str(&mut wrapper, "output") {
                    let code =
                        wrapper.get("metadata").and_then(|m| m.get("exit_code")).and_then(Value::as_i64);
                    return (
                        inner,
                        code.is_some_and(|c| c != 0),
                        Some(("outputJson", Value::Object(wrapper))),
                    );
                }
            }
            let is_error = exit_code_line(&text).is_some_and(|code| code != 0);
            (text, is_error, None)
        }
        Value::Array(parts) => {
            let mut inner = Vec::new();
            let rest = content_parts(parts, &mut inner);
            let mut texts = Vec::new();
            for block in inner {
                match block {
                    Block::Text { text } => texts.push(text),
                    other => blocks.push(other),
                }
            }
            (texts.join("\n"), false, Some(("output", Value::Array(rest))))
        }
        Value::Object(mut object) => {
            let is_error = object.get("success").and_then(Value::as_bool) == Some(false);
            match take_str(&mut object, "content") {
                Some(text) => (text, is_error, Some(("output", Value::Object(object)))),
                None => (canonical_json(&Value::Object(object)), is_error, None),
            }
        }
        Value::Null => (String::new(), false, None),
        other => (text_of(&other), false, None),
    }
}

/// The exit code of shell output that starts `Exit code: <n>` (Codex's shell tool format).
fn exit_code_line(text: &str) -> Option<i64> {
    let rest = text.strip_prefix("Exit code: ")?;
    let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
    rest[..end].trim().parse().ok()
}

#[cfg(test)]
mod tests;
