//! Searching: BM25 ranking, raised by the question's context, in a total order, and hits read
//! back from the journal with their snippets.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Range;

use annal_engine::{BlockView, ProjectOptions, Role, Snapshot};
use tantivy::query::{BooleanQuery, Occur, Query};
use tantivy::{Searcher, TantivyDocument, Term};

use crate::error::{IndexError, SearchError};
use crate::filters::{filters, hidden_query};
use crate::index::SearchIndex;
use crate::near::Near;
use crate::schema::{Fields, Place, QUERY_FIELDS};
use crate::signals::{self, anchors, boost, CONTEXT_POOL};
use crate::snippet::{snippet, Snippet};
use crate::top::{best, Candidate};

/// Hits collected beyond the pool that a context ranks: what the pool held when it was also
/// the margin that settled ties, so a context lifts the same hits it did then.
const CONTEXT_MARGIN: usize = 16;

/// Words a prefix stands for at most (the first in order), as tantivy's phrase prefix caps its
/// expansions: a one-letter prefix stays a cheap query.
const PREFIX_WORDS_MAX: usize = 64;

/// What to search for and where.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchRequest {
    /// The query: words, identifiers, `"phrases"`, `AND`/`OR`/`NOT`, `-excluded`.
    pub query: String,
    /// Search the text as written (a phrase of its words, or one identifier), no syntax.
    pub literal: bool,
    /// Match the query's last word as the start of a word (`obsid` finds `obsidian`), for a
    /// query still being typed. Not with `literal`.
    pub prefix_last: bool,
    /// Only this session's records; for a fork, the records it inherits as well.
    pub session: Option<String>,
    /// Only records of this role.
    pub role: Option<Role>,
    /// Only tool calls and results of this tool (case-insensitive).
    pub tool: Option<String>,
    /// Only failed tool results.
    pub errors_only: bool,
    /// Only records whose sourceOrder is in this range.
    pub source_orders: Range<u64>,
    /// The most hits returned.
    pub limit: usize,
    /// About how many characters each snippet has.
    pub snippet_chars: usize,
    /// Records left out of the hits, as (session, sourceOrder): what the reader already has,
    /// such as the originals a projection carries whole.
    pub hidden: BTreeSet<(String, u64)>,
    /// With `session`: leave out the session's records that its projection under these options
    /// carries whole, since the model reading that view has them. Projections are the store's,
    /// so `Annal::search` honours this; [`SearchIndex::search`] reads `hidden` only.
    pub unseen: Option<ProjectOptions>,
    /// What the asker is working on (the current turn's words): hits near the records these
    /// words match best, in the same session, rank higher. Never searched for itself.
    pub context: Option<String>,
}

impl SearchRequest {
    /// A search for `query` everywhere, 10 hits, snippets of about 160 characters.
    pub fn new(query: impl Into<String>) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            literal: false,
            prefix_last: false,
            session: None,
            role: None,
            tool: None,
            errors_only: false,
            source_orders: 0..u64::MAX,
            limit: 10,
            snippet_chars: 160,
            hidden: BTreeSet::new(),
            unseen: None,
            context: None,
        }
    }
}

/// One matching block.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Hit {
    /// The session the record was appended to (for a hit inherited by a fork, its parent).
    pub session: String,
    /// The record's entryId.
    pub entry_id: String,
    /// The block's index in the record.
    pub block_index: usize,
    /// The record's sourceOrder in `session`.
    pub source_order: u64,
    /// Who produced the record.
    pub role: Role,
    /// The block's type: `text`, `thinking`, `toolCall` or `toolResult`.
    pub kind: &'static str,
    /// The tool of a call or result.
    pub tool: Option<String>,
    /// Whether the block is a failed tool result.
    pub is_error: bool,
    /// The record's timestamp.
    pub timestamp: Option<String>,
    /// BM25 relevance: higher is better.
    pub score: f32,
    /// The excerpt around the match.
    pub snippet: Snippet,
}

