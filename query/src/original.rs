//! Originals by id: what `history get ENTRY[#BLOCK]` returns, read verbatim from the journal.
//!
//! The ids are the ones projections print (`entry <entryId>` in omission markers) and the
//! evidence index and search hits carry (`entryId` with `blockIndex`, written `entryId#N`).

use std::ops::RangeInclusive;

use annal_engine::{hash_to_hex, BlockView, Payload, Role, Snapshot};

use crate::error::GetError;

/// One block of an original.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OriginalBlock {
    /// Its index in the record.
    pub index: usize,
    /// `text`, `thinking`, `toolCall`, `toolResult` or `blob`.
    pub kind: &'static str,
    /// The tool of a call or result.
    pub tool: Option<String>,
    /// The id pairing a call with its result.
    pub call_id: Option<String>,
    /// A call's target (path, command, URL, pattern).
    pub target: Option<String>,
    /// Whether a tool result reports failure.
    pub is_error: bool,
    /// The text (a call's input), verbatim, or the selected lines of it; `None` for a blob.
    pub text: Option<String>,
    /// When lines were selected: the first and last line returned (1-based) and how many
    /// lines the whole text has.
    pub lines: Option<(usize, usize, usize)>,
    /// A blob's MIME type.
    pub media_type: Option<String>,
    /// A blob's size, or the full text's size in bytes.
    pub size_bytes: u64,
    /// A blob's blake3, in hex.
    pub blob_hash: Option<String>,
}

/// A record, or one block of it, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Original {
    /// The session the record was appended to.
    pub session: String,
    /// The record's entryId.
    pub entry_id: String,
    /// Its sourceOrder in `session`.
    pub source_order: u64,
    /// Who produced it.
    pub role: Role,
    /// When, as RFC 3339 text.
    pub timestamp: Option<String>,
    /// How many blocks the record has.
    pub block_count: usize,
    /// The blocks asked for: all of them, or the one named.
    pub blocks: Vec<OriginalBlock>,
}

/// `text`'s lines `first..=last` (1-based), line endings kept, with the range clipped to the
/// text: the selected part, the first and last line returned, and how many lines there are.
/// An empty selection (the range starts after the last line) returns `""` and `(first, first-1)`.
/// A range from line 0 is read from line 1.
pub fn select_lines(text: &str, lines: RangeInclusive<usize>) -> (&str, usize, usize, usize) {
    let total = text.split_inclusive('\n').count();
    // Clipped to line 1 as well: no line is numbered 0, so `0..=2` once sliced from the end of
    // the text back to the end of line 2, and panicked.
    let (first, last) = ((*lines.start()).max(1), (*lines.end()).min(total));
    let mut start = text.len();
    let mut end = text.len();
    let mut offset = 0;
    for (number, line) in text.split_inclusive('\n').enumerate().map(|(i, l)| (i + 1, l)) {
        if number == first {
            start = offset;
        }
        offset += line.len();
        if number == last {
            end = offset;
            break;
        }
    }
    if first > last {
        return ("", first, first - 1, total);
    }
    (&text[start..end], first, last, total)
}

/// Splits `ENTRY#BLOCK` into its entryId and block, trusting the store over the syntax: an
/// entryId that itself contains `#N` is taken whole when the store has it.
fn resolve_id(snapshot: &Snapshot, id: &str) -> Result<(String, Option<usize>), GetError> {
    if snapshot.entry(id)?.is_some() {
        return Ok((id.to_owned(), None));
    }
    if let Some((entry, block)) = id.rsplit_once('#') {
        if let Ok(block) = block.parse::<usize>() {
            if snapshot.entry(entry)?.is_some() {
                return Ok((entry.to_owned(), Some(block)));
            }
        }
    }
    Err(GetError::UnknownEntry(id.to_owned()))
}

