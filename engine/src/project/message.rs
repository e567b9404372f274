//! The output of a projection: provider-neutral messages (a role and blocks in the portable
//! block format), their canonical JSON, and the blake3 hash over it.
//!
//! Canonical bytes: the messages as one JSON array, compact, keys in the order written here,
//! strings escaped as serde_json escapes them. A tool call's input is embedded as JSON when it
//! is a stored JSON object or array (the store keeps those in canonical text), else carried as
//! `inputText`; a blob is referenced by hash, size and media type, never inlined.
//! `hash = blake3("annal.projection.v1\0" ‖ canonical bytes)`.

use std::borrow::Cow;
use std::io::{self, Write};

use crate::hash::{hash_to_hex, Hash};
use crate::record::Role;

const HASH_DOMAIN: &[u8] = b"annal.projection.v1\0";

/// One message of a projection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message<'a> {
    /// Who speaks: `user`, `assistant`, `tool` or `system`.
    pub role: Role,
    /// The content, in order.
    pub blocks: Vec<MessageBlock<'a>>,
}

/// One block of a message, borrowed from the stored records where it is an original.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MessageBlock<'a> {
    /// Text: an original, or a marker, note, label or evidence row annal wrote.
    Text {
        /// The text.
        text: Cow<'a, str>,
    },
    /// Model reasoning (only in the recent tail).
    Thinking {
        /// The reasoning.
        text: Cow<'a, str>,
    },
    /// A tool call whose result follows in the projection.
    ToolCall {
        /// Pairs the call with its result.
        call_id: Cow<'a, str>,
        /// The tool's name.
        tool: Cow<'a, str>,
        /// The input as stored (JSON text for objects and arrays).
        input: Cow<'a, str>,
        /// What the call acts on.
        target: Cow<'a, str>,
    },
    /// The result of a call that precedes it in the projection.
    ToolResult {
        /// The call it answers.
        call_id: Cow<'a, str>,
        /// The tool's name, if the source named it.
        tool: Cow<'a, str>,
        /// Whether the tool failed.
        is_error: bool,
        /// The output.
        output: Cow<'a, str>,
    },
    /// A binary payload, referenced by its blob key.
    Blob {
        /// Its blake3 key.
        hash: Hash,
        /// Its MIME type.
        media_type: Cow<'a, str>,
        /// Its size.
        size_bytes: u64,
    },
}

fn owned(text: Cow<'_, str>) -> Cow<'static, str> {
    Cow::Owned(text.into_owned())
}

impl MessageBlock<'_> {
    /// A copy that owns its text.
    pub fn into_owned(self) -> MessageBlock<'static> {
        match self {
            MessageBlock::Text { text } => MessageBlock::Text { text: owned(text) },
            MessageBlock::Thinking { text } => MessageBlock::Thinking { text: owned(text) },
            MessageBlock::ToolCall { call_id, tool, input, target } => MessageBlock::ToolCall {
                call_id: owned(call_id),
                tool: owned(tool),
                input: owned(input),
                target: owned(target),
            },
            MessageBlock::ToolResult { call_id, tool, is_error, output } => MessageBlock::ToolResult {
                call_id: owned(call_id),
                tool: owned(tool),
                is_error,
                output: owned(output),
            },
            MessageBlock::Blob { hash, media_type, size_bytes } => {
                MessageBlock::Blob { hash, media_type: owned(media_type), size_bytes }
            }
        }
    }

    /// The portable-format name of the block's type.
    pub fn kind(&self) -> &'static str {
        match self {
            MessageBlock::Text { .. } => "text",
            MessageBlock::Thinking { .. } => "thinking",
            MessageBlock::ToolCall { .. } => "toolCall",
            MessageBlock::ToolResult { .. } => "toolResult",
            MessageBlock::Blob { .. } => "blob",
        }
    }
}

impl<'a> Message<'a> {
    /// A message of one text block.
    pub(crate) fn text(role: Role, text: impl Into<Cow<'a, str>>) -> Message<'a> {
        Message { role, blocks: vec![MessageBlock::Text { text: text.into() }] }
    }

    /// A copy that owns its text.
    pub fn into_owned(self) -> Message<'static> {
        Message { role: self.role, blocks: self.blocks.into_iter().map(MessageBlock::into_owned).collect() }
    }
}

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `word` is below 0x20 (a control character), `"` or `\\`: the bytes a
/// JSON string escapes (a zero-byte test on each of the three patterns, eight bytes at a time).
fn needs_escape(word: u64) -> bool {
    let has_zero = |w: u64| w.wrapping_sub(LOW_BITS) & !w & HIGH_BITS != 0;
    let control = word.wrapping_sub(LOW_BITS * 0x20) & !word & HIGH_BITS != 0;
    control || has_zero(word ^ (LOW_BITS * u64::from(b'"'))) || has_zero(word ^ (LOW_BITS * u64::from(b'\\')))
}

