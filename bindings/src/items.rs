//! An OpenAI Agents SDK session kept as Responses-API items, as both bindings keep it: items
//! appended as records that keep their own JSON text, read back verbatim (or, for a record
//! another agent wrote, as the items its blocks make), and popped items left behind in earlier
//! generations (`<id>~pop<N>`, each a fork of the one before). One layout, so a session written
//! from Python reads from Node and the other way.

use std::ops::Range;

use annal::responses::{session_items, ItemError, RESPONSES_SEAL_KEY};
use annal::snapshot::RECEIPT_META_KEY;
use annal::{Annal, Error, Record, SessionInfo, Snapshot};
use serde_json::Value;

use crate::Failure;

/// What separates an Agents SDK session's id from its generation number in the names of its
/// later generations (`<id>~pop<N>`).
pub const GENERATION_MARK: &str = "~pop";

/// Where an Agents SDK session's generations stand, read in one snapshot.
#[derive(Debug)]
pub struct Head {
    /// The newest generation that is a fork of the one before: its name, records and number.
    pub name: String,
    pub records: u64,
    pub generation: u64,
    /// Where its seal says the next generation forks it, when it is sealed.
    pub sealed_at: Option<u64>,
    /// Whether a session of the next generation's name exists (and is not its fork).
    pub next_taken: bool,
}

/// The annal session holding `generation` of the session `id`.
pub fn generation_name(id: &str, generation: u64) -> String {
    if generation == 0 {
        id.to_owned()
    } else {
        format!("{id}{GENERATION_MARK}{generation}")
    }
}

/// Follows `id`'s generations from `generation` while each next one is a fork of the one
/// before it.
pub fn head(annal: &Annal, id: &str, mut generation: u64) -> Result<Head, Error> {
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

/// One item per record, each under its entryId, made by `record` (the Responses API's items, or
/// a binding's own dialect of them); a refused item is bad input naming its index.
pub fn records(
    ids: &[String],
    items: &[String],
    record: impl Fn(&str, &str) -> Result<Record, ItemError>,
) -> Result<Vec<Record>, Failure> {
    if ids.len() != items.len() {
        return Err(Failure::bad_input(format!("{} ids for {} items", ids.len(), items.len())));
    }
    ids.iter()
        .zip(items)
        .enumerate()
        .map(|(index, (id, item))| {
            record(id, item).map_err(|e| Failure::bad_input(format!("item {index}: {e}")))
        })
        .collect()
}

/// The items of `session`'s records in `orders`, each with the sourceOrder of its record.
pub fn read(annal: &Annal, session: &str, orders: Range<u64>) -> Result<Vec<(u64, String)>, Error> {
    Ok(session_items(&annal.snapshot()?, session, orders)?)
}
