//! Content hashes and the per-session hash chain.
//!
//! The content hash is blake3 over a canonical encoding that this module alone defines, so it
//! does not depend on rkyv's layout and survives a change of storage format. Text payloads
//! enter it as (length, blake3 of the bytes): a payload moved to the blob table hashes the
//! same as one kept inline, and `verify` can check a record without loading its blobs (the
//! blobs are checked against their own keys separately).
//!
//! A tool call's `target` is left out on purpose: it is derived from the tool name and input,
//! and a better derivation in a later version must not make a re-import look like different
//! content.

use crate::codec::{ArchivedBlock, ArchivedPayload, ArchivedRecord};
use crate::record::{Block, Record};

/// A blake3 digest.
pub type Hash = [u8; 32];

/// The hash before the first record of a session.
pub const ZERO_HASH: Hash = [0; 32];

const CONTENT_DOMAIN: &[u8] = b"annal.record.v1\0";
const CHAIN_DOMAIN: &[u8] = b"annal.chain.v1\0";

struct Canonical(blake3::Hasher);

impl Canonical {
    fn new() -> Canonical {
        let mut hasher = blake3::Hasher::new();
        hasher.update(CONTENT_DOMAIN);
        Canonical(hasher)
    }

    fn u8(&mut self, value: u8) {
        self.0.update(&[value]);
    }

    fn u64(&mut self, value: u64) {
        self.0.update(&value.to_le_bytes());
    }

    fn str(&mut self, value: &str) {
        self.u64(value.len() as u64);
        self.0.update(value.as_bytes());
    }

    fn opt_str(&mut self, value: Option<&str>) {
        match value {
            None => self.u8(0),
            Some(value) => {
                self.u8(1);
                self.str(value);
            }
        }
    }

    fn payload(&mut self, len: u64, hash: &Hash) {
        self.u64(len);
        self.0.update(hash);
    }

    fn text(&mut self, text: &str) {
        self.payload(text.len() as u64, blake3::hash(text.as_bytes()).as_bytes());
    }

    fn finish(self) -> Hash {
        *self.0.finalize().as_bytes()
    }
}

// Block tags of the canonical encoding; never reorder.
const TAG_TEXT: u8 = 0;
const TAG_THINKING: u8 = 1;
const TAG_TOOL_CALL: u8 = 2;
const TAG_TOOL_RESULT: u8 = 3;
const TAG_BLOB: u8 = 4;

/// The content hash of a record about to be appended.
pub(crate) fn content_hash(record: &Record) -> Hash {
    let mut c = Canonical::new();
    c.str(&record.entry_id);
    c.u8(record.role.tag());
    c.opt_str(record.timestamp.as_deref());
    c.u64(record.blocks.len() as u64);
    for block in &record.blocks {
        match block {
            Block::Text { text } => {
                c.u8(TAG_TEXT);
                c.text(text);
            }
            Block::Thinking { text } => {
                c.u8(TAG_THINKING);
                c.text(text);
            }
            Block::ToolCall { call_id, tool, input, .. } => {
                c.u8(TAG_TOOL_CALL);
                c.str(call_id);
                c.str(tool);
                c.text(input);
            }
            Block::ToolResult { call_id, tool, is_error, output } => {
                c.u8(TAG_TOOL_RESULT);
                c.str(call_id);
                c.str(tool);
                c.u8(u8::from(*is_error));
                c.text(output);
            }
            Block::Blob { media_type, data } => {
                c.u8(TAG_BLOB);
                c.0.update(blake3::hash(data).as_bytes());
                c.str(media_type);
                c.u64(data.len() as u64);
            }
        }
    }
    c.u64(record.meta.len() as u64);
    for (key, value) in &record.meta {
        c.str(key);
        c.str(value);
    }
    c.finish()
}

fn archived_payload(c: &mut Canonical, payload: &ArchivedPayload) {
    match payload {
        ArchivedPayload::Inline(text) => c.text(text.as_str()),
        ArchivedPayload::Blob { hash, len } => c.payload(len.to_native(), hash),
    }
}

