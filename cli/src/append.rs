//! `annal append`: records read as portable JSON lines from stdin, appended as one batch.
//!
//! All of stdin is parsed before the store is touched, so a malformed line appends nothing.
//! Lines without an entryId get a derived one (see [`derived_entry_id`]); claimed sourceOrders are
//! checked before the append, claimed hashes after it (the engine does not expose its content
//! hash, so only the stored record can answer).

use std::collections::HashMap;
use std::io::{BufRead, Write};

use annal_engine::{
    canonical_json, hash_to_hex, record_from_json, AppendError, AppendReceipt, Block, Hash, PortableRecord,
    ReadError, Record, Snapshot, Store,
};
use anyhow::{anyhow, bail, Context};
use clap::Args;
use serde_json::json;

use crate::location::StoreLocation;
use crate::output::{write_json_pretty, Out};

/// The long help of `annal append`.
pub(crate) const LONG_ABOUT: &str = "\
Append records, read as JSON lines from stdin, to a session as one atomic batch.

Each non-blank line is one record in the portable format, the one `annal show --json` prints:
  {\"entryId\": \"e1\", \"role\": \"user\", \"timestamp\": \"2026-03-02T09:12:00Z\",
   \"blocks\": [{\"type\": \"text\", \"text\": \"hello\"}], \"meta\": {}}
Only \"role\" (user, assistant, tool or system) is required. Block types: text, thinking,
toolCall (callId, tool, input), toolResult (callId, tool, isError, output), blob (mediaType,
base64 data). Blank lines are skipped. If any line is malformed the error names it as
stdin:LINE and nothing is appended.

Re-appending a record whose entryId the session already holds with the same content stores
nothing and prints its existing sourceOrder, so a retry never duplicates.

A line without an entryId gets a derived one: \"e-\" and the first 32 hex digits of the blake3
hash of the session name, the sourceOrder the line would take (the session's length before the
append plus the line's index among the batch's records) and the line's canonical JSON (sorted
keys, no spaces). The same line at the same place always gets the same id; appended again after
the session has grown, it becomes a new record. Use --expect to make such retries safe.

A line that carries \"sourceOrder\" must land exactly there (checked before appending); a line
that carries \"hash\" or \"prevHash\" is compared with the stored record after appending, and a
difference is an error.

Empty input creates the session without records.

Prints the sourceOrder of each record, one per line, in input order.";

/// Arguments of `annal append`.
#[derive(Debug, Args)]
pub(crate) struct AppendArgs {
    /// The session to append to; created if it does not exist.
    session: String,
    /// Append only if the session's next sourceOrder is N (its current length); otherwise fail
    /// with a conflict and append nothing.
    #[arg(long, value_name = "N")]
    expect: Option<u64>,
    /// Print a JSON object (sourceOrders, appended, next) instead of one sourceOrder per line.
    #[arg(long)]
    json: bool,
}

/// One non-blank line of stdin, parsed.
#[derive(Debug)]
struct Line {
    /// 1-based, counting blank lines.
    number: usize,
    /// The line's JSON in canonical form: what a derived entryId hashes.
    canonical: String,
    portable: PortableRecord,
}

/// Everything stdin held, parsed and checked for shape.
#[derive(Debug)]
pub(crate) struct Batch {
    lines: Vec<Line>,
}

/// Reads and parses every line; the first malformed one is an error naming `stdin:LINE`.
pub(crate) fn read_batch(mut input: impl BufRead) -> anyhow::Result<Batch> {
    let mut lines = Vec::new();
    let mut buffer = Vec::new();
    let mut number = 0;
    loop {
        buffer.clear();
        if input.read_until(b'\n', &mut buffer).context("cannot read stdin")? == 0 {
            break;
        }
        number += 1;
        let text = std::str::from_utf8(&buffer).map_err(|e| anyhow!("stdin:{number}: not UTF-8 ({e})"))?;
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| anyhow!("stdin:{number}: not JSON: {e}"))?;
        let portable = record_from_json(&value).map_err(|e| anyhow!("stdin:{number}: {e}"))?;
        lines.push(Line { number, canonical: canonical_json(&value), portable });
    }
    Ok(Batch { lines })
}

/// The entryId of a line that has none; documented in [`LONG_ABOUT`].
fn derived_entry_id(session: &str, source_order: u64, canonical_line: &str) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"annal.cli.entry.v1\0");
    hasher.update(&(session.len() as u64).to_le_bytes());
    hasher.update(session.as_bytes());
    hasher.update(&source_order.to_le_bytes());
    hasher.update(canonical_line.as_bytes());
    let hex = hasher.finalize().to_hex();
    format!("e-{}", &hex[..32])
}