impl Hit {
    /// `entryId#blockIndex`: what `history get` takes.
    pub fn id(&self) -> String {
        format!("{}#{}", self.entry_id, self.block_index)
    }
}

/// A found document and where its block is.
pub(crate) struct Located {
    pub(crate) score: f32,
    pub(crate) at: Place,
}

/// The order of hits: score, then the newest record first (its store position, which names
/// one (session, sourceOrder)), then block order. Nothing in it depends on how the index is
/// split into segments, so every layout of the same records lists the same hits.
pub(crate) fn rank(a: &Located, b: &Located) -> Ordering {
    b.score.total_cmp(&a.score).then(b.at.position.cmp(&a.at.position)).then(a.at.block.cmp(&b.at.block))
}

/// The best `limit` documents in [`rank`]'s order, whatever the segment layout: [`best`] keeps
/// every document that can be among them, and sorting their places decides.
pub(crate) fn collect(
    searcher: &Searcher,
    fields: &Fields,
    query: &dyn Query,
    limit: usize,
) -> tantivy::Result<Vec<Located>> {
    let mut located = best(searcher, fields, query, limit)?
        .into_iter()
        .map(|found| locate(searcher, fields, found))
        .collect::<tantivy::Result<Vec<_>>>()?;
    located.sort_by(rank);
    located.truncate(limit);
    Ok(located)
}

/// Reads a found document's stored fields: a few small document-store blocks, where a
/// fast-field column would first read its whole block index (see `schema.rs`).
fn locate(searcher: &Searcher, fields: &Fields, found: Candidate) -> tantivy::Result<Located> {
    let document: TantivyDocument = searcher.doc(found.address)?;
    Ok(Located { score: found.score, at: fields.place(&document) })
}

impl SearchIndex {
    /// The best-matching blocks for `request`, best first, with snippets from the journal.
    /// Searches what is searchable now; see [`SearchIndex::wait_searchable`].
    ///
    /// # Errors
    /// [`SearchError`]: a syntax error, an unknown session, or a failure to read.
    pub fn search(&self, request: &SearchRequest) -> Result<Vec<Hit>, SearchError> {
        let fields = &self.shared.folder.fields;
        let searcher = self.shared.reader.searcher();
        let exists = |ident: &str| {
            let term = Term::from_field_text(fields.ident, ident);
            searcher.doc_freq(&term).is_ok_and(|n| n > 0)
        };
        let expand = |prefix: &str| words_starting_with(&searcher, fields, prefix);
        let expand: Option<crate::query::Expand<'_>> = request.prefix_last.then_some(&expand);
        let parsed = self.shared.queries.parse(&request.query, request.literal, &exists, expand)?;
        if request.limit == 0 {
            return Ok(Vec::new());
        }
        let snapshot = self.store.snapshot()?;
        let selected = filters(&snapshot, fields, request)?;
        let mut clauses = vec![(Occur::Must, parsed.query)];
        clauses.extend(selected.iter().map(|(occur, query)| (*occur, query.box_clone())));
        if let Some(hidden) = hidden_query(fields, &request.hidden) {
            clauses.push((Occur::MustNot, hidden));
        }
        let base: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
        let query: Box<dyn Query> = match signals::proximity(fields, &parsed.terms) {
            Some(phrase) => Box::new(Near::new(base, phrase)),
            None => base,
        };
        let path = &self.shared.folder.path;
        let tantivy = |e| match e {
            // `name:*` asks whether a field exists, and tantivy looks its name up only now.
            tantivy::TantivyError::FieldNotFound(field) => SearchError::Syntax {
                query: request.query.clone(),
                reason: format!("there is no field {field:?} (fields: {})", QUERY_FIELDS.join(", ")),
            },
            e => SearchError::Index(IndexError::tantivy(path, e)),
        };
        let context = request.context.as_deref().filter(|c| !c.trim().is_empty());
        let mut pool = if context.is_some() { request.limit.max(CONTEXT_POOL) } else { request.limit };
        // Copies (the same file read ten times) are one hit: the best-ranked copy, which on a
        // tie of scores is the newest. When copies leave fewer hits than asked and the pool was
        // full, a larger pool is collected, so a limit is filled whenever enough blocks differ.
        // The context's anchors do not depend on the pool: found once.
        let anchors = match context {
            Some(context) => Some(anchors(&searcher, fields, &selected, context).map_err(tantivy)?),
            None => None,
        };
        loop {
            let margin = if anchors.is_some() { CONTEXT_MARGIN } else { 0 };
            let mut located =
                collect(&searcher, fields, query.as_ref(), pool.saturating_add(margin)).map_err(tantivy)?;
            let more = located.len() >= pool;
            if let Some(anchors) = &anchors {
                boost(&mut located, anchors);
                located.sort_by(rank);
            }
            let mut hits = Vec::with_capacity(request.limit.min(located.len()));
            let mut copies = BTreeSet::new();
            for found in located {
                if hits.len() == request.limit {
                    break;
                }
                let (hit, copy) = hit(&snapshot, found, &parsed.terms, request.snippet_chars)?;
                if copies.insert(copy) {
                    hits.push(hit);
                }
            }
            if hits.len() == request.limit || !more {
                return Ok(hits);
            }
            pool = pool.saturating_mul(2);
        }
    }
}

