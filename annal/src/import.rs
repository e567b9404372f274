//! Importing a user's existing sessions: transcript bytes in every format `sync` reads, and
//! annal exports, detected, parsed and appended idempotently, and the agents' databases `sync`
//! reads (OpenCode, Crush, goose, Zed, Cursor, Kiro CLI) given by their path, as `annal import` does.

use std::io;
use std::path::{Path, PathBuf};

use annal_formats::{detect_format, load_session, parse_kimi_context, parse_transcript, ParsedSession};
pub use annal_formats::{transcript_stem, SkipReason, Skipped, TranscriptFormat};
use annal_sources::{is_opencode_storage, kimi_rotations, read_agent_store, Agent};

use crate::{Annal, Error};

/// What one import did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct ImportSummary {
    /// The format the transcript was read as; `None` for a database.
    pub format: Option<TranscriptFormat>,
    /// The agent whose database (or OpenCode storage folder) was read; `None` for a transcript.
    pub agent: Option<Agent>,
    /// The sessions it held, by name, in the order found.
    pub sessions: Vec<String>,
    /// Records appended now.
    pub records_new: u64,
    /// Records that were already stored (a re-import, or a file that grew since).
    pub records_present: u64,
    /// Records whose entryId another session holds (a resumed session repeats its
    /// predecessor's lines); they stay with that session.
    pub records_elsewhere: u64,
    /// Records the transcript changed after they were stored (a message edited or completed
    /// in place): stored beside the original as revisions (`meta["revises"]` names it).
    pub records_revised: u64,
    /// Lines that could not be read, with why; the rest was imported.
    pub skipped: Vec<Skipped>,
    /// Parts of a database that could not be read (a row, a message), one line each naming it
    /// and why; the rest was imported.
    pub skipped_rows: Vec<String>,
    /// Sessions that could not be stored, with why (nothing of such a session's failed batch
    /// is stored); the other sessions were.
    pub failed: Vec<(String, Error)>,
}

impl Annal {
    /// Imports a transcript given as bytes, read as `format` or (with `None`) the format
    /// detected from its content; `name` (a file stem) names a session that carries no id.
    /// Unreadable lines are skipped and listed; importing again is a no-op, and a transcript
    /// that grew adds only its new records.
    ///
    /// # Errors
    /// [`Error::UnknownFormat`] for bytes in no known format, [`Error::Unrecognised`] for bytes
    /// mostly unlike the format tried (nothing is stored); a store that stopped writes
    /// ([`Error::is_poisoned`]). A session that cannot be stored is listed in
    /// [`ImportSummary::failed`] and the others are imported.
    ///
    /// # Examples
    /// See [`Annal::export`].
    pub fn import(
        &self,
        bytes: &[u8],
        name: &str,
        format: Option<TranscriptFormat>,
    ) -> Result<ImportSummary, Error> {
        self.store_read(parse_bytes(bytes, name, format)?)
    }

    /// Stores what [`read_file`] or [`parse_bytes`] read.
    fn store_read(&self, read: Read) -> Result<ImportSummary, Error> {
        let Read { mut summary, sessions } = read;
        self.load_sessions(sessions, &mut summary)?;
        Ok(summary)
    }

    /// Stores parsed sessions, counting into `summary`; a session the store refuses is listed
    /// in [`ImportSummary::failed`], a store that stopped writes ends the import.
    fn load_sessions(&self, sessions: Vec<ParsedSession>, summary: &mut ImportSummary) -> Result<(), Error> {
        for session in sessions {
            self.note_load();
            let name = session.name.clone();
            summary.sessions.push(name.clone());
            match load_session(&self.store, session) {
                Ok(load) => {
                    summary.records_new += load.appended;
                    summary.records_present += load.present;
                    summary.records_elsewhere += load.elsewhere;
                    summary.records_revised += load.revised;
                }
                Err(err) => {
                    let err = Error::from(err);
                    if err.is_poisoned() {
                        return Err(err);
                    }
                    summary.failed.push((name, err));
                }
            }
        }
        Ok(())
    }

