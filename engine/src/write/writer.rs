//! Committing a group: everything queued applied in one redb write transaction, made durable
//! once, and answered after the commit (`group.rs` decides which thread does it and when). A
//! caller hears back only after the commit returned: an acknowledged record is durable.
//!
//! A store with the log (`log/`) decides and commits its groups there (`log/commit.rs`),
//! with this module's requests and answers; [`commit_group`] commits a group durably in redb,
//! as a store on custom storage without a log does for every group.
//!
//! Invariant: after any storage failure on the write path the `poisoned` flag is set and every
//! later request is refused; a failed fsync is never retried (its data may be gone from the
//! page cache while the retry reports success).

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use redb::{Database, TransactionError, WriteTransaction};

use crate::apply::{AppendReceipt, Decide, Tables};
use crate::claim::Claim;
use crate::error::{AppendError, Failure, ForkError};
use crate::fork::Fork;
use crate::prepare::Prepared;
use crate::read::SessionInfo;
use crate::reply::Reply;
use crate::watermark::Watermark;

pub(crate) enum Request {
    Append {
        session: String,
        expected_next: Option<u64>,
        prepared: Vec<Prepared>,
        /// Empty, or one per record.
        claims: Vec<Claim>,
        /// Cursors set (or removed) in the same transaction when the append succeeds.
        cursors: Vec<(String, Option<Vec<u8>>)>,
        /// Sessions that must still have these lengths (None: not exist) for the append to
        /// happen, checked in the same transaction.
        unchanged: Vec<(String, Option<u64>)>,
        reply: Reply<Result<AppendReceipt, AppendError>>,
    },
    Fork {
        parent: String,
        at: u64,
        name: String,
        reply: Reply<Result<SessionInfo, ForkError>>,
    },
    /// A write of a layer above the journal (a compaction's claim, release, or checkpoint
    /// commit with its receipt), applied in the same transaction as the group's appends.
    Side(Box<dyn SideWrite>),
}

/// What an append asks besides its records: cursors to set with it, and sessions whose lengths
/// must still be what the caller read.
#[derive(Default)]
pub(crate) struct Guard {
    pub(crate) cursors: Vec<(String, Option<Vec<u8>>)>,
    pub(crate) unchanged: Vec<(String, Option<u64>)>,
}

/// A write that a layer above the journal asks the writer to apply inside its group
/// transaction, so it is atomic with the appends it depends on; the journal knows only this
/// shape, never what the write means.
pub(crate) trait SideWrite: Send {
    /// Applies the write. The outer error aborts the group; the answer is sent to the caller
    /// once the group has committed.
    fn apply(&mut self, txn: &WriteTransaction, tables: &mut Tables<'_>) -> Result<Answer, Failure>;

    /// Tells the caller the group failed, or that the store refuses writes.
    fn fail(self: Box<Self>, failure: WriteFailure);
}

/// Why the writer could not apply a side write.
#[derive(Debug)]
pub(crate) enum WriteFailure {
    Busy(Duration),
    Io(std::io::Error),
    Corrupted(String),
    Poisoned,
}

/// A reply to send once the group's transaction committed.
pub(crate) struct Answer(Box<dyn FnOnce() + Send>);

impl Answer {
    /// Sends `Ok(value)` on `reply` when the group commits.
    pub(crate) fn of<T: Send + 'static>(reply: &Reply<Result<T, WriteFailure>>, value: T) -> Answer {
        let reply = reply.clone();
        // A caller that gave up waiting dropped its end: the answer goes with the slot.
        Answer(Box::new(move || reply.send(Ok(value))))
    }

    fn send(self) {
        (self.0)();
    }
}

/// Why a whole group failed.
pub(crate) enum GroupFailure {
    Busy(Duration),
    Storage(Failure),
}

impl Request {
    fn fail(self, failure: &GroupFailure) {
        // A caller that gave up waiting dropped its end: the answer goes with the slot.
        match self {
            Request::Append { reply, .. } => {
                reply.send(Err(match failure {
                    GroupFailure::Busy(waited) => AppendError::Busy { waited: *waited },
                    GroupFailure::Storage(Failure::Io(e)) => {
                        AppendError::Io { source: std::io::Error::new(e.kind(), e.to_string()) }
                    }
                    GroupFailure::Storage(Failure::Corrupted(reason)) => {
                        AppendError::Corrupted { reason: reason.clone() }
                    }
                }));
            }
            Request::Fork { reply, .. } => {
                reply.send(Err(match failure {
                    GroupFailure::Busy(waited) => ForkError::Busy { waited: *waited },
                    GroupFailure::Storage(Failure::Io(e)) => {
                        ForkError::Io { source: std::io::Error::new(e.kind(), e.to_string()) }
                    }
                    GroupFailure::Storage(Failure::Corrupted(reason)) => {
                        ForkError::Corrupted { reason: reason.clone() }
                    }
                }));
            }
            Request::Side(request) => request.fail(match failure {
                GroupFailure::Busy(waited) => WriteFailure::Busy(*waited),
                GroupFailure::Storage(Failure::Io(e)) => {
                    WriteFailure::Io(std::io::Error::new(e.kind(), e.to_string()))
                }
                GroupFailure::Storage(Failure::Corrupted(reason)) => WriteFailure::Corrupted(reason.clone()),
            }),
        }
    }

