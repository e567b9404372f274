//! `annal history search`: ranked hits with their ids and highlighted snippets, or JSON.

use std::io::Write;
use std::time::Instant;

use annal::error::SearchError;
use annal::Role;
use annal::SearchRequest;
use anyhow::{anyhow, bail};
use clap::Args;

use crate::output::{plural, write_pretty, Out};
use crate::render::write_hit;
use crate::store::StoreLocation;
use annal::json::Json;

pub(crate) const LONG_ABOUT: &str = "\
Search every original of the store (user and assistant text, thinking, tool calls and tool output),
best matches first (BM25). Each hit shows its session, its id (entryId#block, what `annal history
get` takes), sourceOrder, role, tool and a snippet with the matches marked.

All words must match. Exact values are found as typed: ECONNRESET, src/api/client.ts, 0x7f3a9c,
test_user_auth, a UUID, v1.18.31, --max-output. Also: \"a phrase\", a OR b, -excluded, (groups),
role:user, tool:bash. --literal searches the text exactly as written, without query syntax.

Words many records share (billing ticket) find many hits. --context names what you are working
on (\"the invoice export for Zürich\"): the records it matches best are anchors, and hits near an
anchor in its session rank higher. The context is never searched for itself.

The index lives beside the store (STORE.index) and is brought up to date before searching.";

// Arguments of `annal history search`.
#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// What to find: words, identifiers, "phrases", OR, -excluded (quote a query of several words)
    #[arg(value_name = "QUERY", allow_hyphen_values = true)]
    query: String,
    /// Only this session (a fork includes the records it inherits up to its fork point)
    #[arg(long, value_name = "S")]
    session: Option<String>,
    /// Only records of this role
    #[arg(long, value_name = "R", value_parser = ["user", "assistant", "tool", "system"])]
    role: Option<String>,
    /// Only calls and results of this tool (case-insensitive)
    #[arg(long, value_name = "T")]
    tool: Option<String>,
    /// Only failed tool results
    #[arg(long)]
    errors: bool,
    /// Only records from this sourceOrder on
    #[arg(long, value_name = "N")]
    from: Option<u64>,
    /// Only records before this sourceOrder
    #[arg(long, value_name = "M")]
    to: Option<u64>,
    /// The most hits to show
    #[arg(long, value_name = "K", default_value_t = 10)]
    limit: usize,
    /// Search the text exactly as written (no AND/OR/quotes/-excluded syntax)
    #[arg(long)]
    literal: bool,
    /// What you are working on (the current ask's words): hits near where a session discussed
    /// it rank first; never searched for itself
    #[arg(long, value_name = "TEXT")]
    context: Option<String>,
    /// A JSON array of hits: session, entryId, blockIndex, sourceOrder, role, tool, score, snippet
    #[arg(long)]
    json: bool,
}

/// A search with its arguments checked.
#[derive(Debug)]
pub(crate) struct SearchPlan {
    request: SearchRequest,
    json: bool,
}

impl SearchArgs {
    /// Checks the arguments; no I/O.
    pub(crate) fn resolve(self) -> anyhow::Result<SearchPlan> {
        let (from, to) = (self.from.unwrap_or(0), self.to.unwrap_or(u64::MAX));
        if from >= to {
            bail!("--from {from} is not before --to {to}: the range is empty");
        }
        if self.limit == 0 {
            bail!("--limit must be at least 1");
        }
        let mut request = SearchRequest::new(self.query);
        request.literal = self.literal;
        request.session = self.session;
        request.role = self.role.as_deref().and_then(Role::parse);
        request.tool = self.tool;
        request.errors_only = self.errors;
        request.source_orders = from..to;
        request.limit = self.limit;
        request.context = self.context.filter(|c| !c.trim().is_empty());
        Ok(SearchPlan { request, json: self.json })
    }
}

/// Runs the search and prints the hits.
pub(crate) fn run(location: &StoreLocation, plan: &SearchPlan, out: &mut Out) -> anyhow::Result<()> {
    let index = crate::store::open_searchable(location)?;
    let started = Instant::now();
    let hits = index.search(&plan.request).map_err(|err| match err {
        annal::Error::Search(SearchError::UnknownSession(name)) => location.unknown_session(&name),
        other => anyhow!(other),
    })?;
    let took = started.elapsed();
    if plan.json {
        write_pretty(out, &Json::array(hits.iter().map(annal::json::hit)))?;
    } else if hits.is_empty() {
        writeln!(out, "no matches for {:?}", plan.request.query)?;
    } else {
        let colour = super::colours();
        for (rank, hit) in hits.iter().enumerate() {
            write_hit(out, rank + 1, hit, colour)?;
        }
        writeln!(
            out,
            "({} in {:.1} ms; the original of a hit: annal history get ID)",
            plural(hits.len() as u64, "hit"),
            took.as_secs_f64() * 1000.0
        )?;
    }
    out.flush()?;
    index.close()?;
    Ok(())
}
