//! A store opened read-only, through the facade (`annal::Options { read_only: true, .. }`) where
//! a user opens it: reads see everything committed, including what a writer in another handle
//! commits later; appends and forks are refused with one error; the file's bytes do not change
//! at open or close; a missing file is an error, never created. A store that needs a writable
//! open first (an older format to upgrade) is upgraded underneath and still refuses writes;
//! that test also opens the engine's `Store`, to see the upgraded file opened without a write.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use annal::error::{AppendError, ErrorKind, ForkError};
use annal::{Annal, Error, Options, Record, Role, SearchRequest};
use annal_engine::{Store, StoreOptions};

fn fixture_v1() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/format-v1/store.redb")
}

fn read_only() -> Options {
    Options { read_only: true, ..Options::default() }
}

fn written(path: &Path) {
    let annal = Annal::open(path).unwrap();
    let texts = ["first 日本語\u{2009}text", "second 🦀 e\u{301}", "third"];
    let records =
        texts.iter().enumerate().map(|(i, t)| Record::text(format!("e{i}"), Role::User, *t)).collect();
    annal.append("s", None, records).unwrap();
    assert!(annal.close().unwrap());
}

#[test]
fn reads_without_writing_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    written(&path);
    let before = std::fs::read(&path).unwrap();
    let annal = Annal::open_with(&path, &read_only()).unwrap();
    assert!(annal.options().read_only);
    let snapshot = annal.snapshot().unwrap();
    assert_eq!(snapshot.position_end().unwrap(), 3);
    assert_eq!(snapshot.session("s").unwrap().map(|s| s.len), Some(3));
    // Reading back and searching need no write to the store file.
    let original = annal.get("e1#0", None).unwrap();
    assert_eq!(original.blocks[0].text.as_deref(), Some("second 🦀 e\u{301}"));
    let hits = annal.search(&SearchRequest::new("日本語")).unwrap();
    assert_eq!(hits.iter().map(|h| h.id()).collect::<Vec<_>>(), vec!["e0#0"]);
    let err = annal.append("s", None, vec![Record::text("e9", Role::User, "no")]).unwrap_err();
    assert!(matches!(err, Error::Append(AppendError::ReadOnly)), "{err:?}");
    assert_eq!(err.to_string(), "the store was opened read-only");
    assert_eq!(err.kind(), ErrorKind::ReadOnly);
    let err = annal.fork("s", 1, "f").unwrap_err();
    assert!(matches!(err, Error::Fork(ForkError::ReadOnly)), "{err:?}");
    assert_eq!(err.kind(), ErrorKind::ReadOnly);
    assert!(annal.sessions().unwrap().iter().all(|s| s.name != "f"), "a refused fork was stored");
    assert!(annal.verify(None).unwrap().is_ok());
    drop(snapshot);
    assert!(annal.close().unwrap());
    assert!(std::fs::read(&path).unwrap() == before, "the store file changed");

    // A writer's later commits are seen by a read-only handle opened beside it.
    let reader = Annal::open_with(&path, &read_only()).unwrap();
    let writer = Annal::open(&path).unwrap();
    writer.append("s", None, vec![Record::text("e3", Role::Assistant, "fourth ☕")]).unwrap();
    assert_eq!(reader.snapshot().unwrap().position_end().unwrap(), 4);
    assert_eq!(reader.get("e3", None).unwrap().blocks[0].text.as_deref(), Some("fourth ☕"));
    writer.close().unwrap();
    reader.close().unwrap();
}

#[test]
fn a_missing_or_empty_file_is_an_error_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.redb");
    let err = Annal::open_with(&missing, &read_only()).unwrap_err();
    assert!(matches!(err, Error::Open(_)), "{err:?}");
    assert!(err.to_string().contains("missing.redb"), "{err}");
    assert!(!missing.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "something was created");
    let empty = dir.path().join("empty.redb");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(Annal::open_with(&empty, &read_only()), Err(Error::Open(_))));
}

#[test]
fn a_store_that_needs_writing_first_is_upgraded_and_still_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    // An older format: upgraded by a writable open underneath, yet the handle refuses writes,
    // through the facade as through the engine.
    let old = dir.path().join("v1.redb");
    std::fs::copy(fixture_v1(), &old).unwrap_or_else(|e| panic!("the format-v1 fixture is missing: {e}"));
    let annal = Annal::open_with(&old, &read_only()).unwrap();
    let late = Record::text("late", Role::User, "nach dem Upgrade 🦀 日本");
    let refused = annal.append("s", None, vec![late.clone()]).unwrap_err();
    assert!(matches!(refused, Error::Append(AppendError::ReadOnly)), "{refused:?}");
    assert_eq!(refused.kind(), ErrorKind::ReadOnly);
    annal.close().unwrap();
    let store = Store::open_read_only(&old, StoreOptions::default()).unwrap();
    assert!(store.is_read_only());
    assert!(matches!(store.append("s", None, vec![late]), Err(AppendError::ReadOnly)));
    store.close().unwrap();
    // Upgraded once, it opens read-only without writing a byte.
    let upgraded = std::fs::read(&old).unwrap();
    let store = Store::open_read_only(&old, StoreOptions::default()).unwrap();
    assert!(store.is_read_only());
    store.close().unwrap();
    assert!(std::fs::read(&old).unwrap() == upgraded, "a current store opened read-only is not written");
}
