//! The readable form of a stored record, shared by `show` and `demo`: a header line with
//! sourceOrder, role, timestamp and entryId, then one paragraph per block, with long tool output
//! cut to its first and last lines (and the first line that reports an error) and a note of how
//! many lines were left out.

use std::io::Write;

use annal::snapshot::{BlockView, RecordView};
use annal::Snapshot;

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