    /// Imports the transcript file at `path` (its stem names a session without an id of its
    /// own), as [`Annal::import`] does; or, when `path` is an agent's database (OpenCode's
    /// `opencode.db`, Crush's `crush.db` or the Go OpenCode's `opencode.db`, goose's
    /// `sessions.db`, Zed's `threads.db`, Cursor's `state.vscdb` and a Cursor CLI chat's
    /// `store.db`, Kiro CLI's `data.sqlite3`,
    /// known by its tables wherever it lies) or OpenCode's `storage/` folder,
    /// every session in it, as `sync` reads them (`format` does not apply). Importing a
    /// database again stores only what changed in it.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be read, [`Error::Source`] for a database that cannot be
    /// read as an agent's (of a schema annal does not know, damaged, or locked by its agent);
    /// otherwise as [`Annal::import`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let file = dir.path().join("rollout.jsonl");
    /// std::fs::write(&file, r#"{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":"hi"}}"#)?;
    /// let annal = annal::Annal::open(dir.path().join("s.redb"))?;
    /// let summary = annal.import_file(&file, None)?;
    /// assert_eq!((summary.sessions.as_slice(), summary.records_new), (&["s1".to_owned()][..], 1));
    /// # Ok(()) }
    /// ```
    pub fn import_file(
        &self,
        path: impl AsRef<Path>,
        format: Option<TranscriptFormat>,
    ) -> Result<ImportSummary, Error> {
        self.store_read(read_file(path.as_ref(), format)?)
    }

    /// Imports each of `files` in order, as [`Annal::import_file`] does, while a thread of its
    /// own reads and parses the next file: parsing overlaps storing, so on two cores a folder
    /// imports in about the time storing it takes. `each` is given every file's outcome, in
    /// order, and returns whether to go on.
    ///
    /// # Errors
    /// None of its own: each file's error goes to `each`, which decides whether to stop.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let file = dir.path().join("rollout.jsonl");
    /// std::fs::write(&file, r#"{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":"hi"}}"#)?;
    /// let annal = annal::Annal::open(dir.path().join("s.redb"))?;
    /// let mut records = 0;
    /// annal.import_files(&[file.clone(), file], None, |_, outcome| {
    ///     records += outcome.map_or(0, |summary| summary.records_new);
    ///     true
    /// });
    /// assert_eq!(records, 1);
    /// # Ok(()) }
    /// ```
    pub fn import_files(
        &self,
        files: &[PathBuf],
        format: Option<TranscriptFormat>,
        mut each: impl FnMut(&Path, Result<ImportSummary, Error>) -> bool,
    ) {
        // One file read ahead: a parsed transcript can be as large as its file, so no more.
        let (ahead, next) = std::sync::mpsc::sync_channel(1);
        std::thread::scope(|scope| {
            // Without a thread (none could start) the channel is closed at once, and each file
            // is read below instead.
            let _reader =
                std::thread::Builder::new().name("annal-import-read".into()).spawn_scoped(scope, move || {
                    for path in files {
                        if ahead.send(read_file(path, format)).is_err() {
                            break;
                        }
                    }
                });
            for path in files {
                let outcome = match next.recv() {
                    Ok(read) => read.and_then(|read| self.store_read(read)),
                    Err(_) => self.import_file(path, format),
                };
                if !each(path, outcome) {
                    break;
                }
            }
            // Dropping the receiver ends the reader at its next send.
            drop(next);
        });
    }
}

/// A transcript or agent database read and parsed, not yet stored.
struct Read {
    summary: ImportSummary,
    sessions: Vec<ParsedSession>,
}

/// Detects (unless `format` is given) and parses transcript bytes; the store is not touched.
fn parse_bytes(bytes: &[u8], name: &str, format: Option<TranscriptFormat>) -> Result<Read, Error> {
    let format = format
        .or_else(|| detect_format(bytes))
        .ok_or_else(|| Error::UnknownFormat { name: name.to_owned() })?;
    checked(parse_transcript(bytes, format, name), name, format)
}

