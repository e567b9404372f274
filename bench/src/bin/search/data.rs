//! The search benchmark's data sets and query sets.
//!
//! Four data sets: the real transcripts of a corpus folder; agent-like records generated with a
//! Zipfian vocabulary (so word frequencies look like real text), 10,000 records and a store of
//! `--blocks` blocks (1M by default), with identifiers planted in them; and the append
//! benchmark's 10,000 records, whose 64-word vocabulary puts every word in nearly every block
//! (a stress case for phrases and conjunctions). Queries are drawn from each data set's own text, so every
//! query has answers: exact identifiers, words, and phrases, each with and without a session
//! filter (the session the query was drawn from).

use std::path::Path;

use annal_bench::records::generate;
use annal_engine::{detect_format, parse_transcript, Block, Record};
use annal_support::rng::Rng;
use anyhow::Context as _;

/// A data set: sessions of records.
pub(crate) struct Dataset {
    pub(crate) name: String,
    pub(crate) sessions: Vec<(String, Vec<Record>)>,
}

impl Dataset {
    /// Searchable blocks (all but binary blobs).
    pub(crate) fn blocks(&self) -> usize {
        self.sessions.iter().flat_map(|(_, r)| r).map(|r| texts(r).count()).sum()
    }

    /// Bytes of searchable text.
    pub(crate) fn text_bytes(&self) -> u64 {
        self.sessions.iter().flat_map(|(_, r)| r).flat_map(texts).map(|t| t.len() as u64).sum()
    }

    pub(crate) fn records(&self) -> usize {
        self.sessions.iter().map(|(_, r)| r.len()).sum()
    }
}

/// The searchable texts of a record, in block order.
pub(crate) fn texts(record: &Record) -> impl Iterator<Item = &str> {
    record.blocks.iter().filter_map(|block| match block {
        Block::Text { text } | Block::Thinking { text } => Some(text.as_str()),
        Block::ToolCall { input, .. } => Some(input.as_str()),
        Block::ToolResult { output, .. } => Some(output.as_str()),
        Block::Blob { .. } => None,
    })
}

/// Every Claude Code, Codex and OpenCode transcript under `folder`.
pub(crate) fn corpus(folder: &Path) -> anyhow::Result<Dataset> {
    let mut files = Vec::new();
    let mut stack = vec![folder.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if matches!(path.extension().and_then(|e| e.to_str()), Some("jsonl" | "json")) {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut sessions = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file)?;
        let Some(format) = detect_format(&bytes) else { continue };
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("session");
        for session in parse_transcript(&bytes, format, stem).sessions {
            if !session.records.is_empty() {
                sessions.push((session.name, session.records));
            }
        }
    }
    anyhow::ensure!(!sessions.is_empty(), "no transcripts annal reads under {}", folder.display());
    Ok(Dataset { name: "corpus".into(), sessions })
}

/// The append benchmark's records, as one session.
pub(crate) fn append_workload(records: usize, seed: u64) -> Dataset {
    Dataset {
        name: format!("append workload, {} records", thousands(records as u64)),
        sessions: vec![("workload".into(), generate(records, seed))],
    }
}

fn thousands(n: u64) -> String {
    annal_bench::report::thousands(n)
}

/// What a query looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Class {
    Identifier,
    Words,
    Phrase,
}

impl Class {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Class::Identifier => "exact identifier",
            Class::Words => "words (2, AND)",
            Class::Phrase => "phrase (3 words)",
        }
    }
}

/// One query of the set.
#[derive(Clone, Debug)]
pub(crate) struct Query {
    pub(crate) class: Class,
    /// The words or identifier, as typed.
    pub(crate) terms: Vec<String>,
    pub(crate) session: Option<String>,
}

impl Query {
    /// The query as annal reads it.
    pub(crate) fn annal(&self) -> String {
        match self.class {
            Class::Phrase => format!("\"{}\"", self.terms.join(" ")),
            _ => self.terms.join(" "),
        }
    }
}

/// `text` as a person reads it: JSON escapes of whitespace and quotes in tool inputs
/// (`\\n`, `\\t`, `\\r`, `\\"`) become spaces, so no query asks for `nfield` out of `\\nfield`.
fn readable(text: &str) -> String {
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

fn identifiers_of(text: &str) -> Vec<&str> {
    text.split(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;|".contains(c))
        .map(|w| w.trim_matches(|c: char| ".:!?/\\*=&".contains(c)))
        .filter(|w| {
            (6..80).contains(&w.len())
                && w.chars().any(char::is_alphanumeric)
                && w.chars().any(|c| matches!(c, '/' | '_' | '-' | '.'))
                && !w.starts_with('-')
                && !w.contains(':')
        })
        .collect()
}

fn words_of(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 4 && w.chars().all(char::is_alphabetic))
        .collect()
}

/// `per_class` queries of each class drawn from the data set, each once without and once with
/// the session it was drawn from as a filter.
pub(crate) fn queries(data: &Dataset, per_class: usize, seed: u64) -> Vec<Query> {
    let mut rng = Rng::new(seed ^ 0x5ea7c4);
    let all: Vec<(&str, &str)> = data
        .sessions
        .iter()
        .flat_map(|(name, records)| {
            records.iter().flat_map(move |r| texts(r).map(move |t| (name.as_str(), t)))
        })
        .collect();
    let mut out = Vec::new();
    for class in [Class::Identifier, Class::Words, Class::Phrase] {
        let mut made = 0;
        let mut tries = 0;
        while made < per_class && tries < per_class * 2_000 {
            tries += 1;
            let (session, raw) = all[rng.index(all.len())];
            let text = readable(raw);
            let text = text.as_str();
            let terms: Vec<String> = match class {
                Class::Identifier => {
                    let found = identifiers_of(text);
                    if found.is_empty() {
                        continue;
                    }
                    vec![found[rng.index(found.len())].to_owned()]
                }
                Class::Words => {
                    let words = words_of(text);
                    if words.len() < 2 {
                        continue;
                    }
                    let a = rng.index(words.len());
                    let b = rng.index(words.len());
                    if words[a].eq_ignore_ascii_case(words[b]) {
                        continue;
                    }
                    vec![words[a].to_owned(), words[b].to_owned()]
                }
                Class::Phrase => {
                    // Three words in a row, separated by single spaces in the original.
                    let tokens: Vec<&str> = text.split(' ').collect();
                    if tokens.len() < 3 {
                        continue;
                    }
                    let at = rng.index(tokens.len() - 2);
                    let run = &tokens[at..at + 3];
                    if !run.iter().all(|w| w.len() >= 2 && w.chars().all(char::is_alphabetic)) {
                        continue;
                    }
                    run.iter().map(|w| (*w).to_owned()).collect()
                }
            };
            out.push(Query { class, terms: terms.clone(), session: None });
            out.push(Query { class, terms, session: Some(session.to_owned()) });
            made += 1;
        }
    }
    out
}
