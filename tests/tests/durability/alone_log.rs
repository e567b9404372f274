//! The log a store opened alone kept before this build ("annal log 1" beside the file, format
//! version 3): after a crash its groups are there and not in the store file. This build writes
//! only the log every store shares, and puts such a log's groups back at open, whichever way
//! the store is opened; a log of another store is refused and kept.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use annal_engine::{log_path, OpenError, Record, Role, Sharing, Store, StoreOptions};

const ALONE_MAGIC: &[u8; 16] = b"annal log 1\0\0\0\0\0";
const HEADER_BYTES: usize = 4096;
const FRAME_HEAD_BYTES: usize = 4 + 8 + 16;

fn text(i: usize) -> Record {
    let body = format!("заметка {i}\u{3000}東京 🦀 e\u{301} {}", "ж".repeat(i * 700));
    Record::text(format!("e{i}"), Role::User, body)
}

fn entry_ids(store: &Store) -> Vec<String> {
    let snapshot = store.snapshot().unwrap();
    snapshot
        .records("s", 0..u64::MAX)
        .unwrap()
        .map(|g| g.unwrap().view().unwrap().entry_id().to_owned())
        .collect()
}

fn options(sharing: Sharing) -> StoreOptions {
    StoreOptions { checkpoint_idle: None, sharing, ..StoreOptions::default() }
}

/// The groups of a shared log (each frame: length, sequence number, check, redo), written as a
/// store-alone log of `store_id` holds them: its check is blake3 over the store id, the sequence
/// number, the length and the redo, without the shared log's cycle.
fn as_alone_log(shared: &[u8], store_id: &[u8]) -> Vec<u8> {
    let mut alone = vec![0u8; HEADER_BYTES];
    alone[..16].copy_from_slice(ALONE_MAGIC);
    alone[16..32].copy_from_slice(store_id);
    let mut at = HEADER_BYTES;
    let mut groups = 0;
    while at + FRAME_HEAD_BYTES <= shared.len() {
        let len = u32::from_le_bytes(shared[at..at + 4].try_into().unwrap()) as usize;
        if len == 0 {
            break;
        }
        let seq = &shared[at + 4..at + 12];
        let redo = &shared[at + FRAME_HEAD_BYTES..at + FRAME_HEAD_BYTES + len];
        let mut hasher = blake3::Hasher::new();
        hasher.update(store_id);
        hasher.update(seq);
        hasher.update(&(len as u64).to_le_bytes());
        hasher.update(redo);
        alone.extend_from_slice(&(len as u32).to_le_bytes());
        alone.extend_from_slice(seq);
        alone.extend_from_slice(&hasher.finalize().as_bytes()[..16]);
        alone.extend_from_slice(redo);
        at += FRAME_HEAD_BYTES + len;
        groups += 1;
    }
    assert_eq!(groups, 3, "the shared log holds one group per append");
    alone.resize(alone.len() + 4096, 0);
    alone
}

/// A store whose three records are only in a store-alone log beside it, as a crash of an
/// earlier build's store opened alone left it. Returns the store id.
fn crashed_alone(path: &Path) -> Vec<u8> {
    let store = Store::open(path, options(Sharing::Processes)).unwrap();
    for i in 0..3 {
        store.append("s", Some(i as u64), vec![text(i)]).unwrap();
    }
    // A shared store keeps a short log as it is at close: the records are in its frames only.
    store.close().unwrap();
    let shared = std::fs::read(log_path(path)).unwrap();
    let store_id = shared[16..32].to_vec();
    std::fs::write(log_path(path), as_alone_log(&shared, &store_id)).unwrap();
    let bare = Store::open_with_storage(
        annal_support::disk::SimDisk::from_images(vec![std::fs::read(path).unwrap()]),
        options(Sharing::Exclusive),
    )
    .unwrap();
    let found = bare.snapshot().unwrap().records("s", 0..u64::MAX).map(|records| records.count());
    assert!(found.is_err(), "the store file holds the session without its log: {found:?}");
    store_id
}

/// Opens a crashed store-alone store with `first`, which finds the three records and appends a
/// fourth, then with `then`, which finds all four. Opened alone, the store leaves no log.
fn put_back_then_reopen(dir: &Path, first: Sharing, then: Sharing) {
    let path = dir.join("a.redb");
    crashed_alone(&path);
    let store = Store::open(&path, options(first)).unwrap();
    assert_eq!(entry_ids(&store), ["e0", "e1", "e2"]);
    store.append("s", Some(3), vec![text(3)]).unwrap();
    store.close().unwrap();
    if first == Sharing::Exclusive {
        assert!(!log_path(&path).exists(), "the store opened alone left its log behind");
    }
    let store = Store::open(&path, options(then)).unwrap();
    assert_eq!(entry_ids(&store), ["e0", "e1", "e2", "e3"]);
}

#[test]
fn a_store_alone_log_is_put_back_by_an_open_alone_that_then_leaves_one_file() {
    let dir = tempfile::tempdir().unwrap();
    put_back_then_reopen(dir.path(), Sharing::Exclusive, Sharing::Processes);
}

#[test]
fn a_store_alone_log_is_put_back_by_a_shared_open() {
    let dir = tempfile::tempdir().unwrap();
    put_back_then_reopen(dir.path(), Sharing::Processes, Sharing::Exclusive);
}

#[test]
fn a_store_alone_log_is_put_back_by_a_read_only_open_and_kept_put_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.redb");
    crashed_alone(&path);
    let reader = Store::open_read_only(&path, options(Sharing::Processes)).unwrap();
    assert_eq!(entry_ids(&reader), ["e0", "e1", "e2"]);
    assert!(reader.append("s", Some(3), vec![text(3)]).is_err(), "a read-only open appended");
    drop(reader);
    // Put back into the store file: a store file read without any log holds the records.
    std::fs::remove_file(log_path(&path)).unwrap();
    let store = Store::open(&path, options(Sharing::Exclusive)).unwrap();
    assert_eq!(entry_ids(&store), ["e0", "e1", "e2"]);
}

/// Flips every bit of byte `at` of the store's log; returns the log as it is then.
fn flip_log_byte(path: &Path, at: usize) -> Vec<u8> {
    let mut bytes = std::fs::read(log_path(path)).unwrap();
    bytes[at] ^= 0xff;
    std::fs::write(log_path(path), &bytes).unwrap();
    bytes
}

#[test]
fn a_store_alone_log_whose_header_was_damaged_is_still_put_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.redb");
    crashed_alone(&path);
    flip_log_byte(&path, 0);
    let store = Store::open(&path, options(Sharing::Exclusive)).unwrap();
    assert_eq!(entry_ids(&store), ["e0", "e1", "e2"]);
}

#[test]
fn a_store_alone_log_of_another_store_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.redb");
    let store_id = crashed_alone(&path);
    let mut other = flip_log_byte(&path, 16);
    for sharing in [Sharing::Exclusive, Sharing::Processes] {
        let Err(err) = Store::open(&path, options(sharing)) else {
            panic!("opened with another store's log")
        };
        assert!(matches!(err, OpenError::Corrupted { .. }), "{err:?}");
        assert!(err.to_string().contains("another store"), "{err}");
        assert_eq!(std::fs::read(log_path(&path)).unwrap(), other, "the log was changed");
    }
    other[16] ^= 0xff;
    assert_eq!(other[16..32], store_id[..]);
    std::fs::write(log_path(&path), &other).unwrap();
    let store = Store::open(&path, options(Sharing::Exclusive)).unwrap();
    assert_eq!(entry_ids(&store), ["e0", "e1", "e2"]);
}
