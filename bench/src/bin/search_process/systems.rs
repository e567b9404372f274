//! The two systems as whole processes, on the same input: `annal import` of the transcripts
//! (journal and index in one command), then `annal history search`; SQLite FTS5 tables of the
//! same blocks, one with the default `unicode61` tokenizer and one with `trigram` (what a user
//! adds for identifiers and substrings), queried with the `sqlite3` shell. Both print the top
//! 10 with a snippet, as JSON.

use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use annal_bench::records::to_json;
use annal_support::identifiers::searchable_text;
use anyhow::Context as _;
use rusqlite::{params, Connection};
use serde_json::Value;

use crate::data::Dataset;
use crate::oracle::BlockId;
use crate::process::run_once;
use crate::queries::ProcessQuery;

/// Hits each system returns.
pub(crate) const TOP: usize = 10;

/// Writes each session as an annal JSONL transcript under `folder`; returns the bytes written.
pub(crate) fn write_inputs(folder: &Path, data: &Dataset) -> anyhow::Result<u64> {
    std::fs::create_dir_all(folder)?;
    let mut bytes = 0;
    for (session, records) in &data.sessions {
        let path = folder.join(format!("{session}.jsonl"));
        let mut out = BufWriter::new(std::fs::File::create(&path)?);
        let header = serde_json::json!({"format": "annal-jsonl", "version": 1, "session": session});
        writeln!(out, "{header}")?;
        for record in records {
            writeln!(out, "{}", to_json(record))?;
        }
        out.flush()?;
        bytes += std::fs::metadata(&path)?.len();
    }
    Ok(bytes)
}

/// annal: the binary and its store.
pub(crate) struct Annal {
    pub(crate) binary: PathBuf,
    pub(crate) store: PathBuf,
}

impl Annal {
    /// `annal import` of every transcript in `input`, timed: loading and indexing.
    pub(crate) fn import(&self, input: &Path) -> anyhow::Result<Duration> {
        let started = Instant::now();
        run_once(
            Command::new(&self.binary).arg("--db").arg(&self.store).arg("import").arg(input).arg("--json"),
        )?;
        Ok(started.elapsed())
    }

    pub(crate) fn search(&self, query: &ProcessQuery) -> Command {
        let mut command = Command::new(&self.binary);
        command.arg("--db").arg(&self.store).args(["history", "search", "--json", "--limit", "10"]);
        if let Some(session) = &query.session {
            command.args(["--session", session]);
        }
        command.arg("--").arg(query.annal());
        command
    }

    pub(crate) fn hits(stdout: &[u8]) -> anyhow::Result<Vec<BlockId>> {
        let hits: Vec<Value> =
            serde_json::from_slice(stdout).context("annal's output is not a JSON array")?;
        Ok(hits
            .iter()
            .map(|hit| {
                let text = |key: &str| hit[key].as_str().unwrap_or_default().to_owned();
                (text("session"), text("entryId"), hit["blockIndex"].as_u64().unwrap_or(0) as usize)
            })
            .collect())
    }
}

/// An FTS5 table in its own database file.
pub(crate) struct Fts {
    pub(crate) file: PathBuf,
    pub(crate) tokenizer: &'static str,
}

impl Fts {
    /// Creates the table and loads every searchable block in one transaction (SQLite's default
    /// rollback journal and full sync, and a 256 MiB page cache as annal's store has); returns
    /// the time.
    pub(crate) fn load(&self, data: &Dataset) -> anyhow::Result<Duration> {
        let started = Instant::now();
        let mut db = Connection::open(&self.file)?;
        db.execute_batch(&format!(
            "PRAGMA cache_size = -262144; \
             CREATE VIRTUAL TABLE blocks USING fts5(session, entry UNINDEXED, text, tokenize = '{}');",
            self.tokenizer
        ))?;
        let tx = db.transaction()?;
        {
            let mut insert = tx.prepare("INSERT INTO blocks (session, entry, text) VALUES (?1, ?2, ?3)")?;
            for (session, records) in &data.sessions {
                for record in records {
                    for (index, block) in record.blocks.iter().enumerate() {
                        if let Some(text) = searchable_text(block) {
                            insert.execute(params![session, format!("{}#{index}", record.entry_id), text])?;
                        }
                    }
                }
            }
        }
        tx.commit()?;
        // Merged into one b-tree per table, as annal merges after a rebuild: the fastest form.
        db.execute_batch("INSERT INTO blocks(blocks) VALUES('optimize');")?;
        Ok(started.elapsed())
    }

    pub(crate) fn bytes(&self) -> u64 {
        std::fs::metadata(&self.file).map_or(0, |m| m.len())
    }

    pub(crate) fn search(&self, query: &ProcessQuery) -> Command {
        let sql = format!(
            "SELECT session, entry, snippet(blocks, 2, '**', '**', '…', 16) AS snippet FROM blocks \
             WHERE blocks MATCH '{}' ORDER BY rank LIMIT {TOP};",
            query.fts().replace('\'', "''")
        );
        let mut command = Command::new("sqlite3");
        command.args(["-readonly", "-json"]).arg(&self.file).arg(sql);
        command
    }

    pub(crate) fn hits(stdout: &[u8]) -> anyhow::Result<Vec<BlockId>> {
        // The shell prints nothing at all for no rows.
        if stdout.iter().all(u8::is_ascii_whitespace) {
            return Ok(Vec::new());
        }
        let rows: Vec<Value> =
            serde_json::from_slice(stdout).context("sqlite3's output is not a JSON array")?;
        Ok(rows
            .iter()
            .map(|row| {
                let entry = row["entry"].as_str().unwrap_or_default();
                let (id, index) = entry.rsplit_once('#').unwrap_or((entry, "0"));
                (
                    row["session"].as_str().unwrap_or_default().to_owned(),
                    id.to_owned(),
                    index.parse().unwrap_or(0),
                )
            })
            .collect())
    }
}
