//! Open book: the real search index over the session's journal, asked what a question about
//! each fact would ask (its area and noun, which other facts share; never its codename or
//! value), ranked top 5; and each decoy's value, literally, where any hit is a false one.

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
    /// Per fact: the rank (0 = first) of the record stating it among the top hits for its
    /// question, if it is there.
    pub rank: Vec<Option<usize>>,
    /// Decoys whose literal search returned any hit.
    pub decoy_hits: u64,
}

/// Indexes `session_name` of `store` in `folder` and asks every question.
///
/// # Errors
/// If the index cannot be built or searched.
pub fn search(
    store: &Arc<Store>,
    session_name: &str,
    folder: &Path,
    session: &Session,
) -> anyhow::Result<OpenBook> {
    let options = IndexOptions { folder: Some(folder.to_owned()), ..IndexOptions::default() };
    let index = SearchIndex::open(Arc::clone(store), options)?;
    index.wait_searchable(Duration::from_secs(600))?;
    let mut book = OpenBook::default();
    for fact in &session.facts {
        let mut request = SearchRequest::new(fact.query.clone());
        request.session = Some(session_name.to_owned());
        request.limit = TOP;
        let hits = index.search(&request)?;
        book.rank.push(hits.iter().position(|h| h.entry_id == fact.entry_id));
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
