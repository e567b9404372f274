//! Compaction receipts: the journal record a compaction commits with its checkpoint.
//!
//! A receipt is a system record with a readable first text block, the handoff summary (if any)
//! as its second text block, and everything a checkpoint is derived from in its metadata under
//! `annal.receipt`: key, committed and requested algorithm, `upto`, budget, projection hash,
//! counts, tokens, fencing token and the fallback reason. The journal being the only source of
//! truth, the `checkpoints` table is a cache of what a receipt and the records before `upto`
//! determine; every append of a record with this metadata (an import too) indexes it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::error::ReadError;
use crate::hash::{hash_from_hex, hash_to_hex, Hash};
use crate::project::{Algorithm, Budget, ProjectionStats};
use crate::read::Snapshot;
use crate::time::rfc3339_from_seconds;

use super::source::ProjectionSnapshot;
use crate::receipts::RECEIPT_META_KEY;
use crate::record::{Block, Record, Role};
use crate::view::{BlockView, RecordView};

/// The receipt metadata layout this build writes.
const RECEIPT_VERSION: u64 = 1;

/// What a receipt says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReceiptInfo {
    pub(crate) key: Hash,
    /// The algorithm the checkpoint was written with (a retired one is not a checkpoint).
    pub(crate) algorithm_version: String,
    pub(crate) requested: Algorithm,
    pub(crate) upto: u64,
    /// The records the plan was derived over: `[0, end)`.
    pub(crate) end: u64,
    pub(crate) budget: Budget,
    pub(crate) projection_hash: Hash,
    pub(crate) summary_hash: Option<Hash>,
    pub(crate) fencing_token: u64,
    pub(crate) fallback_reason: Option<String>,
}

fn u32_field(value: &Value, key: &str) -> Result<u32, String> {
    value
        .get(key)
        .and_then(Value::as_u64)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("receipt budget lacks {key:?}"))
}

/// Reads a receipt's metadata.
pub(crate) fn parse_receipt(view: &RecordView<'_>) -> Result<ReceiptInfo, String> {
    let (_, text) = view
        .meta()
        .find(|(key, _)| *key == RECEIPT_META_KEY)
        .ok_or_else(|| format!("record {} is not a receipt", view.entry_id()))?;
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("receipt metadata is not JSON: {e}"))?;
    let string =
        |key: &str| value.get(key).and_then(Value::as_str).ok_or_else(|| format!("receipt lacks {key:?}"));
    let hash = |key: &str| {
        string(key).and_then(|s| hash_from_hex(s).ok_or_else(|| format!("receipt {key:?} is not a hash")))
    };
    let budget = value.get("budget").ok_or("receipt lacks \"budget\"")?;
    let budget = Budget {
        window_tokens: u32_field(budget, "windowTokens")?,
        max_output_tokens: u32_field(budget, "maxOutputTokens")?,
        tail_tokens: u32_field(budget, "tailTokens")?,
        evidence_tokens: u32_field(budget, "evidenceTokens")?,
        history_tokens: u32_field(budget, "historyTokens")?,
        summary_tokens: u32_field(budget, "summaryTokens")?,
    };
    let requested = string("requestedAlgorithm")?;
    let upto = value.get("upto").and_then(Value::as_u64).ok_or("receipt lacks \"upto\"")?;
    Ok(ReceiptInfo {
        key: hash("key")?,
        algorithm_version: string("algorithmVersion")?.to_owned(),
        requested: Algorithm::parse(requested).unwrap_or(Algorithm::DeterministicV1),
        upto,
        end: value.get("end").and_then(Value::as_u64).unwrap_or(upto),
        budget,
        projection_hash: hash("projectionHash")?,
        summary_hash: match value.get("summaryHash") {
            None | Some(Value::Null) => None,
            Some(_) => Some(hash("summaryHash")?),
        },
        fencing_token: value.get("fencingToken").and_then(Value::as_u64).unwrap_or(0),
        fallback_reason: value.get("fallbackReason").and_then(Value::as_str).map(str::to_owned),
    })
}

