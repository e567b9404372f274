//! Borrowed views of stored records: text is read in place from the archived bytes.

use crate::codec::{ArchivedBlock, ArchivedPayload, ArchivedRecord};
use crate::hash::Hash;
use crate::record::Role;

/// A text payload of a stored block: borrowed in place, or a reference to the blob table
/// (resolve it with [`Snapshot::text`](crate::Snapshot::text)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload<'a> {
    /// The text, borrowed from the archived record.
    Inline(&'a str),
    /// A large text stored once in the blob table.
    Blob {
        /// The blob's blake3 key.
        hash: Hash,
        /// Its length in bytes.
        len_bytes: u64,
    },
}

impl<'a> Payload<'a> {
    /// The payload's length in bytes.
    pub fn len_bytes(&self) -> u64 {
        match self {
            Payload::Inline(text) => text.len() as u64,
            Payload::Blob { len_bytes, .. } => *len_bytes,
        }
    }

    fn of(payload: &'a ArchivedPayload) -> Payload<'a> {
        match payload {
            ArchivedPayload::Inline(text) => Payload::Inline(text.as_str()),
            ArchivedPayload::Blob { hash, len } => Payload::Blob { hash: *hash, len_bytes: len.to_native() },
        }
    }
}

/// One block of a stored record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockView<'a> {
    /// Plain text.
    Text {
        /// The text.
        text: Payload<'a>,
    },
    /// Model reasoning.
    Thinking {
        /// The reasoning.
        text: Payload<'a>,
    },
    /// A tool invocation.
    ToolCall {
        /// Pairs the call with its result.
        call_id: &'a str,
        /// The tool's name.
        tool: &'a str,
        /// The input, as JSON text.
        input: Payload<'a>,
        /// What the call acts on.
        target: &'a str,
    },
    /// A tool's outcome.
    ToolResult {
        /// The call this answers.
        call_id: &'a str,
        /// The tool's name, if the source named it.
        tool: &'a str,
        /// Whether the tool failed.
        is_error: bool,
        /// The output.
        output: Payload<'a>,
    },
    /// A binary payload in the blob table.
    Blob {
        /// Its blake3 key.
        hash: Hash,
        /// Its MIME type.
        media_type: &'a str,
        /// Its size.
        size_bytes: u64,
    },
}

impl BlockView<'_> {
    /// The portable-format name of this block's type.
    pub fn kind(&self) -> &'static str {
        match self {
            BlockView::Text { .. } => "text",
            BlockView::Thinking { .. } => "thinking",
            BlockView::ToolCall { .. } => "toolCall",
            BlockView::ToolResult { .. } => "toolResult",
            BlockView::Blob { .. } => "blob",
        }
    }
}

/// A stored record, borrowed from its archived bytes inside a read transaction.
#[derive(Clone, Copy)]
pub struct RecordView<'a> {
    archived: &'a ArchivedRecord,
    role: Role,
    source_order: u64,
}

impl std::fmt::Debug for RecordView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordView")
            .field("source_order", &self.source_order)
            .field("entry_id", &self.entry_id())
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl<'a> RecordView<'a> {
    /// Wraps a validated archive; `None` if its role tag is unknown.
    pub(crate) fn new(archived: &'a ArchivedRecord, source_order: u64) -> Option<RecordView<'a>> {
        let role = Role::from_tag(archived.role)?;
        Some(RecordView { archived, role, source_order })
    }

    /// The record's position in its session.
    pub fn source_order(&self) -> u64 {
        self.source_order
    }

    /// The record's id.
    pub fn entry_id(&self) -> &'a str {
        self.archived.entry_id.as_str()
    }

    /// Who produced it.
    pub fn role(&self) -> Role {
        self.role
    }

    /// When, as RFC 3339 text.
    pub fn timestamp(&self) -> Option<&'a str> {
        self.archived.timestamp.as_ref().map(|t| t.as_str())
    }

    /// The number of blocks.
    pub fn block_count(&self) -> usize {
        self.archived.blocks.len()
    }

    /// The block at `index`.
    pub fn block(&self, index: usize) -> Option<BlockView<'a>> {
        self.archived.blocks.get(index).map(block_view)
    }

    /// The blocks in order.
    pub fn blocks(&self) -> impl ExactSizeIterator<Item = BlockView<'a>> + 'a {
        self.archived.blocks.iter().map(block_view)
    }

    /// The source format's metadata: key and JSON text, sorted by key.
    pub fn meta(&self) -> impl ExactSizeIterator<Item = (&'a str, &'a str)> + 'a {
        self.archived.meta.iter().map(|entry| (entry.key.as_str(), entry.value.as_str()))
    }

    /// The chain hash: commits to the previous record's hash and this record's content.
    pub fn hash(&self) -> Hash {
        self.archived.hash
    }

    /// The previous record's chain hash (zero for the first record).
    pub fn prev_hash(&self) -> Hash {
        self.archived.prev_hash
    }

    pub(crate) fn archived(&self) -> &'a ArchivedRecord {
        self.archived
    }
}

fn block_view(block: &ArchivedBlock) -> BlockView<'_> {
    match block {
        ArchivedBlock::Text(text) => BlockView::Text { text: Payload::of(text) },
        ArchivedBlock::Thinking(text) => BlockView::Thinking { text: Payload::of(text) },
        ArchivedBlock::ToolCall { call_id, tool, input, target } => BlockView::ToolCall {
            call_id: call_id.as_str(),
            tool: tool.as_str(),
            input: Payload::of(input),
            target: target.as_str(),
        },
        ArchivedBlock::ToolResult { call_id, tool, is_error, output } => BlockView::ToolResult {
            call_id: call_id.as_str(),
            tool: tool.as_str(),
            is_error: *is_error,
            output: Payload::of(output),
        },
        ArchivedBlock::Blob { hash, media_type, size_bytes } => BlockView::Blob {
            hash: *hash,
            media_type: media_type.as_str(),
            size_bytes: size_bytes.to_native(),
        },
    }
}
