//! Importing a user's existing sessions: transcript bytes (Claude Code, Codex, OpenCode, annal
//! exports) detected, parsed and appended, idempotently, as `annal import` does.

use std::path::Path;

use annal_engine::{detect_format, parse_transcript, ParsedSession, Skipped, Store, TranscriptFormat};

use crate::Error;

/// What one import did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportSummary {
    /// The format the transcript was read as.
    pub format: Option<TranscriptFormat>,
    /// The sessions it held, by name, in the order found.
    pub sessions: Vec<String>,
    /// Records appended now.
    pub records_new: u64,
    /// Records that were already stored (a re-import, or a file that grew since).
    pub records_present: u64,
    /// Records whose entryId another session holds (a resumed session repeats its
    /// predecessor's lines); they stay with that session.
    pub records_elsewhere: u64,
    /// Lines that could not be read, with why; the rest was imported.
    pub skipped: Vec<Skipped>,
}

/// Imports `bytes` read as `format` (detected from the content when `None`). `name` is the file
/// stem, used as the session's name when the transcript does not carry one.
pub(crate) fn import_bytes(
    store: &Store,
    bytes: &[u8],
    name: &str,
    format: Option<TranscriptFormat>,
) -> Result<ImportSummary, Error> {
    let format = format
        .or_else(|| detect_format(bytes))
        .ok_or_else(|| Error::UnknownFormat { name: name.to_owned() })?;
    let parsed = parse_transcript(bytes, format, name);
    let mut summary =
        ImportSummary { format: Some(format), skipped: parsed.skipped, ..ImportSummary::default() };
    for session in parsed.sessions {
        summary.sessions.push(session.name.clone());
        import_session(store, session, &mut summary)?;
    }
    Ok(summary)
}

/// Imports the transcript file at `path` (its stem names a session without an id of its own).
pub(crate) fn import_file(
    store: &Store,
    path: &Path,
    format: Option<TranscriptFormat>,
) -> Result<ImportSummary, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    import_bytes(store, &bytes, &stem, format)
}

/// Loads one parsed session (see [`Store::load_session`]) and counts what it did.
fn import_session(store: &Store, session: ParsedSession, summary: &mut ImportSummary) -> Result<(), Error> {
    let load = store.load_session(session)?;
    summary.records_new += load.appended;
    summary.records_present += load.present;
    summary.records_elsewhere += load.elsewhere;
    Ok(())
}
