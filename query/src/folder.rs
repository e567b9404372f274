//! The index folder: where it lives, opening or creating it, recognising one written by another
//! format or damaged (and rebuilding it from nothing), and the commit payload that records how
//! far into the journal the index has read.
//!
//! **Invariant:** every document in a committed index belongs to a record at a store position
//! below the position in that commit's payload, and every block of every such record that has
//! text has exactly one document. The payload and the documents are written by one tantivy
//! commit (one atomic rename of `meta.json`), so a crash leaves the last commit whole; what was
//! added after it is not in `meta.json` and is never seen.

use std::path::{Path, PathBuf};

use tantivy::directory::error::OpenReadError;
use tantivy::directory::{Directory, FileSlice, INDEX_WRITER_LOCK};
use tantivy::index::{IndexMeta, SegmentComponent};
use tantivy::{Index, TantivyError};

use crate::error::{one_line, IndexError};
use crate::protect::{ProtectedDirectory, Protection};
use crate::schema::{schema, settings, Fields};
use crate::tokenize::register_for_indexing;
use crate::verified::{Stamp, Verified};

/// What the payload starts with; the number after it is the next position to index.
const PAYLOAD_PREFIX: &str = "annal-index v1 position ";

/// How long opening waits for another process that is creating the index.
const CREATE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The default index folder of a store file: `<store>.index` beside it.
pub fn index_folder(store_file: &Path) -> PathBuf {
    let mut name = store_file.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "annal".into());
    name.push(".index");
    store_file.with_file_name(name)
}

/// The commit payload recording that positions below `position` are indexed.
/// The bytes of the files under `folder`, its subfolders included: what an index takes on disk.
pub(crate) fn folder_bytes(folder: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        total += if meta.is_dir() { folder_bytes(&entry.path())? } else { meta.len() };
    }
    Ok(total)
}

pub(crate) fn payload(position: u64) -> String {
    format!("{PAYLOAD_PREFIX}{position}")
}

/// The indexed position a payload records; no payload (no commit yet) is position 0.
pub(crate) fn parse_payload(payload: Option<&str>) -> Result<u64, String> {
    match payload {
        None => Ok(0),
        Some(text) => text
            .strip_prefix(PAYLOAD_PREFIX)
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("its commit payload {text:?} is not annal's")),
    }
}

/// An open index folder.
#[derive(Clone)]
pub(crate) struct Folder {
    pub(crate) path: PathBuf,
    pub(crate) index: Index,
    pub(crate) fields: Fields,
    /// The segment files the open checked, held open until the first reader is built: the
    /// directory maps a file once while a handle to it lives, so the reader reuses these maps
    /// instead of opening and mapping every file a second time. Emptied once the reader holds
    /// them (a file a merge deletes later must not stay mapped here).
    pub(crate) checked: Vec<FileSlice>,
    /// The indexed position of the commit the open checked: a lower bound of what a reader
    /// built afterwards sees, without reading `meta.json` once more.
    pub(crate) opened_position: u64,
}

impl std::fmt::Debug for Folder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Folder").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Folder {
    /// Opens the index in `path`, creating the folder and an empty index if needed, with the
    /// protection of the store (see `protect`). An index of another format or one whose files
    /// are damaged is deleted and created anew (it is derived: the indexer fills it from the
    /// journal), unless another process is writing it.
    pub(crate) fn open(path: &Path, protection: Protection) -> Result<Folder, IndexError> {
        let prepared = protection.prepare(path);
        if let Ok(true) = prepared {
            // Said once: the next open finds nothing wider.
            eprintln!(
                "annal: the search index {} could be read by more users than its store; it now has the \
                 store's permissions",
                path.display()
            );
        }
        prepared.map(drop).map_err(|source| {
            // Something that is not a folder holds the name: it is not the index (which is only
            // ever a folder), so it is left alone and named.
            if path.exists() && !path.is_dir() {
                IndexError::NotAFolder { path: path.to_path_buf() }
            } else {
                IndexError::Io { path: path.to_path_buf(), source }
            }
        })?;
        let (index, checked, opened_position) = match open_or_create(path) {
            Ok(opened) => opened,
            Err(err) if err.is_damage() => recreate(path, err)?,
            Err(err) => return Err(err),
        };
        register_for_indexing(index.tokenizers());
        let (_, fields) = schema();
        Ok(Folder { path: path.to_path_buf(), index, fields, checked, opened_position })
    }

    /// The indexed position of the last commit.
    pub(crate) fn committed_position(&self) -> Result<(u64, u64), IndexError> {
        let metas = self.index.load_metas().map_err(|e| IndexError::tantivy(&self.path, e))?;
        let position = parse_payload(metas.payload.as_deref())
            .map_err(|reason| IndexError::Corrupted { path: self.path.clone(), reason })?;
        Ok((position, metas.opstamp))
    }
}

