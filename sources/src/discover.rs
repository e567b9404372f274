//! Discovery: the files, folders and databases an agent's locations hold, each a [`Unit`] that
//! is read as a whole and has one cursor. A location that does not exist is not a problem (the
//! agent is not installed); one that cannot be read, or a link that loops, is reported and the
//! rest is still found.

use std::fs;
use std::path::{Path, PathBuf};

use annal_formats::TranscriptFormat;

use crate::agent_store::is_opencode_storage;
use crate::error::SourceError;
use annal_formats::Agent;

/// How a unit is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnitKind {
    /// A transcript file in one format (compressed with zstd when its name ends `.zst`).
    Transcript(TranscriptFormat),
    /// OpenCode's SQLite database (1.2 and later).
    OpenCodeDb,
    /// OpenCode's older `storage/` folder of JSON files.
    OpenCodeStorage,
    /// A Crush or Go OpenCode SQLite database.
    CrushDb,
    /// goose's `sessions.db`.
    GooseDb,
    /// Zed's `threads.db`.
    ZedDb,
    /// Cursor's global `state.vscdb`.
    CursorDb,
    /// Kiro CLI's `data.sqlite3`.
    KiroDb,
    /// A Cursor CLI chat's `store.db`.
    CursorChatDb,
}

/// One file, folder or database to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// Whose it is.
    pub agent: Agent,
    /// How it is read.
    pub kind: UnitKind,
    /// Where it is.
    pub path: PathBuf,
}

/// What discovery found for one agent.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// The agent's locations that exist.
    pub(crate) locations: Vec<PathBuf>,
    pub(crate) units: Vec<Unit>,
    /// Sessions found of an agent annal cannot read ([`Agent::not_readable`]).
    pub(crate) not_readable: u64,
    pub(crate) problems: Vec<SourceError>,
}

/// How deep a project folder is searched for per-project sessions.
const PROJECT_DEPTH_MAX: usize = 8;
/// How deep an agent's own folder is searched.
const AGENT_DEPTH_MAX: usize = 12;
/// Folders never searched inside a project: build output and dependencies hold no sessions and
/// can be huge.
const SKIPPED_DIRS: [&str; 8] =
    [".git", "node_modules", "target", ".venv", "venv", "__pycache__", "dist", "build"];

/// Whether a changed file may be part of an agent's sessions: not inside a folder discovery
/// never searches (dependencies, build output, version control), whose churn must not wake a
/// watch over a project folder.
pub fn may_hold_sessions(path: &Path) -> bool {
    !path.components().any(|c| SKIPPED_DIRS.iter().any(|skipped| c.as_os_str() == *skipped))
}

/// Finds the units of `agent` at `locations`.
pub(crate) fn discover(agent: Agent, locations: &[PathBuf]) -> Found {
    let mut found = Found::default();
    for location in locations {
        if fs::symlink_metadata(location).is_err() {
            continue;
        }
        found.locations.push(location.clone());
        if agent.not_readable().is_some() {
            found.not_readable += count_files(location, "pb");
            continue;
        }
        let mut walk =
            Walk { agent, units: &mut found.units, problems: &mut found.problems, stack: Vec::new() };
        match agent {
            Agent::OpenCode => walk.opencode(location),
            Agent::Goose => walk.file_if(location.join("sessions.db"), UnitKind::GooseDb),
            Agent::Zed => walk.file_if(location.join("threads.db"), UnitKind::ZedDb),
            // The CLI's chats (`chats/<folder hash>/<agent>/store.db`), or the editor's database.
            Agent::Cursor if location.ends_with("chats") => walk.dir(location, 2),
            Agent::Cursor if location.ends_with("projects") => walk.cursor_projects(location),
            Agent::Cursor => walk.file_if(location.join("state.vscdb"), UnitKind::CursorDb),
            // The session logs' folder, or a data folder holding the database.
            Agent::Kiro if location.ends_with("sessions/cli") => walk.dir(location, 0),
            Agent::Kiro => walk.file_if(location.join("data.sqlite3"), UnitKind::KiroDb),
            Agent::Crush | Agent::Aider => walk.dir(location, PROJECT_DEPTH_MAX),
            _ => walk.dir(location, AGENT_DEPTH_MAX),
        }
    }
    found.units.sort_by(|a, b| a.path.cmp(&b.path));
    found.units.dedup();
    found
}

