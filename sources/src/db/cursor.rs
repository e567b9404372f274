//! Cursor's global `state.vscdb`: table `cursorDiskKV(key TEXT UNIQUE ON CONFLICT REPLACE,
//! value BLOB)`, a conversation under `composerData:<composer>` and each of its messages under
//! `bubbleId:<composer>:<bubble>`, both JSON; the editor's other keys (file contents, diffs,
//! checkpoints) are never read.
//!
//! The table has no time of change, but every write of a key replaces its row, and a row
//! inserted takes a rowid above every other: the cursor is the highest rowid read. Rows at or
//! above it are read (the newest row again, in case it was replaced by one that took its
//! rowid), and every conversation with a changed row is read with its current order of
//! messages; the loader stores what is new and keeps what changed (a reply that went on
//! streaming, a tool's result) as a revision. `ItemTable` changes with every click in the
//! editor: a pass that finds no conversation row changed reads nothing else.

use std::collections::BTreeMap;
use std::path::Path;

use annal_formats::{parse_cursor_composer, CursorComposerRow};

use super::sqlite::{begin, open, query, table_columns, Row};
use super::DbReading;
use crate::error::SourceError;

/// The keys of conversations and of their messages, as ranges the key's index answers.
const CHANGED: &str = "SELECT rowid AS row, key, value FROM cursorDiskKV WHERE rowid >= ?1 \
    AND ((key >= 'composerData:' AND key < 'composerData;') OR (key >= 'bubbleId:' AND key < 'bubbleId;')) \
    ORDER BY rowid";

/// Reads the conversations with rows written since the cursor `since` (all with `None`).
pub(crate) fn read(path: &Path, since: Option<i64>) -> Result<DbReading, SourceError> {
    let conn = open(path)?;
    let tx = begin(&conn, path)?;
    table_columns(&tx, path, "cursorDiskKV", &["key", "value"])?;
    let rows = query(&tx, path, CHANGED, [since.unwrap_or(i64::MIN)])?;
    let mut reading = DbReading { since_ms: since.unwrap_or(0), ..DbReading::default() };
    let mut composers: BTreeMap<String, CursorComposerRow> = BTreeMap::new();
    for row in &rows {
        reading.since_ms = reading.since_ms.max(row.int("row").unwrap_or(0));
        let (Ok(Some(key)), Some(value)) = (row.text("key"), row.bytes("value")) else { continue };
        if let Some(id) = key.strip_prefix("composerData:") {
            composer(&mut composers, id).data = Some(value);
        } else if let Some((id, bubble)) = key.strip_prefix("bubbleId:").and_then(|rest| rest.split_once(':'))
        {
            composer(&mut composers, id).bubbles.push((bubble.to_owned(), value));
        }
    }
    // A conversation whose messages changed but whose own row did not: its order is still
    // needed, from the row as it is.
    for (id, row) in composers.iter_mut().filter(|(_, row)| row.data.is_none()) {
        let sql = "SELECT value FROM cursorDiskKV WHERE key = ?1";
        let found = query(&tx, path, sql, [format!("composerData:{id}")])?;
        row.data = found.first().and_then(|found: &Row| found.bytes("value"));
    }
    drop(tx);
    for (id, row) in composers {
        match parse_cursor_composer(&row) {
            Ok((session, skipped)) => {
                reading
                    .skipped
                    .extend(skipped.into_iter().map(|line| format!("conversation {id:?}, {line}")));
                if !session.records.is_empty() {
                    reading.sessions.push(session);
                }
            }
            Err(why) => reading.skipped.push(format!("conversation {id:?}: {why}")),
        }
    }
    Ok(reading)
}

fn composer<'m>(
    composers: &'m mut BTreeMap<String, CursorComposerRow>,
    id: &str,
) -> &'m mut CursorComposerRow {
    composers
        .entry(id.to_owned())
        .or_insert_with(|| CursorComposerRow { id: id.to_owned(), ..CursorComposerRow::default() })
}
