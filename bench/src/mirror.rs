//! A mirror of the engine's archived record layout, to time its codec choice in isolation.
//!
//! The engine's codec module is private, so these types copy its `StoredRecord` field for
//! field (engine/src/model/codec.rs); the bench crate builds rkyv with the workspace's features
//! (`unaligned`, `bytecheck`, little endian, 32-bit offsets), so the bytes have the same layout
//! and the same validation cost. The codec binary checks the mirror against the engine by
//! comparing the journal's stored bytes with the mirror's encoded bytes.

use annal_engine::{derive_target, Block, Record, Role};
use rkyv::rancor;
use rkyv::{Archive, Deserialize, Serialize};

/// A text payload: inline, or a reference to the blob table above the store's threshold.
#[derive(Archive, Serialize, Deserialize, Debug, Clone)]
#[rkyv(derive(Debug))]
pub enum StoredPayload {
    /// The text itself.
    Inline(String),
    /// A blob key and length.
    Blob {
        /// The blake3 of the text.
        hash: [u8; 32],
        /// Its length.
        len: u64,
    },
}

/// One block.
#[derive(Archive, Serialize, Deserialize, Debug, Clone)]
#[rkyv(derive(Debug))]
#[allow(missing_docs)]
pub enum StoredBlock {
    Text(StoredPayload),
    Thinking(StoredPayload),
    ToolCall { call_id: String, tool: String, input: StoredPayload, target: String },
    ToolResult { call_id: String, tool: String, is_error: bool, output: StoredPayload },
    Blob { hash: [u8; 32], media_type: String, size_bytes: u64 },
}

/// One metadata entry.
#[derive(Archive, Serialize, Deserialize, Debug, Clone)]
#[rkyv(derive(Debug))]
#[allow(missing_docs)]
pub struct StoredMeta {
    pub key: String,
    pub value: String,
}

/// A record as the journal stores it.
#[derive(Archive, Serialize, Deserialize, Debug, Clone)]
#[rkyv(derive(Debug))]
#[allow(missing_docs)]
pub struct StoredRecord {
    pub entry_id: String,
    pub role: u8,
    pub timestamp: Option<String>,
    pub blocks: Vec<StoredBlock>,
    pub meta: Vec<StoredMeta>,
    pub hash: [u8; 32],
    pub prev_hash: [u8; 32],
    pub seal: u64,
}

fn role_tag(role: Role) -> u8 {
    match role {
        Role::User => 0,
        Role::Assistant => 1,
        Role::Tool => 2,
        Role::System => 3,
    }
}

/// A stand-in for a blake3 key: the bytes do not change the layout or the validation cost.
fn fake_hash(text: &str) -> [u8; 32] {
    let mut hash = [0u8; 32];
    for (i, byte) in text.bytes().take(32).enumerate() {
        hash[i] = byte;
    }
    hash
}

/// The stored form of `record` under a blob threshold of `threshold` bytes, as the engine
/// prepares it (tool inputs are already canonical in the generated workload).
pub fn stored(record: &Record, threshold: usize) -> StoredRecord {
    let payload = |text: &str| {
        if text.len() > threshold {
            StoredPayload::Blob { hash: fake_hash(text), len: text.len() as u64 }
        } else {
            StoredPayload::Inline(text.to_owned())
        }
    };
    let blocks = record
        .blocks
        .iter()
        .map(|block| match block {
            Block::Text { text } => StoredBlock::Text(payload(text)),
            Block::Thinking { text } => StoredBlock::Thinking(payload(text)),
            Block::ToolCall { call_id, tool, input, target } => StoredBlock::ToolCall {
                call_id: call_id.clone(),
                tool: tool.clone(),
                input: payload(input),
                target: if target.is_empty() { derive_target(tool, input) } else { target.clone() },
            },
            Block::ToolResult { call_id, tool, is_error, output } => StoredBlock::ToolResult {
                call_id: call_id.clone(),
                tool: tool.clone(),
                is_error: *is_error,
                output: payload(output),
            },
            Block::Blob { media_type, data } => StoredBlock::Blob {
                hash: [7; 32],
                media_type: media_type.clone(),
                size_bytes: data.len() as u64,
            },
        })
        .collect();
    StoredRecord {
        entry_id: record.entry_id.clone(),
        role: role_tag(record.role),
        timestamp: record.timestamp.clone(),
        blocks,
        meta: record.meta.iter().map(|(k, v)| StoredMeta { key: k.clone(), value: v.clone() }).collect(),
        hash: [1; 32],
        prev_hash: [2; 32],
        seal: 3,
    }
}

/// Encodes a record the way the engine does.
///
/// # Errors
/// If rkyv cannot serialize it.
pub fn encode(record: &StoredRecord) -> anyhow::Result<Vec<u8>> {
    Ok(rkyv::to_bytes::<rancor::Error>(record)?.into_vec())
}

/// Validates `bytes` and borrows the archived record in place (`rkyv::access`, never unchecked).
///
/// # Errors
/// If the bytes are not a valid archived record.
pub fn access(bytes: &[u8]) -> anyhow::Result<&ArchivedStoredRecord> {
    Ok(rkyv::access::<ArchivedStoredRecord, rancor::Error>(bytes)?)
}

fn touch_payload(payload: &ArchivedStoredPayload) -> u64 {
    match payload {
        ArchivedStoredPayload::Inline(text) => touch_str(text.as_str()),
        ArchivedStoredPayload::Blob { len, .. } => len.to_native(),
    }
}

/// What a reader does with a text: its length plus its first and last byte, so the text's
/// bytes are actually read without making the loop about scanning text.
pub fn touch_str(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let ends = bytes.first().map_or(0, |b| u64::from(*b)) + bytes.last().map_or(0, |b| u64::from(*b));
    bytes.len() as u64 + ends
}

/// Touches every text block of an archived record and its entryId.
pub fn touch(record: &ArchivedStoredRecord) -> u64 {
    let mut sum = touch_str(record.entry_id.as_str()) + u64::from(record.role);
    for block in record.blocks.iter() {
        sum += match block {
            ArchivedStoredBlock::Text(text) | ArchivedStoredBlock::Thinking(text) => touch_payload(text),
            ArchivedStoredBlock::ToolCall { input, .. } => touch_payload(input),
            ArchivedStoredBlock::ToolResult { output, .. } => touch_payload(output),
            ArchivedStoredBlock::Blob { size_bytes, .. } => size_bytes.to_native(),
        };
    }
    sum
}
