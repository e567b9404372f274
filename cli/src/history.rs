//! `annal history`: full-text search over every original (`search`) and an original read back
//! verbatim by id (`get`). Both work on what the journal holds, whatever a projection left out.

mod get;
mod search;
pub(crate) mod tour;

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use annal_query::{IndexOptions, SearchIndex, WaitError};
use anyhow::Context;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use crate::location::StoreLocation;
use crate::output::{count, Out};

/// Arguments of `annal history`.
#[derive(Debug, Args)]
pub(crate) struct HistoryArgs {
    #[command(subcommand)]
    command: HistoryCommand,
}

#[derive(Debug, Subcommand)]
enum HistoryCommand {
    /// Search every original (text, thinking, tool calls and output), best matches first.
    #[command(long_about = search::LONG_ABOUT)]
    Search(search::SearchArgs),
    /// Print an original verbatim by its id: ENTRY (a whole record) or ENTRY#BLOCK.
    #[command(long_about = get::LONG_ABOUT)]
    Get(get::GetArgs),
}

/// Checks the arguments (no I/O), then runs the subcommand.
pub(crate) fn run(location: &StoreLocation, args: HistoryArgs, out: &mut Out) -> anyhow::Result<()> {
    match args.command {
        HistoryCommand::Search(args) => {
            let plan = args.resolve()?;
            search::run(location, &plan, out)
        }
        HistoryCommand::Get(args) => {
            let plan = args.resolve()?;
            get::run(location, &plan, out)
        }
    }
}

/// How long the index may make no progress before a search goes ahead without it.
const STALL: Duration = Duration::from_secs(30);
/// A progress bar appears when catching up takes longer than this.
const QUIET: Duration = Duration::from_millis(800);

/// Waits until the index has everything below `target`, telling `progress` how far it is every
/// 200 ms, or until it makes no progress for [`STALL`] (another process holds the writer and is
/// not keeping up). Returns the position that is searchable.
pub(crate) fn catch_up(
    index: &SearchIndex,
    target: u64,
    mut progress: impl FnMut(u64),
) -> Result<u64, WaitError> {
    let (mut last, mut moved) = (index.status().searchable, Instant::now());
    loop {
        match index.wait_for_position(target, Duration::from_millis(200)) {
            Ok(position) => return Ok(position),
            Err(WaitError::Timeout { searchable, .. }) => {
                if searchable > last {
                    (last, moved) = (searchable, Instant::now());
                }
                progress(searchable);
                if moved.elapsed() >= STALL {
                    return Ok(searchable);
                }
            }
            Err(other) => return Err(other),
        }
    }
}

/// Opens the store and its index, and waits until everything committed so far is searchable,
/// with a progress bar when that takes a while (the first search of a large store builds the
/// index). If another process holds the index writer and makes no progress, searches what is
/// indexed after a warning rather than hang.
pub(crate) fn open_searchable(location: &StoreLocation) -> anyhow::Result<SearchIndex> {
    let store = Arc::new(location.open_existing()?);
    let index = SearchIndex::open(Arc::clone(&store), IndexOptions::default())
        .with_context(|| format!("cannot open the search index of {location}"))?;
    let target =
        store.snapshot().and_then(|s| s.position_end()).with_context(|| format!("cannot read {location}"))?;
    let started = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    let searchable = catch_up(&index, target, |searchable| {
        if bar.is_none() && started.elapsed() >= QUIET && std::io::stderr().is_terminal() {
            let new = ProgressBar::new(target);
            new.set_style(
                ProgressStyle::with_template("{spinner} indexing {pos}/{len} records {wide_bar} {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar = Some(new);
        }
        if let Some(bar) = &bar {
            bar.set_position(searchable);
        }
    })
    .with_context(|| format!("cannot search {location}"))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if searchable < target {
        eprintln!(
            "annal: the search index is {} records behind and another process holding it is not \
             catching up; searching what is indexed",
            count(target - searchable)
        );
    }
    Ok(index)
}

/// Whether highlights may use terminal colours on stdout.
pub(crate) fn colours() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
