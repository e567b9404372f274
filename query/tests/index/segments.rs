//! How many segments an index keeps: a load commits rarely and merges at its end, live appends
//! stay searchable at once, and whatever stopped the index leaves at most four segments, with
//! no files of merged segments behind.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use annal_engine::{Block, Record, Role, Store, StoreOptions};
use annal_query::{IndexOptions, SearchIndex, SearchRequest};

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
    let store = Arc::new(Store::open(dir.path().join("s.redb"), StoreOptions::default()).unwrap());
    // A load interval no test waits out: only a waiter or the close commits during the load.
    let options = IndexOptions {
        commit_interval: Duration::ZERO,
        load_commit_interval: Duration::from_secs(3600),
        ..IndexOptions::default()
    };
    let index = SearchIndex::open(Arc::clone(&store), options).unwrap();
    for batch in 0..30 {
        index.note_load();
        let records = (0..100).map(|i| record(&format!("load{batch}x{i}"))).collect();
        store.append(&format!("s{}", batch % 3), None, records).unwrap();
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