/// The sourceOrder each record will get: its stored one if the session already holds its
/// entryId (inherited from a parent included), else the next free one. Mirrors the engine's rule.
fn predict_orders(
    snapshot: &Snapshot,
    session: &str,
    len: u64,
    records: &[Record],
) -> Result<Vec<u64>, ReadError> {
    let mut seen: HashMap<&str, u64> = HashMap::new();
    let mut next = len;
    let mut orders = Vec::with_capacity(records.len());
    for record in records {
        let id = record.entry_id.as_str();
        if let Some(&order) = seen.get(id) {
            orders.push(order);
            continue;
        }
        let stored = match snapshot.entry(id)? {
            Some(location) if len > location.source_order => snapshot
                .record(session, location.source_order)?
                .map(|guard| guard.view().map(|view| view.entry_id() == id))
                .transpose()?
                .unwrap_or(false)
                .then_some(location.source_order),
            _ => None,
        };
        let order = stored.unwrap_or_else(|| {
            next += 1;
            next - 1
        });
        seen.insert(id, order);
        orders.push(order);
    }
    Ok(orders)
}

/// What a line claims about where its record lands, checked around the append.
#[derive(Debug)]
struct Claims {
    line: usize,
    source_order: Option<u64>,
    hash: Option<Hash>,
    prev_hash: Option<Hash>,
}

/// Appends the batch and prints the assigned sourceOrders.
pub(crate) fn run(
    store: &StoreLocation,
    args: &AppendArgs,
    batch: Batch,
    out: &mut Out,
) -> anyhow::Result<()> {
    let session = args.session.as_str();
    let handle = store.open_or_create()?;
    let snapshot = store.snapshot(&handle)?;
    let len = match snapshot.session(session) {
        Ok(info) => info.map_or(0, |info| info.len),
        Err(err) => return Err(store.read_error(session, err)),
    };
    let mut records = Vec::with_capacity(batch.lines.len());
    let mut claims = Vec::with_capacity(batch.lines.len());
    for (index, line) in batch.lines.into_iter().enumerate() {
        let PortableRecord { mut record, source_order, hash, prev_hash } = line.portable;
        if record.entry_id.is_empty() {
            record.entry_id = derived_entry_id(session, len + index as u64, &line.canonical);
        }
        records.push(record);
        claims.push(Claims { line: line.number, source_order, hash, prev_hash });
    }
    let predicted =
        predict_orders(&snapshot, session, len, &records).map_err(|e| store.read_error(session, e))?;
    drop(snapshot);
    for (claim, &order) in claims.iter().zip(&predicted) {
        match (claim.source_order, args.expect) {
            (Some(claimed), _) if claimed == order => {}
            // A stale --expect explains the difference better than the line does.
            (Some(_), Some(expected)) if expected != len => {
                return Err(conflict(store, session, expected, len))
            }
            (Some(claimed), _) => bail!(
                "stdin:{}: sourceOrder {claimed} does not match {order}, where this record would go \
                 (session {session:?} has {len} records); nothing was appended",
                claim.line
            ),
            (None, _) => {}
        }
    }
    // Engine errors name an entryId; the user wants the line.
    let mut lines_by_id: HashMap<String, usize> = HashMap::with_capacity(records.len());
    for (index, (record, claim)) in records.iter().zip(&claims).enumerate() {
        let first = *lines_by_id.entry(record.entry_id.clone()).or_insert(claim.line);
        // The engine reports this as a mismatch with a stored entry; say what it is.
        if first != claim.line {
            let earlier = records[..index].iter().find(|r| r.entry_id == record.entry_id);
            if earlier.is_some_and(|earlier| !same_content(earlier, record)) {
                bail!(
                    "stdin:{}: entry {:?} appears again with different content (first on line {first}); \
                     nothing was appended",
                    claim.line,
                    record.entry_id
                );
            }
        }
    }
    let line_of = |entry_id: &str| lines_by_id.get(entry_id).copied().unwrap_or(0);
    let receipt = handle
        .append(session, args.expect, records)
        .map_err(|err| append_error(store, session, err, &line_of))?;
    print_receipt(out, &receipt, args.json)?;
    check_claims(store, &handle, session, &claims, &receipt)
}

/// Whether two records have the same content as the engine hashes it: everything but the tool
/// call targets, which are derived.
fn same_content(a: &Record, b: &Record) -> bool {
    let untargeted = |record: &Record| {
        let mut record = record.clone();
        for block in &mut record.blocks {
            if let Block::ToolCall { target, .. } = block {
                target.clear();
            }
        }
        record
    };
    a == b || untargeted(a) == untargeted(b)
}

