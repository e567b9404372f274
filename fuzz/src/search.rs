//! The search query parser and its filters under arbitrary input: queries built from the
//! words, identifiers and syntax of a small fixed store (and raw fuzzed text), with arbitrary
//! session, role, tool, error and sourceOrder filters, checked against the records themselves:
//! every hit is a real, matching block (precision), and for the queries the reference matcher
//! reads (`search_oracle`) every matching block is found when the limit allows (recall). The
//! store holds multi-byte text too (Unicode spaces, CJK, emoji, combining marks, right-to-left
//! text, long lines, identifiers touching multi-byte characters): every cut a search, a snippet
//! or a highlight makes must fall on a character boundary.
//!
//! The store and its index are built once per fuzzing process; every input only searches.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use annal_engine::{Block, Record, Role};
use annal_query::{IndexOptions, SearchError, SearchIndex, SearchRequest};
use arbitrary::Arbitrary;

use crate::fresh_store;
use crate::nesting::Hostile;
use crate::search_oracle::{self, Doc, DocId};

/// Words and identifiers the store's records hold, and look-alikes it does not. The first 13
/// are what the records are made of.
const VOCABULARY: [&str; 35] = [
    "deploy",
    "ledger",
    "timeout",
    "ECONNRESET",
    "src/api/client.ts",
    "client.tsx",
    "0x7f3a9c",
    "test_user_auth",
    "test_user_authz",
    "v1.18.31",
    "--max-output",
    "localhost:8080",
    "foo(bar)",
    "role:user",
    "tool:bash",
    "AND",
    "OR",
    "NOT",
    "\"",
    "(",
    ")",
    "-",
    "+",
    "*",
    // From the multi-byte text (`multibyte`): identifiers touching multi-byte characters, and
    // what is not a term there (`src/a.rs`: the chunk is `日本src/a.rs`, its word `日本src`).
    "ERR_X",
    "日本src/a.rs",
    "a.rs",
    "src/a.rs",
    "日本語",
    "テスト",
    "مرحبا",
    "🦀",
    "e\u{301}",
    "\u{3000}",
    "\u{2009}",
];
/// The words of [`VOCABULARY`] that are identifiers, searched as written.
const IDENTIFIERS: [&str; 12] = [
    "src/api/client.ts",
    "client.tsx",
    "test_user_auth",
    "test_user_authz",
    "v1.18.31",
    "--max-output",
    "localhost:8080",
    "foo(bar)",
    "ERR_X",
    "日本src/a.rs",
    "a.rs",
    "src/a.rs",
];
const ROLES: [Role; 4] = [Role::User, Role::Assistant, Role::Tool, Role::System];
const TOOLS: [&str; 3] = ["Bash", "Read", "grep"];
/// Sessions of the store: `base`, `other`, and `fork`, a fork of `base` at sourceOrder 3.
const SESSIONS: [&str; 4] = ["base", "other", "fork", "missing"];
const FORK_AT: u64 = 3;

