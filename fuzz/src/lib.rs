//! Support shared by the fuzz targets: a store on an in-memory file, the checks each target
//! makes after parsing or appending, the `arbitrary` record model of the round-trip target, and
//! the projection and search targets' sessions and checks.
//!
//! Every check panics on a broken property, which libFuzzer reports as a crash with the input.

use std::collections::HashSet;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use annal_engine::{
    canonical_input, derive_target, record_from_json, record_to_json, AppendError, Block, Record,
    StorageFile, Store, StoreOptions,
};
use annal_formats::{
    detect_format, parse_transcript, record_from_responses_item, record_message_blocks, responses_items,
    session_items, ParsedSession, TranscriptFormat,
};

pub mod arb;
pub mod nesting;
pub mod project;
pub mod search;
mod search_oracle;

/// A blob threshold far below the default, so small fuzz inputs reach the blob table too.
pub const SMALL_BLOB_THRESHOLD: usize = 24;

/// A growable byte buffer standing in for the store file: no disk, no fsync, nothing left behind.
#[derive(Clone, Debug, Default)]
pub struct MemFile(Arc<Mutex<Vec<u8>>>);

impl MemFile {
    fn bytes(&self) -> MutexGuard<'_, Vec<u8>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn offset(value: u64) -> io::Result<usize> {
    usize::try_from(value).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))
}

impl StorageFile for MemFile {
    fn len(&self) -> io::Result<u64> {
        Ok(self.bytes().len() as u64)
    }

    fn read(&self, at: u64, out: &mut [u8]) -> io::Result<()> {
        let bytes = self.bytes();
        let start = offset(at)?;
        let end = start
            .checked_add(out.len())
            .filter(|end| *end <= bytes.len())
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end"))?;
        out.copy_from_slice(&bytes[start..end]);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.bytes().resize(offset(len)?, 0);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }

    fn write(&self, at: u64, data: &[u8]) -> io::Result<()> {
        let mut bytes = self.bytes();
        let start = offset(at)?;
        let end = start + data.len();
        if bytes.len() < end {
            bytes.resize(end, 0);
        }
        bytes[start..end].copy_from_slice(data);
        Ok(())
    }
}

/// A new, empty store in memory, with text over `blob_threshold` bytes moved to the blob table.
pub fn fresh_store(blob_threshold: usize) -> Store {
    let options = StoreOptions {
        cache_size_bytes: 1 << 20,
        blob_threshold_bytes: blob_threshold,
        ..StoreOptions::default()
    };
    match Store::open_with_storage(MemFile::default(), options) {
        Ok(store) => store,
        Err(err) => panic!("creating a store in memory failed: {err}"),
    }
}

/// An append refused for what the records are (a typed refusal of the input) is fine; a storage
/// failure on a file that cannot fail is a bug.
pub fn assert_refusal(err: &AppendError) {
    match err {
        AppendError::Io { .. }
        | AppendError::Corrupted { .. }
        | AppendError::Poisoned
        | AppendError::Closed
        | AppendError::Busy { .. } => panic!("a storage failure on an in-memory store: {err}"),
        _ => {}
    }
}

/// Recomputes every hash of the store; anything but a clean report is a bug.
pub fn assert_verifies(store: &Store) {
    match store.verify(None) {
        Ok(report) if report.is_ok() => {}
        Ok(report) => panic!("verify found damage: {:?}", report.problems),
        Err(err) => panic!("verify failed: {err}"),
    }
}

/// Parses `data` as a transcript of `format` and appends what it yields.
///
/// Properties: parsing never panics and is deterministic; skipped lines are reported in file
/// order; every record has an entryId and a (possibly empty) claimed hash pair. The records of an
/// agent's transcript (everything but annal's own exports, which carry their own ids and hashes)
/// must always append: an importer never produces what the store refuses. Appending the same
/// parse again stores nothing (a re-import is a no-op), and the store verifies.
pub fn check_import(data: &[u8], format: TranscriptFormat) {
    let _ = detect_format(data);
    let parsed = parse_transcript(data, format, "fuzz");
    assert_eq!(parse_transcript(data, format, "fuzz"), parsed, "parsing is not deterministic");
    let mut previous = 0;
    for skipped in &parsed.skipped {
        assert!(skipped.line >= previous, "skipped lines out of order: {:?}", parsed.skipped);
        previous = skipped.line;
        let _ = skipped.to_string();
    }
    let store = fresh_store(SMALL_BLOB_THRESHOLD);
    for session in parsed.sessions {
        assert_eq!(session.records.len(), session.claimed_hashes.len());
        assert!(session.records.iter().all(|r| !r.entry_id.is_empty()), "a record without an entryId");
        let again = session.records.clone();
        match store.append(&session.name, None, session.records) {
            Ok(receipt) => {
                let repeat = match store.append(&session.name, None, again) {
                    Ok(repeat) => repeat,
                    Err(err) => panic!("re-appending the same records failed: {err}"),
                };
                assert_eq!(repeat.appended, 0, "a re-import stored records again");
                assert_eq!(repeat.source_orders, receipt.source_orders);
            }
            Err(err) => {
                assert_refusal(&err);
                assert!(
                    format == TranscriptFormat::Annal,
                    "the {format} importer produced records the store refuses: {err}"
                );
            }
        }
    }
    assert_verifies(&store);
}

