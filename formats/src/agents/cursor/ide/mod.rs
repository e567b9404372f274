//! Cursor's chats and agent runs (Composer) as the editor keeps them in its global
//! `state.vscdb`, table `cursorDiskKV`: a conversation under `composerData:<composer>`, each of
//! its messages ("bubbles") under `bubbleId:<composer>:<bubble>`, every value JSON, replaced
//! whole when it changes.
//!
//! A conversation `{composerId, name, createdAt, fullConversationHeadersOnly: [{bubbleId,
//! type}], subagentInfo?, …}` orders its bubbles; older ones hold them inline
//! (`conversation: [bubble…]`). A bubble `{type: 1 | 2, bubbleId, text, thinking?,
//! toolFormerData?, images?, createdAt?, …}` is one record, `cursor:<composer>:<bubble>`: a user
//! record (1) or an assistant one (2) of its thinking and text, and a call when it ran a tool
//! (`toolFormerData`: `name`, `toolCallId`, `rawArgs`), followed by a tool record
//! `…/result` of the tool's `result` once it has one (failed for `error`, `cancelled` or
//! `rejected`). What no block holds stays in `meta`. The conversation's steady fields (title,
//! mode, model, times, the parent of a sub-agent's run) follow in a system record named by
//! their hash. Cursor is closed source: docs/import.md names the readers followed.

use serde_json::{Map, Value};

use super::session::{
    data_url_blob, fields_record, put, put_all, str_of, take_array, take_str, take_timestamp, usable_name,
    SessionBuilder,
};
use super::ParsedSession;
use annal_engine::{canonical_json, Block, Record, Role};

/// One conversation as read from `cursorDiskKV`: its `composerData` value and the bubbles read
/// (all of them, or those changed since the last read).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CursorComposerRow {
    /// The composer id (the key's suffix), the session's name.
    pub id: String,
    /// The `composerData:<id>` value, if the conversation's row was found.
    pub data: Option<Vec<u8>>,
    /// `(bubble id, value)` of the bubbles read, in the order read.
    pub bubbles: Vec<(String, Vec<u8>)>,
}

/// The conversation fields kept in its system record: those that do not change with every
/// message (the bubble order, the draft being typed and the status do).
const STEADY_FIELDS: [&str; 12] = [
    "_v",
    "composerId",
    "name",
    "subtitle",
    "unifiedMode",
    "forceMode",
    "createdAt",
    "modelConfig",
    "subagentInfo",
    "subagentComposerIds",
    "isArchived",
    "workspaceIdentifier",
];

/// The records of one conversation: its bubbles in the conversation's order (those it does not
/// list after, in the order read), and its steady fields. Bubbles that cannot be read are
/// named in the second value.
///
/// # Errors
/// A line naming what is wrong with the conversation's own value (not JSON, not an object).
pub fn parse_cursor_composer(row: &CursorComposerRow) -> Result<(ParsedSession, Vec<String>), String> {
    let mut composer = match row.data.as_deref().map(json_value).transpose()? {
        Some(Value::Object(composer)) => composer,
        Some(_) => return Err("its composerData is not a JSON object".into()),
        None => Map::new(),
    };
    let name = if usable_name(&row.id) { row.id.clone() } else { "cursor".to_owned() };
    let mut skipped = Vec::new();
    let mut bubbles: Vec<(String, Map<String, Value>)> = Vec::new();
    for (id, bytes) in &row.bubbles {
        match json_value(bytes) {
            Ok(Value::Object(bubble)) => bubbles.push((id.clone(), bubble)),
            Ok(Value::Null) => {}
            Ok(_) => skipped.push(format!("bubble {id:?}: not a JSON object")),
            Err(why) => skipped.push(format!("bubble {id:?}: {why}")),
        }
    }
    // Conversations before bubbles had rows of their own hold them inline.
    for bubble in take_array(&mut composer, "conversation") {
        if let Value::Object(bubble) = bubble {
            if let Some(id) = str_of(&bubble, "bubbleId").map(str::to_owned) {
                bubbles.push((id, bubble));
            }
        }
    }
    order_by_headers(&mut bubbles, &composer);
    let mut builder = SessionBuilder::new("cursor", true);
    for (index, (id, bubble)) in bubbles.into_iter().enumerate() {
        for record in bubble_records(&name, &id, bubble) {
            builder.push(index + 1, record, None);
        }
    }
    let parent = composer
        .get("subagentInfo")
        .and_then(|info| info.get("parentComposerId"))
        .and_then(Value::as_str)
        .map(|parent| canonical_json(&Value::String(parent.to_owned())));
    let steady: Map<String, Value> =
        composer.into_iter().filter(|(key, _)| STEADY_FIELDS.contains(&key.as_str())).collect();
    if !steady.is_empty() {
        builder.push(0, fields_record(&format!("cursor:{name}"), steady), None);
    }
    let extra: Vec<(&str, String)> = parent.into_iter().map(|parent| ("parentSession", parent)).collect();
    Ok((builder.finish(name, None, None, &extra), skipped))
}

