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

use annal_bench::corpus::Corpus;
use annal_bench::records::generate;
use annal_bench::report::thousands;
use annal_engine::Record;
use annal_formats::{detect_format, parse_transcript};
use annal_support::identifiers::{readable, searchable_texts};
use annal_support::rng::Rng;

/// A data set: sessions of records.
pub(crate) struct Dataset {
    pub(crate) name: String,
    pub(crate) sessions: Vec<(String, Vec<Record>)>,
}

impl Dataset {
    /// Searchable blocks (all but binary blobs).
    pub(crate) fn blocks(&self) -> usize {
        self.sessions.iter().flat_map(|(_, r)| r).map(|r| searchable_texts(r).count()).sum()
    }

    /// Bytes of searchable text.
    pub(crate) fn text_bytes(&self) -> u64 {
        self.sessions.iter().flat_map(|(_, r)| r).flat_map(searchable_texts).map(|t| t.len() as u64).sum()
    }

    pub(crate) fn records(&self) -> usize {
        self.sessions.iter().map(|(_, r)| r.len()).sum()
    }
}

/// Every Claude Code, Codex and OpenCode transcript under `folder`.
pub(crate) fn corpus(folder: &Path) -> anyhow::Result<Dataset> {
    let files = Corpus::find(folder)?.files;
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

/// Identifiers for the exact-identifier queries: narrower than the search tests' rule
/// (`annal_support::identifiers`): a path, name or version separator is required and a colon
/// is not, so every system compared reads the query as one term. Kept apart on purpose: the
/// query sets behind docs/performance.md were drawn with this rule, and the tests' rule draws
/// other queries from the same seed.
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
            records.iter().flat_map(move |r| searchable_texts(r).map(move |t| (name.as_str(), t)))
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