/// The content hash of a stored record, recomputed from its archived form.
pub(crate) fn archived_content_hash(record: &ArchivedRecord) -> Hash {
    let mut c = Canonical::new();
    c.str(record.entry_id.as_str());
    c.u8(record.role);
    c.opt_str(record.timestamp.as_ref().map(|t| t.as_str()));
    c.u64(record.blocks.len() as u64);
    for block in record.blocks.iter() {
        match block {
            ArchivedBlock::Text(payload) => {
                c.u8(TAG_TEXT);
                archived_payload(&mut c, payload);
            }
            ArchivedBlock::Thinking(payload) => {
                c.u8(TAG_THINKING);
                archived_payload(&mut c, payload);
            }
            ArchivedBlock::ToolCall { call_id, tool, input, .. } => {
                c.u8(TAG_TOOL_CALL);
                c.str(call_id.as_str());
                c.str(tool.as_str());
                archived_payload(&mut c, input);
            }
            ArchivedBlock::ToolResult { call_id, tool, is_error, output } => {
                c.u8(TAG_TOOL_RESULT);
                c.str(call_id.as_str());
                c.str(tool.as_str());
                c.u8(u8::from(*is_error));
                archived_payload(&mut c, output);
            }
            ArchivedBlock::Blob { hash, media_type, size_bytes } => {
                c.u8(TAG_BLOB);
                c.0.update(hash);
                c.str(media_type.as_str());
                c.u64(size_bytes.to_native());
            }
        }
    }
    c.u64(record.meta.len() as u64);
    for entry in record.meta.iter() {
        c.str(entry.key.as_str());
        c.str(entry.value.as_str());
    }
    c.finish()
}

/// The chain hash of a record: it commits to the previous record's chain hash and its own
/// content, so a change anywhere in a session changes every later hash.
pub(crate) fn chain_hash(prev: &Hash, content: &Hash) -> Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(CHAIN_DOMAIN);
    hasher.update(prev);
    hasher.update(content);
    *hasher.finalize().as_bytes()
}

/// Lower-case hex of a hash, as the portable format writes it.
pub fn hash_to_hex(hash: &Hash) -> String {
    blake3::Hash::from_bytes(*hash).to_hex().to_string()
}

/// Parses 64 hex digits into a hash.
pub fn hash_from_hex(text: &str) -> Option<Hash> {
    blake3::Hash::from_hex(text).ok().map(|h| *h.as_bytes())
}

const SEAL_DOMAIN: &[u8] = b"annal.seal.v1\0";

/// The seal of a record: its chain hash and every tool-call target (derived data the content
/// hash leaves out), folded to 8 bytes. Checked on every read with the chain hash, so any
/// damaged byte of a stored record is reported as corruption rather than returned.
pub(crate) fn seal<'t>(chain: &Hash, targets: impl Iterator<Item = &'t str>) -> u64 {
    let mut hasher = blake3::Hasher::new();
    hasher.update(SEAL_DOMAIN);
    hasher.update(chain);
    for target in targets {
        hasher.update(&(target.len() as u64).to_le_bytes());
        hasher.update(target.as_bytes());
    }
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&hasher.finalize().as_bytes()[..8]);
    u64::from_le_bytes(raw)
}

/// Checks a stored record against its own hashes: the chain hash over its content and previous
/// hash, and the seal over what the content hash leaves out.
pub(crate) fn check_archived(record: &ArchivedRecord) -> Result<(), &'static str> {
    let content = archived_content_hash(record);
    if chain_hash(&record.prev_hash, &content) != record.hash {
        return Err("content does not match the record's hash");
    }
    let targets = record.blocks.iter().filter_map(|b| match b {
        ArchivedBlock::ToolCall { target, .. } => Some(target.as_str()),
        _ => None,
    });
    if seal(&record.hash, targets) != record.seal.to_native() {
        return Err("record does not match its seal");
    }
    Ok(())
}