struct Fixture {
    _dir: tempfile::TempDir,
    index: SearchIndex,
    /// (session, records) as appended; `fork` lists only its own records.
    sessions: Vec<(&'static str, Vec<Record>)>,
    /// What the index must hold, for the reference matcher.
    docs: Vec<Doc>,
}

fn text(id: String, role: Role, text: &str) -> Record {
    Record::text(id, role, text)
}

fn records(session: &str, turns: usize) -> Vec<Record> {
    let mut out = Vec::new();
    for t in 0..turns {
        let word = VOCABULARY[(t * 7 + session.len()) % 13];
        out.push(text(format!("{session}-u{t}"), Role::User, &format!("please {word} the ledger step {t}")));
        let tool = TOOLS[t % TOOLS.len()];
        let call = format!("{session}-c{t}");
        let input = serde_json::json!({ "command": format!("run {word} --max-output 5") }).to_string();
        let blocks = vec![
            Block::Text { text: format!("I will {word} now; see src/api/client.ts:{t}:2") },
            Block::ToolCall { call_id: call.clone(), tool: tool.into(), input, target: String::new() },
        ];
        out.push(Record {
            entry_id: format!("{session}-a{t}"),
            role: Role::Assistant,
            timestamp: None,
            blocks,
            meta: Default::default(),
        });
        let result = Block::ToolResult {
            call_id: call,
            tool: tool.into(),
            is_error: t % 3 == 0,
            output: format!(
                "error ECONNRESET at 0x7f3a9c after {word}\ntimeout v1.18.31 test_user_auth\u{3000}日本src/a.rs"
            ),
        };
        out.push(Record {
            entry_id: format!("{session}-r{t}"),
            role: Role::Tool,
            timestamp: None,
            blocks: vec![result],
            meta: Default::default(),
        });
        out.push(text(format!("{session}-s{t}"), Role::System, "localhost:8080 foo(bar) deploy"));
        out.push(text(format!("{session}-m{t}"), Role::Assistant, &multibyte(t, word)));
    }
    out
}

/// Text where words, identifiers and snippet windows must be cut on character boundaries: thin,
/// no-break, narrow and ideographic spaces, CJK, emoji (a ZWJ family, a flag), combining marks,
/// right-to-left text between bidi controls, identifiers touching multi-byte characters, and
/// every other turn a line of thousands of characters (one word of 9000 bytes, too long to be
/// indexed, then many short ones).
fn multibyte(t: usize, word: &str) -> String {
    let mut out = format!(
        "ERR_X\u{2009}failed in 日本src/a.rs\u{3000}{word}\u{a0}ledger 👨\u{200d}👩\u{200d}👧 🇯🇵 \
         e\u{301}te\u{301} مرحبا \u{202e}שלום\u{202c} timeout\u{202f}step {t}\n日本語の{word}テスト \
         🦀deploy🦀 テスト→ERR_X"
    );
    if t.is_multiple_of(2) {
        out.push_str(&"日".repeat(3_000));
        out.push_str(&format!("\u{2009}{word}\u{3000}日本語 🦀").repeat(300));
    }
    out
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let store = Arc::new(fresh_store(64));
        let base = records("base", 4);
        let other = records("other", 3);
        let own = records("fork", 2);
        let fail = |err: &dyn std::fmt::Display| -> ! { panic!("building the search fixture: {err}") };
        store.append("base", None, base.clone()).unwrap_or_else(|e| fail(&e));
        store.append("other", None, other.clone()).unwrap_or_else(|e| fail(&e));
        store.fork("base", FORK_AT, "fork").unwrap_or_else(|e| fail(&e));
        store.append("fork", None, own.clone()).unwrap_or_else(|e| fail(&e));
        let dir = tempfile::tempdir().unwrap_or_else(|e| fail(&e));
        let options = IndexOptions { folder: Some(dir.path().join("index")), ..IndexOptions::default() };
        let index = SearchIndex::open(store, options).unwrap_or_else(|e| fail(&e));
        index.wait_searchable(Duration::from_secs(60)).unwrap_or_else(|e| fail(&e));
        let docs =
            search_oracle::documents(&[("base", 0, &base), ("other", 0, &other), ("fork", FORK_AT, &own)]);
        Fixture { _dir: dir, index, sessions: vec![("base", base), ("other", other), ("fork", own)], docs }
    })
}

#[derive(Arbitrary, Debug)]
enum Piece {
    Known(u8),
    Raw(String),
    Hostile(Hostile),
}

/// A search request from fuzz bytes.
#[derive(Arbitrary, Debug)]
pub struct Search {
    pieces: Vec<Piece>,
    literal: bool,
    session: Option<u8>,
    role: Option<u8>,
    tool: Option<Result<u8, String>>,
    errors_only: bool,
    from: Option<u8>,
    to: Option<u8>,
    limit: u8,
    snippet_chars: u16,
}

