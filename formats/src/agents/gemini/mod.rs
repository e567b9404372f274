//! Gemini CLI chat recordings (`~/.gemini/tmp/<project>/chats/`), both forms, told apart by
//! content: the JSONL log (`session-*.jsonl`, one JSON value per line) and the older whole-file
//! JSON (`session-*.json`, one object rewritten on every save).
//!
//! A message `{id, timestamp, type, content, thoughts?, toolCalls?, tokens?, model?, …}` is one
//! record (entryId: its id): `user` is a user record, `gemini` an assistant record, `info`,
//! `error` and `warning` system records. Thoughts become thinking blocks, content text, tool
//! calls call blocks; the results Gemini keeps inside each tool call follow in a tool record
//! `<entryId>/result`, as results follow calls in the other formats. What no block holds stays
//! in `meta` under its own key (`toolCalls` and `thoughts` minus what went into blocks,
//! `contentExtra`, `tokens`, `model`, `id`, `type`, …). See `gemini/message.rs`.
//!
//! The log never rewrites a record:
//! - the first line (`{sessionId, projectHash, startTime, lastUpdated, kind?, …}`) names the
//!   session and is a system record of meta;
//! - a message line whose id was read before (Gemini CLI writes a message again as its tokens,
//!   tool calls and results come in) is a revision `<entryId>~<n>` for the n-th version, with
//!   `meta["revises"]` naming the first: it holds the blocks no earlier version gave (a new
//!   call, a new result) and the whole of the message's other fields in `meta`;
//! - `{"$set": {…}}` (session metadata updates) is a system record of meta. A `$set` of
//!   `messages` (the history rewritten, e.g. tool output masked) keeps only their ids there,
//!   and each message in it is read as a message line, except that one equal to its latest
//!   version adds nothing;
//! - `{"$rewindTo": id}` is a system record of meta, with `meta["rewindsTo"]` naming the
//!   entryId of that message: the records it undoes stay, the journal is append-only.
//!
//! The whole-file JSON gives its messages' records (ids are stable across saves; a message
//! changed in place is stored as a revision by the loader), then the session's own fields
//! (which change on every save) in a system record at the end whose entryId names a hash of
//! them, as for OpenCode: a grown file appends its new messages and a new session record.
//! Entries without a usable id are `gemini:<session>:<line>` (the message's index, from 1, in
//! the whole-file form); a `kind: subagent` file is a session of its own.

use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use self::message::{Messages, MESSAGE_TYPES};
use super::lines::{json_error, lines, note_shape, read_line, LineValue};
use super::session::{fields_record, put, put_all, str_of, take_array, usable_name, SessionBuilder};
use super::{ParseOptions, ParsedTranscript, SkipReason, Skipped};
use annal_engine::is_rfc3339;
use annal_engine::{Record, Role};

mod message;
#[cfg(test)]
mod tests;
mod tools;

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let whole = (body.len() <= options.max_document_bytes).then(|| serde_json::from_slice::<Value>(body));
    let with_messages = |value: &Value| value.get("messages").is_some_and(Value::is_array);
    let document = matches!(&whole, Some(Ok(value @ Value::Object(_))) if with_messages(value));
    if !document && !opens_document(body) {
        return parse_log(bytes, stem, options);
    }
    let mut parsed = ParsedTranscript::default();
    let (line, reason) = match whole {
        Some(Ok(value)) => return parse_document(value, stem),
        Some(Err(err)) => document_error(body, &err),
        None => (1, SkipReason::TooLarge { bytes: bytes.len(), limit: options.max_document_bytes }),
    };
    parsed.skipped.push(Skipped { line, reason });
    parsed
}

/// The first line that is not blank opens a JSON object it does not close: a document written
/// over several lines, not a log.
fn opens_document(body: &[u8]) -> bool {
    let Some(first) = lines(body).find(|line| !line.bytes.trim_ascii().is_empty()) else { return false };
    first.bytes.trim_ascii_start().starts_with(b"{")
        && serde_json::from_slice::<IgnoredAny>(first.bytes).is_err_and(|err| err.is_eof())
}

