//! An index opened with `indexer_on_demand` starts its indexer only when it has work: a search
//! of an index that is up to date runs without it, and the first wait that finds the index
//! behind starts it and catches up.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use annal_engine::{Block, Record, Role, Store, StoreOptions};
use annal_query::{IndexOptions, SearchIndex, SearchRequest};

const WAIT: Duration = Duration::from_secs(60);

fn record(id: &str) -> Record {
    let text = format!("{id} 索引 naïve\u{0308} 🦀\u{2003}tail");
    Record {
        entry_id: id.into(),
        role: Role::Assistant,
        timestamp: None,
        blocks: vec![Block::Text { text }],
        meta: Default::default(),
    }
}

fn on_demand() -> IndexOptions {
    IndexOptions { commit_interval: Duration::ZERO, indexer_on_demand: true, ..IndexOptions::default() }
}

fn found(index: &SearchIndex, query: &str) -> Vec<String> {
    index.search(&SearchRequest::new(query)).unwrap().into_iter().map(|hit| hit.entry_id).collect()
}

#[test]
fn an_up_to_date_index_is_searched_without_starting_the_indexer() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path().join("s.redb"), StoreOptions::default()).unwrap());
    store.append("s", None, vec![record("first")]).unwrap();
    // Indexed and closed by an ordinary (eager) handle: the index is up to date.
    SearchIndex::open(Arc::clone(&store), IndexOptions::default()).unwrap().wait_searchable(WAIT).unwrap();

    let index = SearchIndex::open(Arc::clone(&store), on_demand()).unwrap();
    assert_eq!(index.wait_searchable(WAIT).unwrap(), 1);
    assert_eq!(found(&index, "first"), ["first"]);

    // Nothing indexes what is appended now until a wait asks for it: no indexer holds the
    // writer (an eager index would have started one at open).
    store.append("s", None, vec![record("second")]).unwrap();
    assert!(!index.status().writing, "the indexer started without being asked");
    assert_eq!(index.status().searchable, 1, "the indexer ran without being asked");
    assert!(found(&index, "second").is_empty());

    // The wait finds the index behind, starts the indexer and sees the append.
    assert_eq!(index.wait_searchable(WAIT).unwrap(), 2);
    assert_eq!(found(&index, "second"), ["second"]);
    assert!(index.status().writing, "the started indexer holds the writer");
    index.close().unwrap();
}

#[test]
fn a_load_announced_on_demand_starts_the_indexer() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path().join("s.redb"), StoreOptions::default()).unwrap());
    let index = SearchIndex::open(Arc::clone(&store), on_demand()).unwrap();
    index.note_load();
    store.append("s", None, (0..50).map(|i| record(&format!("load{i}"))).collect()).unwrap();
    assert_eq!(index.wait_searchable(WAIT).unwrap(), 50);
    assert_eq!(found(&index, "load7"), ["load7"]);
    index.close().unwrap();
    // What the load indexed was committed: a new handle finds it up to date.
    let reopened = SearchIndex::open(Arc::clone(&store), on_demand()).unwrap();
    assert_eq!(reopened.status().searchable, 50);
    assert_eq!(found(&reopened, "load49"), ["load49"]);
}
