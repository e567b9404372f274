//! A Gemini CLI tool call `{id, name, args, result, status, …}` as blocks: a call block in the
//! message's record, and a result block (plus a blob per inline image) once it has a result.

use serde_json::{Map, Value};

use super::message::{digest, inline_blob, take_text, Fresh, Known};
use crate::agents::session::{str_of, take_str, text_of};
use annal_engine::canonical_json;
use annal_engine::Block;

/// One `toolCalls` entry `{id, name, args, result, status, …}`: a call block, and a result
/// block once it has a result. Returns what is left of it for `meta["toolCalls"]`: the fields
/// no block holds, and those of a call or result that changed since an earlier version gave
/// its block (the block is not repeated, so a call keeps one result).
pub(super) fn tool_call(
    call: Value,
    fresh: &mut Fresh<'_>,
    blocks: &mut Vec<Block>,
    results: &mut Vec<Block>,
) -> Value {
    let Value::Object(mut call) = call else { return call };
    let (Some(call_id), Some(tool)) = (str_of(&call, "id"), str_of(&call, "name")) else {
        return Value::Object(call);
    };
    let (call_id, tool) = (call_id.to_owned(), tool.to_owned());
    let input = call.get("args").map_or_else(|| "{}".to_owned(), text_of);
    match fresh.call(&call_id, digest(&[tool.as_bytes(), input.as_bytes()])) {
        Known::Changed => {}
        known => {
            if known == Known::New {
                let target = String::new();
                blocks.push(Block::ToolCall { call_id: call_id.clone(), tool: tool.clone(), input, target });
            }
            call.remove("name");
            call.remove("args");
        }
    }
    let status = str_of(&call, "status").unwrap_or_default().to_owned();
    let result = match call.remove("result") {
        None => return Value::Object(call),
        Some(Value::Null) => {
            call.insert("result".into(), Value::Null);
            return Value::Object(call);
        }
        Some(result) => result,
    };
    match fresh.result(&call_id, digest(&[canonical_json(&result).as_bytes(), status.as_bytes()])) {
        Known::New => {
            let mut output = Output::default();
            let extra = result_parts(result, &call_id, &tool, &mut output);
            let is_error = output.error || matches!(status.as_str(), "error" | "cancelled");
            results.push(Block::ToolResult { call_id, tool, is_error, output: output.texts.join("\n") });
            results.append(&mut output.blobs);
            if !extra.is_empty() {
                call.insert("resultExtra".into(), Value::Object(extra));
            }
        }
        Known::Same => {}
        Known::Changed => {
            call.insert("result".into(), result);
        }
    }
    Value::Object(call)
}

/// What a tool result's parts say.
#[derive(Debug, Default)]
struct Output {
    texts: Vec<String>,
    error: bool,
    blobs: Vec<Block>,
}

/// Reads a result (`[{functionResponse: {id, name, response: {output} | {error}}}, …]`, or a
/// string) into `output`; returns what is left of each part, keyed by its index.
fn result_parts(result: Value, call_id: &str, tool: &str, output: &mut Output) -> Map<String, Value> {
    let parts = match result {
        Value::Array(parts) => parts,
        Value::String(text) => {
            output.texts.push(text);
            return Map::new();
        }
        other => vec![other],
    };
    let mut extra = Map::new();
    for (index, part) in parts.into_iter().enumerate() {
        let mut part = match part {
            Value::String(text) => {
                output.texts.push(text);
                continue;
            }
            Value::Object(part) => part,
            other => {
                output.texts.push(canonical_json(&other));
                continue;
            }
        };
        if let Some(Value::Object(response)) = part.get_mut("functionResponse") {
            function_response(response, call_id, tool, output);
            if response.is_empty() {
                part.remove("functionResponse");
            }
        }
        if let Some(text) = take_text(&mut part, "text") {
            output.texts.push(text);
        } else if let Some(blob) = inline_blob(&mut part) {
            output.blobs.push(blob);
        }
        if !part.is_empty() {
            extra.insert(index.to_string(), Value::Object(part));
        }
    }
    extra
}

/// `{id, name, response}`: the response's `output` (or `error`) is the result's text; any other
/// response is its canonical JSON. The id and name go when they repeat the call's.
fn function_response(response: &mut Map<String, Value>, call_id: &str, tool: &str, output: &mut Output) {
    if str_of(response, "id") == Some(call_id) {
        response.remove("id");
    }
    if str_of(response, "name") == Some(tool) {
        response.remove("name");
    }
    let Some(Value::Object(inner)) = response.get_mut("response") else { return };
    if let Some(text) = take_str(inner, "output") {
        output.texts.push(text);
    } else if let Some(text) = take_str(inner, "error") {
        output.texts.push(text);
        output.error = true;
    } else {
        output.texts.push(canonical_json(&Value::Object(std::mem::take(inner))));
    }
    if inner.is_empty() {
        response.remove("response");
    }
}
