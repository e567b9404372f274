//! A simulated disk for the store: a `StorageFile` that keeps what a crash would leave behind.
//!
//! The disk holds a *live* image (what reads see) and a *durable* image (what survives a
//! crash). Every write and `set_len` since the last successful `sync_data` is kept in a
//! pending list; a sync replays that list onto the durable image. redb may write, resize and
//! sync in any order, so nothing here assumes an order of operations.
//!
//! Faults are counted down like redb's own crash tests do:
//! - [`SimDisk::crash_at_sync`]: the k-th sync is where the machine dies. That sync fails, the
//!   crash image is frozen (the durable image, plus whichever pending operations the
//!   [`CrashKeep`] says a real disk happened to write back), and every later write, resize or
//!   sync fails as well.
//! - [`SimDisk::fail_op`]: the n-th write, resize or sync fails once with an I/O error; the disk
//!   works again afterwards, so whatever the store does next is its own decision.
//!   With [`SimDisk::failed_sync_loses_writes`], the failed sync also drops what it should
//!   have made durable, as Linux does after an fsync error.
//! - [`SimDisk::set_capacity`]: writes that would end past a size cap fail with
//!   `StorageFull`, as on a full disk.

use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use annal_engine::StorageFile;

use crate::rng::Rng;

/// Which operations a fault counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// `write`.
    Write,
    /// `set_len`.
    SetLen,
    /// `sync_data`.
    Sync,
}

/// What reaches the durable image at a crash, beyond what was synced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashKeep {
    /// Every operation since the last sync is lost.
    Nothing,
    /// Each operation since the last sync survives with probability one half, drawn from this
    /// seed (operations that survive are applied in their original order, as a page cache
    /// writing back some of its pages would leave them).
    RandomSubset(u64),
    /// Every operation since the last sync reached the disk, though the sync never returned.
    Everything,
    /// The operations since the last sync reached the disk in order up to a random point
    /// drawn from this seed, as a disk writing back in order would leave them.
    RandomPrefix(u64),
}

/// How many operations of each kind the disk has seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounts {
    /// Writes.
    pub writes: u64,
    /// Resizes.
    pub set_lens: u64,
    /// Syncs.
    pub syncs: u64,
}

impl OpCounts {
    /// Writes, resizes and syncs together.
    pub fn total(&self) -> u64 {
        self.writes + self.set_lens + self.syncs
    }
}

#[derive(Clone, Debug)]
enum Pending {
    Write { offset: usize, data: Vec<u8> },
    SetLen(usize),
}

impl Pending {
    fn apply(&self, image: &mut Vec<u8>) {
        match self {
            Pending::Write { offset, data } => {
                // A write past the end of a file extends it, whether or not the resize that
                // preceded it reached the disk.
                if image.len() < offset + data.len() {
                    image.resize(offset + data.len(), 0);
                }
                image[*offset..offset + data.len()].copy_from_slice(data);
            }
            Pending::SetLen(len) => image.resize(*len, 0),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    live: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<Pending>,
    counts: OpCounts,
    /// Fail the operation that brings the total count to this value (once).
    fail_at_op: Option<u64>,
    /// Which kinds `fail_at_op` counts; all kinds when empty.
    fail_kinds: Vec<OpKind>,
    fail_counted: u64,
    failures: u64,
    /// Whether a failed sync drops what it should have made durable (as Linux does: the
    /// pages are marked clean, reads still see them, the disk never gets them).
    failed_sync_loses_writes: bool,
    crash_at_sync: Option<u64>,
    crash_keep: Option<CrashKeep>,
    crash_image: Option<Vec<u8>>,
    capacity: Option<u64>,
}

impl State {
    fn dead(&self) -> bool {
        self.crash_image.is_some()
    }

    /// Counts an operation and says whether the armed fault fires on it.
    fn injected_fault(&mut self, kind: OpKind) -> bool {
        match kind {
            OpKind::Write => self.counts.writes += 1,
            OpKind::SetLen => self.counts.set_lens += 1,
            OpKind::Sync => self.counts.syncs += 1,
        }
        let Some(at) = self.fail_at_op else { return false };
        if self.fail_kinds.is_empty() || self.fail_kinds.contains(&kind) {
            self.fail_counted += 1;
            if self.fail_counted == at {
                self.failures += 1;
                return true;
            }
        }
        false
    }

    fn crash(&mut self) {
        let mut image = self.durable.clone();
        match self.crash_keep {
            None | Some(CrashKeep::Nothing) => {}
            Some(CrashKeep::RandomSubset(seed)) => {
                let mut rng = Rng::new(seed);
                for op in &self.pending {
                    if rng.chance(1, 2) {
                        op.apply(&mut image);
                    }
                }
            }
            Some(CrashKeep::Everything) => self.pending.iter().for_each(|op| op.apply(&mut image)),
            Some(CrashKeep::RandomPrefix(seed)) => {
                let keep = Rng::new(seed).index(self.pending.len() + 1);
                self.pending[..keep].iter().for_each(|op| op.apply(&mut image));
            }
        }
        self.crash_image = Some(image);
    }
}

fn dead_disk() -> io::Error {
    io::Error::other("simulated crash: the machine is down")
}

fn injected() -> io::Error {
    io::Error::other("simulated I/O error")
}

/// An in-memory disk with a live and a durable image. Cloning gives another handle to the same
/// disk: give one to the store and keep one to steer faults and take images.
#[derive(Clone, Default)]
pub struct SimDisk {
    state: Arc<Mutex<State>>,
}

impl fmt::Debug for SimDisk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("SimDisk")
            .field("live_len", &state.live.len())
            .field("durable_len", &state.durable.len())
            .field("pending", &state.pending.len())
            .field("counts", &state.counts)
            .finish_non_exhaustive()
    }
}