/// Writes `text` as a JSON string, escaped exactly as serde_json escapes it (`\"`, `\\`, `\b`,
/// `\f`, `\n`, `\r`, `\t`, other control characters as `\u00xx`), copying runs that need no
/// escape eight bytes at a time: projections are mostly long texts with few escapes.
fn write_str(out: &mut impl Write, text: &str) -> io::Result<()> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.write_all(b"\"")?;
    let mut start = 0;
    let mut at = 0;
    while at < bytes.len() {
        if at + 8 <= bytes.len() {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[at..at + 8]);
            if !needs_escape(u64::from_le_bytes(word)) {
                at += 8;
                continue;
            }
        }
        let byte = bytes[at];
        let short: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0C => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x00..=0x1F => b"",
            _ => {
                at += 1;
                continue;
            }
        };
        out.write_all(&bytes[start..at])?;
        if short.is_empty() {
            out.write_all(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xF)],
            ])?;
        } else {
            out.write_all(short)?;
        }
        at += 1;
        start = at;
    }
    out.write_all(&bytes[start..])?;
    out.write_all(b"\"")
}

/// The deepest an embedded tool input may nest: what serde_json's parser reads back (it stops at
/// 128 levels), as annal's own readers and most of a view's do.
const EMBEDDED_DEPTH_MAX: usize = 127;

/// Whether a stored tool input is JSON to embed: an object or array (the store keeps those in
/// canonical text, so embedding the text as it is keeps the bytes canonical) within
/// [`EMBEDDED_DEPTH_MAX`] levels. Checking it as `IgnoredAny` alone would pass any depth
/// (serde_json skips a value without counting levels), and a view holding an input nested
/// 100,000 deep is JSON that its readers refuse; such an input is carried as `inputText`.
fn is_json_input(input: &str) -> bool {
    let trimmed = input.as_bytes();
    matches!(trimmed.first(), Some(b'{' | b'['))
        && nests_within(input, EMBEDDED_DEPTH_MAX)
        && serde_json::from_str::<serde::de::IgnoredAny>(input).is_ok()
}

/// Whether the arrays and objects of JSON text nest at most `limit` deep (strings skipped).
fn nests_within(json: &str, limit: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in json.as_bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return false;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    true
}

fn write_block(out: &mut impl Write, block: &MessageBlock<'_>) -> io::Result<()> {
    match block {
        MessageBlock::Text { text } | MessageBlock::Thinking { text } => {
            write!(out, "{{\"type\":\"{}\",\"text\":", block.kind())?;
            write_str(out, text)?;
        }
        MessageBlock::ToolCall { call_id, tool, input, target } => {
            out.write_all(b"{\"type\":\"toolCall\",\"callId\":")?;
            write_str(out, call_id)?;
            out.write_all(b",\"tool\":")?;
            write_str(out, tool)?;
            if is_json_input(input) {
                out.write_all(b",\"input\":")?;
                out.write_all(input.as_bytes())?;
            } else {
                out.write_all(b",\"inputText\":")?;
                write_str(out, input)?;
            }
            out.write_all(b",\"target\":")?;
            write_str(out, target)?;
        }
        MessageBlock::ToolResult { call_id, tool, is_error, output } => {
            out.write_all(b"{\"type\":\"toolResult\",\"callId\":")?;
            write_str(out, call_id)?;
            out.write_all(b",\"tool\":")?;
            write_str(out, tool)?;
            write!(out, ",\"isError\":{is_error},\"output\":")?;
            write_str(out, output)?;
        }
        MessageBlock::Blob { hash, media_type, size_bytes } => {
            write!(out, "{{\"type\":\"blob\",\"hash\":\"{}\",\"mediaType\":", hash_to_hex(hash))?;
            write_str(out, media_type)?;
            write!(out, ",\"bytes\":{size_bytes}")?;
        }
    }
    out.write_all(b"}")
}

/// Writes one message as canonical JSON.
pub(crate) fn write_message(out: &mut impl Write, message: &Message<'_>) -> io::Result<()> {
    write!(out, "{{\"role\":\"{}\",\"blocks\":[", message.role.as_str())?;
    for (index, block) in message.blocks.iter().enumerate() {
        if index > 0 {
            out.write_all(b",")?;
        }
        write_block(out, block)?;
    }
    out.write_all(b"]}")
}

/// Writes the messages as one canonical JSON array: the bytes the projection hash covers.
///
/// # Errors
/// What `out` reports.
pub fn write_messages_json(out: &mut impl Write, messages: &[Message<'_>]) -> io::Result<()> {
    out.write_all(b"[")?;
    for (index, message) in messages.iter().enumerate() {
        if index > 0 {
            out.write_all(b",")?;
        }
        write_message(out, message)?;
    }
    out.write_all(b"]")
}

/// The projection hash of `messages`.
pub fn projection_hash(messages: &[Message<'_>]) -> Hash {
    // Written out first and hashed in one call: blake3 hashes a large buffer several chunks at a
    // time, and many small writes one block at a time.
    let mut bytes = Vec::with_capacity(HASH_DOMAIN.len() + messages.len() * 256);
    bytes.extend_from_slice(HASH_DOMAIN);
    // Writing into a Vec cannot fail.
    let _ = write_messages_json(&mut bytes, messages);
    *blake3::hash(&bytes).as_bytes()
}

#[cfg(test)]
mod tests;
