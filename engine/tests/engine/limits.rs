//! Named limits and malformed records: each is a typed error and stores nothing.
#![allow(clippy::unwrap_used)]

use annal_engine::{AppendError, Block, Limits, Record, Role, Store, StoreOptions};

fn store_with(limits: Limits) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let options = StoreOptions { limits, ..StoreOptions::default() };
    let store = Store::open(dir.path().join("limits.redb"), options).expect("open");
    (dir, store)
}

fn len(store: &Store, session: &str) -> Option<u64> {
    store.snapshot().expect("snapshot").session(session).expect("session").map(|s| s.len)
}

#[test]
fn each_limit_is_a_typed_error_and_stores_nothing() {
    let limits = Limits {
        record_size_bytes_max: 1_000,
        batch_records_max: 3,
        batch_size_bytes_max: 2_500,
        blocks_per_record_max: 2,
        entry_id_bytes_max: 16,
        session_name_bytes_max: 8,
    };
    let (_dir, store) = store_with(limits);
    store.append("s", None, vec![Record::text("ok", Role::User, "fine")]).expect("first append");

    let too_big = Record::text("big", Role::User, "x".repeat(1_001));
    let err = store.append("s", None, vec![too_big]).unwrap_err();
    assert!(matches!(err, AppendError::LimitExceeded { limit: 1_000, .. }), "{err}");

    let many: Vec<Record> = (0..4).map(|i| Record::text(format!("m{i}"), Role::User, "x")).collect();
    let err = store.append("s", None, many).unwrap_err();
    assert!(matches!(err, AppendError::LimitExceeded { limit: 3, actual: 4, .. }), "{err}");

    let heavy: Vec<Record> =
        (0..3).map(|i| Record::text(format!("h{i}"), Role::User, "y".repeat(900))).collect();
    let err = store.append("s", None, heavy).unwrap_err();
    assert!(matches!(err, AppendError::LimitExceeded { limit: 2_500, .. }), "{err}");

    let mut blocky = Record::text("blocks", Role::Assistant, "a");
    blocky.blocks.push(Block::Text { text: "b".into() });
    blocky.blocks.push(Block::Thinking { text: "c".into() });
    let err = store.append("s", None, vec![blocky]).unwrap_err();
    assert!(matches!(err, AppendError::LimitExceeded { limit: 2, actual: 3, .. }), "{err}");

    let err = store.append("s", None, vec![Record::text("x".repeat(17), Role::User, "t")]).unwrap_err();
    assert!(matches!(err, AppendError::InvalidRecord { .. }), "{err}");

    let err = store.append("a-long-name", None, vec![]).unwrap_err();
    assert!(matches!(err, AppendError::InvalidSessionName { .. }), "{err}");

    assert_eq!(len(&store, "s"), Some(1), "failed appends stored nothing");
    assert_eq!(len(&store, "a-long-name"), None);
    assert!(store.verify(None).expect("verify").is_ok());
}

#[test]
fn malformed_records_are_refused_with_their_entry() {
    let (_dir, store) = store_with(Limits::default());
    let cases: Vec<(Record, &str)> = vec![
        (Record::text("", Role::User, "no id"), "entryId"),
        (Record { timestamp: Some("last tuesday".into()), ..Record::text("t", Role::User, "x") }, "RFC 3339"),
        (
            Record {
                meta: [("k".to_owned(), "{not json".to_owned())].into_iter().collect(),
                ..Record::text("m", Role::User, "x")
            },
            "not JSON",
        ),
    ];
    for (record, expected) in cases {
        let err = store.append("s", None, vec![record]).unwrap_err();
        assert!(matches!(err, AppendError::InvalidRecord { .. }), "{err}");
        assert!(err.to_string().contains(expected), "{err} should mention {expected}");
    }
    let err = store.append("", None, vec![]).unwrap_err();
    assert!(matches!(err, AppendError::InvalidSessionName { .. }), "{err}");
    assert_eq!(len(&store, "s"), None);
}

#[test]
fn empty_batch_creates_a_session_and_checks_expected_next() {
    let (_dir, store) = store_with(Limits::default());
    let receipt = store.append("empty", Some(0), vec![]).expect("create");
    assert_eq!((receipt.appended, receipt.next), (0, 0));
    assert_eq!(len(&store, "empty"), Some(0));
    let err = store.append("empty", Some(5), vec![]).unwrap_err();
    assert!(matches!(err, AppendError::Conflict { expected: 5, actual: 0, .. }), "{err}");
}

#[test]
fn duplicate_ids_inside_one_batch() {
    let (_dir, store) = store_with(Limits::default());
    let same = Record::text("d", Role::User, "same");
    let receipt = store.append("s", None, vec![same.clone(), same]).expect("same content twice");
    assert_eq!(receipt.source_orders, vec![0, 0]);
    assert_eq!(receipt.appended, 1);
    let err = store
        .append("s2", None, vec![Record::text("e", Role::User, "one"), Record::text("e", Role::User, "two")])
        .unwrap_err();
    assert!(matches!(err, AppendError::DuplicateInBatch { first: 0, again: 1, .. }), "{err}");
    let err = store.append("s2", None, vec![Record::text("d", Role::User, "same")]).unwrap_err();
    assert!(matches!(err, AppendError::EntryInOtherSession { .. }), "{err}");
    assert_eq!(len(&store, "s2"), None);
}

/// A batch of 300 records with long real-world text: large enough to be prepared on every core.
fn large_batch() -> Vec<Record> {
    let line = "naïve café\u{3000}記録を検索 🦀 e\u{301} tool output ".repeat(40);
    (0..300).map(|i| Record::text(format!("big-{i}"), Role::Assistant, format!("{i} {line}"))).collect()
}

#[test]
fn a_large_batch_reports_its_first_bad_record_as_one_record_at_a_time_would() {
    let (_dir, store) = store_with(Limits::default());
    let mut batch = large_batch();
    batch[217].timestamp = Some("yesterday".into());
    batch[41].entry_id = String::new();
    batch[290].timestamp = Some("soon".into());
    let err = store.append("s", None, batch).unwrap_err();
    assert!(matches!(err, AppendError::InvalidRecord { index: 41, .. }), "{err}");

    // A bad record before the first one over a limit is the error; after it, the limit is.
    let limits = Limits { record_size_bytes_max: 20_000, ..Limits::default() };
    let (_dir, store) = store_with(limits);
    let mut batch = large_batch();
    batch[150] = Record::text("huge", Role::Tool, "🦀".repeat(6_000));
    batch[260].entry_id = String::new();
    let err = store.append("s", None, batch.clone()).unwrap_err();
    assert!(matches!(err, AppendError::LimitExceeded { limit: 20_000, .. }), "{err}");
    batch[90].timestamp = Some("13:45 tomorrow".into());
    let err = store.append("s", None, batch).unwrap_err();
    assert!(matches!(err, AppendError::InvalidRecord { index: 90, .. }), "{err}");

    let receipt = store.append("s", None, large_batch()).expect("a good large batch");
    assert_eq!(receipt.appended, 300);
    assert_eq!(len(&store, "s"), Some(300));
    assert!(store.verify(None).expect("verify").is_ok());
}
