//! Sessions kept as OpenAI Responses-API items, for `annal.agents.AnnalSession`: items appended
//! as records that keep their own JSON text, read back verbatim (or, for a record another agent
//! wrote, as the items its blocks make), and a projection's messages as items.

use std::ops::Range;

use annal::responses::{record_from_responses_item, responses_items, session_items};
use annal::{Annal, Error, Projection, Record};
use serde_json::Value;

/// One item per record, each under its entryId.
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

/// The items of `session`'s records in `orders`, each with the sourceOrder of its record.
pub(crate) fn read(annal: &Annal, session: &str, orders: Range<u64>) -> Result<Vec<(u64, String)>, Error> {
    Ok(session_items(&annal.snapshot()?, session, orders)?)
}

/// A projection's messages as Responses input items.
pub(crate) fn of_projection(projection: &Projection<'_>) -> Vec<Value> {
    projection.messages.iter().flat_map(|message| responses_items(message.role, &message.blocks)).collect()
}
