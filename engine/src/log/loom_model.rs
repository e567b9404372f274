//! What the loom test of the shared log drives (built with `--cfg loom`), and its crash test
//! (a unit test): processes, each with its own [`SharedLog`] over one log file in memory and
//! one lock, appending, folding and pairing reads through the log's own code (`hold`,
//! `catch_up`, `layer_over`, `append`, `next_cycle`, the layout and the overlay). redb is the
//! one part stood in for: a mutex over `log_applied` and the values folded so far (durable at
//! once, as a redb commit is when it returns), which the model's fold and pairing read and
//! write where the store's would begin and commit redb transactions. The file keeps what was
//! synced apart from what was only written, so a crash can be taken at any sync.

use std::io;

use bytes::Bytes;

use crate::redo::{Redo, Target};
use crate::storage::StorageFile;
use crate::sync::{lock, Arc, Condvar, Mutex};

use super::overlay::{Layer, Window};
use super::{LogState, ProcessLock, SharedLog};

/// The log file, in memory: what was written, and what the last sync made durable.
#[derive(Debug, Default)]
struct Disk {
    live: Vec<u8>,
    durable: Vec<u8>,
    /// Taken at each sync, before it: the durable and live bytes and the store then.
    crashes: Vec<(Vec<u8>, Vec<u8>, Folded)>,
    /// Whether syncs take a crash image (the crash test's, never loom's).
    record: bool,
}

/// One process's handle on the log file.
#[derive(Debug)]
struct MemoryFile {
    disk: Arc<Mutex<Disk>>,
    store: Arc<Mutex<Folded>>,
}

impl StorageFile for MemoryFile {
    fn len(&self) -> io::Result<u64> {
        Ok(lock(&self.disk).live.len() as u64)
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let disk = lock(&self.disk);
        let at = offset as usize;
        let part =
            disk.live.get(at..at + out.len()).ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        out.copy_from_slice(part);
        Ok(())
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        lock(&self.disk).live.resize(len as usize, 0);
        Ok(())
    }
    fn sync_data(&self) -> io::Result<()> {
        let mut disk = lock(&self.disk);
        if disk.record {
            let store = lock(&self.store).clone();
            let image = (disk.durable.clone(), disk.live.clone(), store);
            disk.crashes.push(image);
        }
        disk.durable = disk.live.clone();
        Ok(())
    }
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut disk = lock(&self.disk);
        let at = offset as usize;
        if disk.live.len() < at + data.len() {
            disk.live.resize(at + data.len(), 0);
        }
        disk.live[at..at + data.len()].copy_from_slice(data);
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

    fn try_lock_shared(&self) -> io::Result<bool> {
        let mut holders = lock(&self.shared.holders);
        if *holders == u64::MAX {
            return Ok(false);
        }
        *holders += 1;
        *lock(&self.exclusive) = false;
        Ok(true)
    }

    fn unlock(&self) -> io::Result<()> {
        let mut holders = lock(&self.shared.holders);
        *holders = if *lock(&self.exclusive) { 0 } else { *holders - 1 };
        self.shared.changed.notify_all();
        Ok(())
    }
}

/// What redb holds in the model: the last group folded and the values, by position.
#[derive(Clone, Debug, Default)]
struct Folded {
    applied: u64,
    values: Vec<u64>,
}

/// A machine: the log file, the lock and the store every process shares.
#[derive(Debug, Clone)]
pub struct Machine {
    disk: Arc<Mutex<Disk>>,
    lock: Arc<ModelLock>,
    store: Arc<Mutex<Folded>>,
}

const STORE_ID: [u8; 16] = [9; 16];

impl Machine {
    /// A machine whose log holds `capacity_bytes` (a few frames make it fold).
    pub fn new(capacity_bytes: u64) -> Machine {
        let machine = Machine {
            disk: Arc::new(Mutex::new(Disk::default())),
            lock: Arc::new(ModelLock::default()),
            store: Arc::new(Mutex::new(Folded::default())),
        };
        let store = Arc::clone(&machine.store);
        let mut make = move |_: &dyn StorageFile, _| Ok(lock(&store).applied);
        SharedLog::open(machine.file(), None, STORE_ID, capacity_bytes, Some(&mut make))
            .expect("the log is made");
        machine
    }

    fn file(&self) -> Box<MemoryFile> {
        Box::new(MemoryFile { disk: Arc::clone(&self.disk), store: Arc::clone(&self.store) })
    }

    /// A process with the store open.
    pub fn process(&self) -> Process {
        let handle = Handle { shared: Arc::clone(&self.lock), exclusive: Mutex::new(false) };
        let log =
            SharedLog::open(self.file(), Some(Box::new(handle)), STORE_ID, 0, None).expect("the log opens");
        Process { log, store: Arc::clone(&self.store) }
    }

    /// From now on, every sync first takes what a crash at that moment would leave.
    pub fn record_crashes(&self) {
        lock(&self.disk).record = true;
    }

    /// How many crash moments were taken.
    pub fn crash_count(&self) -> usize {
        lock(&self.disk).crashes.len()
    }

    /// The machine a crash at recorded sync `k` leaves: the log as synced before it, or with
    /// every write since kept (`keep_unsynced`), and the store as it was.
    pub fn after_crash(&self, k: usize, keep_unsynced: bool) -> Machine {
        let (durable, live, store) = lock(&self.disk).crashes[k].clone();
        let image = if keep_unsynced { live } else { durable };
        Machine {
            disk: Arc::new(Mutex::new(Disk { live: image.clone(), durable: image, ..Disk::default() })),
            lock: Arc::new(ModelLock::default()),
            store: Arc::new(Mutex::new(store)),
        }
    }
}

