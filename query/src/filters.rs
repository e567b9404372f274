//! Filters of a search, which select and never score: a session with its fork's lineage,
//! roles, tools, failures, sourceOrder ranges, and the records left out as already seen.

use std::collections::BTreeSet;
use std::ops::{Bound, Range};

use annal_engine::Snapshot;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, RangeQuery, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::Term;

use crate::error::SearchError;
use crate::exclusion::forward_only;
use crate::schema::Fields;
use crate::search::SearchRequest;

fn filter(query: impl Query) -> (Occur, Box<dyn Query>) {
    (Occur::Must, Box::new(ConstScoreQuery::new(Box::new(query), 0.0)))
}

fn orders_query(fields: &Fields, orders: &Range<u64>) -> RangeQuery {
    RangeQuery::new(
        Bound::Included(Term::from_field_u64(fields.order, orders.start)),
        Bound::Excluded(Term::from_field_u64(fields.order, orders.end)),
    )
}

/// A stretch of one session's records that a filtered session reads.
struct Stretch {
    session: String,
    orders: Range<u64>,
    /// Whether the stretch is every record the session holds itself, so its name alone selects
    /// it: a range over the `order` column is then left out, and with it the column's index,
    /// which grows with the segment.
    whole: bool,
}

/// The stretches `session` reads: its own records, then its parent's below its fork point, and
/// so on up the lineage. The index holds no record the snapshot lacks (the searcher is taken
/// first), so a session's own records are `[fork point, length)` in it too.
fn lineage(snapshot: &Snapshot, session: &str, orders: &Range<u64>) -> Result<Vec<Stretch>, SearchError> {
    let mut info =
        snapshot.session(session)?.ok_or_else(|| SearchError::UnknownSession(session.to_owned()))?;
    let mut end = info.len;
    let mut out = Vec::new();
    loop {
        let own = info.fork_at.unwrap_or(0);
        let start = own.min(end);
        let range = start.max(orders.start)..end.min(orders.end);
        if range.start < range.end {
            let whole = range.start <= own && range.end >= info.len;
            out.push(Stretch { session: info.name.clone(), orders: range, whole });
        }
        match &info.parent {
            Some(parent) if start > 0 && out.len() < 100_000 => {
                end = start;
                info = snapshot.session(parent)?.ok_or_else(|| SearchError::Corrupted {
                    reason: format!("session {:?} names a missing parent {parent:?}", info.name),
                })?;
            }
            _ => break,
        }
    }
    Ok(out)
}

/// Clauses of a boolean query.
pub(crate) type Clauses = Vec<(Occur, Box<dyn Query>)>;

pub(crate) fn filters(
    snapshot: &Snapshot,
    fields: &Fields,
    request: &SearchRequest,
) -> Result<Clauses, SearchError> {
    let mut clauses = Vec::new();
    let orders = &request.source_orders;
    if orders.start >= orders.end {
        return Err(SearchError::InvalidFilter(format!("the sourceOrder range {orders:?} is empty")));
    }
    match &request.session {
        Some(session) => {
            let stretches: Vec<Box<dyn Query>> = lineage(snapshot, session, orders)?
                .into_iter()
                .map(|stretch| -> Box<dyn Query> {
                    let name = Term::from_field_text(fields.session, &stretch.session);
                    let name = Box::new(TermQuery::new(name, IndexRecordOption::Basic));
                    if stretch.whole {
                        return name;
                    }
                    Box::new(BooleanQuery::intersection(vec![
                        name,
                        Box::new(orders_query(fields, &stretch.orders)),
                    ]))
                })
                .collect();
            clauses.push(filter(BooleanQuery::union(stretches)));
        }
        None if *orders != (0..u64::MAX) => clauses.push(filter(orders_query(fields, orders))),
        None => {}
    }
    if let Some(role) = request.role {
        clauses.push(filter(TermQuery::new(
            Term::from_field_text(fields.role, role.as_str()),
            IndexRecordOption::Basic,
        )));
    }
    if let Some(tool) = &request.tool {
        let term = Term::from_field_text(fields.tool, &tool.to_lowercase());
        clauses.push(filter(TermQuery::new(term, IndexRecordOption::Basic)));
    }
    if request.errors_only {
        clauses.push(filter(TermQuery::new(
            Term::from_field_bool(fields.error, true),
            IndexRecordOption::Basic,
        )));
    }
    Ok(clauses)
}

/// The records of `hidden` as one query: per session, its sourceOrders merged into runs, one
/// range each (a projection carries long runs whole, so they are few).
pub(crate) fn hidden_query(fields: &Fields, hidden: &BTreeSet<(String, u64)>) -> Option<Box<dyn Query>> {
    let mut runs: Vec<(&str, Range<u64>)> = Vec::new();
    for (session, order) in hidden {
        match runs.last_mut() {
            Some((last, range)) if *last == session.as_str() && range.end == *order => {
                range.end = order.saturating_add(1);
            }
            _ => runs.push((session, *order..order.saturating_add(1))),
        }
    }
    let clauses: Vec<Box<dyn Query>> = runs
        .into_iter()
        .map(|(session, orders)| -> Box<dyn Query> {
            let name = Term::from_field_text(fields.session, session);
            Box::new(BooleanQuery::intersection(vec![
                Box::new(TermQuery::new(name, IndexRecordOption::Basic)),
                Box::new(orders_query(fields, &orders)),
            ]))
        })
        .collect();
    (!clauses.is_empty()).then(|| forward_only(Box::new(BooleanQuery::union(clauses))))
}
