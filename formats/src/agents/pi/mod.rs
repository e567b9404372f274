//! Pi coding agent session JSONL (`~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`): a
//! `session` header line, then one entry per line, appended as the session goes on.
//!
//! The header (`{type: "session", version?, id, timestamp, cwd, parentSession?, …}`) names the
//! session by its `id` and is a system record of meta. Every entry is one record:
//! - `message` entries by their message's `role`: `user` text and images, `assistant` text,
//!   thinking and tool calls (`toolCall` parts: `id`, `name`, `arguments`), `toolResult` a tool
//!   record answering `toolCallId`, `bashExecution` (a `!command` the user ran) a tool record of
//!   the command's call and its output; other roles (`custom`, `branchSummary`,
//!   `compactionSummary`) system records of their text;
//! - `compaction` and `branch_summary` entries are system records whose text is the summary
//!   (`meta.firstKeptEntryId`, `meta.fromId` and the rest kept), so a compaction stays what it
//!   is: a summary beside the entries it summarised, which stay in the journal;
//! - `custom_message` entries a system record of their content; `model_change`,
//!   `thinking_level_change`, `label`, `session_info` and `custom` system records of meta.
//!
//! What no block holds stays in `meta` under its own key (`message` without its content,
//! `contentExtra` for parts' other fields, `parentId`, …). Entries carry an 8-hex-digit `id`
//! unique in their file (version 2 on); entryIds are `pi:<session>/<id>`, since such short ids
//! repeat across sessions. Version 1 entries have none: `pi:<session>:<line>`. A session file
//! is a tree (entries name their `parentId`; `/tree` appends a branch to an earlier entry): the
//! records keep file order, and `meta.parentId` gives the tree back.

use serde_json::{Map, Value};

use super::lines::read_json_lines;
use super::session::{
    base64_bytes, content_parts, line_object, put, put_all, put_nonempty, str_of, take_str, text_of,
    usable_id, usable_name, SessionBuilder,
};
use super::{ParseOptions, ParsedTranscript, TranscriptFormat};
use annal_engine::{canonical_json, Block, Record, Role};

/// Entry types Pi writes after the header.
const ENTRY_TYPES: [&str; 12] = [
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    // Oh My Pi's own entries.
    "session_init",
    "ttsr_injection",
    "mode_change",
];

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut builder = SessionBuilder::new("pi", true);
    let mut name: Option<String> = None;
    let mut parsed = ParsedTranscript::default();
    let mut lines = Vec::new();
    read_json_lines(bytes, options, TranscriptFormat::Pi, is_pi_line, &mut parsed, |number, value| {
        if name.is_none() {
            name = value
                .as_object()
                .filter(|map| is_header(map))
                .and_then(|map| str_of(map, "id"))
                .map(str::to_owned);
        }
        lines.push((number, value));
    });
    let name = name.filter(|id| usable_name(id)).unwrap_or_else(|| stem.to_owned());
    for (number, value) in lines {
        builder.push(number, entry_record(value, &name), None);
    }
    if !builder.is_empty() {
        parsed.sessions.push(builder.finish(name, None, None, &[]));
    }
    parsed
}

/// The header line: `type: "session"` with the session's `id`, its start `timestamp` and `cwd`,
/// and no `payload` (a Codex rollout's `session_meta` has one).
pub(super) fn is_header(map: &Map<String, Value>) -> bool {
    let has_str = |key| map.get(key).is_some_and(Value::is_string);
    str_of(map, "type") == Some("session")
        && has_str("id")
        && has_str("timestamp")
        && has_str("cwd")
        && !map.contains_key("payload")
}

/// A line only Pi writes, for detection: its header, or a `message` entry (a `message` object
/// with a `role`, beside the entry's `id` or `timestamp`, and none of the fields the Claude Code
/// and Codex lines that also say `message` carry).
pub(super) fn is_pi_signature(map: &Map<String, Value>) -> bool {
    let foreign = ["payload", "uuid", "sessionId", "role", "content"];
    is_header(map)
        || (str_of(map, "type") == Some("message")
            && map.get("timestamp").is_some_and(Value::is_string)
            && map.get("message").and_then(Value::as_object).is_some_and(is_pi_message)
            && !foreign.iter().any(|key| map.contains_key(*key)))
}

/// Whether a line is one Pi writes: the header, or an entry of a known type with its
/// timestamp, a `message` entry with its message object and role.
pub(super) fn is_pi_line(map: &Map<String, Value>) -> bool {
    if is_header(map) {
        return true;
    }
    let Some(kind) = str_of(map, "type") else { return false };
    if !ENTRY_TYPES.contains(&kind) || !map.get("timestamp").is_some_and(Value::is_string) {
        return false;
    }
    match kind {
        "message" => map.get("message").and_then(Value::as_object).is_some_and(is_pi_message),
        "compaction" | "branch_summary" => map.get("summary").is_some_and(Value::is_string),
        _ => !map.contains_key("payload") && !map.contains_key("sessionId"),
    }
}

/// Whether a message is one of Pi's: a role, and the time Pi stamps on every message (Factory's
/// Droid writes the same envelope, without it).
fn is_pi_message(message: &Map<String, Value>) -> bool {
    str_of(message, "role").is_some() && message.get("timestamp").is_some_and(Value::is_number)
}

fn system() -> Record {
    Record::new(String::new(), Role::System, Vec::new())
}

