//! Opening a store file: creating it atomically, turning redb's open errors into annal's, and
//! creating or checking the tables and format version of a store.

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

use redb::{Database, DatabaseError, ReadableDatabase, TableHandle};

use crate::error::{Failure, OpenError};
use crate::options::StoreOptions;
use crate::tables::{
    decode_u64, BLOBS, CHECKPOINTS, CLAIMS, DIGESTS, ENTRIES, FORMAT_VERSION, JOURNAL, META,
    META_FORMAT_VERSION, POSITIONS, RECEIPTS, SESSIONS, SESSION_NAMES,
};
use crate::writer;

/// Creates a new store at `path` atomically: it is built and initialised under a temporary name
/// in the same folder, then linked into place, so a crash during creation never leaves a file
/// at `path` that is not a store. Readable by its owner only. A store that appears at `path`
/// meanwhile (another process created it) wins; this one is discarded.
pub(crate) fn create_store_file(path: &Path, options: &StoreOptions) -> Result<(), OpenError> {
    let io_error = |source: io::Error| OpenError::Io { path: path.to_path_buf(), source };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "store".into());
    let temp = path.with_file_name(format!(".{name}.creating-{}", std::process::id()));
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
        // The new name must survive a crash too.
        if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if let Ok(dir) = std::fs::File::open(folder) {
                let _ = dir.sync_all();
            }
        }
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

fn table_names(db: &Database) -> Result<Vec<String>, Failure> {
    let txn = db.begin_read()?;
    let names = txn.list_tables()?.map(|t| t.name().to_owned()).collect();
    Ok(names)
}

/// Creates the tables and format version of a new store, or checks an existing one's.
pub(crate) fn initialize(db: &Database, path: &Path, options: &StoreOptions) -> Result<(), OpenError> {
    let failure = |f: Failure| match f {
        Failure::Io(source) => OpenError::Io { path: path.to_path_buf(), source },
        Failure::Corrupted(reason) => OpenError::Corrupted { path: path.to_path_buf(), reason },
    };
    let check_version = |bytes: &[u8]| -> Result<(), OpenError> {
        let found = decode_u64(bytes).map_err(failure)?;
        let found = u32::try_from(found).unwrap_or(u32::MAX);
        if found > FORMAT_VERSION {
            return Err(OpenError::NewerFormat {
                path: path.to_path_buf(),
                found,
                supported: FORMAT_VERSION,
            });
        }
        Ok(())
    };
    let names = table_names(db).map_err(failure)?;
    if names.iter().any(|n| n == META.name()) {
        let txn = db.begin_read().map_err(|e| failure(e.into()))?;
        let meta = txn.open_table(META).map_err(|e| failure(e.into()))?;
        let version = redb::ReadableTable::get(&meta, META_FORMAT_VERSION).map_err(|e| failure(e.into()))?;
        if let Some(version) = version {
            check_version(version.value())?;
            let all = [
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
            ];
            if all.iter().all(|t| names.iter().any(|n| n == t)) {
                return Ok(());
            }
        }
    } else if !names.is_empty() {
        return Err(OpenError::NotAStore {
            path: path.to_path_buf(),
            reason: format!("a redb database with other tables ({})", names.join(", ")),
        });
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
        match stored {
            Some(version) => check_version(&version)?,
            None => {
                meta.insert(META_FORMAT_VERSION, u64::from(FORMAT_VERSION).to_le_bytes().as_slice())
                    .map_err(|e| failure(e.into()))?;
            }
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

pub(crate) fn open_failure(path: &Path, failure: Failure) -> OpenError {
    match failure {
        Failure::Io(source) => OpenError::Io { path: path.to_path_buf(), source },
        Failure::Corrupted(reason) => OpenError::Corrupted { path: path.to_path_buf(), reason },
    }
}
