//! [`Options`]: how [`Annal::open_with`](crate::Annal::open_with) opens a store and its search
//! index, in one struct with a field per choice.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use annal_engine::{Limits, Sharing, StoreOptions, TokenCounter};
use annal_query::IndexOptions;

/// How long [`Annal::search`](crate::Annal::search) waits by default for the index to reach the
/// journal's end.
const SEARCH_WAIT_DEFAULT: Duration = Duration::from_secs(30);

/// How a store and its search index are opened. `Options::default()` suits an agent framework
/// that owns nothing else: several processes may share the file, and the index follows every
/// append in the background.
///
/// ```
/// use annal::{Annal, Options, Sharing};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// // This process owns the store: faster single commits.
/// let options = Options { sharing: Sharing::Exclusive, ..Options::default() };
/// let annal = Annal::open_with(dir.path().join("s.redb"), &options)?;
/// assert!(annal.close()?);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Options {
    /// Whether other processes may open the store at the same time.
    pub sharing: Sharing,
    /// The named limits on records, batches and names.
    pub limits: Limits,
    /// Counts the tokens of a text for budgets (default: chars/4).
    pub token_counter: Arc<dyn TokenCounter>,
    /// Texts longer than this are kept once, by hash, outside the journal's records.
    pub blob_threshold_bytes: usize,
    /// How long an append waits for another process's write transaction.
    pub write_wait: Duration,
    /// The store's page cache.
    pub cache_size_bytes: usize,
    /// The log beside the store file, shared by the processes that have it open (only this
    /// process's when opened [`Sharing::Exclusive`], which folds and removes it at close): one
    /// sync of it makes a group of appends durable (default 4 MiB, at least 64 KiB).
    pub log_size_bytes: usize,
    /// The search index folder; default `<store file>.index` beside the store.
    pub index_folder: Option<PathBuf>,
    /// Open the search index with the store, so it follows every append in the background
    /// (default). Otherwise it is opened by the first call that needs it and catches up then,
    /// which suits a short-lived process that may never search.
    pub index_eagerly: bool,
    /// How long [`Annal::search`](crate::Annal::search) waits for the index to catch up with
    /// everything committed before the call (default 30 s); zero searches what is indexed.
    pub search_wait: Duration,
    /// Open an existing store for reading only (default false): appends, forks and compactions
    /// fail with a read-only error, and nothing is written to the store file, at open or at
    /// close. The search index is still kept up to date (it is a separate folder).
    pub read_only: bool,
}

impl Default for Options {
    fn default() -> Options {
        let store = StoreOptions::default();
        Options {
            sharing: store.sharing,
            limits: store.limits,
            token_counter: store.token_counter,
            blob_threshold_bytes: store.blob_threshold_bytes,
            write_wait: store.write_wait,
            cache_size_bytes: store.cache_size_bytes,
            log_size_bytes: store.log_size_bytes,
            index_folder: None,
            index_eagerly: true,
            search_wait: SEARCH_WAIT_DEFAULT,
            read_only: false,
        }
    }
}

impl Options {
    pub(crate) fn store(&self) -> StoreOptions {
        StoreOptions {
            limits: self.limits.clone(),
            blob_threshold_bytes: self.blob_threshold_bytes,
            token_counter: Arc::clone(&self.token_counter),
            write_wait: self.write_wait,
            cache_size_bytes: self.cache_size_bytes,
            sharing: self.sharing,
            log_size_bytes: self.log_size_bytes,
            ..StoreOptions::default()
        }
    }

    pub(crate) fn index(&self) -> IndexOptions {
        // A handle that opens its index only when a call needs it (a command that runs briefly)
        // starts the indexer only when the index is behind: a search of an up-to-date index
        // starts no thread.
        IndexOptions {
            folder: self.index_folder.clone(),
            indexer_on_demand: !self.index_eagerly,
            ..IndexOptions::default()
        }
    }
}
