//! Group commit. With the log (`log/`, beside every store file opened writable), it is led
//! by the appending threads: a caller queues its request and, when no other thread is
//! committing, commits everything queued itself; otherwise the thread committing takes it
//! into its next group. A lone appender never waits for another thread to wake up, and
//! concurrent appenders still share one sync per group. Without a log, each commit costs redb's two syncs, and a
//! committer thread serves the queue instead, so callers keep queueing (and preparing) while a
//! group is on disk.
//!
//! Invariant (no request is stranded): whoever holds the state lock drains the queue before
//! letting go and looks at it again after letting go. A caller that found the lock held had
//! queued its request before that look, so the holder, or the next thread to take the lock,
//! serves it.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use redb::Database;

use crate::log::commit::{checkpoint_shared, commit_shared, fold_behind};
use crate::log::{Retired, SharedLog};
use crate::writer::{commit_group, serve, GroupFailure, Request, Shared};

/// The most requests committed in one transaction; bounds the latency a group adds.
const GROUP_REQUESTS_MAX: usize = 1024;
/// The longest a leader waits for appenders still preparing their requests (see
/// [`GroupCommit::gather`]), whatever its last commit took.
const GATHER_WAIT_MAX: Duration = Duration::from_micros(500);

/// What committing needs; `None` once the store closed.
#[derive(Debug)]
struct WriterState {
    db: Arc<Database>,
    /// The log, shared with other processes unless the store is opened alone.
    shared_log: Option<Arc<SharedLog>>,
    /// Opened alone: the log is folded whole and emptied at close.
    alone: bool,
    wait: Duration,
    last_commit: Instant,
    /// Whether the idle checkpoint ran since the last commit.
    folded: bool,
    idle: Duration,
    /// Half the time the last group took to commit: how long a leader waits for appenders
    /// still preparing before it commits without them.
    gather: Duration,
}

/// The queue of requests and the right to commit them.
#[derive(Debug)]
pub(crate) struct GroupCommit {
    queue: Sender<Request>,
    queued: Receiver<Request>,
    state: Mutex<Option<WriterState>>,
    shared: Arc<Shared>,
    /// Whether callers commit (with the log), or the committer thread does.
    callers_lead: bool,
    /// Stops the idle checkpoints or the committer thread: dropped at close.
    stop: Mutex<Option<Sender<()>>>,
    idle: Mutex<Option<JoinHandle<()>>>,
    /// Callers inside an append: preparing their records, queued, or waiting for the answer.
    appenders: AtomicUsize,
    /// Where the frames of an ended cycle go to be freed by the checkpoint thread, when it
    /// runs; freed by the committing thread otherwise.
    freeing: Option<Sender<Retired>>,
    /// Wakes the checkpoint thread to fold the log behind its tail, when it runs.
    wake_behind: Option<Sender<()>>,
    /// What a fold behind the tail needs, taken at close (the store then closes redb).
    behind: Mutex<Option<Behind>>,
}

/// What the checkpoint thread folds the log behind its tail with, apart from the group's state
/// (which a committing thread holds while its group is on its way to disk).
#[derive(Clone, Debug)]
struct Behind {
    db: Arc<Database>,
    log: Arc<SharedLog>,
    wait: Duration,
}

/// A caller inside an append, counted until it returns.
#[derive(Debug)]
pub(crate) struct Appending<'a>(&'a AtomicUsize);

