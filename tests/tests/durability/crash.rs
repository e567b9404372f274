//! Crash consistency and I/O faults: a workload runs on a simulated disk that crashes at each
//! sync in turn, fails each write, resize and sync in turn, or fills up; the store reopened from
//! what the disk kept must hold every acknowledged append, no partial batch, and verify clean.
//! Each test runs on the store file alone, on the store file with the durability log of a store
//! opened alone, and with the log shared by processes (small ones, which the workload fills and
//! checkpoints many times, with groups too large for them committed in the store file
//! directly).
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use annal_engine::{OpenError, Sharing, Store, StoreOptions};
use annal_support::disk::{CrashKeep, SimDisk};
use annal_support::model::{check_snapshot, check_verify, compare_append, compare_fork, Model};
use annal_support::workload::{workload, Step, StepError};

mod concurrent;
mod faults;

const SEED: u64 = 7;
/// Two rounds: enough for the file to grow several times and hold blobs and forks of forks.
const ROUNDS: usize = 2;

fn options() -> StoreOptions {
    // A small page cache keeps memory low across hundreds of simulated runs.
    // No idle checkpoints: a slow run must sync exactly where the probe did.
    StoreOptions { cache_size_bytes: 4 << 20, checkpoint_idle: None, ..StoreOptions::default() }
}

/// The files a store runs on.
#[derive(Clone, Copy, Debug)]
enum Files {
    /// The store file alone: every commit durable in it.
    Store,
    /// The store file and a 32 KiB durability log on the same machine, opened alone.
    Logged,
    /// The store file and a 64 KiB shared log on the same machine.
    Shared,
}

const BOTH: [Files; 3] = [Files::Store, Files::Logged, Files::Shared];

impl Files {
    fn open(self, disk: &SimDisk) -> Result<Store, OpenError> {
        match self {
            Files::Store => Store::open_with_storage(disk.clone(), options()),
            Files::Logged => Store::open_with_log(
                disk.clone(),
                disk.second_file(),
                StoreOptions { log_size_bytes: 32 << 10, sharing: Sharing::Exclusive, ..options() },
            ),
            Files::Shared => Store::open_with_log(
                disk.clone(),
                disk.second_file(),
                StoreOptions { log_size_bytes: 64 << 10, sharing: Sharing::Processes, ..options() },
            ),
        }
    }
}

/// Which of a machine's images a reboot finds.
#[derive(Clone, Copy, Debug)]
enum Image {
    Crash,
    Durable,
    Live,
}

/// A machine holding what `disk` and the log beside it left.
fn reboot(disk: &SimDisk, image: Image) -> SimDisk {
    let take = |file: &SimDisk| match image {
        Image::Crash => file.crash_image().unwrap_or_else(|| file.durable_image()),
        Image::Durable => file.durable_image(),
        Image::Live => file.live_image(),
    };
    SimDisk::from_images(vec![take(disk), take(&disk.second_file())])
}

/// What a faulty run acknowledged: the model of every append that returned `Ok`, and the step
/// that was in flight when the disk failed (it may or may not have reached the disk).
struct Outcome {
    /// The workload run.
    steps: Vec<Step>,
    acknowledged: Model,
    in_flight: Option<Step>,
    error: Option<StepError>,
    /// Whether `open` returned before the fault (so the store had been created).
    opened: bool,
}

/// Reopens a store from `image` and checks it holds the acknowledged appends, with the
/// in-flight step either wholly present or wholly absent, that verify is clean, and that
/// retrying the workload completes it. Returns whether the in-flight step was present.
fn check_recovered(files: Files, machine: SimDisk, outcome: &Outcome, context: &str) -> bool {
    let store = match files.open(&machine) {
        Ok(store) => store,
        // A fault while the store was first being created (before `open` returned) can leave
        // a file that redb does not recognise: it writes its magic number last. Nothing was
        // acknowledged, so nothing is lost; the refusal must be a clean `NotAStore`.
        Err(OpenError::NotAStore { reason, .. }) if !outcome.opened => {
            assert!(reason.contains("magic number"), "{context}: {reason}");
            return false;
        }
        Err(e) => panic!("{context}: reopening after the fault failed: {e}"),
    };
    let snapshot = store.snapshot().unwrap_or_else(|e| panic!("{context}: snapshot: {e}"));
    let without = check_snapshot(&snapshot, &outcome.acknowledged, &mut HashMap::new());
    let (found, model) = match (&without, &outcome.in_flight) {
        (Ok(()), _) => (false, outcome.acknowledged.clone()),
        (Err(first), Some(step)) => {
            let mut with = outcome.acknowledged.clone();
            step.apply(&mut with);
            if let Err(second) = check_snapshot(&snapshot, &with, &mut HashMap::new()) {
                panic!(
                    "{context}: the recovered store matches neither the acknowledged appends \
                     ({first}) nor those plus the in-flight step {step:?} ({second})"
                );
            }
            (true, with)
        }
        (Err(first), None) => panic!("{context}: the recovered store lost acknowledged appends: {first}"),
    };
    drop(snapshot);
    check_verify(&store, &model).unwrap_or_else(|e| panic!("{context}: {e}"));
    resume(&store, model, &outcome.steps, context);
    found
}

