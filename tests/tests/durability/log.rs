//! The log of a store opened alone (the same log shared stores append to): one sync of the log
//! makes an append durable, its frames are read after a crash (by an exclusive or a shared
//! open), a torn tail or a log of another store is handled, a closed store is its one file, and
//! a shared one closes leaving a short log as it is. The crash and fault matrix over both files is in crash.rs; here a real
//! process is killed mid-append.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use annal_engine::{log_path, OpenError, Record, Role, Sharing, Store, StoreOptions};
use annal_support::disk::SimDisk;
use annal_support::process::record_for;
use annal_support::records::filler;
use annal_support::rng::Rng;

const WRITER: &str = env!("CARGO_BIN_EXE_annal-test-writer");

fn logged() -> StoreOptions {
    StoreOptions {
        log_size_bytes: 64 << 10,
        checkpoint_idle: None,
        sharing: Sharing::Exclusive,
        ..StoreOptions::default()
    }
}

fn text(i: usize) -> Record {
    Record::text(format!("e{i}"), Role::User, format!("записка {i}\u{3000}東京 🦀 e\u{301}"))
}

fn entry_ids(store: &Store, session: &str) -> Vec<String> {
    let snapshot = store.snapshot().unwrap();
    snapshot
        .records(session, 0..u64::MAX)
        .unwrap()
        .map(|g| g.unwrap().view().unwrap().entry_id().to_owned())
        .collect()
}

/// What a crash now leaves of the store and its log.
fn crash_now(disk: &SimDisk) -> SimDisk {
    SimDisk::from_images(vec![disk.durable_image(), disk.second_file().durable_image()])
}

#[test]
fn an_append_is_durable_after_one_sync_of_the_log_and_replayed_after_a_crash() {
    let disk = SimDisk::new();
    let store = Store::open_with_log(disk.clone(), disk.second_file(), logged()).unwrap();
    let mut one_sync = 0;
    for i in 0..40 {
        let before = disk.counts().syncs;
        let (store_before, len_before) = (disk.durable_image(), disk.live_len());
        store.append("s", None, vec![text(i)]).unwrap();
        // redb syncs the store file when it grows it (rarely: it grows in large steps).
        if disk.live_len() == len_before {
            one_sync += 1;
            assert_eq!(disk.counts().syncs, before + 1, "append {i} took more than one sync");
            // The record lives in the log until a checkpoint: the store file was not synced.
            assert_eq!(disk.durable_image(), store_before, "append {i} synced the store file");
        }
        let recovered = crash_now(&disk);
        let reopened = Store::open_with_log(recovered.clone(), recovered.second_file(), logged()).unwrap();
        let expected: Vec<String> = (0..=i).map(|j| format!("e{j}")).collect();
        assert_eq!(entry_ids(&reopened, "s"), expected, "after a crash following append {i}");
        assert!(reopened.verify(None).unwrap().is_ok());
        drop(reopened);
    }
    assert!(one_sync >= 35, "only {one_sync} of 40 appends left the store file's size alone");
    drop(store);
}

/// A group that writes nothing (an append of what is already stored) takes no sequence
/// number: after an idle checkpoint the next group's frame must still be replayed.
#[test]
fn a_group_that_writes_nothing_leaves_the_next_frame_replayable() {
    let disk = SimDisk::new();
    let options = StoreOptions { checkpoint_idle: Some(Duration::from_millis(20)), ..logged() };
    let store = Store::open_with_log(disk.clone(), disk.second_file(), options.clone()).unwrap();
    store.append("s", None, vec![text(0)]).unwrap();
    let again = store.append("s", None, vec![text(0)]).unwrap();
    assert_eq!(again.appended, 0, "the same record again stores nothing");
    // Wait for the idle checkpoint: the store file's durable image changes when it runs.
    let before = disk.durable_image();
    let started = Instant::now();
    while disk.durable_image() == before {
        assert!(started.elapsed() < Duration::from_secs(30), "no idle checkpoint ran");
        std::thread::sleep(Duration::from_millis(10));
    }
    store.append("s", None, vec![text(1)]).unwrap();
    let recovered = crash_now(&disk);
    let reopened = Store::open_with_log(recovered.clone(), recovered.second_file(), logged()).unwrap();
    assert_eq!(entry_ids(&reopened, "s"), ["e0", "e1"], "an acknowledged append was lost");
    drop(store);
}

