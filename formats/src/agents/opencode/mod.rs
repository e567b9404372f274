//! OpenCode `export` JSON: one document `{info, messages: [{info, parts: [...]}]}`.
//!
//! Each message is one record (entryId: the message id) holding its text, reasoning and tool
//! calls; the results of its tool calls follow in a tool record of their own
//! (`<message id>/result`), so calls and results are separate records as in the line formats.
//! `meta["info"]` keeps the message's info; `meta["parts"]` keeps every part in order, minus what
//! went into a block (step, patch, file, snapshot and other parts stay there whole). The
//! session's own info changes while the session runs (title, update time), so it is a system
//! record at the end whose entryId names a hash of its content: re-importing a longer export
//! then adds the new info after the new messages instead of conflicting with the old one.

use serde_json::{Map, Value};

use super::lines::json_error;
use super::session::{
    data_url_blob, put, put_all, str_of, take_array, take_str, text_of, usable_id, usable_name,
    SessionBuilder,
};
use super::{ParseOptions, ParsedSession, ParsedTranscript, SkipReason, Skipped};
use annal_engine::canonical_json;
use annal_engine::rfc3339_from_millis;
use annal_engine::{Block, Record, Role};

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut parsed = ParsedTranscript::default();
    let skip = |line: usize, reason: SkipReason| Skipped { line, reason };
    if bytes.len() > options.max_document_bytes {
        let reason = SkipReason::TooLarge { bytes: bytes.len(), limit: options.max_document_bytes };
        parsed.skipped.push(skip(1, reason));
        return parsed;
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let line = 1 + bytes[..err.valid_up_to()].iter().filter(|&&b| b == b'\n').count();
            let line_start =
                bytes[..err.valid_up_to()].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            parsed
                .skipped
                .push(skip(line, SkipReason::NotUtf8 { valid_up_to: err.valid_up_to() - line_start }));
            return parsed;
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Text before the document (a banner a shell redirect caught) is reported, not fatal.
    let mut start = 0;
    let mut first_line = 1;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with('{') || trimmed.starts_with('[') {
            break;
        }
        if !trimmed.is_empty() {
            let reason = if trimmed.starts_with("//") {
                SkipReason::Comment
            } else {
                SkipReason::Invalid("text before the JSON document".into())
            };
            parsed.skipped.push(skip(first_line, reason));
        }
        start += line.len();
        first_line += 1;
    }
    let document = match serde_json::from_str::<Value>(&text[start..]) {
        Ok(document) => document,
        Err(err) => {
            let line = first_line + err.line().saturating_sub(1);
            let reason = if err.is_eof() { SkipReason::Truncated } else { json_error(&err) };
            parsed.skipped.push(skip(line, reason));
            return parsed;
        }
    };
    let Value::Object(document) = document else {
        let reason = SkipReason::Invalid("an OpenCode export is a JSON object".into());
        parsed.skipped.push(skip(first_line, reason));
        return parsed;
    };
    // An export is `{info, messages: [{info, parts}]}`. A document without both (a Postman
    // collection opens with `info` too; a SWE-agent trajectory has one) is not an export, even
    // when `--format opencode` says so: nothing of it is read.
    let shaped = document.get("info").is_some_and(Value::is_object)
        && document.get("messages").is_some_and(Value::is_array);
    if !shaped {
        let reason = SkipReason::Invalid(
            "an OpenCode export is an object with an \"info\" object and a \"messages\" array".into(),
        );
        parsed.skipped.push(skip(first_line, reason));
        parsed.unrecognised += 1;
        return parsed;
    }
    // Other documents with a `messages` array (Gemini CLI's sessions) are counted as not of
    // this format.
    let has_info = |value: &Value| value.get("info").is_some_and(Value::is_object);
    let messages = document.get("messages").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let known = messages.iter().filter(|m| has_info(m)).count();
    parsed.recognised += known + usize::from(document.get("info").is_some_and(Value::is_object));
    parsed.unrecognised += messages.len() - known + usize::from(!document.contains_key("info"));
    parsed.sessions.push(export_session(document, stem));
    parsed
}

