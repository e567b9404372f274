//! Search, snippets, highlights and line selection over arbitrary Unicode text: multi-byte
//! spaces, CJK, emoji, combining marks, right-to-left text, control characters and very long
//! lines never panic, every offset handed out falls on a character boundary, and a word or
//! identifier taken from a text finds it.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use annal_engine::{Block, Record, Role, Store, StoreOptions};
use annal_query::{
    get_original, select_lines, IndexOptions, SearchError, SearchIndex, SearchRequest, Snippet,
};
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::FileFailurePersistence;

/// The session searched; `other` holds a copy of the first text, which the filter must hide.
const SESSION: &str = "u";
const SPACES: &[&str] = &["\u{a0}", "\u{2009}", "\u{3000}", "\u{202f}", "\u{85}", "\t"];
const CJK: &[&str] = &["日本語", "中文", "漢字テスト", "한국어", "日本"];
const EMOJI: &[&str] =
    &["🦀", "👨\u{200d}👩\u{200d}👧\u{200d}👦", "🇯🇵", "🏳\u{fe0f}\u{200d}🌈", "👍🏽", "1\u{fe0f}\u{20e3}"];
/// Combining marks on a letter and alone, and case mappings that change a word's length or
/// depend on where the letter stands (final sigma, dotted I, the Kelvin sign).
const MARKS: &[&str] =
    &["e\u{301}", "a\u{308}\u{332}", "\u{301}", "ΟΔΟΣ", "Σίσυφος", "İstanbul", "Straße", "\u{212a}elvin"];
const RTL: &[&str] = &["مرحبا", "שלום", "\u{202e}abc\u{202c}", "\u{200f}", "\u{2067}עברית\u{2069}", "١٢٣"];
const CONTROLS: &[&str] = &["\u{0}", "\u{1}", "\u{7f}", "\u{1b}[31m", "\u{200b}", "\u{feff}", "\r"];
const NEWLINES: &[&str] = &["\n", "\r\n", "\n\n"];

fn piece() -> impl Strategy<Value = String> {
    let identifier = prop_oneof![
        "src/[a-z]{1,4}_[a-z]{1,4}\\.rs",
        "ERR_[A-Z]{1,3}_[0-9]{1,3}",
        "v[0-9]\\.[0-9]{1,2}\\.[0-9]{1,2}",
        "--[a-z]{2,6}(-[a-z]{2,5})?",
        "[a-z]{1,5}::[A-Z][a-z]{1,5}",
    ];
    let fixed = |list: &'static [&'static str]| select(list).prop_map(str::to_owned);
    // Thousands of characters of one unit: one huge word, or many words and spaces.
    let long =
        (select(&["x", "日", "🦀", "e\u{301}", "a\u{2009}", "ab ", "\u{3000}"][..]), 1_000..4_000usize)
            .prop_map(|(unit, n)| unit.repeat(n));
    prop_oneof![
        6 => "[a-zA-Z]{1,8}",
        4 => identifier,
        3 => fixed(SPACES),
        2 => fixed(CJK),
        2 => fixed(EMOJI),
        2 => fixed(MARKS),
        2 => fixed(RTL),
        1 => fixed(CONTROLS),
        2 => fixed(NEWLINES),
        2 => any::<String>(),
        1 => long,
    ]
}

/// Pieces joined by nothing (so identifiers touch multi-byte characters), spaces or newlines.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec((piece(), select(&["", "", " ", " ", "\n"][..])), 0..24)
        .prop_map(|parts| parts.into_iter().map(|(piece, sep)| piece + sep).collect())
}

#[derive(Clone, Copy, Debug)]
enum Pick {
    Word,
    Ident,
    Slice,
}

#[derive(Debug)]
struct Case {
    texts: Vec<String>,
    picks: Vec<(Index, Index, Pick, Index)>,
    raw: Vec<String>,
    lines: Vec<(usize, usize)>,
    width: usize,
}

fn case() -> impl Strategy<Value = Case> {
    let pick = select(&[Pick::Word, Pick::Word, Pick::Ident, Pick::Ident, Pick::Slice][..]);
    let raw = prop_oneof![any::<String>(), text(), "[a-z]{1,6} (AND|OR|NOT|-) ?\"?[a-z]{1,6}\"?"];
    (
        prop::collection::vec(text(), 1..7),
        prop::collection::vec((any::<Index>(), any::<Index>(), pick, any::<Index>()), 1..8),
        prop::collection::vec(raw, 0..3),
        prop::collection::vec((0usize..8, 0usize..8), 1..4),
        select(&[0, 1, 16, 40, 160, 1_000, usize::MAX][..]),
    )
        .prop_map(|(texts, picks, raw, lines, width)| Case { texts, picks, raw, lines, width })
}

