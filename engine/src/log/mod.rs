//! The durability log shared by every process that has a store open (format version 3; a
//! process that has the store alone uses it by itself): an append is durable after one
//! `fdatasync` of the log, and readers in every process lay the log's frames over redb's last
//! commit until a checkpoint folds them in, as SQLite's readers use its WAL.
//!
//! Protocol (docs/format.md, "Sharing a store between processes"):
//! - **Appending** takes the log's exclusive lock, reads the frames other processes wrote
//!   since this process last looked, decides the group against redb's last commit plus those
//!   frames (`deciding.rs`), writes the next frame, syncs, and lets go. Nothing of redb is
//!   written.
//! - **Reading** takes the shared lock just long enough to begin a redb read transaction and
//!   note the frames above its `log_applied` (a [`Layer`]); the snapshot reads without it.
//! - **A checkpoint** (exclusive lock) puts every frame above `log_applied` back into redb in
//!   one durable transaction, then starts the log's next cycle with a synced header.
//! - **A fold behind the tail** (no lock while redb commits) puts the frames read so far back
//!   into redb and leaves the cycle as it is, so appends go on meanwhile and a full log's
//!   checkpoint folds only what came since (`commit::fold_behind`).
//!
//! Within a process the lock is taken under a mutex, so threads never share `flock`'s one lock
//! per open file (a shared request from one thread would weaken another's exclusive one).

pub(crate) mod attach;
#[cfg(test)]
mod behind_tests;
#[cfg(test)]
mod catch_up_tests;
pub(crate) mod commit;
mod cycle;
pub(crate) mod deciding;
pub(crate) mod layout;
pub(crate) mod legacy;
#[cfg(any(loom, test))]
pub mod loom_model;
pub(crate) mod overlay;
pub(crate) mod redo;
pub(crate) mod replay;

use std::fmt::Debug;
use std::fs::File;
use std::io;

use bytes::Bytes;
use redb::ReadTransaction;

use crate::error::Failure;
use crate::storage::StorageFile;
use crate::sync::{lock, try_lock, Arc, Mutex, MutexGuard};
use crate::tables::{meta_u64, META, META_LOG_APPLIED};

use layout::{read_frames, Frames, Header, HeaderRead, FRAME_HEAD_BYTES, HEADER_BYTES, OTHER_STORE};
use overlay::{Layer, Overlay, Window};

use cycle::fresh_cycle;
pub(crate) use cycle::Retired;

/// The shared log of one store, as this process holds it.
#[derive(Debug)]
pub(crate) struct SharedLog {
    file: Box<dyn StorageFile>,
    /// The lock processes take turns by: `flock` on the log file; none on custom storage,
    /// which one process uses.
    lock_file: Option<Box<dyn ProcessLock>>,
    store_id: [u8; 16],
    state: Mutex<LogState>,
    /// The frames of cycles this process ended, taken by [`SharedLog::take_retired`] to be freed
    /// off the appenders' path: freeing thousands of frames takes a few milliseconds.
    retired: Mutex<Vec<Arc<Overlay>>>,
    /// Held by this process's folds into redb, one at a time: a full log's fold waits here for a
    /// fold behind the tail to end, rather than polling redb's write lock.
    pub(crate) folding: Mutex<()>,
}

/// What this process has read of the current cycle.
#[derive(Debug)]
pub(crate) struct LogState {
    /// The cycle read; none while the log has no valid header (so no frame).
    pub(crate) header: Option<Header>,
    /// Where the next frame goes.
    pub(crate) end: u64,
    /// The last frame read (the cycle's first sequence number less one when none).
    pub(crate) last_seq: u64,
    /// The frames read, shared with the snapshots paired with them.
    pub(crate) overlay: Arc<Overlay>,
    /// The file's length when last looked at, under the lock: it changes only while the log is
    /// made (by whichever process opens the store first) or emptied.
    pub(crate) len: u64,
    /// The end of the frames the last fold behind the tail took (the header's end when none).
    pub(crate) behind_end: u64,
}

impl LogState {
    fn begin(header: Option<Header>) -> LogState {
        LogState {
            header,
            end: HEADER_BYTES,
            last_seq: header.map_or(0, |h| h.first_seq.saturating_sub(1)),
            overlay: Arc::new(Overlay::default()),
            len: 0,
            behind_end: HEADER_BYTES,
        }
    }
}

/// The log's lock, held with this process's state; let go when dropped.
pub(crate) struct Held<'a> {
    log: &'a SharedLog,
    pub(crate) state: MutexGuard<'a, LogState>,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(file) = &self.log.lock_file {
            // Closing the file would drop it too; an unlock that fails leaves nothing to undo.
            let _ = file.unlock();
        }
    }
}

/// A lock shared by every process that has the store open: `flock` on the log file (the kernel
/// drops it when its holder dies), or, in the loom model, a lock of the model's.
pub(crate) trait ProcessLock: Send + Sync + Debug {
    /// Waits for the lock, exclusive or shared.
    fn lock(&self, exclusive: bool) -> io::Result<()>;
    /// Takes the shared lock if no process holds it exclusively; false, without waiting, if one
    /// does.
    fn try_lock_shared(&self) -> io::Result<bool>;
    /// Lets it go.
    fn unlock(&self) -> io::Result<()>;
}

