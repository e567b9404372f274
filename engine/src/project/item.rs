//! A record as planning sees it: an `Item` made from its digest (role, flags, tokens, tool
//! and target keys, never text), its place in the compacted history, and a receipt's place.

use crate::digest::{flags, Digest};
use crate::hash::Hash;
use crate::record::Role;

/// One visible, non-receipt record, as planning sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Item {
    pub(crate) order: u64,
    pub(crate) role: Role,
    pub(crate) flags: u8,
    pub(crate) tokens_total: u32,
    pub(crate) tokens_text: u32,
    pub(crate) tool_key: u64,
    pub(crate) target_key: u64,
}

/// What a record is to the compacted history before the tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotKind {
    /// User text: kept verbatim, cut only under the capacity rule.
    User,
    /// Assistant text: kept while the history budget lasts, newest first.
    Assistant,
    /// System text: kept only in the tail; a marker names it before.
    System,
}

impl Item {
    pub(crate) fn from_digest(order: u64, digest: &Digest) -> Item {
        Item {
            order,
            role: digest.role,
            flags: digest.flags,
            tokens_total: digest.tokens_total,
            tokens_text: digest.tokens_text,
            tool_key: digest.tool_key,
            target_key: digest.target_key,
        }
    }

    pub(crate) fn has(&self, bits: u8) -> bool {
        self.flags & bits != 0
    }

    /// A record that starts a turn: user text.
    pub(crate) fn is_turn_start(&self) -> bool {
        self.role == Role::User && self.has(flags::TEXT)
    }

    /// A record carrying tool results (tool records, and user records that carry results).
    pub(crate) fn is_result(&self) -> bool {
        self.has(flags::TOOL_RESULT)
    }

    /// A record carrying tool calls.
    pub(crate) fn is_call(&self) -> bool {
        self.has(flags::TOOL_CALL)
    }

    /// Its place in the compacted history, if its text appears there (or a marker names it).
    pub(crate) fn slot_kind(&self) -> Option<SlotKind> {
        if !self.has(flags::TEXT) {
            return None;
        }
        match self.role {
            Role::User => Some(SlotKind::User),
            Role::Assistant => Some(SlotKind::Assistant),
            Role::System => Some(SlotKind::System),
            Role::Tool => None,
        }
    }
}

/// A compaction receipt of the session: its sourceOrder and the checkpoint key it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReceiptRef {
    pub(crate) order: u64,
    pub(crate) key: Hash,
}
