//! Codex forks as annal forks. A rollout whose `session_meta` names `forked_from_id` begins
//! with a copy of its parent's history (the same items, stamped with the time of the copy). When the parent is
//! stored, the copy is not stored again: the session becomes a fork of the parent at the end
//! of the copied run (O(1), shared by reference), followed by the fork's own records.
//!
//! The copied run is found by content, not by position: the fork's records after its own
//! `session_meta` are matched against the parent's from its first or second record (whether
//! the copy starts with the parent's `session_meta` or after it). Each later read finds the
//! same run again (the parent's records before the fork point never change) and drops it, so
//! the fork's other records are stored once by their entryIds, as any session's are.

use annal_engine::{ForkError, Record, Snapshot, Store};
use annal_formats::ParsedSession;
use serde_json::Value;

use crate::sync::SyncError;

/// The parent a Codex session's first record (its `session_meta`) names.
fn forked_from(session: &ParsedSession) -> Option<String> {
    let payload = session.records.first()?.meta.get("payload")?;
    let payload: Value = serde_json::from_str(payload).ok()?;
    let parent = payload.get("forked_from_id")?.as_str()?;
    (!parent.is_empty() && parent != session.name).then(|| parent.to_owned())
}

/// Whether two records say the same, whatever their entryIds and times: Codex stamps each
/// copied line with the time it writes the copy.
fn same(a: &Record, b: &Record) -> bool {
    a.role == b.role && a.blocks == b.blocks && a.meta == b.meta
}

/// The longest run of `session`'s records after the first that copies the parent's from
/// `offset` on: `(offset, run length)`, the longer of the two alignments.
fn copied_run(
    snapshot: &Snapshot,
    parent: &str,
    session: &ParsedSession,
    limit: u64,
) -> Result<(u64, u64), SyncError> {
    let mut parents = Vec::new();
    for guard in snapshot.records(parent, 0..limit)? {
        let guard = guard?;
        parents.push(snapshot.to_record(&guard.view()?)?);
    }
    let copy = session.records.get(1..).unwrap_or_default();
    let run = |offset: usize| -> u64 {
        let theirs = parents.get(offset..).unwrap_or_default();
        copy.iter().zip(theirs).take_while(|(a, b)| same(a, b)).count() as u64
    };
    let (from_meta, after_meta) = (run(0), run(1));
    Ok(if after_meta > from_meta { (1, after_meta) } else { (0, from_meta) })
}

/// Makes `session` a fork of the parent it names when the parent is stored, or drops the
/// copied run when it already is one. A session stored before its parent stays as it is.
pub(crate) fn attach(store: &Store, session: &mut ParsedSession) -> Result<(), SyncError> {
    let Some(parent) = forked_from(session) else { return Ok(()) };
    let snapshot = store.snapshot()?;
    let Some(parent_info) = snapshot.session(&parent)? else { return Ok(()) };
    let limit = match snapshot.session(&session.name)? {
        Some(own) if own.parent.as_deref() == Some(parent.as_str()) => own.fork_at.unwrap_or(0),
        Some(_) => return Ok(()),
        None => parent_info.len,
    };
    let (offset, run) = copied_run(&snapshot, &parent, session, limit)?;
    drop(snapshot);
    if run == 0 {
        return Ok(());
    }
    let at = offset + run;
    if store.snapshot()?.session(&session.name)?.is_none() {
        match store.fork(&parent, at, &session.name) {
            // Another writer made it meanwhile: it is found again on the next read.
            Ok(_) | Err(ForkError::NameTaken(_)) => {}
            Err(err) => return Err(SyncError::Fork(err)),
        }
    }
    let copied = usize::try_from(run).unwrap_or(usize::MAX);
    let copied = 1..=copied.min(session.records.len() - 1);
    session.records.drain(copied.clone());
    if session.claimed_hashes.len() > *copied.end() {
        session.claimed_hashes.drain(copied);
    }
    Ok(())
}
