//! `Store.import_paths`: transcript files, and the transcript files under folders, imported one
//! by one as `annal import` does, with one summary for all of them.

use std::path::{Path, PathBuf};

use annal::import::{ImportSummary, TranscriptFormat};
use annal::{Annal, Error};
use serde_json::{json, Value};

/// Why `import_paths` stopped.
#[derive(Debug)]
pub(crate) enum ImportFailure {
    /// Reading a file or storing it failed.
    Store(Error),
    /// A folder named holds no transcript file.
    Empty(PathBuf),
}

impl From<Error> for ImportFailure {
    fn from(err: Error) -> ImportFailure {
        ImportFailure::Store(err)
    }
}

/// Imports every file named and every transcript file under every folder named, reading the
/// next file while one is stored. A path that does not exist and a folder with no transcript
/// file are errors before anything is imported; a file named itself that cannot be read or is
/// in no known format is an error (the files before it stay imported); one found in a folder
/// in no known format is listed under `unrecognised` and the rest go on.
pub(crate) fn import_paths(
    annal: &Annal,
    paths: &[PathBuf],
    format: Option<TranscriptFormat>,
) -> Result<Value, ImportFailure> {
    let mut files = Vec::new();
    let mut named = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|source| Error::Io { path: path.clone(), source })?;
        if meta.is_file() {
            files.push(path.clone());
            named.push(true);
            continue;
        }
        let found = annal::import::transcript_files(path)
            .map_err(|source| Error::Io { path: path.clone(), source })?;
        if found.is_empty() {
            return Err(ImportFailure::Empty(path.clone()));
        }
        named.extend(found.iter().map(|_| false));
        files.extend(found);
    }
    let mut done = Vec::new();
    let mut unrecognised = Vec::new();
    let mut failure = None;
    let mut named = named.into_iter();
    annal.import_files(&files, format, |file, outcome| {
        let named = named.next().unwrap_or(true);
        match outcome {
            Ok(summary) => done.push((Some(file.to_path_buf()), summary)),
            Err(Error::UnknownFormat { .. } | Error::Unrecognised { .. }) if !named => {
                unrecognised.push(file.to_path_buf());
            }
            Err(other) => {
                failure = Some(other);
                return false;
            }
        }
        true
    });
    match failure {
        Some(err) => Err(err.into()),
        None => Ok(summary_json(&done, &unrecognised)),
    }
}

/// What imports did, summed: files, sessions by name, record counts, lines skipped, sessions
/// that failed (each with its one-line error) and files in no known format.
pub(crate) fn summary_json(done: &[(Option<PathBuf>, ImportSummary)], unrecognised: &[PathBuf]) -> Value {
    let sum = |pick: fn(&ImportSummary) -> u64| done.iter().map(|(_, s)| pick(s)).sum::<u64>();
    let mut sessions = Vec::new();
    let mut failed = Vec::new();
    let mut skipped = Vec::new();
    for (path, summary) in done {
        sessions.extend(summary.sessions.iter().cloned());
        for (session, err) in &summary.failed {
            failed.push(json!({"session": session, "error": annal::error::message(err)}));
        }
        for line in &summary.skipped {
            skipped.push(json!({"path": path.as_deref().map(Path::display).map(|p| p.to_string()), "line": line.line, "reason": line.reason.to_string()}));
        }
        // A database's unreadable parts (a row, a message) name themselves; there is no line.
        for row in &summary.skipped_rows {
            skipped.push(json!({"path": path.as_deref().map(Path::display).map(|p| p.to_string()), "line": null, "reason": row}));
        }
    }
    json!({
        "files": done.len(),
        "formats": done.iter().filter_map(|(_, s)| s.format.map(|f| f.name())).collect::<Vec<_>>(),
        "agents": done.iter().filter_map(|(_, s)| s.agent.map(|a| a.name())).collect::<Vec<_>>(),
        "sessions": sessions,
        "recordsNew": sum(|s| s.records_new),
        "recordsPresent": sum(|s| s.records_present),
        "recordsElsewhere": sum(|s| s.records_elsewhere),
        "recordsRevised": sum(|s| s.records_revised),
        "skipped": skipped,
        "failed": failed,
        "unrecognised": unrecognised,
    })
}
