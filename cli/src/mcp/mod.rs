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

use crate::failure::said;
use annal::error::ErrorKind;
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use annal::error::{GetError, SearchError};
use annal::sync::{Environment, SyncOptions};
use annal::{Annal, Hit, Original, SearchRequest, SessionInfo};
use anyhow::{anyhow, Context};
use clap::Args;
use rmcp::ServiceExt;

use crate::store::StoreLocation;
use crate::store::STALL;

pub(crate) const LONG_ABOUT: &str = "\
Serve the store's history to an agent as a Model Context Protocol (MCP) server on stdin and stdout.
Tools: history_search (full-text search over every original, with session, role, tool and error
filters), history_get (an original back verbatim by entryId, optionally one block and a line
range) and sessions_list. Results are compact text naming entryIds the model can follow; the
entryIds in a projection's omission markers work too.

Register it with an agent, for example: claude mcp add annal -- annal mcp --sync
With --sync, every agent's sessions are captured (as `annal sync` does) before each search.
The store is --db or ANNAL_DB, else the default store; it is opened on first use.";

// Arguments of `annal mcp` (the store comes from the global `--db`).
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// Before each search, catch up with every agent's sessions as `annal sync` does, so what
    /// another agent did a minute ago is found
    #[arg(long)]
    sync: bool,
    /// Before each search, follow a fleet (comma-separated server URLs) so its other hosts'
    /// sessions are found too, and publish what this host captured
    #[arg(long, value_name = "URLS")]
    fleet: Option<String>,
    #[command(flatten)]
    connection: crate::store::Connection,
}

/// Serves until the client closes stdin, then closes the search index.
pub(crate) fn run(location: StoreLocation, args: &McpArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    let mut history = History::new(location);
    if args.sync {
        history.sync = Some(Arc::new(Mutex::new(Syncing {
            options: SyncOptions { environment: Environment::from_process(), ..SyncOptions::default() },
            last: None,
        })));
    }
    if let Some(urls) = &args.fleet {
        history.fleet = Some(Arc::new(Mutex::new(Following {
            relay: crate::store::Relay::new(urls, &args.connection),
            last: None,
        })));
    }
    if args.sync || args.fleet.is_some() {
        history.start_sources();
    }
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
    open: Arc<Mutex<Option<Arc<Annal>>>>,
    /// With `--sync`: what to read before a search, and when it last was.
    sync: Option<Arc<Mutex<Syncing>>>,
    /// With `--fleet`: the fleet to follow and publish to before a search, and when it last was.
    fleet: Option<Arc<Mutex<Following>>>,
}

#[derive(Debug)]
struct Following {
    relay: crate::store::Relay,
    last: Option<Instant>,
}

#[derive(Debug)]
struct Syncing {
    options: SyncOptions,
    last: Option<Instant>,
}

/// Searches closer together than this share one sync pass.
const SYNC_INTERVAL: Duration = Duration::from_secs(1);

/// Hits, and how far the index was behind the journal when it stopped waiting (0 when it had
/// caught up).
#[derive(Debug)]
pub(crate) struct Found {
    pub(crate) hits: Vec<Hit>,
    pub(crate) behind: u64,
}

impl History {
    pub(crate) fn new(location: StoreLocation) -> History {
        History { location, open: Arc::new(Mutex::new(None)), sync: None, fleet: None }
    }

