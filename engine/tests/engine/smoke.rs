//! Smoke test of the engine's basic round trip: append, read, fork, verify, reopen.
#![allow(clippy::unwrap_used)]

use annal_engine::{Block, Record, Role, Store, StoreOptions};

#[test]
fn append_read_fork_verify_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    {
        let store = Store::open(&path, StoreOptions::default()).unwrap();
        let big = "x".repeat(100_000);
        let records = vec![
            Record::text("a", Role::User, "hello"),
            Record {
                entry_id: "b".into(),
                role: Role::Assistant,
                timestamp: Some("2026-01-01T00:00:00Z".into()),
                blocks: vec![
                    Block::Text { text: "ok".into() },
                    Block::ToolCall {
                        call_id: "c1".into(),
                        tool: "Read".into(),
                        input: r#"{"file_path":"/a.rs"}"#.into(),
                        target: String::new(),
                    },
                ],
                meta: Default::default(),
            },
            Record {
                entry_id: "c".into(),
                role: Role::Tool,
                timestamp: None,
                blocks: vec![Block::ToolResult {
                    call_id: "c1".into(),
                    tool: "Read".into(),
                    is_error: false,
                    output: big.clone(),
                }],
                meta: [("k".to_string(), "{\"z\":1, \"a\":2}".to_string())].into_iter().collect(),
            },
        ];
        let receipt = store.append("s1", Some(0), records.clone()).unwrap();
        assert_eq!(receipt.source_orders, vec![0, 1, 2]);
        // idempotent
        let again = store.append("s1", None, records.clone()).unwrap();
        assert_eq!(again.source_orders, vec![0, 1, 2]);
        assert_eq!(again.appended, 0);
        // conflict
        let err = store.append("s1", Some(1), vec![Record::text("d", Role::User, "x")]).unwrap_err();
        assert!(matches!(err, annal_engine::AppendError::Conflict { actual: 3, .. }), "{err}");
        let fork = store.fork("s1", 2, "s2").unwrap();
        assert_eq!(fork.len, 2);
        store.append("s2", Some(2), vec![Record::text("e", Role::User, "child")]).unwrap();
        let snap = store.snapshot().unwrap();
        let ids: Vec<String> = snap
            .records("s2", 0..u64::MAX)
            .unwrap()
            .map(|g| g.unwrap().view().unwrap().entry_id().to_owned())
            .collect();
        assert_eq!(ids, vec!["a", "b", "e"]);
        let (loc, guard) = snap.record_by_entry("c").unwrap();
        assert_eq!(loc.session, "s1");
        let view = guard.view().unwrap();
        let rec = snap.to_record(&view).unwrap();
        match &rec.blocks[0] {
            Block::ToolResult { output, .. } => assert_eq!(output, &big),
            _ => panic!(),
        }
        assert_eq!(rec.meta["k"], "{\"a\":2,\"z\":1}");
        let report = store.verify(None).unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
        assert_eq!(report.records, 4);
        assert_eq!(snap.positions(0, 100).unwrap().len(), 4);
        let _ = view;
        drop(guard);
        drop(snap);
        store.close().unwrap();
    }
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.sessions().unwrap().len(), 2);
    assert!(store.verify(None).unwrap().is_ok());
}

#[test]
fn commits_advance_the_watermark_and_the_feed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("w.redb"), StoreOptions::default()).unwrap();
    // Creation leaves the store and, opened shared, the log every process that opens it shares.
    let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, vec![std::ffi::OsString::from("w.redb"), std::ffi::OsString::from("w.redb-log")]);
    let feed = store.commit_feed();
    assert_eq!(store.durable_position().current(), 0);
    store
        .append("s", None, vec![Record::text("a", Role::User, "1"), Record::text("b", Role::User, "2")])
        .unwrap();
    assert_eq!(store.durable_position().current(), 2);
    assert_eq!(feed.next(std::time::Duration::from_secs(5)), Some(2));
    let waiter = {
        let watermark = store.durable_position().clone();
        std::thread::spawn(move || watermark.wait_for(3, std::time::Duration::from_secs(30)))
    };
    store.append("s", None, vec![Record::text("c", Role::User, "3")]).unwrap();
    assert_eq!(waiter.join().unwrap(), 3);
    assert_eq!(store.snapshot().unwrap().position_end().unwrap(), 3);
    // A reopened store starts from what is committed.
    drop(store);
    let store = Store::open(dir.path().join("w.redb"), StoreOptions::default()).unwrap();
    assert_eq!(store.durable_position().current(), 3);
}
