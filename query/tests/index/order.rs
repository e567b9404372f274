//! The order of hits: the same records indexed in different segment layouts (a commit per
//! append as they come, one commit merged into one segment, a catch-up on two writer threads)
//! list the same hits with the same scores, ties broken newest record first; and records a
//! request hides are left out.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use annal_engine::{Block, Record, Role, Store, StoreOptions};
use annal_query::{Hit, IndexOptions, SearchIndex, SearchRequest};

const WAIT: Duration = Duration::from_secs(120);

/// Sessions, appends per session, records per append.
const SESSIONS: usize = 3;
const APPENDS: usize = 30;
const PER_APPEND: usize = 60;

/// Record `i`: most texts have the same length and the same words, so their scores tie; every
/// seventh says "ticket" twice and scores higher; every block of a two-block record ties with
/// its sibling.
fn record(session: usize, i: usize) -> Record {
    let code = format!("código{session}x{i:05}");
    let text = if i.is_multiple_of(7) {
        format!("the billing ticket\u{3000}ticket for 🦀 {code}")
    } else {
        format!("the billing ticket\u{3000}for 🦀 {code} 検索")
    };
    let mut blocks = vec![Block::Text { text }];
    if i.is_multiple_of(5) {
        blocks.push(Block::Text { text: format!("the billing ticket\u{3000}for 🦀 {code}b 検索") });
    }
    let role = if i.is_multiple_of(2) { Role::Assistant } else { Role::User };
    Record { entry_id: format!("s{session}e{i}"), role, timestamp: None, blocks, meta: Default::default() }
}

/// A store of the records above, its own index built as they are appended (a commit per
/// append, so many segments, merged as tantivy pleases meanwhile).
fn store_indexed_live(dir: &Path) -> (Arc<Store>, SearchIndex) {
    let store = Arc::new(Store::open(dir.join("s.redb"), StoreOptions::default()).unwrap());
    let options = IndexOptions {
        folder: Some(dir.join("live.index")),
        commit_interval: Duration::ZERO,
        writer_threads: 1,
        ..IndexOptions::default()
    };
    let index = SearchIndex::open(Arc::clone(&store), options).unwrap();
    for append in 0..APPENDS {
        // Sessions interleaved, so positions and sourceOrders do not run in the same order.
        for session in 0..SESSIONS {
            let records = (0..PER_APPEND).map(|j| record(session, append * PER_APPEND + j)).collect();
            store.append(&format!("s{session}"), None, records).unwrap();
        }
        index.wait_searchable(WAIT).unwrap();
    }
    (store, index)
}

/// The same store indexed in one commit and merged into one segment.
fn rebuilt(store: &Arc<Store>, dir: &Path) -> SearchIndex {
    let options = IndexOptions { folder: Some(dir.join("rebuilt.index")), ..IndexOptions::default() };
    SearchIndex::rebuild(store, &options, &mut |_, _| {}).unwrap();
    let index = SearchIndex::open(Arc::clone(store), options).unwrap();
    index.wait_searchable(WAIT).unwrap();
    index
}

/// The same store caught up from nothing on two writer threads (a segment each), unmerged.
fn caught_up(store: &Arc<Store>, dir: &Path) -> SearchIndex {
    let options = IndexOptions {
        folder: Some(dir.join("caught-up.index")),
        writer_threads: 2,
        ..IndexOptions::default()
    };
    let index = SearchIndex::open(Arc::clone(store), options).unwrap();
    index.wait_searchable(WAIT).unwrap();
    index
}

fn requests() -> Vec<SearchRequest> {
    let mut out = Vec::new();
    for (query, limit) in [("billing ticket", 5), ("billing ticket", 50), ("ticket 🦀", 17), ("role:user", 8)]
    {
        let mut request = SearchRequest::new(query);
        request.limit = limit;
        out.push(request.clone());
        request.session = Some("s1".into());
        out.push(request);
    }
    out
}

/// What a list of hits says, scores as bits: an exact comparison.
fn listed(hits: &[Hit]) -> Vec<(String, usize, u32)> {
    hits.iter().map(|h| (h.entry_id.clone(), h.block_index, h.score.to_bits())).collect()
}

#[test]
fn every_segment_layout_lists_the_same_hits_in_the_same_order() {
    let dir = tempfile::tempdir().unwrap();
    let (store, live) = store_indexed_live(dir.path());
    let rebuilt = rebuilt(&store, dir.path());
    let caught_up = caught_up(&store, dir.path());
    for request in requests() {
        let expected = live.search(&request).unwrap();
        assert_eq!(expected.len(), request.limit, "{:?}", request.query);
        for other in [&rebuilt, &caught_up] {
            let hits = other.search(&request).unwrap();
            assert_eq!(listed(&hits), listed(&expected), "{:?} in {:?}", request.query, request.session);
        }
        // Ties: the newest record first, then block order.
        let positions: Vec<(u32, String, u64, usize)> = expected
            .iter()
            .map(|h| (u32::MAX - h.score.to_bits(), h.session.clone(), h.source_order, h.block_index))
            .collect();
        for pair in positions.windows(2) {
            let ((score_a, session_a, order_a, block_a), (score_b, session_b, order_b, block_b)) =
                (&pair[0], &pair[1]);
            if score_a == score_b && session_a == session_b {
                assert!((order_a, std::cmp::Reverse(block_a)) >= (order_b, std::cmp::Reverse(block_b)));
            }
        }
    }
    for index in [live, rebuilt, caught_up] {
        index.close().unwrap();
    }
}

#[test]
fn hidden_records_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, index) = store_indexed_live(dir.path());
    let mut request = SearchRequest::new("billing ticket");
    request.session = Some("s2".into());
    request.limit = 20;
    let shown = index.search(&request).unwrap();
    // Hide the first ten hits' records and one run of sourceOrders: none of them comes back, and
    // the next hits move up in the same order.
    let mut hidden: BTreeSet<(String, u64)> =
        shown.iter().take(10).map(|h| (h.session.clone(), h.source_order)).collect();
    hidden.extend((100..400).map(|order| ("s2".to_owned(), order)));
    request.hidden = hidden.clone();
    let rest = index.search(&request).unwrap();
    assert_eq!(rest.len(), 20);
    assert!(rest.iter().all(|h| !hidden.contains(&(h.session.clone(), h.source_order))));
    let unhidden: Vec<_> =
        shown.iter().filter(|h| !hidden.contains(&(h.session.clone(), h.source_order))).collect();
    assert_eq!(listed(&rest[..unhidden.len()]), listed(&unhidden.into_iter().cloned().collect::<Vec<_>>()));
    index.close().unwrap();
}
