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

use std::collections::HashSet;

use crate::agents::ParsedSession;
use annal_engine::Store;
use annal_engine::{AppendError, ReadError};
use annal_engine::{Block, Record};

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
    /// Records the source changed after they were stored, appended as revisions.
    pub revised: u64,
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

impl LoadError {
    /// What kind of failure this is: an export whose records do not reproduce their hashes is
    /// bad input (the store is unharmed).
    pub fn kind(&self) -> annal_engine::ErrorKind {
        match self {
            LoadError::Append { error, .. } => error.kind(),
            LoadError::Read { error, .. } => error.kind(),
            LoadError::HashMismatch { .. } => annal_engine::ErrorKind::BadInput,
        }
    }
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
    // The entryIds this session holds already: only these can have changed at their source.
    let mut present = HashSet::new();
    for (record, claim) in session.records.into_iter().zip(session.claimed_hashes) {
        match snapshot.entry(&record.entry_id).map_err(read)? {
            Some(location) if location.session != name => load.elsewhere += 1,
            found => {
                if found.is_some() {
                    present.insert(record.entry_id.clone());
                }
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
        let receipt = append_revising(store, &name, batch, &present, &mut load).map_err(append)?;
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

/// Appends a batch; a record whose entryId the session already holds with other content (a
/// message the agent updated in place: a streamed part completed, a rewritten line) goes in as
/// a revision instead, under [`revision_id`] with `meta["revises"]` naming the original, so the
/// original stays and the update is kept beside it. The same update read again maps to the same
/// revision, so it is stored once.
fn append_revising(
    store: &Store,
    name: &str,
    mut batch: Vec<Record>,
    present: &HashSet<String>,
    load: &mut SessionLoad,
) -> Result<annal_engine::AppendReceipt, AppendError> {
    // A batch of new records only (a first import) goes in as it is, without a copy kept for
    // a retry.
    if !batch.iter().any(|record| present.contains(&record.entry_id)) {
        return store.append(name, None, batch);
    }
    loop {
        match store.append(name, None, batch.clone()) {
            Err(AppendError::EntryMismatch { entry_id, .. }) => {
                let Some(record) = batch.iter_mut().find(|r| r.entry_id == entry_id) else {
                    return store.append(name, None, batch);
                };
                let original = std::mem::take(&mut record.entry_id);
                record.entry_id = revision_id(&original, record);
                record.meta.insert("revises".to_owned(), annal_engine::canonical_json(&original.into()));
                // Counted only when new: the same update read again is already stored. (A
                // failed look-up only skews the count; the append decides.)
                let stored = store.snapshot().ok().and_then(|s| s.entry(&record.entry_id).ok().flatten());
                load.revised += u64::from(stored.is_none());
            }
            other => return other,
        }
    }
}

/// The entryId of a revision of `original`: derived from its content, so the same revision
/// always gets the same id and two different revisions get different ones.
pub fn revision_id(original: &str, record: &Record) -> String {
    let mut hasher = blake3::Hasher::new();
    // Every field length-prefixed, so no two different records hash the same bytes.
    let mut fields = |parts: &[&[u8]]| {
        for bytes in parts {
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        }
    };
    let timestamp = record.timestamp.as_deref().unwrap_or_default();
    fields(&[original.as_bytes(), record.role.as_str().as_bytes(), timestamp.as_bytes()]);
    for block in &record.blocks {
        match block {
            Block::Text { text } => fields(&[b"text", text.as_bytes()]),
            Block::Thinking { text } => fields(&[b"thinking", text.as_bytes()]),
            Block::ToolCall { call_id, tool, input, target } => {
                fields(&[b"call", call_id.as_bytes(), tool.as_bytes(), input.as_bytes(), target.as_bytes()]);
            }
            Block::ToolResult { call_id, tool, is_error, output } => {
                let error: &[u8] = if *is_error { b"error" } else { b"ok" };
                fields(&[b"result", call_id.as_bytes(), tool.as_bytes(), error, output.as_bytes()]);
            }
            Block::Blob { media_type, data } => fields(&[b"blob", media_type.as_bytes(), data]),
        }
    }
    for (key, value) in &record.meta {
        fields(&[key.as_bytes(), value.as_bytes()]);
    }
    let hex = hasher.finalize().to_hex();
    format!("{original}~rev-{}", &hex.as_str()[..16])
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

    fn session(records: Vec<Record>) -> ParsedSession {
        let claimed_hashes = vec![None; records.len()];
        ParsedSession { name: "s".into(), parent: None, fork_at: None, records, claimed_hashes }
    }

    #[test]
    fn a_record_changed_at_its_source_is_kept_as_a_revision() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let store = Store::open(dir.path().join("s.redb"), annal_engine::StoreOptions::default())?;
        let first = Record::text("m1", Role::Assistant, "half a repl");
        load_session(&store, session(vec![first]))?;
        // The agent finished the message in place, and a new one followed.
        let done = Record::text("m1", Role::Assistant, "half a reply, now whole ✓");
        let next = Record::text("m2", Role::User, "thanks");
        let load = load_session(&store, session(vec![done.clone(), next.clone()]))?;
        assert_eq!((load.appended, load.revised), (2, 1));
        let snapshot = store.snapshot()?;
        let ids: Vec<String> = snapshot
            .records("s", 0..u64::MAX)?
            .map(|guard| Ok(guard?.view()?.entry_id().to_owned()))
            .collect::<Result<_, annal_engine::ReadError>>()?;
        let revision = revision_id("m1", &done);
        assert_eq!(ids, ["m1".to_owned(), revision.clone(), "m2".to_owned()]);
        let revises: Vec<String> = {
            let (_, guard) = snapshot.record_by_entry(&revision)?;
            let view = guard.view()?;
            view.meta().filter(|(key, _)| *key == "revises").map(|(_, v)| v.to_owned()).collect()
        };
        assert_eq!(revises, ["\"m1\""]);
        drop(snapshot);
        // Read again, nothing is stored twice.
        let again = load_session(&store, session(vec![done, next]))?;
        assert_eq!((again.appended, again.revised, again.present), (0, 0, 2));
        Ok(())
    }

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
