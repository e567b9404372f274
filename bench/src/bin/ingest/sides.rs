//! The two sides of the ingest benchmark, each from nothing to search-ready: annal's import
//! through the facade (`Annal::import_files`, as `annal import` calls it), and SQLite with an FTS5 table loaded
//! from the same files with annal's own parsers; and the queries both answer afterwards.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use annal::{Annal, Error, Options, SearchRequest, Sharing};
use annal_bench::loaders::{record_json, INSERT_OR_KEEP};
use annal_bench::sqlite::{NEXT_ORDER, SCHEMA};
use annal_formats::{detect_format, parse_transcript, ParsedSession};
use annal_support::identifiers::{readable, searchable_text};
use anyhow::{ensure, Context as _};
use rusqlite::{params, Connection, TransactionBehavior};

/// What one side's run left behind.
#[derive(Clone, Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) elapsed: Duration,
    pub(crate) records: u64,
    pub(crate) file_bytes: u64,
    pub(crate) disk_bytes: u64,
    /// annal only: the index's segments and bytes.
    pub(crate) segments: usize,
    pub(crate) index_bytes: u64,
}

/// The files both sides read: those a transcript parser claims and reads (what `annal import`
/// stores); the rest are listed so the report can say what was left out.
pub(crate) fn readable_files(folder: &Path) -> anyhow::Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let (mut read, mut left) = (Vec::new(), Vec::new());
    for file in annal::import::transcript_files(folder)
        .with_context(|| format!("cannot read {}", folder.display()))?
    {
        if file.is_file() && parse(&file)?.is_some() {
            read.push(file);
        } else {
            left.push(file);
        }
    }
    ensure!(!read.is_empty(), "no transcript annal reads in {}", folder.display());
    Ok((read, left))
}

/// Reads, detects and parses a transcript as `Annal::import` does, including its refusal of a
/// look-alike (more unrecognised items than recognised).
fn parse(path: &Path) -> anyhow::Result<Option<Vec<ParsedSession>>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let Some(format) = detect_format(&bytes) else { return Ok(None) };
    let parsed = parse_transcript(&bytes, format, &annal::import::transcript_stem(path));
    Ok((parsed.unrecognised <= parsed.recognised).then_some(parsed.sessions))
}

fn sizes(path: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path).map_or((0, 0), |m| (m.len(), m.blocks() * 512))
}

/// annal: open, import every file, wait until everything is searchable, close (the index
/// commits and merges its segments). Timed from open to close.
pub(crate) fn annal(files: &[PathBuf], store: &Path, sharing: Sharing) -> anyhow::Result<Outcome> {
    let started = Instant::now();
    let annal = Annal::open_with(store, &Options { sharing, ..Options::default() })?;
    let mut failure = None;
    annal.import_files(files, None, |file, outcome| {
        let problem = match outcome {
            Ok(summary) if summary.failed.is_empty() => return true,
            Ok(summary) => anyhow::anyhow!("{:?}", summary.failed),
            Err(Error::UnknownFormat { .. } | Error::Unrecognised { .. }) => return true,
            Err(err) => anyhow::Error::from(err),
        };
        failure = Some(problem.context(format!("importing {}", file.display())));
        false
    });
    if let Some(err) = failure {
        return Err(err);
    }
    let behind = annal.catch_up(Duration::from_secs(120), |_, _| {})?;
    ensure!(behind == 0, "the index stayed {behind} positions behind");
    let records = annal.snapshot()?.position_end()?;
    let index = annal.index_folder();
    annal.close()?;
    let elapsed = started.elapsed();
    let (file_bytes, disk_bytes) = sizes(store);
    let segments = std::fs::read_dir(&index)?
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "idx"))
        .count();
    let index_bytes = std::fs::read_dir(&index)?.filter_map(Result::ok).map(|e| sizes(&e.path()).0).sum();
    Ok(Outcome { elapsed, records, file_bytes, disk_bytes, segments, index_bytes })
}

/// The full-text table beside the import benchmark's records table: one contentless row per
/// record, its rowid the record's.
const TEXT_SCHEMA: &str =
    "CREATE VIRTUAL TABLE records_text USING fts5(text, content = '', tokenize = 'unicode61 remove_diacritics 0');";
const INSERT_TEXT: &str = "INSERT INTO records_text (rowid, text) VALUES (?1, ?2)";

