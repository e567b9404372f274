//! What the loom test of the shared log drives (built only with `--cfg loom`): processes, each
//! with its own [`SharedLog`] over one log file in memory and one lock, appending, folding and
//! pairing reads through the log's own code (`hold`, `catch_up`, `layer_over`, `append`,
//! `next_cycle`, the layout and the overlay). redb is the one part stood in for: a mutex over
//! `log_applied` and the values folded so far, which the model's fold and pairing read and write
//! where the store's would begin and commit redb transactions.

use std::io;

use bytes::Bytes;

use crate::redo::{Redo, Target};
use crate::storage::StorageFile;
use crate::sync::{lock, Arc, Condvar, Mutex};

use super::overlay::{Layer, Window};
use super::{LogState, ProcessLock, SharedLog};

/// The log file, in memory.
#[derive(Debug)]
struct MemoryFile(Arc<Mutex<Vec<u8>>>);

impl StorageFile for MemoryFile {
    fn len(&self) -> io::Result<u64> {
        Ok(lock(&self.0).len() as u64)
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let bytes = lock(&self.0);
        let at = offset as usize;
        let part =
            bytes.get(at..at + out.len()).ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        out.copy_from_slice(part);
        Ok(())
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        lock(&self.0).resize(len as usize, 0);
        Ok(())
    }
    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut bytes = lock(&self.0);
        let at = offset as usize;
        if bytes.len() < at + data.len() {
            bytes.resize(at + data.len(), 0);
        }
        bytes[at..at + data.len()].copy_from_slice(data);
        Ok(())
    }
}

/// A readers-writer lock across the model's processes, as `flock` is across real ones.
#[derive(Debug, Default)]
struct ModelLock {
    /// Readers holding it (`u64::MAX`: a writer).
    holders: Mutex<u64>,
    changed: Condvar,
}

/// One process's hold on the shared [`ModelLock`].
#[derive(Debug)]
struct Handle {
    shared: Arc<ModelLock>,
    exclusive: Mutex<bool>,
}

impl ProcessLock for Handle {
    fn lock(&self, exclusive: bool) -> io::Result<()> {
        let mut holders = lock(&self.shared.holders);
        loop {
            let free = if exclusive { *holders == 0 } else { *holders != u64::MAX };
            if free {
                break;
            }
            holders = self.shared.changed.wait(holders).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *holders = if exclusive { u64::MAX } else { *holders + 1 };
        *lock(&self.exclusive) = exclusive;
        Ok(())
    }

    fn unlock(&self) -> io::Result<()> {
        let mut holders = lock(&self.shared.holders);
        *holders = if *lock(&self.exclusive) { 0 } else { *holders - 1 };
        self.shared.changed.notify_all();
        Ok(())
    }
}

/// What redb holds in the model: the last group folded and the values, by position.
#[derive(Debug, Default)]
struct Folded {
    applied: u64,
    values: Vec<u64>,
}

/// A machine: the log file, the lock and the store every process shares.
#[derive(Debug, Clone)]
pub struct Machine {
    file: Arc<Mutex<Vec<u8>>>,
    lock: Arc<ModelLock>,
    store: Arc<Mutex<Folded>>,
}

const STORE_ID: [u8; 16] = [9; 16];

impl Machine {
    /// A machine whose log holds `capacity_bytes` (a few frames make it fold).
    pub fn new(capacity_bytes: u64) -> Machine {
        let machine = Machine {
            file: Arc::new(Mutex::new(Vec::new())),
            lock: Arc::new(ModelLock::default()),
            store: Arc::new(Mutex::new(Folded::default())),
        };
        let store = Arc::clone(&machine.store);
        let mut make = move |_: &dyn StorageFile, _| Ok(lock(&store).applied);
        let file = Box::new(MemoryFile(Arc::clone(&machine.file)));
        SharedLog::open(file, None, STORE_ID, capacity_bytes, Some(&mut make)).expect("the log is made");
        machine
    }

