//! Appends guarded by what the caller read: a writer that keeps its own index of a group of
//! sessions (the LangGraph saver's thread and its branches) names the length it read of each,
//! and the append happens only if none changed, so one call does what a read of every session
//! and then an append did.

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
/// changed. The check and the append are two steps: a session of `expected` other than
/// `session` may change between them, as it might just after the append. When `session`
/// itself moved in between, the append's refusal is that None too: the refusal may name an
/// entryId the other writer took at the same place (a record of another content) rather than
/// the position.
pub(crate) fn append_if_unchanged(
    annal: &Annal,
    session: &str,
    expected_next: u64,
    records: Vec<PortableRecord>,
    expected: &[(String, Option<u64>)],
) -> Result<Option<AppendReceipt>, Error> {
    let names: Vec<String> = expected.iter().map(|(name, _)| name.clone()).collect();
    let found = lengths(annal, &names)?;
    if expected.iter().zip(&found).any(|((_, wanted), found)| wanted != found) {
        return Ok(None);
    }
    match annal.append_portable(session, Some(expected_next), records) {
        Ok(receipt) => Ok(Some(receipt)),
        Err(err) => {
            let now = lengths(annal, &[session.to_owned()])?;
            if now.first().copied().flatten().unwrap_or(0) != expected_next {
                return Ok(None);
            }
            Err(err)
        }
    }
}