/// One process of the model.
#[derive(Debug)]
pub struct Process {
    log: SharedLog,
    store: Arc<Mutex<Folded>>,
}

fn redo_of(position: u64, value: u64) -> Vec<u8> {
    let mut redo = Redo::default();
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
        self.decide(value, true)
    }

    /// Decides `value` and writes its frame, then dies before syncing it: the frame is in the
    /// file for every other process to read, and on no disk.
    pub fn append_and_die(self, value: u64) {
        self.decide(value, false);
    }

    fn decide(&self, value: u64, sync: bool) -> u64 {
        let mut held = self.log.hold(true).expect("locks");
        self.log.catch_up(&mut held.state).expect("catches up");
        // One moment of the store, as a redb read transaction is: a fold behind the tail may
        // commit at any time, the log's lock held or not.
        let (applied, folded) = {
            let store = lock(&self.store);
            (store.applied, store.values.clone())
        };
        if held.state.header.is_none() || held.state.last_seq < applied {
            self.log.next_cycle(&mut held.state, applied).expect("a new cycle");
        }
        let layer = self.log.layer_over(&held.state, applied).expect("pairs");
        let position = values_of(&folded, layer.as_ref()).len() as u64;
        let redo = redo_of(position, value);
        if !self.log.fits(&held.state, redo.len()) {
            self.fold(&mut held.state);
        }
        if sync {
            self.log.append(&mut held.state, redo).expect("appends");
        } else {
            self.log.write_unsynced(&held.state, &redo).expect("writes");
        }
        position
    }

    /// Folds every frame into the store and starts the next cycle, as a checkpoint does.
    pub fn checkpoint(&self) {
        let mut held = self.log.hold(true).expect("locks");
        self.log.catch_up(&mut held.state).expect("catches up");
        self.fold(&mut held.state);
    }

    /// Folds the frames read so far into the store without the log's lock, as the store's
    /// checkpoint thread does while appends go on (`commit::fold_behind`); the cycle goes on.
    pub fn fold_behind(&self) {
        let (overlay, upto) = self.log.behind().expect("catches up");
        let _folding = lock(&self.log.folding);
        let mut store = lock(&self.store);
        let applied = store.applied;
        let mut last = applied;
        for (seq, _) in overlay.read().frames_after(applied).take_while(|(seq, _)| *seq <= upto) {
            assert_eq!(*seq, last + 1, "the frames above the store's do not follow on");
            last = *seq;
        }
        let window = Window { after: applied, upto: last };
        let from = store.values.len() as u64;
        let added: Vec<u64> =
            overlay.read().positions(from, window).into_iter().map(|(_, (_, value))| value).collect();
        store.values.extend(added);
        store.applied = last;
    }

    fn fold(&self, state: &mut LogState) {
        let _folding = lock(&self.log.folding);
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn check(seen: &[u64], context: &str) {
        let mut sorted = seen.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), seen.len(), "{context}: a value twice in {seen:?}");
        assert!(
            seen.iter().all(|v| (100..200).contains(v) || *v == 999),
            "{context}: a value never appended"
        );
    }

    /// Two processes append (one folding now and then), the log small enough to fill and fold
    /// every few appends, and now and then a third writes a frame and dies before its sync; a
    /// crash is taken at every sync of the log, keeping what was synced only or every write
    /// since too. What reopens holds every append acknowledged before the
    /// crash, once, and goes on taking appends that read back.
    #[test]
    fn a_crash_at_any_sync_of_two_processes_keeps_every_acknowledged_append() {
        let machine = Machine::new(4096 + 3 * FRAME_BYTES);
        machine.record_crashes();
        let (a, b) = (machine.process(), machine.process());
        let mut acked: Vec<(usize, u64)> = Vec::new();
        for i in 0..30u64 {
            if i % 8 == 3 {
                // A third process writes a frame and is killed before its sync; the next fold
                // (by whoever fills the log or checkpoints) puts it into the store.
                machine.process().append_and_die(100 + i);
                continue;
            }
            let process = if i % 3 == 0 { &b } else { &a };
            process.append(100 + i);
            acked.push((machine.crash_count(), 100 + i));
            if i % 7 == 6 {
                a.checkpoint();
            }
            if i % 5 == 4 {
                check(&b.read(), "a read while appending");
            }
            if i % 4 == 1 {
                // Folded behind the tail: the cycle goes on over frames the store holds.
                b.fold_behind();
            }
        }
        let total = machine.crash_count();
        assert!(total >= 24, "only {total} syncs");
        for k in 0..total {
            for keep_unsynced in [false, true] {
                let context = format!("crash at sync {k} of {total}, unsynced writes kept: {keep_unsynced}");
                let after = machine.after_crash(k, keep_unsynced);
                let seen = after.process().read();
                check(&seen, &context);
                for (synced_by, value) in &acked {
                    if *synced_by <= k {
                        assert!(seen.contains(value), "{context}: acknowledged {value} lost from {seen:?}");
                    }
                }
                let (first, second) = (after.process(), after.process());
                first.append(999);
                second.checkpoint();
                let again = second.read();
                check(&again, &context);
                assert!(
                    again.starts_with(&seen) && again.contains(&999),
                    "{context}: {seen:?} then {again:?}"
                );
            }
        }
    }
}
