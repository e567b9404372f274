//! The digest: fixed-size per-record metadata that projections plan over without decoding text.
//!
//! Layout (80 bytes, integers little endian; see docs/format.md):
//! ```text
//!  0  role            u8
//!  1  flags           u8   bit 0 error result, 1 tool call, 2 tool result, 3 text,
//!                          4 thinking, 5 blob, 6 target is config/schema/validation/test
//!  2  block_count     u16
//!  4  tokens_total    u32  every block
//!  8  tokens_text     u32  text blocks
//! 12  tokens_tool     u32  tool call inputs and tool result outputs
//! 16  position        u64  store-wide position of the append (u64::MAX: none)
//! 24  tool_key        u64  first 8 bytes of blake3(tool name) of the first tool block; 0: none
//! 32  target_key      u64  first 8 bytes of blake3(target) of the first tool call; 0: none
//! 40  reserved        [u8; 8], zero
//! 48  content_hash    [u8; 32]
//! ```

use crate::hash::Hash;
use crate::record::Role;

pub(crate) const DIGEST_LEN: usize = 80;

/// Flag bits of [`Digest::flags`].
pub mod flags {
    /// At least one tool result reports an error.
    pub const ERROR: u8 = 1 << 0;
    /// At least one tool call.
    pub const TOOL_CALL: u8 = 1 << 1;
    /// At least one tool result.
    pub const TOOL_RESULT: u8 = 1 << 2;
    /// At least one text block.
    pub const TEXT: u8 = 1 << 3;
    /// At least one thinking block.
    pub const THINKING: u8 = 1 << 4;
    /// At least one blob block.
    pub const BLOB: u8 = 1 << 5;
    /// The first tool call's target looks like configuration, a schema, validation or a test.
    pub const PRIORITY_TARGET: u8 = 1 << 6;
}

/// Fixed-size metadata of one record, stored beside it at append time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digest {
    /// Who produced the record.
    pub role: Role,
    /// See [`flags`].
    pub flags: u8,
    /// Number of blocks.
    pub block_count: u16,
    /// Estimated tokens of the whole record.
    pub tokens_total: u32,
    /// Estimated tokens of its text blocks.
    pub tokens_text: u32,
    /// Estimated tokens of its tool inputs and outputs.
    pub tokens_tool: u32,
    /// The store-wide position of the append that wrote it.
    pub position: u64,
    /// A key for grouping by tool name (0: no tool).
    pub tool_key: u64,
    /// A key for grouping by target (0: no target).
    pub target_key: u64,
    /// The record's content hash.
    pub content_hash: Hash,
}

impl Digest {
    pub(crate) fn encode(&self) -> [u8; DIGEST_LEN] {
        let mut out = [0u8; DIGEST_LEN];
        out[0] = self.role.tag();
        out[1] = self.flags;
        out[2..4].copy_from_slice(&self.block_count.to_le_bytes());
        out[4..8].copy_from_slice(&self.tokens_total.to_le_bytes());
        out[8..12].copy_from_slice(&self.tokens_text.to_le_bytes());
        out[12..16].copy_from_slice(&self.tokens_tool.to_le_bytes());
        out[16..24].copy_from_slice(&self.position.to_le_bytes());
        out[24..32].copy_from_slice(&self.tool_key.to_le_bytes());
        out[32..40].copy_from_slice(&self.target_key.to_le_bytes());
        out[48..80].copy_from_slice(&self.content_hash);
        out
    }

    /// Decodes a stored digest; `None` if the role tag is unknown.
    pub(crate) fn decode(bytes: &[u8; DIGEST_LEN]) -> Option<Digest> {
        let u32_at = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        let u64_at = |at: usize| {
            let mut raw = [0u8; 8];
            raw.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(raw)
        };
        let mut content_hash = [0u8; 32];
        content_hash.copy_from_slice(&bytes[48..80]);
        Some(Digest {
            role: Role::from_tag(bytes[0])?,
            flags: bytes[1],
            block_count: u16::from_le_bytes([bytes[2], bytes[3]]),
            tokens_total: u32_at(4),
            tokens_text: u32_at(8),
            tokens_tool: u32_at(12),
            position: u64_at(16),
            tool_key: u64_at(24),
            target_key: u64_at(32),
            content_hash,
        })
    }

    /// Whether any of `bits` is set.
    pub fn has(&self, bits: u8) -> bool {
        self.flags & bits != 0
    }
}

/// A short grouping key for a name: the first 8 bytes of its blake3, never 0 for a non-empty name.
pub(crate) fn name_key(name: &str) -> u64 {
    if name.is_empty() {
        return 0;
    }
    let hash = blake3::hash(name.as_bytes());
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&hash.as_bytes()[..8]);
    u64::from_le_bytes(raw).max(1)
}
