//! The bad-input catalogue's storage items (docs/errors.md): a store written by a newer format
//! version and numbers that must keep their hash through export and import, through the facade
//! (`annal::Annal`) as a user meets them; a disk that fills up or fails during a commit on the
//! engine's `Store`, whose `StorageFile` seam takes the simulated disk of `annal_support::disk`
//! (the facade opens files only). Each gives one clear error, and no acknowledged record is
//! lost.
#![allow(clippy::unwrap_used)]

use std::io;

use annal::error::{ErrorKind, OpenError};
use annal::{Annal, Error, ExportOptions, Options, Snapshot};
use annal_engine::{AppendError, Block, Record, Role, Store, StoreOptions, FORMAT_VERSION};
use annal_formats::{parse_transcript, TranscriptFormat};
use annal_support::disk::{OpKind, SimDisk};

fn options() -> StoreOptions {
    StoreOptions { cache_size_bytes: 4 << 20, ..StoreOptions::default() }
}

/// A record; every third carries a tool output past the blob threshold.
fn record(i: usize) -> Record {
    let mut record = Record::text(format!("e{i}"), Role::Tool, format!("record {i}"));
    if i.is_multiple_of(3) {
        record.blocks.push(Block::ToolResult {
            call_id: format!("c{i}"),
            tool: "Bash".into(),
            is_error: false,
            // Noisy, as real output is, so compression leaves it tens of KB.
            output: {
                let mut rng = annal_support::rng::Rng::new(i as u64);
                (0..4_000).map(|j| format!("line {i}.{j} {:016x}\n", rng.next_u64())).collect()
            },
        });
    }
    record
}

/// The session's records as stored.
fn stored(store: &Store, session: &str) -> Vec<Record> {
    stored_in(&store.snapshot().unwrap(), session)
}

fn stored_in(snapshot: &Snapshot, session: &str) -> Vec<Record> {
    let records = snapshot.records(session, 0..u64::MAX).unwrap();
    records.map(|guard| snapshot.to_record(&guard.unwrap().view().unwrap()).unwrap()).collect()
}

fn assert_verifies(store: &Store) {
    let report = store.verify(None).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
}

#[test]
fn a_store_from_a_newer_format_version() {
    const META: redb::TableDefinition<'_, &str, &[u8]> = redb::TableDefinition::new("meta");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.redb");
    let facade_options = Options { cache_size_bytes: 4 << 20, ..Options::default() };
    let annal = Annal::open_with(&path, &facade_options).unwrap();
    annal.append("s", None, (0..4).map(record).collect()).unwrap();
    assert!(annal.close().unwrap());
    let set_version = |version: u64| {
        let db = redb::Database::open(&path).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(META).unwrap().insert("format_version", version.to_le_bytes().as_slice()).unwrap();
        txn.commit().unwrap();
    };
    // What a later annal would leave behind.
    let newer = u64::from(FORMAT_VERSION) + 1;
    set_version(newer);

    let err = Annal::open_with(&path, &facade_options).unwrap_err();
    assert!(
        matches!(err, Error::Open(OpenError::NewerFormat { found, supported, .. }) if u64::from(found) == newer && supported == FORMAT_VERSION),
        "{err:?}"
    );
    // Not the caller's input, not damage: this annal cannot read it.
    assert_eq!(err.kind(), ErrorKind::Unsupported);
    assert_eq!(
        err.to_string(),
        format!(
            "store {} has format version {newer}, newer than the {FORMAT_VERSION} this annal reads; upgrade annal",
            path.display()
        )
    );
    // The refusal changed nothing: the later annal still finds its version and every record.
    {
        let db = redb::Database::open(&path).unwrap();
        let txn = redb::ReadableDatabase::begin_read(&db).unwrap();
        let meta = txn.open_table(META).unwrap();
        let version = redb::ReadableTable::get(&meta, "format_version").unwrap().unwrap();
        assert_eq!(version.value(), newer.to_le_bytes());
    }
    set_version(u64::from(FORMAT_VERSION));
    let annal = Annal::open_with(&path, &facade_options).unwrap();
    assert_eq!(stored_in(&annal.snapshot().unwrap(), "s"), (0..4).map(record).collect::<Vec<_>>());
    let report = annal.verify(None).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
}

/// Appends `count` records one by one, each acknowledged.
fn fill(store: &Store, count: usize) -> Vec<Record> {
    let records: Vec<Record> = (0..count).map(record).collect();
    for record in &records {
        store.append("s", None, vec![record.clone()]).unwrap();
    }
    records
}

/// Reopens what the disk kept (a crash right now), checks that every acknowledged record is
/// there and `failed` either whole or not at all, and returns the store.
fn reopen(disk: &SimDisk, acknowledged: &[Record], failed: &[Record]) -> Store {
    let store = Store::open_with_storage(SimDisk::from_image(disk.durable_image()), options()).unwrap();
    let records = stored(&store, "s");
    assert_eq!(&records[..acknowledged.len()], acknowledged, "acknowledged records changed or lost");
    let rest = &records[acknowledged.len()..];
    assert!(rest.is_empty() || rest == failed, "a failed batch is partly stored: {} records", rest.len());
    assert_verifies(&store);
    store
}

