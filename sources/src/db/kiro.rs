//! Kiro CLI's `data.sqlite3` (the Amazon Q Developer CLI's before it was renamed): table
//! `conversations_v2(key, conversation_id, value, created_at, updated_at)`, one row per
//! conversation whose `value` is the whole conversation as JSON, replaced on every turn; builds
//! before it kept one conversation per folder in `conversations(key, value)`.
//!
//! The cursor is `updated_at` (milliseconds, set at every save): rows updated at or after it
//! are read again whole, and the loader stores what changed. The older table has no time: it is
//! read whole when the file changed, and only when the newer table is absent (the migration to
//! it copied every row). Its other tables (sign-in secrets among them) are never read.

use std::path::Path;

use annal_formats::{parse_kiro_conversation, KiroConversationRow};

use super::sqlite::{begin, open, query, table_columns, Row};
use super::DbReading;
use crate::error::SourceError;
use crate::error::SourceError as Error;

const COLUMNS: &[&str] = &["key", "conversation_id", "value", "updated_at"];

/// Reads the conversations updated at or after `since_ms` (all with `None`).
pub(crate) fn read(path: &Path, since_ms: Option<i64>) -> Result<DbReading, SourceError> {
    let conn = open(path)?;
    let tx = begin(&conn, path)?;
    let (rows, timed) = match table_columns(&tx, path, "conversations_v2", COLUMNS) {
        Ok(_) => {
            let sql = "SELECT key, conversation_id, value, updated_at FROM conversations_v2 \
                WHERE typeof(updated_at) != 'integer' OR updated_at >= ?1 ORDER BY updated_at, conversation_id";
            (query(&tx, path, sql, [since_ms.unwrap_or(i64::MIN)])?, true)
        }
        Err(Error::Schema { .. }) => {
            table_columns(&tx, path, "conversations", &["key", "value"])?;
            (query(&tx, path, "SELECT key, value FROM conversations ORDER BY key", ())?, false)
        }
        Err(err) => return Err(err),
    };
    drop(tx);
    let mut reading = DbReading { since_ms: since_ms.unwrap_or(0), ..DbReading::default() };
    for (index, row) in rows.iter().enumerate() {
        if timed {
            reading.since_ms = reading.since_ms.max(row.int("updated_at").unwrap_or(0));
        }
        match conversation(row).and_then(|row| parse_kiro_conversation(&row)) {
            Ok(session) if !session.records.is_empty() => reading.sessions.push(session),
            Ok(_) => {}
            Err(why) => reading.skipped.push(format!("conversation {}: {why}", name(row, index))),
        }
    }
    Ok(reading)
}

fn conversation(row: &Row) -> Result<KiroConversationRow, String> {
    Ok(KiroConversationRow {
        key: row.text("key")?.unwrap_or_default(),
        conversation_id: row.text("conversation_id").ok().flatten().unwrap_or_default(),
        value: row.bytes("value").ok_or("column value is empty")?,
    })
}

/// A row by its conversation id, else its folder, else its place in the read.
fn name(row: &Row, index: usize) -> String {
    match (row.text("conversation_id"), row.text("key")) {
        (Ok(Some(id)), _) | (_, Ok(Some(id))) => format!("{id:?}"),
        _ => format!("#{} of the read", index + 1),
    }
}