fn is_chunk_separator(c: char) -> bool {
    c.is_whitespace()
        || "\"'`()[]{}<>,;|\u{2022}\u{2026}\u{b7}".contains(c)
        || matches!(c, '\u{2190}'..='\u{21ff}' | '\u{2500}'..='\u{257f}')
}

/// Maximal runs of letters and digits (Unicode), written out here rather than taken from the
/// crate: what `docs/search.md` says a word is.
fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect()
}

/// Whole identifier chunks (`docs/search.md`): cut at separators, trimmed of sentence
/// punctuation and path anchors; compound, short enough, and without `:`/`=` (whose pieces and
/// line numbers are indexed by rules not restated here).
fn idents(text: &str) -> Vec<&str> {
    text.split(is_chunk_separator)
        .map(|chunk| chunk.trim_matches(|c: char| ".:!?/\\*=&".contains(c)))
        .filter(|c| c.len() < 160 && !c.contains([':', '=']))
        .filter(|c| c.chars().any(char::is_alphanumeric) && !c.chars().all(char::is_alphanumeric))
        .collect()
}

/// Every block's text, by entryId and block index.
type Originals = HashMap<(String, usize), String>;

/// A store with one record per text in [`SESSION`] (text, tool output, or a second text block)
/// and an index that has caught up; with where each text is, and every block's text.
fn build(
    dir: &std::path::Path,
    texts: &[String],
) -> (Arc<Store>, SearchIndex, Vec<(String, usize)>, Originals) {
    let store = Arc::new(Store::open(dir.join("u.redb"), StoreOptions::default()).unwrap());
    let (mut places, mut originals) = (Vec::new(), HashMap::new());
    let mut records = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let id = format!("e{i}");
        let (role, blocks) = match i % 3 {
            0 => (Role::Assistant, vec![Block::Text { text: text.clone() }]),
            1 => {
                let output = text.clone();
                let result = Block::ToolResult {
                    call_id: format!("c{i}"),
                    tool: "Bash".into(),
                    is_error: i % 2 == 0,
                    output,
                };
                (Role::Tool, vec![result])
            }
            _ => (
                Role::User,
                vec![Block::Text { text: "see below".into() }, Block::Text { text: text.clone() }],
            ),
        };
        for (block, content) in blocks.iter().enumerate() {
            let (Block::Text { text } | Block::ToolResult { output: text, .. }) = content else { continue };
            originals.insert((id.clone(), block), text.clone());
        }
        places.push((id.clone(), blocks.len() - 1));
        records.push(Record { entry_id: id, role, timestamp: None, blocks, meta: Default::default() });
    }
    store.append(SESSION, None, records).unwrap();
    store.append("other", None, vec![Record::text("o0", Role::User, texts[0].clone())]).unwrap();
    originals.insert(("o0".into(), 0), texts[0].clone());
    let options = IndexOptions {
        commit_interval: Duration::from_millis(20),
        poll_interval: Duration::from_millis(20),
        writer_memory_bytes: 16 << 20,
        ..IndexOptions::default()
    };
    let index = SearchIndex::open(Arc::clone(&store), options).unwrap();
    index.wait_searchable(Duration::from_secs(120)).unwrap();
    (store, index, places, originals)
}

/// `text` with every run of whitespace and control characters as one space, as snippets are.
fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if !(c.is_whitespace() || c.is_control()) {
            out.push(c);
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    out
}

