//! `verify`: recomputes every content hash and hash chain, and checks blobs against their keys.

use crate::codec;
use crate::digest::Digest;
use crate::error::ReadError;
use crate::hash::{archived_content_hash, chain_hash, hash_to_hex, Hash, ZERO_HASH};
use crate::packing::{unpack, unpack_record, HeldRecord};
use crate::read::{SessionLookup, Snapshot};
use crate::view::{BlockView, Payload, RecordView};

/// What `verify` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Sessions checked.
    pub sessions: u64,
    /// Records checked (each stored record once, not once per fork that inherits it).
    pub records: u64,
    /// Blobs checked against their keys.
    pub blobs: u64,
    /// The first problem of each damaged session, then damaged blobs.
    pub problems: Vec<Problem>,
}

impl VerifyReport {
    /// Whether everything checked out.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// One piece of damage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The session, if the damage is in one.
    pub session: Option<String>,
    /// The first bad record's sourceOrder, if the damage is in a record.
    pub source_order: Option<u64>,
    /// What is wrong.
    pub detail: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.session, self.source_order) {
            (Some(session), Some(order)) => {
                write!(f, "session {session:?}, sourceOrder {order}: {}", self.detail)
            }
            (Some(session), None) => write!(f, "session {session:?}: {}", self.detail),
            _ => f.write_str(&self.detail),
        }
    }
}

pub(crate) fn verify(snapshot: &Snapshot, only: Option<&str>) -> Result<VerifyReport, ReadError> {
    let sessions = match only {
        Some(name) => {
            vec![snapshot.session(name)?.ok_or_else(|| ReadError::UnknownSession(name.to_owned()))?]
        }
        None => snapshot.sessions()?,
    };
    let mut report = VerifyReport::default();
    // Sessions are checked on every core: a store's records are decompressed and hashed once
    // each, which is CPU work that splits cleanly by session. Results keep the sessions' order.
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(sessions.len()).max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    type Checked = Result<(u64, Result<(), Problem>), ReadError>;
    let mut checked: Vec<(usize, Checked)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(info) = sessions.get(at) else { return mine };
                        let mut records = 0;
                        let result = verify_session(snapshot, &info.name, &mut records);
                        mine.push((at, result.map(|outcome| (records, outcome))));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    checked.sort_by_key(|(at, _)| *at);
    for ((_, result), info) in checked.into_iter().zip(&sessions) {
        let (records, outcome) = result?;
        report.sessions += 1;
        report.records += records;
        if let Err(problem) = outcome {
            report.problems.push(Problem { session: Some(info.name.clone()), ..problem });
        }
    }
    if only.is_none() {
        snapshot.each_blob(|key, bytes| {
            report.blobs += 1;
            if let Err(detail) = unpack(key, bytes) {
                report.problems.push(Problem { session: None, source_order: None, detail });
            }
            Ok(())
        })?;
    }
    Ok(report)
}

/// A check's answer: the outer error is a failure to read; the inner one the first damage found.
type Outcome<T> = Result<Result<T, Problem>, ReadError>;

fn problem(order: Option<u64>, detail: String) -> Problem {
    Problem { session: None, source_order: order, detail }
}

/// Checks a session's own records; inherited ones are checked with their own session.
fn verify_session(snapshot: &Snapshot, name: &str, records: &mut u64) -> Outcome<()> {
    let row = snapshot.session_row(name)?;
    let start = if row.parent_key().is_some() { row.fork_at } else { 0 };
    let mut prev = match fork_point_hash(snapshot, name, start)? {
        Ok(hash) => hash,
        Err(problem) => return Ok(Err(problem)),
    };
    let mut expected = start;
    for item in snapshot.journal_range(row.key, (start, u64::MAX))? {
        let (order, bytes) = item?;
        *records += 1;
        if order != expected {
            return Ok(Err(problem(Some(expected), format!("record missing (next stored is {order})"))));
        }
        prev = match verify_record(snapshot, (row.key, order), name, &bytes, &prev)? {
            Ok(hash) => hash,
            Err(problem) => return Ok(Err(problem)),
        };
        expected += 1;
    }
    if expected != row.next {
        return Ok(Err(problem(
            Some(expected),
            format!("session claims {} records, found {expected}", row.next),
        )));
    }
    if prev != row.head {
        return Ok(Err(problem(None, "session head does not match its last record".into())));
    }
    let _ = snapshot.lineage(&row).map_err(ReadError::from)?;
    Ok(Ok(()))
}

