#![cfg(feature = "corpus")]
//! For each real transcript in the folder named by `ANNAL_CORPUS`: identifiers taken from its
//! own records (paths, flags, ids, versions, snake_case names, URLs) are found in the top 5 hits
//! for their session, and the hit's original holds the identifier. A missing corpus or format
//! folder, or a transcript with no identifier checked, fails the test.
//!
//! Run: `ANNAL_CORPUS=<corpus folder> cargo test -p annal-tests --features corpus --test search_corpus`
#![allow(clippy::unwrap_used)]

mod search_support;

use std::collections::BTreeSet;
use std::error::Error;

use annal_engine::{parse_transcript, Block, Record};
use annal_query::{get_original, SearchRequest};
use search_support::*;

/// Identifiers checked per session, spread over it.
const PER_SESSION: usize = 12;

fn block_texts(record: &Record) -> impl Iterator<Item = &str> {
    record.blocks.iter().filter_map(|block| match block {
        Block::Text { text } | Block::Thinking { text } => Some(text.as_str()),
        Block::ToolCall { input, .. } => Some(input.as_str()),
        Block::ToolResult { output, .. } => Some(output.as_str()),
        Block::Blob { .. } => None,
    })
}

/// `text` with JSON escapes of whitespace and quotes (`\\n`, `\\t`, `\\r`, `\\"`) as spaces, the
/// way a person reads a tool's JSON input; an escaped backslash stays.
fn unescaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('n' | 't' | 'r' | '"')) => {
                chars.next();
                out.push(' ');
            }
            ('\\', Some('\\')) => {
                chars.next();
                out.push_str("\\\\");
            }
            _ => out.push(c),
        }
    }
    out
}

/// Identifier-like words of `text`, as a person would copy them out of it: split at whitespace,
/// quotes, brackets, list punctuation and the arrows and box drawing of tool output, sentence
/// punctuation trimmed, with a letter or digit and something else in them. Words a query would
/// read as syntax (`-x` excludes x, `role:...` names a field) are left out.
fn identifiers(text: &str, out: &mut Vec<String>) {
    let text = unescaped(text);
    let separator = |c: char| {
        c.is_whitespace()
            || "\"'`()[]{}<>,;|".contains(c)
            || matches!(c, '\u{2190}'..='\u{21FF}' | '\u{2500}'..='\u{257F}' | '\u{2022}' | '\u{2026}' | '\u{00B7}')
    };
    for word in text.split(separator) {
        let word = word.trim_matches(|c: char| ".:!?/\\*=&".contains(c));
        let has_alnum = word.chars().any(char::is_alphanumeric);
        let compound = !word.chars().all(char::is_alphanumeric);
        let syntax = (word.starts_with(['-', '+']) && word.chars().nth(1).is_some_and(char::is_alphanumeric))
            || ["session:", "role:", "tool:", "target:", "error:", "text:", "ident:"]
                .iter()
                .any(|field| word.to_lowercase().starts_with(field));
        if has_alnum && compound && !syntax && (6..100).contains(&word.len()) {
            out.push(word.to_owned());
        }
    }
}

#[test]
fn identifiers_from_each_transcript_are_found_in_the_top_5_of_their_session() -> Result<(), Box<dyn Error>> {
    let mut checked = 0;
    for (name, path, format) in annal_tests::corpus::files()? {
        let checked_before = checked;
        let stem = path.file_stem().and_then(|n| n.to_str()).unwrap_or("session").to_owned();
        let parsed = parse_transcript(&std::fs::read(&path)?, format, &stem);
        let dir = tempfile::tempdir()?;
        let store = open_store(&dir.path().join("corpus.redb"));
        for session in &parsed.sessions {
            for chunk in session.records.chunks(1000) {
                store.append(&session.name, None, chunk.to_vec())?;
            }
        }
        let index = open_index(&store);
        searchable(&index);
        assert_index_equals_journal(&index, &store);
        let snapshot = store.snapshot()?;
        for session in &parsed.sessions {
            let mut candidates = Vec::new();
            for record in &session.records {
                for text in block_texts(record) {
                    identifiers(text, &mut candidates);
                }
            }
            let mut seen = BTreeSet::new();
            candidates.retain(|c| seen.insert(c.to_lowercase()));
            let step = (candidates.len() / PER_SESSION).max(1);
            for wanted in candidates.iter().step_by(step).take(PER_SESSION) {
                let mut request = SearchRequest::new(wanted.clone());
                request.session = Some(session.name.clone());
                request.limit = 5;
                let hits = index.search(&request).map_err(|e| format!("{name}: {wanted:?}: {e}"))?;
                let holds = hits.iter().any(|hit| {
                    get_original(&snapshot, &hit.id(), None).is_ok_and(|original| {
                        original
                            .blocks
                            .iter()
                            .filter_map(|b| b.text.as_deref())
                            .any(|text| text.to_lowercase().contains(&wanted.to_lowercase()))
                    })
                });
                let found: Vec<String> = hits.iter().map(|h| h.id()).collect();
                assert!(
                    holds,
                    "{name}, session {}: {wanted:?} is not in the top 5 ({found:?})",
                    session.name
                );
                checked += 1;
            }
        }
        index.close()?;
        assert!(checked > checked_before, "{name}: no identifier was checked");
    }
    eprintln!("{checked} identifiers found");
    assert!(checked > 0, "no identifiers were checked");
    Ok(())
}
