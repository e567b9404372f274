//! Crash consistency and I/O faults: a workload runs on a simulated disk that crashes at each
//! sync in turn, fails each write, resize and sync in turn, or fills up; the store reopened from
//! what the disk kept must hold every acknowledged append, no partial batch, and verify clean.
//! Each test runs on the store file alone, on the store file with the durability log of a store
//! opened alone, and with the log shared by processes (small ones, which the workload fills and
//! checkpoints many times, with groups too large for them committed in the store file
//! directly).
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::io;

use annal_engine::{AppendError, OpenError, ReadError, Record, Sharing, Store, StoreOptions};
use annal_support::disk::{CrashKeep, OpKind, SimDisk};
use annal_support::model::{check_snapshot, check_verify, compare_append, compare_fork, Model};
use annal_support::records::varied;
use annal_support::rng::Rng;
use annal_support::workload::{workload, Step, StepError};

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

/// One thread's batches for the concurrent crash test: sizes 1 to 4, every third batch with a
/// tool output past the blob threshold.
fn thread_batches(thread: usize) -> Vec<Vec<Record>> {
    let mut rng = Rng::new(thread as u64);
    (0..6)
        .map(|batch| {
            let size = 1 + (thread + batch) % 4;
            (0..size)
                .map(|i| varied(&mut rng, &format!("c{thread}-{batch}-{i}"), i == 0 && batch % 3 == 0))
                .collect()
        })
        .collect()
}

/// How a thread of the concurrent crash test ended.
struct ThreadEnd {
    acknowledged: usize,
    /// The error of the batch after the acknowledged ones, if one failed.
    error: Option<AppendError>,
}

/// (1a) A crash at every sync while four threads append at once, so the writer commits several
/// callers' batches in one transaction: each thread's acknowledged batches survive, a batch
/// that failed with `Io` is wholly there or wholly absent, and one refused as `Poisoned` never
/// reached the disk.
#[test]
fn crash_at_every_sync_during_concurrent_appends() {
    BOTH.into_iter().for_each(crash_during_concurrent_appends);
}