    fn lock(&self) -> MutexGuard<'_, Option<Arc<Annal>>> {
        // A panic in another call cannot leave the handle half-updated: take it as it is.
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The store, opened on first use; a missing store is an error naming the path (and is
    /// looked for again on the next call, so the server works once something is imported).
    fn store(&self) -> anyhow::Result<Arc<Annal>> {
        let mut open = self.lock();
        if let Some(store) = open.as_ref() {
            return Ok(Arc::clone(store));
        }
        // Syncing, the store is made by the first pass: nothing need be imported first.
        let store = match (&self.sync, &self.fleet) {
            (None, None) => Arc::new(self.location.open_existing()?),
            _ => Arc::new(self.location.open_or_create()?),
        };
        *open = Some(Arc::clone(&store));
        Ok(store)
    }

    /// Searches everything committed so far, once the index has caught up with it.
    pub(crate) fn search(&self, request: &SearchRequest) -> anyhow::Result<Found> {
        let store = self.store()?;
        self.catch_up_sources(&store);
        let behind = store.catch_up(STALL, |_, _| {}).map_err(|err| match err {
            err @ annal::Error::Index(_) => {
                anyhow::Error::from(err).context(format!("cannot open the search index of {}", self.location))
            }
            other => anyhow::Error::from(other).context(format!("cannot search {}", self.location)),
        })?;
        if behind > 0 {
            eprintln!(
                "annal mcp: the search index is {behind} records behind and not catching up; searching what is \
                 indexed"
            );
        }
        let hits = store.search(request).map_err(|err| match err {
            annal::Error::Search(SearchError::UnknownSession(name)) => said(
                ErrorKind::NotFound,
                format!("no session named {name:?} in this store (sessions_list names them)"),
            ),
            other => anyhow!(other),
        })?;
        Ok(Found { hits, behind })
    }

    /// Before a search: the agents' sessions with `--sync`, the fleet's with `--fleet`.
    fn catch_up_sources(&self, store: &Annal) {
        self.catch_up_agents(store);
        self.catch_up_fleet(store);
    }

    /// With `--fleet`, publishes what this host captured and follows what the others
    /// published (at most once a second; a step already running is not waited for). A fleet
    /// that is away is logged; the search answers from what is stored.
    fn catch_up_fleet(&self, store: &Annal) {
        let Some(fleet) = &self.fleet else { return };
        let mut following = match fleet.try_lock() {
            Ok(following) => following,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        if following.last.is_some_and(|last| last.elapsed() < SYNC_INTERVAL) {
            return;
        }
        if let Err(line) = following.relay.step(store, true) {
            eprintln!("annal mcp: fleet: {line}");
        }
        following.last = Some(Instant::now());
    }

    /// With `--sync`, reads what the agents wrote since the last pass (at most one pass a
    /// second). A pass already running (the first one, started with the server, may take
    /// minutes) is not waited for: the search answers from what is stored. A source that cannot
    /// be read, or a pass that fails, is logged; the search goes on.
    fn catch_up_agents(&self, store: &Annal) {
        let Some(sync) = &self.sync else { return };
        let mut sync = match sync.try_lock() {
            Ok(sync) => sync,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        if sync.last.is_some_and(|last| last.elapsed() < SYNC_INTERVAL) {
            return;
        }
        let report = match store.sync(&sync.options) {
            Ok(report) => report,
            Err(err) => return eprintln!("annal mcp: sync into {}: {err}", self.location),
        };
        sync.last = Some(Instant::now());
        for source in &report.sources {
            for problem in &source.problems {
                eprintln!("annal mcp: sync: {}: {problem}", source.agent.name());
            }
        }
    }

    /// Starts the first pass in the background, so the first search need not wait for a
    /// machine's whole history to be captured.
    fn start_sources(&self) {
        let history = self.clone();
        std::thread::spawn(move || match history.store() {
            Ok(store) => history.catch_up_sources(&store),
            Err(err) => eprintln!("annal mcp: {err:#}"),
        });
    }

    /// An original by `entryId` or `entryId#block`, optionally only some lines of its text.
    pub(crate) fn get(&self, id: &str, lines: Option<RangeInclusive<usize>>) -> anyhow::Result<Original> {
        self.store()?.get(id, lines).map_err(|err| match err {
            annal::Error::Get(GetError::UnknownEntry(id)) => said(
                ErrorKind::NotFound,
                format!(
                    "no entry {id:?} in this store (ids are entryIds, or entryId#BLOCK, as search hits and \
                     projection markers name them)"
                ),
            ),
            err @ annal::Error::Read(_) => {
                anyhow::Error::from(err).context(format!("cannot read {}", self.location))
            }
            other => anyhow!(other),
        })
    }

    /// Every session, in name order.
    pub(crate) fn sessions(&self) -> anyhow::Result<Vec<SessionInfo>> {
        self.store()?.sessions().with_context(|| format!("cannot list the sessions of {}", self.location))
    }

    /// Closes the index (its last commit) and the store.
    pub(crate) fn close(&self) -> anyhow::Result<()> {
        if let Some(store) = self.lock().take() {
            if let Ok(store) = Arc::try_unwrap(store) {
                store.close().with_context(|| format!("cannot close the store {}", self.location))?;
            }
        }
        Ok(())
    }
}
