//! Reading one unit from its cursor: nothing when its fingerprint is unchanged, else the
//! sessions it holds (a file whole, a database from its newest update time read).

use std::io::Read as _;
use std::path::Path;

use annal_formats::{
    kimi_context_number, parse_kimi_context, parse_transcript, transcript_stem, ParsedSession,
    TranscriptFormat,
};

use crate::cursor::{Cursor, Fingerprint};
use crate::db::{self, DbReading};
use crate::discover::{Unit, UnitKind};
use crate::error::SourceError;
use crate::opencode_storage;

/// The largest transcript file read (a compressed one: after decompression). A larger file is
/// reported, not read: it would have to be held in memory whole.
pub const FILE_BYTES_MAX: u64 = 1 << 30;

/// What reading a unit found.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    pub(crate) sessions: Vec<ParsedSession>,
    /// One line per part that could not be read (`path:line: reason`, `row …: reason`).
    pub(crate) skipped: Vec<String>,
    /// The cursor to keep once the sessions are stored.
    pub(crate) cursor: Cursor,
    /// Bytes read from disk.
    pub(crate) bytes: u64,
    /// A database written to so recently that a commit may not be visible yet: its cursor
    /// keeps no fingerprint, so the next pass reads it again.
    pub(crate) unsettled: bool,
}

/// Why a unit was not read.
#[derive(Debug)]
pub(crate) enum NotRead {
    /// Its fingerprint is what the last sync saw.
    Unchanged,
    /// It went away between discovery and reading (an agent moved or deleted it).
    Gone,
    /// It is not what its place says it is (another format): reported, and not read again
    /// until it changes, so the cursor to keep comes with it.
    Refused(Box<(SourceError, Cursor)>),
    /// It could not be read; it is read again next time.
    Failed(SourceError),
}

impl From<SourceError> for NotRead {
    fn from(err: SourceError) -> NotRead {
        NotRead::Failed(err)
    }
}

/// Reads `unit`, given the cursor the last sync kept for it.
pub(crate) fn read(unit: &Unit, previous: Option<Cursor>) -> Result<Reading, NotRead> {
    let file = match std::fs::metadata(&unit.path) {
        Ok(meta) => Fingerprint::of(&meta),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(NotRead::Gone),
        Err(source) => return Err(io(&unit.path, source).into()),
    };
    match unit.kind {
        UnitKind::Transcript(format) => {
            if previous.is_some_and(|p| p.file == file) {
                return Err(NotRead::Unchanged);
            }
            read_transcript(&unit.path, format, file)
        }
        UnitKind::OpenCodeStorage => {
            // A folder's own fingerprint does not change when a file deep inside it does: the
            // tree's is its file count and newest modification time.
            let file = tree_fingerprint(&unit.path);
            if previous.is_some_and(|p| p.file == file) {
                return Err(NotRead::Unchanged);
            }
            let since = previous.map(|p| p.since_ms);
            let reading = opencode_storage::read(&unit.path, since)?;
            let file = if reading.held { Fingerprint::default() } else { file };
            Ok(from_db(reading, Cursor { file, ..Cursor::default() }, file.size, false))
        }
        UnitKind::OpenCodeDb
        | UnitKind::CrushDb
        | UnitKind::GooseDb
        | UnitKind::ZedDb
        | UnitKind::CursorDb
        | UnitKind::KiroDb
        | UnitKind::CursorChatDb => {
            let wal = Fingerprint::of_path(&wal_path(&unit.path));
            if previous.is_some_and(|p| p.file == file && p.wal == wal) {
                return Err(NotRead::Unchanged);
            }
            let since = previous.map(|p| p.since_ms);
            let reading = match unit.kind {
                UnitKind::OpenCodeDb => db::opencode::read(&unit.path, since)?,
                UnitKind::CrushDb => db::crush::read(&unit.path, since)?,
                UnitKind::ZedDb => db::zed::read(&unit.path, since)?,
                UnitKind::CursorDb => db::cursor::read(&unit.path, since)?,
                UnitKind::KiroDb => db::kiro::read(&unit.path, since)?,
                UnitKind::CursorChatDb => db::cursor_cli::read(&unit.path)?,
                _ => db::goose::read(&unit.path, since)?,
            };
            // A message left for later is looked for again at the next pass, even if the
            // database does not change meanwhile (Crush releases one unfinished for an hour).
            // So is a database written within the last moments: SQLite writes a commit's
            // frames to the log (the changes a watch is woken by) before it syncs them and
            // then publishes the commit in shared memory, which changes no file. A read in
            // between sees the old rows through files that will not change again.
            let unsettled = recently_written(file) || recently_written(wal);
            let bytes = file.size + wal.size;
            let (file, wal) = if reading.held || unsettled { Default::default() } else { (file, wal) };
            Ok(from_db(reading, Cursor { file, wal, since_ms: 0 }, bytes, unsettled))
        }
    }
}

/// A database's reading, with the cursor to keep, the bytes it read and whether it is unsettled.
fn from_db(reading: DbReading, cursor: Cursor, bytes: u64, unsettled: bool) -> Reading {
    Reading {
        sessions: reading.sessions,
        skipped: reading.skipped,
        cursor: Cursor { since_ms: reading.since_ms, ..cursor },
        bytes,
        unsettled,
    }
}

