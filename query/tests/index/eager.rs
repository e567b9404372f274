//! An index opened eagerly indexes this process's appends as they are committed, with nobody
//! waiting for it: the commit feed tells the indexer of them at most every few milliseconds,
//! and appends that arrive meanwhile are told of in the next message, never left out.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use annal_engine::{Record, Role, Store, StoreOptions};
use annal_query::{IndexOptions, SearchIndex, SearchRequest};

const PATIENCE: Duration = Duration::from_secs(60);

/// A record whose text names it, in several scripts and on a long line.
fn record(id: &str) -> Record {
    Record::text(id, Role::User, format!("{id} 日誌 ﬁle\u{00a0}é\u{0301} 🦀 {}", "long line ".repeat(200)))
}

#[test]
fn appends_in_quick_succession_are_all_indexed_without_a_wait() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path().join("s.redb"), StoreOptions::default()).unwrap());
    // The journal is never polled in this test's time: only the commit feed starts indexing.
    let options = IndexOptions {
        commit_interval: Duration::ZERO,
        poll_interval: Duration::from_secs(3600),
        ..IndexOptions::default()
    };
    let index = SearchIndex::open(Arc::clone(&store), options).unwrap();
    for n in 0..40 {
        store.append("s", None, vec![record(&format!("burst{n}"))]).unwrap();
    }
    let started = Instant::now();
    while index.status().searchable < 40 {
        assert!(started.elapsed() < PATIENCE, "searchable stopped at {}", index.status().searchable);
        std::thread::sleep(Duration::from_millis(5));
    }
    let hits = index.search(&SearchRequest::new("burst39")).unwrap();
    assert_eq!(hits.iter().map(|hit| hit.entry_id.as_str()).collect::<Vec<_>>(), ["burst39"]);
    index.close().unwrap();
}
