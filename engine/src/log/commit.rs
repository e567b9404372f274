//! Committing a group in a store shared between processes: decided against redb plus the
//! shared log's frames and written as one frame with one sync; or, for what the log does not
//! carry (a compaction's writes, sync cursors, a group too large for a frame), folded into one
//! durable redb transaction together with every frame before it, which starts the log's next
//! cycle. Both under the log's exclusive lock, so no other process decides meanwhile.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redb::{Database, ReadableDatabase, WriteTransaction};

use crate::apply::{Decide, Tables};
use crate::error::Failure;
use crate::fork::Fork;
use crate::prepare::Prepared;
use crate::read::Snapshot;
use crate::replay::{put_back, put_back_all};
use crate::writer::{apply_requests, begin_write, GroupFailure, Outcome, Request};

use crate::sync::lock;

use super::deciding::Deciding;
use super::overlay::Overlay;
use super::{log_applied, LogState, SharedLog};

/// Groups with more to write than this are committed durably in the store file: writing them
/// once there costs less than writing them to the log and again at the checkpoint.
const LOGGED_GROUP_BYTES_MAX: usize = 1 << 20;

fn storage(failure: Failure) -> GroupFailure {
    GroupFailure::Storage(failure)
}

/// Whether a request writes something the log's frames do not carry.
fn needs_store(request: &Request) -> bool {
    match request {
        Request::Side(_) => true,
        Request::Append { cursors, .. } => !cursors.is_empty(),
        Request::Fork { .. } => false,
    }
}

/// The bytes of the journal values and blobs `group` would write: less than its redo form.
fn values_bytes(group: &[Request]) -> usize {
    let prepared = group.iter().flat_map(|request| match request {
        Request::Append { prepared, .. } => prepared.as_slice(),
        Request::Fork { .. } | Request::Side(_) => &[],
    });
    prepared.map(Prepared::stored_bytes).sum()
}

/// Commits `group` through the shared log and returns the store's position end with each
/// request's answer. On failure the requests are left for the caller to fail (an I/O error
/// may come after the group was made durable, as with any write).
pub(crate) fn commit_shared(
    db: &Database,
    group: &mut Vec<Request>,
    wait: Duration,
    log: &SharedLog,
) -> Result<(u64, Vec<Outcome>), GroupFailure> {
    let mut held = log.hold(true).map_err(storage)?;
    log.catch_up(&mut held.state).map_err(storage)?;
    // A group whose values alone are more than a frame takes, or than the log holds, would be
    // decided in memory only to be put back into redb: it is applied to redb's tables
    // directly, as the writes a frame does not carry are.
    let values = values_bytes(group);
    let outsized = values > LOGGED_GROUP_BYTES_MAX || !log.could_fit(&held.state, values);
    if outsized || group.iter().any(needs_store) {
        let mut outcomes = Vec::with_capacity(group.len());
        let end = fold(db, log, &mut held.state, wait, |txn, tables| {
            apply_requests(txn, tables, group, &mut outcomes)?;
            tables.position_end()
        })?;
        group.clear();
        return Ok((end, outcomes));
    }
    let txn = db.begin_read().map_err(|e| storage(e.into()))?;
    let applied = log_applied(&txn).map_err(storage)?;
    if held.state.header.is_none() || held.state.last_seq < applied {
        // Every frame is in redb already: a crash after a checkpoint's commit left the cycle
        // it folded (or cut the header of one no frame was acknowledged in: its first frame's
        // sync would have made the header durable). Frames go on from `applied`, in a cycle of
        // their own, so no new frame takes a number redb counts as folded.
        log.next_cycle(&mut held.state, applied).map_err(|e| storage(Failure::Io(e)))?;
    }
    let layer = log.layer_over(&held.state, applied).map_err(storage)?;
    let snapshot = Snapshot::layered(txn, layer).map_err(|e| storage(e.into()))?;
    let mut deciding = Deciding::new(&snapshot);
    let mut outcomes = Vec::with_capacity(group.len());
    for request in group.iter_mut() {
        match request {
            Request::Append { session, expected_next, prepared, claims, unchanged, reply, .. } => {
                let result = match deciding.changed(unchanged).map_err(storage)? {
                    Some(refusal) => Err(refusal),
                    None => deciding
                        .append(session, *expected_next, std::mem::take(prepared), claims)
                        .map_err(storage)?,
                };
                outcomes.push(Outcome::Append(reply.clone(), result));
            }
            Request::Fork { parent, at, name, reply } => {
                let result = deciding.fork(parent, *at, name).map_err(storage)?;
                outcomes.push(Outcome::Fork(reply.clone(), result));
            }
            Request::Side(_) => {
                return Err(storage(Failure::Corrupted("a side write reached the log".into())))
            }
        }
    }
    let position_end = deciding.position_end().map_err(storage)?;
    let redo = std::mem::take(&mut deciding.redo).into_bytes();
    drop(deciding);
    drop(snapshot);
    if redo.is_empty() {
        // Nothing new (every record already stored): nothing to make durable.
    } else if redo.len() > LOGGED_GROUP_BYTES_MAX || !log.could_fit(&held.state, redo.len()) {
        // Written once in the store file rather than twice (the log, then the checkpoint).
        fold(db, log, &mut held.state, wait, |_, tables| put_back(tables, &redo))?;
    } else {
        if !log.fits(&held.state, redo.len()) {
            fold(db, log, &mut held.state, wait, |_, _| Ok(()))?;
        }
        log.append(&mut held.state, redo).map_err(|e| storage(Failure::Io(e)))?;
    }
    group.clear();
    Ok((position_end, outcomes))
}

