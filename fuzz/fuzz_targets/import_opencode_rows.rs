//! Fuzz target: arbitrary OpenCode rows (a session's info JSON, message rows, part rows) through
//! `parse_opencode_rows`, the conversion the database and storage-tree readers share.
//!
//! The input is cut on 0x1E into the session JSON then one piece per message; a message piece is
//! cut on 0x1F into the message JSON then its parts' JSON; a piece holding 0x1D names its row id
//! before that byte (else the id is `msg_<n>` or `prt_<n>`), so empty, repeated and odd ids come
//! up too. Properties: no panic; the same rows give the same session and skipped lines; each
//! skipped row is one line; every record has an entryId; the records always append to a store
//! (an importer never produces what the store refuses); appending them again stores nothing; the
//! store verifies.
#![no_main]

use annal_formats::{parse_opencode_rows, OpenCodeMessageRows};
use annal_fuzz::{assert_verifies, fresh_store, SMALL_BLOB_THRESHOLD};
use libfuzzer_sys::fuzz_target;

/// A row's id and JSON text from one piece of the input.
fn row(piece: &[u8], default: String) -> (String, String) {
    let text = String::from_utf8_lossy(piece);
    match text.split_once('\u{1d}') {
        Some((id, data)) => (id.to_owned(), data.to_owned()),
        None => (default, text.into_owned()),
    }
}

fn rows(data: &[u8]) -> (String, Vec<OpenCodeMessageRows>) {
    let mut pieces = data.split(|&b| b == 0x1e);
    let session = String::from_utf8_lossy(pieces.next().unwrap_or_default()).into_owned();
    let mut messages = Vec::new();
    for (index, piece) in pieces.enumerate() {
        let mut fields = piece.split(|&b| b == 0x1f);
        let (id, data) = row(fields.next().unwrap_or_default(), format!("msg_{index}"));
        let parts = fields.enumerate().map(|(n, field)| row(field, format!("prt_{index}_{n}"))).collect();
        messages.push(OpenCodeMessageRows { id, data, parts });
    }
    (session, messages)
}

fuzz_target!(|data: &[u8]| {
    let (session_json, messages) = rows(data);
    let (session, skipped) = parse_opencode_rows("ses_fuzz", &session_json, &messages);
    let again = parse_opencode_rows("ses_fuzz", &session_json, &messages);
    assert_eq!(again, (session.clone(), skipped.clone()), "the conversion is not deterministic");
    assert_eq!(session.records.len(), session.claimed_hashes.len());
    assert!(session.records.iter().all(|r| !r.entry_id.is_empty()), "a record without an entryId");
    assert!(
        skipped.iter().all(|line| !line.contains('\n')),
        "a skipped line of more than one line: {skipped:?}"
    );
    let store = fresh_store(SMALL_BLOB_THRESHOLD);
    let receipt = match store.append(&session.name, None, session.records.clone()) {
        Ok(receipt) => receipt,
        Err(err) => panic!("the opencode rows importer produced records the store refuses: {err}"),
    };
    let repeat = match store.append(&session.name, None, session.records) {
        Ok(repeat) => repeat,
        Err(err) => panic!("re-appending the same records failed: {err}"),
    };
    assert_eq!(repeat.appended, 0, "a re-import stored records again");
    assert_eq!(repeat.source_orders, receipt.source_orders);
    assert_verifies(&store);
});