/// SQLite: WAL with `synchronous=FULL`, one transaction per file; a row per record (as the
/// import benchmark's) and a contentless FTS5 row per record holding its blocks' text. Timed
/// from open to close (the WAL checkpointed into the file).
pub(crate) fn sqlite(files: &[PathBuf], path: &Path) -> anyhow::Result<Outcome> {
    let started = Instant::now();
    let mut conn = Connection::open(path)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    ensure!(mode.eq_ignore_ascii_case("wal"), "SQLite refused WAL mode (got {mode})");
    conn.execute_batch("PRAGMA synchronous = FULL;")?;
    conn.execute_batch(SCHEMA)?;
    conn.execute_batch(TEXT_SCHEMA)?;
    let mut records = 0;
    for file in files {
        let Some(sessions) = parse(file)? else { continue };
        let txn = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let mut insert = txn.prepare_cached(INSERT_OR_KEEP)?;
            let mut insert_text = txn.prepare_cached(INSERT_TEXT)?;
            for session in sessions {
                let mut next: i64 = txn.query_row(NEXT_ORDER, [&session.name], |row| row.get(0))?;
                for record in &session.records {
                    let role = record.role.as_str();
                    let json = record_json(record);
                    if insert.execute(params![
                        session.name,
                        next,
                        record.entry_id,
                        role,
                        record.timestamp,
                        json
                    ])? == 0
                    {
                        continue;
                    }
                    next += 1;
                    records += 1;
                    let text: Vec<String> =
                        record.blocks.iter().filter_map(searchable_text).map(readable).collect();
                    insert_text.execute(params![txn.last_insert_rowid(), text.join("\n")])?;
                }
            }
        }
        txn.commit()?;
    }
    conn.close().map_err(|(_, err)| err)?;
    let elapsed = started.elapsed();
    let (file_bytes, disk_bytes) = sizes(path);
    Ok(Outcome { elapsed, records, file_bytes, disk_bytes, ..Outcome::default() })
}

/// `count` words to search for, spread from rare to common: lower-case words of 5 to 16 ASCII
/// letters and digits (at least one letter) from the text of every block, as a person reads it,
/// picked by how many sessions hold them (the same list on every run). Fewer when the input has
/// fewer such words.
pub(crate) fn pick_words(files: &[PathBuf], count: usize) -> anyhow::Result<Vec<String>> {
    let mut sessions_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        for session in parse(file)?.unwrap_or_default() {
            for text in session.records.iter().flat_map(|r| r.blocks.iter().filter_map(searchable_text)) {
                for word in readable(text).split(|c: char| !c.is_alphanumeric()) {
                    let fits = (5..=16).contains(&word.len())
                        && word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                        && word.bytes().any(|b| b.is_ascii_lowercase());
                    if fits {
                        sessions_of.entry(word.to_owned()).or_default().insert(session.name.clone());
                    }
                }
            }
        }
    }
    let mut words: Vec<(usize, String)> = sessions_of.into_iter().map(|(w, s)| (s.len(), w)).collect();
    words.sort();
    ensure!(!words.is_empty(), "no words to search for");
    let step = (words.len() / count).max(1);
    Ok(words.into_iter().step_by(step).take(count).map(|(_, w)| w).collect())
}

/// The sessions each system finds for each word; the queries whose answers differ.
pub(crate) fn compare(words: &[String], store: &Path, sqlite: &Path) -> anyhow::Result<Vec<String>> {
    let annal = Annal::open(store)?;
    let conn = Connection::open(sqlite)?;
    let mut found = conn.prepare(
        "SELECT DISTINCT r.session FROM records_text t JOIN records r ON r.rowid = t.rowid \
         WHERE records_text MATCH ?1",
    )?;
    let mut differ = Vec::new();
    for word in words {
        let mut request = SearchRequest::new(word.clone());
        request.limit = 1_000_000;
        request.snippet_chars = 0;
        let by_annal: BTreeSet<String> = annal.search(&request)?.into_iter().map(|hit| hit.session).collect();
        let by_sqlite: BTreeSet<String> =
            found.query_map([format!("\"{word}\"")], |row| row.get(0))?.collect::<Result<_, _>>()?;
        if by_annal != by_sqlite {
            differ.push(format!("{word}: annal {} sessions, SQLite {}", by_annal.len(), by_sqlite.len()));
        }
    }
    annal.close()?;
    Ok(differ)
}
