//! What people read of the store, shared by the commands and the demo. A stored record (`show`)
//! is a header line with sourceOrder, role, timestamp and entryId, then one paragraph per block,
//! with long tool output cut to its first and last lines (and the first line that reports an
//! error) and a note of how many lines were left out. A search hit (`history search`) is a
//! header line and the snippet; an original read back by id (`history get`) its metadata, then
//! each block's header and its text verbatim.

use std::io::Write;

use annal::snapshot::{BlockView, RecordView};
use annal::{Hit, Original, OriginalBlock, Snapshot};

use crate::output::{bytes, count, cut, hex, plural};

/// How much of each block to print.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Style {
    /// Lines of text and thinking blocks to print before cutting (`usize::MAX`: all).
    pub(crate) text_lines: usize,
    /// Lines of tool output to keep from the start when an output is cut.
    pub(crate) output_head: usize,
    /// Lines of tool output to keep from the end when an output is cut.
    pub(crate) output_tail: usize,
    /// Characters per printed line before it is cut.
    pub(crate) width: usize,
}

impl Style {
    /// What `show` prints: text in full, tool output cut.
    pub(crate) const SHOW: Style =
        Style { text_lines: usize::MAX, output_head: 6, output_tail: 2, width: 160 };
}

const INDENT: &str = "    ";
const BODY: &str = "      ";

/// Writes one record in its readable form.
pub(crate) fn write_record(
    out: &mut impl Write,
    snapshot: &Snapshot,
    view: &RecordView<'_>,
    style: &Style,
) -> anyhow::Result<()> {
    let timestamp = view.timestamp().unwrap_or("-");
    writeln!(out, "#{}  {}  {}  {}", view.source_order(), view.role(), timestamp, view.entry_id())?;
    for block in view.blocks() {
        write_block(out, snapshot, block, style)?;
    }
    Ok(())
}

fn write_block(
    out: &mut impl Write,
    snapshot: &Snapshot,
    block: BlockView<'_>,
    style: &Style,
) -> anyhow::Result<()> {
    match block {
        BlockView::Text { text } => {
            let text = snapshot.text(text)?;
            write_prose(out, "", &text, style)?;
        }
        BlockView::Thinking { text } => {
            let text = snapshot.text(text)?;
            write_prose(out, "(thinking) ", &text, style)?;
        }
        BlockView::ToolCall { call_id, tool, input, target } => {
            let shown =
                if target.is_empty() { snapshot.text(input)?.into_owned() } else { target.to_owned() };
            let line = format!("{INDENT}→ {tool} {}", shown.replace(['\n', '\r'], " "));
            writeln!(out, "{}  [{call_id}]", cut(&line, style.width))?;
        }
        BlockView::ToolResult { call_id, tool, is_error, output } => {
            let output = snapshot.text(output)?;
            let lines: Vec<&str> = output.lines().collect();
            let tool = if tool.is_empty() { "result" } else { tool };
            let status = if is_error { "ERROR" } else { "ok" };
            let size = match lines.len() {
                0 => "empty".to_owned(),
                1 => format!("1 line, {}", bytes(output.len() as u64)),
                n => format!("{} lines, {}", count(n as u64), bytes(output.len() as u64)),
            };
            writeln!(out, "{INDENT}← {tool} {status} ({size})  [{call_id}]")?;
            write_cut_lines(out, &lines, style)?;
        }
        BlockView::Blob { hash, media_type, size_bytes } => {
            let hash = hex(&hash);
            writeln!(out, "{INDENT}[{media_type}, {}, blob {}]", bytes(size_bytes), &hash[..16])?;
        }
    }
    Ok(())
}

/// Text or thinking: every line indented, the first one labelled.
fn write_prose(out: &mut impl Write, label: &str, text: &str, style: &Style) -> anyhow::Result<()> {
    let lines: Vec<&str> = text.lines().collect();
    let shown = lines.len().min(style.text_lines);
    for (index, line) in lines.iter().take(shown).enumerate() {
        let label = if index == 0 { label } else { "" };
        let line = format!("{INDENT}{label}{line}");
        writeln!(out, "{}", cut(&line, style.width).trim_end())?;
    }
    if shown < lines.len() {
        writeln!(out, "{INDENT}… {} more lines", count((lines.len() - shown) as u64))?;
    }
    Ok(())
}