impl Drop for Appending<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether the thread serving a group is an appender whose own request is not in it (it was
/// answered in an earlier group): then it will not queue another while it serves.
#[derive(Clone, Copy, Debug)]
struct Served {
    leader_answered: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while committing leaves the state as a failed group would: nothing half-applied
    // is visible, since the transaction was dropped uncommitted.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl GroupCommit {
    /// Starts group commit; with a log and an `idle` time, a thread checkpoints the log once
    /// nothing was committed for that long.
    pub(crate) fn start(
        db: Arc<Database>,
        shared: Arc<Shared>,
        wait: Duration,
        shared_log: Option<Arc<SharedLog>>,
        alone: bool,
        idle: Option<Duration>,
    ) -> io::Result<Arc<GroupCommit>> {
        let (queue, queued) = crossbeam_channel::unbounded();
        let callers_lead = shared_log.is_some();
        let idle = idle.filter(|_| callers_lead);
        let (freeing, freed) = crossbeam_channel::unbounded::<Retired>();
        let (wake_behind, woken) = crossbeam_channel::bounded::<()>(1);
        let behind = shared_log.as_ref().filter(|_| idle.is_some()).map(|log| Behind {
            db: Arc::clone(&db),
            log: Arc::clone(log),
            wait,
        });
        let state = WriterState {
            db,
            shared_log,
            alone,
            wait,
            last_commit: Instant::now(),
            folded: false,
            idle: idle.unwrap_or(Duration::MAX),
            gather: Duration::ZERO,
        };
        let commit = Arc::new(GroupCommit {
            queue,
            queued,
            state: Mutex::new(Some(state)),
            shared,
            callers_lead,
            stop: Mutex::new(None),
            idle: Mutex::new(None),
            appenders: AtomicUsize::new(0),
            freeing: idle.is_some().then_some(freeing),
            wake_behind: idle.is_some().then_some(wake_behind),
            behind: Mutex::new(behind),
        });
        if !callers_lead {
            let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
            let weak = Arc::downgrade(&commit);
            let queued = commit.queued.clone();
            let committer = std::thread::Builder::new()
                .name("annal-writer".into())
                .spawn(move || serve_queue(&weak, &queued, &stopped))?;
            *lock(&commit.stop) = Some(stop);
            *lock(&commit.idle) = Some(committer);
        } else if let Some(every) = idle {
            let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
            let weak = Arc::downgrade(&commit);
            let idle = std::thread::Builder::new()
                .name("annal-checkpoint".into())
                .spawn(move || idle_checkpoints(&weak, &stopped, &freed, &woken, every))?;
            *lock(&commit.stop) = Some(stop);
            *lock(&commit.idle) = Some(idle);
        }
        Ok(commit)
    }

    /// Counts the caller as appending until the guard drops: from before it prepares its
    /// records until its answer came.
    pub(crate) fn appending(&self) -> Appending<'_> {
        self.appenders.fetch_add(1, Ordering::AcqRel);
        Appending(&self.appenders)
    }

    /// Queues `request` and serves the queue unless another thread is serving it; the answer
    /// comes on the request's reply slot. Once closed, the request is dropped unanswered,
    /// which its caller reads as closed.
    pub(crate) fn submit(&self, request: Request) {
        // The receiver lives as long as `self`: sending cannot fail.
        let _ = self.queue.send(request);
        // Without the log the committer thread serves the queue, until the store closed.
        if self.callers_lead || lock(&self.stop).is_none() {
            self.lead();
        }
    }

    fn lead(&self) {
        loop {
            let mut state = match self.state.try_lock() {
                Ok(state) => state,
                Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => return,
            };
            self.drain(&mut state, true);
            drop(state);
            if self.queued.is_empty() {
                return;
            }
        }
    }

    /// Commits everything queued, group by group. `appender`: the caller is an appender that
    /// has just queued its own request, which the first group takes.
    fn drain(&self, state: &mut Option<WriterState>, appender: bool) {
        let mut served = Served { leader_answered: false };
        while let Ok(first) = self.queued.try_recv() {
            self.serve_group(state, first, served);
            served.leader_answered = appender;
        }
    }

    /// Waits, at most `wait`, for the requests of appenders that are still preparing them, so
    /// they share this group's sync rather than each paying the next one. With several
    /// appenders, groups otherwise settle into halves: those answered by one group prepare
    /// their next request while the others commit, and every sync carries half of them. A lone
    /// appender never waits: nobody else is appending. An appender whose own request another
    /// leader took just before this one got the lock is counted as still coming: the group
    /// then waits its whole `wait`, which is bounded, and is still right.
    fn gather(&self, group: &mut Vec<Request>, served: Served, wait: Duration) {
        let deadline = Instant::now() + wait;
        while group.len() < GROUP_REQUESTS_MAX {
            let appenders = self.appenders.load(Ordering::Acquire);
            // A leader answered in an earlier group is counted as appending, but its next
            // request comes only once it stops serving.
            let coming = appenders.saturating_sub(usize::from(served.leader_answered));
            if group.len() >= coming {
                return;
            }
            match self.queued.recv_deadline(deadline) {
                Ok(request) => group.push(request),
                Err(_) => return,
            }
        }
    }

    /// Commits `first` and whatever else is queued, up to a group's worth.
    fn serve_group(&self, state: &mut Option<WriterState>, first: Request, served: Served) {
        let mut group = vec![first];
        while group.len() < GROUP_REQUESTS_MAX {
            match self.queued.try_recv() {
                Ok(request) => group.push(request),
                Err(_) => break,
            }
        }
        if let Some(state) = state.as_ref().filter(|s| self.callers_lead && !s.gather.is_zero()) {
            self.gather(&mut group, served, state.gather);
        }
        let started = Instant::now();
        match state.as_mut() {
            Some(state) => {
                let (db, wait) = (&state.db, state.wait);
                match &state.shared_log {
                    Some(log) => {
                        serve(group, &self.shared, |group| commit_shared(db, group, wait, log));
                        self.free(log.take_retired());
                        if log.is_behind() {
                            if let Some(wake) = &self.wake_behind {
                                // Full: a fold is already asked for.
                                let _ = wake.try_send(());
                            }
                        }
                    }
                    None => serve(group, &self.shared, |group| commit_group(db, group, wait)),
                }
                state.last_commit = Instant::now();
                state.gather = (state.last_commit - started).min(2 * GATHER_WAIT_MAX) / 2;
                state.folded = false;
            }
            // Closed: dropping a request drops its reply slot, which tells its caller.
            None => drop(group),
        }
    }

    /// Hands the frames of ended cycles to the checkpoint thread, so no appender waits while
    /// they are freed; frees them here when there is none.
    fn free(&self, retired: Retired) {
        if retired.is_empty() {
            return;
        }
        match &self.freeing {
            // A checkpoint thread that has stopped (the store is closing) dropped its end: the
            // frames are then freed here, with the message the send gives back.
            Some(freeing) => drop(freeing.send(retired)),
            None => drop(retired),
        }
    }

    /// Folds the log behind its tail (on the checkpoint thread), while appenders go on. A
    /// storage failure poisons the store, as a checkpoint's does; the frames stay in the log.
    fn fold_behind(&self) {
        let Some(behind) = lock(&self.behind).clone() else { return };
        if self.shared.poisoned.load(Ordering::Acquire) {
            return;
        }
        if let Err(GroupFailure::Storage(_)) = fold_behind(&behind.db, &behind.log, behind.wait) {
            self.shared.poisoned.store(true, Ordering::Release);
        }
    }

    fn checkpoint_if_idle(&self) {
        let mut state = lock(&self.state);
        if let Some(state) = state.as_mut().filter(|s| !s.folded && s.last_commit.elapsed() >= s.idle) {
            if let Some(log) = &state.shared_log {
                checkpoint_shared(&state.db, log, state.wait, &self.shared.poisoned);
                // This is the checkpoint thread: freed here, after the lock was let go.
                drop(log.take_retired());
            }
            // Not again until this process commits: other processes' frames are folded by
            // them, or by whoever finds the log full.
            state.folded = true;
        }
        self.drain(&mut state, false);
        drop(state);
        self.lead();
    }

    /// Serves what is queued, folds the log (all of it and then empties it for a store opened
    /// alone: a closed store is its file alone), and refuses every later request.
    pub(crate) fn close(&self) {
        lock(&self.stop).take();
        if let Some(idle) = lock(&self.idle).take() {
            let _ = idle.join();
        }
        lock(&self.behind).take();
        let mut state = lock(&self.state);
        self.drain(&mut state, false);
        if let Some(closing) = state.take() {
            // A shared log is left to the processes still open, and to the next: folding it at
            // every close would cost a short-lived appender (a hook's `annal append`) two syncs
            // more. Only a log holding over 64 KiB of frames is folded, so a reader's start-up
            // reads little and one appender in dozens pays the fold.
            if let Some(log) = closing.shared_log.as_ref().filter(|log| closing.alone || log.is_filling()) {
                checkpoint_shared(&closing.db, log, closing.wait, &self.shared.poisoned);
                let clean = !self.shared.poisoned.load(Ordering::Acquire);
                if closing.alone && clean {
                    // Best effort: a log left as it is is read at the next open.
                    let _ = log.empty_if_folded();
                }
            }
        }
        drop(state);
        self.lead();
    }
}

