//! Appends guarded by the lengths their writer read of other sessions
//! (`Store::append_portable_if_unchanged`): checked inside the write transaction, on both ways a
//! group commits (a frame of the shared log, and a group large enough to go to the store file
//! directly), so of two writers that each read the other's session before appending to their
//! own, never both append.

use std::sync::{Arc, Barrier};

use annal_engine::{record_from_json, AppendError, PortableRecord, Store, StoreOptions};
use serde_json::json;

fn store() -> (tempfile::TempDir, Arc<Store>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("guards.redb"), StoreOptions::default()).expect("open");
    (dir, Arc::new(store))
}

fn record(id: &str, words: &str) -> PortableRecord {
    let value = json!({"entryId": id, "role": "user", "blocks": [{"type": "text", "text": words}]});
    record_from_json(&value).expect("a valid portable record")
}

fn len(store: &Store, session: &str) -> Option<u64> {
    store.snapshot().expect("snapshot").session(session).expect("session").map(|s| s.len)
}

fn guard(pairs: &[(&str, Option<u64>)]) -> Vec<(String, Option<u64>)> {
    pairs.iter().map(|(name, length)| ((*name).to_owned(), *length)).collect()
}

#[test]
fn an_append_happens_only_while_every_guarded_session_is_as_read() {
    let (_dir, store) = store();
    let read = guard(&[("分支 a", None), ("分支 a~g1", None)]);
    let receipt =
        store.append_portable_if_unchanged("分支 a", Some(0), vec![record("u1", "日本語 🚀")], read);
    assert_eq!(receipt.expect("nothing changed").next, 1);

    // Another writer made the next generation: a guard that read it as missing is refused.
    store.fork("分支 a", 1, "分支 a~g1").expect("fork");
    let stale = guard(&[("分支 a", Some(1)), ("分支 a~g1", None)]);
    match store.append_portable_if_unchanged("分支 a", Some(1), vec![record("u2", "cafe\u{301}")], stale) {
        Err(err @ AppendError::Changed { .. }) => {
            assert!(
                matches!(&err, AppendError::Changed { session, expected: None, actual: Some(1) } if session == "分支 a~g1")
            );
            assert_eq!(
                err.to_string(),
                "conflict: session \"分支 a~g1\" changed since it was read (no session then, 1 records now); \
                 nothing was appended"
            );
            assert_eq!(err.kind(), annal_engine::ErrorKind::Conflict);
        }
        other => panic!("expected the guard to refuse, got {other:?}"),
    }
    assert_eq!(len(&store, "分支 a"), Some(1), "nothing of the refused batch is stored");

    // Read again, the same append goes through.
    let fresh = guard(&[("分支 a", Some(1)), ("分支 a~g1", Some(1)), ("分支 a~g2", None)]);
    let receipt =
        store.append_portable_if_unchanged("分支 a", Some(1), vec![record("u2", "cafe\u{301}")], fresh);
    assert_eq!(receipt.expect("read again").source_orders, vec![1]);
}

/// A group with more than a frame holds is written to the store file in one transaction of its
/// own: the guard is checked there too.
#[test]
fn a_group_too_large_for_the_log_is_guarded_as_well() {
    let (_dir, store) = store();
    store.append_portable("other", None, vec![record("o1", "שלום")]).expect("other");
    let long = "👩🏽‍💻 a very long line ".repeat(80_000);
    let stale = guard(&[("big", None), ("other", Some(0))]);
    let refused = store.append_portable_if_unchanged("big", Some(0), vec![record("b1", &long)], stale);
    assert!(matches!(refused, Err(AppendError::Changed { actual: Some(1), .. })), "{refused:?}");
    assert_eq!(len(&store, "big"), None);
    let read = guard(&[("big", None), ("other", Some(1))]);
    let receipt = store.append_portable_if_unchanged("big", Some(0), vec![record("b1", &long)], read);
    assert_eq!(receipt.expect("as read").appended, 1);
}

/// Two writers each read both sessions, then append to their own guarded by the other's
/// length: whichever commits second finds the other's session changed. Were the guard checked
/// before the append's own transaction, both could pass it and both append.
#[test]
fn of_two_writers_that_read_each_others_session_never_both_append() {
    const ROUNDS: u64 = 60;
    let (_dir, store) = store();
    let barrier = Arc::new(Barrier::new(2));
    let writer = |own: &'static str, other: &'static str| {
        let (store, barrier) = (Arc::clone(&store), Arc::clone(&barrier));
        std::thread::spawn(move || {
            let mut won = Vec::new();
            for round in 0..ROUNDS {
                barrier.wait();
                let read = guard(&[(own, len(&store, own)), (other, len(&store, other))]);
                barrier.wait();
                let next = read[0].1.unwrap_or(0);
                let batch = vec![record(&format!("{own}-{round}"), "e\u{301}\u{3000}東京")];
                match store.append_portable_if_unchanged(own, Some(next), batch, read) {
                    Ok(_) => won.push(round),
                    Err(AppendError::Changed { .. }) => {}
                    Err(err) => panic!("round {round}: {err}"),
                }
            }
            won
        })
    };
    let (a, b) = (writer("a", "b"), writer("b", "a"));
    let (won_a, won_b) = (a.join().expect("writer a"), b.join().expect("writer b"));
    let both: Vec<_> = won_a.iter().filter(|round| won_b.contains(round)).collect();
    assert!(both.is_empty(), "both writers appended in rounds {both:?}");
    assert_eq!(won_a.len() + won_b.len(), ROUNDS as usize, "one writer appends each round");
    assert_eq!(len(&store, "a").unwrap_or(0) + len(&store, "b").unwrap_or(0), ROUNDS);
}