fn directory(path: &Path) -> Result<ProtectedDirectory, IndexError> {
    ProtectedDirectory::open(path).map_err(|e| IndexError::tantivy(path, TantivyError::from(e)))
}

/// An opened index, its checked segment files, held open (see [`Folder::checked`]), and the
/// indexed position of the commit checked.
type Opened = (Index, Vec<FileSlice>, u64);

fn open_or_create(path: &Path) -> Result<Opened, IndexError> {
    let started = std::time::Instant::now();
    loop {
        let dir = directory(path)?;
        let exists = Index::exists(&dir).map_err(|e| IndexError::tantivy(path, TantivyError::from(e)))?;
        if exists {
            return check(path, Index::open(dir).map_err(|e| IndexError::tantivy(path, e))?);
        }
        // Created under the writer lock, so two processes opening a new store at once cannot
        // both write a first meta.json.
        match dir.acquire_lock(&INDEX_WRITER_LOCK) {
            Ok(lock) => {
                let (schema, _) = schema();
                let created = match Index::exists(&dir) {
                    Ok(true) => Index::open(dir),
                    _ => Index::create(dir, schema, settings()),
                };
                drop(lock);
                return check(path, created.map_err(|e| IndexError::tantivy(path, e))?);
            }
            Err(_) if started.elapsed() < CREATE_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            Err(_) => return Err(IndexError::Busy { path: path.to_path_buf() }),
        }
    }
}

/// Checks that an opened index is one this build writes, and that its segments are whole.
fn check(path: &Path, index: Index) -> Result<Opened, IndexError> {
    let (expected, _) = schema();
    if index.schema() != expected {
        return Err(IndexError::Corrupted {
            path: path.to_path_buf(),
            reason: "it was written with another index format".into(),
        });
    }
    let metas = index.load_metas().map_err(|e| IndexError::tantivy(path, e))?;
    let position = parse_payload(metas.payload.as_deref())
        .map_err(|reason| IndexError::Corrupted { path: path.to_path_buf(), reason })?;
    let checked = check_segments(path, &index, &metas)?;
    Ok((index, checked, position))
}

