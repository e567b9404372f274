//! Concurrency through the facade: threads sharing one `annal::Annal` through an `Arc`, as an
//! embedder shares it, racing for the same session with optimistic concurrency, and appending to
//! sessions of their own; group commit must give each slot exactly one winner and lose nothing.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

use annal::error::{AppendError, ErrorKind};
use annal::snapshot::Hash;
use annal::{Annal, Error, Record, Role};

const THREADS: usize = 8;
const PER_THREAD: u64 = 40;

/// The first record of a session chains to no record: its previous hash is all zeros.
const NO_PREVIOUS: Hash = [0; 32];

/// `Annal` must be shareable between threads.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Annal>();
    send_sync::<Arc<Annal>>();
};

fn record(thread: usize, index: u64) -> Record {
    Record::text(format!("t{thread}-{index}"), Role::Assistant, format!("thread {thread} record {index}"))
}

fn open(dir: &tempfile::TempDir) -> Arc<Annal> {
    // Opened as an embedder opens it: its index follows every append alongside the race.
    Arc::new(Annal::open(dir.path().join("concurrency.redb")).unwrap())
}

/// Runs `work(annal, thread)` on `THREADS` threads released together by a barrier, so they
/// really race, and returns what each returned, in thread order; a thread's panic fails the
/// test.
fn on_threads<T: Send>(annal: &Annal, work: impl Fn(&Annal, usize) -> T + Sync) -> Vec<T> {
    let start = Barrier::new(THREADS);
    thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (start, work) = (&start, &work);
                scope.spawn(move || {
                    start.wait();
                    work(annal, thread)
                })
            })
            .collect();
        handles.into_iter().map(|handle| handle.join().unwrap()).collect()
    })
}

/// Reads a session and returns each record's entryId, checking the chain as it goes.
fn read_chain(annal: &Annal, session: &str) -> Vec<String> {
    let snapshot = annal.snapshot().unwrap();
    let info = snapshot.session(session).unwrap().unwrap();
    let mut prev = NO_PREVIOUS;
    let mut ids = Vec::new();
    for (order, item) in snapshot.records(session, 0..u64::MAX).unwrap().enumerate() {
        let guard = item.unwrap();
        assert_eq!(guard.source_order(), order as u64);
        let view = guard.view().unwrap();
        assert_eq!(view.prev_hash(), prev, "{session}: chain broken at {order}");
        prev = view.hash();
        ids.push(view.entry_id().to_owned());
    }
    assert_eq!(info.len, ids.len() as u64, "{session}: length and records disagree");
    assert_eq!(info.head, prev, "{session}: head is not the last record's hash");
    ids
}

