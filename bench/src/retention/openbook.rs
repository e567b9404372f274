//! Open book: the real search index over the session's journal, asked what a question about
//! each fact would ask (its area and noun, which other facts share; never its codename or
//! value), ranked top 5, leaving out what the asking contender's final request carries; and each
//! decoy's value, literally, where any hit is a false one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use annal_engine::Store;
use annal_query::{IndexOptions, SearchIndex, SearchRequest};

use super::session::Session;

/// Hits looked at per question.
pub const TOP: usize = 5;

/// What search finds for one session.
#[derive(Clone, Debug, Default)]
pub struct OpenBook {
    /// Per reader (a contender: what its final request carries, left out of its search), per
    /// fact: the rank (0 = first) of the record stating it among the top hits for its
    /// question, if it is there.
    pub rank: Vec<Vec<Option<usize>>>,
    /// Decoys whose literal search returned any hit.
    pub decoy_hits: u64,
}

/// Indexes `session_name` of `store` in `folder` and asks every question once per reader in
/// `seen`, leaving out the records that reader has (by entryId), with the ask of the fact's turn
/// as context when `context` is set.
///
/// # Errors
/// If the index cannot be built or searched.
pub fn search(
    store: &Arc<Store>,
    session_name: &str,
    folder: &Path,
    session: &Session,
    seen: &[&BTreeSet<String>],
    context: bool,
) -> anyhow::Result<OpenBook> {
    let options = IndexOptions { folder: Some(folder.to_owned()), ..IndexOptions::default() };
    let index = SearchIndex::open(Arc::clone(store), options)?;
    index.wait_searchable(Duration::from_secs(600))?;
    let orders = source_orders(store, session_name)?;
    let mut book = OpenBook::default();
    for reader in seen {
        let hidden: BTreeSet<(String, u64)> = reader
            .iter()
            .filter_map(|id| orders.get(id.as_str()))
            .map(|&order| (session_name.to_owned(), order))
            .collect();
        let mut ranks = Vec::with_capacity(session.facts.len());
        for fact in &session.facts {
            let mut request = SearchRequest::new(fact.query.clone());
            request.session = Some(session_name.to_owned());
            request.limit = TOP;
            request.hidden.clone_from(&hidden);
            if context {
                request.context = Some(turn_ask(session, fact.turn));
            }
            let hits = index.search(&request)?;
            ranks.push(hits.iter().position(|h| h.entry_id == fact.entry_id));
        }
        book.rank.push(ranks);
    }
    for decoy in &session.decoys {
        let mut request = SearchRequest::new(decoy.value.clone());
        request.literal = true;
        request.session = Some(session_name.to_owned());
        request.limit = TOP;
        book.decoy_hits += u64::from(!index.search(&request)?.is_empty());
    }
    index.close()?;
    Ok(book)
}

/// The words of the user message that opens `turn`: what was being worked on when a fact
/// stated in that turn came up.
fn turn_ask(session: &Session, turn: usize) -> String {
    session
        .turns
        .get(turn)
        .and_then(|t| t.steps.first())
        .and_then(|step| step.iter().find(|r| r.role == annal_engine::Role::User))
        .map(|r| r.blocks.iter().map(super::session::block_text).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

/// Every record of `session_name` by entryId: its sourceOrder.
fn source_orders(store: &Store, session_name: &str) -> anyhow::Result<BTreeMap<String, u64>> {
    let snapshot = store.snapshot()?;
    let len = snapshot.session(session_name)?.map_or(0, |info| info.len);
    let mut out = BTreeMap::new();
    for order in 0..len {
        if let Some(guard) = snapshot.record(session_name, order)? {
            out.insert(guard.view()?.entry_id().to_owned(), order);
        }
    }
    Ok(out)
}
