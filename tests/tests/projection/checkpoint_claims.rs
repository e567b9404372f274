//! Concurrent compactions of one checkpoint key through the public API: a claimed key is not
//! taken before its lease expires, a waiting compaction reuses what the owner commits, and an
//! owner taken over after its lease never commits.
#![allow(clippy::unwrap_used)]

use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use annal_engine::{CompactError, CompactOptions, CompactOutcome, CompactStatus, ProjectOptions, Store};

use crate::projection_support::compaction::{
    budget, filled_store, len, with_summarizer, Behaviour, Scripted, SESSION,
};
use crate::projection_support::texts;

/// A compaction in its own thread, stopped inside its summarizer until the test sends on the
/// returned channel; returns once the summarizer has been called, so the key is claimed.
fn gated_compaction(
    store: &Arc<Store>,
    options: impl FnOnce(CompactOptions) -> CompactOptions,
) -> (JoinHandle<Result<CompactOutcome, CompactError>>, mpsc::Sender<()>) {
    let (called_tx, called) = mpsc::channel();
    let (go, go_rx) = mpsc::channel();
    let summarizer = Scripted::new(Behaviour::Gate(Mutex::new(called_tx), Mutex::new(go_rx)));
    let options = options(with_summarizer(&summarizer));
    let store = Arc::clone(store);
    let owner = std::thread::spawn(move || store.compact(SESSION, &options));
    called.recv().unwrap();
    (owner, go)
}

#[test]
fn a_claimed_key_is_not_taken_before_its_lease_expires() {
    let (_dir, store, _) = filled_store(7);
    let store = Arc::new(store);
    let (first, go) = gated_compaction(&store, |options| options);
    let other = Scripted::new(Behaviour::Answer("a second summary".into()));
    match store.compact(SESSION, &with_summarizer(&other)) {
        Err(CompactError::Claimed { token: 1, .. }) => {}
        other => panic!("expected the key to be claimed, got {other:?}"),
    }
    assert_eq!(other.calls(), 0);
    go.send(()).unwrap();
    let outcome = first.join().unwrap().unwrap();
    assert_eq!(outcome.status, CompactStatus::Committed);
    assert_eq!(outcome.fencing_token, 1);
    let again = store.compact(SESSION, &with_summarizer(&other)).unwrap();
    assert_eq!(again.status, CompactStatus::Reused);
    assert_eq!(other.calls(), 0);
}

#[test]
fn a_waiting_compaction_reuses_what_the_owner_commits() {
    let (_dir, store, _) = filled_store(8);
    let store = Arc::new(store);
    let (first, go) = gated_compaction(&store, |options| options);
    // The key stays claimed until the go-ahead: a try without waiting is refused.
    let other = Scripted::new(Behaviour::Answer("never asked".into()));
    match store.compact(SESSION, &with_summarizer(&other)) {
        Err(CompactError::Claimed { token: 1, .. }) => {}
        refused => panic!("expected the key to be claimed, got {refused:?}"),
    }
    let (started_tx, started) = mpsc::channel();
    let waiter = {
        let store = store.clone();
        let options = CompactOptions { claim_wait: Duration::from_secs(30), ..with_summarizer(&other) };
        std::thread::spawn(move || {
            started_tx.send(()).unwrap();
            (store.compact(SESSION, &options), other.calls())
        })
    };
    // The owner is released only once the waiter runs; whether the waiter then meets the claim or
    // the committed checkpoint, it must reuse it without calling its summarizer.
    started.recv().expect("the waiter thread starts");
    go.send(()).unwrap();
    let committed = first.join().unwrap().unwrap();
    let (reused, calls) = waiter.join().unwrap();
    let reused = reused.unwrap();
    assert_eq!(reused.status, CompactStatus::Reused);
    assert_eq!(reused.key, committed.key);
    assert_eq!(calls, 0);
}

#[test]
fn a_taken_over_owner_never_commits() {
    let (_dir, store, records) = filled_store(9);
    let store = Arc::new(store);
    let (stale, go) =
        gated_compaction(&store, |options| CompactOptions { lease: Duration::from_millis(50), ..options });
    // Another compaction waits out the lease (the engine's own wait on the claim, no clock here)
    // and takes the key over with the next fencing token.
    let fast = Scripted::new(Behaviour::Answer("Taken over: the ledger is fixed.".into()));
    let patient = CompactOptions { claim_wait: Duration::from_secs(30), ..with_summarizer(&fast) };
    let outcome = store.compact(SESSION, &patient).unwrap();
    assert_eq!(outcome.status, CompactStatus::Committed);
    assert_eq!(outcome.fencing_token, 2);
    go.send(()).unwrap();
    match stale.join().unwrap() {
        Err(CompactError::Fenced { token: 1, .. }) => {}
        other => panic!("the stale owner should be fenced, got {other:?}"),
    }
    // Exactly one receipt, the new owner's.
    assert_eq!(len(&store, SESSION), records.len() as u64 + 1);
    let view = store.project(SESSION, &ProjectOptions::new(budget())).unwrap();
    assert!(texts(&view.messages).any(|t| t.ends_with("Taken over: the ledger is fixed.")));
}