/// How many files with `extension` a folder holds (not looking deeper).
fn count_files(folder: &Path, extension: &str) -> u64 {
    let Ok(entries) = fs::read_dir(folder) else { return 0 };
    let named = |path: &Path| path.extension().is_some_and(|e| e == extension);
    entries.flatten().filter(|entry| named(&entry.path())).count() as u64
}

struct Walk<'a> {
    agent: Agent,
    units: &'a mut Vec<Unit>,
    problems: &'a mut Vec<SourceError>,
    /// The folders being walked, resolved, to tell a link back into one of them.
    stack: Vec<PathBuf>,
}

impl Walk<'_> {
    fn opencode(&mut self, location: &Path) {
        self.file_if(location.join("opencode.db"), UnitKind::OpenCodeDb);
        let storage = location.join("storage");
        if is_opencode_storage(&storage) {
            self.units.push(Unit { agent: self.agent, kind: UnitKind::OpenCodeStorage, path: storage });
        }
    }

    /// Cursor's `projects/<folder>/agent-transcripts`, and nothing else of a project's folder
    /// (its assets, terminals and tool settings hold no sessions).
    fn cursor_projects(&mut self, location: &Path) {
        let entries = match fs::read_dir(location) {
            Ok(entries) => entries,
            Err(source) => return self.problems.push(SourceError::Io { path: location.to_owned(), source }),
        };
        let mut transcripts: Vec<PathBuf> =
            entries.flatten().map(|entry| entry.path().join("agent-transcripts")).collect();
        transcripts.sort();
        for folder in transcripts.into_iter().filter(|folder| folder.is_dir()) {
            // `<session>.jsonl`, `<session>/<session>.jsonl`, `<session>/subagents/<id>.jsonl`.
            self.dir(&folder, 2);
        }
    }

    fn file_if(&mut self, path: PathBuf, kind: UnitKind) {
        if path.is_file() {
            self.units.push(Unit { agent: self.agent, kind, path });
        }
    }

    fn dir(&mut self, dir: &Path, depth_left: usize) {
        let resolved = match fs::canonicalize(dir) {
            Ok(resolved) => resolved,
            Err(source) => return self.problems.push(SourceError::Io { path: dir.to_owned(), source }),
        };
        if self.stack.contains(&resolved) {
            return self.problems.push(SourceError::SymlinkLoop { path: dir.to_owned() });
        }
        let entries = match fs::read_dir(dir).and_then(|entries| entries.collect::<Result<Vec<_>, _>>()) {
            Ok(entries) => entries,
            Err(source) => return self.problems.push(SourceError::Io { path: dir.to_owned(), source }),
        };
        self.stack.push(resolved);
        let mut entries: Vec<_> = entries.into_iter().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            // Follows links: a linked project or session folder is read like any other.
            let meta = match fs::metadata(&path) {
                Ok(meta) => meta,
                // A link to nothing, or a file we may not look at: named, and the rest is read.
                Err(source) => {
                    self.problems.push(SourceError::Io { path, source });
                    continue;
                }
            };
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if meta.is_dir() {
                if depth_left > 0 && !SKIPPED_DIRS.contains(&name.as_str()) {
                    self.dir(&path, depth_left - 1);
                }
            } else if meta.is_file() {
                if let Some(kind) = unit_kind(self.agent, &path, &name) {
                    self.units.push(Unit { agent: self.agent, kind, path });
                }
            }
        }
        self.stack.pop();
    }
}

/// What a file found under an agent's location is, by its name and place: one of its databases,
/// or (the registry says which) one of its transcripts.
fn unit_kind(agent: Agent, path: &Path, name: &str) -> Option<UnitKind> {
    let parent = path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy()).unwrap_or_default();
    match agent {
        Agent::Crush => match (parent.as_ref(), name) {
            (".crush", "crush.db") | (".opencode", "opencode.db") => Some(UnitKind::CrushDb),
            _ => None,
        },
        Agent::Cursor if name == "store.db" => Some(UnitKind::CursorChatDb),
        _ => agent.transcript_format(path).map(UnitKind::Transcript),
    }
}