/// A snippet is one line cut from the original; its highlights are ordered, disjoint,
/// non-empty ranges on character boundaries, and its helpers agree with them.
fn check_snippet(snippet: &Snippet, original: &str) {
    let text = &snippet.text;
    assert!(!text.chars().any(|c| c != ' ' && (c.is_whitespace() || c.is_control())), "{text:?}");
    let folded = fold(original);
    for part in text.split('…').map(str::trim).filter(|p| !p.is_empty()) {
        assert!(folded.contains(part), "snippet {text:?} is not from {original:?}");
    }
    let mut previous_end = 0;
    for range in &snippet.highlights {
        assert!(
            previous_end <= range.start && range.start < range.end,
            "{:?} in {text:?}",
            snippet.highlights
        );
        assert!(text.get(range.clone()).is_some(), "highlight {range:?} is off a boundary of {text:?}");
        previous_end = range.end;
    }
    let marked = snippet.marked("[", "]");
    assert_eq!(marked.len(), text.len() + 2 * snippet.highlights.len());
    let chars = snippet.highlight_chars();
    assert_eq!(chars.len(), snippet.highlights.len());
    for (&(from, to), range) in chars.iter().zip(&snippet.highlights) {
        let by_chars: String = text.chars().skip(from).take(to - from).collect();
        assert_eq!(by_chars, text[range.clone()], "{chars:?} against {:?}", snippet.highlights);
    }
}

