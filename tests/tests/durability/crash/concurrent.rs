//! (1) during concurrent appends: threads append batches while the disk crashes at each sync in
//! turn; what was acknowledged survives, whole batches or nothing.
#![allow(clippy::unwrap_used)]

use annal_engine::{AppendError, OpenError, ReadError, Record};
use annal_support::disk::{CrashKeep, SimDisk};
use annal_support::records::varied;
use annal_support::rng::Rng;

use super::{reboot, Files, Image, BOTH};

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