    /// A process with the store open.
    pub fn process(&self) -> Process {
        let handle = Handle { shared: Arc::clone(&self.lock), exclusive: Mutex::new(false) };
        let file = Box::new(MemoryFile(Arc::clone(&self.file)));
        let log = SharedLog::open(file, Some(Box::new(handle)), STORE_ID, 0, None).expect("the log opens");
        Process { log, store: Arc::clone(&self.store) }
    }
}

/// One process of the model.
#[derive(Debug)]
pub struct Process {
    log: SharedLog,
    store: Arc<Mutex<Folded>>,
}

fn redo_of(position: u64, value: u64) -> Vec<u8> {
    let mut redo = Redo::new(true);
    let mut pair = [0u8; 16];
    pair[8..].copy_from_slice(&value.to_le_bytes());
    redo.put(Target::Positions, &position.to_le_bytes(), &pair);
    redo.into_bytes()
}

/// The values a layer lays over `folded`, after them.
fn values_of(folded: &[u64], layer: Option<&Layer>) -> Vec<u64> {
    let mut values = folded.to_vec();
    if let Some(layer) = layer {
        let from = values.len() as u64;
        values.extend(layer.maps().positions(from, layer.window).into_iter().map(|(_, (_, value))| value));
    }
    values
}

impl Process {
    /// Appends `value` at the next position, as an append decides and logs a group; folds
    /// first when the log is full. Returns the position it took.
    pub fn append(&self, value: u64) -> u64 {
        let mut held = self.log.hold(true).expect("locks");
        self.log.catch_up(&mut held.state).expect("catches up");
        let applied = lock(&self.store).applied;
        if held.state.header.is_none() || held.state.last_seq < applied {
            self.log.next_cycle(&mut held.state, applied).expect("a new cycle");
        }
        let layer = self.log.layer_over(&held.state, applied).expect("pairs");
        let position = values_of(&lock(&self.store).values, layer.as_ref()).len() as u64;
        let redo = redo_of(position, value);
        if !self.log.fits(&held.state, redo.len()) {
            self.fold(&mut held.state);
        }
        self.log.append(&mut held.state, redo).expect("appends");
        position
    }

    /// Folds every frame into the store and starts the next cycle, as a checkpoint does.
    pub fn checkpoint(&self) {
        let mut held = self.log.hold(true).expect("locks");
        self.log.catch_up(&mut held.state).expect("catches up");
        self.fold(&mut held.state);
    }

    fn fold(&self, state: &mut LogState) {
        let mut store = lock(&self.store);
        let mut last = store.applied;
        let frames: Vec<(u64, Bytes)> = state.overlay.read().frames_after(last).cloned().collect();
        for (seq, _) in frames {
            assert_eq!(seq, last + 1, "the frames above the store's do not follow on");
            last = seq;
        }
        let window = Window { after: store.applied, upto: last };
        let from = store.values.len() as u64;
        let added: Vec<u64> =
            state.overlay.read().positions(from, window).into_iter().map(|(_, (_, value))| value).collect();
        store.values.extend(added);
        store.applied = last.max(state.last_seq);
        let applied = store.applied;
        drop(store);
        self.log.next_cycle(state, applied).expect("a new cycle");
    }

    /// Every value a snapshot begun now reads, in position order.
    pub fn read(&self) -> Vec<u64> {
        let mut held = self.log.hold(false).expect("locks");
        self.log.catch_up(&mut held.state).expect("catches up");
        let (applied, folded) = {
            let store = lock(&self.store);
            (store.applied, store.values.clone())
        };
        let layer = self.log.layer_over(&held.state, applied).expect("pairs");
        drop(held);
        values_of(&folded, layer.as_ref())
    }
}

/// The frame head and the header make a frame of one position this many bytes.
pub const FRAME_BYTES: u64 = 28 + 1 + 4 + 8 + 4 + 16;