fn crash_during_concurrent_appends(files: Files) {
    const THREADS: usize = 4;
    let batches: Vec<Vec<Vec<Record>>> = (0..THREADS).map(thread_batches).collect();
    let run = |disk: &SimDisk| -> Option<Vec<ThreadEnd>> {
        let store = files.open(disk).ok()?;
        let ends = std::thread::scope(|scope| {
            let handles: Vec<_> = batches
                .iter()
                .enumerate()
                .map(|(thread, mine)| {
                    let store = &store;
                    scope.spawn(move || {
                        let session = format!("thread{thread}");
                        let mut next = 0;
                        for (index, batch) in mine.iter().enumerate() {
                            match store.append(&session, Some(next), batch.clone()) {
                                Ok(receipt) => next = receipt.next,
                                Err(error) => return ThreadEnd { acknowledged: index, error: Some(error) },
                            }
                        }
                        ThreadEnd { acknowledged: mine.len(), error: None }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let _ = store.close();
        Some(ends)
    };
    let probe = SimDisk::new();
    run(&probe).unwrap();
    // Group commit makes the number of syncs vary from run to run; a few extra crash points
    // past the probe's count cover runs that sync more.
    let syncs = probe.counts().syncs + 4;
    for k in 1..=syncs {
        let keep = match k % 3 {
            0 => CrashKeep::Everything,
            1 => CrashKeep::Nothing,
            _ => CrashKeep::RandomPrefix(k),
        };
        let context = format!("{files:?}: concurrent appends, crash at sync {k} ({keep:?})");
        let disk = SimDisk::new();
        disk.crash_at_sync(k, keep);
        let ends = run(&disk);
        let store = match (files.open(&reboot(&disk, Image::Crash)), &ends) {
            (Ok(store), _) => store,
            (Err(OpenError::NotAStore { .. }), None) => continue,
            (Err(e), _) => panic!("{context}: reopening failed: {e}"),
        };
        let snapshot = store.snapshot().unwrap();
        let ends = ends.unwrap_or_else(|| {
            (0..THREADS).map(|_| ThreadEnd { acknowledged: 0, error: Some(AppendError::Closed) }).collect()
        });
        for (thread, end) in ends.iter().enumerate() {
            let session = format!("thread{thread}");
            let ids: Vec<String> = match snapshot.records(&session, 0..u64::MAX) {
                Ok(records) => records.map(|g| g.unwrap().view().unwrap().entry_id().to_owned()).collect(),
                Err(ReadError::UnknownSession(_)) => Vec::new(),
                Err(e) => panic!("{context}: {session}: {e}"),
            };
            let ids_of = |count: usize| -> Vec<String> {
                batches[thread][..count].iter().flatten().map(|r| r.entry_id.clone()).collect()
            };
            let acknowledged = ids_of(end.acknowledged);
            let may_be_there = matches!(end.error, Some(AppendError::Io { .. }));
            let with_in_flight = ids_of((end.acknowledged + 1).min(batches[thread].len()));
            assert!(
                ids == acknowledged || (may_be_there && ids == with_in_flight),
                "{context}: {session} holds {ids:?}; acknowledged {acknowledged:?}, then {:?}",
                end.error
            );
        }
        drop(snapshot);
        let report = store.verify(None).unwrap();
        assert!(report.is_ok(), "{context}: {:?}", report.problems);
    }
}

/// (1b) An I/O error at every write, resize and sync in turn (the disk works again afterwards):
/// the step it hits fails with `Io`, every later write is refused as `Poisoned`, and the file,
/// as synced and as left on disk, reopens with every acknowledged append.
#[test]
fn io_error_at_every_operation() {
    BOTH.into_iter().for_each(io_error_at_every_operation_on);
}

fn io_error_at_every_operation_on(files: Files) {
    let steps = workload(SEED, 1);
    let (_, total) = probe(files, &steps);
    for n in 1..=total {
        let context = format!("{files:?}: I/O error at operation {n} of {total}");
        let disk = SimDisk::new();
        disk.fail_op(n, &[]);
        let (store, outcome) = run_until_failure(files, &disk, &steps);
        if let Some(store) = store {
            let failed = outcome.in_flight.is_some();
            if failed {
                assert_eq!(disk.injected_failures(), 1, "{context}: the step failed but no fault fired");
                assert!(store.is_poisoned(), "{context}: the store takes writes after an I/O error");
                // Every later step is refused, including forks and appends that would be no-ops.
                for step in &steps {
                    match step.run(&store) {
                        Err(e) if e.is_poisoned() => {}
                        other => panic!("{context}: after an I/O error {step:?} returned {other:?}"),
                    }
                }
                let empty = store.append("another", None, Vec::new());
                assert!(
                    matches!(empty, Err(annal_engine::AppendError::Poisoned)),
                    "{context}: empty append after an I/O error returned {empty:?}"
                );
            }
            let _ = store.close();
        } else {
            assert_eq!(disk.injected_failures(), 1, "{context}: opening failed without a fault");
        }
        assert_eq!(disk.injected_failures(), 1, "{context}: the fault never fired");
        check_recovered(files, reboot(&disk, Image::Durable), &outcome, &format!("{context}, durable image"));
        check_recovered(
            files,
            reboot(&disk, Image::Live),
            &outcome,
            &format!("{context}, image after close"),
        );
    }
}

/// (1b) A failed sync loses the writes it should have made durable (Linux marks the pages
/// clean after an fsync error: reads still see them, the disk never gets them). Nothing may
/// retry that sync or build on it: the durable image must still hold every acknowledged append
/// after the store is closed.
#[test]
fn failed_sync_that_loses_its_writes() {
    BOTH.into_iter().for_each(failed_sync_that_loses_its_writes_on);
}

fn failed_sync_that_loses_its_writes_on(files: Files) {
    let steps = workload(SEED, ROUNDS);
    let (syncs, _) = probe(files, &steps);
    for n in 1..=syncs {
        let context = format!("{files:?}: sync {n} of {syncs} failed and lost its writes");
        let disk = SimDisk::new();
        disk.fail_op(n, &[OpKind::Sync]);
        disk.failed_sync_loses_writes();
        let (store, outcome) = run_until_failure(files, &disk, &steps);
        if let Some(store) = store {
            if outcome.in_flight.is_some() {
                assert!(store.is_poisoned(), "{context}: the store takes writes after a failed sync");
            }
            let _ = store.close();
        }
        assert_eq!(disk.injected_failures(), 1, "{context}: the fault never fired");
        check_recovered(files, reboot(&disk, Image::Durable), &outcome, &context);
    }
}

/// (1b) A full disk: writes past a size cap fail with `StorageFull`. The append that hits it
/// reports `Io` with that kind, later ones `Poisoned`; reopened with space freed, every
/// acknowledged append is there. Reopened while the disk is still full, the data stays readable.
#[test]
fn full_disk_at_many_sizes() {
    let steps = workload(SEED, ROUNDS);
    let full = {
        let disk = SimDisk::new();
        let store = Store::open_with_storage(disk.clone(), options()).unwrap();
        for step in &steps {
            step.run(&store).unwrap();
        }
        store.close().unwrap();
        disk.live_len()
    };
    let mut hit = 0;
    for slice in 1..=24u64 {
        let capacity = full * slice / 25;
        let context = format!("disk full at {capacity} of {full} bytes");
        let disk = SimDisk::new();
        disk.set_capacity(Some(capacity));
        let (store, outcome) = run_until_failure(Files::Store, &disk, &steps);
        let Some(store) = store else {
            // Too small even to create the store: nothing was acknowledged.
            assert!(outcome.acknowledged.is_empty());
            continue;
        };
        if let Some(step) = &outcome.in_flight {
            hit += 1;
            let error = step.run(&store).unwrap_err();
            assert!(error.is_poisoned(), "{context}: after a full disk a step returned {error:?}");
        }
        let _ = store.close();
        if let Some(error) = &outcome.error {
            assert_eq!(error.io_kind(), Some(io::ErrorKind::StorageFull), "{context}: {error:?}");
        }
        // Still full: the store opens and what it holds is readable.
        let still_full = SimDisk::from_image(disk.live_image());
        still_full.set_capacity(Some(capacity));
        {
            let store = Store::open_with_storage(still_full, options())
                .unwrap_or_else(|e| panic!("{context}: cannot reopen on the full disk to read: {e}"));
            let snapshot = store.snapshot().unwrap();
            let mut with = outcome.acknowledged.clone();
            if let Some(step) = &outcome.in_flight {
                step.apply(&mut with);
            }
            let ok = check_snapshot(&snapshot, &outcome.acknowledged, &mut HashMap::new()).is_ok()
                || check_snapshot(&snapshot, &with, &mut HashMap::new()).is_ok();
            assert!(ok, "{context}: reopened on the full disk, the acknowledged appends do not read back");
        }
        check_recovered(
            Files::Store,
            reboot(&disk, Image::Durable),
            &outcome,
            &format!("{context}, durable image"),
        );
        check_recovered(
            Files::Store,
            reboot(&disk, Image::Live),
            &outcome,
            &format!("{context}, image after close"),
        );
    }
    assert!(hit > 10, "only {hit} capacities stopped the workload");
}
