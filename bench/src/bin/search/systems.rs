//! The three systems the search benchmark compares, loaded with the same data set:
//! annal's index; SQLite FTS5 (`bm25()` ranking, `snippet()`); and a full scan of the same
//! records as JSONL files, one per session.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use annal_bench::records::to_json;
use annal_engine::{Record, Role, Sharing, Store, StoreOptions};
use annal_query::{IndexOptions, SearchIndex, SearchRequest};
use annal_support::identifiers::searchable_texts;
use anyhow::Context as _;
use rusqlite::{params, Connection};
use serde_json::Value;

use crate::data::{Class, Dataset, Query};

/// Hits per query, with snippets, on every system.
pub(crate) const TOP: usize = 10;

/// annal: the data set appended to a store, then its index built from the journal.
pub(crate) struct AnnalSide {
    pub(crate) store: Arc<Store>,
    pub(crate) index: SearchIndex,
    pub(crate) index_time: Duration,
    pub(crate) index_bytes: u64,
}

impl AnnalSide {
    pub(crate) fn load(dir: &Path, data: &Dataset) -> anyhow::Result<AnnalSide> {
        let options = StoreOptions { sharing: Sharing::Exclusive, ..StoreOptions::default() };
        let store = Arc::new(Store::open(dir.join("annal.redb"), options)?);
        for (session, records) in &data.sessions {
            for chunk in records.chunks(1_000) {
                store.append(session, None, chunk.to_vec())?;
            }
        }
        let index_options = IndexOptions::default();
        let started = Instant::now();
        SearchIndex::rebuild(&store, &index_options, &mut |_, _| {})?;
        let index_time = started.elapsed();
        let index = SearchIndex::open(Arc::clone(&store), index_options)?;
        index.wait_searchable(Duration::from_secs(3_600))?;
        let index_bytes = index.size_bytes()?;
        Ok(AnnalSide { store, index, index_time, index_bytes })
    }

    /// The top hits with snippets; returns how many.
    pub(crate) fn search(&self, query: &Query) -> anyhow::Result<usize> {
        let mut request = SearchRequest::new(query.annal());
        request.session = query.session.clone();
        request.limit = TOP;
        Ok(self.index.search(&request)?.len())
    }

    /// Durable-to-searchable lag: single-record appends every `every`, each timed from the
    /// moment `append` returned (durable) to the moment the index reports it searchable.
    pub(crate) fn lag(&self, appends: usize, every: Duration) -> anyhow::Result<Vec<Duration>> {
        let pending: Arc<Mutex<Vec<(u64, Instant)>>> = Arc::new(Mutex::new(Vec::new()));
        let lags = Arc::new(Mutex::new(Vec::new()));
        let done = Arc::new(AtomicBool::new(false));
        std::thread::scope(|scope| -> anyhow::Result<()> {
            let (pending_w, lags_w, done_w) = (Arc::clone(&pending), Arc::clone(&lags), Arc::clone(&done));
            let index = &self.index;
            scope.spawn(move || loop {
                let searchable = index.status().searchable;
                let now = Instant::now();
                if let (Ok(mut pending), Ok(mut lags)) = (pending_w.lock(), lags_w.lock()) {
                    pending.retain(|(target, at)| {
                        let reached = *target <= searchable;
                        if reached {
                            lags.push(now - *at);
                        }
                        !reached
                    });
                    if done_w.load(Ordering::Acquire) && pending.is_empty() {
                        return;
                    }
                }
                std::thread::sleep(Duration::from_micros(500));
            });
            for i in 0..appends {
                let started = Instant::now();
                let record =
                    Record::text(format!("lag-{i}"), Role::Assistant, format!("lag probe {i} reached"));
                self.store.append("lag-probe", None, vec![record])?;
                let target = self.store.durable_position().current();
                if let Ok(mut pending) = pending.lock() {
                    pending.push((target, Instant::now()));
                }
                std::thread::sleep(every.saturating_sub(started.elapsed()));
            }
            done.store(true, Ordering::Release);
            Ok(())
        })?;
        let lags = lags.lock().map(|l| l.clone()).unwrap_or_default();
        Ok(lags)
    }
}

/// SQLite FTS5: one row per block, `unicode61` tokens (the default a user gets), the block's
/// session, entryId, index and role unindexed beside the text.
pub(crate) struct Fts {
    connection: Connection,
    pub(crate) index_time: Duration,
    pub(crate) index_bytes: u64,
    pub(crate) file_bytes: u64,
}

const FTS_SCHEMA: &str = "
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE VIRTUAL TABLE blocks USING fts5(session UNINDEXED, entry_id UNINDEXED, block UNINDEXED, role UNINDEXED, text);
";
const FTS_TOP: &str = "SELECT entry_id, block, bm25(blocks), snippet(blocks, 4, '[', ']', '…', 16)
    FROM blocks WHERE blocks MATCH ?1 ORDER BY rank LIMIT 10";
const FTS_TOP_IN: &str = "SELECT entry_id, block, bm25(blocks), snippet(blocks, 4, '[', ']', '…', 16)
    FROM blocks WHERE blocks MATCH ?1 AND session = ?2 ORDER BY rank LIMIT 10";

