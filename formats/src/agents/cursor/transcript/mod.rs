//! Cursor agent transcripts (`~/.cursor/projects/<folder>/agent-transcripts/<session>.jsonl`,
//! `<session>/<session>.jsonl` in newer builds, sub-agents' under `<session>/subagents/`): one
//! line per message, `{role, message: {content}}`, appended; the CLI and the editor's agent
//! write them.
//!
//! The lines carry no id, time or model, so each is one record `cursor:<session>:<line>`, the
//! session `<chat>/transcript`, named by the file (its name is the conversation's id; the
//! conversation itself, under that id, is read from the editor's or the CLI's store). `user` lines are user
//! records and `assistant` lines assistant records of their Anthropic-style parts (`text`,
//! `tool_use` with no call id, the input an object or the patch text, `tool_result` where a
//! build writes it); a line of tool results only is a tool record. A line that is no message,
//! such as `{"type": "turn_ended", "status"}` at the end of a turn, is a system record of meta.
//! A sub-agent's file names its parent session (the folder above `subagents`) in
//! `meta.parentSession`.
//!
//! Cursor's agent is closed source: the shape followed is the one public readers of these
//! files agree on (docs/import.md names them).

use serde_json::{Map, Value};

use super::anthropic::{content_blocks, Dialect};
use super::lines::read_json_lines;
use super::session::{line_object, put, put_all, str_of, SessionBuilder};
use super::{ParseOptions, ParsedTranscript, TranscriptFormat};
use annal_engine::{canonical_json, Block, Record, Role};

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut builder = SessionBuilder::new("cursor", true);
    let mut parsed = ParsedTranscript::default();
    read_json_lines(
        bytes,
        options,
        TranscriptFormat::CursorTranscript,
        is_cursor_line,
        &mut parsed,
        |number, value| {
            builder.push(number, line_record(value), None);
        },
    );
    if !builder.is_empty() {
        // A sub-agent's stem is `<parent>/subagents/<session>` (`transcript_stem`).
        let (chat, parent) = match stem.split_once(SUBAGENTS) {
            Some((parent, chat)) => (chat, Some(parent)),
            None => (stem, None),
        };
        let extra: Vec<_> = parent
            .iter()
            .map(|p| ("parentSession", canonical_json(&Value::String(session_name(p)))))
            .collect();
        parsed.sessions.push(builder.finish(session_name(chat), None, None, &extra));
    }
    parsed
}

/// What separates a sub-agent's parent from its own name in its stem.
pub(super) const SUBAGENTS: &str = "/subagents/";

/// The session a chat's transcript is: `<chat>/transcript`. The editor's database and the
/// CLI's store hold the same chat under `<chat>`, with the ids, times and models the
/// transcript lacks; the two are kept side by side, never mixed in one session.
fn session_name(chat: &str) -> String {
    format!("{chat}/transcript")
}

/// Whether a line is one this format writes: a message, exactly `{role, message}` with a
/// role of `user` or `assistant` and a `message` object holding `content` (a list of parts or
/// a string); or the end of a turn, `{type: "turn_ended", status}`.
pub(super) fn is_cursor_line(map: &Map<String, Value>) -> bool {
    is_cursor_message(map) || (str_of(map, "type") == Some("turn_ended") && map.contains_key("status"))
}

/// A message line, the kind that tells the format (see [`is_cursor_line`]).
pub(super) fn is_cursor_message(map: &Map<String, Value>) -> bool {
    let content_ok = |message: &Map<String, Value>| {
        message.get("content").is_some_and(|content| content.is_array() || content.is_string())
    };
    map.len() == 2
        && matches!(str_of(map, "role"), Some("user" | "assistant"))
        && map.get("message").and_then(Value::as_object).is_some_and(content_ok)
}

/// The record of one line (see the module comment).
fn line_record(value: Value) -> Record {
    let mut record = Record::new(String::new(), Role::System, Vec::new());
    let Some(mut map) = line_object(value, &mut record) else { return record };
    if !is_cursor_message(&map) {
        put_all(&mut record.meta, map);
        return record;
    }
    record.role = match str_of(&map, "role") {
        Some("user") => Role::User,
        _ => Role::Assistant,
    };
    map.remove("role");
    let Some(Value::Object(mut message)) = map.remove("message") else { return record };
    match message.remove("content") {
        Some(Value::String(text)) => record.blocks.push(Block::Text { text }),
        Some(Value::Array(parts)) => {
            let content = content_blocks(parts, Dialect::Cursor);
            if content.only_results {
                record.role = Role::Tool;
            }
            record.blocks = content.blocks;
            if !content.extra.is_empty() {
                put(&mut record.meta, "content", &Value::Object(content.extra));
            }
        }
        Some(other) => put(&mut record.meta, "content", &other),
        None => {}
    }
    if !message.is_empty() {
        put(&mut record.meta, "message", &Value::Object(message));
    }
    record
}

#[cfg(test)]
mod tests;