/// What a parse read, refused when more than half of it is of no kind the format knows (a
/// look-alike), or when none of it is and a part could not be read (a file of another shape
/// read with `--format`: a whole document of the wrong shape, lines that are not the format's).
/// Parts skipped only for a limit (a last line still being written, a line too deep or too
/// large) say nothing of the file's shape, so they alone never refuse it.
fn checked(
    parsed: annal_formats::ParsedTranscript,
    name: &str,
    format: TranscriptFormat,
) -> Result<Read, Error> {
    let misshapen = |skipped: &&annal_formats::Skipped| {
        !matches!(skipped.reason, SkipReason::Truncated | SkipReason::TooDeep | SkipReason::TooLarge { .. })
    };
    let unread = parsed.skipped.iter().filter(misshapen).count();
    let nothing_read = parsed.recognised == 0 && unread > 0;
    if parsed.unrecognised > parsed.recognised || nothing_read {
        let unrecognised = parsed.unrecognised.max(unread);
        let reason = parsed.skipped.iter().find(misshapen);
        return Err(Error::Unrecognised {
            name: name.to_owned(),
            format,
            unrecognised,
            total: unrecognised + parsed.recognised,
            reason: reason.map(ToString::to_string),
        });
    }
    let summary = ImportSummary { format: Some(format), skipped: parsed.skipped, ..ImportSummary::default() };
    Ok(Read { summary, sessions: parsed.sessions })
}

/// Reads the file at `path` as [`Annal::import_file`] takes it (an agent's database or a
/// transcript); the store is not touched.
fn read_file(path: &Path, format: Option<TranscriptFormat>) -> Result<Read, Error> {
    if let Some(reading) = read_agent_store(path)? {
        let summary = ImportSummary {
            agent: Some(reading.agent),
            skipped_rows: reading.skipped,
            ..ImportSummary::default()
        };
        return Ok(Read { summary, sessions: reading.sessions });
    }
    let read =
        |path: &Path| std::fs::read(path).map_err(|source| Error::Io { path: path.to_owned(), source });
    let bytes = read(path)?;
    let detected = format.or_else(|| detect_format(&bytes));
    // A Kimi CLI session's current file is read with the earlier ones Kimi set aside.
    if let Some(rotations) = detected.and_then(|format| kimi_rotations(path, format)) {
        let rotated = rotations.iter().map(|rotation| read(rotation)).collect::<Result<Vec<_>, _>>()?;
        let rotated: Vec<&[u8]> = rotated.iter().map(Vec::as_slice).collect();
        let parsed = parse_kimi_context(&rotated, &bytes, &transcript_stem(path));
        return checked(parsed, &transcript_stem(path), TranscriptFormat::Kimi);
    }
    parse_bytes(&bytes, &transcript_stem(path), detected)
}

/// The transcript files under `folder`, in name order at each level: JSON and JSONL files,
/// aider's `.aider.chat.history.md`, SQLite databases (`.db`) and OpenCode's `storage/` folders
/// (one entry each: a store, not walked into), as `annal import` reads a folder. Each is read
/// with [`Annal::import_file`].
///
/// # Errors
/// What the file system reports for a folder that cannot be read.
pub fn transcript_files(folder: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    walk(folder, &mut files)?;
    Ok(files)
}

/// The files a folder walk reads: JSON and JSONL, aider's Markdown history, and databases.
fn is_transcript_name(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    matches!(path.extension().and_then(|e| e.to_str()), Some("jsonl" | "json" | "db"))
        || name.ends_with(".aider.chat.history.md")
}

fn walk(folder: &Path, files: &mut Vec<PathBuf>) -> io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(folder)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() && is_opencode_storage(&path) {
            files.push(path);
        } else if kind.is_dir() {
            walk(&path, files)?;
        } else if kind.is_file() && is_transcript_name(&path) {
            files.push(path);
        }
    }
    Ok(())
}
