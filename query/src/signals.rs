//! Ranking beyond BM25: the query's words close together, and the question's context.
//!
//! BM25 scores each word of `billing ticket` on its own, so a paragraph that says "billing" in
//! one sentence and "ticket" in another scores like the sentence "the billing ticket is
//! TKT-9". A sloppy phrase of the query's words, an optional clause, adds the phrase's own
//! score where the words stand together.
//!
//! Such a question still names words that several records share; which of them the asker means
//! shows in what it is working on, and a session states a fact close to where its topic was
//! discussed. So the words of the context (the current turn's) find the records they match best
//! (anchors), and a hit near an anchor in the same session ranks higher. The context is not
//! searched for itself: it only says where in a session to look first.
//!
//! A bonus for user and assistant text over tool output was tried and left out: on the
//! retention exam's tuning seed it moved no profile's open book up and two down.

use tantivy::query::{BooleanQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{Searcher, Term};

use crate::query::Terms;
use crate::schema::Fields;
use crate::search::{collect, Located};
use crate::tokenize::{lower_into, word_spans};

/// Distinct words of the context searched: a turn's first words say what it is about, and a
/// pasted file must not make the anchor search as slow as a search for all of its words.
const CONTEXT_WORDS_MAX: usize = 48;

/// Records the context finds that anchor the ranking.
const ANCHORS: usize = 3;

/// Hits ranked by context before the best `limit` are kept: the context can lift one this far
/// down the score order to the top.
pub(crate) const CONTEXT_POOL: usize = 64;

/// How much a hit beside the best anchor gains: its score is multiplied by up to `1 + WEIGHT`.
/// Checked on the retention exam's tuning seed, never a report seed (docs/evaluation.md).
const WEIGHT: f32 = 1.0;

/// At this many records from an anchor, a hit gains half of what one beside it gains.
const SPAN_RECORDS: f32 = 8.0;

/// A record the context matches, and how well (relative to the best, in `(0, 1]`).
#[derive(Debug)]
pub(crate) struct Anchor {
    session: String,
    order: u64,
    weight: f32,
}

/// The distinct lower-cased words of `context`, at most [`CONTEXT_WORDS_MAX`].
fn context_words(context: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    word_spans(context, |from, to| {
        let mut word = String::new();
        lower_into(&context[from..to], &mut word);
        if !out.contains(&word) {
            out.push(word);
        }
        out.len() < CONTEXT_WORDS_MAX
    });
    out
}

/// The records the words of `context` match best under `filters` (the search's own: the same
/// session, roles and ranges, but not its hidden records, since what the reader already sees
/// is the best evidence of what it works on).
pub(crate) fn anchors(
    searcher: &Searcher,
    fields: &Fields,
    filters: &[(Occur, Box<dyn Query>)],
    context: &str,
) -> tantivy::Result<Vec<Anchor>> {
    let words: Vec<Box<dyn Query>> = context_words(context)
        .iter()
        .map(|word| -> Box<dyn Query> {
            let term = Term::from_field_text(fields.text, word);
            Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs))
        })
        .collect();
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, Box::new(BooleanQuery::union(words)))];
    clauses.extend(filters.iter().map(|(occur, query)| (*occur, query.box_clone())));
    let found = collect(searcher, fields, &BooleanQuery::new(clauses), ANCHORS)?;
    let best = found.first().map_or(0.0, |a| a.score);
    if best <= 0.0 {
        return Ok(Vec::new());
    }
    Ok(found
        .into_iter()
        .map(|a| Anchor { session: a.at.session, order: a.at.order, weight: a.score / best })
        .collect())
}

/// Raises the score of each hit near an anchor of its session: by `WEIGHT` times the anchor's
/// weight, halved at `SPAN_RECORDS` records away.
pub(crate) fn boost(hits: &mut [Located], anchors: &[Anchor]) {
    for hit in hits {
        let near = anchors
            .iter()
            .filter(|a| a.session == hit.at.session)
            .map(|a| {
                let distance = hit.at.order.abs_diff(a.order) as f32;
                a.weight / (1.0 + distance / SPAN_RECORDS)
            })
            .fold(0.0_f32, f32::max);
        hit.score *= 1.0 + WEIGHT * near;
    }
}

/// How many other words may stand between the query's words for them to count as together:
/// `billing ticket` matches "billing support ticket" and "ticket for billing".
const PROXIMITY_SLOP: u32 = 3;

/// Most words a query's proximity clause takes: a phrase query over many words costs more than
/// it tells apart.
const PROXIMITY_WORDS_MAX: usize = 6;

/// The sloppy phrase of the words a query looks for, whose score raises the hits where they
/// stand together (see `near.rs`); none for fewer than two words or too many.
pub(crate) fn proximity(fields: &Fields, terms: &Terms) -> Option<PhraseQuery> {
    let words = &terms.words;
    if words.len() < 2 || words.len() > PROXIMITY_WORDS_MAX {
        return None;
    }
    let phrase: Vec<(usize, Term)> =
        words.iter().enumerate().map(|(i, w)| (i, Term::from_field_text(fields.text, w))).collect();
    Some(PhraseQuery::new_with_offset_and_slop(phrase, PROXIMITY_SLOP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_words_are_distinct_lower_cased_and_capped() {
        assert_eq!(
            context_words("Fix the Ledger, the ledger\u{3000}東京 🦀 café"),
            ["fix", "the", "ledger", "東京", "café"]
        );
        let long: String = (0..200).map(|i| format!("w{i} ")).collect();
        assert_eq!(context_words(&long).len(), CONTEXT_WORDS_MAX);
    }
}