fn print_receipt(out: &mut Out, receipt: &AppendReceipt, as_json: bool) -> std::io::Result<()> {
    if as_json {
        let value = json!({
            "sourceOrders": receipt.source_orders,
            "appended": receipt.appended,
            "next": receipt.next,
        });
        return write_json_pretty(out, &value);
    }
    for order in &receipt.source_orders {
        writeln!(out, "{order}")?;
    }
    Ok(())
}

/// After the append: every claimed sourceOrder, hash and prevHash against what was stored.
fn check_claims(
    store: &StoreLocation,
    handle: &Store,
    session: &str,
    claims: &[Claims],
    receipt: &AppendReceipt,
) -> anyhow::Result<()> {
    let appended = match (receipt.source_orders.iter().min(), receipt.source_orders.iter().max()) {
        (Some(low), Some(high)) => format!("the batch is stored at sourceOrders {low}..={high}"),
        _ => "the batch was empty".to_owned(),
    };
    let snapshot = store.snapshot(handle)?;
    for (line, &order) in claims.iter().zip(&receipt.source_orders) {
        if let Some(claim) = line.source_order.filter(|&claim| claim != order) {
            bail!(
                "stdin:{}: claimed sourceOrder {claim}, but another writer came first and it went to \
                 {order}; {appended}",
                line.line
            );
        }
        if line.hash.is_none() && line.prev_hash.is_none() {
            continue;
        }
        let guard =
            snapshot.record(session, order).map_err(|e| store.read_error(session, e))?.ok_or_else(|| {
                anyhow!("session {session:?} in {store} has no record {order} right after appending it")
            })?;
        let view = guard.view().map_err(|e| store.read_error(session, e))?;
        let compare = [("hash", line.hash, view.hash()), ("prevHash", line.prev_hash, view.prev_hash())];
        for (field, claim, stored) in compare {
            if let Some(claim) = claim.filter(|claim| *claim != stored) {
                bail!(
                    "stdin:{}: {field} {} does not match the stored record's {}; {appended}",
                    line.line,
                    hash_to_hex(&claim),
                    hash_to_hex(&stored)
                );
            }
        }
    }
    Ok(())
}

fn conflict(store: &StoreLocation, session: &str, expected: u64, actual: u64) -> anyhow::Error {
    anyhow!(
        "conflict: session {session:?} in {store} has {actual} records, so its next sourceOrder is \
         {actual}, not {expected} (--expect {expected}); nothing was appended"
    )
}

fn append_error(
    store: &StoreLocation,
    session: &str,
    err: AppendError,
    line_of: &dyn Fn(&str) -> usize,
) -> anyhow::Error {
    match err {
        AppendError::Conflict { expected, actual, .. } => conflict(store, session, expected, actual),
        AppendError::EntryMismatch { entry_id, source_order, .. } => anyhow!(
            "stdin:{}: entry {entry_id:?} is already stored at sourceOrder {source_order} of session \
             {session:?} with different content; nothing was appended",
            line_of(&entry_id)
        ),
        AppendError::EntryInOtherSession { entry_id, owner, .. } => anyhow!(
            "stdin:{}: entry {entry_id:?} already belongs to session {owner:?} (entryIds are unique \
             in a store); nothing was appended",
            line_of(&entry_id)
        ),
        AppendError::InvalidRecord { entry_id, reason, .. } => {
            anyhow!("stdin:{}: entry {entry_id:?}: {reason}; nothing was appended", line_of(&entry_id))
        }
        other => anyhow!("cannot append to session {session:?} in {store}: {other}; nothing was appended"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_ids_depend_on_session_place_and_content() {
        let line = r#"{"role":"user"}"#;
        let id = derived_entry_id("s", 3, line);
        assert_eq!(id, derived_entry_id("s", 3, line));
        assert_eq!(id.len(), 34);
        assert_ne!(id, derived_entry_id("t", 3, line));
        assert_ne!(id, derived_entry_id("s", 4, line));
        assert_ne!(id, derived_entry_id("s", 3, r#"{"role":"assistant"}"#));
    }

    #[test]
    fn blank_lines_count_toward_line_numbers() {
        let input = "\n{\"role\":\"user\"}\n\n{\"role\":\"nobody\"}\n";
        let err = read_batch(input.as_bytes()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.starts_with("stdin:4: unknown role"), "{err}");
        let ok = read_batch("{\"role\":\"user\"}\n   \n".as_bytes()).map(|b| b.lines.len()).ok();
        assert_eq!(ok, Some(1));
    }
}