#[test]
fn a_torn_last_frame_is_not_replayed_and_the_rest_is() {
    let disk = SimDisk::new();
    let store = Store::open_with_log(disk.clone(), disk.second_file(), logged()).unwrap();
    for i in 0..5 {
        store.append("s", None, vec![text(i)]).unwrap();
    }
    let log_before_last = disk.second_file().durable_image();
    store.append("s", None, vec![text(5)]).unwrap();
    let log = disk.second_file().durable_image();
    // The last frame is where the two images differ; cut it at every byte.
    let start = log.iter().zip(&log_before_last).position(|(a, b)| a != b).unwrap();
    let end = log.iter().rposition(|&b| b != 0).unwrap() + 1;
    for cut in (start..end).step_by(7) {
        let mut torn = log.clone();
        torn[cut..end].iter_mut().for_each(|b| *b = 0);
        let machine = SimDisk::from_images(vec![disk.durable_image(), torn]);
        let reopened = Store::open_with_log(machine.clone(), machine.second_file(), logged()).unwrap();
        let ids = entry_ids(&reopened, "s");
        assert_eq!(ids.len(), 5, "cut at {cut}: {ids:?}");
        // The store goes on from there: the lost group's id is free again.
        reopened.append("s", Some(5), vec![text(5)]).unwrap();
        assert!(reopened.verify(None).unwrap().is_ok());
    }
    drop(store);
}

#[test]
fn a_log_of_another_store_is_refused_with_a_clear_error_and_loses_nothing() {
    let first = SimDisk::new();
    let store = Store::open_with_log(first.clone(), first.second_file(), logged()).unwrap();
    store.append("s", None, vec![text(0)]).unwrap();
    let first_log = first.second_file().durable_image();
    drop(store);
    let second = SimDisk::new();
    let store = Store::open_with_log(second.clone(), second.second_file(), logged()).unwrap();
    store.append("t", None, vec![text(1)]).unwrap();
    store.close().unwrap();
    let mixed = SimDisk::from_images(vec![second.durable_image(), first_log]);
    match Store::open_with_log(mixed.clone(), mixed.second_file(), logged()) {
        Err(OpenError::Corrupted { reason, .. }) => assert!(reason.contains("another store"), "{reason}"),
        other => panic!("expected Corrupted, got {other:?}"),
    }
    // The store itself is untouched and opens without that log.
    let alone = Store::open_with_storage(SimDisk::from_image(mixed.durable_image()), logged()).unwrap();
    assert_eq!(entry_ids(&alone, "t"), ["e1"]);
}

#[test]
fn a_closed_store_is_its_one_file_and_a_log_left_by_a_vanished_store_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    let options = StoreOptions { sharing: Sharing::Exclusive, ..StoreOptions::default() };
    let store = Store::open(&path, options.clone()).unwrap();
    store.append("s", None, (0..3).map(text).collect()).unwrap();
    assert!(log_path(&path).exists(), "an exclusive store writes through its log");
    store.close().unwrap();
    assert!(!log_path(&path).exists(), "a closed store left its log behind");
    // Copied alone, the file holds everything.
    let copy = dir.path().join("copy.redb");
    std::fs::copy(&path, &copy).unwrap();
    let store = Store::open(&copy, StoreOptions::default()).unwrap();
    assert_eq!(entry_ids(&store, "s"), ["e0", "e1", "e2"]);
    store.close().unwrap();
    // A new store where an old one's log was left: the log is not this store's and is dropped.
    std::fs::remove_file(&copy).unwrap();
    std::fs::write(log_path(&copy), vec![7u8; 9000]).unwrap();
    let store = Store::open(&copy, options).unwrap();
    store.append("fresh", None, vec![text(9)]).unwrap();
    assert_eq!(entry_ids(&store, "fresh"), ["e9"]);
}

#[test]
fn a_shared_open_keeps_the_shared_log_and_an_open_alone_folds_it_and_removes_it_at_close() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    Store::open(&path, StoreOptions::default()).unwrap().close().unwrap();
    // What a crash between emptying the log at close and removing it leaves.
    std::fs::write(log_path(&path), b"").unwrap();
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    store.append("s", None, vec![text(0)]).unwrap();
    assert!(std::fs::metadata(log_path(&path)).unwrap().len() > 0, "a shared open made no log");
    store.close().unwrap();
    assert!(log_path(&path).exists(), "a shared store's log is kept for the processes still open");
    // The record is in the log's frames; a store opened alone folds them in and removes it.
    let alone = StoreOptions { sharing: Sharing::Exclusive, ..StoreOptions::default() };
    let store = Store::open(&path, alone.clone()).unwrap();
    assert_eq!(entry_ids(&store, "s"), ["e0"]);
    store.append("s", Some(1), vec![text(1)]).unwrap();
    store.close().unwrap();
    assert!(!log_path(&path).exists(), "the store opened alone left its log behind");
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(entry_ids(&store, "s"), ["e0", "e1"]);
}

