//! OpenCode's older `storage/` JSON tree (placeholder until the reader lands).

use std::path::Path;

use crate::db::DbReading;
use crate::error::SourceError;

/// Reads the sessions of the tree at `root` (the `storage` folder) changed at or after
/// `since_ms` (all with `None`).
pub(crate) fn read(_root: &Path, since_ms: Option<i64>) -> Result<DbReading, SourceError> {
    Ok(DbReading { since_ms: since_ms.unwrap_or(0), ..DbReading::default() })
}
