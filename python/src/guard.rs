//! Appends guarded by what the caller read: a writer that keeps its own index of a group of
//! sessions (the LangGraph saver's thread and its branches) names the length it read of each,
//! and the append happens only if none changed, checked inside the append's own transaction, so
//! one call does what a read of every session and then an append did.

use annal::error::AppendError;
use annal::{Annal, AppendReceipt, Error, PortableRecord};

/// The number of records of each session of `names` (None where there is no such session), all
/// read in one snapshot.
pub(crate) fn lengths(annal: &Annal, names: &[String]) -> Result<Vec<Option<u64>>, Error> {
    let snapshot = annal.snapshot()?;
    let mut lengths = Vec::with_capacity(names.len());
    for name in names {
        lengths.push(snapshot.session(name)?.map(|info| info.len));
    }
    Ok(lengths)
}

/// Appends `records` to `session` at `expected_next` when each session of `expected` still has
/// the length given for it (None: still does not exist); None, with nothing appended, when one
/// changed, or when `session` itself is no longer at `expected_next`.
pub(crate) fn append_if_unchanged(
    annal: &Annal,
    session: &str,
    expected_next: u64,
    records: Vec<PortableRecord>,
    expected: Vec<(String, Option<u64>)>,
) -> Result<Option<AppendReceipt>, Error> {
    match annal.append_portable_if_unchanged(session, Some(expected_next), records, expected) {
        Ok(receipt) => Ok(Some(receipt)),
        Err(Error::Append(AppendError::Changed { .. } | AppendError::Conflict { .. })) => Ok(None),
        Err(err) => Err(err),
    }
}