/// Where and why a whole-file session could not be read.
fn document_error(body: &[u8], err: &serde_json::Error) -> (usize, SkipReason) {
    let line_of = |offset: usize| 1 + body[..offset].iter().filter(|&&b| b == b'\n').count();
    match std::str::from_utf8(body) {
        Err(bad) if bad.error_len().is_some() => {
            let valid = bad.valid_up_to();
            let line_start = body[..valid].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            (line_of(valid), SkipReason::NotUtf8 { valid_up_to: valid - line_start })
        }
        // Cut inside a character: a rewrite still going on.
        Err(_) => (line_of(body.len()), SkipReason::Truncated),
        Ok(_) if err.is_eof() => (err.line().max(1), SkipReason::Truncated),
        Ok(_) => (err.line().max(1), json_error(err)),
    }
}

/// The JSONL log, line by line (see the module comment).
fn parse_log(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut parsed = ParsedTranscript::default();
    let mut builder = SessionBuilder::new("gemini", true);
    let mut messages = Messages::default();
    let mut name: Option<String> = None;
    for line in lines(bytes) {
        match read_line(&line, options) {
            LineValue::Blank => {}
            LineValue::Skip(reason) => parsed.skipped.push(Skipped { line: line.number, reason }),
            LineValue::Json(value) => {
                // The first line read names the session, so lines appended later cannot rename it.
                let name = name.get_or_insert_with(|| session_name(&value, stem));
                let (known, records) = log_line(value, line.number, name, &mut messages);
                match known {
                    true => parsed.recognised += 1,
                    false => parsed.unrecognised += 1,
                }
                for record in records {
                    builder.push(line.number, record, None);
                }
            }
        }
    }
    if let Some(name) = name.filter(|_| !builder.is_empty()) {
        parsed.sessions.push(builder.finish(name, None, None, &[]));
    }
    parsed
}

/// The session id of a metadata line, else the file stem.
fn session_name(value: &Value, stem: &str) -> String {
    let id = value.as_object().filter(|map| is_metadata(map)).and_then(|map| str_of(map, "sessionId"));
    id.filter(|id| usable_name(id)).unwrap_or(stem).to_owned()
}

/// A log line's records, and whether it is of a kind Gemini CLI writes. The kinds are told
/// apart in the order Gemini CLI's own reader uses.
fn log_line(value: Value, line: usize, name: &str, messages: &mut Messages) -> (bool, Vec<Record>) {
    let mut record = system_record();
    let Value::Object(mut map) = value else {
        put(&mut record.meta, "value", &value);
        return (false, vec![record]);
    };
    if let Some(target) = str_of(&map, "$rewindTo") {
        if let Some(entry_id) = messages.entry_id(target) {
            put(&mut record.meta, "rewindsTo", &Value::String(entry_id.to_owned()));
        }
        put_all(&mut record.meta, map);
        return (true, vec![record]);
    }
    if str_of(&map, "id").is_some() {
        let known = str_of(&map, "type").is_some_and(|kind| MESSAGE_TYPES.contains(&kind));
        return (known, messages.read(Value::Object(map), format!("gemini:{name}:{line}"), false));
    }
    let is_set = map.get("$set").is_some_and(Value::is_object);
    let known = is_set || is_metadata(&map);
    let mut records = Vec::new();
    if known {
        let (holder, time_key) = match is_set {
            true => (map.get_mut("$set").and_then(Value::as_object_mut), "lastUpdated"),
            false => (Some(&mut map), "startTime"),
        };
        if let Some(holder) = holder {
            record.timestamp = str_of(holder, time_key).filter(|t| is_rfc3339(t)).map(str::to_owned);
            records = checkpoint(holder, line, name, messages);
        }
    }
    put_all(&mut record.meta, map);
    records.insert(0, record);
    (known, records)
}

/// The messages of a `$set` (or of a whole session written on one line): each is read as a
/// message line (unless unchanged) and replaced in `holder` by its id.
fn checkpoint(
    holder: &mut Map<String, Value>,
    line: usize,
    name: &str,
    messages: &mut Messages,
) -> Vec<Record> {
    let Some(Value::Array(items)) = holder.get_mut("messages") else { return Vec::new() };
    let mut records = Vec::new();
    for (index, item) in items.iter_mut().enumerate() {
        // Gemini CLI reads an item without a string id as no message; it is kept whole.
        let Some(id) = item.get("id").and_then(Value::as_str).map(str::to_owned) else { continue };
        let message = std::mem::replace(item, Value::String(id));
        let fallback = format!("gemini:{name}:{line}.{}", index + 1);
        records.extend(messages.read(message, fallback, true));
    }
    records
}

