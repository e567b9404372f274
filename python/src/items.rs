//! Sessions kept as OpenAI Responses-API items, for `annal.agents.AnnalSession`: items appended
//! as records that keep their own JSON text, read back verbatim (or, for a record another agent
//! wrote, as the items its blocks make), and a projection's messages as items.

use std::ops::Range;

use annal::responses::{
    record_from_responses_item, record_message_blocks, responses_item_text, responses_items,
    RESPONSES_ITEM_KEY,
};
use annal::{Annal, AppendReceipt, Error, Projection, Record};
use serde_json::Value;

/// One item per record, each under its entryId, appended as one batch.
pub(crate) fn records(ids: &[String], items: &[String]) -> Result<Vec<Record>, String> {
    if ids.len() != items.len() {
        return Err(format!("{} ids for {} items", ids.len(), items.len()));
    }
    ids.iter()
        .zip(items)
        .enumerate()
        .map(|(index, (id, item))| {
            record_from_responses_item(id, item).map_err(|e| format!("item {index}: {e}"))
        })
        .collect()
}

/// Appends `records` as one batch at `expected_next`.
pub(crate) fn append(
    annal: &Annal,
    session: &str,
    expected_next: Option<u64>,
    records: Vec<Record>,
) -> Result<AppendReceipt, Error> {
    annal.append(session, expected_next, records)
}

/// The items of `session`'s records in `orders`, each with the sourceOrder of its record: an
/// item appended as one comes back as its own text; another record gives the items of its
/// blocks (possibly none, or several).
pub(crate) fn read(annal: &Annal, session: &str, orders: Range<u64>) -> Result<Vec<(u64, String)>, Error> {
    let snapshot = annal.snapshot()?;
    let mut items = Vec::new();
    for guard in snapshot.records(session, orders)? {
        let guard = guard?;
        let view = guard.view()?;
        let order = view.source_order();
        let kept =
            view.meta().find(|(key, _)| *key == RESPONSES_ITEM_KEY).and_then(|(_, v)| responses_item_text(v));
        if let Some(text) = kept {
            items.push((order, text));
            continue;
        }
        let record = snapshot.to_record(&view)?;
        for item in responses_items(record.role, &record_message_blocks(&record)) {
            items.push((order, item.to_string()));
        }
    }
    Ok(items)
}

/// A projection's messages as Responses input items.
pub(crate) fn of_projection(projection: &Projection<'_>) -> Vec<Value> {
    projection.messages.iter().flat_map(|message| responses_items(message.role, &message.blocks)).collect()
}