/// Runs the whole workload again on a recovered store, as a caller retrying after a crash
/// would: what is already stored is acknowledged again at the same sourceOrders without being
/// duplicated (even with the now stale `expected_next`), forks already made report their name
/// taken, and the rest is appended. The result is exactly the full workload, verified.
fn resume(store: &Store, mut model: Model, steps: &[Step], context: &str) {
    for step in steps {
        let diff = match step {
            Step::Append { session, expected_next, records } => {
                let predicted = model.append(session, *expected_next, records);
                compare_append(&predicted, &store.append(session, *expected_next, records.clone()))
            }
            Step::Fork { parent, at, name } => {
                let predicted = model.fork(parent, *at, name);
                compare_fork(&predicted, &store.fork(parent, *at, name))
            }
        };
        diff.unwrap_or_else(|e| panic!("{context}: retrying {step:?} after recovery: {e}"));
    }
    let mut full = Model::new();
    steps.iter().for_each(|step| step.apply(&mut full));
    assert!(model == full, "{context}: retrying the workload after recovery did not complete it");
    let snapshot = store.snapshot().unwrap();
    check_snapshot(&snapshot, &full, &mut HashMap::new())
        .unwrap_or_else(|e| panic!("{context}: after retry: {e}"));
    check_verify(store, &full).unwrap_or_else(|e| panic!("{context}: after retry: {e}"));
}

/// Runs the workload on a fresh store over `disk` until the first failure. Checks each success
/// against the model.
fn run_until_failure(files: Files, disk: &SimDisk, steps: &[Step]) -> (Option<Store>, Outcome) {
    let mut outcome = Outcome {
        steps: steps.to_vec(),
        acknowledged: Model::new(),
        in_flight: None,
        error: None,
        opened: false,
    };
    let store = match files.open(disk) {
        Ok(store) => store,
        Err(_) => return (None, outcome),
    };
    outcome.opened = true;
    for step in steps {
        if let Err(error) = step.run_checked(&store, &mut outcome.acknowledged) {
            assert!(error.is_io(), "a step failed with {error:?} where only the disk failed");
            outcome.in_flight = Some(step.clone());
            outcome.error = Some(error);
            break;
        }
    }
    (Some(store), outcome)
}

/// The number of syncs, and of writes, resizes and syncs together, of the whole workload,
/// opening and closing included.
fn probe(files: Files, steps: &[Step]) -> (u64, u64) {
    let disk = SimDisk::new();
    let store = files.open(&disk).unwrap();
    let mut model = Model::new();
    for step in steps {
        step.run_checked(&store, &mut model).unwrap();
    }
    check_verify(&store, &model).unwrap();
    // Else the logged runs would test the store file alone twice.
    if matches!(files, Files::Logged | Files::Shared) {
        assert!(disk.second_file().live_len() > 0, "the store never wrote its log");
    }
    store.close().unwrap();
    let counts = disk.counts();
    assert!(counts.syncs >= steps.len() as u64, "each acknowledged append must sync: {counts:?}");
    (counts.syncs, counts.total())
}

fn crash_at_every_sync(keep: impl Fn(u64) -> CrashKeep) {
    BOTH.into_iter().for_each(|files| crash_at_every_sync_on(files, &keep));
}

fn crash_at_every_sync_on(files: Files, keep: &impl Fn(u64) -> CrashKeep) {
    let steps = workload(SEED, ROUNDS);
    let (syncs, _) = probe(files, &steps);
    let mut in_flight_found = 0;
    for k in 1..=syncs {
        let keep = keep(k);
        let context = format!("{files:?}: crash at sync {k} of {syncs} ({keep:?})");
        let disk = SimDisk::new();
        disk.crash_at_sync(k, keep);
        let (store, outcome) = run_until_failure(files, &disk, &steps);
        if let Some(store) = store {
            // Closing a crashed store may fail; it must not panic or change the crash image.
            let _ = store.close();
        }
        assert!(disk.crashed(), "{context}: the workload never reached that sync");
        if check_recovered(files, reboot(&disk, Image::Crash), &outcome, &context) {
            in_flight_found += 1;
        }
    }
    eprintln!("{files:?}: {syncs} crash points; the in-flight step survived {in_flight_found} times");
}

/// (1a) Crash at every sync in turn; whatever was not synced is lost.
#[test]
fn crash_at_every_sync_losing_unsynced_writes() {
    crash_at_every_sync(|_| CrashKeep::Nothing);
}

/// (1a) Crash at every sync in turn; a random subset of the unsynced writes and resizes
/// reached the disk anyway (three different subsets per crash point).
#[test]
fn crash_at_every_sync_keeping_random_unsynced_writes() {
    for seed in 0..3u64 {
        crash_at_every_sync(|k| CrashKeep::RandomSubset(seed * 1_000_003 + k));
    }
}

/// (1a) Crash at every sync in turn; everything written before the crashing sync reached the
/// disk (so the in-flight append may be whole), or an in-order prefix of it did.
#[test]
fn crash_at_every_sync_keeping_all_or_a_prefix_of_unsynced_writes() {
    crash_at_every_sync(|_| CrashKeep::Everything);
    for seed in 0..2u64 {
        crash_at_every_sync(|k| CrashKeep::RandomPrefix(seed * 1_000_003 + k));
    }
}