impl Search {
    fn request(&self) -> SearchRequest {
        let words: Vec<String> = self
            .pieces
            .iter()
            .map(|piece| match piece {
                Piece::Known(i) => VOCABULARY[usize::from(*i) % VOCABULARY.len()].to_owned(),
                Piece::Raw(text) => text.clone(),
                Piece::Hostile(hostile) => hostile.text(),
            })
            .collect();
        let mut request = SearchRequest::new(words.join(" "));
        request.literal = self.literal;
        request.session = self.session.map(|i| SESSIONS[usize::from(i) % SESSIONS.len()].to_owned());
        request.role = self.role.map(|i| ROLES[usize::from(i) % ROLES.len()]);
        request.tool = self.tool.as_ref().map(|tool| match tool {
            Ok(i) => TOOLS[usize::from(*i) % TOOLS.len()].to_uppercase(),
            Err(raw) => raw.clone(),
        });
        request.errors_only = self.errors_only;
        request.source_orders =
            self.from.map_or(0, u64::from)..self.to.map_or(u64::MAX, |to| u64::from(to) % 20);
        request.limit = usize::from(self.limit % 40);
        request.snippet_chars = usize::from(self.snippet_chars % 2_000);
        request
    }
}

/// The record at `order` of `session` as `fixture` appended it, following the fork to `base`.
fn record_at<'f>(fixture: &'f Fixture, session: &str, order: u64) -> Option<&'f Record> {
    let own = |name: &str| fixture.sessions.iter().find(|(n, _)| *n == name).map(|(_, r)| r);
    match session {
        "fork" if order >= FORK_AT => own("fork")?.get(usize::try_from(order - FORK_AT).ok()?),
        _ => own(session)?.get(usize::try_from(order).ok()?),
    }
}

/// Properties: searching never panics, nor overflows a 512 KiB stack however deep the query
/// nests, and fails only for what the request is (syntax, nothing to search, too long or too
/// deep, an unknown session, an empty range), never as damage; a search is deterministic;
/// every hit is a real block of the record the index names, within the limit, and passes every
/// filter (a fork's session filter admits its parent's records below the fork point only); and
/// for a query the reference matcher reads, the hits are exactly its matches, or `limit` of them.
pub fn check_search(search: &Search) {
    let fixture = fixture();
    let request = search.request();
    // On a small stack, so nesting the limits miss overflows here (`nesting.rs`).
    let mut searched = None;
    crate::nesting::on_a_small_stack(|| searched = Some(fixture.index.search(&request)));
    let Some(searched) = searched else { return };
    let hits = match searched {
        Ok(hits) => hits,
        Err(SearchError::Syntax { .. } | SearchError::EmptyQuery | SearchError::QueryTooDeep { .. }) => {
            return
        }
        Err(SearchError::QueryTooLong { bytes, limit_bytes }) => {
            assert!(bytes == request.query.len() && bytes > limit_bytes, "{bytes} bytes refused");
            return;
        }
        Err(SearchError::UnknownSession(name)) => {
            assert_eq!(name, "missing", "a known session was reported unknown");
            return;
        }
        Err(SearchError::InvalidFilter(_)) => {
            assert!(request.source_orders.is_empty(), "a valid filter was refused");
            return;
        }
        Err(err) => panic!("search failed for {request:?}: {err}"),
    };
    let again = fixture.index.search(&request).unwrap_or_else(|err| panic!("the same search failed: {err}"));
    assert_eq!(again, hits, "the same search gave other hits");
    assert!(hits.len() <= request.limit, "{} hits over the limit {}", hits.len(), request.limit);
    let mut seen = std::collections::HashSet::new();
    for hit in &hits {
        assert!(seen.insert((hit.session.clone(), hit.source_order, hit.block_index)), "hit {hit:?} twice");
        let record = record_at(fixture, &hit.session, hit.source_order)
            .unwrap_or_else(|| panic!("hit {hit:?} names no record"));
        assert_eq!(hit.entry_id, record.entry_id);
        assert_eq!(hit.role, record.role);
        let block =
            record.blocks.get(hit.block_index).unwrap_or_else(|| panic!("hit {hit:?} names no block"));
        if let Some(role) = request.role {
            assert_eq!(hit.role, role, "role filter");
        }
        assert!(request.source_orders.contains(&hit.source_order), "sourceOrder filter: {hit:?}");
        if let Some(tool) = &request.tool {
            let block_tool = match block {
                Block::ToolCall { tool, .. } | Block::ToolResult { tool, .. } => tool.as_str(),
                _ => panic!("tool filter {tool:?} let through a {} block", hit.kind),
            };
            assert!(block_tool.eq_ignore_ascii_case(tool), "tool filter {tool:?}: {block_tool}");
        }
        if request.errors_only {
            assert!(matches!(block, Block::ToolResult { is_error: true, .. }), "errors filter: {hit:?}");
        }
        match request.session.as_deref() {
            Some("fork") => {
                let inherited = hit.session == "base" && hit.source_order < FORK_AT;
                assert!(hit.session == "fork" || inherited, "fork filter let through {hit:?}");
            }
            Some(session) => assert_eq!(hit.session, session, "session filter"),
            None => {}
        }
        let original = match block {
            Block::Text { text } | Block::Thinking { text } => text.as_str(),
            Block::ToolCall { input, .. } => input.as_str(),
            Block::ToolResult { output, .. } => output.as_str(),
            Block::Blob { .. } => panic!("a binary blob was indexed: {hit:?}"),
        };
        // Snippets fold runs of whitespace into one space and mark cuts with `…`.
        let folded = fold(original);
        for piece in hit.snippet.text.split('…').map(str::trim).filter(|p| !p.is_empty()) {
            assert!(folded.contains(piece), "snippet {:?} is not from the original", hit.snippet.text);
        }
        for range in &hit.snippet.highlights {
            assert!(hit.snippet.text.get(range.clone()).is_some(), "highlight {range:?} off a char boundary");
        }
    }
    check_matches(fixture, &request, &hits);
}

