//! Opening a store file: creating it atomically, turning redb's open errors into annal's,
//! creating, checking or upgrading the tables and format version of a store.

use std::fs::OpenOptions;
use std::io;
use std::path::{Path, PathBuf};

use redb::{Database, DatabaseError, ReadableDatabase, TableHandle};

use crate::error::{Failure, OpenError};
use crate::options::StoreOptions;
use crate::storage::StorageFile;
use crate::tables::{
    decode_u64, BLOBS, CHECKPOINTS, CLAIMS, DIGESTS, ENTRIES, FORMAT_VERSION, JOURNAL, META,
    META_FORMAT_VERSION, META_STORE_ID, POSITIONS, RECEIPTS, SESSIONS, SESSION_NAMES,
};
use crate::upgrade::upgrade_journal_from_v1;
use crate::writer;

/// Creates a new store at `path` atomically: it is built and initialised under a temporary name
/// in the same folder, then linked into place, so a crash during creation never leaves a file
/// at `path` that is not a store. Readable by its owner only. A store that appears at `path`
/// meanwhile (another process created it) wins; this one is discarded.
pub(crate) fn create_store_file(path: &Path, options: &StoreOptions) -> Result<(), OpenError> {
    let io_error = |source: io::Error| OpenError::Io { path: path.to_path_buf(), source };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "store".into());
    // Unique per call, not only per process: two threads of one process creating the same
    // store at once each build their own file (one name, truncated by both, was neither's).
    static CREATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let creation = CREATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = path.with_file_name(format!(".{name}.creating-{}-{creation}", std::process::id()));
    let mut file_options = OpenOptions::new();
    file_options.read(true).write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        file_options.mode(0o600);
    }
    let built = (|| -> Result<(), OpenError> {
        drop(file_options.open(&temp).map_err(io_error)?);
        let mut builder = redb::Builder::new();
        builder.set_cache_size(1 << 20);
        let db = builder.create(&temp).map_err(|e| open_error(path, e))?;
        initialize(&db, path, options)?;
        db.close().map_err(|e| open_error(path, e))?;
        match std::fs::hard_link(&temp, path) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(io_error(err)),
        }
        // The new name must survive a crash too: a store whose name a crash can take back is
        // not created, so a failing folder sync fails the open.
        sync_folder(path).map_err(io_error)?;
        Ok(())
    })();
    let _ = std::fs::remove_file(&temp);
    built
}

/// Whether a failure to open `path` for writing means the store can be read but not written:
/// no write permission for this user, or a read-only file system.
pub(crate) fn refuses_writes(path: &Path, source: &io::Error) -> bool {
    matches!(source.kind(), io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem)
        && std::fs::File::open(path).is_ok()
}

pub(crate) fn open_error(path: &Path, err: DatabaseError) -> OpenError {
    let path = path.to_path_buf();
    match err {
        DatabaseError::DatabaseAlreadyOpen
        | DatabaseError::LockProtocolMismatch
        | DatabaseError::TransactionInProgress => OpenError::AlreadyOpen { path, detail: err.to_string() },
        DatabaseError::UpgradeRequired(version) => {
            OpenError::NotAStore { path, reason: format!("a redb file of an older file format ({version})") }
        }
        DatabaseError::RepairAborted => OpenError::Corrupted { path, reason: err.to_string() },
        other => match Failure::from(other) {
            Failure::Io(source) if source.kind() == io::ErrorKind::InvalidData => {
                OpenError::NotAStore { path, reason: source.to_string() }
            }
            // The file ends inside redb's header: cut short, not a failing disk.
            Failure::Io(source) if source.kind() == io::ErrorKind::UnexpectedEof => OpenError::Corrupted {
                path,
                reason: format!("the file ends inside its header ({source}); was it truncated?"),
            },
            Failure::Io(source) => OpenError::Io { path, source },
            Failure::Corrupted(reason) => OpenError::Corrupted { path, reason },
        },
    }
}

