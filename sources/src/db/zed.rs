//! Zed's `threads.db`: one row per agent thread, `{id, summary, updated_at, data_type, data,
//! parent_id?, …}`, whose `data` is the whole thread as JSON, zstd-compressed when `data_type` is
//! `zstd` (every row current Zed writes) and plain when it is `json`. A save replaces the row.
//!
//! The cursor is `updated_at` (RFC 3339, set at every save): rows updated at or after it are
//! read again whole, and the loader stores what changed (new messages appended, changed ones as
//! revisions).

use std::path::Path;

use annal_formats::{parse_zed_thread, ZedThreadRow};

use super::sqlite::{begin, open, query, sql_time_ms, table_columns, Row};
use super::DbReading;
use crate::error::SourceError;

const COLUMNS: &[&str] = &["id", "updated_at", "data_type", "data"];
/// The most a thread's JSON may take once decompressed: what one transcript may take.
const THREAD_BYTES_MAX: usize = 1 << 30;

/// Reads the threads updated at or after `since_ms` (all with `None`).
pub(crate) fn read(path: &Path, since_ms: Option<i64>) -> Result<DbReading, SourceError> {
    let conn = open(path)?;
    let tx = begin(&conn, path)?;
    table_columns(&tx, path, "threads", COLUMNS)?;
    let rows = query(&tx, path, "SELECT * FROM threads ORDER BY updated_at, id", ())?;
    drop(tx);
    let mut reading = DbReading::default();
    let mut newest = since_ms.unwrap_or(0);
    for (index, row) in rows.iter().enumerate() {
        let updated = row.text("updated_at").ok().flatten().and_then(|text| sql_time_ms(&text));
        // A time that cannot be read counts as changed: read again rather than missed.
        if since_ms.zip(updated).is_some_and(|(since, at)| at < since) {
            continue;
        }
        newest = newest.max(updated.unwrap_or(newest));
        match thread(row).and_then(|thread| parse_zed_thread(&thread)) {
            Ok(session) if !session.records.is_empty() => reading.sessions.push(session),
            Ok(_) => {}
            Err(why) => reading.skipped.push(format!("thread {}: {why}", row.name(index))),
        }
    }
    reading.since_ms = newest;
    Ok(reading)
}

/// A row's thread, its data decompressed.
fn thread(row: &Row) -> Result<ZedThreadRow, String> {
    let id = row.required_text("id")?;
    let data = row.bytes("data").ok_or("column data is empty")?;
    let json = match row.text("data_type")?.as_deref() {
        Some("zstd") => decompress(&data)?,
        Some("json") | None => data,
        Some(other) => return Err(format!("data of type {other:?}, neither zstd nor json")),
    };
    Ok(ZedThreadRow { id, parent_id: row.text("parent_id").ok().flatten(), json })
}

/// zstd-decompressed `data`, at most [`THREAD_BYTES_MAX`].
fn decompress(data: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let decoder = zstd::stream::read::Decoder::new(data).map_err(|e| format!("data is not zstd ({e})"))?;
    let mut json = Vec::new();
    let limit = u64::try_from(THREAD_BYTES_MAX).unwrap_or(u64::MAX);
    decoder.take(limit + 1).read_to_end(&mut json).map_err(|e| format!("data is not zstd ({e})"))?;
    if json.len() > THREAD_BYTES_MAX {
        return Err(format!("data decompresses to more than {THREAD_BYTES_MAX} bytes"));
    }
    Ok(json)
}
