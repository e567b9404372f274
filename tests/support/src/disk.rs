//! A simulated disk for the store: a `StorageFile` that keeps what a crash would leave behind.
//!
//! The disk holds a *live* image (what reads see) and a *durable* image (what survives a
//! crash). Every write and `set_len` since the last successful `sync_data` is kept in a
//! pending list; a sync replays that list onto the durable image. redb may write, resize and
//! sync in any order, so nothing here assumes an order of operations.
//!
//! A disk may hold several files ([`SimDisk::second_file`]): a store and its durability log.
//! Faults, counts and the crash are the machine's, so a crash freezes every file at once.
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

/// One file's images.
#[derive(Debug, Default)]
struct FileImage {
    live: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<Pending>,
    crash_image: Option<Vec<u8>>,
}

#[derive(Debug, Default)]
struct State {
    files: Vec<FileImage>,
    /// Whether the crash happened (every file then has its crash image).
    crashed: bool,
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
    capacity: Option<u64>,
}

impl State {
    fn dead(&self) -> bool {
        self.crashed
    }

    fn file(&mut self, index: usize) -> &mut FileImage {
        if self.files.len() <= index {
            self.files.resize_with(index + 1, FileImage::default);
        }
        &mut self.files[index]
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
        let keep = self.crash_keep;
        for (index, file) in self.files.iter_mut().enumerate() {
            let mut image = file.durable.clone();
            // Each file draws its own subset or prefix from the seed.
            let salt = index as u64 * 0x9e37_79b9;
            match keep {
                None | Some(CrashKeep::Nothing) => {}
                Some(CrashKeep::RandomSubset(seed)) => {
                    let mut rng = Rng::new(seed ^ salt);
                    for op in &file.pending {
                        if rng.chance(1, 2) {
                            op.apply(&mut image);
                        }
                    }
                }
                Some(CrashKeep::Everything) => file.pending.iter().for_each(|op| op.apply(&mut image)),
                Some(CrashKeep::RandomPrefix(seed)) => {
                    let keep = Rng::new(seed ^ salt).index(file.pending.len() + 1);
                    file.pending[..keep].iter().for_each(|op| op.apply(&mut image));
                }
            }
            file.crash_image = Some(image);
        }
        self.crashed = true;
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
    /// Which file of the machine this handle reads and writes.
    file: usize,
}

impl fmt::Debug for SimDisk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut state = self.lock();
        let counts = state.counts;
        let file = state.file(self.file);
        f.debug_struct("SimDisk")
            .field("live_len", &file.live.len())
            .field("durable_len", &file.durable.len())
            .field("pending", &file.pending.len())
            .field("counts", &counts)
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
        SimDisk::from_images(vec![image])
    }

    /// A disk holding one file per image, all of it durable; the handle is to the first.
    pub fn from_images(images: Vec<Vec<u8>>) -> SimDisk {
        let disk = SimDisk::default();
        {
            let mut state = disk.lock();
            for (index, image) in images.into_iter().enumerate() {
                let file = state.file(index);
                file.durable = image.clone();
                file.live = image;
            }
        }
        disk
    }

    /// Another file on the same machine (a store's log): the same faults, counts and crash.
    pub fn second_file(&self) -> SimDisk {
        let disk = SimDisk { state: Arc::clone(&self.state), file: 1 };
        disk.lock().file(1);
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
        self.lock().file(self.file).crash_image.clone()
    }

    /// What a crash right now would leave: everything synced, nothing else.
    pub fn durable_image(&self) -> Vec<u8> {
        self.lock().file(self.file).durable.clone()
    }

    /// What reads see now.
    pub fn live_image(&self) -> Vec<u8> {
        self.lock().file(self.file).live.clone()
    }

    /// The current live length.
    pub fn live_len(&self) -> u64 {
        self.lock().file(self.file).live.len() as u64
    }
}

fn to_usize(value: u64) -> io::Result<usize> {
    usize::try_from(value).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))
}

impl StorageFile for SimDisk {
    fn len(&self) -> io::Result<u64> {
        Ok(self.lock().file(self.file).live.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let mut state = self.lock();
        let live = &state.file(self.file).live;
        let offset = to_usize(offset)?;
        let end = offset.checked_add(out.len()).filter(|end| *end <= live.len()).ok_or_else(|| {
            io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the simulated disk")
        })?;
        out.copy_from_slice(&live[offset..end]);
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
        let file = state.file(self.file);
        file.live.resize(len, 0);
        file.pending.push(Pending::SetLen(len));
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut state = self.lock();
        if state.dead() {
            return Err(dead_disk());
        }
        if state.injected_fault(OpKind::Sync) {
            if state.failed_sync_loses_writes {
                state.file(self.file).pending.clear();
            }
            return Err(injected());
        }
        if state.crash_at_sync == Some(state.counts.syncs) {
            state.crash();
            return Err(dead_disk());
        }
        let file = state.file(self.file);
        let pending = std::mem::take(&mut file.pending);
        for op in &pending {
            op.apply(&mut file.durable);
        }
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
        let file = state.file(self.file);
        if file.live.len() < end {
            file.live.resize(end, 0);
        }
        file.live[offset..end].copy_from_slice(data);
        file.pending.push(Pending::Write { offset, data: data.to_vec() });
        Ok(())
    }
}
