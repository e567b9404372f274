//! The log's cycles and how full they are: writing a frame, starting the next cycle, folding
//! at close or behind the tail, and freeing the frames of ended cycles.

use std::io;

use bytes::Bytes;

use crate::error::Failure;
use crate::sync::{lock, Arc};

use super::layout::{frame, Header, FRAME_HEAD_BYTES, HEADER_BYTES};
use super::overlay::Overlay;
use super::{LogState, SharedLog};

/// Frames above this many bytes are folded by a process that closes the store.
const FOLD_AT_CLOSE_BYTES: u64 = 64 << 10;

/// A fold behind the tail starts once the frames since the last one take this share of the log
/// (one part in it): the fold a full log makes its appender wait for is then at most about that
/// share of the log, and each fold behind is short enough that one a full log meets ends soon.
const BEHIND_SHARE: u64 = 16;

/// Frames of ended cycles, freed when dropped.
#[derive(Debug, Default)]
pub(crate) struct Retired(Vec<Arc<Overlay>>);

impl Retired {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl SharedLog {
    /// Empties the file when redb holds every frame, so that a store opened alone is its file
    /// alone once closed (the file is then removed); leaves it as it is otherwise.
    ///
    /// # Errors
    /// I/O.
    pub(crate) fn empty_if_folded(&self) -> Result<(), Failure> {
        let mut held = self.hold(true)?;
        self.catch_up(&mut held.state)?;
        if held.state.overlay.read().is_empty() {
            self.file.set_len(0)?;
            self.file.sync_data()?;
            *held.state = LogState::begin(None);
        }
        Ok(())
    }

    /// Whether the frames this process has read or written are enough to fold at close: every
    /// process that opens the store reads them at its first snapshot (a few microseconds a
    /// frame), so a short-lived reader's start-up stays small.
    pub(crate) fn is_filling(&self) -> bool {
        let state = lock(&self.state);
        state.end - HEADER_BYTES > FOLD_AT_CLOSE_BYTES.min(state.len / 4)
    }

    /// Whether the frames written since the last fold behind the tail are enough for another:
    /// asked after each append, without the log's lock.
    pub(crate) fn is_behind(&self) -> bool {
        let state = lock(&self.state);
        state.end.saturating_sub(state.behind_end) > state.len.saturating_sub(HEADER_BYTES) / BEHIND_SHARE
    }

    /// The frames a fold behind the tail puts into redb: every frame other processes wrote is
    /// read first, under the shared lock (which a reader takes); the frames, and the last
    /// sequence number read, are returned for the caller to fold without the lock, while
    /// appends go on after them. Frames are never changed once written and a cycle is ended
    /// only by a fold of every frame, so those up to the returned number stay what they are.
    pub(crate) fn behind(&self) -> Result<(Arc<Overlay>, u64), Failure> {
        let mut held = self.hold(false)?;
        self.catch_up(&mut held.state)?;
        held.state.behind_end = held.state.end;
        Ok((Arc::clone(&held.state.overlay), held.state.last_seq))
    }

    /// Whether a frame of `redo_bytes` fits after the current cycle's frames.
    pub(crate) fn fits(&self, state: &LogState, redo_bytes: usize) -> bool {
        state.end + (FRAME_HEAD_BYTES + redo_bytes) as u64 <= state.len
    }

    /// Whether a frame of `redo_bytes` fits in an empty cycle.
    pub(crate) fn could_fit(&self, state: &LogState, redo_bytes: usize) -> bool {
        HEADER_BYTES + ((FRAME_HEAD_BYTES + redo_bytes) as u64) <= state.len
    }

    /// Writes the next frame and makes it durable: the one sync of a shared append. Call with
    /// the exclusive lock held, after [`SharedLog::catch_up`], with a frame that fits.
    ///
    /// # Errors
    /// I/O. The caller must stop writing: a failed sync may have lost the frame.
    pub(crate) fn append(&self, state: &mut LogState, redo: Vec<u8>) -> io::Result<u64> {
        let header = state.header.ok_or_else(|| io::Error::other("the shared log has no header"))?;
        let seq = state.last_seq + 1;
        let bytes = frame(&self.store_id, header.cycle, seq, &redo);
        self.file.write(state.end, &bytes)?;
        self.file.sync_data()?;
        state.overlay.add(seq, Bytes::from(redo)).map_err(|_| io::Error::other("a frame did not parse"))?;
        state.end += bytes.len() as u64;
        state.last_seq = seq;
        Ok(seq)
    }

    /// Writes the next frame without syncing it or noting it: what a process killed between its
    /// write and its sync leaves (the model's crash test).
    #[cfg(any(loom, test))]
    pub(crate) fn write_unsynced(&self, state: &LogState, redo: &[u8]) -> io::Result<()> {
        let header = state.header.ok_or_else(|| io::Error::other("the shared log has no header"))?;
        self.file.write(state.end, &frame(&self.store_id, header.cycle, state.last_seq + 1, redo))
    }

    /// Starts the next cycle once redb holds every frame up to `applied` durably: a header
    /// naming the next sequence number. It is not synced on its own: the first frame of the
    /// cycle is acknowledged only after a sync of the file, which makes the header durable with
    /// it, and until then either header is right (the old cycle's frames are all at or below
    /// `applied`, which readers skip).
    ///
    /// # Errors
    /// I/O; redb holds everything, so the caller poisons only the writes to come.
    pub(crate) fn next_cycle(&self, state: &mut LogState, applied: u64) -> io::Result<()> {
        let header = Header { cycle: fresh_cycle(), first_seq: applied + 1 };
        self.file.write(0, &header.encode(&self.store_id))?;
        // The file keeps its length: only the header was written.
        let len = state.len;
        let ended = std::mem::replace(state, LogState::begin(Some(header)));
        state.len = len;
        lock(&self.retired).push(ended.overlay);
        Ok(())
    }

    /// The frames of the cycles this process ended since last asked, for the caller to free
    /// (what no snapshot still holds is freed when the returned value is dropped).
    pub(crate) fn take_retired(&self) -> Retired {
        Retired(std::mem::take(&mut *lock(&self.retired)))
    }
}

/// A cycle number no header of this file is likely to have held: drawn anew for every cycle,
/// never the last one plus one. A crash can leave frames of a cycle whose header it lost (they
/// were never acknowledged: the sync that would have made them durable also makes the header
/// so); were that cycle's number taken again with the same first sequence number, those frames
/// would read as the new cycle's.
pub(super) fn fresh_cycle() -> u64 {
    static DRAWN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"annal.cycle.v1\0");
    hasher.update(&now.as_nanos().to_le_bytes());
    hasher.update(&std::process::id().to_le_bytes());
    hasher.update(&DRAWN.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_le_bytes());
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&hasher.finalize().as_bytes()[..8]);
    u64::from_le_bytes(raw)
}
