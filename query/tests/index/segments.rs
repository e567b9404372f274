//! How many segments an index keeps: a load commits rarely and merges at its end, live appends
//! stay searchable at once, and whatever stopped the index leaves at most four segments, with
//! no files of merged segments behind.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use annal_engine::{Block, Record, Role, Store, StoreOptions};
use annal_query::{Clock, IndexOptions, ManualClock, SearchIndex, SearchRequest};

const WAIT: Duration = Duration::from_secs(60);

/// A record whose text names it, in several scripts, so every search below has one answer.
fn record(id: &str) -> Record {
    let text = format!("{id} 検索 café\u{0301} 🦀 the quick\u{3000}brown fox");
    Record {
        entry_id: id.into(),
        role: Role::User,
        timestamp: None,
        blocks: vec![Block::Text { text }],
        meta: Default::default(),
    }
}

/// A store and an index that commits at once outside a load, and during one only when a waiter
/// asks (a load interval no test waits out) or it closes. Given a [`ManualClock`]'s clock, a
/// load lasts until the test moves it, however slowly the machine runs.
fn open_for_loads(dir: &Path, clock: Clock) -> (Arc<Store>, SearchIndex) {
    let store = Arc::new(Store::open(dir.join("s.redb"), StoreOptions::default()).unwrap());
    let options = IndexOptions {
        commit_interval: Duration::ZERO,
        load_commit_interval: Duration::from_secs(3600),
        clock,
        ..IndexOptions::default()
    };
    let index = SearchIndex::open(Arc::clone(&store), options).unwrap();
    (store, index)
}

/// Batch `batch` of a load: 100 records `load{batch}x{i}`, the load noted first.
fn load_batch(store: &Store, index: &SearchIndex, session: &str, batch: usize) {
    index.note_load();
    let records = (0..100).map(|i| record(&format!("load{batch}x{i}"))).collect();
    store.append(session, None, records).unwrap();
}

/// The segments of the last commit (tantivy's `meta.json`): id and documents.
fn committed_segments(folder: &Path) -> Vec<(String, u64)> {
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("meta.json")).unwrap()).unwrap();
    meta["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["segment_id"].as_str().unwrap().to_owned(), s["max_doc"].as_u64().unwrap()))
        .collect()
}

/// The segments whose files lie in the index folder.
fn segment_files(folder: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "idx"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

fn found(index: &SearchIndex, id: &str) -> usize {
    let mut request = SearchRequest::new(id);
    request.limit = 100;
    index.search(&request).unwrap().iter().filter(|hit| hit.entry_id == id).count()
}

#[test]
fn every_commit_alone_still_leaves_at_most_four_segments() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path().join("s.redb"), StoreOptions::default()).unwrap());
    // A commit after every append: without merging, twenty segments or more.
    let options = IndexOptions { commit_interval: Duration::ZERO, ..IndexOptions::default() };
    let index = SearchIndex::open(Arc::clone(&store), options).unwrap();
    for i in 0..20 {
        store.append("live", None, vec![record(&format!("live{i}"))]).unwrap();
        index.wait_searchable(WAIT).unwrap();
        assert_eq!(found(&index, &format!("live{i}")), 1, "live{i} is searchable once its wait returns");
    }
    let folder = index.folder().to_path_buf();
    index.close().unwrap();
    let segments = segment_files(&folder);
    assert!(segments.len() <= 4, "{} segments: {segments:?}", segments.len());

    let index = SearchIndex::open(Arc::clone(&store), IndexOptions::default()).unwrap();
    for i in 0..20 {
        assert_eq!(found(&index, &format!("live{i}")), 1, "live{i} after the merges");
    }
    assert_eq!(index.status().documents, 20);
    index.close().unwrap();
}

#[test]
fn a_load_is_searchable_when_waited_for_and_ends_in_few_segments() {
    let dir = tempfile::tempdir().unwrap();
    let hand = ManualClock::new();
    let (store, index) = open_for_loads(dir.path(), hand.clock());
    for batch in 0..30 {
        load_batch(&store, &index, &format!("s{}", batch % 3), batch);
    }
    index.wait_searchable(WAIT).unwrap();
    assert_eq!(found(&index, "load29x99"), 1, "a waiter gets a commit during the load");
    assert_eq!(index.status().documents, 3_000);
    let folder = index.folder().to_path_buf();
    index.close().unwrap();
    let segments = segment_files(&folder);
    assert!(segments.len() <= 4, "{} segments: {segments:?}", segments.len());
    let index = SearchIndex::open(Arc::clone(&store), IndexOptions::default()).unwrap();
    assert_eq!(index.status().documents, 3_000);
    assert_eq!(found(&index, "load0x0"), 1);
    let mut request = SearchRequest::new("検索");
    request.limit = 5_000;
    assert_eq!(index.search(&request).unwrap().len(), 3_000, "CJK text of every record");
    index.close().unwrap();
}