/// The session of an export document `{info, messages}`; the database and storage-tree readers
/// rebuild that document from their rows, so both yield the same records.
pub(super) fn export_session(mut document: Map<String, Value>, stem: &str) -> ParsedSession {
    let info = match document.remove("info") {
        Some(Value::Object(info)) => info,
        Some(other) => Map::from_iter([("value".to_owned(), other)]),
        None => Map::new(),
    };
    let name = str_of(&info, "id").filter(|id| usable_name(id)).unwrap_or(stem).to_owned();
    // A sub-agent's session names the session that spawned it.
    let parent = str_of(&info, "parentID").map(|id| canonical_json(&Value::String(id.to_owned())));
    let messages = take_array(&mut document, "messages");
    let mut builder = SessionBuilder::new("opencode", true);
    for (index, message) in messages.into_iter().enumerate() {
        // Derived ids count messages from 1, as lines are counted in the line formats.
        for record in message_records(message) {
            builder.push(index + 1, record, None);
        }
    }
    builder.push(0, info_record(&name, info, document), None);
    let extra: Vec<(&str, String)> = parent.into_iter().map(|p| ("parentSession", p)).collect();
    builder.finish(name, None, None, &extra)
}

/// The session info as a system record (see the module comment for its entryId).
fn info_record(name: &str, info: Map<String, Value>, rest: Map<String, Value>) -> Record {
    let mut record = system_record();
    record.timestamp = millis_at(&info, &["time", "created"]);
    let info = Value::Object(info);
    let hash = blake3::hash(canonical_json(&info).as_bytes()).to_hex();
    record.entry_id = format!("opencode:{name}:info:{}", &hash.as_str()[..16]);
    put(&mut record.meta, "session", &info);
    put_all(&mut record.meta, rest);
    record
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

/// A millisecond timestamp at `path` in `map`, as RFC 3339 text.
fn millis_at(map: &Map<String, Value>, path: &[&str]) -> Option<String> {
    let (last, parents) = path.split_last()?;
    let mut at = map;
    for key in parents {
        at = at.get(*key)?.as_object()?;
    }
    rfc3339_from_millis(at.get(*last)?.as_i64()?)
}

/// A message's record, then its tool results' record if it has any.
fn message_records(message: Value) -> Vec<Record> {
    let mut record = system_record();
    let Value::Object(mut message) = message else {
        put(&mut record.meta, "value", &message);
        return vec![record];
    };
    let info = match message.remove("info") {
        Some(Value::Object(info)) => info,
        Some(other) => Map::from_iter([("value".to_owned(), other)]),
        None => Map::new(),
    };
    let id = str_of(&info, "id").filter(|id| usable_id(id)).map(str::to_owned);
    record.entry_id = id.clone().unwrap_or_default();
    record.role = match str_of(&info, "role") {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        _ => Role::System,
    };
    record.timestamp = millis_at(&info, &["time", "created"]);
    let mut results = Vec::new();
    let mut result_time = None;
    match message.remove("parts") {
        Some(Value::Array(parts)) => {
            let kept = message_parts(parts, &mut record.blocks, &mut results, &mut result_time);
            put(&mut record.meta, "parts", &Value::Array(kept));
        }
        Some(other) => {
            message.insert("parts".into(), other);
        }
        None => {}
    }
    put(&mut record.meta, "info", &Value::Object(info));
    put_all(&mut record.meta, message);
    let mut records = vec![record];
    if !results.is_empty() {
        let mut result = system_record();
        result.role = Role::Tool;
        // A message without an id gets a derived one; its result then does too.
        result.entry_id = id.map(|id| format!("{id}/result")).unwrap_or_default();
        result.timestamp = result_time.or_else(|| records[0].timestamp.clone());
        result.blocks = results;
        records.push(result);
    }
    records
}

/// A message's parts as blocks (calls and text into `blocks`, outcomes into `results`); returns
/// what is left of each part, in order.
fn message_parts(
    parts: Vec<Value>,
    blocks: &mut Vec<Block>,
    results: &mut Vec<Block>,
    result_time: &mut Option<String>,
) -> Vec<Value> {
    let mut kept = Vec::with_capacity(parts.len());
    for part in parts {
        let Value::Object(mut part) = part else {
            kept.push(part);
            continue;
        };
        match str_of(&part, "type") {
            Some("text") => blocks.extend(take_str(&mut part, "text").map(|text| Block::Text { text })),
            Some("reasoning") => {
                blocks.extend(take_str(&mut part, "text").map(|text| Block::Thinking { text }));
            }
            Some("tool") => {
                if let Some(time) = tool_part(&mut part, blocks, results) {
                    *result_time = Some(time);
                }
            }
            Some("file") => {
                if let Some(blob) = str_of(&part, "url").and_then(data_url_blob) {
                    part.remove("url");
                    blocks.push(blob);
                }
            }
            _ => {}
        }
        kept.push(Value::Object(part));
    }
    kept
}

/// A tool part: its call into `calls`, its outcome (if finished) into `results`. Returns when
/// the tool finished, if known.
fn tool_part(
    part: &mut Map<String, Value>,
    calls: &mut Vec<Block>,
    results: &mut Vec<Block>,
) -> Option<String> {
    let call_id = str_of(part, "callID").unwrap_or_default().to_owned();
    let tool = str_of(part, "tool").unwrap_or_default().to_owned();
    let state = part.get_mut("state").and_then(Value::as_object_mut)?;
    let input = state.remove("input").map_or_else(|| "{}".to_owned(), |input| text_of(&input));
    calls.push(Block::ToolCall {
        call_id: call_id.clone(),
        tool: tool.clone(),
        input,
        target: String::new(),
    });
    let (key, is_error) = match str_of(state, "status") {
        Some("completed") => ("output", false),
        Some("error") => ("error", true),
        // Pending or running: no outcome yet.
        _ => return None,
    };
    let output = state.remove(key).map(|value| text_of(&value)).unwrap_or_default();
    results.push(Block::ToolResult { call_id, tool, is_error, output });
    if let Some(Value::Array(attachments)) = state.get_mut("attachments") {
        for attachment in attachments.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(blob) = str_of(attachment, "url").and_then(data_url_blob) {
                attachment.remove("url");
                results.push(blob);
            }
        }
    }
    millis_at(state, &["time", "end"])
}

