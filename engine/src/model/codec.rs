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

/// The chain fields of an archived record, as stored: `prev_hash` (32 bytes), `hash` (32), `seal`
/// (8, little endian). They are set after everything else (by the committing thread, once the
/// session's head is known), so a record can be encoded, and compressed without them, earlier.
pub(crate) const CHAIN_FIELDS_BYTES: usize = 72;

/// Where the chain fields of an archive of `len` bytes lie: rkyv puts the root object last.
fn chain_offsets(len: usize) -> Option<[(usize, usize); 3]> {
    let root = len.checked_sub(std::mem::size_of::<ArchivedRecord>())?;
    Some([
        (root + std::mem::offset_of!(ArchivedRecord, prev_hash), 32),
        (root + std::mem::offset_of!(ArchivedRecord, hash), 32),
        (root + std::mem::offset_of!(ArchivedRecord, seal), 8),
    ])
}

/// The chain fields of `prev_hash`, `hash` and `seal`, in stored form.
pub(crate) fn chain_fields(prev_hash: &[u8; 32], hash: &[u8; 32], seal: u64) -> [u8; CHAIN_FIELDS_BYTES] {
    let mut out = [0u8; CHAIN_FIELDS_BYTES];
    out[..32].copy_from_slice(prev_hash);
    out[32..64].copy_from_slice(hash);
    out[64..].copy_from_slice(&seal.to_le_bytes());
    out
}

/// Copies the chain fields out of an encoded archive and zeroes them there; `None` if the bytes
/// are too short to be an archive.
pub(crate) fn take_chain_fields(archive: &mut [u8]) -> Option<[u8; CHAIN_FIELDS_BYTES]> {
    let mut out = [0u8; CHAIN_FIELDS_BYTES];
    let mut at = 0;
    for (offset, len) in chain_offsets(archive.len())? {
        out[at..at + len].copy_from_slice(&archive[offset..offset + len]);
        archive[offset..offset + len].fill(0);
        at += len;
    }
    Some(out)
}

/// Writes chain fields into an encoded archive; `None` if the bytes are too short.
pub(crate) fn put_chain_fields(archive: &mut [u8], fields: &[u8; CHAIN_FIELDS_BYTES]) -> Option<()> {
    let mut at = 0;
    for (offset, len) in chain_offsets(archive.len())? {
        archive[offset..offset + len].copy_from_slice(&fields[at..at + len]);
        at += len;
    }
    Some(())
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
    fn chain_fields_are_found_where_rkyv_puts_them() {
        let mut record = sample();
        let bytes = encode(&record).unwrap();
        let mut cleared = bytes.clone();
        let fields = take_chain_fields(&mut cleared).unwrap();
        assert_eq!(fields, chain_fields(&[2; 32], &[1; 32], 3));
        record.hash = [0; 32];
        record.prev_hash = [0; 32];
        record.seal = 0;
        assert_eq!(cleared, encode(&record).unwrap(), "zeroing the fields is encoding them as zero");
        put_chain_fields(&mut cleared, &fields).unwrap();
        assert_eq!(cleared, bytes);
        assert!(take_chain_fields(&mut [0u8; 8]).is_none());
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
            // As the journal stores it: a tag byte, then the archive.
            let mut bytes = crate::packing::pack_record(&encode(&sample()).unwrap());
            let at = at.index(bytes.len());
            bytes[at] ^= mask;
            let _ = check_record_bytes(&bytes);
        }

        #[test]
        fn truncated_bytes_are_rejected(cut in any::<prop::sample::Index>()) {
            let bytes = crate::packing::pack_record(&encode(&sample()).unwrap());
            let cut = cut.index(bytes.len());
            prop_assert!(check_record_bytes(&bytes[..cut]).is_err() || cut == bytes.len());
        }
    }
}
