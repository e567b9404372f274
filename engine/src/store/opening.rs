//! Opening a store: a new or existing file, writable or read-only, or custom storage for the
//! crash and fault tests; each ends in a `Store` with its group commit started (or none).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redb::{ConcurrencyMode, Database};

use super::{Db, Store};
use crate::error::{Failure, OpenError, ReadError};
use crate::group::GroupCommit;
use crate::log::attach::{attach, attach_read_only, open_existing, Found};
use crate::log::SharedLog;
use crate::open::{
    create_store_file, current_store_id, initialize, is_current, log_path, open_error, open_failure,
    refuses_writes, LogPlace,
};
use crate::options::{Sharing, StoreOptions};
use crate::read::Snapshot;
use crate::storage::{Backend, StorageFile};
use crate::watermark::Watermark;
use crate::writer::Shared;

impl Store {
    /// Opens the store at `path`, creating it (readable by its owner only) if it does not exist.
    ///
    /// # Errors
    /// [`OpenError`]: the file cannot be opened or locked, is not an annal store, is damaged,
    /// or was written by a newer format version.
    pub fn open(path: impl AsRef<Path>, options: StoreOptions) -> Result<Store, OpenError> {
        let path = path.as_ref();
        match std::fs::metadata(path) {
            Ok(meta) => refuse_empty(path, &meta)?,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                forget_stale_log(path)?;
                create_store_file(path, &options)?
            }
            Err(source) => return Err(OpenError::Io { path: path.to_path_buf(), source }),
        }
        let open = || {
            builder(&options).create(path).map_err(|e| match open_error(path, e) {
                OpenError::Io { path, source } if refuses_writes(&path, &source) => {
                    OpenError::NotWritable { path, source }
                }
                other => other,
            })
        };
        let mut db = open()?;
        if options.sharing == Sharing::Processes && !is_current(&db, path)? {
            // An older store is upgraded by a process that has it alone, so no process of an
            // older build goes on writing it without the shared log.
            drop(db);
            upgrade_alone(path, &options)?;
            db = open()?;
        }
        Store::start(db, Some(path.to_path_buf()), options, LogPlace::Beside(log_path(path)))
    }

    /// Opens an existing store for reading only: appends, forks and checkpoints fail with a
    /// read-only error, and nothing about the file changes (no write transaction, no lock
    /// upgrade, no sync at open or close), so a command that only reads costs no disk writes
    /// and works without write permission. A store that needs a writable open first (a
    /// durability log to put back, an older format to upgrade) is opened writable for that,
    /// and then refuses writes as any store opened read-only does.
    ///
    /// # Errors
    /// As [`Store::open`]; a missing file is [`OpenError::Io`] (nothing is created).
    pub fn open_read_only(path: impl AsRef<Path>, options: StoreOptions) -> Result<Store, OpenError> {
        let path = path.as_ref();
        let meta =
            std::fs::metadata(path).map_err(|source| OpenError::Io { path: path.to_path_buf(), source })?;
        refuse_empty(path, &meta)?;
        match Store::try_read_only(path, &options) {
            Ok(Some(store)) => Ok(store),
            // Needs writing first (a store-alone log to put back, an older format to upgrade),
            // or cannot be read as it is: a writable open upgrades, puts back or diagnoses it
            // exactly as it always has (a truncated file is named as such, not as a short read).
            Ok(None) | Err(_) => Store::open(path, options).map(Store::refusing_writes),
        }
    }

    /// This store, refusing appends, forks and checkpoints from now on.
    fn refusing_writes(mut self) -> Store {
        self.writes_refused = true;
        self
    }

    /// The read-only open itself; `None` when the store needs a writable open first.
    fn try_read_only(path: &Path, options: &StoreOptions) -> Result<Option<Store>, OpenError> {
        let db = builder(options).open_read_only(path).map_err(|e| open_error(path, e))?;
        let Some(id) = current_store_id(&db, path)? else {
            return Ok(None);
        };
        let log = match attach_read_only(path, id)? {
            Found::Alone => return Ok(None),
            Found::Nothing => None,
            Found::Shared(log) => Some(log),
        };
        let db = Db::ReadOnly(Arc::new(db));
        let shared = Arc::new(Shared {
            poisoned: AtomicBool::new(false),
            watermark: Watermark::new(position_end(&db, log.as_deref(), path)?),
            feeds: std::sync::Mutex::new(Vec::new()),
        });
        let path = Some(path.to_path_buf());
        let options = options.clone();
        Ok(Some(Store {
            db,
            path,
            options,
            shared,
            commit: None,
            log,
            writes_refused: false,
            extensions: Mutex::new(Vec::new()),
            appended_bytes: AtomicU64::new(0),
        }))
    }

    /// Opens a store on custom storage (one process only): how tests simulate crashes and
    /// failing disks.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn open_with_storage(storage: impl StorageFile, options: StoreOptions) -> Result<Store, OpenError> {
        let mut builder = redb::Builder::new();
        builder.set_cache_size(options.cache_size_bytes);
        let path = PathBuf::from("<custom storage>");
        let db = builder.create_with_backend(Backend(Box::new(storage))).map_err(|e| open_error(&path, e))?;
        Store::start(db, None, options, LogPlace::Nowhere)
    }

    /// Opens a store on custom storage with its log on custom storage too (one process only):
    /// how tests crash both files at once.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn open_with_log(
        storage: impl StorageFile,
        log: impl StorageFile,
        options: StoreOptions,
    ) -> Result<Store, OpenError> {
        let mut builder = redb::Builder::new();
        builder.set_cache_size(options.cache_size_bytes);
        let path = PathBuf::from("<custom storage>");
        let db = builder.create_with_backend(Backend(Box::new(storage))).map_err(|e| open_error(&path, e))?;
        Store::start(db, None, options, LogPlace::Storage(Box::new(log)))
    }

    fn start(
        db: Database,
        path: Option<PathBuf>,
        options: StoreOptions,
        log: LogPlace,
    ) -> Result<Store, OpenError> {
        let shown = path.clone().unwrap_or_else(|| PathBuf::from("<custom storage>"));
        initialize(&db, &shown, &options)?;
        let shared_log = attach(&db, &shown, log, &options)?;
        let db = Arc::new(db);
        let shared = Arc::new(Shared {
            poisoned: AtomicBool::new(false),
            watermark: Watermark::new(position_end(
                &Db::Writable(Arc::clone(&db)),
                shared_log.as_deref(),
                &shown,
            )?),
            feeds: std::sync::Mutex::new(Vec::new()),
        });
        let commit = GroupCommit::start(
            Arc::clone(&db),
            Arc::clone(&shared),
            options.write_wait,
            shared_log.clone(),
            options.sharing == Sharing::Exclusive,
            options.checkpoint_idle,
        )
        .map_err(|source| OpenError::Io { path: shown.clone(), source })?;
        Ok(Store {
            db: Db::Writable(db),
            path,
            options,
            shared,
            commit: Some(commit),
            log: shared_log,
            writes_refused: false,
            extensions: Mutex::new(Vec::new()),
            appended_bytes: AtomicU64::new(0),
        })
    }
}

