//! crush database (placeholder until the reader lands).

use std::path::Path;

use super::DbReading;
use crate::error::SourceError;

/// Reads the sessions changed at or after `since_ms` (all with `None`).
pub(crate) fn read(_path: &Path, since_ms: Option<i64>) -> Result<DbReading, SourceError> {
    Ok(DbReading { since_ms: since_ms.unwrap_or(0), ..DbReading::default() })
}
