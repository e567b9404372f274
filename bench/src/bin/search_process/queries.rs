//! The query set of the whole-process benchmark, and each query as every system reads it.
//!
//! Four kinds: a rare identifier (one drawn from a block, found in a few), two words (AND), a
//! phrase of three words, and a common word (in at least a tenth of the blocks). Each is asked
//! once without and once with the session it was drawn from as a filter. For SQLite the filter
//! is part of the MATCH expression (the session is an indexed column), so both systems narrow
//! the same way.

use annal_engine::Record;
use annal_support::identifiers::searchable_text;
use annal_support::rng::Rng;

use crate::data::{self, Class, Dataset};

/// What a query looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Identifier,
    Words,
    Phrase,
    Common,
}

impl Kind {
    pub(crate) const ALL: [Kind; 4] = [Kind::Identifier, Kind::Words, Kind::Phrase, Kind::Common];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Kind::Identifier => "rare identifier",
            Kind::Words => "two words (AND)",
            Kind::Phrase => "phrase (3 words)",
            Kind::Common => "common word",
        }
    }
}

/// One query of the set.
#[derive(Clone, Debug)]
pub(crate) struct ProcessQuery {
    pub(crate) kind: Kind,
    pub(crate) terms: Vec<String>,
    pub(crate) session: Option<String>,
}

/// A term quoted for an FTS5 expression: `"` doubled inside.
fn fts_string(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

impl ProcessQuery {
    /// The query as `annal history search` takes it.
    pub(crate) fn annal(&self) -> String {
        match self.kind {
            Kind::Phrase => format!("\"{}\"", self.terms.join(" ")),
            _ => self.terms.join(" "),
        }
    }

    /// The FTS5 MATCH expression: the text column, and the session column when filtered.
    pub(crate) fn fts(&self) -> String {
        let text = match self.kind {
            Kind::Phrase => fts_string(&self.terms.join(" ")),
            _ => self.terms.iter().map(|t| fts_string(t)).collect::<Vec<_>>().join(" AND "),
        };
        match &self.session {
            Some(session) => format!("session : {} AND text : ({text})", fts_string(session)),
            None => format!("text : ({text})"),
        }
    }

    /// A short label for the report.
    pub(crate) fn shown(&self) -> String {
        let mut shown = self.annal();
        if shown.chars().count() > 40 {
            shown = shown.chars().take(39).collect::<String>() + "…";
        }
        match &self.session {
            Some(session) => format!("`{shown}` in {session}"),
            None => format!("`{shown}`"),
        }
    }
}

/// Words in at least a tenth of the first 20,000 blocks, most frequent first.
fn common_words(sessions: &[(String, Vec<Record>)]) -> Vec<String> {
    let mut frequency: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut blocks = 0;
    'all: for (_, records) in sessions {
        for text in records.iter().flat_map(|r| r.blocks.iter()).filter_map(searchable_text) {
            let mut seen: Vec<String> = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.len() >= 4 && w.chars().all(|c| c.is_ascii_alphabetic()))
                .map(str::to_lowercase)
                .collect();
            seen.sort();
            seen.dedup();
            for word in seen {
                *frequency.entry(word).or_default() += 1;
            }
            blocks += 1;
            if blocks == 20_000 {
                break 'all;
            }
        }
    }
    let mut common: Vec<(usize, String)> =
        frequency.into_iter().filter(|(_, n)| *n * 10 >= blocks).map(|(w, n)| (n, w)).collect();
    common.sort_by(|a, b| b.cmp(a));
    common.into_iter().map(|(_, w)| w).collect()
}

/// `per_kind` queries of each kind, each without and with its session.
pub(crate) fn draw(data: &Dataset, per_kind: usize, seed: u64) -> Vec<ProcessQuery> {
    let mut out = Vec::new();
    for query in data::queries(data, per_kind, seed) {
        let kind = match query.class {
            Class::Identifier => Kind::Identifier,
            Class::Words => Kind::Words,
            Class::Phrase => Kind::Phrase,
        };
        out.push(ProcessQuery { kind, terms: query.terms, session: query.session });
    }
    let common = common_words(&data.sessions);
    let mut rng = Rng::new(seed ^ 0xc0ffee);
    for word in common.iter().take(per_kind.max(1) * 3).step_by(3).take(per_kind) {
        let session = data.sessions[rng.index(data.sessions.len())].0.clone();
        out.push(ProcessQuery { kind: Kind::Common, terms: vec![word.clone()], session: None });
        out.push(ProcessQuery { kind: Kind::Common, terms: vec![word.clone()], session: Some(session) });
    }
    out
}