#[cfg(test)]
mod tests {
    use super::super::{detect_format, parse_transcript, TranscriptFormat};
    use super::*;

    const EXPORT: &str = r#"{
  "info": {"id": "ses_1", "parentID": "ses_0", "title": "Demo", "time": {"created": 1771210919109, "updated": 1771210999000}},
  "messages": [
    {"info": {"id": "msg_1", "role": "user", "time": {"created": 1771210919124}},
     "parts": [{"type": "text", "text": "list files", "id": "prt_1"},
               {"type": "file", "mime": "image/png", "url": "data:image/png;base64,aGk=", "id": "prt_2"}]},
    {"info": {"id": "msg_2", "role": "assistant", "time": {"created": 1771210919136}},
     "parts": [{"type": "step-start", "id": "prt_3"},
               {"type": "reasoning", "text": "look", "id": "prt_4"},
               {"type": "tool", "callID": "c1", "tool": "glob", "id": "prt_5",
                "state": {"status": "completed", "input": {"pattern": "*"}, "output": "a\nb", "time": {"start": 1771210920000, "end": 1771210921000}}},
               {"type": "tool", "callID": "c2", "tool": "bash", "id": "prt_6",
                "state": {"status": "error", "input": {"command": "x"}, "error": "not found"}},
               {"type": "tool", "callID": "c3", "tool": "read", "id": "prt_7", "state": {"status": "running", "input": {}}},
               {"type": "text", "text": "done", "id": "prt_8"},
               {"type": "step-finish", "reason": "stop", "id": "prt_9"}]}
  ]
}"#;

    #[test]
    fn messages_then_results_then_session_info() {
        let parsed = parse_transcript(EXPORT.as_bytes(), TranscriptFormat::OpenCode, "export");
        assert!(parsed.skipped.is_empty());
        let session = &parsed.sessions[0];
        assert_eq!(session.name, "ses_1");
        let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
        assert_eq!(ids[..3], ["msg_1", "msg_2", "msg_2/result"]);
        assert!(ids[3].starts_with("opencode:ses_1:info:"));
        let user = &session.records[0];
        assert_eq!(user.role, Role::User);
        assert_eq!(user.timestamp.as_deref(), Some("2026-02-16T03:01:59.124Z"));
        assert_eq!(user.blocks[0], Block::Text { text: "list files".into() });
        assert!(matches!(&user.blocks[1], Block::Blob { media_type, .. } if media_type == "image/png"));
        assert_eq!(
            user.meta["parts"],
            r#"[{"id":"prt_1","type":"text"},{"id":"prt_2","mime":"image/png","type":"file"}]"#
        );
        let assistant = &session.records[1];
        assert_eq!(assistant.blocks.len(), 5);
        assert_eq!(
            assistant.blocks[1],
            Block::ToolCall {
                call_id: "c1".into(),
                tool: "glob".into(),
                input: r#"{"pattern":"*"}"#.into(),
                target: String::new()
            }
        );
        assert!(assistant.meta["parts"].contains(r#"{"id":"prt_9","reason":"stop","type":"step-finish"}"#));
        let result = &session.records[2];
        assert_eq!(result.role, Role::Tool);
        assert_eq!(result.timestamp.as_deref(), Some("2026-02-16T03:02:01.000Z"));
        assert_eq!(
            result.blocks,
            [
                Block::ToolResult {
                    call_id: "c1".into(),
                    tool: "glob".into(),
                    is_error: false,
                    output: "a\nb".into()
                },
                Block::ToolResult {
                    call_id: "c2".into(),
                    tool: "bash".into(),
                    is_error: true,
                    output: "not found".into()
                },
            ]
        );
        assert!(session.records[3].meta["session"].contains("\"title\":\"Demo\""));
        assert!(session.records.iter().all(|r| r.meta["parentSession"] == "\"ses_0\""));
    }

    #[test]
    fn broken_documents_are_reported() {
        let cut = &EXPORT[..EXPORT.len() - 10];
        let parsed = parse_transcript(cut.as_bytes(), TranscriptFormat::OpenCode, "export");
        assert!(parsed.sessions.is_empty());
        assert_eq!(parsed.skipped[0].reason, SkipReason::Truncated);
        let banner = format!("Exporting session: ses_1\n{EXPORT}");
        let parsed = parse_transcript(banner.as_bytes(), TranscriptFormat::OpenCode, "export");
        assert_eq!(
            parsed.skipped[0].to_string(),
            "line 1: not a valid record (text before the JSON document)"
        );
        assert_eq!(parsed.sessions[0].records.len(), 4);
        let parsed = parse_transcript(
            b"{\"info\": {\"id\": \"ses_2\"}, \"messages\": [1, {\"parts\": 2}]}",
            TranscriptFormat::OpenCode,
            "f",
        );
        let ids: Vec<&str> = parsed.sessions[0].records.iter().map(|r| r.entry_id.as_str()).collect();
        assert_eq!(ids[..2], ["opencode:ses_2:1", "opencode:ses_2:2"]);
        // Without its `info` or its `messages` (a Postman collection, a SWE-agent trajectory), a
        // document is not an export: nothing of it is read, and the reason is given.
        for other in
            ["{\"messages\": []}", "{\n  \"info\": {\"name\": \"Caf\u{e9} API\"},\n  \"item\": []\n}\n"]
        {
            let parsed = parse_transcript(other.as_bytes(), TranscriptFormat::OpenCode, "f");
            assert!(parsed.sessions.is_empty(), "{other}");
            assert_eq!((parsed.recognised, parsed.unrecognised), (0, 1));
            assert!(parsed.skipped[0].to_string().contains("an \"info\" object and a \"messages\" array"));
            assert_eq!(detect_format(other.as_bytes()), None, "{other}");
        }
        let options = ParseOptions { max_document_bytes: 4, ..ParseOptions::default() };
        let parsed = super::parse(b"{\"messages\": []}", "f", &options);
        assert!(matches!(parsed.skipped[0].reason, SkipReason::TooLarge { bytes: 16, limit: 4 }));
    }
}
