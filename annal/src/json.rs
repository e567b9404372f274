//! The JSON shapes of what calls return: one shape each for a session, an append receipt, a
//! compaction, a verify report, a search hit and an original, shared by the command line's
//! `--json` output and the language bindings, so both describe a result in the same words.
//! docs/format.md's record format covers records themselves ([`record`]).

use annal_engine::{hash_to_hex, CompactOutcome, CompactStatus, Projection, ReadError, RecordView, Snapshot};
use annal_engine::{AppendReceipt, SessionInfo, VerifyReport};
use annal_query::{Hit, Original, OriginalBlock};
use serde_json::{json, Value};

/// A session: name, records, parent, forkAt, head.
pub fn session(info: &SessionInfo) -> Value {
    json!({
        "name": info.name,
        "records": info.len,
        "parent": info.parent,
        "forkAt": info.fork_at,
        "head": hash_to_hex(&info.head),
    })
}

/// An append's receipt: sourceOrders, appended, next.
pub fn receipt(receipt: &AppendReceipt) -> Value {
    json!({
        "sourceOrders": receipt.source_orders,
        "appended": receipt.appended,
        "next": receipt.next,
    })
}

/// A stored record in the portable format (what `annal show --json` prints and `append` reads),
/// its blob payloads loaded.
///
/// # Errors
/// [`ReadError`] if a blob cannot be read.
pub fn record(snapshot: &Snapshot, view: &RecordView<'_>) -> Result<Value, ReadError> {
    view.to_portable_json(snapshot)
}

/// A projection: algorithmVersion, hash, messages, stats, omitted (`annal project --json`).
pub fn projection(projection: &Projection<'_>) -> Value {
    let mut bytes = Vec::new();
    // Writing into a Vec cannot fail, and what was written is JSON.
    let _ = projection.write_json(&mut bytes);
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

/// A compaction's outcome: status, key, upto, algorithms, receipt, hashes, stats.
pub fn compact_outcome(outcome: &CompactOutcome) -> Value {
    let status = match outcome.status {
        CompactStatus::Committed => "committed",
        CompactStatus::Reused => "reused",
        CompactStatus::Reinstated => "reinstated",
        CompactStatus::NotNeeded => "notNeeded",
    };
    json!({
        "status": status,
        "key": outcome.key.map(|k| hash_to_hex(&k)),
        "upto": outcome.upto,
        "requestedAlgorithm": outcome.requested.as_str(),
        "algorithmVersion": outcome.algorithm.as_str(),
        "fallbackReason": outcome.fallback_reason,
        "receipt": outcome.receipt,
        "fencingToken": outcome.fencing_token,
        "projectionHash": hash_to_hex(&outcome.projection_hash),
        "viewTokens": outcome.view_tokens,
        "stats": outcome.stats.to_json(),
    })
}

/// A verify report: sessions, records, blobs, ok, problems.
pub fn verify_report(report: &VerifyReport) -> Value {
    let problems: Vec<Value> = report
        .problems
        .iter()
        .map(|p| json!({"session": p.session, "sourceOrder": p.source_order, "detail": p.detail}))
        .collect();
    json!({
        "sessions": report.sessions,
        "records": report.records,
        "blobs": report.blobs,
        "ok": report.is_ok(),
        "problems": problems,
    })
}

/// A search hit: where it is, its score, and a snippet with highlight ranges in characters.
pub fn hit(hit: &Hit) -> Value {
    let highlights: Vec<Value> =
        hit.snippet.highlight_chars().into_iter().map(|(a, b)| json!([a, b])).collect();
    json!({
        "session": hit.session,
        "entryId": hit.entry_id,
        "blockIndex": hit.block_index,
        "sourceOrder": hit.source_order,
        "role": hit.role.as_str(),
        "tool": hit.tool,
        "score": hit.score,
        "snippet": hit.snippet.text,
        "highlights": highlights,
        "type": hit.kind,
        "isError": hit.is_error,
        "timestamp": hit.timestamp,
    })
}

/// An original read back by id, its blocks verbatim.
pub fn original(original: &Original) -> Value {
    json!({
        "session": original.session,
        "entryId": original.entry_id,
        "sourceOrder": original.source_order,
        "role": original.role.as_str(),
        "timestamp": original.timestamp,
        "blockCount": original.block_count,
        "blocks": original.blocks.iter().map(original_block).collect::<Vec<_>>(),
    })
}

fn original_block(block: &OriginalBlock) -> Value {
    let mut value = json!({ "blockIndex": block.index, "type": block.kind, "bytes": block.size_bytes });
    let fields = [
        ("tool", block.tool.clone().map(Value::from)),
        ("callId", block.call_id.clone().map(Value::from)),
        ("target", block.target.clone().map(Value::from)),
        ("isError", (block.kind == "toolResult").then_some(Value::from(block.is_error))),
        ("text", block.text.clone().map(Value::from)),
        (
            "lines",
            block.lines.map(|(first, last, total)| json!({"first": first, "last": last, "total": total})),
        ),
        ("mediaType", block.media_type.clone().map(Value::from)),
        ("blobHash", block.blob_hash.clone().map(Value::from)),
    ];
    for (key, field) in fields {
        if let (Some(field), Some(object)) = (field, value.as_object_mut()) {
            object.insert(key.to_owned(), field);
        }
    }
    value
}
