//! Kimi CLI context JSONL (`~/.kimi/sessions/<work dir hash>/<session>/context.jsonl`): the
//! messages the model is given, one per line, appended; no ids and no times.
//!
//! A line is a message `{role, content, tool_calls?, tool_call_id?, name?, partial?}` (roles
//! `system`, `user`, `assistant`, `tool`) or a bookkeeping line whose role starts with `_`:
//! `_system_prompt` (its `content`), `_checkpoint` (`id`), `_usage` (`token_count`). Each is one
//! record: `content` (a string, or parts: `text`, `think` as thinking, `image_url` data URLs
//! as blobs) becomes blocks, an assistant's `tool_calls` calls, a `tool` message the result of
//! the call it names; bookkeeping lines are system records of meta. What no block holds stays
//! in `meta` under its own key (`contentExtra` for parts' other fields).
//!
//! Kimi starts the file again on `/clear`, on compaction and on an undo: it renames it
//! `context_<n>.jsonl` and writes a new one (a compaction's summary, or the kept lines copied
//! verbatim). So an entryId is not a line number but a chain: `kimi:<session>/<hash>`, the
//! hash of the previous line's id and this line's JSON. Lines copied by an undo keep their
//! ids, a rotated file keeps the ids its lines had, and a message repeated later ("continue")
//! is a record of its own. A sub-agent's file (`<session>/subagents/<agent>/context.jsonl`) is
//! a session named as such by the caller.

use std::path::Path;

use serde_json::{Map, Value};

use super::lines::read_json_lines;
use super::session::{
    content_parts, data_url_blob, drop_lone_type, line_object, put, put_all, put_nonempty, str_of, take_str,
    text_of, SessionBuilder,
};
use super::{ParseOptions, ParsedTranscript, TranscriptFormat};
use annal_engine::{canonical_json, Block, Record, Role};

/// The roles of the messages Kimi writes.
const MESSAGE_ROLES: [&str; 4] = ["system", "user", "assistant", "tool"];
/// The fields a message line has (kosong's `Message`, written without its null fields).
const MESSAGE_FIELDS: [&str; 6] = ["role", "content", "tool_calls", "tool_call_id", "name", "partial"];

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut builder = SessionBuilder::new("kimi", true);
    let mut parsed = ParsedTranscript::default();
    let mut previous = String::new();
    read_json_lines(bytes, options, TranscriptFormat::Kimi, is_kimi_line, &mut parsed, |number, value| {
        let link = blake3::hash(format!("{previous}\n{}", canonical_json(&value)).as_bytes()).to_hex();
        previous = format!("kimi:{stem}/{}", &link.as_str()[..16]);
        let mut record = line_record(value);
        record.entry_id.clone_from(&previous);
        builder.push(number, record, None);
    });
    if !builder.is_empty() {
        parsed.sessions.push(builder.finish(stem.to_owned(), None, None, &[]));
    }
    parsed
}

/// Parses a Kimi session whose history spans files: `rotated`, the files Kimi set aside
/// (`context_1.jsonl`, `context_2.jsonl`, …, oldest first), then `current` (`context.jsonl`).
/// Each file's records in turn, less those an earlier file already holds (an undo copies the
/// lines it keeps). Lines that cannot be read are reported by their line in their own file.
pub fn parse_kimi_context(rotated: &[&[u8]], current: &[u8], stem: &str) -> ParsedTranscript {
    let options = ParseOptions::default();
    let mut merged = ParsedTranscript::default();
    let mut seen = std::collections::HashSet::new();
    for bytes in rotated.iter().copied().chain([current]) {
        let parsed = parse(bytes, stem, &options);
        merged.skipped.extend(parsed.skipped);
        merged.recognised += parsed.recognised;
        merged.unrecognised += parsed.unrecognised;
        for mut session in parsed.sessions {
            let claimed = std::mem::take(&mut session.claimed_hashes);
            let (records, claims): (Vec<_>, Vec<_>) = std::mem::take(&mut session.records)
                .into_iter()
                .zip(claimed)
                .filter(|(record, _)| seen.insert(record.entry_id.clone()))
                .unzip();
            match merged.sessions.first_mut() {
                Some(first) => {
                    first.records.extend(records);
                    first.claimed_hashes.extend(claims);
                }
                None => {
                    session.records = records;
                    session.claimed_hashes = claims;
                    merged.sessions.push(session);
                }
            }
        }
    }
    merged
}

/// Which of a session's context files `name` is: `Some(0)` for the current `context.jsonl`,
/// `Some(n)` for the `n`th set aside (`context_<n>.jsonl`), `None` for any other name.
pub fn kimi_context_number(name: &str) -> Option<u32> {
    if name == "context.jsonl" {
        return Some(0);
    }
    let digits = name.strip_prefix("context_")?.strip_suffix(".jsonl")?;
    let all_digits = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    all_digits.then(|| digits.parse().ok()).flatten().filter(|&n| n > 0)
}

/// The session a context file belongs to, by its folders: `<session>`, or
/// `<session>/agent-<id>` for a sub-agent's (`<session>/subagents/<id>/context.jsonl`).
pub(super) fn session_of(path: &Path) -> Option<String> {
    fn folder(path: Option<&Path>) -> Option<std::borrow::Cow<'_, str>> {
        path.and_then(Path::file_name).map(|name| name.to_string_lossy())
    }
    let session = path.parent();
    let name = folder(session)?;
    let above = session.and_then(Path::parent);
    if folder(above).is_some_and(|n| n == "subagents") {
        if let Some(parent) = folder(above.and_then(Path::parent)) {
            return Some(format!("{parent}/agent-{name}"));
        }
    }
    Some(name.into_owned())
}