impl SimDisk {
    /// An empty disk.
    pub fn new() -> SimDisk {
        SimDisk::default()
    }

    /// A disk holding `image`, all of it durable: what a machine finds after a reboot.
    pub fn from_image(image: Vec<u8>) -> SimDisk {
        let disk = SimDisk::default();
        {
            let mut state = disk.lock();
            state.durable = image.clone();
            state.live = image;
        }
        disk
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock must not hide the state from the test.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes the `n`-th sync from now (1-based) the moment of the crash.
    pub fn crash_at_sync(&self, n: u64, keep: CrashKeep) {
        let mut state = self.lock();
        state.crash_at_sync = Some(state.counts.syncs + n);
        state.crash_keep = Some(keep);
    }

    /// Makes the `n`-th operation from now (1-based) of the given kinds (all kinds when empty)
    /// fail once with an I/O error.
    pub fn fail_op(&self, n: u64, kinds: &[OpKind]) {
        let mut state = self.lock();
        state.fail_at_op = Some(n);
        state.fail_kinds = kinds.to_vec();
        state.fail_counted = 0;
    }

    /// Makes a failed sync lose the writes it should have made durable: they stay visible to
    /// reads but never reach the durable image.
    pub fn failed_sync_loses_writes(&self) {
        self.lock().failed_sync_loses_writes = true;
    }

    /// Caps the disk: a write that would end past `capacity` bytes fails with `StorageFull`.
    pub fn set_capacity(&self, capacity: Option<u64>) {
        self.lock().capacity = capacity;
    }

    /// Operations seen so far.
    pub fn counts(&self) -> OpCounts {
        self.lock().counts
    }

    /// How many injected faults fired.
    pub fn injected_failures(&self) -> u64 {
        self.lock().failures
    }

    /// Whether the simulated crash happened.
    pub fn crashed(&self) -> bool {
        self.lock().dead()
    }

    /// What survived the crash, once it happened.
    pub fn crash_image(&self) -> Option<Vec<u8>> {
        self.lock().crash_image.clone()
    }

    /// What a crash right now would leave: everything synced, nothing else.
    pub fn durable_image(&self) -> Vec<u8> {
        self.lock().durable.clone()
    }

    /// What reads see now.
    pub fn live_image(&self) -> Vec<u8> {
        self.lock().live.clone()
    }

    /// The current live length.
    pub fn live_len(&self) -> u64 {
        self.lock().live.len() as u64
    }
}

fn to_usize(value: u64) -> io::Result<usize> {
    usize::try_from(value).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))
}

impl StorageFile for SimDisk {
    fn len(&self) -> io::Result<u64> {
        Ok(self.lock().live.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let state = self.lock();
        let offset = to_usize(offset)?;
        let end = offset.checked_add(out.len()).filter(|end| *end <= state.live.len()).ok_or_else(|| {
            io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the simulated disk")
        })?;
        out.copy_from_slice(&state.live[offset..end]);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut state = self.lock();
        if state.dead() {
            return Err(dead_disk());
        }
        if state.injected_fault(OpKind::SetLen) {
            return Err(injected());
        }
        let len = to_usize(len)?;
        state.live.resize(len, 0);
        state.pending.push(Pending::SetLen(len));
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut state = self.lock();
        if state.dead() {
            return Err(dead_disk());
        }
        if state.injected_fault(OpKind::Sync) {
            if state.failed_sync_loses_writes {
                state.pending.clear();
            }
            return Err(injected());
        }
        if state.crash_at_sync == Some(state.counts.syncs) {
            state.crash();
            return Err(dead_disk());
        }
        let pending = std::mem::take(&mut state.pending);
        let mut durable = std::mem::take(&mut state.durable);
        for op in &pending {
            op.apply(&mut durable);
        }
        state.durable = durable;
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut state = self.lock();
        if state.dead() {
            return Err(dead_disk());
        }
        if state.injected_fault(OpKind::Write) {
            return Err(injected());
        }
        let offset = to_usize(offset)?;
        let end = offset + data.len();
        if let Some(capacity) = state.capacity {
            if end as u64 > capacity {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "no space left on simulated disk"));
            }
        }
        if state.live.len() < end {
            state.live.resize(end, 0);
        }
        state.live[offset..end].copy_from_slice(data);
        state.pending.push(Pending::Write { offset, data: data.to_vec() });
        Ok(())
    }
}