/// The hash the session's first own record chains from: a fork's chains from its parent's
/// record just before the fork point.
fn fork_point_hash(snapshot: &Snapshot, name: &str, start: u64) -> Outcome<Hash> {
    if start == 0 {
        return Ok(Ok(ZERO_HASH));
    }
    match snapshot.record(name, start - 1) {
        Ok(Some(guard)) => match guard.view() {
            Ok(view) => Ok(Ok(view.hash())),
            Err(err) => Ok(Err(problem(Some(start - 1), err.to_string()))),
        },
        Ok(None) => Ok(Err(problem(Some(start - 1), "the fork point's record is missing".into()))),
        Err(ReadError::Io { source }) => Err(ReadError::Io { source }),
        Err(err) => Ok(Err(problem(Some(start - 1), err.to_string()))),
    }
}

/// Checks one stored record at `at` (session key, sourceOrder) against the hash it chains
/// from; answers its own hash, the next record's `prev`.
fn verify_record(
    snapshot: &Snapshot,
    at: (u64, u64),
    name: &str,
    bytes: &HeldRecord<'_>,
    prev: &Hash,
) -> Outcome<Hash> {
    let order = at.1;
    let archived = match bytes.archive() {
        Ok(archive) => archive,
        Err(reason) => return Ok(Err(problem(Some(order), format!("record is corrupted: {reason}")))),
    };
    let archived = match codec::access(archived) {
        Ok(archived) => archived,
        Err(reason) => return Ok(Err(problem(Some(order), format!("record is corrupted: {reason}")))),
    };
    let Some(view) = RecordView::new(archived, order) else {
        return Ok(Err(problem(Some(order), "unknown role tag".into())));
    };
    let content = archived_content_hash(view.archived());
    if view.prev_hash() != *prev {
        return Ok(Err(problem(Some(order), "prevHash does not match the previous record's hash".into())));
    }
    if view.hash() != chain_hash(prev, &content) {
        return Ok(Err(problem(Some(order), "content does not match the record's hash".into())));
    }
    if let Err(reason) = crate::hash::check_archived(view.archived()) {
        return Ok(Err(problem(Some(order), reason.into())));
    }
    if let Err(problem) = verify_indexed(snapshot, at, name, &view, &content)? {
        return Ok(Err(problem));
    }
    if let Err(problem) = verify_blobs(snapshot, order, &view)? {
        return Ok(Err(problem));
    }
    Ok(Ok(view.hash()))
}

/// Checks that the record's digest and its entry's location agree with the record.
fn verify_indexed(
    snapshot: &Snapshot,
    at: (u64, u64),
    name: &str,
    view: &RecordView<'_>,
    content: &Hash,
) -> Outcome<()> {
    let order = at.1;
    match snapshot.digest_at(at)?.and_then(|d| Digest::decode(&d)) {
        Some(digest) if digest.content_hash == *content && digest.role == view.role() => {}
        Some(_) => return Ok(Err(problem(Some(order), "digest does not match the record".into()))),
        None => return Ok(Err(problem(Some(order), "digest missing or corrupted".into()))),
    }
    match snapshot.entry(view.entry_id()) {
        Ok(Some(location)) if location.session == name && location.source_order == order => Ok(Ok(())),
        Ok(_) => Ok(Err(problem(Some(order), format!("entry {:?} is not indexed here", view.entry_id())))),
        Err(ReadError::Io { source }) => Err(ReadError::Io { source }),
        Err(err) => Ok(Err(problem(Some(order), err.to_string()))),
    }
}

/// Checks that every blob the record's blocks point to is stored.
fn verify_blobs(snapshot: &Snapshot, order: u64, view: &RecordView<'_>) -> Outcome<()> {
    for block in view.blocks() {
        let hash = match block {
            BlockView::Text { text: Payload::Blob { hash, .. } }
            | BlockView::Thinking { text: Payload::Blob { hash, .. } }
            | BlockView::ToolCall { input: Payload::Blob { hash, .. }, .. }
            | BlockView::ToolResult { output: Payload::Blob { hash, .. }, .. }
            | BlockView::Blob { hash, .. } => hash,
            _ => continue,
        };
        if snapshot.blob_value(&hash)?.is_none() {
            return Ok(Err(problem(Some(order), format!("blob {} is missing", hash_to_hex(&hash)))));
        }
    }
    Ok(Ok(()))
}

/// Validates arbitrary bytes as a journal value (tag, then the archived record as it is or
/// compressed) and, if valid, walks every field: the fuzz target's entry point. Must never
/// panic, whatever the bytes.
#[cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))]
#[cfg_attr(not(any(test, feature = "fuzzing")), allow(dead_code))]
pub fn check_record_bytes(bytes: &[u8]) -> Result<crate::hash::Hash, String> {
    let archive = unpack_record(bytes)?;
    let archived = crate::codec::access(&archive)?;
    crate::view::RecordView::new(archived, 0).ok_or("unknown role tag")?;
    crate::hash::check_archived(archived)?;
    Ok(archived.hash)
}