impl ProcessLock for File {
    fn lock(&self, exclusive: bool) -> io::Result<()> {
        if exclusive {
            File::lock(self)
        } else {
            File::lock_shared(self)
        }
    }

    fn try_lock_shared(&self) -> io::Result<bool> {
        match File::try_lock_shared(self) {
            Ok(()) => Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => Ok(false),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }

    fn unlock(&self) -> io::Result<()> {
        File::unlock(self)
    }
}

/// What makes a log that has no valid header: given the file and what its header said, puts a
/// store-alone log's groups back and returns the last group redb holds.
pub(crate) type Make<'a> = dyn FnMut(&dyn StorageFile, HeaderRead) -> Result<u64, Failure> + 'a;

/// A redb read transaction and the frames laid over it, taken at one moment, and the mark of
/// that moment.
pub(crate) struct Paired {
    pub(crate) txn: ReadTransaction,
    pub(crate) layer: Option<Layer>,
    pub(crate) mark: ChangeMark,
}

/// What the journal held at one moment, as the shared log tells it: the log's cycle and the
/// last frame read in it. Every append and fork adds a frame or, when it goes to the store file
/// directly, starts a cycle (with a number drawn anew), so two equal marks mean no session was
/// appended to, forked or made between them, in any process. A fold behind the tail moves
/// frames into the store file without changing what they say, and the mark with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChangeMark {
    cycle: u64,
    last_seq: u64,
}

impl ChangeMark {
    fn of(state: &LogState) -> ChangeMark {
        ChangeMark { cycle: state.header.map_or(0, |h| h.cycle), last_seq: state.last_seq }
    }

    /// The mark as 32 hexadecimal digits, for a caller that keeps it as text.
    pub fn to_hex(self) -> String {
        format!("{:016x}{:016x}", self.cycle, self.last_seq)
    }

    /// A mark [`ChangeMark::to_hex`] wrote; None for any other text.
    pub fn from_hex(text: &str) -> Option<ChangeMark> {
        if text.len() != 32 || !text.is_ascii() {
            return None;
        }
        let (cycle, last_seq) = text.split_at(16);
        Some(ChangeMark {
            cycle: u64::from_str_radix(cycle, 16).ok()?,
            last_seq: u64::from_str_radix(last_seq, 16).ok()?,
        })
    }
}

impl SharedLog {
    /// The log in `file`; `lock_file` is the same file, for `flock`. When it has no valid
    /// header, `make` (none for a read-only open, which never writes the log) is called under
    /// the exclusive lock with the file and what its header said (a store-alone log's groups
    /// are put back into redb there) and returns the last group redb holds; the log is then
    /// filled with zeros to `capacity_bytes` and given a header whose first sequence number
    /// follows it, synced.
    ///
    /// # Errors
    /// I/O, or `Corrupted` for another store's log.
    pub(crate) fn open(
        file: Box<dyn StorageFile>,
        lock_file: Option<Box<dyn ProcessLock>>,
        store_id: [u8; 16],
        capacity_bytes: u64,
        make: Option<&mut Make<'_>>,
    ) -> Result<SharedLog, Failure> {
        let state = Mutex::new(LogState::begin(None));
        let log = SharedLog {
            file,
            lock_file,
            store_id,
            state,
            retired: Mutex::new(Vec::new()),
            folding: Mutex::new(()),
        };
        let Some(make) = make else { return Ok(log) };
        let held = log.hold(true)?;
        let found = Header::read(&*log.file, &store_id)?;
        let applied = match found {
            HeaderRead::Valid(_) => None,
            HeaderRead::OtherStore => return Err(Failure::Corrupted(OTHER_STORE.into())),
            HeaderRead::Alone | HeaderRead::None => Some(make(&*log.file, found)?),
        };
        if let Some(applied) = applied {
            // Read under the lock: another process may have been making the log until now.
            let capacity = capacity_bytes.max(HEADER_BYTES + 64).max(log.file.len()?);
            let zeros = vec![0u8; 1 << 20];
            let mut at = HEADER_BYTES;
            while at < capacity {
                let chunk = (capacity - at).min(zeros.len() as u64) as usize;
                log.file.write(at, &zeros[..chunk])?;
                at += chunk as u64;
            }
            let header = Header { cycle: fresh_cycle(), first_seq: applied + 1 };
            let mut bytes = vec![0u8; HEADER_BYTES as usize];
            bytes[..64].copy_from_slice(&header.encode(&store_id));
            log.file.write(0, &bytes)?;
            log.file.sync_data()?;
        }
        drop(held);
        Ok(log)
    }

