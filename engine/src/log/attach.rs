//! Opening the log of a store: made beside the store file at the first writable open, shared
//! or alone (an earlier build's store-alone log found there put back into redb first), and read
//! by read-only opens.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;
use std::sync::Arc;

use redb::Database;

use crate::error::{Failure, OpenError};
use crate::log::legacy::{frames_in, LogFile};
use crate::open::{open_failure, store_id, sync_folder, LogPlace};
use crate::options::StoreOptions;
use crate::replay::replay;
use crate::storage::StorageFile;

use super::layout::{Header, HeaderRead, OTHER_STORE};
use super::{ProcessLock, SharedLog};

/// The smallest shared log: a few frames of ordinary appends.
const CAPACITY_MIN_BYTES: u64 = 64 << 10;

fn io_at(path: &Path) -> impl Fn(io::Error) -> OpenError + '_ {
    move |source| OpenError::Io { path: path.to_path_buf(), source }
}

/// The file at `path` opened as `options` say; none when there is no file there.
pub(crate) fn open_existing(path: &Path, options: &OpenOptions) -> Result<Option<File>, OpenError> {
    match options.open(path) {
        Ok(file) => Ok(Some(file)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(OpenError::Io { path: path.to_path_buf(), source }),
    }
}

/// The log of a store opened writable, shared or alone, made if it has no valid header.
pub(crate) fn attach(
    db: &Database,
    shown: &Path,
    place: LogPlace,
    options: &StoreOptions,
) -> Result<Option<Arc<SharedLog>>, OpenError> {
    let (file, lock_file, log_shown): (Box<dyn StorageFile>, Option<Box<dyn ProcessLock>>, _) = match place {
        LogPlace::Nowhere => return Ok(None),
        LogPlace::Storage(storage) => (storage, None, shown.to_path_buf()),
        LogPlace::Beside(path) => {
            let mut file_options = OpenOptions::new();
            file_options.read(true).write(true).create(true);
            // Readable by whoever may read the store: the log is part of it.
            #[cfg(unix)]
            {
                use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
                let mode = std::fs::metadata(shown).map_or(0o600, |meta| meta.permissions().mode() & 0o666);
                file_options.mode(mode);
            }
            let existed = path.exists();
            let file = file_options.open(&path).map_err(io_at(&path))?;
            if !existed {
                sync_folder(&path).map_err(io_at(&path))?;
            }
            let lock_file = file.try_clone().map_err(io_at(&path))?;
            (
                Box::new(LogFile(file)) as Box<dyn StorageFile>,
                Some(Box::new(lock_file) as Box<dyn ProcessLock>),
                path,
            )
        }
    };
    let id = store_id(db, shown)?;
    let mut waited = None;
    let mut make = |file: &dyn StorageFile, found: HeaderRead| -> Result<u64, Failure> {
        // A store opened alone by an earlier build crashed with groups in its own log: they are
        // put back before the file becomes the log. A header of no layout (damaged, or a log
        // whose making was cut short) is read past for such groups too, as that build did.
        let other_store = (found == HeaderRead::Alone).then_some(OTHER_STORE);
        let frames = frames_in(file, &id, other_store)?;
        replay(db, &frames, options.write_wait).map_err(|e| match e {
            Ok(wait) => {
                waited = Some(wait);
                Failure::Io(io::Error::other("busy"))
            }
            Err(failure) => failure,
        })
    };
    let capacity = (options.log_size_bytes as u64).max(CAPACITY_MIN_BYTES);
    let log = SharedLog::open(file, lock_file, id, capacity, Some(&mut make));
    if let Some(waited) = waited {
        return Err(OpenError::AlreadyOpen {
            path: shown.to_path_buf(),
            detail: format!("another process held the write lock for {waited:?} while the log was replayed"),
        });
    }
    log.map(|log| Some(Arc::new(log))).map_err(|f| open_failure(&log_shown, f))
}

/// What a read-only open finds beside the store file.
pub(crate) enum Found {
    /// No log, or one with nothing to read.
    Nothing,
    /// A store-alone log, which a writable open must put back first.
    Alone,
    /// The shared log, to lay over every snapshot.
    Shared(Arc<SharedLog>),
}

/// The shared log beside `path` for a read-only open: read, never written or made.
pub(crate) fn attach_read_only(path: &Path, store_id: [u8; 16]) -> Result<Found, OpenError> {
    let log_path = crate::open::log_path(path);
    let Some(file) = open_existing(&log_path, OpenOptions::new().read(true))? else {
        return Ok(Found::Nothing);
    };
    let lock_file = file.try_clone().map_err(io_at(&log_path))?;
    let file = LogFile(file);
    match Header::read(&file, &store_id).map_err(io_at(&log_path))? {
        HeaderRead::Alone => Ok(Found::Alone),
        HeaderRead::OtherStore => Err(OpenError::Corrupted { path: log_path, reason: OTHER_STORE.into() }),
        // Frames are read at every snapshot, and a header written meanwhile is found then.
        HeaderRead::None | HeaderRead::Valid(_) => {
            let log = SharedLog::open(Box::new(file), Some(Box::new(lock_file)), store_id, 0, None)
                .map_err(|f| open_failure(&log_path, f))?;
            Ok(Found::Shared(Arc::new(log)))
        }
    }
}
