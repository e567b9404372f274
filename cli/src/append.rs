//! `annal append`: records read as portable JSON lines from stdin, appended as one batch.
//!
//! All of stdin is parsed before the store is touched, so a malformed line appends nothing.
//! What a line claims (sourceOrder, hash, prevHash) and the entryId of a line without one are
//! settled by the engine inside the write transaction; this module only maps its answer back
//! to the lines.

use crate::failure::said;
use std::collections::HashMap;
use std::io::{BufRead, Write};

use annal::error::AppendError;
use annal::{AppendReceipt, PortableRecord};
use anyhow::{anyhow, Context};
use clap::Args;

use crate::output::{write_pretty, Out};
use crate::store::StoreLocation;

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

A line that carries \"sourceOrder\" must land exactly there, and one that carries \"hash\" or
\"prevHash\" must get exactly that chain; both are checked in the transaction that would store
the batch, and a difference is an error that appends nothing.

Empty input creates the session without records.

Prints the sourceOrder of each record, one per line, in input order.";

// Arguments of `annal append`.
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
    /// Append through a fleet's servers (comma-separated URLs): returns once the stream holds
    /// the batch, with --expect checked by the servers; every line needs an entryId
    #[arg(long, value_name = "URLS")]
    fleet: Option<String>,
    #[command(flatten)]
    connection: crate::store::Connection,
}

/// Everything stdin held, parsed and checked for shape, with each record's line number
/// (1-based, counting blank lines).
#[derive(Debug)]
pub(crate) struct Batch {
    records: Vec<PortableRecord>,
    lines: Vec<usize>,
}

/// Reads and parses every line; the first malformed one is an error naming `stdin:LINE`.
pub(crate) fn read_batch(mut input: impl BufRead) -> anyhow::Result<Batch> {
    let mut batch = Batch { records: Vec::new(), lines: Vec::new() };
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
        // A line that is not JSON is refused as "not JSON: …", so the line number leads either way.
        let record = PortableRecord::parse(text).map_err(|e| anyhow!("stdin:{number}: {e}"))?;
        batch.records.push(record);
        batch.lines.push(number);
    }
    Ok(batch)
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
    if let Some(urls) = &args.fleet {
        return run_shared(store, &handle, urls, args, batch, out);
    }
    // Engine errors name an entryId or a batch index; the user wants the line.
    let mut lines_by_id: HashMap<String, usize> = HashMap::with_capacity(batch.records.len());
    for (record, &line) in batch.records.iter().zip(&batch.lines) {
        lines_by_id.entry(record.record.entry_id.clone()).or_insert(line);
    }
    let lines = Lines { by_index: &batch.lines, by_id: &lines_by_id };
    let receipt = handle.append_portable(session, args.expect, batch.records).map_err(|err| match err {
        annal::Error::Append(err) => append_error(store, session, err, &lines),
        other => said(
            other.kind(),
            format!("cannot append to session {session:?} in {store}: {other}; nothing was appended"),
        ),
    })?;
    print_receipt(out, &receipt, args.json)?;
    Ok(())
}

/// `annal append --fleet`: the batch goes through the fleet's servers as a shared session's.
fn run_shared(
    store: &StoreLocation,
    handle: &annal::Annal,
    urls: &str,
    args: &AppendArgs,
    batch: Batch,
    out: &mut Out,
) -> anyhow::Result<()> {
    if let Some(line) =
        batch.records.iter().zip(&batch.lines).find(|(r, _)| r.record.entry_id.is_empty()).map(|(_, l)| l)
    {
        return Err(said(
            annal::error::ErrorKind::BadInput,
            format!("stdin:{line}: with --fleet, every record needs an entryId"),
        ));
    }
    let fleet = args.connection.connect(urls)?;
    let records = batch.records.into_iter().map(|portable| portable.record).collect();
    let receipt = handle
        .shared(&fleet, &args.session)
        .append(args.expect, records)
        .map_err(|err| store.failed(&err))?;
    fleet.close();
    print_receipt(out, &receipt, args.json)?;
    Ok(())
}

/// The stdin line of a record, by its index in the batch or its entryId.
struct Lines<'a> {
    by_index: &'a [usize],
    by_id: &'a HashMap<String, usize>,
}

impl Lines<'_> {
    fn of_index(&self, index: u64) -> usize {
        usize::try_from(index).ok().and_then(|i| self.by_index.get(i)).copied().unwrap_or(0)
    }

    fn of_id(&self, entry_id: &str) -> usize {
        self.by_id.get(entry_id).copied().unwrap_or(0)
    }
}

fn print_receipt(out: &mut Out, receipt: &AppendReceipt, as_json: bool) -> std::io::Result<()> {
    if as_json {
        return write_pretty(out, &annal::json::receipt(receipt));
    }
    for order in &receipt.source_orders {
        writeln!(out, "{order}")?;
    }
    Ok(())
}

fn append_error(store: &StoreLocation, session: &str, err: AppendError, lines: &Lines<'_>) -> anyhow::Error {
    let kind = err.kind();
    if let AppendError::Conflict { expected, .. } = err {
        // The library's words (what the bindings raise), and the flag that set the position.
        let line = annal::error::message_in(&annal::Error::Append(err), store.path());
        return said(kind, format!("{line} (--expect {expected})"));
    }
    let line = append_line(store, session, err, lines);
    said(kind, line)
}

/// The words for an append the store refused, naming the stdin line of the record at fault.
fn append_line(store: &StoreLocation, session: &str, err: AppendError, lines: &Lines<'_>) -> String {
    match err {
        AppendError::ClaimMismatch { index, field: "sourceOrder", claimed, actual, next } => {
            format!(
                "stdin:{}: sourceOrder {claimed} does not match {actual}, where this record would go \
                 (session {session:?} has {next} records); nothing was appended",
                lines.of_index(index)
            )
        }
        AppendError::ClaimMismatch { index, field, claimed, actual, .. } => format!(
            "stdin:{}: {field} {claimed} does not match {actual}, the {field} this record gets; nothing \
             was appended",
            lines.of_index(index)
        ),
        AppendError::DuplicateInBatch { entry_id, first, again, .. } => format!(
            "stdin:{}: entry {entry_id:?} appears again with different content (first on line {}); \
             nothing was appended",
            lines.of_index(again),
            lines.of_index(first)
        ),
        AppendError::EntryMismatch { entry_id, source_order, .. } => format!(
            "stdin:{}: entry {entry_id:?} is already stored at sourceOrder {source_order} of session \
             {session:?} with different content; nothing was appended",
            lines.of_id(&entry_id)
        ),
        AppendError::EntryInOtherSession { entry_id, owner, .. } => format!(
            "stdin:{}: entry {entry_id:?} already belongs to session {owner:?} (entryIds are unique \
             in a store); nothing was appended",
            lines.of_id(&entry_id)
        ),
        AppendError::InvalidRecord { entry_id, reason, index, .. } => {
            format!("stdin:{}: entry {entry_id:?}: {reason}; nothing was appended", lines.of_index(index))
        }
        other => format!("cannot append to session {session:?} in {store}: {other}; nothing was appended"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_count_toward_line_numbers() {
        let input = "\n{\"role\":\"user\"}\n\n{\"role\":\"nobody\"}\n";
        let err = read_batch(input.as_bytes()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.starts_with("stdin:4: unknown role"), "{err}");
        let ok = read_batch("\n{\"role\":\"user\"}\n   \n".as_bytes()).map(|b| b.lines).ok();
        assert_eq!(ok, Some(vec![2]));
    }
}