/// The hits against the reference matcher, when it reads the query: none it does not expect
/// (precision), and all it expects when the limit allows, else exactly `limit` (recall).
fn check_matches(fixture: &Fixture, request: &SearchRequest, hits: &[annal_query::Hit]) {
    let fork = ("fork", "base", FORK_AT);
    let Some(expected) = search_oracle::expected(&fixture.docs, request, &IDENTIFIERS, fork) else {
        return;
    };
    let found: BTreeSet<DocId> =
        hits.iter().map(|hit| (hit.session.clone(), hit.source_order, hit.block_index)).collect();
    let extra: Vec<&DocId> = found.difference(&expected).collect();
    assert!(extra.is_empty(), "{request:?} found blocks that do not match: {extra:?}");
    // Copies of one block are one hit: recall counts each group of copies once.
    let copy_of = |id: &DocId| search_oracle::copy_of(&fixture.docs, id);
    let groups: BTreeSet<_> = expected.iter().map(copy_of).collect();
    let found_groups: BTreeSet<_> = found.iter().map(copy_of).collect();
    assert_eq!(found_groups.len(), hits.len(), "{request:?} listed copies of one block twice");
    if groups.len() <= request.limit {
        let missing: Vec<_> = groups.difference(&found_groups).collect();
        assert!(missing.is_empty(), "{request:?} missed matching blocks {missing:?}");
    } else {
        assert_eq!(hits.len(), request.limit, "{request:?}: {} blocks differ", groups.len());
    }
}

/// `text` with every run of whitespace and control characters as one space.
fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last_space = false;
    for c in text.chars() {
        if c.is_whitespace() || c.is_control() {
            if !last_space {
                out.push(' ');
            }
            last_space = true;
        } else {
            out.push(c);
            last_space = false;
        }
    }
    out
}
