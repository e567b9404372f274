//! Excluded clauses (`NOT x`, `-x`) wrapped so tantivy's exclusion never seeks one backwards,
//! and `AND NOT (group)` read as the exclusion it says.
//!
//! tantivy 0.27 builds an exclusion by asking each excluded scorer whether it holds the first
//! document of the required clauses. A scorer is created standing on its own first match, so
//! that document can lie *below* it: a backward seek, which the DocSet contract forbids and the
//! phrase scorer asserts against (`NOT "a b" c` panics in a build with debug assertions, and
//! relies on unspecified behaviour in one without; upstream issue 2811). The wrapper answers a
//! seek below its position itself: a document the scorer has already passed is not a match.

use tantivy::query::{BooleanQuery, EnableScoring, Explanation, Occur, Query, Scorer, Weight};
use tantivy::{DocId, DocSet, Score, SegmentReader, Term};

/// `query` with every excluded clause, at any depth, made safe to seek backwards, and each
/// required group that only excludes (`a AND NOT (b OR c)`, which tantivy's parser makes a
/// required group matching nothing) merged into its parent as the exclusions it holds.
pub(crate) fn guard_exclusions(query: Box<dyn Query>) -> Box<dyn Query> {
    let Some(boolean) = query.downcast_ref::<BooleanQuery>() else { return query };
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for (occur, clause) in boolean.clauses() {
        let only_excludes = clause.downcast_ref::<BooleanQuery>().and_then(|group| {
            let inner = group.clauses();
            let all = !inner.is_empty() && inner.iter().all(|(o, _)| *o == Occur::MustNot);
            all.then_some(inner)
        });
        match only_excludes {
            Some(inner) if *occur == Occur::Must => {
                clauses.extend(inner.iter().map(|(_, q)| (Occur::MustNot, guard_exclusions(q.box_clone()))));
            }
            _ => clauses.push((*occur, guard_exclusions(clause.box_clone()))),
        }
    }
    let clauses = clauses
        .into_iter()
        .map(|(occur, clause)| {
            let clause: Box<dyn Query> =
                if occur == Occur::MustNot { Box::new(ForwardOnly(clause)) } else { clause };
            (occur, clause)
        })
        .collect();
    Box::new(BooleanQuery::with_minimum_required_clauses(clauses, boolean.get_minimum_number_should_match()))
}

/// `query` made safe to exclude: its scorers tolerate seeks below their current document.
pub(crate) fn forward_only(query: Box<dyn Query>) -> Box<dyn Query> {
    Box::new(ForwardOnly(query))
}

/// A query whose scorers tolerate seeks below their current document.
#[derive(Debug)]
struct ForwardOnly(Box<dyn Query>);

impl Clone for ForwardOnly {
    fn clone(&self) -> ForwardOnly {
        ForwardOnly(self.0.box_clone())
    }
}

impl Query for ForwardOnly {
    fn weight(&self, enable_scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(ForwardOnlyWeight(self.0.weight(enable_scoring)?)))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        self.0.query_terms(visitor);
    }
}

struct ForwardOnlyWeight(Box<dyn Weight>);

impl Weight for ForwardOnlyWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        Ok(Box::new(ForwardOnlyScorer(self.0.scorer(reader, boost)?)))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        self.0.explain(reader, doc)
    }
}

/// Delegates everything but `seek_danger`, whose default implementation (seek only forward,
/// report the document it stands on otherwise) is what a backward target needs.
struct ForwardOnlyScorer(Box<dyn Scorer>);

impl DocSet for ForwardOnlyScorer {
    fn advance(&mut self) -> DocId {
        self.0.advance()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if target <= self.0.doc() {
            return self.0.doc();
        }
        self.0.seek(target)
    }

    fn doc(&self) -> DocId {
        self.0.doc()
    }

    fn size_hint(&self) -> u32 {
        self.0.size_hint()
    }

    fn cost(&self) -> u64 {
        self.0.cost()
    }
}

impl Scorer for ForwardOnlyScorer {
    fn score(&mut self) -> Score {
        self.0.score()
    }
}
