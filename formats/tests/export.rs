//! Export round trips: JSONL → import reproduces identical hashes; Markdown and redaction.
#![allow(clippy::unwrap_used)]

use annal_engine::{record_from_json, Block, Record, Role, Store, StoreOptions};
use annal_formats::{export_jsonl, export_markdown, parse_export_header};

fn records() -> Vec<Record> {
    let mut meta = std::collections::BTreeMap::new();
    meta.insert("source".to_owned(), r#"{"z": [1, 2.5, "x"], "a": null}"#.to_owned());
    vec![
        Record {
            timestamp: Some("2026-03-01T10:00:00.123Z".into()),
            meta,
            ..Record::text("u1", Role::User, "fix it")
        },
        Record {
            entry_id: "a1".into(),
            role: Role::Assistant,
            timestamp: None,
            blocks: vec![
                Block::Thinking { text: "let me look".into() },
                Block::ToolCall {
                    call_id: "c1".into(),
                    tool: "Bash".into(),
                    input: r#"{ "command": "cargo test",  "timeout": 600 }"#.into(),
                    target: String::new(),
                },
                Block::ToolCall {
                    call_id: "c2".into(),
                    tool: "apply_patch".into(),
                    input: "*** Begin Patch\n*** End Patch".into(),
                    target: String::new(),
                },
            ],
            meta: Default::default(),
        },
        Record {
            entry_id: "t1".into(),
            role: Role::Tool,
            timestamp: None,
            blocks: vec![
                Block::ToolResult {
                    call_id: "c1".into(),
                    tool: "Bash".into(),
                    is_error: true,
                    output: "error[E0308]\n".repeat(5_000),
                },
                Block::ToolResult {
                    call_id: "c2".into(),
                    tool: String::new(),
                    is_error: false,
                    output: "ok".into(),
                },
                Block::Blob {
                    media_type: "image/png".into(),
                    data: vec![0x89, b'P', b'N', b'G', 0, 1, 2, 3],
                },
            ],
            meta: Default::default(),
        },
        Record::text("u2", Role::User, "my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123 and `code`"),
    ]
}

#[test]
fn jsonl_export_reimports_with_identical_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let source = Store::open(dir.path().join("a.redb"), StoreOptions::default()).unwrap();
    source.append("s", None, records()).unwrap();
    source.fork("s", 2, "child").unwrap();
    source.append("child", None, vec![Record::text("c1x", Role::User, "child turn")]).unwrap();
    let snapshot = source.snapshot().unwrap();

    for session in ["s", "child"] {
        let mut out = Vec::new();
        let summary = export_jsonl(&snapshot, session, false, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        let header = parse_export_header(lines.next().unwrap()).unwrap();
        assert_eq!(header.session, session);
        let parsed: Vec<_> =
            lines.map(|l| record_from_json(&serde_json::from_str(l).unwrap()).unwrap()).collect();
        assert_eq!(parsed.len() as u64, summary.records);

        let target =
            Store::open(dir.path().join(format!("{session}.redb")), StoreOptions::default()).unwrap();
        let receipt =
            target.append(session, Some(0), parsed.iter().map(|p| p.record.clone()).collect()).unwrap();
        assert_eq!(receipt.appended, parsed.len());
        let reimported = target.snapshot().unwrap();
        for (claimed, guard) in parsed.iter().zip(reimported.records(session, 0..u64::MAX).unwrap()) {
            let guard = guard.unwrap();
            let view = guard.view().unwrap();
            assert_eq!(Some(view.hash()), claimed.hash, "hash of {}", view.entry_id());
            assert_eq!(Some(view.prev_hash()), claimed.prev_hash);
            assert_eq!(Some(view.source_order()), claimed.source_order);
        }
        assert_eq!(
            reimported.session(session).unwrap().unwrap().head,
            snapshot.session(session).unwrap().unwrap().head
        );
        assert!(target.verify(None).unwrap().is_ok());
    }
}

#[test]
fn redacted_export_masks_secrets_and_drops_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("r.redb"), StoreOptions::default()).unwrap();
    store.append("s", None, records()).unwrap();
    let snapshot = store.snapshot().unwrap();
    let mut out = Vec::new();
    export_jsonl(&snapshot, "s", true, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("sk-proj-abc"), "{text}");
    assert!(text.contains("[redacted:openai-key]"));
    for line in text.lines().skip(1) {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(record.get("hash").is_none() && record.get("prevHash").is_none(), "{line}");
    }
    assert!(parse_export_header(text.lines().next().unwrap()).unwrap().redacted);
    // The stored record is unchanged.
    let (_, guard) = snapshot.record_by_entry("u2").unwrap();
    let record = snapshot.to_record(&guard.view().unwrap()).unwrap();
    assert!(matches!(&record.blocks[0], Block::Text { text } if text.contains("sk-proj-abc")));
}

#[test]
fn markdown_export_is_readable() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("m.redb"), StoreOptions::default()).unwrap();
    store.append("s", None, records()).unwrap();
    let mut out = Vec::new();
    export_markdown(&store.snapshot().unwrap(), "s", true, &mut out).unwrap();
    let md = String::from_utf8(out).unwrap();
    assert!(md.starts_with("# Session `s`"));
    assert!(md.contains("**Tool call** `Bash` → `cargo test`"), "{md}");
    assert!(md.contains("**error** ✗"));
    assert!(md.contains("<details><summary>5000 lines</summary>"));
    assert!(md.contains("[redacted:openai-key]"));
    assert!(md.contains("image/png, 8 bytes"));
}