/// Gemini CLI's session metadata: the log's first line, or a whole session.
fn is_metadata(map: &Map<String, Value>) -> bool {
    str_of(map, "sessionId").is_some() && str_of(map, "projectHash").is_some()
}

fn system_record() -> Record {
    Record {
        entry_id: String::new(),
        role: Role::System,
        timestamp: None,
        blocks: Vec::new(),
        meta: Default::default(),
    }
}

/// The whole-file JSON: the messages, then the session's own fields (see the module comment).
fn parse_document(document: Value, stem: &str) -> ParsedTranscript {
    let mut parsed = ParsedTranscript::default();
    let Value::Object(mut document) = document else {
        let reason = SkipReason::Invalid("a Gemini CLI session is a JSON object".into());
        parsed.skipped.push(Skipped { line: 1, reason });
        return parsed;
    };
    let shaped = document.get("sessionId").is_some_and(Value::is_string)
        && document.get("messages").is_some_and(Value::is_array);
    let reason = "a Gemini CLI session is an object with a \"sessionId\" and a \"messages\" array";
    note_shape(&mut parsed, shaped, reason);
    let name = str_of(&document, "sessionId").filter(|id| usable_name(id)).unwrap_or(stem).to_owned();
    let items = take_array(&mut document, "messages");
    let mut builder = SessionBuilder::new("gemini", true);
    let mut messages = Messages::default();
    for (index, item) in items.into_iter().enumerate() {
        match item.get("type").and_then(Value::as_str).is_some_and(|kind| MESSAGE_TYPES.contains(&kind)) {
            true => parsed.recognised += 1,
            false => parsed.unrecognised += 1,
        }
        let records = if item.is_object() {
            messages.read(item, format!("gemini:{name}:{}", index + 1), false)
        } else {
            let mut record = system_record();
            put(&mut record.meta, "value", &item);
            vec![record]
        };
        for record in records {
            builder.push(index + 1, record, None);
        }
    }
    match is_metadata(&document) {
        true => parsed.recognised += 1,
        false => parsed.unrecognised += 1,
    }
    builder.push(0, session_record(&name, document), None);
    parsed.sessions.push(builder.finish(name, None, None, &[]));
    parsed
}

/// The session's fields as a system record whose entryId names a hash of them.
fn session_record(name: &str, fields: Map<String, Value>) -> Record {
    let timestamp = str_of(&fields, "lastUpdated").filter(|t| is_rfc3339(t)).map(str::to_owned);
    let mut record = fields_record(&format!("gemini:{name}"), fields);
    record.timestamp = timestamp;
    record
}

/// Whether one JSONL line is one only Gemini CLI writes: its metadata line, a `$set` or
/// `$rewindTo` line, or a message line (`id`, `timestamp` and a Gemini message `type`, none of
/// Claude Code's or Codex's own fields).
pub(super) fn is_gemini_line(map: &Map<String, Value>) -> bool {
    if map.get("$rewindTo").is_some_and(Value::is_string) || map.get("$set").is_some_and(Value::is_object) {
        return true;
    }
    let foreign = ["uuid", "parentUuid", "leafUuid", "message", "payload", "role"];
    if foreign.iter().any(|key| map.contains_key(*key)) {
        return false;
    }
    if is_metadata(map) {
        return true;
    }
    str_of(map, "id").is_some()
        && str_of(map, "timestamp").is_some()
        && str_of(map, "type").is_some_and(|kind| MESSAGE_TYPES.contains(&kind))
        && !map.contains_key("sessionId")
}

/// Whether `bytes` is a whole-file Gemini CLI session: an object with a `sessionId` and a
/// `messages` array of Gemini messages (or a `projectHash`), read without building it.
pub(super) fn is_gemini_document(bytes: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "sessionId")]
        _session_id: String,
        #[serde(rename = "projectHash")]
        project_hash: Option<IgnoredAny>,
        messages: Vec<Kind>,
    }
    #[derive(serde::Deserialize)]
    struct Kind {
        #[serde(rename = "type")]
        kind: String,
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if let Ok(probe) = serde_json::from_slice::<Probe>(bytes) {
        let known = |message: &Kind| MESSAGE_TYPES.contains(&message.kind.as_str());
        return probe.project_hash.is_some()
            || (!probe.messages.is_empty() && probe.messages.iter().all(known));
    }
    // A session cut off while Gemini CLI rewrote it still opens with its id and project.
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]);
    head.trim_start().starts_with('{') && head.contains("\"sessionId\"") && head.contains("\"projectHash\"")
}
