//! The proximity signal as one query: a search's hits, each raised by the score of its words
//! standing together, without scoring that phrase for hits that cannot reach the best.
//!
//! As a plain optional clause (`base` required, the phrase should), tantivy can prune nothing:
//! a boolean query with a phrase clause is scored document by document, and the phrase reads
//! the positions of every document that has the words. Where nearly every block has them (a
//! small vocabulary), a two-word search cost four times what it did without the signal. The
//! phrase adds at most its BM25 weight (the sum of its words' idf times `1 + k1`: a BM25 score
//! never reaches its weight), so a document whose base score is that far below the cut cannot
//! reach it: `base` is offered only the documents above the cut lowered by that bound (a
//! `base` tantivy can prune skips the rest; the boolean query a search builds is scored
//! document by document, which is cheap without positions), and the phrase is scored only for
//! what passes. The scores are the optional clause's, the same sum in the same order, so the
//! hits and their order are unchanged.
//!
//! Where every word stands in nearly every block, that bound prunes little. A tighter one holds
//! for a phrase of two words when `base` sums each word's own BM25 score (no boost scales
//! them): tantivy counts a two-word phrase at most as often as its rarer word occurs in the
//! block (each match takes one position of each), its weight is the sum of theirs, and
//! `x / (x + k)` grows with `x`, so the phrase adds at most what the words already scored. A
//! document then reaches the cut only if its base score reaches half of it. (With three words
//! or more, tantivy's sloppy count may exceed the first word's count, so only the weight bounds.)

use tantivy::query::{
    Bm25Weight, BooleanQuery, BoostQuery, EnableScoring, Explanation, Occur, PhraseQuery, Query,
    RequiredOptionalScorer, Scorer, SumCombiner, TermQuery, Weight,
};
use tantivy::{DocId, DocSet, Score, SeekDangerResult, SegmentReader, Term};

/// A margin on the phrase's bound, for the rounding of the sums compared against it.
const BOUND_MARGIN: Score = 1.001;

/// `base`, each match raised by `phrase`'s score where the phrase matches.
#[derive(Debug)]
pub(crate) struct Near {
    base: Box<dyn Query>,
    phrase: PhraseQuery,
    /// `base`'s score holds each phrase word's own score, unscaled (see [`sums_words`] and
    /// [`scores_word`]).
    covers: bool,
}

impl Near {
    /// `phrase`'s words must be words `base` looks for in the same field, outside exclusions.
    pub(crate) fn new(base: Box<dyn Query>, phrase: PhraseQuery) -> Near {
        let terms = phrase.phrase_terms();
        let covers = terms.len() == 2
            && sums_words(base.as_ref())
            && terms.iter().all(|term| scores_word(base.as_ref(), term));
        Near { base, phrase, covers }
    }

    /// The same query as tantivy's boolean one, to check against.
    #[cfg(test)]
    fn boolean(&self) -> BooleanQuery {
        BooleanQuery::new(vec![
            (Occur::Must, self.base.box_clone()),
            (Occur::Should, Box::new(self.phrase.clone())),
        ])
    }
}

impl Clone for Near {
    fn clone(&self) -> Near {
        Near { base: self.base.box_clone(), phrase: self.phrase.clone(), covers: self.covers }
    }
}

impl Query for Near {
    fn weight(&self, scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        let EnableScoring::Enabled { statistics_provider, .. } = scoring else {
            // Unscored, the phrase changes nothing: it is optional.
            return self.base.weight(scoring);
        };
        let terms: Vec<Term> = self.phrase.phrase_terms();
        // At the smallest field norm and the largest count the factor rounds to 1: the weight.
        let bound = Bm25Weight::for_terms(statistics_provider, &terms)?.score(0, u32::MAX) * BOUND_MARGIN;
        Ok(Box::new(NearWeight {
            base: self.base.weight(scoring)?,
            phrase: self.phrase.weight(scoring)?,
            bound,
            covers: self.covers,
        }))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        self.base.query_terms(visitor);
        self.phrase.query_terms(visitor);
    }
}

/// Whether each score `query` gives is a sum of its clauses' scores down to its terms', none
/// scaled: tantivy's boolean queries sum what matches; a boost scales.
fn sums_words(query: &dyn Query) -> bool {
    if query.downcast_ref::<BoostQuery>().is_some() {
        return false;
    }
    match query.downcast_ref::<BooleanQuery>() {
        Some(boolean) => boolean.clauses().iter().all(|(_, clause)| sums_words(clause.as_ref())),
        None => true,
    }
}

