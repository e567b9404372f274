//! `annal mcp`: the store's history served to an agent as a Model Context Protocol server on
//! stdin and stdout (rmcp), with three tools: `history_search`, `history_get` and
//! `sessions_list`.
//!
//! The server owns stdout (newline-delimited JSON-RPC); diagnostics go to stderr. It opens the
//! store on the first tool call that needs it, so it can be registered before the first import,
//! and keeps the store and its search index open for the life of the connection. Before each
//! search the index catches up with everything committed so far, other processes' appends
//! included. A tool that fails answers with a tool error of one line; the server keeps running.

mod render;
mod tools;

use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex, MutexGuard};

use annal_engine::{SessionInfo, Store};
use annal_query::{
    get_original, GetError, Hit, IndexOptions, Original, SearchError, SearchIndex, SearchRequest,
};
use anyhow::{anyhow, Context};
use clap::Args;
use rmcp::ServiceExt;

use crate::history::catch_up;
use crate::location::StoreLocation;

pub(crate) const LONG_ABOUT: &str = "\
Serve the store's history to an agent as a Model Context Protocol (MCP) server on stdin and stdout.
Tools: history_search (full-text search over every original, with session, role, tool and error
filters), history_get (an original back verbatim by entryId, optionally one block and a line
range) and sessions_list. Results are compact text naming entryIds the model can follow; the
entryIds in a projection's omission markers work too.

Register it with an agent, for example: claude mcp add annal -- annal mcp
The store is --db or ANNAL_DB, else the default store; it is opened on first use.";

/// Arguments of `annal mcp` (the store comes from the global `--db`).
#[derive(Debug, Args)]
pub(crate) struct McpArgs {}

/// Serves until the client closes stdin, then closes the search index.
pub(crate) fn run(location: StoreLocation, _args: &McpArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    let history = History::new(location);
    let server = tools::HistoryServer::new(history.clone());
    runtime.block_on(async move {
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .context("the MCP client did not complete the handshake")?;
        service.waiting().await.context("the MCP server stopped unexpectedly")?;
        anyhow::Ok(())
    })?;
    // Work still running on the blocking pool (a stdin read) must not hold up the exit.
    runtime.shutdown_background();
    history.close()
}

/// The store and index of one server, shared by its tool calls.
#[derive(Clone, Debug)]
pub(crate) struct History {
    location: StoreLocation,
    open: Arc<Mutex<Open>>,
}

#[derive(Debug, Default)]
struct Open {
    store: Option<Arc<Store>>,
    index: Option<SearchIndex>,
}

/// Hits, and how far the index was behind the journal when it stopped waiting (0 when it had
/// caught up).
#[derive(Debug)]
pub(crate) struct Found {
    pub(crate) hits: Vec<Hit>,
    pub(crate) behind: u64,
}

impl History {
    pub(crate) fn new(location: StoreLocation) -> History {
        History { location, open: Arc::new(Mutex::new(Open::default())) }
    }

    fn lock(&self) -> MutexGuard<'_, Open> {
        // A panic in another call cannot leave these handles half-updated: take them as they are.
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The store, opened on first use; a missing store is an error naming the path (and is
    /// looked for again on the next call, so the server works once something is imported).
    fn store(&self, open: &mut Open) -> anyhow::Result<Arc<Store>> {
        if let Some(store) = &open.store {
            return Ok(Arc::clone(store));
        }
        let store = Arc::new(self.location.open_existing()?);
        open.store = Some(Arc::clone(&store));
        Ok(store)
    }

    /// Searches everything committed so far, once the index has caught up with it.
    pub(crate) fn search(&self, request: &SearchRequest) -> anyhow::Result<Found> {
        let mut open = self.lock();
        let store = self.store(&mut open)?;
        if open.index.is_none() {
            let index = SearchIndex::open(Arc::clone(&store), IndexOptions::default())
                .with_context(|| format!("cannot open the search index of {}", self.location))?;
            open.index = Some(index);
        }
        let Some(index) = open.index.as_ref() else {
            return Err(anyhow!("the search index of {} is not open", self.location));
        };
        let target = store
            .snapshot()
            .and_then(|s| s.position_end())
            .with_context(|| format!("cannot read {}", self.location))?;
        let searchable =
            catch_up(index, target, |_| {}).with_context(|| format!("cannot search {}", self.location))?;
        if searchable < target {
            eprintln!(
                "annal mcp: the search index is {} records behind and not catching up; searching what is \
                 indexed",
                target - searchable
            );
        }
        let hits = index.search(request).map_err(|err| match err {
            SearchError::UnknownSession(name) => {
                anyhow!("no session named {name:?} in this store (sessions_list names them)")
            }
            other => anyhow!(other),
        })?;
        Ok(Found { hits, behind: target.saturating_sub(searchable) })
    }

    /// An original by `entryId` or `entryId#block`, optionally only some lines of its text.
    pub(crate) fn get(&self, id: &str, lines: Option<RangeInclusive<usize>>) -> anyhow::Result<Original> {
        let store = self.store(&mut self.lock())?;
        let snapshot = store.snapshot().with_context(|| format!("cannot read {}", self.location))?;
        get_original(&snapshot, id, lines).map_err(|err| match err {
            GetError::UnknownEntry(id) => anyhow!(
                "no entry {id:?} in this store (ids are entryIds, or entryId#BLOCK, as search hits and \
                 projection markers name them)"
            ),
            other => anyhow!(other),
        })
    }

    /// Every session, in name order.
    pub(crate) fn sessions(&self) -> anyhow::Result<Vec<SessionInfo>> {
        let store = self.store(&mut self.lock())?;
        let snapshot = store.snapshot().with_context(|| format!("cannot read {}", self.location))?;
        snapshot.sessions().with_context(|| format!("cannot list the sessions of {}", self.location))
    }

    /// Closes the index (its last commit) and lets the store go.
    pub(crate) fn close(&self) -> anyhow::Result<()> {
        let mut open = self.lock();
        if let Some(index) = open.index.take() {
            index.close().with_context(|| format!("cannot close the search index of {}", self.location))?;
        }
        open.store = None;
        Ok(())
    }
}
