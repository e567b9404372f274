//! Loading a parsed transcript session into the store: the step `annal import` and the library's
//! import share, after parsing and before reporting.
//!
//! A load is idempotent, as re-importing must be: every record carries a stable entryId, so a
//! record already stored is counted as present and a grown transcript adds only its new records.
//! Records whose entryId another session holds (a resumed Claude Code session repeats its
//! predecessor's lines) stay with that session and are counted. Records go in batches bounded by
//! count and by bytes, well under the store's batch limit, so a session of many large images
//! never fails as one oversized batch. An annal export's claimed hashes are checked after the
//! append: the imported records must reproduce the exported chain exactly.

use crate::import::ParsedSession;
use annal_engine::Record;
use annal_engine::Store;
use annal_engine::{AppendError, ReadError};

/// Records per append: large enough to amortise the commit, small enough to bound memory.
const BATCH_RECORDS: usize = 2_000;
/// Payload bytes per append, a quarter of the store's 1 GiB batch limit.
const BATCH_BYTES: usize = 256 << 20;

/// What loading one session did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionLoad {
    /// Records appended now.
    pub appended: u64,
    /// Records that were already stored in this session (a re-import, or a grown transcript).
    pub present: u64,
    /// Records left where they are because another session holds their entryId.
    pub elsewhere: u64,
}

/// Loading a session failed. What was appended before the failure stays stored (each batch is
/// atomic), and loading the same session again completes it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    // The wrapped errors are part of the message, not a `source`: a chain printer would show
    // them twice.
    /// An append was refused or failed.
    #[error("{}", name_once(session, error))]
    Append {
        /// The session being loaded.
        session: String,
        /// Why the append failed.
        error: AppendError,
    },
    /// Reading the store failed.
    #[error("session {session:?}: {error}")]
    Read {
        /// The session being loaded.
        session: String,
        /// Why the read failed.
        error: ReadError,
    },
    /// An imported annal export does not reproduce the hash chain it carries.
    #[error(
        "session {session:?}: record {source_order} ({entry_id}) does not match the hash its export claims"
    )]
    HashMismatch {
        /// The session.
        session: String,
        /// The record's sourceOrder.
        source_order: u64,
        /// The record's entryId.
        entry_id: String,
    },
}

/// The append error's message, naming the session once: most append errors already do.
fn name_once(session: &str, err: &AppendError) -> String {
    let message = err.to_string();
    if message.contains(&format!("session {session:?}")) {
        message
    } else {
        format!("session {session:?}: {message}")
    }
}

/// Appends to `store` the records of a parsed transcript session (see [`parse_transcript`])
/// that the store's session does not hold yet, and checks the hashes an annal export claims.
///
/// # Errors
/// [`LoadError`]: an append refused or failed (an entryId stored with other content, the
/// disk), a read failed, or an export's records do not reproduce their claimed hashes.
///
/// # Examples
/// ```
/// use annal_engine::{Store, StoreOptions};
/// use annal_formats::{load_session, parse_transcript, TranscriptFormat};
///
/// let dir = tempfile::tempdir().unwrap();
/// let store = Store::open(dir.path().join("s.annal"), StoreOptions::default()).unwrap();
/// let line = r#"{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":"hi"}}"#;
/// let parsed = parse_transcript(line.as_bytes(), TranscriptFormat::Claude, "file");
/// let session = parsed.sessions.into_iter().next().unwrap();
/// let first = load_session(&store, session.clone()).unwrap();
/// assert_eq!((first.appended, first.present), (1, 0));
/// // Loading it again stores nothing.
/// let again = load_session(&store, session).unwrap();
/// assert_eq!((again.appended, again.present), (0, 1));
/// ```
///
/// [`parse_transcript`]: crate::parse_transcript
pub fn load_session(store: &Store, session: ParsedSession) -> Result<SessionLoad, LoadError> {
    let name = session.name;
    let read = |error| LoadError::Read { session: name.clone(), error };
    let append = |error| LoadError::Append { session: name.clone(), error };
    let mut load = SessionLoad::default();
    let snapshot = store.snapshot().map_err(read)?;
    let mut records: Vec<Record> = Vec::with_capacity(session.records.len());
    let mut claims = Vec::with_capacity(session.records.len());
    for (record, claim) in session.records.into_iter().zip(session.claimed_hashes) {
        match snapshot.entry(&record.entry_id).map_err(read)? {
            Some(location) if location.session != name => load.elsewhere += 1,
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
        let batch = next_batch(&mut pending, BATCH_RECORDS, BATCH_BYTES);
        let count = batch.len() as u64;
        let receipt = store.append(&name, None, batch).map_err(append)?;
        load.appended += receipt.appended as u64;
        load.present += count - receipt.appended as u64;
        orders.extend(receipt.source_orders);
    }
    if orders.is_empty() {
        // A transcript with no records still names a session: create it so it is listed.
        store.append(&name, None, Vec::new()).map_err(append)?;
    }
    if claims.iter().any(Option::is_some) {
        let snapshot = store.snapshot().map_err(read)?;
        for (&order, claim) in orders.iter().zip(&claims) {
            let Some((hash, prev)) = claim else { continue };
            let mismatch = |entry_id: String| LoadError::HashMismatch {
                session: name.clone(),
                source_order: order,
                entry_id,
            };
            let guard =
                snapshot.record(&name, order).map_err(read)?.ok_or_else(|| mismatch(String::new()))?;
            let view = guard.view().map_err(read)?;
            if view.hash() != *hash || view.prev_hash() != *prev {
                return Err(mismatch(view.entry_id().to_owned()));
            }
        }
    }
    Ok(load)
}

/// The next records to append together: at most `records_max`, and no more than `bytes_max` of
/// payload unless a single record is larger (it then goes alone; the store's record limit is
/// far above any line an importer reads).
fn next_batch(
    pending: &mut std::iter::Peekable<impl Iterator<Item = Record>>,
    records_max: usize,
    bytes_max: usize,
) -> Vec<Record> {
    let mut batch = Vec::new();
    let mut bytes = 0usize;
    while batch.len() < records_max {
        let Some(next) = pending.peek() else { break };
        let size = next.size_bytes();
        if !batch.is_empty() && bytes.saturating_add(size) > bytes_max {
            break;
        }
        bytes = bytes.saturating_add(size);
        batch.extend(pending.next());
    }
    batch
}

#[cfg(test)]
mod tests {
    use super::*;
    use annal_engine::Role;

    #[test]
    fn batches_are_bounded_by_count_and_bytes() {
        let record = |id: usize, len: usize| Record::text(id.to_string(), Role::User, "x".repeat(len));
        let sizes = [10, 10, 10, 95, 10, 200, 1, 1, 1, 1, 1];
        let mut pending = sizes.iter().enumerate().map(|(id, &len)| record(id, len)).peekable();
        let mut batches = Vec::new();
        while pending.peek().is_some() {
            let batch = next_batch(&mut pending, 4, 100);
            batches.push(batch.iter().map(|r| r.entry_id.clone()).collect::<Vec<_>>());
        }
        // Byte-bound, a record larger than the bound alone, then count-bound.
        assert_eq!(
            batches,
            [vec!["0", "1", "2"], vec!["3"], vec!["4"], vec!["5"], vec!["6", "7", "8", "9"], vec!["10"]]
        );
    }
}