/// Whether a line of tool output says what went wrong (compilers, test runners, panics).
fn is_signal(line: &str) -> bool {
    line.starts_with("error")
        || line.contains("panicked at")
        || line.contains("FAILED")
        || line.contains(" WARN ")
}

/// Tool output: all of it when short; else its head, the first line in the part left out that
/// says what went wrong (if any), and its tail, with notes of how many lines were left out.
fn write_cut_lines(out: &mut impl Write, lines: &[&str], style: &Style) -> anyhow::Result<()> {
    let (head, tail) = (style.output_head, style.output_tail);
    let body = |out: &mut dyn Write, line: &str| {
        writeln!(out, "{}", cut(&format!("{BODY}{line}"), style.width).trim_end())
    };
    let note = |out: &mut dyn Write, left_out: usize| match left_out {
        0 => Ok(()),
        n => writeln!(out, "{BODY}… {} left out …", plural(n as u64, "line")),
    };
    // Cutting fewer than two lines would print a note as long as what it replaces.
    if lines.len() <= head + tail + 1 {
        for line in lines {
            body(out, line)?;
        }
        return Ok(());
    }
    let middle = head..lines.len() - tail;
    for line in &lines[..head] {
        body(out, line)?;
    }
    match lines[middle.clone()].iter().position(|line| is_signal(line)) {
        Some(at) => {
            note(out, at)?;
            body(out, lines[head + at])?;
            note(out, middle.len() - at - 1)?;
        }
        None => note(out, middle.len())?,
    }
    for line in &lines[middle.end..] {
        body(out, line)?;
    }
    Ok(())
}

/// The readable form of one hit: a header line and the snippet.
pub(crate) fn write_hit(out: &mut impl Write, rank: usize, hit: &Hit, colour: bool) -> std::io::Result<()> {
    let mut what = hit.role.as_str().to_owned();
    if let Some(tool) = &hit.tool {
        what.push_str(&format!(" · {tool}"));
    }
    if hit.kind != "text" {
        what.push_str(&format!(" · {}", hit.kind));
    }
    if hit.is_error {
        what.push_str(" · error");
    }
    writeln!(
        out,
        "{rank:>2}. {}  {}  sourceOrder {}  {what}  score {:.2}",
        hit.session,
        hit.id(),
        hit.source_order,
        hit.score
    )?;
    let snippet =
        if colour { hit.snippet.marked("\x1b[1;33m", "\x1b[0m") } else { hit.snippet.marked("**", "**") };
    writeln!(out, "    {snippet}")
}

/// The header line of one block.
fn block_header(original: &Original, block: &OriginalBlock) -> String {
    let mut parts = vec![format!("block {} of {}", block.index, original.block_count), block.kind.to_owned()];
    parts.extend(block.tool.clone());
    if block.is_error {
        parts.push("error".into());
    }
    if let Some(target) = &block.target {
        parts.push(format!("target {target}"));
    }
    if let Some(call) = &block.call_id {
        parts.push(format!("call {call}"));
    }
    match (block.lines, &block.media_type) {
        (Some((first, last, total)), _) if first > last => {
            parts.push(format!("no lines from {first} (it has {})", count(total as u64)));
        }
        (Some((first, last, total)), _) => {
            parts.push(format!("lines {first}–{last} of {}", count(total as u64)))
        }
        (None, Some(media)) => parts.push(format!("{media}, {}", bytes(block.size_bytes))),
        (None, None) => parts.push(bytes(block.size_bytes)),
    }
    parts.join(" · ")
}

/// Writes the original for people: its metadata, then each block's text verbatim.
pub(crate) fn write_original(out: &mut impl Write, original: &Original) -> std::io::Result<()> {
    writeln!(out, "entry {}", original.entry_id)?;
    let when = original.timestamp.as_deref().unwrap_or("-");
    writeln!(
        out,
        "session {}  sourceOrder {}  role {}  {when}",
        original.session, original.source_order, original.role
    )?;
    for block in &original.blocks {
        writeln!(out, "── {} ──", block_header(original, block))?;
        match &block.text {
            Some(text) => {
                out.write_all(text.as_bytes())?;
                if !text.is_empty() && !text.ends_with('\n') {
                    writeln!(out)?;
                }
            }
            None => writeln!(
                out,
                "(binary; {} stored under blob {})",
                bytes(block.size_bytes),
                block.blob_hash.as_deref().unwrap_or("?")
            )?,
        }
    }
    Ok(())
}