/// Whether the store in `db` is whole and of the current format (nothing for [`initialize`] to
/// write); an error for a file that is not a store or is of a newer format.
pub(crate) fn is_current(db: &impl ReadableDatabase, path: &Path) -> Result<bool, OpenError> {
    current_id_bytes(db, path).map(|id| id.is_some())
}

/// The store id of a store that is whole and of the current format, as [`is_current`] finds
/// it; none when [`initialize`] would write to it.
pub(crate) fn current_store_id(
    db: &impl ReadableDatabase,
    path: &Path,
) -> Result<Option<[u8; 16]>, OpenError> {
    let Some(id) = current_id_bytes(db, path)? else { return Ok(None) };
    let id = id
        .try_into()
        .map_err(|_| open_failure(path, Failure::Corrupted("the store id is not 16 bytes".into())))?;
    Ok(Some(id))
}

/// What [`is_current`] checks, and the stored id's bytes when it holds: one read transaction, as
/// in a store several processes share each one begun takes and releases redb's file locks.
fn current_id_bytes(db: &impl ReadableDatabase, path: &Path) -> Result<Option<Vec<u8>>, OpenError> {
    let failure = |f: Failure| open_failure(path, f);
    let txn = db.begin_read().map_err(|e| failure(e.into()))?;
    let names: Vec<String> =
        txn.list_tables().map_err(|e| failure(e.into()))?.map(|t| t.name().to_owned()).collect();
    if !names.iter().any(|n| n == META.name()) {
        if names.is_empty() {
            return Ok(None);
        }
        return Err(OpenError::NotAStore {
            path: path.to_path_buf(),
            reason: format!("a redb database with other tables ({})", names.join(", ")),
        });
    }
    let meta = txn.open_table(META).map_err(|e| failure(e.into()))?;
    let Some(version) =
        redb::ReadableTable::get(&meta, META_FORMAT_VERSION).map_err(|e| failure(e.into()))?
    else {
        return Ok(None);
    };
    if check_version(path, version.value())? != FORMAT_VERSION
        || !all_tables().iter().all(|t| names.iter().any(|n| n == t))
    {
        return Ok(None);
    }
    let id = redb::ReadableTable::get(&meta, META_STORE_ID).map_err(|e| failure(e.into()))?;
    Ok(id.map(|id| id.value().to_vec()))
}

/// Creates the tables, format version and store id of a new store, checks an existing one's,
/// and upgrades a store of an older format version in one transaction.
pub(crate) fn initialize(db: &Database, path: &Path, options: &StoreOptions) -> Result<(), OpenError> {
    let failure = |f: Failure| open_failure(path, f);
    if is_current(db, path)? {
        return Ok(());
    }
    let txn = writer::begin_write(db, options.write_wait).map_err(|e| match e {
        Ok(waited) => OpenError::AlreadyOpen {
            path: path.to_path_buf(),
            detail: format!("another process held the write lock for {waited:?}"),
        },
        Err(f) => failure(f),
    })?;
    {
        let mut meta = txn.open_table(META).map_err(|e| failure(e.into()))?;
        let stored = redb::ReadableTable::get(&meta, META_FORMAT_VERSION)
            .map_err(|e| failure(e.into()))?
            .map(|v| v.value().to_vec());
        if let Some(version) = stored {
            if check_version(path, &version)? < 2 {
                upgrade_journal_from_v1(&txn).map_err(failure)?;
            }
        }
        // Version 1 becomes 2 by gaining a store id and a tag byte on each journal value (its
        // blobs read as they are); version 2 becomes 3 as it is (its tables do not change, and
        // no process of an older build has it open: see `Store::open`); a new store starts at
        // the current version. Either way in this one transaction.
        meta.insert(META_FORMAT_VERSION, u64::from(FORMAT_VERSION).to_le_bytes().as_slice())
            .map_err(|e| failure(e.into()))?;
        if redb::ReadableTable::get(&meta, META_STORE_ID).map_err(|e| failure(e.into()))?.is_none() {
            meta.insert(META_STORE_ID, new_store_id(path).as_slice()).map_err(|e| failure(e.into()))?;
        }
        let open = |r: Result<(), redb::TableError>| r.map_err(|e| failure(e.into()));
        open(txn.open_table(SESSIONS).map(drop))?;
        open(txn.open_table(SESSION_NAMES).map(drop))?;
        open(txn.open_table(JOURNAL).map(drop))?;
        open(txn.open_table(DIGESTS).map(drop))?;
        open(txn.open_table(ENTRIES).map(drop))?;
        open(txn.open_table(POSITIONS).map(drop))?;
        open(txn.open_table(BLOBS).map(drop))?;
        // Added after format version 1 shipped; a store without them gets them here.
        open(txn.open_table(CHECKPOINTS).map(drop))?;
        open(txn.open_table(RECEIPTS).map(drop))?;
        open(txn.open_table(CLAIMS).map(drop))?;
    }
    txn.commit().map_err(|e| failure(e.into()))
}

