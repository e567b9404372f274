//! One Gemini CLI message as records: its own record (thoughts, content, tool calls), then a
//! tool record with the results its tool calls carry (see `tools.rs`). A message read again
//! (the JSONL log writes a message anew each time it grows) becomes a revision that holds only
//! what is new.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::tools::tool_call;
use crate::agents::session::{base64_bytes, put, put_all, str_of, take_str, take_timestamp, usable_id};
use annal_engine::canonical_json;
use annal_engine::{Block, Record, Role};

/// The message types Gemini CLI writes.
pub(super) const MESSAGE_TYPES: [&str; 5] = ["user", "gemini", "info", "error", "warning"];

type Digest = [u8; 32];

/// What the versions read so far of one message turned into blocks, so a later version adds
/// only what they did not.
#[derive(Debug, Default)]
struct Seen {
    /// The entryId of the first version; revisions are `<it>~<n>`.
    entry_id: String,
    versions: usize,
    /// The whole latest version.
    latest: Digest,
    /// Text, thinking and blob blocks.
    blocks: HashSet<Digest>,
    /// Call id → the tool and input, or the result (and status), first turned into a block.
    calls: HashMap<String, Digest>,
    results: HashMap<String, Digest>,
}

/// Every message of a session read so far, by id.
#[derive(Debug, Default)]
pub(super) struct Messages {
    seen: HashMap<String, Seen>,
}

impl Messages {
    /// The entryId of the first version of message `id`, if it was read.
    pub(super) fn entry_id(&self, id: &str) -> Option<&str> {
        self.seen.get(id).map(|seen| seen.entry_id.as_str())
    }

    /// The records of one version of `message` (a JSON object). `fallback` is its entryId when
    /// it has no usable id. With `skip_unchanged`, a version equal to the latest one read of
    /// that message gives no record.
    pub(super) fn read(&mut self, message: Value, fallback: String, skip_unchanged: bool) -> Vec<Record> {
        let latest = *blake3::hash(canonical_json(&message).as_bytes()).as_bytes();
        let Value::Object(message) = message else { return Vec::new() };
        let id = str_of(&message, "id");
        let key = id.map_or_else(|| fallback.clone(), str::to_owned);
        let seen = self.seen.entry(key).or_default();
        if skip_unchanged && seen.versions > 0 && seen.latest == latest {
            return Vec::new();
        }
        seen.versions += 1;
        seen.latest = latest;
        if seen.versions == 1 {
            seen.entry_id = id.filter(|id| usable_id(id)).map_or(fallback, str::to_owned);
        }
        let mut fresh = Fresh { earlier: seen, blocks: Vec::new(), calls: Vec::new(), results: Vec::new() };
        let records = version_records(message, &mut fresh);
        let Fresh { blocks, calls, results, .. } = fresh;
        seen.blocks.extend(blocks);
        for (call_id, digest) in calls {
            seen.calls.entry(call_id).or_insert(digest);
        }
        for (call_id, digest) in results {
            seen.results.entry(call_id).or_insert(digest);
        }
        records
    }
}

/// How a tool call or result compares with the earlier versions of its message.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Known {
    New,
    Same,
    Changed,
}

/// Sorts one version's blocks into new ones and ones an earlier version already gave. Only
/// earlier versions count: a text twice in one message is kept twice.
#[derive(Debug)]
pub(super) struct Fresh<'s> {
    earlier: &'s Seen,
    blocks: Vec<Digest>,
    calls: Vec<(String, Digest)>,
    results: Vec<(String, Digest)>,
}

impl Fresh<'_> {
    /// Pushes a text, thinking or blob block unless an earlier version gave it.
    pub(super) fn push(&mut self, block: Block, blocks: &mut Vec<Block>) {
        let digest = match &block {
            Block::Text { text } => digest(&[b"text", text.as_bytes()]),
            Block::Thinking { text } => digest(&[b"thinking", text.as_bytes()]),
            Block::Blob { media_type, data } => digest(&[b"blob", media_type.as_bytes(), data]),
            Block::ToolCall { .. } | Block::ToolResult { .. } => [0; 32],
        };
        self.blocks.push(digest);
        if !self.earlier.blocks.contains(&digest) {
            blocks.push(block);
        }
    }

    pub(super) fn call(&mut self, call_id: &str, digest: Digest) -> Known {
        compare(self.earlier.calls.get(call_id), &mut self.calls, call_id, digest)
    }

    pub(super) fn result(&mut self, call_id: &str, digest: Digest) -> Known {
        compare(self.earlier.results.get(call_id), &mut self.results, call_id, digest)
    }
}

fn compare(earlier: Option<&Digest>, new: &mut Vec<(String, Digest)>, id: &str, digest: Digest) -> Known {
    match earlier {
        None => {
            new.push((id.to_owned(), digest));
            Known::New
        }
        Some(known) if *known == digest => Known::Same,
        Some(_) => Known::Changed,
    }
}

