//! The full-scan oracle: which blocks truly answer a query, read straight from the generated
//! text, so each system's top 10 is scored for correctness before its latency is compared.
//!
//! A block answers a query when every word stands in it as a word, a phrase's words stand in
//! it in a row, and an identifier stands in it whole (not inside a longer identifier); case is
//! ignored, as every system compared ignores it. Words are runs of letters and digits.

use std::collections::HashMap;

use annal_engine::Record;
use annal_support::identifiers::searchable_text;

use crate::queries::{Kind, ProcessQuery};

/// A block's identity as every system reports it: session, entryId and block index.
pub(crate) type BlockId = (String, String, usize);

/// Every searchable block of the data set, with its text, to check hits against.
pub(crate) struct Oracle {
    texts: HashMap<BlockId, String>,
    /// Blocks answering each query, by the query's position in the set.
    counts: Vec<usize>,
}

fn words(lower: &str) -> impl Iterator<Item = &str> {
    lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `needle` (lower-cased) stands in `lower` not inside a longer identifier.
fn contains_whole(lower: &str, needle: &str) -> bool {
    lower.match_indices(needle).any(|(at, _)| {
        let before = lower[..at].chars().next_back();
        let after = lower[at + needle.len()..].chars().next();
        let edge = |c: Option<char>, inner: Option<char>| {
            c.is_none_or(|c| !is_ident_char(c) || !inner.is_some_and(is_ident_char))
        };
        edge(before, needle.chars().next()) && edge(after, needle.chars().next_back())
    })
}

/// Whether a block's lower-cased text answers `query` (its session already checked).
pub(crate) fn answers(lower: &str, query: &ProcessQuery) -> bool {
    match query.kind {
        Kind::Identifier => contains_whole(lower, &query.terms[0].to_lowercase()),
        Kind::Common | Kind::Words => {
            let wanted: Vec<String> = query.terms.iter().map(|t| t.to_lowercase()).collect();
            let mut seen = vec![false; wanted.len()];
            for word in words(lower) {
                for (i, w) in wanted.iter().enumerate() {
                    seen[i] |= word == w;
                }
            }
            seen.iter().all(|s| *s)
        }
        Kind::Phrase => {
            let wanted: Vec<String> = query.terms.iter().map(|t| t.to_lowercase()).collect();
            let all: Vec<&str> = words(lower).collect();
            all.windows(wanted.len()).any(|run| run.iter().zip(&wanted).all(|(a, b)| a == b))
        }
    }
}

impl Oracle {
    /// One pass over every block, counting the blocks that answer each query.
    pub(crate) fn scan(sessions: &[(String, Vec<Record>)], queries: &[ProcessQuery]) -> Oracle {
        let mut texts = HashMap::new();
        let mut counts = vec![0; queries.len()];
        for (session, records) in sessions {
            for record in records {
                for (index, block) in record.blocks.iter().enumerate() {
                    let Some(text) = searchable_text(block) else { continue };
                    let lower = text.to_lowercase();
                    for (n, query) in queries.iter().enumerate() {
                        let in_session = query.session.as_ref().is_none_or(|s| s == session);
                        counts[n] += usize::from(in_session && answers(&lower, query));
                    }
                    texts.insert((session.clone(), record.entry_id.clone(), index), lower);
                }
            }
        }
        Oracle { texts, counts }
    }

    /// How many blocks answer query `n`.
    pub(crate) fn count(&self, n: usize) -> usize {
        self.counts[n]
    }

    /// The share of the best possible top `top` that `hits` are: true answers among them
    /// over min(`top`, answers there are). `None` when nothing answers the query.
    pub(crate) fn overlap(
        &self,
        n: usize,
        query: &ProcessQuery,
        hits: &[BlockId],
        top: usize,
    ) -> Option<f64> {
        let possible = self.counts[n].min(top);
        if possible == 0 {
            return None;
        }
        let right = hits
            .iter()
            .take(top)
            .filter(|id| query.session.as_ref().is_none_or(|s| *s == id.0))
            .filter(|id| self.texts.get(*id).is_some_and(|lower| answers(lower, query)))
            .count();
        Some(right as f64 / possible as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(kind: Kind, terms: &[&str]) -> ProcessQuery {
        ProcessQuery { kind, terms: terms.iter().map(|t| (*t).to_owned()).collect(), session: None }
    }

    #[test]
    fn identifiers_stand_whole_and_words_as_words() {
        let id = query(Kind::Identifier, &["ERR_RESPONSE_99"]);
        assert!(answers("failed: err_response_99 at", &id));
        assert!(!answers("failed: err_response_990 at", &id));
        assert!(answers("(err_response_99)", &id));
        let path = query(Kind::Identifier, &["src/format/a.rs"]);
        assert!(answers("see src/format/a.rs:12", &path));
        assert!(!answers("see xsrc/format/a.rs", &path));
        assert!(answers("cache hit", &query(Kind::Common, &["cache"])));
        assert!(!answers("cached hit", &query(Kind::Common, &["cache"])));
        assert!(answers("the retry budget, again", &query(Kind::Phrase, &["retry", "budget"])));
        assert!(!answers("retry the budget", &query(Kind::Phrase, &["retry", "budget"])));
    }
}
