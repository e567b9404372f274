//! The Cursor CLI's `store.db` (`~/.cursor/chats/<folder hash>/<agent>/store.db`): its `meta`
//! row `0` (hex-encoded JSON naming the root blob), the root blob (protobuf listing the
//! conversation's blobs in order) and those blobs, turned into a session by the formats crate.
//!
//! Blobs are written once under their own hash and the root is replaced with every message, so
//! a changed file is read whole from its root: what is new is appended, and a message blob
//! already stored is found again under the same id.

use std::path::Path;

use annal_formats::{cursor_cli_children, cursor_cli_meta, parse_cursor_cli_chat};

use super::sqlite::{begin, open, query, table_columns};
use super::DbReading;
use crate::error::SourceError;

/// Reads the chat whole.
pub(crate) fn read(path: &Path) -> Result<DbReading, SourceError> {
    let conn = open(path)?;
    let tx = begin(&conn, path)?;
    table_columns(&tx, path, "meta", &["key", "value"])?;
    table_columns(&tx, path, "blobs", &["id", "data"])?;
    let mut reading = DbReading::default();
    let rows = query(&tx, path, "SELECT value FROM meta WHERE key = '0'", ())?;
    let Some(meta) = rows.first().and_then(|row| row.text("value").ok().flatten()) else {
        // A chat started but never written to: nothing yet.
        return Ok(reading);
    };
    let Some(meta) = cursor_cli_meta(&meta) else {
        reading.skipped.push("meta row 0: not hex-encoded JSON".to_owned());
        return Ok(reading);
    };
    let blob = |id: &str| -> Result<Option<Vec<u8>>, SourceError> {
        let rows = query(&tx, path, "SELECT data FROM blobs WHERE id = ?1", [id])?;
        Ok(rows.first().and_then(|row| row.bytes("data")))
    };
    let root_id = meta.get("latestRootBlobId").and_then(|id| id.as_str()).unwrap_or_default().to_owned();
    let Some(root) = blob(&root_id)? else {
        reading.skipped.push(format!("root blob {root_id:?}: not in the store"));
        return Ok(reading);
    };
    let mut children = Vec::new();
    for id in cursor_cli_children(&root) {
        // A child missing from the store (Cursor prunes) is passed over.
        if let Some(data) = blob(&id)? {
            children.push((id, data));
        }
    }
    drop(tx);
    let folder = path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    let (session, skipped) = parse_cursor_cli_chat(folder.as_deref().unwrap_or("cursor"), meta, &children);
    reading.skipped.extend(skipped);
    if !session.records.is_empty() {
        reading.sessions.push(session);
    }
    Ok(reading)
}