/// Checks arbitrary lines as OpenAI Responses items, as the Agents SDK session stores them.
///
/// Properties: a line is refused only when it is not a JSON object; every item read becomes a
/// record the store accepts, whose blocks give items that are JSON; reading the session back
/// gives every item's text exactly, in order; the store verifies.
pub fn check_responses_items(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut records = Vec::new();
    let mut kept = Vec::new();
    for (index, line) in text.split('\n').enumerate() {
        let parsed = serde_json::from_str::<serde_json::Value>(line).ok();
        match record_from_responses_item(&format!("item-{index}"), line) {
            Ok(record) => {
                assert!(
                    parsed.as_ref().is_some_and(serde_json::Value::is_object),
                    "took a non-object: {line:?}"
                );
                for item in responses_items(record.role, &record_message_blocks(&record)) {
                    assert!(item.is_object(), "an item that is not an object: {item}");
                }
                kept.push(line.to_owned());
                records.push(record);
            }
            Err(_) => assert!(
                !parsed.as_ref().is_some_and(serde_json::Value::is_object),
                "refused an object: {line:?}"
            ),
        }
    }
    if records.is_empty() {
        return;
    }
    let store = fresh_store(SMALL_BLOB_THRESHOLD);
    if let Err(err) = store.append("items", Some(0), records) {
        // Only the store's own limits (a record too large, say) may refuse an item.
        assert!(matches!(err, AppendError::LimitExceeded { .. }), "an item the store refuses: {err}");
        return;
    }
    let snapshot = store.snapshot().expect("a snapshot");
    let back: Vec<String> = session_items(&snapshot, "items", 0..u64::MAX)
        .expect("the items")
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    assert_eq!(back, kept, "items did not read back verbatim");
    assert_verifies(&store);
}

/// Checks one session an importer made from database rows.
///
/// Properties: every record has an entryId and a (possibly empty) claimed hash pair; the records
/// append to a fresh store (an importer never produces what the store refuses); appending them
/// again stores nothing (a re-read is a no-op), and the store verifies.
pub fn check_rows_session(session: ParsedSession) {
    assert_eq!(session.records.len(), session.claimed_hashes.len());
    assert!(session.records.iter().all(|r| !r.entry_id.is_empty()), "a record without an entryId");
    let store = fresh_store(SMALL_BLOB_THRESHOLD);
    let again = session.records.clone();
    match store.append(&session.name, None, session.records) {
        Ok(receipt) => {
            let repeat = match store.append(&session.name, None, again) {
                Ok(repeat) => repeat,
                Err(err) => panic!("re-appending the same records failed: {err}"),
            };
            assert_eq!(repeat.appended, 0, "a re-read stored records again");
            assert_eq!(repeat.source_orders, receipt.source_orders);
        }
        Err(err) => {
            assert_refusal(&err);
            panic!("the importer produced records the store refuses: {err}");
        }
    }
    assert_verifies(&store);
}

/// A record as the store keeps it: tool inputs in canonical text, empty targets derived.
fn stored_form(record: &Record) -> Record {
    let mut record = record.clone();
    for block in &mut record.blocks {
        if let Block::ToolCall { tool, input, target, .. } = block {
            *input = canonical_input(input);
            if target.is_empty() {
                *target = derive_target(tool, input);
            }
        }
    }
    record
}

/// Reads `data` as `annal append` reads stdin (one portable JSON record per line) and appends
/// every line that parses, with a derived entryId where a line has none.
///
/// Properties: nothing panics; the append either succeeds or is a typed refusal of the input,
/// never a storage failure; what was appended reads back as it was given (in the store's
/// canonical form) and survives a portable-format round trip unchanged; the store verifies.
pub fn check_append_lines(data: &[u8]) {
    let mut batch = Vec::new();
    for (index, line) in data.split(|&b| b == b'\n').enumerate() {
        let Ok(text) = std::str::from_utf8(line) else { continue };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else { continue };
        let Ok(portable) = record_from_json(&value) else { continue };
        let mut record = portable.record;
        if record.entry_id.is_empty() {
            record.entry_id = format!("line-{index}");
        }
        batch.push(record);
    }
    let store = fresh_store(SMALL_BLOB_THRESHOLD);
    let expected: Vec<Record> = batch.iter().map(stored_form).collect();
    let receipt = match store.append("fuzz", None, batch) {
        Ok(receipt) => receipt,
        Err(err) => {
            assert_refusal(&err);
            assert_verifies(&store);
            return;
        }
    };
    let snapshot = store.snapshot().unwrap_or_else(|e| panic!("snapshot: {e}"));
    let mut seen = HashSet::new();
    for (record, &order) in expected.iter().zip(&receipt.source_orders) {
        // A repeated entryId with the same content maps to the first one's sourceOrder; the
        // first occurrence is what was stored (its target may differ: targets are not content).
        if !seen.insert(order) {
            continue;
        }
        let guard = match snapshot.record("fuzz", order) {
            Ok(Some(guard)) => guard,
            other => panic!("record {order} unreadable after its append: {other:?}"),
        };
        let view = guard.view().unwrap_or_else(|e| panic!("view of {order}: {e}"));
        let stored = snapshot.to_record(&view).unwrap_or_else(|e| panic!("record {order}: {e}"));
        assert_eq!(&stored, record, "record {order} does not read back as appended");
        let json = record_to_json(&snapshot, &view).unwrap_or_else(|e| panic!("to JSON {order}: {e}"));
        let back = record_from_json(&json).unwrap_or_else(|e| panic!("portable form of {order}: {e}"));
        assert_eq!(back.record, stored, "record {order} changes in the portable format");
        assert_eq!(back.source_order, Some(order));
        assert_eq!(back.hash, Some(view.hash()));
        assert_eq!(back.prev_hash, Some(view.prev_hash()));
    }
    drop(snapshot);
    assert_verifies(&store);
}
