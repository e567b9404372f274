//! Items of the OpenAI Agents SDK for JavaScript as records: that SDK writes a few items in its
//! own dialect of the Responses API's shape, so each is stored with its blocks read from the
//! Responses shape and its own text kept whole, to read back as it came. The rest of a
//! session's layout is the Python package's (`annal_bindings`), so a session written from one
//! language reads from the other.

use annal::responses::{record_from_responses_item, ItemError, RESPONSES_ITEM_KEY};
use annal::{Block, Record};
use serde_json::Value;

/// The record of one item: its blocks from the item in the Responses API's shape, its own text
/// kept whole, so it reads back as it came.
pub(crate) fn record(id: &str, item: &str) -> Result<Record, ItemError> {
    let Some((shaped, tool)) = responses_shape(item) else { return record_from_responses_item(id, item) };
    let mut record = record_from_responses_item(id, &shaped)?;
    record.meta.insert(RESPONSES_ITEM_KEY.to_owned(), Value::String(item.to_owned()).to_string());
    for block in &mut record.blocks {
        if let Block::ToolResult { tool: named, .. } = block {
            named.clone_from(&tool);
        }
    }
    Ok(record)
}

/// An item of the Agents SDK for JavaScript in the Responses API's shape, with the tool a result
/// names: that SDK keeps a call's id as `callId`, and a tool's output as a `function_call_result`
/// naming its tool, with a text output as `{type: "text", text}`. None for any other item.
fn responses_shape(item: &str) -> Option<(String, String)> {
    let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(item) else { return None };
    let result = match map.get("type").and_then(Value::as_str) {
        Some("function_call") => false,
        Some("function_call_result") => true,
        _ => return None,
    };
    let call_id = map.remove("callId")?;
    map.insert("call_id".to_owned(), call_id);
    let mut tool = String::new();
    if result {
        map.insert("type".to_owned(), Value::from("function_call_output"));
        tool = map.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
        let text = map.get("output").and_then(|output| match output {
            Value::Object(part) if part.get("type").and_then(Value::as_str) == Some("text") => {
                part.get("text").and_then(Value::as_str).map(str::to_owned)
            }
            _ => None,
        });
        if let Some(text) = text {
            map.insert("output".to_owned(), Value::String(text));
        }
    }
    Some((Value::Object(map).to_string(), tool))
}
