//! Importing a user's existing sessions: transcript bytes (Claude Code, Codex, OpenCode, annal
//! exports) detected, parsed and appended, idempotently, as `annal import` does.

use std::path::Path;

use annal_engine::{
    detect_format, parse_transcript, ParsedSession, Record, Skipped, Store, TranscriptFormat,
};

use crate::Error;

/// Records per append: large batches amortise the fsync; bounded so memory stays bounded.
const CHUNK_RECORDS: usize = 2_000;

/// What one import did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportSummary {
    /// The format the transcript was read as.
    pub format: Option<TranscriptFormat>,
    /// The sessions it held, by name, in the order found.
    pub sessions: Vec<String>,
    /// Records appended now.
    pub records_new: u64,
    /// Records that were already stored (a re-import, or a file that grew since).
    pub records_present: u64,
    /// Records whose entryId another session holds (a resumed session repeats its
    /// predecessor's lines); they stay with that session.
    pub records_elsewhere: u64,
    /// Lines that could not be read, with why; the rest was imported.
    pub skipped: Vec<Skipped>,
}

/// Imports `bytes` read as `format` (detected from the content when `None`). `name` is the file
/// stem, used as the session's name when the transcript does not carry one.
pub(crate) fn import_bytes(
    store: &Store,
    bytes: &[u8],
    name: &str,
    format: Option<TranscriptFormat>,
) -> Result<ImportSummary, Error> {
    let format = format
        .or_else(|| detect_format(bytes))
        .ok_or_else(|| Error::UnknownFormat { name: name.to_owned() })?;
    let parsed = parse_transcript(bytes, format, name);
    let mut summary =
        ImportSummary { format: Some(format), skipped: parsed.skipped, ..ImportSummary::default() };
    for session in parsed.sessions {
        summary.sessions.push(session.name.clone());
        import_session(store, session, &mut summary)?;
    }
    Ok(summary)
}

/// Imports the transcript file at `path` (its stem names a session without an id of its own).
pub(crate) fn import_file(
    store: &Store,
    path: &Path,
    format: Option<TranscriptFormat>,
) -> Result<ImportSummary, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    import_bytes(store, &bytes, &stem, format)
}

/// Appends one parsed session, leaving records another session already holds where they are,
/// and checks an annal export's claimed hashes.
fn import_session(store: &Store, session: ParsedSession, summary: &mut ImportSummary) -> Result<(), Error> {
    let name = session.name;
    let snapshot = store.snapshot()?;
    let mut records: Vec<Record> = Vec::with_capacity(session.records.len());
    let mut claims = Vec::with_capacity(session.records.len());
    for (record, claim) in session.records.into_iter().zip(session.claimed_hashes) {
        match snapshot.entry(&record.entry_id)? {
            Some(location) if location.session != name => summary.records_elsewhere += 1,
            _ => {
                records.push(record);
                claims.push(claim);
            }
        }
    }
    drop(snapshot);
    let mut orders = Vec::with_capacity(records.len());
    let mut pending = records.into_iter().peekable();
    while pending.peek().is_some() {
        let chunk: Vec<Record> = pending.by_ref().take(CHUNK_RECORDS).collect();
        let count = chunk.len() as u64;
        let receipt = store.append(&name, None, chunk)?;
        summary.records_new += receipt.appended as u64;
        summary.records_present += count - receipt.appended as u64;
        orders.extend(receipt.source_orders);
    }
    if orders.is_empty() {
        // A transcript with no records still names a session: create it so it is listed.
        store.append(&name, None, Vec::new())?;
    }
    if claims.iter().any(Option::is_some) {
        let snapshot = store.snapshot()?;
        for (&order, claim) in orders.iter().zip(&claims) {
            let Some((hash, prev)) = claim else { continue };
            let mismatch = || Error::HashMismatch { session: name.clone(), source_order: order };
            let guard = snapshot.record(&name, order)?.ok_or_else(mismatch)?;
            let view = guard.view()?;
            if view.hash() != *hash || view.prev_hash() != *prev {
                return Err(mismatch());
            }
        }
    }
    Ok(())
}
