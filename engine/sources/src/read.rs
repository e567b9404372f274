//! Reading one unit from its cursor: nothing when its fingerprint is unchanged, else the
//! sessions it holds (a file whole, a database from its newest update time read).

use std::io::Read as _;
use std::path::Path;

use annal_formats::{parse_transcript, transcript_stem, ParsedSession, TranscriptFormat};

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
}

/// Why a unit was not read.
#[derive(Debug)]
pub(crate) enum NotRead {
    /// Its fingerprint is what the last sync saw.
    Unchanged,
    /// It could not be read, or is not what its place says it is.
    Failed(SourceError),
}

impl From<SourceError> for NotRead {
    fn from(err: SourceError) -> NotRead {
        NotRead::Failed(err)
    }
}

/// Reads `unit`, given the cursor the last sync kept for it.
pub(crate) fn read(unit: &Unit, previous: Option<Cursor>) -> Result<Reading, NotRead> {
    let file = Fingerprint::of(&std::fs::metadata(&unit.path).map_err(|source| io(&unit.path, source))?);
    match unit.kind {
        UnitKind::Transcript(format) => {
            if previous.is_some_and(|p| p.file == file) {
                return Err(NotRead::Unchanged);
            }
            read_transcript(&unit.path, format, file)
        }
        UnitKind::OpenCodeStorage => {
            let since = previous.map(|p| p.since_ms);
            let reading = opencode_storage::read(&unit.path, since)?;
            Ok(from_db(reading, Cursor { file, ..Cursor::default() }))
        }
        UnitKind::OpenCodeDb | UnitKind::CrushDb | UnitKind::GooseDb => {
            let wal = Fingerprint::of_path(&wal_path(&unit.path));
            if previous.is_some_and(|p| p.file == file && p.wal == wal) {
                return Err(NotRead::Unchanged);
            }
            let since = previous.map(|p| p.since_ms);
            let reading = match unit.kind {
                UnitKind::OpenCodeDb => db::opencode::read(&unit.path, since)?,
                UnitKind::CrushDb => db::crush::read(&unit.path, since)?,
                _ => db::goose::read(&unit.path, since)?,
            };
            Ok(from_db(reading, Cursor { file, wal, since_ms: 0 }))
        }
    }
}

fn from_db(reading: DbReading, cursor: Cursor) -> Reading {
    Reading {
        sessions: reading.sessions,
        skipped: reading.skipped,
        cursor: Cursor { since_ms: reading.since_ms, ..cursor },
        bytes: cursor.file.size + cursor.wal.size,
    }
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
    let parsed = parse_transcript(&bytes, format, &transcript_stem(path));
    if parsed.unrecognised > parsed.recognised {
        let message = format!(
            "not read as {format}: {} of its {} items are of no kind {format} writes (another format, or a newer version of it)",
            parsed.unrecognised,
            parsed.unrecognised + parsed.recognised
        );
        return Err(SourceError::Unrecognised { path: path.to_owned(), message }.into());
    }
    let skipped = parsed.skipped.iter().map(|s| format!("{}:{s}", path.display())).collect();
    let cursor = Cursor { file, ..Cursor::default() };
    Ok(Reading { sessions: parsed.sessions, skipped, cursor, bytes: file.size })
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
