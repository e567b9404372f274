//! What a projection says about what it left out, checked: the evidence index's rows against
//! its label's counts, and the structured list of omissions against the markers in the text.

use std::collections::HashMap;

use annal_engine::{Block, Message, OmissionReason, Projection, Record};

use super::{number_after, texts, MarkerRange};

/// What the evidence index shows: the label's counts and each row's (entryId, block, sourceOrder).
struct IndexShown {
    rows_named: u64,
    results: u64,
    rows: Vec<(String, u64, u64)>,
}

/// The evidence index's label counts (`rows` of `results`) and its rows, parsed.
fn evidence_rows(messages: &[Message<'_>]) -> Result<Option<IndexShown>, String> {
    let Some(label) = texts(messages).find(|t| t.starts_with("[evidence index")) else { return Ok(None) };
    let rows_named = number_after(label, "are not shown as calls. ").ok_or("the label names no row count")?;
    let results = number_after(label, " of their ").ok_or("the label names no result count")?;
    let mut rows = Vec::new();
    for text in texts(messages).filter(|t| t.starts_with("{\"entryId\"")) {
        for line in text.lines() {
            let row: serde_json::Value =
                serde_json::from_str(line).map_err(|e| format!("evidence row {line:?}: {e}"))?;
            let field = |key: &str| row.get(key).and_then(serde_json::Value::as_u64);
            let (Some(id), Some(block), Some(order)) =
                (row.get("entryId").and_then(|v| v.as_str()), field("blockIndex"), field("sourceOrder"))
            else {
                return Err(format!("evidence row {line:?} lacks entryId, blockIndex or sourceOrder"));
            };
            rows.push((id.to_owned(), block, order));
        }
    }
    Ok(Some(IndexShown { rows_named, results, rows }))
}

/// Every tool result before the tail is a row of the evidence index or counted by its label as
/// left out for the budget: the label counts every result record before the tail, says how many
/// rows follow, and every row names a result block of such a record, once.
pub(super) fn check_evidence(
    by_order: &HashMap<u64, &Record>,
    messages: &[Message<'_>],
    tail_start: u64,
) -> Result<(), String> {
    let results_before = by_order
        .iter()
        .filter(|(order, r)| {
            **order < tail_start && r.blocks.iter().any(|b| matches!(b, Block::ToolResult { .. }))
        })
        .count() as u64;
    let Some(IndexShown { rows_named, results, rows }) = evidence_rows(messages)? else {
        return match results_before {
            0 => Ok(()),
            n => Err(format!("{n} tool results before the tail and no evidence index")),
        };
    };
    if results != results_before {
        return Err(format!(
            "the evidence label counts {results} results; {results_before} lie before the tail"
        ));
    }
    if rows_named != rows.len() as u64 {
        return Err(format!("the evidence label names {rows_named} rows; {} follow", rows.len()));
    }
    let mut seen = std::collections::HashSet::new();
    for (id, block, order) in &rows {
        let record = by_order.get(order).filter(|r| r.entry_id == *id && *order < tail_start);
        let is_result = record
            .and_then(|r| r.blocks.get(usize::try_from(*block).unwrap_or(usize::MAX)))
            .is_some_and(|b| matches!(b, Block::ToolResult { .. }));
        if !is_result {
            return Err(format!(
                "evidence row {id} block {block} (sourceOrder {order}) is no result before the tail"
            ));
        }
        if !seen.insert((*order, *block)) {
            return Err(format!("evidence row {id} block {block} appears twice"));
        }
    }
    Ok(())
}

/// The structured list agrees with the text: one entry per marker (same ends), per cut user
/// message and cut tail block, and one for the tool records when any lie before the tail.
pub(super) fn check_omissions(projection: &Projection<'_>, markers: &[MarkerRange]) -> Result<(), String> {
    let (stats, list) = (&projection.stats, &projection.omissions);
    let of = |reason: fn(&OmissionReason) -> bool| list.iter().filter(|o| reason(&o.reason)).count() as u64;
    let counts = (
        of(|r| matches!(r, OmissionReason::Marker)),
        of(|r| matches!(r, OmissionReason::UserCut)),
        of(|r| matches!(r, OmissionReason::BlockCut { .. })),
        of(|r| matches!(r, OmissionReason::ToolRecords { .. })),
    );
    let expected = (
        stats.omitted.markers,
        stats.kept.user_messages_cut,
        stats.omitted.cut_blocks,
        u64::from(stats.omitted.tool_records > 0),
    );
    if counts != expected {
        return Err(format!(
            "omissions list {counts:?} (markers, user cuts, block cuts, tools); stats say {expected:?}"
        ));
    }
    let listed = list.iter().filter(|o| o.reason == OmissionReason::Marker);
    for (omission, marker) in listed.zip(markers) {
        let ends = (
            &*omission.first.entry_id,
            omission.first.source_order,
            &*omission.last.entry_id,
            omission.last.source_order,
        );
        if ends != (&*marker.first_id, marker.first, &*marker.last_id, marker.last) {
            return Err(format!("omission {omission:?} differs from marker {marker:?}"));
        }
    }
    if list.windows(2).any(|w| w[0].first.source_order > w[1].first.source_order) {
        return Err("omissions are not in sourceOrder".into());
    }
    Ok(())
}
