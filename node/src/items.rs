//! Sessions kept as OpenAI Responses-API items, for the `AnnalSession` of the npm package: items
//! appended as records that keep their own JSON text, read back verbatim (or, for a record another
//! agent wrote, as the items its blocks make). The same layout as the Python package's, so a
//! session written from one language reads from the other.

use std::ops::Range;

use annal::responses::{
    record_from_responses_item, session_items, ItemError, RESPONSES_ITEM_KEY, RESPONSES_SEAL_KEY,
};
use annal::snapshot::RECEIPT_META_KEY;
use annal::{Annal, Block, Error, Record, SessionInfo, Snapshot};
use serde_json::Value;

/// What separates an Agents SDK session's id from its generation number in the names of its
/// later generations (`<id>~pop<N>`).
pub(crate) const GENERATION_MARK: &str = "~pop";

/// Where an Agents SDK session's generations stand, read in one snapshot.
#[derive(Debug)]
pub(crate) struct Head {
    /// The newest generation that is a fork of the one before: its name, records and number.
    pub(crate) name: String,
    pub(crate) records: u64,
    pub(crate) generation: u64,
    /// Where its seal says the next generation forks it, when it is sealed.
    pub(crate) sealed_at: Option<u64>,
    /// Whether a session of the next generation's name exists (and is not its fork).
    pub(crate) next_taken: bool,
}

/// The annal session holding `generation` of the session `id`.
pub(crate) fn generation_name(id: &str, generation: u64) -> String {
    if generation == 0 {
        id.to_owned()
    } else {
        format!("{id}{GENERATION_MARK}{generation}")
    }
}

/// Follows `id`'s generations from `generation` while each next one is a fork of the one
/// before it.
pub(crate) fn head(annal: &Annal, id: &str, mut generation: u64) -> Result<Head, Error> {
    let snapshot = annal.snapshot()?;
    loop {
        let name = generation_name(id, generation);
        let Some(info) = snapshot.session(&name)? else {
            return Ok(Head { name, records: 0, generation, sealed_at: None, next_taken: false });
        };
        let next = snapshot.session(&generation_name(id, generation + 1))?;
        if next.as_ref().is_some_and(|next| next.parent.as_deref() == Some(name.as_str())) {
            generation += 1;
            continue;
        }
        let sealed_at = sealed_at(&snapshot, &name, &info)?;
        return Ok(Head { name, records: info.len, generation, sealed_at, next_taken: next.is_some() });
    }
}

/// The fork point a generation's seal names: its last record, or the last before the
/// compaction receipts that came after it (a compaction appends its receipt wherever the
/// session is). Only the generation's own records are looked at, not those it inherits.
fn sealed_at(snapshot: &Snapshot, name: &str, info: &SessionInfo) -> Result<Option<u64>, Error> {
    let own_from = info.fork_at.unwrap_or(0);
    let mut order = info.len;
    while order > own_from {
        order -= 1;
        let Some(guard) = snapshot.record(name, order)? else { return Ok(None) };
        let view = guard.view()?;
        let mut receipt = false;
        for (key, value) in view.meta() {
            if key == RESPONSES_SEAL_KEY {
                let seal = serde_json::from_str::<Value>(value).ok();
                return Ok(seal.and_then(|seal| seal["keep"].as_u64()));
            }
            receipt |= key == RECEIPT_META_KEY;
        }
        if !receipt {
            return Ok(None);
        }
    }
    Ok(None)
}

/// One item per record, each under its entryId.
pub(crate) fn records(ids: &[String], items: &[String]) -> Result<Vec<Record>, String> {
    if ids.len() != items.len() {
        return Err(format!("{} ids for {} items", ids.len(), items.len()));
    }
    ids.iter()
        .zip(items)
        .enumerate()
        .map(|(index, (id, item))| record(id, item).map_err(|e| format!("item {index}: {e}")))
        .collect()
}

/// The record of one item: its blocks from the item in the Responses API's shape, its own text
/// kept whole, so it reads back as it came.
fn record(id: &str, item: &str) -> Result<Record, ItemError> {
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

/// The items of `session`'s records in `orders`, each with the sourceOrder of its record.
pub(crate) fn read(annal: &Annal, session: &str, orders: Range<u64>) -> Result<Vec<(u64, String)>, Error> {
    Ok(session_items(&annal.snapshot()?, session, orders)?)
}
