//! A query still being typed: its last word matches the words that start with it, so `obsid`
//! and `obsidian sy` find "Obsidian sync", while a finished word, a phrase, an operator or a
//! field stay as they were; the snippet marks the whole word matched.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use annal_engine::{Record, Role, Store, StoreOptions};
use annal_query::{IndexOptions, SearchIndex, SearchRequest};

const WAIT: Duration = Duration::from_secs(60);

fn ids(index: &SearchIndex, query: &str, prefix_last: bool) -> Vec<String> {
    let mut request = SearchRequest::new(query);
    request.prefix_last = prefix_last;
    let mut ids: Vec<String> = index.search(&request).unwrap().into_iter().map(|hit| hit.entry_id).collect();
    ids.sort();
    ids
}

#[test]
fn the_last_word_of_a_query_being_typed_matches_as_a_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path().join("s.redb"), StoreOptions::default()).unwrap());
    let texts = [
        ("a", "Set up Obsidian sync for the 日誌 vault 🦀"),
        ("b", "obsidian is a note app\u{3000}with plugins"),
        ("c", "synchronise the Überprüfung of e\u{301}te\u{301}"),
        ("d", "nothing relevant here"),
    ];
    let records: Vec<Record> = texts.iter().map(|(id, text)| Record::text(*id, Role::User, *text)).collect();
    store.append("s", None, records).unwrap();
    let index = SearchIndex::open(Arc::clone(&store), IndexOptions::default()).unwrap();
    index.wait_searchable(WAIT).unwrap();

    assert_eq!(ids(&index, "obsid", false), Vec::<String>::new(), "a whole word only, by default");
    assert_eq!(ids(&index, "obsid", true), ["a", "b"]);
    assert_eq!(ids(&index, "obsidian sy", true), ["a"]);
    assert_eq!(ids(&index, "sync", true), ["a", "c"], "a finished word is also a prefix of longer ones");
    assert_eq!(ids(&index, "übe", true), ["c"], "lower-cased as the index writes it");
    // Only the last word, and only when it is a plain word being typed.
    assert_eq!(ids(&index, "obsid sync", true), Vec::<String>::new());
    assert_eq!(ids(&index, "obsid ", true), Vec::<String>::new(), "a space finishes the word");
    let mut open_quote = SearchRequest::new("\"obsidian sy");
    open_quote.prefix_last = true;
    let refused = index.search(&open_quote).unwrap_err().to_string();
    assert!(refused.contains("a double quote is not closed"), "the parser's message: {refused}");
    assert_eq!(ids(&index, "plugins AND obs", true), ["b"], "the words before keep their syntax");
    assert_eq!(ids(&index, "obsidian -sy", true), ["a", "b"], "an exclusion is not a prefix");
    // The snippet marks the word the prefix matched.
    let mut request = SearchRequest::new("vau");
    request.prefix_last = true;
    let hits = index.search(&request).unwrap();
    let snippet = &hits[0].snippet;
    let marked: Vec<&str> = snippet.highlights.iter().map(|r| &snippet.text[r.clone()]).collect();
    assert_eq!(marked, ["vault"]);
    index.close().unwrap();
}
