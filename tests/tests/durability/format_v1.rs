//! A store written by format version 1 (kept in `tests/fixtures/format-v1`: three sessions, a
//! fork, a compaction receipt, a tool output in the blob table, multi-byte text) opens in this
//! version, upgraded in place: every session exports byte for byte as version 1 exported it,
//! verify is clean, and the store takes appends in both sharing modes.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use annal_engine::{Block, Record, Role, Sharing, Store, StoreOptions, FORMAT_VERSION};
use annal_formats::export_jsonl;
use annal_support::disk::{CrashKeep, SimDisk};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/format-v1").join(name)
}

/// A copy of the version 1 store in a fresh folder (opening upgrades the file it opens).
fn copy_of_v1(dir: &Path) -> PathBuf {
    let path = dir.join("v1.redb");
    std::fs::copy(fixture("store.redb"), &path)
        .unwrap_or_else(|e| panic!("the format-v1 fixture is missing: {e}"));
    path
}

fn check_exports(store: &Store) {
    let snapshot = store.snapshot().unwrap();
    for session in ["first", "first-fork", "second"] {
        let expected = std::fs::read_to_string(fixture(&format!("{session}.export.jsonl"))).unwrap();
        let mut out = Vec::new();
        export_jsonl(&snapshot, session, false, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), expected, "{session} exports differently");
    }
}

#[test]
fn a_version_1_store_opens_upgraded_and_reads_as_it_did() {
    assert_eq!(FORMAT_VERSION, 3, "format_v2.rs keeps the fixture of the version before this one");
    let dir = tempfile::tempdir().unwrap();
    let path = copy_of_v1(dir.path());
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    let lens: Vec<(String, u64)> =
        store.snapshot().unwrap().sessions().unwrap().into_iter().map(|s| (s.name, s.len)).collect();
    assert_eq!(lens, [("first".to_owned(), 5), ("first-fork".to_owned(), 3), ("second".to_owned(), 1)]);
    let report = store.verify(None).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.blobs, 1);
    check_exports(&store);
    // The version 1 blob (stored as it was) reads back whole.
    let snapshot = store.snapshot().unwrap();
    let tool = snapshot.record("first", 2).unwrap().unwrap();
    let record = snapshot.to_record(&tool.view().unwrap()).unwrap();
    let output = record.blocks.iter().find_map(|block| match block {
        Block::ToolResult { output, .. } => Some(output.as_str()),
        _ => None,
    });
    let output = output.unwrap_or_else(|| panic!("no tool result in {:?}", record.blocks));
    assert_eq!(output.lines().count(), 900);
    assert!(
        output.ends_with("línea 899: 東京 ☕ résumé e\u{301} — output 181"),
        "the blob's text is not whole"
    );
    drop(tool);
    drop(snapshot);
    store.append("first", Some(5), vec![Record::text("v2-1", Role::User, "after the upgrade ✓")]).unwrap();
    store.close().unwrap();

    // Reopened alone, through the durability log, it still reads the same and takes appends.
    let options = StoreOptions { sharing: Sharing::Exclusive, ..StoreOptions::default() };
    let store = Store::open(&path, options).unwrap();
    store.append("second", Some(1), vec![Record::text("v2-2", Role::User, "東京 again")]).unwrap();
    assert_eq!(store.snapshot().unwrap().session("first").unwrap().unwrap().len, 6);
    assert!(store.verify(None).unwrap().is_ok());
    store.close().unwrap();
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(store.snapshot().unwrap().session("second").unwrap().unwrap().len, 2);
}

/// An I/O error, or a crash, at every write and sync of the upgrade: the store that reopens
/// from what the disk kept reads exactly as version 1 did.
#[test]
fn an_upgrade_cut_short_at_any_point_loses_nothing() {
    let image = std::fs::read(fixture("store.redb")).unwrap();
    let probe = SimDisk::from_image(image.clone());
    drop(Store::open_with_storage(probe.clone(), StoreOptions::default()).unwrap());
    let total = probe.counts().total();
    assert!(total > 0, "the upgrade wrote nothing");
    for n in 1..=total {
        let disk = SimDisk::from_image(image.clone());
        disk.fail_op(n, &[]);
        let opened = Store::open_with_storage(disk.clone(), StoreOptions::default());
        drop(opened);
        for kept in [disk.durable_image(), disk.live_image()] {
            let store = Store::open_with_storage(SimDisk::from_image(kept), StoreOptions::default())
                .unwrap_or_else(|e| panic!("fault at operation {n} of {total}: reopening: {e}"));
            check_exports(&store);
            assert!(store.verify(None).unwrap().is_ok(), "fault at operation {n} of {total}");
        }
    }
    let syncs = probe.counts().syncs;
    for k in 1..=syncs {
        let disk = SimDisk::from_image(image.clone());
        disk.crash_at_sync(k, CrashKeep::RandomSubset(k));
        drop(Store::open_with_storage(disk.clone(), StoreOptions::default()));
        let kept = disk.crash_image().unwrap_or_else(|| disk.durable_image());
        let store = Store::open_with_storage(SimDisk::from_image(kept), StoreOptions::default())
            .unwrap_or_else(|e| panic!("crash at sync {k} of {syncs}: reopening: {e}"));
        check_exports(&store);
    }
}
