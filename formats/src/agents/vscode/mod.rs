//! GitHub Copilot Chat sessions as VS Code stores them (`<User>/workspaceStorage/<id>/chatSessions/`,
//! `globalStorage/emptyWindowChatSessions/`): a session's whole state as one JSON document
//! (`<session>.json`, rewritten on every save), or as a log of changes to it (`<session>.jsonl`):
//! `{"kind":0,"v":state}` sets the whole state, `{"kind":1,"k":path,"v":value}` sets the value at a
//! path, `{"kind":2,"k":path,"v":items,"i":n?}` cuts the array at the path to `n` items (when
//! given) and appends `items`, `{"kind":3,"k":path}` deletes. The log is replayed to the state
//! it describes (VS Code compacts it by writing a fresh `kind: 0` line).
//!
//! The state `{version, sessionId, requests: [...], …}` gives, per request, a user record of its
//! `message.text` (`vscode:<session>:<requestId>`: a request id is unique only within its
//! session, and a session copied or moved between windows holds the same requests) and an
//! assistant record of its `response` parts (`…/response`): Markdown as text, `thinking` as thinking, a
//! `toolInvocationSerialized` part as the call (`toolId`, its input where the result details
//! hold one, else the invocation message) and its result (the details' output, else the
//! past-tense message). What no block holds stays in `meta` (`variableData`, `result`, parts of
//! other kinds, …). The session's other fields follow in one system record, `vscode:<session>:session`,
//! without those that describe the window at the moment of the save rather than the
//! conversation (`lastMessageDate`, the draft in `inputState`, `hasPendingEdits`, `isNew`), which
//! VS Code rewrites at every save: a title given later is kept by the loader as a revision.
//! A request that changed since it was stored (a response that went on streaming) is kept by
//! the loader as a revision.

use serde_json::{Map, Value};

use super::lines::{document_body, lines, note_shape, read_line, LineValue};
use super::session::{
    put, put_all, put_nonempty, str_of, take_array, take_str, text_of, usable_id, usable_name, SessionBuilder,
};
use super::{ParseOptions, ParsedTranscript, SkipReason, Skipped};
use annal_engine::{canonical_json, rfc3339_from_millis, Block, Record, Role};

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut parsed = ParsedTranscript::default();
    let Some(body) = document_body(bytes, options, &mut parsed) else { return parsed };
    let state = match serde_json::from_slice::<Value>(body) {
        Ok(document) => Some(document),
        Err(_) => replay(body, options, &mut parsed),
    };
    let Some(Value::Object(mut state)) = state else {
        if parsed.skipped.is_empty() {
            parsed
                .skipped
                .push(Skipped { line: 1, reason: SkipReason::Invalid("not a chat session".into()) });
        }
        return parsed;
    };
    let shaped = state.get("sessionId").is_some_and(Value::is_string)
        && state.get("requests").is_some_and(Value::is_array);
    note_shape(
        &mut parsed,
        shaped,
        "a chat session is an object with a \"sessionId\" and a \"requests\" array",
    );
    let name = str_of(&state, "sessionId").filter(|id| usable_name(id)).unwrap_or(stem).to_owned();
    let requests = take_array(&mut state, "requests");
    let mut builder = SessionBuilder::new("vscode", true);
    for (index, request) in requests.into_iter().enumerate() {
        let (records, known) = request_records(request, &name, index + 1);
        *if known { &mut parsed.recognised } else { &mut parsed.unrecognised } += 1;
        for record in records {
            builder.push(index + 1, record, None);
        }
    }
    *if is_session(&state) { &mut parsed.recognised } else { &mut parsed.unrecognised } += 1;
    for key in SAVE_FIELDS {
        state.remove(key);
    }
    let mut fields = Record::new(format!("vscode:{name}:session"), Role::System, Vec::new());
    put_all(&mut fields.meta, state);
    builder.push(0, fields, None);
    parsed.sessions.push(builder.finish(name, None, None, &[]));
    parsed
}

/// The session's fields that describe the window at the moment of a save, not the conversation.
const SAVE_FIELDS: [&str; 4] = ["lastMessageDate", "inputState", "hasPendingEdits", "isNew"];

/// The state a change log describes; lines that cannot be read or applied are reported.
fn replay(body: &[u8], options: &ParseOptions, parsed: &mut ParsedTranscript) -> Option<Value> {
    let mut state: Option<Value> = None;
    for line in lines(body) {
        let change = match read_line(&line, options) {
            LineValue::Blank => continue,
            LineValue::Skip(reason) => {
                parsed.skipped.push(Skipped { line: line.number, reason });
                continue;
            }
            LineValue::Json(Value::Object(change)) => change,
            LineValue::Json(_) => {
                let reason = SkipReason::Invalid("a change is a JSON object".into());
                parsed.skipped.push(Skipped { line: line.number, reason });
                continue;
            }
        };
        let applied = match (change.get("kind").and_then(Value::as_u64), state.as_mut()) {
            (Some(0), _) => {
                state = change.get("v").cloned();
                Ok(())
            }
            (Some(kind @ 1..=3), Some(state)) => apply(state, kind, &change),
            (Some(1..=3), None) => Err("a change before the first full state".to_owned()),
            _ => Err("not a change VS Code writes (kind 0 to 3)".to_owned()),
        };
        if let Err(reason) = applied {
            parsed.skipped.push(Skipped { line: line.number, reason: SkipReason::Invalid(reason) });
        }
    }
    state
}

