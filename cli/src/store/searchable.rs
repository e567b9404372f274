//! A store made searchable before a search: everything committed so far indexed, with a progress
//! bar when that takes a while (`history`, `import`, `sync`, `fleet`, the MCP server).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use annal::Annal;
use indicatif::{ProgressBar, ProgressStyle};

use crate::output::count;
use crate::store::StoreLocation;

/// How long the index may make no progress before a search goes ahead without it.
pub(crate) const STALL: Duration = Duration::from_secs(30);
/// A progress bar appears when catching up takes longer than this.
const QUIET: Duration = Duration::from_millis(800);

/// Opens the store and waits until everything committed so far is searchable, with a progress
/// bar when that takes a while. If another process holds the index writer and makes no
/// progress, searches what is indexed after a warning rather than hang.
pub(crate) fn open_searchable(location: &StoreLocation) -> anyhow::Result<Annal> {
    let store = location.open_reading()?;
    catch_up(&store, location, None)?;
    Ok(store)
}

/// Waits until everything committed so far is searchable. `bar`, when given, shows the
/// indexing at once (an import's own bar goes on); otherwise a bar appears on a terminal once
/// the wait passes [`QUIET`]. Warns when another process holding the index writer does not
/// catch up.
pub(crate) fn catch_up(
    store: &Annal,
    location: &StoreLocation,
    bar: Option<ProgressBar>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut bar = bar;
    if let Some(bar) = &bar {
        bar.set_style(indexing_style());
        bar.set_message("");
    }
    let behind = store
        .catch_up(STALL, |searchable, target| {
            if bar.is_none() && started.elapsed() >= QUIET && std::io::stderr().is_terminal() {
                let new = ProgressBar::new(target);
                new.set_style(indexing_style());
                bar = Some(new);
            }
            if let Some(bar) = &bar {
                bar.set_length(target);
                bar.set_position(searchable);
            }
        })
        .map_err(|err| match err {
            err @ annal::Error::Index(_) => {
                anyhow::Error::from(err).context(format!("cannot open the search index of {location}"))
            }
            other => anyhow::Error::from(other).context(format!("cannot search {location}")),
        })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if behind > 0 {
        eprintln!(
            "annal: the search index is {} records behind and another process holding it is not \
             catching up; searching what is indexed",
            count(behind)
        );
    }
    Ok(())
}

/// The indexing bar's look: made only when a bar is shown. Parsing its template was about half
/// a percent of the samples of a search that waits for nothing.
fn indexing_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} indexing {pos}/{len} records {wide_bar} {eta}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}