/// Every table a store of the current format has.
fn all_tables() -> [&'static str; 10] {
    [
        SESSIONS.name(),
        SESSION_NAMES.name(),
        JOURNAL.name(),
        DIGESTS.name(),
        ENTRIES.name(),
        POSITIONS.name(),
        BLOBS.name(),
        CHECKPOINTS.name(),
        RECEIPTS.name(),
        CLAIMS.name(),
    ]
}

/// The stored format version, refused when newer than this build's.
fn check_version(path: &Path, bytes: &[u8]) -> Result<u32, OpenError> {
    let found = decode_u64(bytes).map_err(|f| open_failure(path, f))?;
    let found = u32::try_from(found).unwrap_or(u32::MAX);
    if found > FORMAT_VERSION {
        return Err(OpenError::NewerFormat { path: path.to_path_buf(), found, supported: FORMAT_VERSION });
    }
    Ok(found)
}

/// 16 bytes no other store is likely to have: the path, the time and the process hashed.
fn new_store_id(path: &Path) -> [u8; 16] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(path.as_os_str().as_encoded_bytes());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    hasher.update(&now.as_nanos().to_le_bytes());
    hasher.update(&std::process::id().to_le_bytes());
    let mut id = [0u8; 16];
    id.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    id
}

/// The store id written at open.
pub(crate) fn store_id(db: &impl ReadableDatabase, path: &Path) -> Result<[u8; 16], OpenError> {
    let failure = |f: Failure| open_failure(path, f);
    let txn = db.begin_read().map_err(|e| failure(e.into()))?;
    let meta = txn.open_table(META).map_err(|e| failure(e.into()))?;
    let id = redb::ReadableTable::get(&meta, META_STORE_ID).map_err(|e| failure(e.into()))?;
    let id = id.ok_or_else(|| failure(Failure::Corrupted("the store has no store id".into())))?;
    id.value().try_into().map_err(|_| failure(Failure::Corrupted("the store id is not 16 bytes".into())))
}

pub(crate) fn open_failure(path: &Path, failure: Failure) -> OpenError {
    match failure {
        Failure::Io(source) => OpenError::Io { path: path.to_path_buf(), source },
        Failure::Corrupted(reason) => OpenError::Corrupted { path: path.to_path_buf(), reason },
    }
}

/// Where a store's durability log lives.
pub(crate) enum LogPlace {
    /// Beside the store file, named as [`log_path`] says.
    Beside(PathBuf),
    /// Custom storage (tests' simulated disks).
    Storage(Box<dyn StorageFile>),
    /// No log: every commit is durable in redb.
    Nowhere,
}

/// The log of the store at `store`: the file's name with `-log` added, as SQLite adds `-wal`.
pub fn log_path(store: &Path) -> PathBuf {
    let mut name = store.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "store".into());
    name.push("-log");
    store.with_file_name(name)
}

/// Makes the name of `path` in its folder durable (where the platform can open a folder).
pub(crate) fn sync_folder(path: &Path) -> io::Result<()> {
    // A bare file name lives in the current folder, which needs the sync as much as any other.
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    match std::fs::File::open(folder) {
        Ok(dir) => dir.sync_all(),
        // Folders cannot be opened as files everywhere (Windows); nothing to sync there.
        Err(_) => Ok(()),
    }
}