/// Upgrades the store at `path` to this build's format while no other process has it open,
/// waiting up to the options' write wait for the others to close it (another process of this
/// build may be upgrading it meanwhile, which is as good).
fn upgrade_alone(path: &Path, options: &StoreOptions) -> Result<(), OpenError> {
    let started = Instant::now();
    let mut alone = redb::Builder::new();
    alone.set_cache_size(options.cache_size_bytes);
    loop {
        match alone.create(path) {
            Ok(db) => {
                initialize(&db, path, options)?;
                return db.close().map_err(|e| open_error(path, e));
            }
            Err(redb::DatabaseError::DatabaseAlreadyOpen | redb::DatabaseError::LockProtocolMismatch) => {}
            Err(other) => return Err(open_error(path, other)),
        }
        if let Ok(db) =
            redb::Builder::new().set_concurrency_mode(ConcurrencyMode::MultiWriter).open_read_only(path)
        {
            if is_current(&db, path)? {
                return Ok(());
            }
        }
        if started.elapsed() >= options.write_wait {
            return Err(OpenError::AlreadyOpen {
                path: path.to_path_buf(),
                detail: "it needs an upgrade to this version's format, which waits until no other process \
                         has it open (one of an older annal, perhaps); close them and try again"
                    .into(),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A redb builder for `options`: its sharing and page cache.
fn builder(options: &StoreOptions) -> redb::Builder {
    let mut builder = redb::Builder::new();
    builder.set_concurrency_mode(match options.sharing {
        Sharing::Processes => ConcurrencyMode::MultiWriter,
        Sharing::Exclusive => ConcurrencyMode::ExclusiveWriter,
    });
    builder.set_cache_size(options.cache_size_bytes);
    builder
}

/// The position end of the store in `db` with the shared log's frames, read at open.
fn position_end(db: &Db, log: Option<&SharedLog>, shown: &Path) -> Result<u64, OpenError> {
    let begin = || db.begin_read().map_err(Failure::from);
    let (txn, layer) = match log {
        Some(log) => log.pair(begin).map(|paired| (paired.txn, paired.layer)),
        None => begin().map(|txn| (txn, None)),
    }
    .map_err(|f| open_failure(shown, f))?;
    Snapshot::layered(txn, layer).and_then(|s| s.position_end()).map_err(|e| match e {
        ReadError::Io { source } => OpenError::Io { path: shown.to_path_buf(), source },
        other => OpenError::Corrupted { path: shown.to_path_buf(), reason: other.to_string() },
    })
}

/// Empties a log left beside a store that is gone: it belongs to no store now. Never removed:
/// processes racing to create the store may already share it (the one that created the store
/// first attaches its log, and writes frames, once it holds the log's lock), so it is emptied
/// under that lock, and only while the store file is still missing.
fn forget_stale_log(path: &Path) -> Result<(), OpenError> {
    let log = log_path(path);
    let io_error = |source: io::Error| OpenError::Io { path: log.clone(), source };
    let Some(file) = open_existing(&log, std::fs::OpenOptions::new().read(true).write(true))? else {
        return Ok(());
    };
    file.lock().map_err(io_error)?;
    let emptied = match std::fs::metadata(path) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => file.set_len(0),
        _ => Ok(()),
    };
    // Closing the file lets go of the lock too.
    let _ = file.unlock();
    emptied.map_err(io_error)
}

/// annal creates a store whole (see `create_store_file`), so an empty file is a store that lost
/// its bytes, not a new one: taking it over would hide the loss.
fn refuse_empty(path: &Path, meta: &std::fs::Metadata) -> Result<(), OpenError> {
    if meta.is_file() && meta.len() == 0 {
        return Err(OpenError::NotAStore {
            path: path.to_path_buf(),
            reason: "the file is empty (a store is never empty; was it truncated?)".into(),
        });
    }
    Ok(())
}
