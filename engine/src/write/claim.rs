//! What an appender asserts about the records it appends (where each lands, its chain hash and
//! the hash before it), and the entryIds derived for records that come without one. Both are
//! settled by the writer inside the transaction that stores the batch, so a claim is checked
//! against exactly what is written and a batch that breaks one writes nothing.

use crate::hash::{content_hash, Hash};
use crate::record::Record;

/// What the caller asserts about one record of a batch; `None` asserts nothing.
///
/// Checked inside the write transaction: if any claim of a batch differs from what the batch
/// would store, nothing of it is stored and the append fails with
/// [`AppendError::ClaimMismatch`](crate::AppendError::ClaimMismatch). For a record the session
/// already holds (a retry), the claim is compared with the stored record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Claim {
    /// The sourceOrder the record must land at.
    pub source_order: Option<u64>,
    /// The record's chain hash.
    pub hash: Option<Hash>,
    /// The chain hash of the record before it (zeros for the first).
    pub prev_hash: Option<Hash>,
}

impl Claim {
    /// Whether it asserts nothing.
    pub fn is_empty(&self) -> bool {
        self.source_order.is_none() && self.hash.is_none() && self.prev_hash.is_none()
    }
}

/// A record appended without an entryId: its canonical record, with a placeholder id, and the
/// text its id is derived from, kept until the writer knows the sourceOrder it lands at.
#[derive(Debug)]
pub(crate) struct PendingId {
    pub(crate) seed: String,
    pub(crate) record: Record,
}

/// The placeholder a record without an entryId carries until the writer derives its id: as long
/// as a derived id, so the limits are checked on the caller's thread as for any record.
pub(crate) const PLACEHOLDER_ID: &str = "e-00000000000000000000000000000000";

/// The entryId of a record appended without one: `e-` and the first 32 hex digits of the blake3
/// hash of the session name, the sourceOrder the record takes (the session's length before the
/// append plus the record's index in its batch) and `seed` (the portable format's canonical
/// JSON of the line). The same line at the same place always gets the same id.
pub(crate) fn derived_entry_id(session: &str, source_order: u64, seed: &str) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"annal.cli.entry.v1\0");
    hasher.update(&(session.len() as u64).to_le_bytes());
    hasher.update(session.as_bytes());
    hasher.update(&source_order.to_le_bytes());
    hasher.update(seed.as_bytes());
    let hex = hasher.finalize().to_hex();
    format!("e-{}", &hex[..32])
}

impl PendingId {
    /// The id this record gets at `source_order`, and its content hash with that id.
    pub(crate) fn settle(mut self, session: &str, source_order: u64) -> (String, Hash) {
        self.record.entry_id = derived_entry_id(session, source_order, &self.seed);
        let hash = content_hash(&self.record);
        (self.record.entry_id, hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_ids_depend_on_session_place_and_content() {
        let line = r#"{"role":"user"}"#;
        let id = derived_entry_id("s", 3, line);
        assert_eq!(id, derived_entry_id("s", 3, line));
        assert_eq!(id.len(), PLACEHOLDER_ID.len());
        assert_ne!(id, derived_entry_id("t", 3, line));
        assert_ne!(id, derived_entry_id("s", 4, line));
        assert_ne!(id, derived_entry_id("s", 3, r#"{"role":"assistant"}"#));
    }

    #[test]
    fn an_empty_claim_asserts_nothing() {
        assert!(Claim::default().is_empty());
        assert!(!Claim { source_order: Some(0), ..Claim::default() }.is_empty());
    }
}