/// (3) Eight threads race for the next slot of one session with `expected_next`, retrying on
/// `Conflict`: each slot has exactly one winner, no gaps, each acknowledgement names the slot
/// the record really holds.
#[test]
fn racing_for_one_session_with_expected_next() {
    let dir = tempfile::tempdir().unwrap();
    let annal = open(&dir);
    // A snapshot taken before the race keeps seeing the store as it was.
    let before = annal.snapshot().unwrap();
    let done = Arc::new(AtomicBool::new(false));
    // A reader thread checks each snapshot it takes during the race is whole: length, records
    // and chain agree, and the session never shrinks.
    let reader = {
        let annal = Arc::clone(&annal);
        let done = Arc::clone(&done);
        thread::spawn(move || {
            let mut passes = 0u64;
            let mut last = 0;
            while !done.load(Ordering::Acquire) {
                if annal.snapshot().unwrap().session("shared").unwrap().is_some() {
                    let len = read_chain(&annal, "shared").len();
                    assert!(len >= last, "the session shrank from {last} to {len}");
                    last = len;
                }
                passes += 1;
            }
            passes
        })
    };
    let results = on_threads(&annal, |annal, thread| {
        let mut acks = Vec::new();
        let mut conflicts = 0u64;
        for index in 0..PER_THREAD {
            loop {
                let next = annal.snapshot().unwrap().session("shared").unwrap().map_or(0, |s| s.len);
                match annal.append("shared", Some(next), vec![record(thread, index)]) {
                    Ok(receipt) => {
                        assert_eq!(receipt.source_orders, vec![next], "acknowledged at another slot");
                        assert_eq!(receipt.appended, 1);
                        assert_eq!(receipt.next, next + 1);
                        acks.push((record(thread, index).entry_id, next));
                        break;
                    }
                    Err(err @ Error::Append(AppendError::Conflict { expected, actual, .. })) => {
                        // What a caller branches on: read again and retry.
                        assert_eq!(err.kind(), ErrorKind::Conflict);
                        assert!(!err.is_poisoned());
                        assert_eq!(expected, next);
                        assert!(actual > next, "a conflict must mean someone got there first");
                        conflicts += 1;
                    }
                    Err(other) => panic!("thread {thread}: {other}"),
                }
            }
        }
        (acks, conflicts)
    });
    let mut acks: BTreeMap<u64, String> = BTreeMap::new();
    let mut conflicts = 0;
    for (thread_acks, thread_conflicts) in results {
        conflicts += thread_conflicts;
        for (id, order) in thread_acks {
            assert!(acks.insert(order, id).is_none(), "two appends acknowledged at sourceOrder {order}");
        }
    }
    done.store(true, Ordering::Release);
    let passes = reader.join().unwrap();
    assert!(passes > 0);
    assert_eq!(before.session("shared").unwrap(), None, "an old snapshot saw later appends");
    assert_eq!(before.position_end().unwrap(), 0);
    drop(before);
    let total = THREADS as u64 * PER_THREAD;
    assert_eq!(acks.len() as u64, total);
    let ids = read_chain(&annal, "shared");
    assert_eq!(ids.len() as u64, total, "gaps or extra records");
    for (order, id) in &acks {
        assert_eq!(&ids[*order as usize], id, "sourceOrder {order} holds another record than acknowledged");
    }
    // Each thread's records are in its own order.
    for thread in 0..THREADS {
        let mine: Vec<&String> = ids.iter().filter(|id| id.starts_with(&format!("t{thread}-"))).collect();
        let expected: Vec<String> = (0..PER_THREAD).map(|i| format!("t{thread}-{i}")).collect();
        assert_eq!(mine, expected.iter().collect::<Vec<_>>());
    }
    let report = annal.verify(None).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.records, total);
    eprintln!("{conflicts} conflicts retried");
}

/// (3) Eight threads, eight sessions: every acknowledged record is there, in order, and the
/// store-wide position stream is gapless and orders each session's records as appended.
#[test]
fn threads_appending_to_their_own_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let annal = open(&dir);
    on_threads(&annal, |annal, thread| {
        let session = format!("own{thread}");
        let mut index = 0;
        while index < PER_THREAD {
            // Batches of 1 to 3 records, always with the right expected_next: nobody
            // else writes this session, so a conflict would be a bug.
            let size = 1 + (index + thread as u64) % 3;
            let batch: Vec<Record> =
                (index..(index + size).min(PER_THREAD)).map(|i| record(thread, i)).collect();
            let count = batch.len() as u64;
            let receipt = annal.append(&session, Some(index), batch).unwrap();
            assert_eq!(receipt.source_orders, (index..index + count).collect::<Vec<_>>());
            index += count;
        }
    });
    let mut keys = HashMap::new();
    for thread in 0..THREADS {
        let session = format!("own{thread}");
        let ids = read_chain(&annal, &session);
        let expected: Vec<String> = (0..PER_THREAD).map(|i| format!("t{thread}-{i}")).collect();
        assert_eq!(ids, expected, "{session}");
        keys.insert(session, Vec::new());
    }
    let snapshot = annal.snapshot().unwrap();
    let positions = snapshot.positions(0, usize::MAX).unwrap();
    assert_eq!(positions.len() as u64, THREADS as u64 * PER_THREAD);
    for (at, entry) in positions.iter().enumerate() {
        assert_eq!(entry.position, at as u64, "positions have a gap");
        keys.get_mut(&entry.session).unwrap().push(entry.source_order);
    }
    for (session, orders) in keys {
        assert_eq!(orders, (0..PER_THREAD).collect::<Vec<_>>(), "{session}: positions out of order");
    }
    let report = annal.verify(None).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.records, THREADS as u64 * PER_THREAD);
    drop(snapshot);
    let annal = Arc::into_inner(annal).unwrap();
    assert!(annal.close().unwrap(), "no thread holds the store any more: it closes now");
}
