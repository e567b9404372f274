//! The index folder gets its store's protection: the index holds every word of every session
//! (its term dictionary and stored positions), so anyone who can read it can read the store.
//!
//! The folder's mode is the store file's permission bits with search (`x`) added where read is
//! allowed (a store of 0600 gives 0700); every file in it gets at most the store's bits.
//! tantivy creates segment and lock files with the process's default mode, so
//! [`ProtectedDirectory`] tightens each one it creates, and opening an index whose folder an
//! earlier version (or another tool) left wider tightens the folder and every file in it, saying
//! so once. Modes are only ever narrowed.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};

/// The permission bits a store allows, applied to what lies in its index folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Protection {
    /// The most a file may allow (the store file's own bits).
    file_mode: u32,
}

impl Protection {
    /// The protection of the store file at `store_file` (owner-only when there is no file, or
    /// its mode cannot be read).
    pub(crate) fn of_store(store_file: Option<&Path>) -> Protection {
        let mode = store_file.and_then(|file| mode_of(file).ok()).unwrap_or(0o600);
        Protection { file_mode: mode & 0o666 }
    }

    /// The protection a folder already has (for files written into it later).
    pub(crate) fn of_folder(folder: &Path) -> Protection {
        Protection { file_mode: mode_of(folder).map_or(0o600, |mode| mode & 0o666) }
    }

    /// The folder's mode: the file bits, plus search where read is allowed.
    fn folder_mode(self) -> u32 {
        self.file_mode | ((self.file_mode & 0o444) >> 2)
    }

    /// Creates `folder` (and its parents) with the folder mode and narrows it to what the store
    /// allows. Returns whether it had been wider: only then could anyone else have read the
    /// index, and only then are the files in it narrowed too. An open of a protected index
    /// stats one folder, however many segments it holds.
    pub(crate) fn prepare(self, folder: &Path) -> io::Result<bool> {
        create_folder(folder, self.folder_mode())?;
        if !narrow(folder, self.folder_mode())? {
            return Ok(false);
        }
        for entry in std::fs::read_dir(folder)? {
            let entry = entry?;
            let allowed = if entry.file_type()?.is_dir() { self.folder_mode() } else { self.file_mode };
            narrow(&entry.path(), allowed)?;
        }
        Ok(true)
    }

    /// Narrows the file at `path` to what the store allows.
    pub(crate) fn apply(self, path: &Path) -> io::Result<()> {
        narrow(path, self.file_mode).map(drop)
    }
}

#[cfg(unix)]
fn mode_of(path: &Path) -> io::Result<u32> {
    use std::os::unix::fs::PermissionsExt;
    Ok(std::fs::metadata(path)?.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_of(_path: &Path) -> io::Result<u32> {
    Ok(0o600)
}

#[cfg(unix)]
fn create_folder(folder: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(mode).create(folder)
}

#[cfg(not(unix))]
fn create_folder(folder: &Path, _mode: u32) -> io::Result<()> {
    std::fs::create_dir_all(folder)
}

/// Clears the bits of `path` that `allowed` does not have; whether any were set.
#[cfg(unix)]
fn narrow(path: &Path, allowed: u32) -> io::Result<bool> {
    use std::os::unix::fs::PermissionsExt;
    let mode = mode_of(path)?;
    let narrowed = mode & (allowed | !0o777);
    if narrowed == mode {
        return Ok(false);
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(narrowed))?;
    Ok(true)
}

#[cfg(not(unix))]
fn narrow(_path: &Path, _allowed: u32) -> io::Result<bool> {
    Ok(false)
}

/// tantivy's memory-mapped directory, whose new files get the store's protection.
#[derive(Clone, Debug)]
pub(crate) struct ProtectedDirectory {
    inner: MmapDirectory,
    root: PathBuf,
    protection: Protection,
}

impl ProtectedDirectory {
    /// The directory of the index folder `root`, protected as the folder is.
    pub(crate) fn open(
        root: &Path,
    ) -> Result<ProtectedDirectory, tantivy::directory::error::OpenDirectoryError> {
        let inner = MmapDirectory::open(root)?;
        Ok(ProtectedDirectory { inner, root: root.to_path_buf(), protection: Protection::of_folder(root) })
    }
}

impl Directory for ProtectedDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.inner.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.inner.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        let writer = self.inner.open_write(path)?;
        // Nothing is written yet: narrowed before the first byte lands.
        self.protection
            .apply(&self.root.join(path))
            .map_err(|err| OpenWriteError::wrap_io_error(err, path.to_path_buf()))?;
        Ok(writer)
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        // Written through an owner-only temporary file renamed into place: never wider.
        self.inner.atomic_write(path, data)
    }

    fn sync_directory(&self) -> io::Result<()> {
        self.inner.sync_directory()
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        let held = self.inner.acquire_lock(lock)?;
        // A lock file holds no text; narrowed all the same, so every file in the folder is.
        self.protection.apply(&self.root.join(&lock.filepath)).map_err(LockError::wrap_io_error)?;
        Ok(held)
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(watch_callback)
    }
}
