//! The JSON shapes of what calls return: one shape each for a session, an append receipt, a
//! record, a projection, a compaction, a verify report, a search hit and an original, shared by
//! the command line's `--json` output and the language bindings, so both describe a result in
//! the same words. docs/format.md's record format covers records themselves ([`record`]).
//!
//! Each function returns [`Json`], the text of one JSON value, so that no JSON library's type
//! is part of this crate's API: parse it with the library of your choice.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! use annal::{Annal, Record, Role};
//! let annal = Annal::open(dir.path().join("s.redb"))?;
//! let receipt = annal.append("s", None, vec![Record::text("u1", Role::User, "hi")])?;
//! assert_eq!(annal::json::receipt(&receipt).as_str(), r#"{"appended":1,"next":1,"sourceOrders":[0]}"#);
//! # Ok(()) }
//! ```

use std::fmt;

use annal_engine::{hash_to_hex, CompactOutcome, CompactStatus, Projection, ReadError, RecordView, Snapshot};
use annal_engine::{AppendReceipt, SessionInfo, VerifyReport};
use annal_query::{Hit, Original, OriginalBlock};
use serde_json::{json, Value};

/// The text of one JSON value, compact (no spaces or newlines): one line of JSON Lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Json(String);

impl Json {
    fn of(value: &Value) -> Json {
        Json(value.to_string())
    }

    /// An array of the values `items`.
    pub fn array(items: impl IntoIterator<Item = Json>) -> Json {
        let items: Vec<String> = items.into_iter().map(|item| item.0).collect();
        Json(format!("[{}]", items.join(",")))
    }

    /// The compact text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The compact text, owned.
    pub fn into_string(self) -> String {
        self.0
    }

    /// The same value indented by two spaces, one member per line, for people to read.
    pub fn pretty(&self) -> String {
        // The text was written from a value, so it parses; the compact form is the fallback.
        serde_json::from_str::<Value>(&self.0)
            .ok()
            .and_then(|value| serde_json::to_string_pretty(&value).ok())
            .unwrap_or_else(|| self.0.clone())
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A session: name, records, parent, forkAt, head.
pub fn session(info: &SessionInfo) -> Json {
    Json::of(&json!({
        "name": info.name,
        "records": info.len,
        "parent": info.parent,
        "forkAt": info.fork_at,
        "head": hash_to_hex(&info.head),
    }))
}

/// An append's receipt: sourceOrders, appended, next.
pub fn receipt(receipt: &AppendReceipt) -> Json {
    Json::of(&json!({
        "sourceOrders": receipt.source_orders,
        "appended": receipt.appended,
        "next": receipt.next,
    }))
}

/// A stored record in the portable format (what `annal show --json` prints and `append` reads),
/// its blob payloads loaded.
///
/// # Errors
/// [`ReadError`] if a blob cannot be read.
pub fn record(snapshot: &Snapshot, view: &RecordView<'_>) -> Result<Json, ReadError> {
    annal_engine::record_to_json(snapshot, view).map(|value| Json::of(&value))
}

/// A projection: algorithmVersion, hash, messages, stats, omitted (`annal project --json`).
pub fn projection(projection: &Projection<'_>) -> Json {
    let mut bytes = Vec::new();
    // Writing into a Vec cannot fail, and what was written is JSON text (so UTF-8).
    let _ = projection.write_json(&mut bytes);
    Json(String::from_utf8_lossy(&bytes).into_owned())
}

/// A compaction's outcome: status, key, upto, algorithms, receipt, hashes, stats.
pub fn compact_outcome(outcome: &CompactOutcome) -> Json {
    let status = match outcome.status {
        CompactStatus::Committed => "committed",
        CompactStatus::Reused => "reused",
        CompactStatus::Reinstated => "reinstated",
        CompactStatus::NotNeeded => "notNeeded",
    };
    Json::of(&json!({
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
        "stats": annal_engine::stats_json(&outcome.stats),
    }))
}

/// A verify report: sessions, records, blobs, ok, problems.
pub fn verify_report(report: &VerifyReport) -> Json {
    let problems: Vec<Value> = report
        .problems
        .iter()
        .map(|p| json!({"session": p.session, "sourceOrder": p.source_order, "detail": p.detail}))
        .collect();
    Json::of(&json!({
        "sessions": report.sessions,
        "records": report.records,
        "blobs": report.blobs,
        "ok": report.is_ok(),
        "problems": problems,
    }))
}

/// A search hit: where it is, its score, and a snippet with highlight ranges in characters.
pub fn hit(hit: &Hit) -> Json {
    let highlights: Vec<Value> =
        hit.snippet.highlight_chars().into_iter().map(|(a, b)| json!([a, b])).collect();
    Json::of(&json!({
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
    }))
}

/// An original read back by id, its blocks verbatim.
pub fn original(original: &Original) -> Json {
    Json::of(&json!({
        "session": original.session,
        "entryId": original.entry_id,
        "sourceOrder": original.source_order,
        "role": original.role.as_str(),
        "timestamp": original.timestamp,
        "blockCount": original.block_count,
        "blocks": original.blocks.iter().map(original_block).collect::<Vec<_>>(),
    }))
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