#[test]
fn a_load_into_a_new_index_ends_in_one_segment_and_a_small_one_in_few() {
    for (records_per_commit, merged_whole) in [(7_000, true), (1_000, false)] {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path().join("s.redb"), StoreOptions::default()).unwrap());
        // One indexing thread, so each commit is one segment.
        // The clock stands still: however busy the machine, the load has not ended between the
        // waiters' commits, so the indexer neither commits nor merges on its own.
        let hand = ManualClock::new();
        let options = IndexOptions {
            commit_interval: Duration::ZERO,
            load_commit_interval: Duration::from_secs(3600),
            writer_threads: 1,
            clock: hand.clock(),
            ..IndexOptions::default()
        };
        let index = SearchIndex::open(Arc::clone(&store), options).unwrap();
        for commit in 0..3 {
            for batch in 0..records_per_commit / 1_000 {
                index.note_load();
                let records = (0..1_000).map(|i| record(&format!("load{commit}x{batch}x{i}"))).collect();
                store.append(&format!("s{commit}"), None, records).unwrap();
            }
            // A waiter's commit: three like-sized segments by the end of the load.
            index.wait_searchable(WAIT).unwrap();
        }
        let folder = index.folder().to_path_buf();
        index.close().unwrap();
        // 21,000 documents are merged whole: a later search opens one segment, not three. 3,000
        // are not worth the merge's syncs: their segments stay, no more than four.
        let segments = segment_files(&folder);
        let left = if merged_whole { 1..=1 } else { 2..=4 };
        assert!(left.contains(&segments.len()), "{records_per_commit}: {segments:?}");
        let index = SearchIndex::open(Arc::clone(&store), IndexOptions::default()).unwrap();
        assert_eq!(index.status().documents, 3 * records_per_commit as u64);
        let last = format!("load2x{}x999", records_per_commit / 1_000 - 1);
        assert_eq!((found(&index, "load0x0x0"), found(&index, &last)), (1, 1));
        index.close().unwrap();
    }
}

#[test]
fn live_commits_after_a_load_leave_its_large_segments_alone() {
    let dir = tempfile::tempdir().unwrap();
    let hand = ManualClock::new();
    let (store, index) = open_for_loads(dir.path(), hand.clock());
    for batch in 0..20 {
        load_batch(&store, &index, "loaded", batch);
        // A waiter mid-load commits what is there: the load leaves several segments.
        index.wait_searchable(WAIT).unwrap();
    }
    // The load is over a second after its last sign (on the index's clock, moved here rather
    // than waited out); the next commit merges down to four.
    hand.advance(Duration::from_millis(1_500));
    store.append("live", None, vec![record("first-live")]).unwrap();
    index.wait_searchable(WAIT).unwrap();
    let folder = index.folder().to_path_buf();
    // The load's segments: the live record's own one-document segment stands apart when the
    // end-of-load merge ran on a commit just before it (the indexer may commit between the
    // clock's move and the append), and is no segment of the load.
    let of_load = || -> Vec<(String, u64)> {
        committed_segments(&folder).into_iter().filter(|(_, docs)| *docs > 1).collect()
    };
    // A waiter is told of a commit before the merge that follows it.
    let started = std::time::Instant::now();
    while of_load().len() > 4 && started.elapsed() < WAIT {
        std::thread::sleep(Duration::from_millis(20));
    }
    let after_load = of_load();
    assert!(after_load.len() <= 4, "{after_load:?}");
    let largest = after_load.iter().max_by_key(|(_, docs)| *docs).unwrap().clone();
    assert!(largest.1 >= 500, "{after_load:?}");
    for i in 0..24 {
        store.append("live", None, vec![record(&format!("live{i}"))]).unwrap();
        index.wait_searchable(WAIT).unwrap();
        let now = committed_segments(&folder);
        assert!(now.contains(&largest), "live commit {i} rewrote the load's largest segment: {now:?}");
        // Nor any other the load left: each holds ~100 times a live commit's documents.
        for segment in &after_load {
            assert!(now.contains(segment), "live commit {i} rewrote {segment:?}: {now:?}");
        }
        // The load's four, runs of small ones that double before they merge again, and the
        // newest, whose merge may not have run yet.
        assert!(now.len() <= 4 + 7, "{} segments after live commit {i}", now.len());
    }
    assert_eq!(found(&index, "live23"), 1);
    assert_eq!(found(&index, "load19x99"), 1);
    index.close().unwrap();
    assert!(segment_files(&folder).len() <= 4);
}