/// Whether every document `query` matches that holds `term` has `term`'s own BM25 score among
/// its summands: a term query for it that is required, or optional in a part that is required.
/// (A set of terms scores a constant; a term under an optional group may go unscored.) The
/// text field's term queries read the counts (`WithFreqs`): the parser's and `query.rs`'s do.
fn scores_word(query: &dyn Query, term: &Term) -> bool {
    if let Some(word) = query.downcast_ref::<TermQuery>() {
        return word.term() == term;
    }
    let Some(boolean) = query.downcast_ref::<BooleanQuery>() else {
        return false;
    };
    boolean.clauses().iter().any(|(occur, clause)| match occur {
        Occur::Must => scores_word(clause.as_ref(), term),
        Occur::Should => clause.downcast_ref::<TermQuery>().is_some_and(|word| word.term() == term),
        Occur::MustNot => false,
    })
}

struct NearWeight {
    base: Box<dyn Weight>,
    phrase: Box<dyn Weight>,
    /// More than the phrase can add to any document's score.
    bound: Score,
    covers: bool,
}

impl NearWeight {
    /// The least base score that may still reach `threshold` with the phrase's help.
    fn lowered(&self, threshold: Score) -> Score {
        if threshold == Score::MIN {
            Score::MIN
        } else if self.covers && threshold > 0.0 {
            (threshold - self.bound).max(threshold / (2.0 * BOUND_MARGIN))
        } else {
            threshold - self.bound
        }
    }
}