#[test]
fn a_full_disk_during_a_commit() {
    let disk = SimDisk::new();
    let store = Store::open_with_storage(disk.clone(), options()).unwrap();
    let acknowledged = fill(&store, 12);
    // Room for a little more, not for the next batch of large outputs.
    disk.set_capacity(Some(disk.live_len() + 4096));
    let batch: Vec<Record> = (100..110).map(record).collect();
    let err = store.append("s", None, batch.clone()).unwrap_err();
    match &err {
        AppendError::Io { source } => assert_eq!(source.kind(), io::ErrorKind::StorageFull),
        other => panic!("expected an I/O error, got {other:?}"),
    }
    assert_eq!(err.to_string(), "write failed: no space left on simulated disk");
    // No retry into a disk in an unknown state: writes stop until the store is reopened.
    assert!(store.is_poisoned());
    let again = store.append("s", None, vec![record(200)]).unwrap_err();
    assert!(matches!(again, AppendError::Poisoned));
    assert_eq!(again.to_string(), "a previous I/O error stopped writes to this store; close and reopen it");
    // Reading still works, and shows exactly what was acknowledged.
    assert_eq!(stored(&store, "s"), acknowledged);
    drop(store);

    // Space freed (the reopened disk has no cap), the store takes the batch again.
    let store = reopen(&disk, &acknowledged, &batch);
    store.append("s", None, batch.clone()).unwrap();
    assert_eq!(stored(&store, "s"), [acknowledged, batch].concat());
    assert_verifies(&store);
}

#[test]
fn an_io_error_during_a_commit() {
    for kind in [OpKind::Write, OpKind::Sync] {
        let disk = SimDisk::new();
        // As Linux does: a failed fsync drops the pages it could not write.
        disk.failed_sync_loses_writes();
        let store = Store::open_with_storage(disk.clone(), options()).unwrap();
        let acknowledged = fill(&store, 9);
        disk.fail_op(1, &[kind]);
        let batch: Vec<Record> = (100..104).map(record).collect();
        let err = store.append("s", None, batch.clone()).unwrap_err();
        assert_eq!(disk.injected_failures(), 1, "{kind:?}");
        assert!(matches!(err, AppendError::Io { .. }), "{kind:?}: {err:?}");
        assert_eq!(err.to_string(), "write failed: simulated I/O error", "{kind:?}");
        assert!(matches!(store.append("s", None, vec![record(200)]), Err(AppendError::Poisoned)));
        drop(store);

        let store = reopen(&disk, &acknowledged, &batch);
        // Retrying the batch stores it once, whether or not the failed commit reached the disk.
        store.append("s", None, batch.clone()).unwrap();
        assert_eq!(stored(&store, "s"), [acknowledged, batch].concat(), "{kind:?}");
        assert_verifies(&store);
    }
}

/// Found by `fuzz/export_roundtrip`: a number whose shortest text a best-effort float parser
/// reads back as a neighbouring value changed its record's canonical text, and so its hash,
/// between export and import; the import of the export then failed its hash check.
#[test]
fn full_precision_floats_keep_their_hash_through_export_and_import() {
    let values =
        ["5.140523914039777e-308", "1.9278967522833243e-7", "0.00009073038322028689", "481837.92520110524"];
    let dir = tempfile::tempdir().unwrap();
    let source = Annal::open(dir.path().join("source.redb")).unwrap();
    let records: Vec<Record> = values
        .iter()
        .enumerate()
        .map(|(i, value)| Record {
            entry_id: format!("f{i}"),
            role: Role::Assistant,
            timestamp: None,
            blocks: vec![Block::ToolCall {
                call_id: format!("c{i}"),
                tool: "Bash".into(),
                input: format!("{{\"timeout\":{value}}}"),
                target: String::new(),
            }],
            meta: [("costUSD".to_owned(), (*value).to_owned())].into(),
        })
        .collect();
    source.append("s", None, records).unwrap();
    let mut export = Vec::new();
    assert_eq!(source.export("s", &ExportOptions::default(), &mut export).unwrap().records, 4);
    let parsed = parse_transcript(&export, TranscriptFormat::Annal, "export");
    assert!(parsed.skipped.is_empty());
    // Imported as a user imports it: the import checks each line's claimed hash.
    let target = Annal::open(dir.path().join("target.redb")).unwrap();
    let imported = target.import(&export, "export", None).unwrap();
    assert!(imported.failed.is_empty(), "{:?}", imported.failed);
    assert_eq!((imported.format, imported.records_new), (Some(TranscriptFormat::Annal), 4));
    let stored_of = |annal: &Annal| stored_in(&annal.snapshot().unwrap(), "s");
    assert_eq!(stored_of(&target), stored_of(&source));
    let hashes = |annal: &Annal| -> Vec<_> {
        let snapshot = annal.snapshot().unwrap();
        let records = snapshot.records("s", 0..u64::MAX).unwrap();
        records.map(|guard| guard.unwrap().view().unwrap().hash()).collect()
    };
    assert_eq!(hashes(&target), hashes(&source));
    let claimed: Vec<_> = parsed.sessions[0].claimed_hashes.iter().map(|c| c.unwrap().0).collect();
    assert_eq!(claimed, hashes(&source));
}