/// `select_lines` returns whole lines, sliced where the text has them, and any split of the
/// lines puts the text back together.
fn check_lines(text: &str, lines: &[(usize, usize)]) {
    for &(a, b) in lines {
        let (part, first, last, total) = select_lines(text, a..=b);
        if !part.is_empty() {
            // Where the slice lies in `text`: it must start a line.
            let offset = (part.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
            assert!(text.get(offset..).is_some_and(|rest| rest.starts_with(part)), "{a}..={b} of {text:?}");
            assert!(offset == 0 || text[..offset].ends_with('\n'), "{a}..={b} starts mid-line in {text:?}");
        }
        assert!(
            part.is_empty() == (first > last) && (first > last || last <= total),
            "{a}..={b}: {first} {last} {total}"
        );
        let (head, ..) = select_lines(text, 1..=a);
        let (tail, ..) = select_lines(text, a + 1..=usize::MAX);
        assert_eq!(format!("{head}{tail}"), text, "split after line {a}");
    }
}

/// What a pick from `text` searches, and whether the text must then be found (the pick is a
/// whole indexed term, in a text without JSON escapes).
fn query_of(text: &str, pick: &(Index, Index, Pick, Index)) -> Option<(String, bool)> {
    let (_, which, kind, len) = pick;
    let must = |term: &str, limit| !text.contains('\\') && term.len() < limit;
    match kind {
        Pick::Word => {
            let words = words(text);
            let word = *(!words.is_empty()).then(|| which.get(&words))?;
            Some((word.to_owned(), must(word, 100)))
        }
        Pick::Ident => {
            let idents = idents(text);
            let ident = *(!idents.is_empty()).then(|| which.get(&idents))?;
            Some((ident.to_owned(), must(ident, 160)))
        }
        Pick::Slice => {
            let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let from = which.index(bounds.len());
            let to = (from + len.index(40) + 1).min(bounds.len() - 1);
            Some((text[bounds[from]..bounds[to]].to_owned(), false))
        }
    }
}

/// Words the query parser reads as operators, and a sign that makes a term an exclusion.
fn is_syntax(query: &str) -> bool {
    matches!(query, "AND" | "OR" | "NOT" | "TO" | "IN")
        || (query.starts_with(['-', '+']) && query[1..].starts_with(|c: char| c.is_alphanumeric()))
}

fn search(index: &SearchIndex, query: &str, literal: bool, width: usize) -> Vec<annal_query::Hit> {
    let mut request = SearchRequest::new(query);
    request.literal = literal;
    request.session = Some(SESSION.into());
    request.limit = 1_000;
    request.snippet_chars = width;
    match index.search(&request) {
        Ok(hits) => hits,
        // A word of thousands of 4-byte characters can be over the query's length limit.
        Err(
            SearchError::Syntax { .. }
            | SearchError::EmptyQuery
            | SearchError::QueryTooLong { .. }
            | SearchError::QueryTooDeep { .. },
        ) => Vec::new(),
        Err(err) => panic!("searching {query:?} (literal: {literal}) failed: {err}"),
    }
}

fn check(case: &Case) {
    let dir = tempfile::tempdir().unwrap();
    let (store, index, places, originals) = build(dir.path(), &case.texts);
    let snapshot = store.snapshot().unwrap();
    let mut queries: Vec<(String, Option<(String, usize)>)> =
        case.raw.iter().map(|q| (q.clone(), None)).collect();
    for pick in &case.picks {
        let i = pick.0.index(case.texts.len());
        if let Some((query, must)) = query_of(&case.texts[i], pick) {
            queries.push((query, must.then(|| places[i].clone())));
        }
    }
    for (query, expected) in &queries {
        for literal in [false, true] {
            let hits = search(&index, query, literal, case.width);
            for hit in &hits {
                assert_eq!(hit.session, SESSION, "the session filter let {hit:?} through");
                let original = &originals[&(hit.entry_id.clone(), hit.block_index)];
                check_snippet(&hit.snippet, original);
                for &(a, b) in &case.lines {
                    let got = get_original(&snapshot, &hit.id(), Some(a..=b));
                    if a == 0 || a > b {
                        assert!(got.is_err(), "lines {a}..={b} were accepted");
                        continue;
                    }
                    let text = got.unwrap().blocks.swap_remove(0).text.unwrap();
                    assert!(original.contains(&text) && text == select_lines(original, a..=b).0);
                }
            }
            let Some((id, block)) = expected else { continue };
            if !literal && is_syntax(query) {
                continue;
            }
            let hit = hits.iter().find(|h| h.entry_id == *id && h.block_index == *block);
            let hit = hit.unwrap_or_else(|| panic!("{query:?} (literal: {literal}) did not find {id}"));
            assert!(!hit.snippet.highlights.is_empty(), "{query:?} marked nothing in {:?}", hit.snippet.text);
        }
    }
    for text in &case.texts {
        check_lines(text, &case.lines);
    }
    index.close().unwrap();
}

proptest! {
    // Each case builds a store and an index: few cases, each with several texts and queries.
    // Regressions are kept beside this file, as `<file>.proptest-regressions` (by default proptest
    // would put them in a folder parallel to the test binary's, away from the test).
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn unicode_text_never_breaks_search_snippets_or_lines(case in case()) {
        check(&case);
    }
}

/// Inputs that once failed, kept as fixed cases.
#[test]
fn fixed_cases() {
    // Lines from 0 were sliced from the end of the text backwards, and panicked.
    assert_eq!(select_lines("one\ntwo\nthree", 0..=1), ("one\n", 1, 1, 3));
    check_lines("one\ntwo\nthree", &[(0, 0), (0, 1), (0, 7)]);

    let texts = [
        // An identifier ending in a control character, at the end of the text: the space it
        // folds to was trimmed away and its highlight ran past the snippet.
        "e\u{301}\0".to_owned(),
        // The same before a cut, in a match longer than the width: the highlight ended inside
        // the `…`; and a match longer than the width was once cut off unmarked.
        format!("ab_cdefghijklmnopq_rstu\u{1}{}", " tail".repeat(40)),
        // Found (the index lower-cases `Σ` to `σ`) but not marked (`str::to_lowercase` gives `ς`).
        "ΟΔΟΣ".to_owned(),
        format!("{} \u{212a}elvin\u{ea}-.%🇯🇵 {}", "x".repeat(50), "y ".repeat(50)),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (_store, index, _, originals) = build(dir.path(), &texts);
    let cases: [(&str, usize, &str); 6] = [
        ("e\u{301}\0", 160, "[e\u{301}]"),
        ("ab_cdefghijklmnopq_rstu\u{1}", 16, "[ab_cdefghijklmnopq_rstu]…"),
        ("ΟΔΟΣ", 160, "[ΟΔΟΣ]"),
        ("\u{212a}elvin\u{ea}-.%🇯🇵", 0, "[\u{212a}elvin\u{ea}-.%🇯🇵]"),
        // A width of `usize::MAX` overflowed the window's end.
        ("\u{212a}elvin\u{ea}-.%🇯🇵", usize::MAX, "[\u{212a}elvin\u{ea}-.%🇯🇵]"),
        ("ΟΔΟΣ", usize::MAX, "[ΟΔΟΣ]"),
    ];
    for (query, width, marked) in cases {
        for literal in [false, true] {
            let hits = search(&index, query, literal, width);
            assert_eq!(hits.len(), 1, "{query:?} (literal: {literal}): {hits:?}");
            check_snippet(&hits[0].snippet, &originals[&(hits[0].entry_id.clone(), hits[0].block_index)]);
            let got = hits[0].snippet.marked("[", "]");
            assert!(got.contains(marked), "{query:?} (literal: {literal}, width {width}): {got:?}");
        }
    }
    index.close().unwrap();
}