/// Applies one change (kind 1 set, 2 cut and push, 3 delete) to `state`.
fn apply(state: &mut Value, kind: u64, change: &Map<String, Value>) -> Result<(), String> {
    let path = change.get("k").and_then(Value::as_array).ok_or("a change names its path in \"k\"")?;
    let (last, parents) = match path.split_last() {
        Some(split) => split,
        None if kind == 1 => {
            *state = change.get("v").cloned().unwrap_or(Value::Null);
            return Ok(());
        }
        None => return Err("an empty path".into()),
    };
    let mut target = &mut *state;
    for key in parents {
        target = step(target, key).ok_or_else(|| format!("no value at {}", canonical_json(key)))?;
    }
    match kind {
        1 => {
            let value = change.get("v").cloned().unwrap_or(Value::Null);
            match (target, last) {
                (Value::Object(map), Value::String(key)) => {
                    map.insert(key.clone(), value);
                }
                (Value::Array(items), Value::Number(n)) => {
                    let index = n.as_u64().and_then(|n| usize::try_from(n).ok()).ok_or("a bad index")?;
                    match index.cmp(&items.len()) {
                        std::cmp::Ordering::Less => items[index] = value,
                        std::cmp::Ordering::Equal => items.push(value),
                        std::cmp::Ordering::Greater => return Err(format!("index {index} past the end")),
                    }
                }
                _ => return Err("the path does not fit the state".into()),
            }
        }
        2 => {
            let array = step(target, last).ok_or("no array at the path")?;
            let Value::Array(items) = array else { return Err("no array at the path".into()) };
            if let Some(cut) = change.get("i").and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok()) {
                items.truncate(cut);
            }
            if let Some(Value::Array(more)) = change.get("v") {
                items.extend(more.iter().cloned());
            }
        }
        _ => match (target, last) {
            (Value::Object(map), Value::String(key)) => {
                map.remove(key);
            }
            (Value::Array(items), Value::Number(n)) => {
                if let Some(index) =
                    n.as_u64().and_then(|n| usize::try_from(n).ok()).filter(|&i| i < items.len())
                {
                    items.remove(index);
                }
            }
            _ => return Err("the path does not fit the state".into()),
        },
    }
    Ok(())
}

/// The value under `key` (an object key or an array index), to change it.
fn step<'v>(value: &'v mut Value, key: &Value) -> Option<&'v mut Value> {
    match (value, key) {
        (Value::Object(map), Value::String(key)) => map.get_mut(key),
        (Value::Array(items), Value::Number(n)) => items.get_mut(usize::try_from(n.as_u64()?).ok()?),
        _ => None,
    }
}

/// Whether a state is a chat session's: its `sessionId`, `requests` (taken out before this is
/// asked, so not required here) and the user names VS Code writes, or its `version`.
fn is_session(state: &Map<String, Value>) -> bool {
    state.get("sessionId").is_some_and(Value::is_string)
        && (state.contains_key("requesterUsername")
            || state.contains_key("responderUsername")
            || state.get("version").is_some_and(Value::is_number))
}

/// Whether a value is a whole chat session: its fields (see [`is_session`]) and `requests`.
fn is_whole_session(value: &Value) -> bool {
    value.as_object().is_some_and(|map| is_session(map) && map.get("requests").is_some_and(Value::is_array))
}

/// Whether one JSON object is a chat session written on one line, or the first line of a change
/// log (`{"kind":0,"v":session}`).
pub(super) fn is_chat_line(map: &Map<String, Value>) -> bool {
    (is_session(map) && map.get("requests").is_some_and(Value::is_array))
        || (map.get("kind").and_then(Value::as_u64) == Some(0) && map.get("v").is_some_and(is_whole_session))
}

/// Whether `bytes` is a chat session: the document, or a change log whose first line sets one.
pub(super) fn is_chat_session(bytes: &[u8]) -> bool {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if let Ok(document) = serde_json::from_slice::<Value>(body) {
        return is_whole_session(&document);
    }
    let Some(first) = lines(body).find(|line| !line.bytes.trim_ascii().is_empty()) else { return false };
    matches!(serde_json::from_slice::<Value>(first.bytes), Ok(Value::Object(change)) if is_chat_line(&change))
}

