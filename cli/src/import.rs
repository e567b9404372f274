//! `annal import`: transcripts from real agents, and the databases of those that keep their
//! sessions in SQLite (files or folders, recursively), into the store.
//!
//! Bad input never aborts a file: each skipped line is reported as `file:line: reason` (a
//! database's row as `file: row …: reason`) and counted, and the rest is imported. Re-importing is a no-op and a grown file adds only its new
//! records, because every record carries a stable entryId and appends are idempotent by it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use annal::import::{ImportSummary, SkipReason, TranscriptFormat};
use annal::{Annal, Error};
use anyhow::{bail, Context};
use clap::builder::PossibleValuesParser;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::output::{self, Align, Out, Table};
use crate::store::StoreLocation;

#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// Transcript files, agent databases or folders (searched recursively for .jsonl, .json,
    /// aider's .md logs, .db databases and OpenCode's storage/ folder)
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The transcripts' format; `auto` detects it from each file's content
    #[arg(long, default_value = "auto", value_parser = PossibleValuesParser::new(format_values()))]
    format: String,
    /// Print the summary as JSON
    #[arg(long)]
    json: bool,
}

/// `--format`'s values: `auto`, then every format the agent registry lists.
fn format_values() -> Vec<&'static str> {
    let formats = TranscriptFormat::in_agent_order().into_iter().map(TranscriptFormat::name);
    std::iter::once("auto").chain(formats).collect()
}

/// What an import did, for the summary table.
#[derive(Debug, Default)]
struct Summary {
    files: u64,
    files_unrecognised: u64,
    /// Unrecognised files the user named themselves (not found in a folder): an error at the end.
    named_unrecognised: u64,
    sessions: u64,
    records_new: u64,
    records_present: u64,
    records_elsewhere: u64,
    records_revised: u64,
    sessions_failed: u64,
    skipped: BTreeMap<&'static str, u64>,
    bytes: u64,
}

fn reason_label(reason: &SkipReason) -> &'static str {
    match reason {
        SkipReason::Comment => "comment",
        SkipReason::NotUtf8 { .. } => "not UTF-8",
        SkipReason::NotJson { .. } => "not JSON",
        SkipReason::TooDeep => "nested too deep",
        SkipReason::Truncated => "truncated",
        SkipReason::TooLarge { .. } => "too large",
        SkipReason::Invalid(_) => "invalid",
        _ => "other",
    }
}

/// Every transcript file under `paths`, in a stable order, each with whether it was named
/// itself rather than found in a folder; a missing path is an error.
fn collect_files(paths: &[PathBuf]) -> anyhow::Result<Vec<(PathBuf, bool)>> {
    if paths.is_empty() {
        bail!("import needs files or folders to read; `annal sync` finds every agent's sessions itself");
    }
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        if meta.is_file() {
            files.push((path.clone(), true));
            continue;
        }
        let found = annal::import::transcript_files(path)
            .with_context(|| format!("cannot read folder {}", path.display()))?;
        if found.is_empty() {
            // Worded as the Python package words it (databases, when found, are read like files).
            bail!("no transcripts (.jsonl, .json or .aider.chat.history.md files) in {}", path.display());
        }
        files.extend(found.into_iter().map(|file| (file, false)));
    }
    Ok(files)
}