impl Fts {
    pub(crate) fn load(dir: &Path, data: &Dataset) -> anyhow::Result<Fts> {
        let path = dir.join("fts.sqlite");
        let mut connection = Connection::open(&path)?;
        connection.execute_batch(FTS_SCHEMA)?;
        let started = Instant::now();
        let txn = connection.transaction()?;
        {
            let mut insert = txn.prepare(
                "INSERT INTO blocks (session, entry_id, block, role, text) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for (session, records) in &data.sessions {
                for record in records {
                    for (block, text) in searchable_texts(record).enumerate() {
                        insert.execute(params![
                            session,
                            record.entry_id,
                            block as i64,
                            record.role.as_str(),
                            text
                        ])?;
                    }
                }
            }
        }
        txn.commit()?;
        // What a careful user does after a bulk load: merge the index b-trees into one.
        connection.execute("INSERT INTO blocks(blocks) VALUES('optimize')", [])?;
        let index_time = started.elapsed();
        let index_bytes: i64 =
            connection
                .query_row("SELECT COALESCE(SUM(LENGTH(block)), 0) FROM blocks_data", [], |row| row.get(0))?;
        connection.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
        let file_bytes =
            annal_bench::files_bytes(&[path.clone(), PathBuf::from(format!("{}-wal", path.display()))])?;
        Ok(Fts { connection, index_time, index_bytes: index_bytes.max(0) as u64, file_bytes })
    }

    /// The FTS5 query for `query`: each identifier or word quoted (so `-`, `/`, `.` are not
    /// syntax), a phrase as one quoted string.
    fn match_text(query: &Query) -> String {
        let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        match query.class {
            Class::Phrase => quote(&query.terms.join(" ")),
            _ => query.terms.iter().map(|t| quote(t)).collect::<Vec<_>>().join(" "),
        }
    }

    /// The top hits with snippets; returns how many.
    pub(crate) fn search(&self, query: &Query) -> anyhow::Result<usize> {
        let text = Fts::match_text(query);
        let row = |row: &rusqlite::Row<'_>| -> rusqlite::Result<(String, i64, f64, String)> {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        };
        let hits = match &query.session {
            None => self.connection.prepare_cached(FTS_TOP)?.query_map(params![text], row)?.count(),
            Some(session) => {
                self.connection.prepare_cached(FTS_TOP_IN)?.query_map(params![text, session], row)?.count()
            }
        };
        Ok(hits)
    }
}

/// The same records as JSONL files, one per session, scanned in full for every query.
pub(crate) struct Scan {
    files: HashMap<String, PathBuf>,
}

impl Scan {
    pub(crate) fn write(dir: &Path, data: &Dataset) -> anyhow::Result<Scan> {
        let folder = dir.join("jsonl");
        std::fs::create_dir_all(&folder)?;
        let mut files = HashMap::new();
        for (n, (session, records)) in data.sessions.iter().enumerate() {
            let path = folder.join(format!("{n:05}.jsonl"));
            let mut out = BufWriter::new(std::fs::File::create(&path)?);
            for record in records {
                writeln!(out, "{}", to_json(record))?;
            }
            out.flush()?;
            files.insert(session.clone(), path);
        }
        Ok(Scan { files })
    }

    /// Reads and parses every line of the session's file (or of all files), scores each block
    /// by how often the query occurs in it (all words must), keeps the top hits and cuts a
    /// snippet around the first match of each.
    pub(crate) fn search(&self, query: &Query) -> anyhow::Result<usize> {
        let needles: Vec<String> = match query.class {
            Class::Phrase => vec![query.terms.join(" ").to_lowercase()],
            _ => query.terms.iter().map(|t| t.to_lowercase()).collect(),
        };
        let files: Vec<&PathBuf> = match &query.session {
            Some(session) => self.files.get(session).into_iter().collect(),
            None => self.files.values().collect(),
        };
        let mut top: Vec<(usize, String, usize, String)> = Vec::new();
        for path in files {
            let reader =
                BufReader::new(std::fs::File::open(path).with_context(|| path.display().to_string())?);
            for line in reader.lines() {
                let record: Value = serde_json::from_str(&line?)?;
                let entry = record.get("entryId").and_then(Value::as_str).unwrap_or_default();
                let blocks = record.get("blocks").and_then(Value::as_array).cloned().unwrap_or_default();
                for (index, block) in blocks.iter().enumerate() {
                    let text = ["text", "output", "input"]
                        .iter()
                        .find_map(|k| block.get(*k).and_then(Value::as_str));
                    let Some(text) = text else { continue };
                    let lower = text.to_lowercase();
                    let counts: Vec<usize> =
                        needles.iter().map(|n| lower.matches(n.as_str()).count()).collect();
                    if counts.contains(&0) {
                        continue;
                    }
                    top.push((counts.iter().sum(), entry.to_owned(), index, lower));
                    if top.len() > 4 * TOP {
                        top.sort_by_key(|hit| std::cmp::Reverse(hit.0));
                        top.truncate(TOP);
                    }
                }
            }
        }
        top.sort_by_key(|hit| std::cmp::Reverse(hit.0));
        top.truncate(TOP);
        let snippets: Vec<String> = top
            .iter()
            .map(|(_, _, _, text)| {
                let at = text.find(needles[0].as_str()).unwrap_or(0);
                let start =
                    (0..=at.saturating_sub(40)).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
                let end = (start + 160).min(text.len());
                let end = (end..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
                text[start..end].replace('\n', " ")
            })
            .collect();
        Ok(snippets.len())
    }
}