/// How long after its last write a database is read again: longer than a commit's sync takes
/// on a busy disk.
const SETTLED_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether the file was modified within [`SETTLED_AFTER`] of now, by this machine's clock. A
/// time further in the future (another machine's clock, a copy that kept its times) counts as
/// settled, or such a database would be read at every pass until the clock caught up.
fn recently_written(file: Fingerprint) -> bool {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let now_ns = u64::try_from(now.as_nanos()).unwrap_or(u64::MAX);
    file.mtime_ns != 0 && now_ns.abs_diff(file.mtime_ns) < SETTLED_AFTER.as_nanos() as u64
}

/// SQLite's write-ahead log beside a database.
fn wal_path(db: &Path) -> std::path::PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    name.into()
}

fn io(path: &Path, source: std::io::Error) -> SourceError {
    SourceError::Io { path: path.to_owned(), source }
}

fn read_transcript(path: &Path, format: TranscriptFormat, file: Fingerprint) -> Result<Reading, NotRead> {
    if file.size > FILE_BYTES_MAX {
        let message = format!("{} bytes, over the {} bytes read at once", file.size, FILE_BYTES_MAX);
        return Err(io(path, std::io::Error::other(message)).into());
    }
    let raw = std::fs::read(path).map_err(|source| io(path, source))?;
    let bytes = match path.extension().and_then(|e| e.to_str()) {
        Some("zst") => decompress(path, &raw)?,
        _ => raw,
    };
    let parsed = match kimi_rotations(path, format) {
        Some(rotations) => {
            let mut rotated = Vec::with_capacity(rotations.len());
            for rotation in &rotations {
                rotated.push(std::fs::read(rotation).map_err(|source| io(rotation, source))?);
            }
            let rotated: Vec<&[u8]> = rotated.iter().map(Vec::as_slice).collect();
            parse_kimi_context(&rotated, &bytes, &transcript_stem(path))
        }
        None => parse_transcript(&bytes, format, &transcript_stem(path)),
    };
    if parsed.unrecognised > parsed.recognised {
        let cursor = Cursor { file, ..Cursor::default() };
        let message = format!(
            "not read as {format}: {} of its {} items are of no kind {format} writes (another format, or a newer version of it)",
            parsed.unrecognised,
            parsed.unrecognised + parsed.recognised
        );
        return Err(NotRead::Refused(Box::new((
            SourceError::Unrecognised { path: path.to_owned(), message },
            cursor,
        ))));
    }
    let skipped = parsed.skipped.iter().map(|s| format!("{}:{s}", path.display())).collect();
    let cursor = Cursor { file, ..Cursor::default() };
    Ok(Reading { sessions: parsed.sessions, skipped, cursor, bytes: file.size, unsettled: false })
}

/// For a Kimi CLI `context.jsonl`, the files Kimi set aside beside it (`context_<n>.jsonl`,
/// oldest first), which hold the session's earlier history; `None` for any other transcript.
/// A current file is read with them, so a session Kimi cleared or compacted before it was
/// first read is stored in its order. The caller reads them: a set-aside file is not changed
/// again, and a new one comes with a new current file.
pub fn kimi_rotations(path: &Path, format: TranscriptFormat) -> Option<Vec<std::path::PathBuf>> {
    let name = path.file_name()?.to_str()?;
    if format != TranscriptFormat::Kimi || kimi_context_number(name) != Some(0) {
        return None;
    }
    let entries = std::fs::read_dir(path.parent()?).ok()?;
    let mut rotations: Vec<(u32, std::path::PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let number = kimi_context_number(entry.file_name().to_str()?)?;
            (number > 0).then(|| (number, entry.path()))
        })
        .collect();
    rotations.sort();
    Some(rotations.into_iter().map(|(_, path)| path).collect())
}

fn decompress(path: &Path, raw: &[u8]) -> Result<Vec<u8>, SourceError> {
    let decoder = zstd::stream::read::Decoder::new(raw).map_err(|source| io(path, source))?;
    let mut out = Vec::new();
    // Bounded: a small file that inflates without end must not exhaust memory.
    decoder.take(FILE_BYTES_MAX + 1).read_to_end(&mut out).map_err(|source| io(path, source))?;
    if out.len() as u64 > FILE_BYTES_MAX {
        let message = format!("decompresses to over {FILE_BYTES_MAX} bytes");
        return Err(io(path, std::io::Error::other(message)));
    }
    Ok(out)
}

/// A folder tree's fingerprint: how many files it holds (as `size`) and the newest
/// modification time among them. Unreadable parts count as nothing: the reader names them.
fn tree_fingerprint(root: &Path) -> Fingerprint {
    let mut print = Fingerprint::default();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                pending.push(entry.path());
            } else {
                let one = Fingerprint::of(&meta);
                print.size += 1;
                print.mtime_ns = print.mtime_ns.max(one.mtime_ns);
            }
        }
    }
    print
}