/// What makes two blocks copies of each other: their role, kind, tool and text.
fn copy_key(role: Role, kind: &str, tool: Option<&str>, text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    // SipHash with fixed keys: the same key for the same text in every process and run.
    let mut hasher = std::hash::DefaultHasher::new();
    (role.as_str(), kind, tool, text).hash(&mut hasher);
    hasher.finish()
}

/// The words the index has that start with `prefix`, in order, at most [`PREFIX_WORDS_MAX`].
fn words_starting_with(searcher: &Searcher, fields: &Fields, prefix: &str) -> Vec<String> {
    let mut found = BTreeSet::new();
    for segment in searcher.segment_readers() {
        let Ok(index) = segment.inverted_index(fields.text) else { continue };
        let Ok(mut stream) = index.terms().range().ge(prefix.as_bytes()).into_stream() else { continue };
        while stream.advance() && found.len() < PREFIX_WORDS_MAX {
            let Ok(word) = std::str::from_utf8(stream.key()) else { continue };
            if !word.starts_with(prefix) {
                break;
            }
            found.insert(word.to_owned());
        }
    }
    found.into_iter().take(PREFIX_WORDS_MAX).collect()
}

fn hit(
    snapshot: &Snapshot,
    located: Located,
    terms: &crate::query::Terms,
    width: usize,
) -> Result<(Hit, u64), SearchError> {
    let Located { score, at } = located;
    let missing = || SearchError::Corrupted {
        reason: format!(
            "sourceOrder {} of session {:?} block {} is not in the journal",
            at.order, at.session, at.block
        ),
    };
    let guard = snapshot.record(&at.session, at.order).map_err(|_| missing())?.ok_or_else(missing)?;
    let view = guard.view()?;
    let block_index = usize::try_from(at.block).map_err(|_| missing())?;
    let block = view.block(block_index).ok_or_else(missing)?;
    let (text, tool, is_error) = match block {
        BlockView::Text { text } | BlockView::Thinking { text } => (snapshot.text(text)?, None, false),
        BlockView::ToolCall { tool, input, .. } => (snapshot.text(input)?, Some(tool), false),
        BlockView::ToolResult { tool, is_error, output, .. } => {
            (snapshot.text(output)?, Some(tool), is_error)
        }
        BlockView::Blob { .. } => return Err(missing()),
    };
    let copy = copy_key(view.role(), block.kind(), tool, &text);
    let hit = Hit {
        session: at.session.clone(),
        entry_id: view.entry_id().to_owned(),
        block_index,
        source_order: at.order,
        role: view.role(),
        kind: block.kind(),
        tool: tool.filter(|t| !t.is_empty()).map(str::to_owned),
        is_error,
        timestamp: view.timestamp().map(str::to_owned),
        score,
        snippet: snippet(&text, terms, width),
    };
    Ok((hit, copy))
}
