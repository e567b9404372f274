//! `annal import`: transcripts from real agents (files or folders, recursively) into the store.
//!
//! Bad input never aborts a file: each skipped line is reported as `file:line: reason` and
//! counted, and the rest is imported. Re-importing is a no-op and a grown file adds only its new
//! records, because every record carries a stable entryId and appends are idempotent by it.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use annal_engine::{
    detect_format, parse_transcript, AppendError, Block, ParsedSession, Record, SkipReason, Store,
    TranscriptFormat,
};
use anyhow::{bail, Context};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::location::StoreLocation;
use crate::output::{self, Align, Out, Table};

/// Records per append: large enough to amortise the fsync, small enough to bound memory.
const CHUNK_RECORDS: usize = 2_000;
/// Bytes per append, well under the store's 1 GiB batch limit: a session of many large
/// screenshots must not fail as one oversized batch.
const CHUNK_BYTES: usize = 256 << 20;

#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// Transcript files or folders (searched recursively for .jsonl and .json files)
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The transcripts' format; `auto` detects it from each file's content
    #[arg(long, default_value = "auto", value_parser = ["auto", "claude", "codex", "opencode", "annal"])]
    format: String,
    /// Print the summary as JSON
    #[arg(long)]
    json: bool,
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
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        if meta.is_file() {
            files.push((path.clone(), true));
            continue;
        }
        let mut found = Vec::new();
        walk(path, &mut found).with_context(|| format!("cannot read folder {}", path.display()))?;
        if found.is_empty() {
            bail!("no transcripts (.jsonl or .json files) in {}", path.display());
        }
        files.extend(found.into_iter().map(|file| (file, false)));
    }
    Ok(files)
}

fn walk(folder: &Path, files: &mut Vec<PathBuf>) -> io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(folder)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&path, files)?;
        } else if kind.is_file()
            && matches!(path.extension().and_then(|e| e.to_str()), Some("jsonl" | "json"))
        {
            files.push(path);
        }
    }
    Ok(())
}

