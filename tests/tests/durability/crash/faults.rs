//! I/O faults: an error at every write, resize and sync in turn, a failed sync that loses its
//! writes, and a disk that fills up at many sizes; the store refuses further writes cleanly and
//! reopens with every acknowledged append.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::io;

use annal_engine::Store;
use annal_support::disk::{OpKind, SimDisk};
use annal_support::model::check_snapshot;
use annal_support::workload::workload;

use super::{check_recovered, options, probe, reboot, run_until_failure, Files, Image, BOTH, ROUNDS, SEED};

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
