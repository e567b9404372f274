//! Where the store is (`--db`, `ANNAL_DB`, or the user's data directory) and how it is opened.
//!
//! Commands that only read never create a store: a missing file is reported instead, so a typo
//! in `--db` cannot leave an empty store behind. `append` creates the store, and for the default
//! location also its folder, readable by the owner only.

use crate::failure::said;
use annal::error::ErrorKind;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use annal::error::ReadError;
use annal::{Annal, Options, Snapshot};
use anyhow::{anyhow, bail, Context};

/// The store file a command works on, resolved from the arguments and the environment.
#[derive(Debug, Clone)]
pub(crate) struct StoreLocation {
    path: PathBuf,
    /// The default location: its folder may be created on first use.
    is_default: bool,
}

impl fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())
    }
}

impl StoreLocation {
    /// `--db` (or `ANNAL_DB`, which clap folds into it), else `annal/annal.redb` in the data
    /// directory. Nothing is read or created here.
    pub(crate) fn resolve(db: Option<PathBuf>) -> anyhow::Result<StoreLocation> {
        match db {
            Some(path) if path.as_os_str().is_empty() => bail!("--db (or ANNAL_DB) is empty"),
            Some(path) => Ok(StoreLocation { path, is_default: false }),
            None => {
                let data = dirs::data_dir().ok_or_else(|| {
                    anyhow!(
                        "cannot find the user's data directory for the default store; \
                         pass --db PATH or set ANNAL_DB"
                    )
                })?;
                Ok(StoreLocation { path: data.join("annal").join("annal.redb"), is_default: true })
            }
        }
    }

    /// The store file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Opens an existing store; a missing file is an error naming the path.
    pub(crate) fn open_existing(&self) -> anyhow::Result<Annal> {
        self.check_exists()?;
        self.open(false)
    }

    /// Opens an existing store for a command that only reads it: nothing is written to the
    /// store file, at open or at close (see `Options::read_only`).
    pub(crate) fn open_reading(&self) -> anyhow::Result<Annal> {
        self.check_exists()?;
        self.open(true)
    }

    /// Opens an existing store for a long-running reader (`annal ui`): read-only, its index
    /// opened at once and kept up to date, and a search waiting up to `search_wait` for
    /// records committed before it.
    pub(crate) fn open_serving(&self, search_wait: Duration) -> anyhow::Result<Annal> {
        self.check_exists()?;
        let options = Options { index_eagerly: true, search_wait, read_only: true, ..Options::default() };
        Ok(Annal::open_with(&self.path, &options)?)
    }

    fn check_exists(&self) -> anyhow::Result<()> {
        match std::fs::metadata(&self.path) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => bail!("{} is not a file", self.path.display()),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Err(said(
                    ErrorKind::NotFound,
                    format!("no store at {} (the first `annal append` creates it)", self.path.display()),
                ));
            }
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", self.path.display())),
        }
        Ok(())
    }

    /// Opens the store, creating it (and, for the default location, its folder) if needed.
    pub(crate) fn open_or_create(&self) -> anyhow::Result<Annal> {
        if self.is_default {
            if let Some(folder) = self.path.parent() {
                create_private_folder(folder)
                    .with_context(|| format!("cannot create the store folder {}", folder.display()))?;
            }
        }
        self.open(false)
    }

    fn open(&self, read_only: bool) -> anyhow::Result<Annal> {
        // A command runs briefly: the search index is opened only by a command that searches.
        // It waits for the index itself (with a progress bar), so searches do not wait again.
        let options =
            Options { index_eagerly: false, search_wait: Duration::ZERO, read_only, ..Options::default() };
        // The engine's open errors already name the path.
        Ok(Annal::open_with(&self.path, &options)?)
    }

    /// The error for a session this store does not have, in the library's words.
    pub(crate) fn unknown_session(&self, name: &str) -> anyhow::Error {
        self.failed(&annal::Error::Read(ReadError::UnknownSession(name.to_owned())))
    }

    /// A failure of the library, in the words every caller of it gets (the Python bindings
    /// raise the same line): naming this store where the error cannot.
    pub(crate) fn failed(&self, err: &annal::Error) -> anyhow::Error {
        said(err.kind(), annal::error::message_in(err, &self.path))
    }

    /// Describes a read failure, naming the session and the store.
    pub(crate) fn read_error(&self, session: &str, err: ReadError) -> anyhow::Error {
        match err {
            ReadError::UnknownSession(name) => self.unknown_session(&name),
            other => said(other.kind(), format!("cannot read session {session:?} in {self}: {other}")),
        }
    }

    /// A snapshot of the store, with the error naming where.
    pub(crate) fn snapshot(&self, store: &Annal) -> anyhow::Result<Snapshot> {
        store.snapshot().with_context(|| format!("cannot read {self}"))
    }
}

/// Creates `folder` and any missing parents; on unix those it creates are owner-only (0700).
fn create_private_folder(folder: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(folder)
}
