//! A store written by format version 2 (kept in `tests/fixtures/format-v2`: three sessions, a
//! fork, a tool output in the blob table, multi-byte text, and the durability log a process that
//! had it alone left with two groups the store file lacks) opens in this version: the log's
//! groups are put back, the store is upgraded to version 3 and its log becomes the shared log;
//! every session exports byte for byte as version 2 exported it. A process of an older build that
//! still has the store open keeps it from being upgraded, with a clear error.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use annal_engine::{log_path, OpenError, Record, Role, Sharing, Store, StoreOptions, FORMAT_VERSION};
use annal_formats::export_jsonl;
use annal_support::disk::SimDisk;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/format-v2").join(name)
}

fn read_fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap_or_else(|e| panic!("the format-v2 fixture {name} is missing: {e}"))
}

/// A copy of the version 2 store (and, with `log`, the log beside it) in `dir`.
fn copy_of_v2(dir: &Path, log: bool) -> PathBuf {
    let path = dir.join("v2.redb");
    std::fs::write(&path, read_fixture("store.redb")).unwrap();
    if log {
        std::fs::write(log_path(&path), read_fixture("store.redb-log")).unwrap();
    }
    path
}

fn exports_of(store: &Store, second: &str) {
    let snapshot = store.snapshot().unwrap();
    for (session, file) in
        [("first", "first.export.jsonl"), ("first-fork", "first-fork.export.jsonl"), ("second", second)]
    {
        let expected = String::from_utf8(read_fixture(file)).unwrap();
        let mut out = Vec::new();
        export_jsonl(&snapshot, session, false, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), expected, "{session} exports differently");
    }
}

fn format_version(path: &Path) -> u64 {
    let mut builder = redb::Database::builder();
    builder.set_concurrency_mode(redb::ConcurrencyMode::MultiWriter);
    let db = builder.open_read_only(path).unwrap();
    let txn = redb::ReadableDatabase::begin_read(&db).unwrap();
    let meta = txn.open_table(redb::TableDefinition::<&str, &[u8]>::new("meta")).unwrap();
    let value = redb::ReadableTable::get(&meta, "format_version").unwrap().unwrap();
    u64::from_le_bytes(value.value().try_into().unwrap())
}

#[test]
fn a_version_2_store_with_its_log_opens_shared_with_the_log_put_back() {
    assert_eq!(FORMAT_VERSION, 3, "a new version needs its own fixture of the one before");
    let dir = tempfile::tempdir().unwrap();
    let path = copy_of_v2(dir.path(), true);
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    exports_of(&store, "second.with-log.export.jsonl");
    assert!(store.verify(None).unwrap().is_ok());
    store.append("second", Some(3), vec![Record::text("v3-1", Role::User, "after the upgrade ✓")]).unwrap();
    store.close().unwrap();
    assert_eq!(format_version(&path), 3);
    // Read-only, then alone: the same records, the shared log's group included.
    let store = Store::open_read_only(&path, StoreOptions::default()).unwrap();
    assert_eq!(store.snapshot().unwrap().session("second").unwrap().unwrap().len, 4);
    drop(store);
    let alone = StoreOptions { sharing: Sharing::Exclusive, ..StoreOptions::default() };
    let store = Store::open(&path, alone).unwrap();
    assert_eq!(store.snapshot().unwrap().session("second").unwrap().unwrap().len, 4);
    assert!(store.verify(None).unwrap().is_ok());
}

#[test]
fn a_version_2_store_opened_read_only_reads_as_version_2_did() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_of_v2(dir.path(), false);
    let store = Store::open_read_only(&path, StoreOptions::default()).unwrap();
    exports_of(&store, "second.export.jsonl");
    assert!(store.is_read_only());
}

/// Every write and sync of putting the log back and making the shared log, failed in turn: what
/// the disk kept reopens to the store with the log's groups, or without them and the log whole.
#[test]
fn putting_the_log_back_cut_short_at_any_point_loses_nothing() {
    let (store_image, log_image) = (read_fixture("store.redb"), read_fixture("store.redb-log"));
    let machine = || SimDisk::from_images(vec![store_image.clone(), log_image.clone()]);
    let probe = machine();
    drop(Store::open_with_log(probe.clone(), probe.second_file(), StoreOptions::default()).unwrap());
    let total = probe.counts().total();
    assert!(total > 0, "opening wrote nothing");
    for n in 1..=total {
        let disk = machine();
        disk.fail_op(n, &[]);
        drop(Store::open_with_log(disk.clone(), disk.second_file(), StoreOptions::default()));
        for kept in [
            SimDisk::from_images(vec![disk.durable_image(), disk.second_file().durable_image()]),
            SimDisk::from_images(vec![disk.live_image(), disk.second_file().live_image()]),
        ] {
            let store = Store::open_with_log(kept.clone(), kept.second_file(), StoreOptions::default())
                .unwrap_or_else(|e| panic!("fault at operation {n} of {total}: reopening: {e}"));
            exports_of(&store, "second.with-log.export.jsonl");
            assert!(store.verify(None).unwrap().is_ok(), "fault at operation {n} of {total}");
        }
    }
}

#[test]
fn a_process_of_an_older_build_with_the_store_open_keeps_it_from_being_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_of_v2(dir.path(), false);
    // What a version 2 process holds: the file open in redb's multi-writer mode.
    let mut builder = redb::Database::builder();
    builder.set_concurrency_mode(redb::ConcurrencyMode::MultiWriter);
    let older = builder.create(&path).unwrap();
    let options = StoreOptions { write_wait: Duration::from_millis(300), ..StoreOptions::default() };
    match Store::open(&path, options.clone()) {
        Err(err @ OpenError::AlreadyOpen { .. }) => {
            let line = err.to_string();
            assert!(line.contains("v2.redb") && line.contains("upgrade"), "{line}");
        }
        other => panic!("expected AlreadyOpen, got {other:?}"),
    }
    assert_eq!(format_version(&path), 2, "the store was upgraded under an older process");
    drop(older);
    let store = Store::open(&path, options).unwrap();
    exports_of(&store, "second.export.jsonl");
    drop(store);
    assert_eq!(format_version(&path), 3);
}