/// The original named by `id` (`ENTRY` or `ENTRY#BLOCK`), verbatim, optionally only the lines
/// `lines` (1-based, inclusive) of each text.
///
/// # Errors
/// [`GetError::UnknownEntry`], [`GetError::UnknownBlock`], [`GetError::InvalidLines`], or a
/// journal read failure.
pub fn get_original(
    snapshot: &Snapshot,
    id: &str,
    lines: Option<RangeInclusive<usize>>,
) -> Result<Original, GetError> {
    check_lines(lines.as_ref())?;
    let (entry_id, block) = resolve_id(snapshot, id)?;
    let (location, guard) = snapshot.record_by_entry(&entry_id)?;
    let view = guard.view()?;
    let block_count = view.block_count();
    let wanted: Vec<usize> = match block {
        Some(block) if block >= block_count => {
            return Err(GetError::UnknownBlock { entry: entry_id, block, blocks: block_count });
        }
        Some(block) => vec![block],
        None => (0..block_count).collect(),
    };
    let mut blocks = Vec::with_capacity(wanted.len());
    for index in wanted {
        let Some(block) = view.block(index) else { continue };
        blocks.push(original_block(snapshot, index, block, lines.as_ref())?);
    }
    Ok(Original {
        session: location.session,
        entry_id,
        source_order: location.source_order,
        role: view.role(),
        timestamp: view.timestamp().map(str::to_owned),
        block_count,
        blocks,
    })
}

/// Refuses a line range that starts at 0 or ends before it starts.
fn check_lines(lines: Option<&RangeInclusive<usize>>) -> Result<(), GetError> {
    if let Some(range) = lines {
        if *range.start() == 0 || range.start() > range.end() {
            return Err(GetError::InvalidLines(format!("{}:{}", range.start(), range.end())));
        }
    }
    Ok(())
}

/// Block `index` as returned: its fields, and its text read from the journal (only `lines` of
/// it when asked).
fn original_block(
    snapshot: &Snapshot,
    index: usize,
    block: BlockView<'_>,
    lines: Option<&RangeInclusive<usize>>,
) -> Result<OriginalBlock, GetError> {
    let mut out = OriginalBlock {
        index,
        kind: block.kind(),
        tool: None,
        call_id: None,
        target: None,
        is_error: false,
        text: None,
        lines: None,
        media_type: None,
        size_bytes: 0,
        blob_hash: None,
    };
    if let Some(payload) = describe_block(&mut out, block) {
        let text = snapshot.text(payload)?;
        out.size_bytes = text.len() as u64;
        out.text = Some(match lines {
            Some(range) => {
                let (part, first, last, total) = select_lines(&text, range.clone());
                out.lines = Some((first, last, total));
                part.to_owned()
            }
            None => text.into_owned(),
        });
    }
    Ok(out)
}

/// Fills `out` with the block's fields other than its text; answers where the text is, or
/// `None` for a blob.
fn describe_block<'a>(out: &mut OriginalBlock, block: BlockView<'a>) -> Option<Payload<'a>> {
    match block {
        BlockView::Text { text } | BlockView::Thinking { text } => Some(text),
        BlockView::ToolCall { call_id, tool, input, target } => {
            out.call_id = Some(call_id.to_owned());
            out.tool = Some(tool.to_owned());
            out.target = Some(target.to_owned()).filter(|t| !t.is_empty());
            Some(input)
        }
        BlockView::ToolResult { call_id, tool, is_error, output } => {
            out.call_id = Some(call_id.to_owned());
            out.tool = Some(tool.to_owned()).filter(|t| !t.is_empty());
            out.is_error = is_error;
            Some(output)
        }
        BlockView::Blob { hash, media_type, size_bytes } => {
            out.media_type = Some(media_type.to_owned());
            out.size_bytes = size_bytes;
            out.blob_hash = Some(hash_to_hex(&hash));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::select_lines;

    #[test]
    fn lines_are_selected_verbatim() {
        let text = "one\ntwo\r\nthree\nfour";
        assert_eq!(select_lines(text, 2..=3), ("two\r\nthree\n", 2, 3, 4));
        assert_eq!(select_lines(text, 4..=99), ("four", 4, 4, 4));
        assert_eq!(select_lines(text, 1..=1), ("one\n", 1, 1, 4));
        assert_eq!(select_lines(text, 7..=9), ("", 7, 6, 4));
        assert_eq!(select_lines("", 1..=3), ("", 1, 0, 0));
        assert_eq!(select_lines(text, 0..=2), ("one\ntwo\r\n", 1, 2, 4));
        assert_eq!(select_lines(text, 0..=0), ("", 1, 0, 4));
    }
}
