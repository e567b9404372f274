//! The only code that touches rkyv: the archived record layout, encoding, and validated access.
//!
//! redb hands out values at alignment 1, so the workspace builds rkyv with its `unaligned`
//! format (see docs/format.md for the measurement behind that choice): archived records are
//! read in place from the bytes redb returns, with no copy. Every access is validated with
//! bytecheck; `access_unchecked` is never used on bytes from disk.

use rkyv::rancor;
use rkyv::{Archive, Deserialize, Serialize};

/// A text payload: inline, or moved to the blob table when larger than the store's threshold.
#[derive(Archive, Serialize, Deserialize, Debug, Clone)]
pub(crate) enum StoredPayload {
    Inline(String),
    /// The blob key is the blake3 of the UTF-8 bytes; `len` is their count.
    Blob {
        hash: [u8; 32],
        len: u64,
    },
}

#[derive(Archive, Serialize, Deserialize, Debug, Clone)]
pub(crate) enum StoredBlock {
    Text(StoredPayload),
    Thinking(StoredPayload),
    ToolCall { call_id: String, tool: String, input: StoredPayload, target: String },
    ToolResult { call_id: String, tool: String, is_error: bool, output: StoredPayload },
    Blob { hash: [u8; 32], media_type: String, size_bytes: u64 },
}

#[derive(Archive, Serialize, Deserialize, Debug, Clone)]
pub(crate) struct StoredMeta {
    pub(crate) key: String,
    pub(crate) value: String,
}

/// A record as stored in the journal table.
#[derive(Archive, Serialize, Deserialize, Debug, Clone)]
pub(crate) struct StoredRecord {
    pub(crate) entry_id: String,
    pub(crate) role: u8,
    pub(crate) timestamp: Option<String>,
    pub(crate) blocks: Vec<StoredBlock>,
    pub(crate) meta: Vec<StoredMeta>,
    /// The session chain: blake3 over the previous record's hash and this record's content.
    pub(crate) hash: [u8; 32],
    pub(crate) prev_hash: [u8; 32],
    /// Seals what the chain hash leaves out (the derived tool-call targets), so a damaged target
    /// is caught on read too: see `hash::seal`.
    pub(crate) seal: u64,
}

pub(crate) use self::ArchivedStoredBlock as ArchivedBlock;
pub(crate) use self::ArchivedStoredPayload as ArchivedPayload;
pub(crate) use self::ArchivedStoredRecord as ArchivedRecord;

/// Encodes a record for the journal table.
pub(crate) fn encode(record: &StoredRecord) -> Result<Vec<u8>, String> {
    // Written straight into a plain Vec: with the unaligned format nothing needs alignment.
    rkyv::api::high::to_bytes_in::<_, rancor::Error>(record, Vec::new()).map_err(|err| err.to_string())
}

/// Validates `bytes` as an archived record and borrows it in place.
pub(crate) fn access(bytes: &[u8]) -> Result<&ArchivedRecord, String> {
    rkyv::access::<ArchivedRecord, rancor::Error>(bytes).map_err(|err| err.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::verify::check_record_bytes;
    use proptest::prelude::*;

    fn sample() -> StoredRecord {
        StoredRecord {
            entry_id: "entry-1".into(),
            role: 1,
            timestamp: Some("2026-01-02T03:04:05Z".into()),
            blocks: vec![
                StoredBlock::Text(StoredPayload::Inline("hello world".into())),
                StoredBlock::ToolCall {
                    call_id: "c1".into(),
                    tool: "Bash".into(),
                    input: StoredPayload::Inline(r#"{"command":"ls"}"#.into()),
                    target: "ls".into(),
                },
                StoredBlock::ToolResult {
                    call_id: "c1".into(),
                    tool: "Bash".into(),
                    is_error: true,
                    output: StoredPayload::Blob { hash: [7; 32], len: 99_999 },
                },
            ],
            meta: vec![StoredMeta { key: "k".into(), value: "1".into() }],
            hash: [1; 32],
            prev_hash: [2; 32],
            seal: 3,
        }
    }

    #[test]
    fn round_trip_reads_in_place_at_any_alignment() {
        let bytes = encode(&sample()).unwrap();
        // redb gives values at alignment 1: read from every offset of a larger buffer.
        for offset in 0..8 {
            let mut shifted = vec![0u8; offset];
            shifted.extend_from_slice(&bytes);
            let archived = access(&shifted[offset..]).unwrap();
            assert_eq!(archived.entry_id.as_str(), "entry-1");
            assert_eq!(archived.blocks.len(), 3);
        }
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = check_record_bytes(&bytes);
        }

        #[test]
        fn flipped_bytes_never_panic(at in any::<prop::sample::Index>(), mask in 1u8..=255) {
            let mut bytes = encode(&sample()).unwrap();
            let at = at.index(bytes.len());
            bytes[at] ^= mask;
            let _ = check_record_bytes(&bytes);
        }

        #[test]
        fn truncated_bytes_are_rejected(cut in any::<prop::sample::Index>()) {
            let bytes = encode(&sample()).unwrap();
            let cut = cut.index(bytes.len());
            prop_assert!(check_record_bytes(&bytes[..cut]).is_err() || cut == bytes.len());
        }
    }
}