/// A request's user record and its response's assistant record, and whether it is a request.
fn request_records(request: Value, session: &str, index: usize) -> (Vec<Record>, bool) {
    let Value::Object(mut request) = request else {
        let mut record = Record::new(String::new(), Role::System, Vec::new());
        put(&mut record.meta, "value", &request);
        return (vec![record], false);
    };
    let id = match str_of(&request, "requestId").map(|id| format!("vscode:{session}:{id}")) {
        Some(id) if usable_id(&id) => id,
        _ => format!("vscode:{session}:{index}"),
    };
    let known = request.contains_key("requestId") && request.contains_key("message");
    let mut user = Record::new(id.clone(), Role::User, Vec::new());
    let mut assistant = Record::new(format!("{id}/response"), Role::Assistant, Vec::new());
    if let Some(Value::Object(mut message)) = request.remove("message") {
        if let Some(text) = take_str(&mut message, "text") {
            user.blocks.push(Block::Text { text });
        }
        put(&mut user.meta, "message", &Value::Object(message));
    }
    // The request's time (milliseconds), for both records; the number stays in `meta`.
    let stamp = request.get("timestamp").and_then(Value::as_i64).and_then(rfc3339_from_millis);
    user.timestamp.clone_from(&stamp);
    assistant.timestamp = stamp;
    if let Some(Value::Array(parts)) = request.remove("response") {
        let extra = response_into(parts, &mut assistant.blocks);
        put_nonempty(&mut assistant.meta, "responseExtra", extra);
    }
    for key in ["result", "followups", "contentReferences", "codeCitations", "modelState", "vote"] {
        if let Some(value) = request.remove(key) {
            put(&mut assistant.meta, key, &value);
        }
    }
    put_all(&mut user.meta, request);
    (vec![user, assistant], known)
}

/// Response parts as blocks; returns, keyed by part index, what no block holds.
fn response_into(parts: Vec<Value>, blocks: &mut Vec<Block>) -> Map<String, Value> {
    let mut extra = Map::new();
    for (index, part) in parts.into_iter().enumerate() {
        let Value::Object(mut part) = part else {
            extra.insert(index.to_string(), part);
            continue;
        };
        let kind = str_of(&part, "kind").map(str::to_owned);
        match kind.as_deref() {
            None | Some("markdownContent") => {
                // A Markdown string `{value, …}`, or `{kind: "markdownContent", content: {value}}`.
                let text = match part.get_mut("content") {
                    Some(Value::Object(content)) => take_str(content, "value"),
                    _ => take_str(&mut part, "value"),
                };
                if let Some(text) = text.filter(|text| !text.is_empty()) {
                    blocks.push(Block::Text { text });
                }
            }
            Some("thinking") => {
                if let Some(text) = part.get("value").map(text_of).filter(|text| !text.is_empty()) {
                    part.remove("value");
                    blocks.push(Block::Thinking { text });
                }
            }
            Some("toolInvocationSerialized") => tool_into(&mut part, blocks),
            Some(_) => {}
        }
        part.remove("kind");
        if !part.is_empty() {
            if let Some(kind) = kind {
                part.insert("kind".into(), Value::String(kind));
            }
            extra.insert(index.to_string(), Value::Object(part));
        }
    }
    extra
}

/// A tool invocation as its call and its result.
fn tool_into(part: &mut Map<String, Value>, blocks: &mut Vec<Block>) {
    let (Some(call_id), Some(tool)) = (take_str(part, "toolCallId"), take_str(part, "toolId")) else {
        return;
    };
    let message = |part: &Map<String, Value>, key: &str| -> Option<String> {
        match part.get(key)? {
            Value::String(text) => Some(text.clone()),
            Value::Object(markdown) => str_of(markdown, "value").map(str::to_owned),
            _ => None,
        }
    };
    let details = part.get("resultDetails").and_then(Value::as_object);
    let input = details
        .and_then(|details| details.get("input"))
        .map(text_of)
        .or_else(|| message(part, "invocationMessage"))
        .unwrap_or_default();
    let output = details.and_then(|details| details.get("output")).map(output_text);
    let output = output.or_else(|| message(part, "pastTenseMessage")).unwrap_or_default();
    let is_error = details.and_then(|details| details.get("isError")).and_then(Value::as_bool) == Some(true);
    blocks.push(Block::ToolCall {
        call_id: call_id.clone(),
        tool: tool.clone(),
        input,
        target: String::new(),
    });
    blocks.push(Block::ToolResult { call_id, tool, is_error, output });
}

/// A tool's output: its text parts one after another, else the value as JSON.
fn output_text(output: &Value) -> String {
    let Value::Array(items) = output else { return text_of(output) };
    let texts: Vec<String> = items
        .iter()
        .filter_map(|item| match item {
            Value::String(text) => Some(text.clone()),
            Value::Object(part) => str_of(part, "value").or_else(|| str_of(part, "text")).map(str::to_owned),
            _ => None,
        })
        .collect();
    if texts.is_empty() {
        text_of(output)
    } else {
        texts.join("\n")
    }
}

#[cfg(test)]
mod tests;
