//! Queries built to break the parser: groups and `NOT`s nested thousands deep, terms thousands
//! of characters long, every operator and field, quotes and escapes in odd places. Each search
//! answers (hits, or one line of bad input) on a test thread's ordinary stack; nesting deeper
//! than the limit is refused as such before parsing, and the index serves the next search.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use annal_engine::{Record, Role, Store, StoreOptions};
use annal_query::{IndexOptions, SearchError, SearchIndex, SearchRequest};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::FileFailurePersistence;

/// The deepest nesting a search reads (the query crate's limit, stated here as documented).
const DEPTH_MAX: usize = 32;
const BYTES_MAX: usize = 16 * 1024;

struct Fixture {
    _dir: tempfile::TempDir,
    index: SearchIndex,
}

/// One store and index for every case: the searches only read it.
fn index() -> &'static SearchIndex {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    &FIXTURE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let store = Arc::new(Store::open(dir.path().join("q.redb"), StoreOptions::default()).unwrap());
            let texts = [
                "deploy the ledger with --max-output 5 and src/api/client.ts",
                "日本語のテキスト\u{3000}と絵文字 🦀 e\u{301} ECONNRESET",
                "(nested (parentheses)) in NOT a query \"quoted\"",
            ];
            let records = texts
                .iter()
                .enumerate()
                .map(|(i, t)| Record::text(format!("e{i}"), Role::User, *t))
                .collect();
            store.append("s", None, records).unwrap();
            let index = SearchIndex::open(store, IndexOptions::default()).unwrap();
            index.wait_searchable(Duration::from_secs(120)).unwrap();
            Fixture { _dir: dir, index }
        })
        .index
}

fn search(query: &str, literal: bool) -> Result<usize, SearchError> {
    let mut request = SearchRequest::new(query);
    request.literal = literal;
    index().search(&request).map(|hits| hits.len())
}

#[test]
fn thousands_of_groups_and_nots_are_refused_then_the_index_serves() {
    // Each under the length limit, so the depth is what refuses it.
    let groups = format!("{}a{}", "(".repeat(8_000), ")".repeat(8_000));
    let nots = format!("deploy {}ledger", "NOT ".repeat(4_000));
    let mixed = format!("{}deploy{}", "(NOT ".repeat(2_000), ")".repeat(2_000));
    for query in [&groups, &nots, &mixed] {
        match search(query, false) {
            Err(err @ SearchError::QueryTooDeep { depth, limit }) => {
                assert!(depth > limit && limit == DEPTH_MAX, "{err}");
                let line = err.to_string();
                assert!(!line.contains('\n') && line.len() < 300, "{line}");
            }
            other => panic!("{:?}…: {other:?}", &query[..20]),
        }
    }
    let fits = format!("{}deploy{}", "(".repeat(DEPTH_MAX), ")".repeat(DEPTH_MAX));
    assert_eq!(search(&fits, false).unwrap(), 1);
    assert_eq!(search("deploy", false).unwrap(), 1);
}

#[test]
fn a_query_over_the_length_limit_is_refused_literal_or_not() {
    let long = "日本語 ".repeat(BYTES_MAX / 10 + 1);
    assert!(long.len() > BYTES_MAX);
    for literal in [false, true] {
        match search(&long, literal) {
            Err(SearchError::QueryTooLong { bytes, limit_bytes }) => {
                assert_eq!((bytes, limit_bytes), (long.len(), BYTES_MAX));
            }
            other => panic!("literal {literal}: {other:?}"),
        }
    }
    // One long term under the limit is searched.
    assert_eq!(search(&"x".repeat(BYTES_MAX), false).unwrap(), 0);
}

/// A piece of query text: words, identifiers, every operator and field, quotes, escapes and
/// long terms.
fn piece() -> impl Strategy<Value = String> {
    let fixed = select(
        &[
            "deploy",
            "ledger",
            "ECONNRESET",
            "--max-output",
            "src/api/client.ts",
            "foo(bar)",
            "AND",
            "OR",
            "NOT",
            "&&",
            "||",
            "+",
            "-",
            "*",
            "\"",
            "'",
            "\\",
            "(",
            ")",
            "text:",
            "ident:",
            "role:user",
            "tool:Bash",
            "error:true",
            "nope:x",
            "^2",
            "~1",
            "[a TO b]",
            "IN [a b]",
            "/re.*/",
            "日本語",
            "🦀",
            "e\u{301}",
            "\u{3000}",
            "\u{202e}",
            "NOT(",
            "\"a (b\"",
            "a\\(",
            "'((('",
        ][..],
    )
    .prop_map(str::to_owned);
    let long =
        (select(&["x", "日", "🦀", "(", "NOT ", "a "][..]), 100..3_000usize).prop_map(|(u, n)| u.repeat(n));
    prop_oneof![6 => fixed, 1 => long, 1 => any::<String>(), 2 => "[a-z]{1,8}"]
}

/// A query: pieces joined by spaces or nothing, wrapped in `depth` groups or `NOT`s.
fn query() -> impl Strategy<Value = (String, usize, bool)> {
    let pieces = prop::collection::vec((piece(), any::<bool>()), 1..12).prop_map(|pieces| {
        pieces.into_iter().map(|(p, spaced)| if spaced { p + " " } else { p }).collect::<String>()
    });
    (pieces, 0..200usize, any::<bool>(), any::<bool>()).prop_map(|(inner, depth, nots, literal)| {
        let (open, close) = if nots { ("NOT (", ")") } else { ("(", ")") };
        (format!("{}{inner}{}", open.repeat(depth), close.repeat(depth)), depth, literal)
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    /// Any query answers on an ordinary stack: hits, or bad input on one line. Plain words
    /// wrapped deeper than the limit are refused as too deep.
    #[test]
    fn any_query_answers_or_is_refused_on_one_line((query, depth, literal) in query()) {
        match search(&query, literal) {
            Ok(_) => {}
            Err(err) => {
                prop_assert!(
                    matches!(
                        err,
                        SearchError::Syntax { .. }
                            | SearchError::EmptyQuery
                            | SearchError::QueryTooLong { .. }
                            | SearchError::QueryTooDeep { .. }
                    ),
                    "{err:?}"
                );
                prop_assert_eq!(err.kind(), annal_engine::ErrorKind::BadInput);
                prop_assert!(!err.to_string().contains('\n'), "{}", err);
            }
        }
        let plain = format!("{}deploy{}", "(".repeat(depth), ")".repeat(depth));
        let outcome = search(&plain, false);
        if depth > DEPTH_MAX {
            prop_assert!(matches!(outcome, Err(SearchError::QueryTooDeep { .. })), "{outcome:?}");
        } else {
            prop_assert_eq!(outcome.ok(), Some(1));
        }
    }
}
