//! Claims travel with the append: a record's claimed sourceOrder, hash and prevHash, and the
//! entryId derived for a record without one, are settled inside the write transaction, and a
//! batch that breaks a claim stores nothing.

use annal_engine::{hash_to_hex, record_from_json, AppendError, PortableRecord, Store, StoreOptions};
use serde_json::{json, Value};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("claims.redb"), StoreOptions::default()).expect("open");
    (dir, store)
}

fn portable(value: Value) -> PortableRecord {
    record_from_json(&value).expect("a valid portable record")
}

fn len(store: &Store, session: &str) -> u64 {
    store.snapshot().expect("snapshot").session(session).expect("session").map_or(0, |s| s.len)
}

/// The stored (hash, prevHash) of each record of `session`, in hex.
fn chain(store: &Store, session: &str) -> Vec<(String, String)> {
    let snapshot = store.snapshot().expect("snapshot");
    let mut out = Vec::new();
    for guard in snapshot.records(session, 0..u64::MAX).expect("records") {
        let guard = guard.expect("record");
        let view = guard.view().expect("view");
        out.push((hash_to_hex(&view.hash()), hash_to_hex(&view.prev_hash())));
    }
    out
}

fn text(id: &str, words: &str) -> Value {
    json!({"entryId": id, "role": "user", "blocks": [{"type": "text", "text": words}]})
}

#[test]
fn a_wrong_source_order_claim_stores_nothing_of_the_batch() {
    let (_dir, store) = store();
    store.append_portable("s", None, vec![portable(text("a", "one"))]).expect("first");
    let mut claimed = text("c", "three");
    claimed["sourceOrder"] = json!(5);
    let batch = vec![portable(text("b", "two")), portable(claimed)];
    match store.append_portable("s", None, batch) {
        Err(AppendError::ClaimMismatch { index, field, claimed, actual, next, .. }) => {
            assert_eq!(
                (index, field, claimed.as_str(), actual.as_str(), next),
                (1, "sourceOrder", "5", "2", 1)
            );
        }
        other => panic!("expected a claim mismatch, got {other:?}"),
    }
    assert_eq!(len(&store, "s"), 1, "the batch's first record must not be stored either");
}

#[test]
fn hash_claims_are_checked_against_what_the_append_writes_and_what_a_retry_finds() {
    let (_dir, source) = store();
    source
        .append_portable("s", None, vec![portable(text("a", "one")), portable(text("b", "two"))])
        .expect("source");
    let stored = chain(&source, "s");

    // A copy that carries the source's hashes reproduces them exactly.
    let (_dir2, copy) = store();
    let with_hashes = |id: &str, words: &str, (hash, prev): &(String, String)| {
        let mut value = text(id, words);
        value["hash"] = json!(hash);
        value["prevHash"] = json!(prev);
        portable(value)
    };
    let batch = vec![with_hashes("a", "one", &stored[0]), with_hashes("b", "two", &stored[1])];
    copy.append_portable("s", None, batch).expect("matching hashes append");
    assert_eq!(chain(&copy, "s"), stored);

    // A retry of the same lines with the same claims is a no-op that passes its checks.
    let retry = copy.append_portable("s", None, vec![with_hashes("b", "two", &stored[1])]).expect("retry");
    assert_eq!((retry.source_orders, retry.appended), (vec![1], 0));

    // A wrong hash refuses the batch, whether the record is new or already stored.
    let wrong = (stored[0].1.clone(), stored[0].1.clone());
    let new = vec![with_hashes("c", "three", &wrong)];
    assert!(matches!(
        copy.append_portable("s", None, new),
        Err(AppendError::ClaimMismatch { field: "hash", .. })
    ));
    let old = vec![with_hashes("a", "one", &(stored[0].0.clone(), stored[1].0.clone()))];
    assert!(matches!(
        copy.append_portable("s", None, old),
        Err(AppendError::ClaimMismatch { field: "prevHash", .. })
    ));
    assert_eq!(len(&copy, "s"), 2);
}

#[test]
fn records_without_an_entry_id_get_the_documented_derived_id() {
    let (_dir, store) = store();
    store.append_portable("s", None, vec![portable(text("a", "one"))]).expect("first");
    // Multi-byte and combining text: the seed is the line's canonical JSON, bytes as they are.
    let line =
        json!({"role": "user", "blocks": [{"type": "text", "text": "naïve\u{3000}日本語 🦀 e\u{301}"}]});
    let receipt = store.append_portable("s", None, vec![portable(line.clone())]).expect("derived");
    assert_eq!(receipt.source_orders, vec![1]);
    let snapshot = store.snapshot().expect("snapshot");
    let guard = snapshot.record("s", 1).expect("read").expect("stored");
    let id = guard.view().expect("view").entry_id().to_owned();

    let seed = annal_engine::canonical_json(&line);
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"annal.cli.entry.v1\0");
    hasher.update(&1u64.to_le_bytes());
    hasher.update(b"s");
    hasher.update(&1u64.to_le_bytes());
    hasher.update(seed.as_bytes());
    assert_eq!(id, format!("e-{}", &hasher.finalize().to_hex()[..32]));

    // Appended again after the session grew, the line takes the next place and so another id.
    let again = store.append_portable("s", None, vec![portable(line)]).expect("again");
    assert_eq!((again.source_orders, again.appended), (vec![2], 1));
    assert!(store.verify(Some("s")).expect("verify").is_ok());
}