/// Reads "ack SESSION ENTRY ORDER" lines until `wanted` arrived or the writer ended.
fn read_acks(stdout: impl std::io::Read, wanted: usize, acked: &mut Vec<String>) {
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { return };
        let parts: Vec<&str> = line.split(' ').collect();
        assert_eq!(parts.first(), Some(&"ack"), "bad line {line:?}");
        acked.push(parts[2].to_owned());
        if acked.len() >= wanted {
            return;
        }
    }
}

fn check_store(path: &Path, sharing: Sharing, acked: &[String], context: &str) -> usize {
    let store = Store::open(path, StoreOptions { sharing, ..StoreOptions::default() })
        .unwrap_or_else(|e| panic!("{context}: reopening: {e}"));
    let stored = entry_ids(&store, "s");
    assert!(stored.len() >= acked.len(), "{context}: {} stored, {} acknowledged", stored.len(), acked.len());
    assert_eq!(&stored[..acked.len()], acked, "{context}: acknowledged records differ");
    let report = store.verify(None).unwrap();
    assert!(report.is_ok(), "{context}: {:?}", report.problems);
    let snapshot = store.snapshot().unwrap();
    let by_id: HashMap<String, Record> =
        stored.iter().map(|id| (id.clone(), record_for(id))).collect::<HashMap<_, _>>();
    for guard in snapshot.records("s", 0..u64::MAX).unwrap() {
        let guard = guard.unwrap();
        let record = snapshot.to_record(&guard.view().unwrap()).unwrap();
        assert_eq!(Some(&record), by_id.get(&record.entry_id), "{context}: a record changed");
    }
    stored.len()
}

/// A process appending through its log is killed with SIGKILL after a random number of
/// acknowledged appends; a shared (multi-process) open replays the log and holds every
/// acknowledged record, and an exclusive open finds the same.
#[test]
fn a_killed_process_loses_no_acknowledged_append() {
    let mut rng = Rng::new(11);
    for round in 0..8 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.redb");
        let wanted = 20 + rng.below(200) as usize;
        let mut child = Command::new(WRITER)
            .args(["append", path.to_str().unwrap(), "k", "100000", "s", "--exclusive"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut acked = Vec::new();
        let started = Instant::now();
        read_acks(child.stdout.take().unwrap(), wanted, &mut acked);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(started.elapsed() < Duration::from_secs(120));
        assert_eq!(acked.len(), wanted, "round {round}: the writer stopped early");
        let context = format!("round {round}, killed after {wanted} acknowledged appends");
        let replayed = check_store(&path, Sharing::Processes, &acked, &context);
        assert_eq!(check_store(&path, Sharing::Exclusive, &acked, &context), replayed);
    }
}

#[test]
fn a_shared_store_closed_right_after_a_fold_leaves_its_short_log_to_the_next_process() {
    let shared = StoreOptions { sharing: Sharing::Processes, ..logged() };
    let open =
        |disk: &SimDisk| Store::open_with_log(disk.clone(), disk.second_file(), shared.clone()).unwrap();
    // What closing costs a store whose log holds one short frame: redb's own close.
    let disk = SimDisk::new();
    let store = open(&disk);
    store.append("s", None, vec![text(0)]).unwrap();
    let before = disk.counts().syncs;
    store.close().unwrap();
    let close_syncs = disk.counts().syncs - before;
    // Appends until one finds the log full: it folds the frames into the store file, starts
    // the log's next cycle and writes its own frame there, the one frame of the new cycle.
    let disk = SimDisk::new();
    let store = open(&disk);
    let mut rng = Rng::new(26);
    let mut appended = 0u64;
    loop {
        let record = Record::text(format!("e{appended}"), Role::User, filler(&mut rng, 6_000));
        let before = disk.counts().syncs;
        store.append("s", Some(appended), vec![record]).unwrap();
        appended += 1;
        if disk.counts().syncs - before > 1 {
            break;
        }
        assert!(appended < 100, "64 KiB of log never filled");
    }
    let before = disk.counts().syncs;
    store.close().unwrap();
    // Folding one frame at close would cost a short-lived appender a durable commit more.
    assert_eq!(disk.counts().syncs - before, close_syncs, "closing folded a log holding one frame");
    let store = open(&disk);
    assert_eq!(entry_ids(&store, "s").len() as u64, appended);
}