    /// Takes the log's lock, exclusive (to append or checkpoint) or shared (to pair a read).
    pub(crate) fn hold(&self, exclusive: bool) -> Result<Held<'_>, Failure> {
        let state = lock(&self.state);
        if let Some(file) = &self.lock_file {
            file.lock(exclusive)?;
        }
        Ok(Held { log: self, state })
    }

    /// Reads what other processes wrote since this process last looked: a new cycle drops the
    /// frames read before; then every whole frame that follows. Call with the lock held.
    pub(crate) fn catch_up(&self, state: &mut LogState) -> Result<(), Failure> {
        if self.catch_up_in_cycle(state)? {
            return Ok(());
        }
        let len = self.file.len()?;
        let header = match Header::read_in(&*self.file, len, &self.store_id)? {
            HeaderRead::Valid(header) => header,
            HeaderRead::None => {
                if state.header.is_some() {
                    *state = LogState::begin(None);
                }
                state.len = len;
                return Ok(());
            }
            HeaderRead::OtherStore => return Err(Failure::Corrupted(OTHER_STORE.into())),
            HeaderRead::Alone => {
                return Err(Failure::Corrupted(
                    "the log file beside the store is the log of a store opened alone".into(),
                ))
            }
        };
        if state.header != Some(header) || len < state.len {
            *state = LogState::begin(Some(header));
        }
        state.len = len;
        let (frames, _) =
            read_frames(&*self.file, state.len, state.end, &self.store_id, header.cycle, state.last_seq + 1)?;
        self.take_frames(state, frames)
    }

    /// Lays `frames`, read after `state.end`, over the frames read before.
    fn take_frames(&self, state: &mut LogState, frames: Frames) -> Result<(), Failure> {
        for (seq, redo) in frames {
            let frame_len = (FRAME_HEAD_BYTES + redo.len()) as u64;
            state.overlay.add(seq, Bytes::from(redo))?;
            state.end += frame_len;
            state.last_seq = seq;
        }
        Ok(())
    }

    /// [`SharedLog::catch_up`] while the cycle last read goes on: the file's length is the one
    /// last read, as it changes only when the log is made or emptied, and both change the
    /// header. Asking the kernel for the length (`fstat`) would cost every append a journal
    /// commit: on Linux it asks for a fine-grained time on the file's next write, and on ext4 a
    /// changed time makes `fdatasync` commit the journal, a second write to disk per sync.
    /// False, with `state` untouched, when the header changed, a read failed (a file cut short
    /// by hand), or the frames reach the length last read (a file made longer by hand, where
    /// another process may have written past it): the caller then reads the length.
    fn catch_up_in_cycle(&self, state: &mut LogState) -> Result<bool, Failure> {
        let Some(known) = state.header else { return Ok(false) };
        if !Header::is_still(known, &*self.file, &self.store_id) {
            return Ok(false);
        }
        let Ok((frames, true)) =
            read_frames(&*self.file, state.len, state.end, &self.store_id, known.cycle, state.last_seq + 1)
        else {
            return Ok(false);
        };
        self.take_frames(state, frames)?;
        Ok(true)
    }

    /// Begins a redb read transaction with `begin` and pairs it with the frames above it.
    pub(crate) fn pair(
        &self,
        begin: impl FnOnce() -> Result<ReadTransaction, Failure>,
    ) -> Result<Paired, Failure> {
        let mut held = self.hold(false)?;
        self.catch_up(&mut held.state)?;
        let txn = begin()?;
        let applied = log_applied(&txn)?;
        let layer = self.layer_over(&held.state, applied)?;
        let mark = ChangeMark::of(&held.state);
        drop(held);
        Ok(Paired { txn, layer, mark })
    }

    /// The mark of this moment, if it can be had without waiting: None while another thread of
    /// this process or another process holds the log's lock (an append or a checkpoint, which
    /// may be syncing). Reads the frames other processes wrote since this one last looked, and
    /// nothing of the store file.
    ///
    /// # Errors
    /// I/O, or a log that does not read.
    pub(crate) fn try_mark(&self) -> Result<Option<ChangeMark>, Failure> {
        let Some(state) = try_lock(&self.state) else { return Ok(None) };
        if let Some(file) = &self.lock_file {
            if !file.try_lock_shared()? {
                return Ok(None);
            }
        }
        // Let go when `held` drops, as the lock `hold` takes is.
        let mut held = Held { log: self, state };
        self.catch_up(&mut held.state)?;
        Ok(Some(ChangeMark::of(&held.state)))
    }

    /// The frames a transaction whose `log_applied` is `applied` lacks; none when it lacks none.
    pub(crate) fn layer_over(&self, state: &LogState, applied: u64) -> Result<Option<Layer>, Failure> {
        let Some(header) = state.header else { return Ok(None) };
        // A checkpoint commits redb before it starts a cycle, under the exclusive lock.
        if header.first_seq > applied.saturating_add(1) {
            return Err(Failure::Corrupted(format!(
                "the log's cycle starts at group {} but the store holds only those up to {applied}",
                header.first_seq
            )));
        }
        if state.last_seq <= applied {
            return Ok(None);
        }
        let window = Window { after: applied, upto: state.last_seq };
        Ok(Some(Layer { overlay: Arc::clone(&state.overlay), window }))
    }
}

/// The last group of the shared log that `txn` holds.
pub(crate) fn log_applied(txn: &ReadTransaction) -> Result<u64, Failure> {
    let meta = txn.open_table(META)?;
    meta_u64(&meta, META_LOG_APPLIED)
}
