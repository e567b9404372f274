//! Ranking signals beyond BM25: the question's context (hits near where the current work was
//! discussed come first), the query's words together above the same words apart, and copies of
//! one output listed once.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use annal_engine::{Block, Record, Role, Store, StoreOptions};
use annal_query::{Hit, IndexOptions, SearchIndex, SearchRequest};

const WAIT: Duration = Duration::from_secs(120);

fn text(id: &str, role: Role, text: &str) -> Record {
    Record::text(id, role, text)
}

fn read_result(id: &str, call: &str, output: &str) -> Record {
    let block = Block::ToolResult {
        call_id: call.into(),
        tool: "Read".into(),
        is_error: false,
        output: output.into(),
    };
    Record {
        entry_id: id.into(),
        role: Role::Tool,
        timestamp: None,
        blocks: vec![block],
        meta: Default::default(),
    }
}

/// `records` appended to session `s` one by one, indexed.
fn indexed(dir: &std::path::Path, records: Vec<Record>) -> SearchIndex {
    let store = Arc::new(Store::open(dir.join("s.redb"), StoreOptions::default()).unwrap());
    for record in records {
        store.append("s", None, vec![record]).unwrap();
    }
    let options = IndexOptions { folder: Some(dir.join("s.index")), ..IndexOptions::default() };
    let index = SearchIndex::open(store, options).unwrap();
    index.wait_searchable(WAIT).unwrap();
    index
}

fn ids(hits: &[Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.entry_id.as_str()).collect()
}

fn search(index: &SearchIndex, query: &str, context: Option<&str>) -> Vec<Hit> {
    let mut request = SearchRequest::new(query);
    request.session = Some("s".into());
    request.context = context.map(str::to_owned);
    index.search(&request).unwrap()
}

/// Filler between the turns: words the questions and contexts never use.
fn filler(from: usize, count: usize) -> Vec<Record> {
    (from..from + count)
        .map(|i| {
            text(&format!("f{i}"), Role::Assistant, "We checked the ledger and the parser\u{3000}again.")
        })
        .collect()
}

#[test]
fn the_context_lifts_the_hits_near_where_it_was_discussed() {
    let dir = tempfile::tempdir().unwrap();
    let mut records = vec![
        text("ask-a", Role::User, "Fix the invoice export for the Zürich office, 東京 too"),
        text("fact-a", Role::Assistant, "The billing ticket for Kestrel is TKT-7Q2ZK9."),
    ];
    records.extend(filler(0, 30));
    records.push(text("ask-b", Role::User, "Now the upload retry 🦀 and its cafe\u{301} timeout"));
    records.push(text("fact-b", Role::Assistant, "The billing ticket for Osprey is TKT-4M8XW1."));
    records.extend(filler(30, 30));
    let index = indexed(dir.path(), records);
    // Same words, same length, same score: the newest first.
    assert_eq!(ids(&search(&index, "billing ticket", None)), ["fact-b", "fact-a"]);
    // The context names what was being worked on; it is not searched for itself.
    let near_a = search(&index, "billing ticket", Some("the invoice export for Zürich"));
    assert_eq!(ids(&near_a), ["fact-a", "fact-b"]);
    assert!(near_a[0].score > near_a[1].score);
    let near_b = search(&index, "billing ticket", Some("upload retry timeout 🦀"));
    assert_eq!(ids(&near_b), ["fact-b", "fact-a"]);
    // A context no record shares changes nothing, and an exact identifier is found alone.
    assert_eq!(ids(&search(&index, "billing ticket", Some("ニュース 😀"))), ["fact-b", "fact-a"]);
    assert_eq!(ids(&search(&index, "TKT-4M8XW1", Some("the invoice export for Zürich"))), ["fact-b"]);
    index.close().unwrap();
}

#[test]
fn words_together_rank_above_the_same_words_apart() {
    let dir = tempfile::tempdir().unwrap();
    let index = indexed(
        dir.path(),
        vec![
            text("together", Role::Assistant, "ledger parser journal worker the billing ticket"),
            text("apart", Role::Assistant, "billing ledger parser journal worker the ticket"),
        ],
    );
    assert_eq!(ids(&search(&index, "billing ticket", None)), ["together", "apart"]);
    index.close().unwrap();
}

#[test]
fn copies_of_one_output_are_listed_once_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let file = "fn billing() {\n    let ticket = \"🦀 東京\";\n}\n".repeat(20);
    let mut records: Vec<Record> =
        (0..10).map(|i| read_result(&format!("read{i}"), &format!("c{i}"), &file)).collect();
    records.push(read_result("other", "c10", &format!("{file}// billing ticket, edited")));
    let index = indexed(dir.path(), records);
    let hits = search(&index, "billing ticket", None);
    let mut listed = ids(&hits);
    listed.sort_unstable();
    assert_eq!(listed, ["other", "read9"]);
    index.close().unwrap();
}