/// A value as JSON. Cursor leaves raw control characters inside some strings, which JSON does
/// not allow: such a value is read again with them escaped, so their text is kept as it is.
fn json_value(bytes: &[u8]) -> Result<Value, String> {
    match serde_json::from_slice(bytes) {
        Ok(value) => Ok(value),
        Err(first) => {
            if !bytes.iter().any(|&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | b' ')) {
                return Err(format!("not JSON ({first})"));
            }
            let mut escaped = Vec::with_capacity(bytes.len() + 16);
            for &byte in bytes {
                match byte {
                    b'\n' | b'\r' | b'\t' => escaped.push(byte),
                    0..=0x1f => escaped.extend_from_slice(format!("\\u{byte:04x}").as_bytes()),
                    _ => escaped.push(byte),
                }
            }
            serde_json::from_slice(&escaped).map_err(|_| format!("not JSON ({first})"))
        }
    }
}

/// Sorts bubbles into the order `fullConversationHeadersOnly` gives; the others keep the
/// order they were read in, after them.
fn order_by_headers(bubbles: &mut [(String, Map<String, Value>)], composer: &Map<String, Value>) {
    let headers = composer.get("fullConversationHeadersOnly").and_then(Value::as_array);
    let place: std::collections::HashMap<&str, usize> = headers
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(at, header)| Some((header.get("bubbleId")?.as_str()?, at)))
        .collect();
    bubbles.sort_by_key(|(id, _)| place.get(id.as_str()).copied().unwrap_or(usize::MAX));
}

/// One bubble's record, and the tool record of its result when it has one.
fn bubble_records(composer: &str, id: &str, mut bubble: Map<String, Value>) -> Vec<Record> {
    let entry = format!("cursor:{composer}:{id}");
    let mut record = Record::new(entry.clone(), Role::System, Vec::new());
    record.role = match bubble.get("type").and_then(Value::as_i64) {
        Some(1) => Role::User,
        Some(2) => Role::Assistant,
        _ => Role::System,
    };
    if record.role != Role::System {
        bubble.remove("type");
    }
    record.timestamp = take_timestamp(&mut bubble, "createdAt");
    if let Some(Value::Object(mut thinking)) = bubble.remove("thinking") {
        if let Some(text) = take_str(&mut thinking, "text").filter(|text| !text.is_empty()) {
            record.blocks.push(Block::Thinking { text });
        }
        if !thinking.is_empty() {
            bubble.insert("thinking".into(), Value::Object(thinking));
        }
    }
    let thought = bubble.get("isThought").and_then(Value::as_bool) == Some(true);
    if let Some(text) = take_str(&mut bubble, "text").filter(|text| !text.is_empty()) {
        record.blocks.push(if thought { Block::Thinking { text } } else { Block::Text { text } });
    }
    if let Some(Value::Array(images)) = bubble.remove("images") {
        let mut rest = Vec::new();
        for image in images {
            match image.as_str().and_then(data_url_blob) {
                Some(blob) => record.blocks.push(blob),
                None => rest.push(image),
            }
        }
        if !rest.is_empty() {
            bubble.insert("images".into(), Value::Array(rest));
        }
    }
    let mut out = Vec::new();
    let result = match bubble.remove("toolFormerData") {
        Some(Value::Object(tool)) => tool_blocks(id, tool, &mut record, &mut bubble),
        Some(other) => {
            bubble.insert("toolFormerData".into(), other);
            None
        }
        None => None,
    };
    put_all(&mut record.meta, bubble);
    out.push(record);
    if let Some(block) = result {
        out.push(Record::new(format!("{entry}/result"), Role::Tool, vec![block]));
    }
    out
}

/// A tool run's call, added to `record`, and its result block once it has one; what neither
/// holds goes back into `bubble` (for `meta`). A `toolFormerData` without a `name` (Cursor
/// writes some with only `additionalData`) is no call.
fn tool_blocks(
    bubble_id: &str,
    mut tool: Map<String, Value>,
    record: &mut Record,
    bubble: &mut Map<String, Value>,
) -> Option<Block> {
    let Some(name) = take_str(&mut tool, "name") else {
        bubble.insert("toolFormerData".into(), Value::Object(tool));
        return None;
    };
    let call_id = take_str(&mut tool, "toolCallId").unwrap_or_else(|| bubble_id.to_owned());
    let input = match (take_str(&mut tool, "rawArgs"), str_of(&tool, "params")) {
        (Some(raw), _) => raw,
        (None, Some(params)) => params.to_owned(),
        (None, None) => "{}".to_owned(),
    };
    record.blocks.push(Block::ToolCall {
        call_id: call_id.clone(),
        tool: name.clone(),
        input,
        target: String::new(),
    });
    let status = str_of(&tool, "status").unwrap_or_default().to_owned();
    let result = match take_str(&mut tool, "result") {
        Some(output) => {
            let is_error = matches!(status.as_str(), "error" | "cancelled" | "rejected");
            Some(Block::ToolResult { call_id, tool: name, is_error, output })
        }
        None => None,
    };
    if !tool.is_empty() {
        put(&mut record.meta, "toolFormerData", &Value::Object(tool));
    }
    result
}

#[cfg(test)]
mod tests;