pub(crate) fn run(location: &StoreLocation, args: &ImportArgs, out: &mut Out) -> anyhow::Result<()> {
    let files = collect_files(&args.paths)?;
    let forced = TranscriptFormat::parse(&args.format);
    let store = location.open_or_create()?;
    let started = Instant::now();
    let total_bytes: u64 = files.iter().filter_map(|(f, _)| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    let progress = ProgressBar::new(total_bytes);
    progress.set_style(
        ProgressStyle::with_template("{spinner} {bytes}/{total_bytes} {wide_bar} {eta} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut summary = Summary::default();
    for (file, named) in &files {
        let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
        summary.files += 1;
        summary.bytes += bytes.len() as u64;
        progress.set_message(file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
        let Some(format) = forced.or_else(|| detect_format(&bytes)) else {
            summary.files_unrecognised += 1;
            summary.named_unrecognised += u64::from(*named);
            progress.suspend(|| eprintln!("{}: not a transcript annal can read; skipped", file.display()));
            progress.inc(bytes.len() as u64);
            continue;
        };
        let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let parsed = parse_transcript(&bytes, format, &stem);
        for skipped in &parsed.skipped {
            *summary.skipped.entry(reason_label(&skipped.reason)).or_default() += 1;
            progress.suspend(|| eprintln!("{}:{}: {}", file.display(), skipped.line, skipped.reason));
        }
        for session in parsed.sessions {
            if let Err(err) = import_session(&store, session, &mut summary) {
                if store.is_poisoned() {
                    return Err(err.context(format!("importing {}", file.display())));
                }
                summary.sessions_failed += 1;
                progress.suspend(|| eprintln!("{}: {err:#}", file.display()));
            }
        }
        progress.inc(bytes.len() as u64);
    }
    progress.finish_and_clear();
    write_summary(&summary, started.elapsed().as_secs_f64(), args.json, out)?;
    // A file found in a folder may be anything; one the user named was meant to be imported.
    if summary.named_unrecognised > 0 {
        let (n, files) = match summary.named_unrecognised {
            1 => ("1".to_owned(), "file given is"),
            n => (n.to_string(), "files given are"),
        };
        bail!(
            "{n} {files} not a transcript annal can read (see above); \
             --format claude|codex|opencode|annal reads a file as that format"
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

/// Appends one parsed session. Records whose entryId another session already holds (a resumed
/// Claude Code session repeats its predecessor's lines) stay with that session and are counted.
fn import_session(store: &Store, session: ParsedSession, summary: &mut Summary) -> anyhow::Result<()> {
    summary.sessions += 1;
    let name = session.name.clone();
    let snapshot = store.snapshot()?;
    let mut records: Vec<Record> = Vec::with_capacity(session.records.len());
    let mut claims = Vec::with_capacity(session.records.len());
    for (record, claim) in session.records.into_iter().zip(session.claimed_hashes) {
        match snapshot.entry(&record.entry_id)? {
            Some(location) if location.session != name => summary.records_elsewhere += 1,
            _ => {
                records.push(record);
                claims.push(claim);
            }
        }
    }
    drop(snapshot);
    let mut orders = Vec::with_capacity(records.len());
    let mut pending = records.into_iter().peekable();
    while pending.peek().is_some() {
        let chunk = next_chunk(&mut pending, CHUNK_RECORDS, CHUNK_BYTES);
        let count = chunk.len();
        let receipt = store.append(&name, None, chunk).map_err(|e| session_error(&name, e))?;
        summary.records_new += receipt.appended as u64;
        summary.records_present += (count - receipt.appended) as u64;
        orders.extend(receipt.source_orders);
    }
    if orders.is_empty() {
        // A transcript with no records still names a session; create it so it is listed.
        store.append(&name, None, Vec::new()).map_err(|e| session_error(&name, e))?;
    }
    // An annal export carries its hashes: the imported records must reproduce them exactly.
    if claims.iter().any(Option::is_some) {
        let snapshot = store.snapshot()?;
        for (order, claim) in orders.iter().zip(&claims) {
            let Some((hash, prev)) = claim else { continue };
            let guard =
                snapshot.record(&name, *order)?.with_context(|| format!("record {order} vanished"))?;
            let view = guard.view()?;
            if view.hash() != *hash || view.prev_hash() != *prev {
                bail!(
                    "session {name:?}: record {order} ({}) does not match the hash its export claims",
                    view.entry_id()
                );
            }
        }
    }
    Ok(())
}

/// The next records to append together: at most `max_records`, and no more than `max_bytes` of
/// payload unless a single record is larger (it then goes alone; the store's record limit is
/// far above any line an importer reads).
fn next_chunk(
    pending: &mut std::iter::Peekable<impl Iterator<Item = Record>>,
    max_records: usize,
    max_bytes: usize,
) -> Vec<Record> {
    let mut chunk = Vec::new();
    let mut bytes = 0usize;
    while chunk.len() < max_records {
        let Some(next) = pending.peek() else { break };
        let size = payload_bytes(next);
        if !chunk.is_empty() && bytes.saturating_add(size) > max_bytes {
            break;
        }
        bytes = bytes.saturating_add(size);
        chunk.extend(pending.next());
    }
    chunk
}

/// Roughly what a record weighs in an append: its payloads, strings and metadata.
fn payload_bytes(record: &Record) -> usize {
    let blocks: usize = record
        .blocks
        .iter()
        .map(|block| match block {
            Block::Text { text } | Block::Thinking { text } => text.len(),
            Block::ToolCall { call_id, tool, input, target } => {
                call_id.len() + tool.len() + input.len() + target.len()
            }
            Block::ToolResult { call_id, tool, output, .. } => call_id.len() + tool.len() + output.len(),
            Block::Blob { media_type, data } => media_type.len() + data.len(),
        })
        .sum();
    let meta: usize = record.meta.iter().map(|(key, value)| key.len() + value.len()).sum();
    record.entry_id.len() + blocks + meta
}

/// An append error naming the session, once: most engine errors already do.
fn session_error(name: &str, err: AppendError) -> anyhow::Error {
    if err.to_string().contains(&format!("session {name:?}")) {
        err.into()
    } else {
        anyhow::Error::new(err).context(format!("session {name:?}"))
    }
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

#[cfg(test)]
mod tests {
    use annal_engine::Role;

    use super::*;

    #[test]
    fn chunks_are_bounded_by_count_and_bytes() {
        let record = |id: usize, len: usize| Record::text(id.to_string(), Role::User, "x".repeat(len));
        let sizes = [10, 10, 10, 95, 10, 200, 1, 1, 1, 1, 1];
        let mut pending = sizes.iter().enumerate().map(|(id, &len)| record(id, len)).peekable();
        let mut chunks = Vec::new();
        while pending.peek().is_some() {
            chunks.push(
                next_chunk(&mut pending, 4, 100).iter().map(|r| r.entry_id.clone()).collect::<Vec<_>>(),
            );
        }
        // Byte-bound, a record larger than the bound alone, then count-bound.
        assert_eq!(
            chunks,
            [vec!["0", "1", "2"], vec!["3"], vec!["4"], vec!["5"], vec!["6", "7", "8", "9"], vec!["10"]]
        );
    }
}
