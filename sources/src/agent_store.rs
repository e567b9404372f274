//! An agent's store named by its path, as `annal import PATH` reads one: a SQLite database told
//! apart by its tables (OpenCode's `opencode.db`; Crush's `crush.db` and the Go OpenCode's
//! `opencode.db`; goose's `sessions.db`) or OpenCode's older `storage/` folder, read whole, as
//! a first sync reads it. No cursor is kept: importing again reads it all again, and stores
//! nothing twice (every record has a stable entryId).

use std::io::Read as _;
use std::path::Path;

use annal_formats::ParsedSession;

use crate::db::{self, DbReading};
use crate::error::SourceError;
use crate::opencode_storage;
use annal_formats::Agent;

/// The first bytes of every SQLite database file.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// What reading an agent's store found.
#[derive(Debug)]
#[non_exhaustive]
pub struct AgentStoreReading {
    /// Whose store it is.
    pub agent: Agent,
    /// Its sessions, with every record read. A message the agent is still writing is left out,
    /// as a sync leaves it for its next pass.
    pub sessions: Vec<ParsedSession>,
    /// Parts that could not be read (a row, a file), one line each naming it and why.
    pub skipped: Vec<String>,
}

impl AgentStoreReading {
    fn new(agent: Agent, reading: DbReading) -> AgentStoreReading {
        AgentStoreReading { agent, sessions: reading.sessions, skipped: reading.skipped }
    }
}

/// Reads the agent's store at `path` whole: a SQLite database of OpenCode, Crush (or the Go
/// OpenCode) or goose, known by its tables wherever it lies, or OpenCode's `storage/` folder.
/// `None` when `path` is neither a SQLite database nor such a folder (a transcript, say).
///
/// # Errors
/// [`SourceError::Unrecognised`] for a database of no schema annal reads,
/// [`SourceError::Schema`] for an agent's tables without a column annal reads (a newer
/// version), [`SourceError::Locked`], [`SourceError::Database`] for a damaged one, and
/// [`SourceError::Io`] when the file cannot be read.
pub fn read_agent_store(path: &Path) -> Result<Option<AgentStoreReading>, SourceError> {
    let io = |source| SourceError::Io { path: path.to_owned(), source };
    if std::fs::metadata(path).map_err(io)?.is_dir() {
        if !is_opencode_storage(path) {
            return Ok(None);
        }
        let reading = opencode_storage::read(path, None)?;
        return Ok(Some(AgentStoreReading::new(Agent::OpenCode, reading)));
    }
    let mut header = [0u8; SQLITE_HEADER.len()];
    let mut file = std::fs::File::open(path).map_err(io)?;
    // A file shorter than the header is no database; `read_exact` says so as UnexpectedEof.
    match file.read_exact(&mut header) {
        Ok(()) if header == *SQLITE_HEADER => {}
        Ok(()) => return Ok(None),
        Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(err) => return Err(io(err)),
    }
    drop(file);
    let (agent, reading) = db::read_whole(path)?;
    Ok(Some(AgentStoreReading::new(agent, reading)))
}

/// Whether `folder` is OpenCode's older `storage/` tree (a folder so named, holding `session/`):
/// read as one store, not file by file.
pub fn is_opencode_storage(folder: &Path) -> bool {
    folder.file_name().is_some_and(|name| name == "storage") && folder.join("session").is_dir()
}