/// The record of one line (see the module comment).
fn entry_record(value: Value, session: &str) -> Record {
    let mut record = system();
    let header = value.as_object().is_some_and(is_header);
    let Some(mut map) = line_object(value, &mut record) else { return record };
    if let Some(id) = str_of(&map, "id").filter(|_| !header) {
        let entry_id = format!("pi:{session}/{id}");
        if usable_id(&entry_id) {
            record.entry_id = entry_id;
        }
    }
    match str_of(&map, "type") {
        Some("message") => {
            if let Some(Value::Object(message)) = map.remove("message") {
                message_into(message, &mut record);
            }
        }
        Some("compaction" | "branch_summary") => {
            if let Some(summary) = take_str(&mut map, "summary") {
                record.blocks.push(Block::Text { text: summary });
            }
        }
        Some("custom_message") => {
            if let Some(content) = map.remove("content") {
                let extra = content_into(content, &mut record.blocks);
                put_nonempty(&mut record.meta, "contentExtra", extra);
            }
        }
        _ => {}
    }
    put_all(&mut record.meta, map);
    record
}

/// A message's role and blocks into `record`; the rest of the message is `meta["message"]`.
fn message_into(mut message: Map<String, Value>, record: &mut Record) {
    let role = str_of(&message, "role").unwrap_or_default().to_owned();
    let mut extra = Map::new();
    match role.as_str() {
        "user" | "assistant" => {
            record.role = if role == "user" { Role::User } else { Role::Assistant };
            if let Some(content) = message.remove("content") {
                extra = content_into(content, &mut record.blocks);
            }
        }
        "toolResult" => {
            record.role = Role::Tool;
            let call_id = take_str(&mut message, "toolCallId").unwrap_or_default();
            let tool = take_str(&mut message, "toolName").unwrap_or_default();
            let is_error = message.get("isError").and_then(Value::as_bool).unwrap_or(false);
            message.remove("isError");
            let mut parts = Vec::new();
            if let Some(content) = message.remove("content") {
                extra = content_into(content, &mut parts);
            }
            let output = joined_text(&parts);
            record.blocks.push(Block::ToolResult { call_id, tool, is_error, output });
            record.blocks.extend(parts.into_iter().filter(|block| matches!(block, Block::Blob { .. })));
        }
        "bashExecution" => {
            record.role = Role::Tool;
            let call_id = record.entry_id.clone();
            let command = message.remove("command").map(|c| text_of(&c)).unwrap_or_default();
            let output = message.remove("output").map(|o| text_of(&o)).unwrap_or_default();
            let failed = message.get("exitCode").and_then(Value::as_i64).is_some_and(|code| code != 0)
                || message.get("cancelled").and_then(Value::as_bool) == Some(true);
            let input = canonical_json(&Value::Object(Map::from_iter([(
                "command".to_owned(),
                Value::String(command),
            )])));
            record.blocks.push(Block::ToolCall {
                call_id: call_id.clone(),
                tool: "bash".into(),
                input,
                target: String::new(),
            });
            record.blocks.push(Block::ToolResult { call_id, tool: "bash".into(), is_error: failed, output });
        }
        _ => {
            // custom, branchSummary, compactionSummary and roles to come: their text, as system.
            for key in ["content", "summary"] {
                if let Some(content) = message.remove(key) {
                    let more = content_into(content, &mut record.blocks);
                    extra.extend(more);
                }
            }
        }
    }
    put_nonempty(&mut record.meta, "contentExtra", extra);
    put(&mut record.meta, "message", &Value::Object(message));
}

/// Content (a string, or parts) as blocks appended to `blocks`. Returns, keyed by part index,
/// each part's fields that no block holds (signatures, a part of an unknown type whole).
fn content_into(content: Value, blocks: &mut Vec<Block>) -> Map<String, Value> {
    content_parts(content, blocks, |part| {
        let block = part_block(part);
        if block.is_some() {
            part.remove("type");
        }
        block
    })
}

/// The block of one of Pi's parts, taking what it holds out of `part`.
fn part_block(part: &mut Map<String, Value>) -> Option<Block> {
    match str_of(part, "type") {
        Some("text") => take_str(part, "text").map(|text| Block::Text { text }),
        Some("thinking") => take_str(part, "thinking").map(|text| Block::Thinking { text }),
        Some("toolCall") => match (take_str(part, "id"), take_str(part, "name")) {
            (Some(call_id), Some(tool)) => {
                let input = part.remove("arguments").map_or_else(|| "{}".to_owned(), |args| text_of(&args));
                Some(Block::ToolCall { call_id, tool, input, target: String::new() })
            }
            (id, name) => {
                // Put back what was taken: the part is kept whole in meta.
                id.map(|id| part.insert("id".into(), Value::String(id)));
                name.map(|name| part.insert("name".into(), Value::String(name)));
                None
            }
        },
        Some("image") => {
            let data = str_of(part, "data").and_then(base64_bytes);
            data.map(|data| {
                part.remove("data");
                let media_type = take_str(part, "mimeType").unwrap_or_default();
                Block::Blob { media_type, data }
            })
        }
        _ => None,
    }
}

/// The text parts of a tool result, one after another.
fn joined_text(parts: &[Block]) -> String {
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|block| if let Block::Text { text } = block { Some(text.as_str()) } else { None })
        .collect();
    texts.join("\n")
}

#[cfg(test)]
mod tests;