/// The handoff summary a receipt carries (its second text block), if any.
pub(crate) fn receipt_summary<'g>(
    snapshot: &Snapshot,
    view: &RecordView<'g>,
) -> Result<Option<Cow<'g, str>>, ReadError> {
    match view.blocks().filter(|b| matches!(b, BlockView::Text { .. })).nth(1) {
        Some(BlockView::Text { text }) => Ok(Some(snapshot.text(text)?)),
        _ => Ok(None),
    }
}

/// What a new receipt records.
pub(crate) struct ReceiptBody<'a> {
    pub(crate) session: &'a str,
    pub(crate) info: &'a ReceiptInfo,
    pub(crate) stats: &'a ProjectionStats,
    pub(crate) summary: Option<&'a str>,
    /// The receipt makes an existing checkpoint current again.
    pub(crate) reinstated: bool,
}

/// The receipt record. Its entryId is unique per key, fencing token and attempt.
pub(crate) fn receipt_record(body: &ReceiptBody<'_>, attempt: &[u8; 16]) -> Record {
    let info = body.info;
    let stats = body.stats;
    let key_hex = hash_to_hex(&info.key);
    let mut id = blake3::Hasher::new();
    id.update(&info.key);
    id.update(&info.fencing_token.to_le_bytes());
    id.update(attempt);
    let entry_id = format!("annal-receipt-{}", &id.finalize().to_hex()[..32]);
    let b = &info.budget;
    let meta = json!({
        "version": RECEIPT_VERSION,
        "session": body.session,
        "key": key_hex,
        "algorithmVersion": info.algorithm_version,
        "requestedAlgorithm": info.requested.as_str(),
        "upto": info.upto,
        "end": info.end,
        "budget": {
            "windowTokens": b.window_tokens,
            "maxOutputTokens": b.max_output_tokens,
            "tailTokens": b.tail_tokens,
            "evidenceTokens": b.evidence_tokens,
            "historyTokens": b.history_tokens,
            "summaryTokens": b.summary_tokens,
        },
        "projectionHash": hash_to_hex(&info.projection_hash),
        "summaryHash": info.summary_hash.map(|h| hash_to_hex(&h)),
        "fencingToken": info.fencing_token,
        "fallbackReason": info.fallback_reason,
        "reinstated": body.reinstated,
        "stats": super::stats_json(stats),
    });
    let mut line = format!(
        "annal compaction receipt: checkpoint {} ({}) covers sourceOrder 0 to {}: {} user messages, {} assistant \
         outputs, {} evidence rows and {} tail records kept; {} assistant outputs named by {} markers; ~{} tokens.",
        &key_hex[..16],
        info.algorithm_version,
        info.upto.saturating_sub(1),
        stats.kept.user_messages + stats.kept.user_messages_cut,
        stats.kept.assistant_outputs,
        stats.kept.evidence_rows,
        stats.kept.tail_records,
        stats.omitted.assistant_outputs,
        stats.omitted.markers,
        stats.tokens.total,
    );
    if let Some(reason) = &info.fallback_reason {
        line.push_str(&format!(" {} was asked for; {reason}.", info.requested));
    }
    if body.reinstated {
        line.push_str(" An existing checkpoint is current again.");
    }
    let mut blocks = vec![Block::Text { text: line }];
    if let Some(summary) = body.summary {
        blocks.push(Block::Text { text: summary.to_owned() });
    }
    let mut meta_map = BTreeMap::new();
    meta_map.insert(RECEIPT_META_KEY.to_owned(), meta.to_string());
    Record { entry_id, role: Role::System, timestamp: Some(rfc3339_now()), blocks, meta: meta_map }
}

/// The current UTC time as RFC 3339, to the second.
fn rfc3339_now() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    rfc3339_from_seconds(i64::try_from(secs).unwrap_or(i64::MAX)).unwrap_or_default()
}

/// The summary of the receipt at `order`, owned.
pub(crate) fn receipt_summary_owned(
    source: &ProjectionSnapshot,
    session: &str,
    order: u64,
) -> Result<Option<String>, ReadError> {
    let Some(guard) = source.snapshot().record(session, order)? else { return Ok(None) };
    let view = guard.view()?;
    Ok(receipt_summary(source.snapshot(), &view)?.map(|s| s.into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339() {
        assert!(crate::portable::is_rfc3339(&rfc3339_now()));
    }
}