/// A blake3 hash of length-prefixed fields, so different fields never hash the same bytes.
pub(super) fn digest(fields: &[&[u8]]) -> Digest {
    let mut hasher = blake3::Hasher::new();
    for field in fields {
        hasher.update(&(field.len() as u64).to_le_bytes());
        hasher.update(field);
    }
    *hasher.finalize().as_bytes()
}

fn version_records(mut message: Map<String, Value>, fresh: &mut Fresh<'_>) -> Vec<Record> {
    let seen = fresh.earlier;
    let entry_id = match seen.versions {
        0 | 1 => seen.entry_id.clone(),
        n => format!("{}~{n}", seen.entry_id),
    };
    let role = match str_of(&message, "type") {
        Some("user") => Role::User,
        Some("gemini") => Role::Assistant,
        _ => Role::System,
    };
    let timestamp = take_timestamp(&mut message, "timestamp");
    let mut record = Record { entry_id, role, timestamp, blocks: Vec::new(), meta: Default::default() };
    match message.remove("thoughts") {
        Some(Value::Array(thoughts)) => {
            let kept = thoughts.into_iter().map(|t| thought(t, fresh, &mut record.blocks)).collect();
            put(&mut record.meta, "thoughts", &Value::Array(kept));
        }
        Some(other) => put(&mut record.meta, "thoughts", &other),
        None => {}
    }
    content(&mut message, fresh, &mut record);
    let mut results = Vec::new();
    match message.remove("toolCalls") {
        Some(Value::Array(calls)) => {
            let kept = calls.into_iter().map(|call| tool_call(call, fresh, &mut record.blocks, &mut results));
            put(&mut record.meta, "toolCalls", &Value::Array(kept.collect()));
        }
        Some(other) => put(&mut record.meta, "toolCalls", &other),
        None => {}
    }
    put_all(&mut record.meta, message);
    if seen.versions > 1 {
        put(&mut record.meta, "revises", &Value::String(seen.entry_id.clone()));
    }
    let result = (!results.is_empty()).then(|| Record {
        entry_id: format!("{}/result", record.entry_id),
        role: Role::Tool,
        timestamp: record.timestamp.clone(),
        blocks: results,
        meta: Default::default(),
    });
    std::iter::once(record).chain(result).collect()
}

/// A thought `{subject, description, timestamp}` as a thinking block `**subject**\n\ndescription`
/// (the form the model wrote it in); what is left of it (subject, timestamp) stays for `meta`.
fn thought(thought: Value, fresh: &mut Fresh<'_>, blocks: &mut Vec<Block>) -> Value {
    let Value::Object(mut thought) = thought else { return thought };
    let Some(description) = take_text(&mut thought, "description") else { return Value::Object(thought) };
    let text = match str_of(&thought, "subject").filter(|subject| !subject.is_empty()) {
        Some(subject) => format!("**{subject}**\n\n{description}"),
        None => description,
    };
    fresh.push(Block::Thinking { text }, blocks);
    Value::Object(thought)
}

/// A message's content: a string, or parts (`{text}`, `{text, thought: true}`, `{inlineData}`);
/// what no block holds goes to `meta["contentExtra"]`, keyed by the part's index.
fn content(message: &mut Map<String, Value>, fresh: &mut Fresh<'_>, record: &mut Record) {
    let parts = match message.remove("content") {
        Some(Value::String(text)) if !text.is_empty() => {
            return fresh.push(Block::Text { text }, &mut record.blocks)
        }
        Some(Value::Array(parts)) if !parts.is_empty() => parts,
        Some(Value::Object(part)) => {
            put(&mut record.meta, "contentForm", &Value::String("part".into()));
            vec![Value::Object(part)]
        }
        // Empty, null or odd content stays as it is.
        Some(other) => return put(&mut record.meta, "content", &other),
        None => return,
    };
    let mut extra = Map::new();
    for (index, part) in parts.into_iter().enumerate() {
        let mut part = match part {
            Value::String(text) if !text.is_empty() => {
                fresh.push(Block::Text { text }, &mut record.blocks);
                continue;
            }
            Value::Object(part) => part,
            other => {
                extra.insert(index.to_string(), other);
                continue;
            }
        };
        let thinking = part.get("thought") == Some(&Value::Bool(true));
        if let Some(text) = take_text(&mut part, "text") {
            let block = if thinking { Block::Thinking { text } } else { Block::Text { text } };
            fresh.push(block, &mut record.blocks);
        } else if let Some(blob) = inline_blob(&mut part) {
            fresh.push(blob, &mut record.blocks);
        }
        // functionCall, functionResponse and other parts: the tool calls hold them as blocks.
        if !part.is_empty() {
            extra.insert(index.to_string(), Value::Object(part));
        }
    }
    if !extra.is_empty() {
        put(&mut record.meta, "contentExtra", &Value::Object(extra));
    }
}

/// Removes a non-empty string field and returns it (an empty one stays, so it is not lost).
pub(super) fn take_text(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key) {
        Some(Value::String(text)) if !text.is_empty() => take_str(map, key),
        _ => None,
    }
}