/// Folds every frame of the log into redb, in one durable transaction that also applies
/// `write`, and starts the log's next cycle. Call with the exclusive lock held, caught up.
fn fold<T>(
    db: &Database,
    log: &SharedLog,
    state: &mut LogState,
    wait: Duration,
    write: impl FnOnce(&WriteTransaction, &mut Tables<'_>) -> Result<T, Failure>,
) -> Result<T, GroupFailure> {
    let folding = lock(&log.folding);
    let txn = begin_write(db, wait).map_err(busy_or_storage)?;
    let (value, last) = (|| -> Result<(T, u64), Failure> {
        let mut tables = Tables::open(&txn)?;
        let applied = tables.log_applied()?;
        let last = put_back_frames(&mut tables, &state.overlay, applied, u64::MAX)?;
        let value = write(&txn, &mut tables)?;
        let last = last.max(state.last_seq);
        tables.set_log_applied(last)?;
        Ok((value, last))
    })()
    .map_err(storage)?;
    txn.commit().map_err(|e| storage(e.into()))?;
    drop(folding);
    // redb holds every group now: a failure to start the next cycle loses nothing (the old
    // cycle's frames are at or below `log_applied`, which readers skip), but it is an I/O error
    // on the write path, which stops writes; the group's callers hear of it, as of any I/O
    // error after which their writes may or may not be stored.
    log.next_cycle(state, last).map_err(|e| storage(Failure::Io(e)))?;
    Ok(value)
}

fn busy_or_storage(e: Result<Duration, Failure>) -> GroupFailure {
    match e {
        Ok(waited) => GroupFailure::Busy(waited),
        Err(failure) => storage(failure),
    }
}

/// Puts the frames of `overlay` in `(applied, upto]` back into redb's tables, returning the
/// last one put back (`applied` when none). They must follow on from `applied`.
fn put_back_frames(
    tables: &mut Tables<'_>,
    overlay: &Overlay,
    applied: u64,
    upto: u64,
) -> Result<u64, Failure> {
    let maps = overlay.read();
    let mut redos = Vec::new();
    let mut last = applied;
    for (seq, redo) in maps.frames_after(applied).take_while(|(seq, _)| *seq <= upto) {
        if *seq != last + 1 {
            return Err(Failure::Corrupted(format!(
                "the log's groups go on at {seq} but the store holds only those up to {last}"
            )));
        }
        redos.push(&redo[..]);
        last = *seq;
    }
    put_back_all(tables, redos)?;
    Ok(last)
}

/// Folds the frames this process has read into redb without holding the log's lock, so that
/// appends go on meanwhile, and leaves the cycle as it is: the fold a full log then makes its
/// appender wait for holds only the frames written since (docs/format.md, "The shared log").
/// Readers and appenders pair each redb transaction with the frames above its `log_applied`,
/// so every moment reads the same store whether a frame was folded yet or not. Nothing is
/// committed when redb already holds every frame read (another fold got there first).
///
/// # Errors
/// `Busy` when another process writes redb for longer than `wait`; storage failures.
pub(crate) fn fold_behind(db: &Database, log: &SharedLog, wait: Duration) -> Result<(), GroupFailure> {
    let (overlay, upto) = log.behind().map_err(storage)?;
    let _folding = lock(&log.folding);
    let txn = begin_write(db, wait).map_err(busy_or_storage)?;
    let folded = (|| -> Result<bool, Failure> {
        let mut tables = Tables::open(&txn)?;
        let applied = tables.log_applied()?;
        if applied >= upto {
            return Ok(false);
        }
        let last = put_back_frames(&mut tables, &overlay, applied, upto)?;
        if last == applied {
            return Ok(false);
        }
        tables.set_log_applied(last)?;
        Ok(true)
    })()
    .map_err(storage)?;
    if folded {
        txn.commit().map_err(|e| storage(e.into()))?;
    } else {
        txn.abort().map_err(|e| storage(e.into()))?;
    }
    Ok(())
}

/// Folds the log's frames into redb if it holds any. A failure poisons the store: the frames
/// stay in the log, which every process still reads.
pub(crate) fn checkpoint_shared(db: &Database, log: &SharedLog, wait: Duration, poisoned: &AtomicBool) {
    if poisoned.load(Ordering::Acquire) {
        return;
    }
    let folded = (|| -> Result<(), GroupFailure> {
        let mut held = log.hold(true).map_err(storage)?;
        log.catch_up(&mut held.state).map_err(storage)?;
        if held.state.overlay.read().is_empty() {
            return Ok(());
        }
        fold(db, log, &mut held.state, wait, |_, _| Ok(()))
    })();
    match folded {
        // Another process writing for longer than the wait: its own checkpoint or a later one
        // folds the frames.
        Ok(()) | Err(GroupFailure::Busy(_)) => {}
        Err(GroupFailure::Storage(_)) => poisoned.store(true, Ordering::Release),
    }
}
