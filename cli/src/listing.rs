//! `annal sessions` and `annal stats`: what a store holds, as a table or as JSON.

use std::io::Write;

use annal::snapshot::TableSize;
use annal::{SessionInfo, Snapshot};
use anyhow::Context;
use clap::Args;
use serde_json::{json, Value};

use crate::output::{bytes, count, write_json_pretty, write_pretty, Align, Out, Table};
use crate::store::StoreLocation;

// Arguments of `annal sessions`.
#[derive(Debug, Args)]
pub(crate) struct SessionsArgs {
    /// A JSON array of objects: name, records, parent, forkAt, head.
    #[arg(long)]
    json: bool,
}

// Arguments of `annal stats`.
#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    /// A JSON object: store, fileBytes, sessions, records, blobs, tables.
    #[arg(long)]
    json: bool,
}

/// Lists every session.
pub(crate) fn sessions(store: &StoreLocation, args: &SessionsArgs, out: &mut Out) -> anyhow::Result<()> {
    let handle = store.open_reading()?;
    let snapshot = store.snapshot(&handle)?;
    let sessions = snapshot.sessions().with_context(|| format!("cannot list the sessions of {store}"))?;
    if args.json {
        write_pretty(out, &annal::json::Json::array(sessions.iter().map(annal::json::session)))?;
        return Ok(());
    }
    if sessions.is_empty() {
        writeln!(out, "no sessions in {store}")?;
        return Ok(());
    }
    write_sessions(out, &sessions, "")?;
    Ok(())
}

/// The readable session table.
pub(crate) fn write_sessions(
    out: &mut impl Write,
    sessions: &[SessionInfo],
    indent: &str,
) -> std::io::Result<()> {
    let mut table = Table::new(&[
        ("SESSION", Align::Left),
        ("RECORDS", Align::Right),
        ("FORKED FROM", Align::Left),
        ("AT", Align::Right),
    ]);
    for info in sessions {
        table.row(vec![
            info.name.clone(),
            count(info.len),
            info.parent.clone().unwrap_or_default(),
            info.fork_at.map(count).unwrap_or_default(),
        ]);
    }
    table.write(out, indent)
}

/// What `stats` reports.
#[derive(Debug)]
pub(crate) struct Stats {
    pub(crate) file_bytes: u64,
    pub(crate) sessions: u64,
    pub(crate) tables: Vec<TableSize>,
}

impl Stats {
    /// Gathers the counts from one snapshot.
    pub(crate) fn gather(store: &StoreLocation, snapshot: &Snapshot) -> anyhow::Result<Stats> {
        let tables = snapshot.table_sizes().with_context(|| format!("cannot measure {store}"))?;
        let sessions = snapshot.sessions().with_context(|| format!("cannot list the sessions of {store}"))?;
        let file_bytes = std::fs::metadata(store.path())
            .with_context(|| format!("cannot read the size of {store}"))?
            .len();
        Ok(Stats { file_bytes, sessions: sessions.len() as u64, tables })
    }

    /// Entries of one table (0 if the engine does not report it).
    pub(crate) fn entries(&self, table: &str) -> u64 {
        self.tables.iter().find(|t| t.table == table).map_or(0, |t| t.entries)
    }

    fn json(&self, store: &StoreLocation) -> Value {
        let tables: Vec<Value> = self
            .tables
            .iter()
            .map(|t| json!({"table": t.table, "entries": t.entries, "storedBytes": t.stored_bytes}))
            .collect();
        json!({
            "store": store.path().display().to_string(),
            "fileBytes": self.file_bytes,
            "sessions": self.sessions,
            "records": self.entries("journal"),
            "blobs": self.entries("blobs"),
            "tables": tables,
        })
    }

    /// The readable report; lines start with `indent`.
    pub(crate) fn write(&self, out: &mut impl Write, indent: &str) -> std::io::Result<()> {
        writeln!(out, "{indent}sessions  {}", count(self.sessions))?;
        writeln!(
            out,
            "{indent}records   {} (stored once; a fork reads its parent's)",
            count(self.entries("journal"))
        )?;
        writeln!(
            out,
            "{indent}blobs     {} (large payloads, stored once by hash)",
            count(self.entries("blobs"))
        )?;
        writeln!(out, "{indent}file      {}", bytes(self.file_bytes))?;
        let mut table =
            Table::new(&[("TABLE", Align::Left), ("ENTRIES", Align::Right), ("BYTES", Align::Right)]);
        for t in &self.tables {
            table.row(vec![t.table.to_owned(), count(t.entries), bytes(t.stored_bytes)]);
        }
        let stored: u64 = self.tables.iter().map(|t| t.stored_bytes).sum();
        table.row(vec!["(all tables)".to_owned(), String::new(), bytes(stored)]);
        table.write(out, indent)
    }
}

/// Prints the store's counts and sizes.
pub(crate) fn stats(store: &StoreLocation, args: &StatsArgs, out: &mut Out) -> anyhow::Result<()> {
    let handle = store.open_reading()?;
    let snapshot = store.snapshot(&handle)?;
    let stats = Stats::gather(store, &snapshot)?;
    if args.json {
        write_json_pretty(out, &stats.json(store))?;
    } else {
        writeln!(out, "store     {store}")?;
        stats.write(out, "")?;
    }
    Ok(())
}
