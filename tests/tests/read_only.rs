//! A store opened read-only: reads see everything committed, including what a writer in
//! another handle commits later; appends, forks and compactions are refused with one error;
//! the file's bytes do not change at open or close; a missing file is an error, never created;
//! a store that needs a writable open first (an older format to upgrade) is opened writable.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use annal_engine::{AppendError, ForkError, Record, Role, Store, StoreOptions};

fn fixture_v1() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/format-v1/store.redb")
}

fn written(path: &Path) {
    let store = Store::open(path, StoreOptions::default()).unwrap();
    let texts = ["first 日本語\u{2009}text", "second 🦀 e\u{301}", "third"];
    let records =
        texts.iter().enumerate().map(|(i, t)| Record::text(format!("e{i}"), Role::User, *t)).collect();
    store.append("s", None, records).unwrap();
    store.close().unwrap();
}

#[test]
fn reads_without_writing_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    written(&path);
    let before = std::fs::read(&path).unwrap();
    let store = Store::open_read_only(&path, StoreOptions::default()).unwrap();
    assert!(store.is_read_only());
    let snapshot = store.snapshot().unwrap();
    assert_eq!(snapshot.position_end().unwrap(), 3);
    assert_eq!(snapshot.session("s").unwrap().map(|s| s.len), Some(3));
    let err = store.append("s", None, vec![Record::text("e9", Role::User, "no")]).unwrap_err();
    assert!(matches!(err, AppendError::ReadOnly), "{err:?}");
    assert_eq!(err.to_string(), "the store was opened read-only");
    assert!(matches!(store.fork("s", 1, "f").unwrap_err(), ForkError::ReadOnly));
    assert!(store.verify(None).unwrap().is_ok());
    drop(snapshot);
    store.close().unwrap();
    assert!(std::fs::read(&path).unwrap() == before, "the store file changed");

    // A writer's later commits are seen by a read-only handle opened beside it.
    let reader = Store::open_read_only(&path, StoreOptions::default()).unwrap();
    let writer = Store::open(&path, StoreOptions::default()).unwrap();
    writer.append("s", None, vec![Record::text("e3", Role::Assistant, "fourth")]).unwrap();
    assert_eq!(reader.snapshot().unwrap().position_end().unwrap(), 4);
    writer.close().unwrap();
    reader.close().unwrap();
}

#[test]
fn a_missing_or_empty_file_is_an_error_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.redb");
    let err = Store::open_read_only(&missing, StoreOptions::default()).unwrap_err();
    assert!(err.to_string().contains("missing.redb"), "{err}");
    assert!(!missing.exists());
    let empty = dir.path().join("empty.redb");
    std::fs::write(&empty, b"").unwrap();
    assert!(Store::open_read_only(&empty, StoreOptions::default()).is_err());
}

#[test]
fn a_store_that_needs_writing_first_is_opened_writable() {
    let dir = tempfile::tempdir().unwrap();
    // An older format: upgraded by a writable open, then writable.
    let old = dir.path().join("v1.redb");
    std::fs::copy(fixture_v1(), &old).unwrap_or_else(|e| panic!("the format-v1 fixture is missing: {e}"));
    let store = Store::open_read_only(&old, StoreOptions::default()).unwrap();
    assert!(!store.is_read_only());
    store.close().unwrap();
    let store = Store::open_read_only(&old, StoreOptions::default()).unwrap();
    assert!(store.is_read_only(), "upgraded once, it opens read-only");
    store.close().unwrap();
}