/// The committer thread of a store without the log: waits for a request, then commits it with
/// whatever else is queued.
fn serve_queue(commit: &Weak<GroupCommit>, queued: &Receiver<Request>, stopped: &Receiver<()>) {
    loop {
        let first = crossbeam_channel::select! {
            recv(queued) -> request => match request {
                Ok(request) => request,
                Err(_) => return,
            },
            recv(stopped) -> _ => return,
        };
        let Some(commit) = commit.upgrade() else { return };
        let mut state = lock(&commit.state);
        commit.serve_group(&mut state, first, Served { leader_answered: false });
    }
}

/// The checkpoint thread: folds the log behind its tail when the appenders ask, folds it whole
/// once nothing was committed for `every`, and frees the frames of the cycles the appenders
/// ended.
fn idle_checkpoints(
    commit: &Weak<GroupCommit>,
    stopped: &Receiver<()>,
    freed: &Receiver<Retired>,
    woken: &Receiver<()>,
    every: Duration,
) {
    loop {
        crossbeam_channel::select! {
            recv(stopped) -> _ => return,
            recv(woken) -> _ => match commit.upgrade() {
                Some(commit) => commit.fold_behind(),
                None => return,
            },
            recv(freed) -> retired => match retired {
                Ok(retired) => drop(retired),
                // The store dropped its end: it is gone.
                Err(_) => return,
            },
            default(every) => match commit.upgrade() {
                Some(commit) => commit.checkpoint_if_idle(),
                None => return,
            },
        }
    }
}