/// A blob from an `{inlineData: {mimeType, data}}` part (base64 data); `mimeType` stays.
pub(super) fn inline_blob(part: &mut Map<String, Value>) -> Option<Block> {
    let inline = part.get_mut("inlineData")?.as_object_mut()?;
    let data = base64_bytes(str_of(inline, "data")?)?;
    inline.remove("data");
    let media_type = str_of(inline, "mimeType").unwrap_or_default().to_owned();
    Some(Block::Blob { media_type, data })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(messages: &mut Messages, message: Value) -> Vec<Record> {
        messages.read(message, "gemini:s:1".into(), false)
    }

    #[test]
    fn content_parts_and_results_become_blocks_and_the_rest_meta() {
        let message = json!({"id": "m1", "timestamp": "2026-03-18T02:00:00Z", "type": "gemini",
            "content": [{"text": "写真を見て 👀"}, {"text": "考え中", "thought": true},
                {"inlineData": {"mimeType": "image/png", "data": "aGk="}},
                {"functionCall": {"name": "ls"}}, ""],
            "toolCalls": [
                {"id": "c1", "name": "run_shell_command", "args": {"command": "ls -la"},
                 "status": "cancelled", "result": [{"functionResponse": {"id": "c1",
                     "name": "run_shell_command", "response": {"error": "[Operation Cancelled]"}}}]},
                {"id": "c2", "name": "read_many_files", "args": {}, "status": "success",
                 "result": [{"functionResponse": {"id": "c2", "name": "other", "response": {"a": 1}}},
                     {"text": "e\u{301}"}, {"inlineData": {"mimeType": "image/gif", "data": "aGk="}}]},
                {"id": "c3", "name": "glob", "args": {"pattern": "*"}, "status": "success", "result": "a\nb"},
                {"id": "c4", "name": "ls", "args": {}, "status": "executing", "result": null},
                {"name": "no id"}]});
        let records = read(&mut Messages::default(), message);
        let [record, result] = records.as_slice() else { panic!("two records: {records:?}") };
        let blob = |media_type: &str| Block::Blob { media_type: media_type.into(), data: b"hi".to_vec() };
        let call = |id: &str, tool: &str, input: &str| Block::tool_call(id, tool, input);
        assert_eq!(
            record.blocks,
            [
                Block::text("写真を見て 👀"),
                Block::Thinking { text: "考え中".into() },
                blob("image/png"),
                call("c1", "run_shell_command", r#"{"command":"ls -la"}"#),
                call("c2", "read_many_files", "{}"),
                call("c3", "glob", r#"{"pattern":"*"}"#),
                call("c4", "ls", "{}"),
            ]
        );
        let meta = |key: &str| serde_json::from_str::<Value>(&record.meta[key]).unwrap_or_default();
        let extra = json!({"1": {"thought": true}, "2": {"inlineData": {"mimeType": "image/png"}},
            "3": {"functionCall": {"name": "ls"}}, "4": ""});
        assert_eq!(meta("contentExtra"), extra);
        let calls = json!([{"id": "c1", "status": "cancelled"},
            {"id": "c2", "status": "success", "resultExtra": {"0": {"functionResponse": {"name": "other"}},
                "2": {"inlineData": {"mimeType": "image/gif"}}}},
            {"id": "c3", "status": "success"}, {"id": "c4", "result": null, "status": "executing"},
            {"name": "no id"}]);
        assert_eq!(meta("toolCalls"), calls);
        assert_eq!((result.entry_id.as_str(), result.role), ("m1/result", Role::Tool));
        assert_eq!(
            result.blocks,
            [
                Block::tool_result("c1", "run_shell_command", true, "[Operation Cancelled]"),
                Block::tool_result("c2", "read_many_files", false, "{\"a\":1}\ne\u{301}"),
                blob("image/gif"),
                Block::tool_result("c3", "glob", false, "a\nb"),
            ]
        );
    }

    #[test]
    fn odd_messages_keep_their_content_in_meta() {
        let mut messages = Messages::default();
        let empty = &read(&mut messages, json!({"id": "m1", "type": "gemini", "content": ""}))[0];
        assert!(empty.blocks.is_empty());
        assert_eq!(empty.meta["content"], "\"\"");
        let part = &read(&mut messages, json!({"id": "m2", "type": "user", "content": {"text": "x"}}))[0];
        assert_eq!(
            (part.blocks.as_slice(), part.meta["contentForm"].as_str()),
            (&[Block::text("x")][..], "\"part\"")
        );
        let long = "i".repeat(600);
        let unusable = &read(&mut messages, json!({"id": long, "type": "warning", "content": "低い"}))[0];
        assert_eq!((unusable.entry_id.as_str(), unusable.role), ("gemini:s:1", Role::System));
        assert_eq!(messages.entry_id(&long), Some("gemini:s:1"));
    }
}