/// Checks that every file of the committed segments is there and reads back as it was written.
///
/// tantivy checks a file's footer when it opens it, not its contents, and opens some files
/// only when a search needs them: an index damaged while it was closed (bytes overwritten
/// inside a file, a file deleted) opened, then searches silently missed hits, failed, or
/// panicked inside tantivy. So each file's checksum (kept in its footer) is verified before
/// anything parses it, once: a file verified before, and unchanged since (same size and
/// modification time, see [`Verified`]), has only its footer read. An open costs a few file
/// reads per segment, not a pass over the whole index. Truncated, overwritten and missing files
/// are damage (the index is rebuilt); other read errors (permissions, a failing disk) are the
/// I/O errors they are.
fn check_segments(path: &Path, index: &Index, metas: &IndexMeta) -> Result<Vec<FileSlice>, IndexError> {
    let directory = index.directory();
    // Every segment has one file per component; the delete file only once it has deletes (the
    // name tantivy lists for a segment without is never written), a temporary store never
    // once committed.
    let optional: Vec<PathBuf> = metas
        .segments
        .iter()
        .filter(|segment| segment.delete_opstamp().is_none())
        .map(|segment| segment.relative_path(SegmentComponent::Delete))
        .collect();
    let mut files: Vec<PathBuf> = metas
        .list_segment_files()
        .into_iter()
        .filter(|file| !optional.contains(file) && !file.to_string_lossy().ends_with(".temp"))
        .collect();
    files.sort();
    let remembered = Verified::load(path);
    let mut verified = Verified::default();
    let now = std::time::SystemTime::now();
    let mut checked = Vec::with_capacity(files.len());
    for file in files {
        let name = file.to_string_lossy().into_owned();
        let stamp = Stamp::of(&path.join(&file));
        if let Some(stamp) = stamp.filter(|&stamp| remembered.holds(&name, stamp)) {
            // Opening a file reads and checks its footer.
            checked.push(directory.open_read(&file).map_err(|err| read_damage(path, err))?);
            verified.insert(name, stamp, now);
            continue;
        }
        match directory.validate_checksum(&file) {
            Ok(true) => {}
            Ok(false) => {
                return Err(IndexError::Corrupted {
                    path: path.to_path_buf(),
                    reason: format!("{} does not match its checksum", file.display()),
                })
            }
            Err(err) => return Err(read_damage(path, err)),
        }
        if let Some(stamp) = stamp {
            verified.insert(name, stamp, now);
        }
    }
    if verified != remembered {
        verified.save(path);
    }
    Ok(checked)
}

/// A file of the index that cannot be read: damage when it is missing, cut short or not what
/// tantivy wrote (its footer is wrong); otherwise the I/O error it is.
fn read_damage(path: &Path, err: OpenReadError) -> IndexError {
    let name = |file: &Path| {
        file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned())
    };
    let reason = match &err {
        OpenReadError::FileDoesNotExist(file) => format!("{} is missing", name(file)),
        OpenReadError::IoError { io_error, filepath }
            if matches!(
                io_error.kind(),
                std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidData
            ) =>
        {
            format!("{}: {}", name(filepath), one_line(io_error))
        }
        _ => return IndexError::tantivy(path, err.into()),
    };
    IndexError::Corrupted { path: path.to_path_buf(), reason }
}

/// Deletes a damaged or foreign index and creates an empty one, holding the writer lock.
fn recreate(path: &Path, damage: IndexError) -> Result<Opened, IndexError> {
    let dir = directory(path)?;
    // What looked damaged may have been another process's merge removing files the first look
    // expected (it commits, then deletes the merged segments' files): the index is looked at
    // again, under the lock if it is free, before anything is deleted.
    let second_look = || {
        Index::open(directory(path)?).map_err(|e| IndexError::tantivy(path, e)).and_then(|i| check(path, i))
    };
    let Ok(lock) = dir.acquire_lock(&INDEX_WRITER_LOCK) else {
        // Someone is writing it; they may be of the other format. Report the damage.
        return second_look().map_err(|_| damage);
    };
    if let Ok(index) = second_look() {
        drop(lock);
        return Ok(index);
    }
    let io = |source| IndexError::Io { path: path.to_path_buf(), source };
    for entry in std::fs::read_dir(path).map_err(io)? {
        let entry = entry.map_err(io)?;
        if entry.file_name() == INDEX_WRITER_LOCK.filepath.as_os_str() {
            continue;
        }
        let kind = entry.file_type().map_err(io)?;
        if kind.is_dir() {
            std::fs::remove_dir_all(entry.path()).map_err(io)?;
        } else {
            std::fs::remove_file(entry.path()).map_err(io)?;
        }
    }
    let (schema, _) = schema();
    let index = Index::create(directory(path)?, schema, settings()).map_err(|e| IndexError::tantivy(path, e));
    drop(lock);
    Ok((index?, Vec::new(), 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip() {
        assert_eq!(parse_payload(Some(&payload(42))), Ok(42));
        assert_eq!(parse_payload(None), Ok(0));
        assert!(parse_payload(Some("something else")).is_err());
    }

    #[test]
    fn folder_sits_beside_the_store() {
        assert_eq!(index_folder(Path::new("/a/b/annal.redb")), Path::new("/a/b/annal.redb.index"));
    }
}