    fn refuse_poisoned(self) {
        match self {
            Request::Append { reply, .. } => reply.send(Err(AppendError::Poisoned)),
            Request::Fork { reply, .. } => reply.send(Err(ForkError::Poisoned)),
            Request::Side(request) => request.fail(WriteFailure::Poisoned),
        }
    }
}

/// Begins a write transaction, waiting up to `wait` for another process's transaction.
pub(crate) fn begin_write(
    db: &Database,
    wait: Duration,
) -> Result<WriteTransaction, Result<Duration, Failure>> {
    let started = Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        match db.try_begin_write() {
            Ok(txn) => return Ok(txn),
            Err(TransactionError::WouldBlock) => {
                let waited = started.elapsed();
                if waited >= wait {
                    return Err(Ok(waited));
                }
                thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(other) => return Err(Err(Failure::from(other))),
        }
    }
}

/// What the writer shares with the store: the poison flag and who to tell about commits.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) poisoned: AtomicBool,
    pub(crate) watermark: Watermark,
    /// Told the position end after each commit; dropped receivers are pruned.
    pub(crate) feeds: std::sync::Mutex<Vec<Sender<u64>>>,
}

impl Shared {
    fn committed(&self, position_end: u64) {
        self.watermark.advance(position_end);
        let mut feeds = self.feeds.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        feeds.retain(|feed| feed.send(position_end).is_ok());
    }
}

/// Commits one group taken from the queue and answers its callers; a storage failure
/// poisons the store.
pub(crate) fn serve(
    mut group: Vec<Request>,
    shared: &Shared,
    commit: impl FnOnce(&mut Vec<Request>) -> Result<(u64, Vec<Outcome>), GroupFailure>,
) {
    let poisoned = &shared.poisoned;
    if poisoned.load(Ordering::Acquire) {
        group.into_iter().for_each(Request::refuse_poisoned);
        return;
    }
    let committed = commit(&mut group);
    match committed {
        Ok((position_end, outcomes)) => {
            // Before anyone is answered: a caller whose append returned must find the
            // watermark at or past its records.
            shared.committed(position_end);
            outcomes.into_iter().for_each(Outcome::answer);
        }
        Err(failure) => {
            if matches!(failure, GroupFailure::Storage(Failure::Io(_))) {
                poisoned.store(true, Ordering::Release);
            }
            group.into_iter().for_each(|request| request.fail(&failure));
        }
    }
}

pub(crate) enum Outcome {
    Append(Reply<Result<AppendReceipt, AppendError>>, Result<AppendReceipt, AppendError>),
    Fork(Reply<Result<SessionInfo, ForkError>>, Result<SessionInfo, ForkError>),
    Side(Answer),
}

impl Outcome {
    /// Tells the caller; one that gave up waiting has dropped its end of the reply.
    fn answer(self) {
        match self {
            Outcome::Append(reply, result) => reply.send(result),
            Outcome::Fork(reply, result) => reply.send(result),
            Outcome::Side(answer) => answer.send(),
        }
    }
}

/// Applies every request of a group inside `txn`, noting each one's answer.
pub(crate) fn apply_requests(
    txn: &WriteTransaction,
    tables: &mut Tables<'_>,
    group: &mut [Request],
    outcomes: &mut Vec<Outcome>,
) -> Result<(), Failure> {
    for request in group.iter_mut() {
        match request {
            Request::Append { session, expected_next, prepared, claims, cursors, unchanged, reply } => {
                let result = match tables.changed(unchanged)? {
                    Some(refusal) => Err(refusal),
                    None => tables.append(session, *expected_next, std::mem::take(prepared), claims)?,
                };
                if result.is_ok() && !cursors.is_empty() {
                    crate::tables::write_cursors(txn, cursors)?;
                }
                outcomes.push(Outcome::Append(reply.clone(), result));
            }
            Request::Fork { parent, at, name, reply } => {
                let result = tables.fork(parent, *at, name)?;
                outcomes.push(Outcome::Fork(reply.clone(), result));
            }
            Request::Side(request) => {
                outcomes.push(Outcome::Side(request.apply(txn, tables)?));
            }
        }
    }
    Ok(())
}

/// Applies and commits a group durably. On success the group is left empty and the store's
/// position end is returned with each request's answer, to be sent once the commit is
/// published; on failure the requests are left for the caller to fail.
pub(crate) fn commit_group(
    db: &Database,
    group: &mut Vec<Request>,
    wait: Duration,
) -> Result<(u64, Vec<Outcome>), GroupFailure> {
    let txn = begin_write(db, wait).map_err(|e| match e {
        Ok(waited) => GroupFailure::Busy(waited),
        Err(failure) => GroupFailure::Storage(failure),
    })?;
    let mut outcomes = Vec::with_capacity(group.len());
    let applied = (|| -> Result<u64, Failure> {
        let mut tables = Tables::open(&txn)?;
        apply_requests(&txn, &mut tables, group, &mut outcomes)?;
        tables.position_end()
    })();
    // Dropping an uncommitted transaction discards it.
    let position_end = applied.map_err(GroupFailure::Storage)?;
    txn.commit().map_err(|e| GroupFailure::Storage(e.into()))?;
    group.clear();
    Ok((position_end, outcomes))
}