impl Weight for NearWeight {
    /// What a boolean query of `base` required and the phrase optional scores with.
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let base = self.base.scorer(reader, boost)?;
        let phrase = self.phrase.scorer(reader, boost)?;
        Ok(Box::new(RequiredOptionalScorer::<_, _, SumCombiner>::new(base, phrase)))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let base = self.base.explain(reader, doc)?;
        let mut scorer = self.scorer(reader, 1.0)?;
        let score = if scorer.seek(doc) == doc { scorer.score() } else { base.value() };
        let mut explanation = Explanation::new("the query, and its words together", score);
        explanation.add_detail(base);
        if let Ok(phrase) = self.phrase.explain(reader, doc) {
            explanation.add_detail(phrase);
        }
        Ok(explanation)
    }

    fn count(&self, reader: &SegmentReader) -> tantivy::Result<u32> {
        self.base.count(reader)
    }

    fn for_each_pruning(
        &self,
        threshold: Score,
        reader: &SegmentReader,
        callback: &mut dyn FnMut(DocId, Score) -> Score,
    ) -> tantivy::Result<()> {
        let mut phrase = self.phrase.scorer(reader, 1.0)?;
        // No phrase match lies before this document. `seek` would read the positions of every
        // document holding the words until the next match, including the many the pruning
        // skips; `seek_danger` reads only the document asked for, and tells where to ask next.
        let mut next = phrase.doc();
        let mut threshold = threshold;
        self.base.for_each_pruning(self.lowered(threshold), reader, &mut |doc, base| {
            // As the optional clause sums them: the required score, then the phrase's.
            let mut total = base;
            // The documents come in increasing order: the phrase is only ever sought forward.
            if doc >= next {
                match phrase.seek_danger(doc) {
                    SeekDangerResult::Found => total += phrase.score(),
                    SeekDangerResult::SeekLowerBound(lower) => next = lower,
                }
            }
            if total > threshold {
                threshold = callback(doc, total);
            }
            self.lowered(threshold)
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use tantivy::schema::{Schema, TEXT};
    use tantivy::{doc, Index, IndexWriter, Searcher, TERMINATED};

    use tantivy::query::TermSetQuery;
    use tantivy::schema::IndexRecordOption;

    use super::*;

    /// Words of several scripts, some of which every document may share.
    const VOCABULARY: &[&str] =
        &["billing", "ticket", "東京", "café", "nai\u{308}ve", "ledger", "the", "for", "support", "🦀"];

    /// The best `limit` of what `weight` offers, pruned as the search's collector prunes: by the
    /// `limit`th best score so far, ties kept, then ordered by score and document.
    fn best(weight: &dyn Weight, searcher: &Searcher, limit: usize) -> Vec<(DocId, u32)> {
        let reader = searcher.segment_reader(0);
        let mut kept: Vec<(DocId, Score)> = Vec::new();
        weight
            .for_each_pruning(Score::MIN, reader, &mut |doc, score| {
                kept.push((doc, score));
                let mut scores: Vec<Score> = kept.iter().map(|k| k.1).collect();
                scores.sort_by(|a, b| b.total_cmp(a));
                scores.get(limit - 1).map_or(Score::MIN, |cut| cut.next_down())
            })
            .expect("pruned pass");
        ordered(kept, limit)
    }

    fn ordered(mut all: Vec<(DocId, Score)>, limit: usize) -> Vec<(DocId, u32)> {
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(limit);
        all.into_iter().map(|(doc, score)| (doc, score.to_bits())).collect()
    }

    /// Every match of `weight`, scored one by one: no pruning at all.
    fn every(weight: &dyn Weight, searcher: &Searcher, limit: usize) -> Vec<(DocId, u32)> {
        let mut scorer = weight.scorer(searcher.segment_reader(0), 1.0).expect("scorer");
        let mut all = Vec::new();
        while scorer.doc() != TERMINATED {
            all.push((scorer.doc(), scorer.score()));
            scorer.advance();
        }
        ordered(all, limit)
    }

    /// A base looking for both words: `a AND b`, `a OR b`, or `text: IN [a b]` (which scores
    /// each match 1, whatever its words' counts: no bound on what the words score holds).
    fn shaped(shape: usize, a: &Term, b: &Term) -> Box<dyn Query> {
        let word = |t: &Term| -> Box<dyn Query> {
            Box::new(TermQuery::new(t.clone(), IndexRecordOption::WithFreqs))
        };
        match shape {
            0 => Box::new(BooleanQuery::new(vec![(Occur::Must, word(a)), (Occur::Must, word(b))])),
            1 => Box::new(BooleanQuery::new(vec![(Occur::Should, word(a)), (Occur::Should, word(b))])),
            _ => Box::new(BooleanQuery::new(vec![(
                Occur::Must,
                Box::new(TermSetQuery::new([a.clone(), b.clone()])) as Box<dyn Query>,
            )])),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn near_finds_what_the_optional_clause_finds(
            docs in prop::collection::vec(prop::collection::vec(0..VOCABULARY.len(), 1..40), 1..300),
            first in 0..VOCABULARY.len(),
            second in 0..VOCABULARY.len(),
            limit in 1usize..12,
            shape in 0usize..3,
        ) {
            let mut schema = Schema::builder();
            let text = schema.add_text_field("text", TEXT);
            let index = Index::create_in_ram(schema.build());
            let mut writer: IndexWriter = index.writer_with_num_threads(1, 15_000_000).expect("writer");
            for words in &docs {
                let body: Vec<&str> = words.iter().map(|&w| VOCABULARY[w]).collect();
                writer.add_document(doc!(text => body.join(" "))).expect("add");
            }
            writer.commit().expect("commit");
            let searcher = index.reader().expect("reader").searcher();
            let term = |w: usize| {
                let mut tokens = index.tokenizer_for_field(text).expect("tokenizer");
                let mut stream = tokens.token_stream(VOCABULARY[w]);
                stream.advance().then(|| Term::from_field_text(text, &stream.token().text))
            };
            let (Some(a), Some(b)) = (term(first), term(second)) else {
                // The emoji is no word to this tokenizer: nothing to search.
                return Ok(());
            };
            let base = shaped(shape, &a, &b);
            let phrase = PhraseQuery::new_with_offset_and_slop(vec![(0, a), (1, b)], 3);
            let near = Near::new(base, phrase);
            let scoring = EnableScoring::enabled_from_searcher(&searcher);
            let near_weight = near.weight(scoring).expect("weight");
            let boolean_weight = near.boolean().weight(scoring).expect("weight");
            let expected = every(boolean_weight.as_ref(), &searcher, limit);
            prop_assert_eq!(best(boolean_weight.as_ref(), &searcher, limit), expected.clone());
            prop_assert_eq!(every(near_weight.as_ref(), &searcher, limit), expected.clone());
            prop_assert_eq!(best(near_weight.as_ref(), &searcher, limit), expected);
        }
    }
}