/// Whether a line is one Kimi writes: a message of a known role with only a message's fields,
/// or a bookkeeping line.
pub(super) fn is_kimi_line(map: &Map<String, Value>) -> bool {
    match str_of(map, "role") {
        Some(role) if MESSAGE_ROLES.contains(&role) => {
            map.keys().all(|key| MESSAGE_FIELDS.contains(&key.as_str()))
                && map.get("content").is_some_and(|content| content.is_string() || content.is_array())
        }
        _ => is_kimi_signature(map),
    }
}

/// Whether a line is one of Kimi's bookkeeping lines, which no other format writes: the
/// system prompt, a checkpoint or a token count, each with only its own field.
pub(super) fn is_kimi_signature(map: &Map<String, Value>) -> bool {
    let (field, is_kind): (&str, fn(&Value) -> bool) = match str_of(map, "role") {
        Some("_system_prompt") => ("content", Value::is_string),
        Some("_checkpoint") => ("id", Value::is_u64),
        Some("_usage") => ("token_count", Value::is_u64),
        _ => return false,
    };
    map.len() == 2 && map.get(field).is_some_and(is_kind)
}

/// The record of one line (see the module comment); its entryId is set by the caller.
fn line_record(value: Value) -> Record {
    let mut record = Record::new(String::new(), Role::System, Vec::new());
    let Some(mut map) = line_object(value, &mut record) else { return record };
    let role = take_str(&mut map, "role").unwrap_or_default();
    record.role = match role.as_str() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        _ => Role::System,
    };
    let content = map.remove("content");
    if role == "tool" {
        let call_id = take_str(&mut map, "tool_call_id").unwrap_or_default();
        let mut blocks = Vec::new();
        let extra = content.map(|content| content_into(content, &mut blocks)).unwrap_or_default();
        // The result's text is its text parts; an image it returned follows it as a blob.
        let (texts, others): (Vec<Block>, Vec<Block>) =
            blocks.into_iter().partition(|block| matches!(block, Block::Text { .. }));
        let texts: Vec<String> = texts
            .into_iter()
            .filter_map(|block| match block {
                Block::Text { text } => Some(text),
                _ => None,
            })
            .collect();
        let output = texts.join("\n");
        record.blocks.push(Block::ToolResult { call_id, tool: String::new(), is_error: false, output });
        record.blocks.extend(others);
        put_nonempty(&mut record.meta, "contentExtra", extra);
    } else if let Some(content) = content {
        let extra = content_into(content, &mut record.blocks);
        put_nonempty(&mut record.meta, "contentExtra", extra);
    }
    if let Some(Value::Array(calls)) = map.remove("tool_calls") {
        // What a call's block does not hold (its `extras`, a call of another shape) stays.
        let mut rest = Vec::new();
        for call in calls {
            let (block, left) = call_block(call);
            record.blocks.extend(block);
            rest.extend(left);
        }
        if !rest.is_empty() {
            put(&mut record.meta, "tool_calls", &Value::Array(rest));
        }
    }
    // A bookkeeping line's role says what it is; a message's is its record's role.
    if !role.is_empty() && !MESSAGE_ROLES.contains(&role.as_str()) {
        map.insert("role".into(), Value::String(role));
    }
    put_all(&mut record.meta, map);
    record
}

/// A message's content as blocks appended to `blocks`: a string is one text block, parts each
/// one block. Returns, keyed by part index, each part's fields that no block holds.
fn content_into(content: Value, blocks: &mut Vec<Block>) -> Map<String, Value> {
    content_parts(content, blocks, |part| {
        let block = match str_of(part, "type") {
            Some("text") => take_str(part, "text").map(|text| Block::Text { text }),
            Some("think") => take_str(part, "think").map(|text| Block::Thinking { text }),
            Some("image_url") => image_block(part),
            _ => None,
        };
        if block.is_some() {
            drop_lone_type(part);
        }
        block
    })
}

/// An `image_url` part whose URL is a data URL, as a blob; the URL taken out of `part`.
fn image_block(part: &mut Map<String, Value>) -> Option<Block> {
    let image = part.get_mut("image_url")?.as_object_mut()?;
    let block = data_url_blob(str_of(image, "url")?)?;
    image.remove("url");
    if image.is_empty() {
        part.remove("image_url");
    }
    Some(block)
}

/// An OpenAI-style tool call (`{type: "function", id, function: {name, arguments}}`) as a
/// call block, with what the block does not hold (the call's id beside its `extras`); a value
/// of another shape is no block, and comes back whole.
fn call_block(call: Value) -> (Option<Block>, Option<Value>) {
    let Value::Object(mut call) = call else { return (None, Some(call)) };
    let name = call.get("function").and_then(|f| f.get("name")).and_then(Value::as_str);
    let (Some(call_id), Some(tool)) = (str_of(&call, "id"), name) else {
        return (None, Some(Value::Object(call)));
    };
    let (call_id, tool) = (call_id.to_owned(), tool.to_owned());
    let mut function = match call.remove("function") {
        Some(Value::Object(function)) => function,
        _ => Map::new(),
    };
    function.remove("name");
    let input = function.remove("arguments").map_or_else(|| "{}".to_owned(), |args| text_of(&args));
    if !function.is_empty() {
        call.insert("function".into(), Value::Object(function));
    }
    if str_of(&call, "type") == Some("function") {
        call.remove("type");
    }
    let left = (call.len() > 1).then_some(Value::Object(call));
    (Some(Block::ToolCall { call_id, tool, input, target: String::new() }), left)
}

#[cfg(test)]
mod tests;