pub(crate) fn run(location: &StoreLocation, args: &ImportArgs, out: &mut Out) -> anyhow::Result<()> {
    let files = collect_files(&args.paths)?;
    let forced = TranscriptFormat::parse(&args.format);
    let store = location.open_or_create()?;
    let started = Instant::now();
    let indexing = open_index(&store, location);
    let total_bytes: u64 = files.iter().map(|(file, _)| size_of(file)).sum();
    let progress = ProgressBar::new(total_bytes);
    progress.set_style(
        ProgressStyle::with_template("{spinner} {bytes}/{total_bytes} {wide_bar} {eta} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let summary = import_all(&store, &files, forced, &progress)?;
    if indexing {
        if let Err(err) = crate::store::catch_up(&store, location, Some(progress.clone())) {
            progress.suspend(|| eprintln!("annal: {err:#}; the records are imported, searches index them"));
        }
    }
    progress.finish_and_clear();
    write_summary(&summary, started.elapsed().as_secs_f64(), args.json, out)?;
    fail_if_incomplete(&summary)
}

/// Opens the search index, saying whether it is open.
///
/// The index follows the journal while the files load (its own thread), so the first search after
/// an import starts at once. An index that cannot be opened costs the import nothing: it is named,
/// and every search reports it until it is fixed.
fn open_index(store: &Annal, location: &StoreLocation) -> bool {
    match store.index_status() {
        Ok(_) => true,
        Err(err) => {
            eprintln!(
                "annal: the search index of {location} cannot be opened, so nothing was indexed: {err}"
            );
            false
        }
    }
}

/// Imports `files` (each with whether the user named it), reporting what each skipped; stops at
/// the first failure that is not a file of no known format.
fn import_all(
    store: &Annal,
    files: &[(PathBuf, bool)],
    forced: Option<TranscriptFormat>,
    progress: &ProgressBar,
) -> anyhow::Result<Summary> {
    let mut summary = Summary::default();
    let paths: Vec<PathBuf> = files.iter().map(|(file, _)| file.clone()).collect();
    let mut failure = None;
    let mut named = files.iter().map(|(_, named)| *named);
    store.import_files(&paths, forced, |file, imported| {
        let named = named.next().unwrap_or(false);
        let size = size_of(file);
        summary.files += 1;
        summary.bytes += size;
        progress.set_message(file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
        let imported = match imported {
            Ok(imported) => imported,
            Err(err @ (Error::UnknownFormat { .. } | Error::Unrecognised { .. } | Error::Source(_))) => {
                summary.files_unrecognised += 1;
                summary.named_unrecognised += u64::from(named);
                let line = unrecognised_line(file, err);
                progress.suspend(|| eprintln!("{line}; skipped, nothing stored"));
                progress.inc(size);
                return true;
            }
            Err(err) => {
                failure = Some(anyhow::Error::from(err).context(format!("importing {}", file.display())));
                return false;
            }
        };
        summary.add(&imported);
        report_skipped(progress, file, &imported);
        progress.inc(size);
        true
    });
    match failure {
        Some(err) => Err(err),
        None => Ok(summary),
    }
}

/// The line that says why `file` was not read as a transcript.
fn unrecognised_line(file: &Path, err: Error) -> String {
    match err {
        Error::Unrecognised { format, unrecognised, total, reason, .. } => format!(
            "{}: read as {format}, {unrecognised} of its {total} items are of no kind {format} writes{}",
            file.display(),
            reason.map(|reason| format!(" (first {reason})")).unwrap_or_default()
        ),
        // A database's own message names it (and may already say nothing was stored).
        Error::Source(source) => source.to_string().trim_end_matches("; nothing was stored").to_owned(),
        _ => format!("{}: not a transcript annal can read", file.display()),
    }
}

fn report_skipped(progress: &ProgressBar, file: &Path, imported: &ImportSummary) {
    for skipped in &imported.skipped {
        progress.suspend(|| eprintln!("{}:{}: {}", file.display(), skipped.line, skipped.reason));
    }
    for row in &imported.skipped_rows {
        progress.suspend(|| eprintln!("{}: {row}", file.display()));
    }
    for (_, err) in &imported.failed {
        progress.suspend(|| eprintln!("{}: {err:#}", file.display()));
    }
}

/// Fails when a file the user named could not be read, or a session could not be imported.
fn fail_if_incomplete(summary: &Summary) -> anyhow::Result<()> {
    // A file found in a folder may be anything; one the user named was meant to be imported.
    if summary.named_unrecognised > 0 {
        let (n, files) = match summary.named_unrecognised {
            1 => ("1".to_owned(), "file given is"),
            n => (n.to_string(), "files given are"),
        };
        let formats: Vec<&str> =
            TranscriptFormat::in_agent_order().into_iter().map(TranscriptFormat::name).collect();
        bail!(
            "{n} {files} not a transcript annal can read (see above); --format {} reads a file as that format",
            formats.join("|")
        );
    }
    if summary.sessions_failed > 0 {
        bail!(
            "{} of {} sessions could not be imported (see above)",
            summary.sessions_failed,
            summary.sessions
        );
    }
    Ok(())
}

impl Summary {
    /// Counts what importing one file did.
    fn add(&mut self, imported: &ImportSummary) {
        self.sessions += imported.sessions.len() as u64;
        self.sessions_failed += imported.failed.len() as u64;
        self.records_new += imported.records_new;
        self.records_present += imported.records_present;
        self.records_elsewhere += imported.records_elsewhere;
        self.records_revised += imported.records_revised;
        for skipped in &imported.skipped {
            *self.skipped.entry(reason_label(&skipped.reason)).or_default() += 1;
        }
        if !imported.skipped_rows.is_empty() {
            *self.skipped.entry("database row").or_default() += imported.skipped_rows.len() as u64;
        }
    }
}

/// How many bytes a file holds, for progress; a folder (OpenCode's storage) counts as none.
fn size_of(path: &Path) -> u64 {
    std::fs::metadata(path).ok().filter(|meta| meta.is_file()).map_or(0, |meta| meta.len())
}

fn write_summary(summary: &Summary, seconds: f64, json: bool, out: &mut Out) -> anyhow::Result<()> {
    if json {
        let value = json!({
            "files": summary.files,
            "filesUnrecognised": summary.files_unrecognised,
            "sessions": summary.sessions,
            "sessionsFailed": summary.sessions_failed,
            "recordsNew": summary.records_new,
            "recordsAlreadyPresent": summary.records_present,
            "recordsInOtherSessions": summary.records_elsewhere,
            "recordsRevised": summary.records_revised,
            "skippedLines": summary.skipped,
            "bytes": summary.bytes,
            "seconds": seconds,
        });
        output::write_json_pretty(out, &value)?;
        return Ok(());
    }
    let mut table = Table::new(&[("import", Align::Left), ("", Align::Right)]);
    table.row(vec!["files".into(), output::count(summary.files)]);
    if summary.files_unrecognised > 0 {
        table.row(vec!["files not recognised".into(), output::count(summary.files_unrecognised)]);
    }
    table.row(vec!["sessions".into(), output::count(summary.sessions)]);
    table.row(vec!["records imported".into(), output::count(summary.records_new)]);
    table.row(vec!["records already present".into(), output::count(summary.records_present)]);
    if summary.records_revised > 0 {
        table.row(vec![
            "records changed since stored, kept as revisions".into(),
            output::count(summary.records_revised),
        ]);
    }
    if summary.records_elsewhere > 0 {
        table.row(vec!["records kept by another session".into(), output::count(summary.records_elsewhere)]);
    }
    let skipped: u64 = summary.skipped.values().sum();
    table.row(vec!["lines skipped".into(), output::count(skipped)]);
    for (reason, n) in &summary.skipped {
        table.row(vec![format!("  {reason}"), output::count(*n)]);
    }
    table.row(vec!["bytes read".into(), output::bytes(summary.bytes)]);
    table.row(vec!["seconds".into(), format!("{seconds:.2}")]);
    table.write(out, "")?;
    out.flush()?;
    Ok(())
}
