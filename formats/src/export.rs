//! Exports of a session: annal's JSONL (lossless, re-importable with identical hashes) and
//! Markdown (for people), each optionally redacted.

use std::io::{self, Write};

use serde_json::{Map, Value};

use crate::redact::redact;
use crate::visible::visible_format;
use annal_engine::hash_to_hex;
use annal_engine::record_to_json;
use annal_engine::BlockView;
use annal_engine::ReadError;
use annal_engine::SessionInfo;
use annal_engine::Snapshot;

/// The `format` value of an export's header line.
pub const EXPORT_FORMAT: &str = "annal-jsonl";
/// The export format version this build writes and reads.
pub const EXPORT_VERSION: u64 = 1;

/// Tool output longer than this many lines is folded in Markdown exports.
const FOLD_LINES: usize = 12;

/// Exporting failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// Reading the session failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Writing the output failed.
    #[error("cannot write the export: {0}")]
    Write(#[from] io::Error),
}

impl ExportError {
    /// What kind of failure this is.
    pub fn kind(&self) -> annal_engine::ErrorKind {
        match self {
            ExportError::Read(err) => err.kind(),
            ExportError::Write(_) => annal_engine::ErrorKind::Io,
        }
    }
}

/// What an export wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Records written.
    pub records: u64,
}

/// Keys whose string values are identifiers or structure, never free text, so redaction
/// leaves them alone.
const STRUCTURAL_KEYS: &[&str] =
    &["entryId", "role", "timestamp", "callId", "type", "hash", "prevHash", "mediaType"];

fn redact_value(value: &mut Value, key: Option<&str>) {
    match value {
        Value::String(text) if !key.is_some_and(|k| STRUCTURAL_KEYS.contains(&k)) => {
            if let std::borrow::Cow::Owned(masked) = redact(text) {
                *text = masked;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| redact_value(item, None)),
        Value::Object(map) => map.iter_mut().for_each(|(k, v)| redact_value(v, Some(k))),
        _ => {}
    }
}

/// Writes `session` as annal JSONL: a header line, then one portable record per line, the
/// inherited records of a fork included. With `redact`, secrets are masked and the records'
/// hashes are left out (they would no longer verify); the header says so.
///
/// # Errors
/// [`ExportError`].
pub fn export_jsonl(
    snapshot: &Snapshot,
    session: &str,
    redact: bool,
    out: &mut dyn Write,
) -> Result<ExportSummary, ExportError> {
    let info = snapshot.session(session)?.ok_or_else(|| ReadError::UnknownSession(session.to_owned()))?;
    let mut header = Map::new();
    header.insert("format".into(), EXPORT_FORMAT.into());
    header.insert("version".into(), EXPORT_VERSION.into());
    header.insert("session".into(), info.name.clone().into());
    header.insert("parent".into(), info.parent.clone().map_or(Value::Null, Value::String));
    header.insert("forkAt".into(), info.fork_at.map_or(Value::Null, Value::from));
    header.insert("records".into(), info.len.into());
    header.insert("head".into(), hash_to_hex(&info.head).into());
    header.insert("redacted".into(), redact.into());
    serde_json::to_writer(&mut *out, &Value::Object(header)).map_err(io::Error::from)?;
    out.write_all(b"\n")?;
    let mut summary = ExportSummary::default();
    for guard in snapshot.records(session, 0..u64::MAX)? {
        let guard = guard?;
        let mut value = record_to_json(snapshot, &guard.view()?)?;
        if redact {
            redact_value(&mut value, None);
            if let Value::Object(map) = &mut value {
                map.remove("hash");
                map.remove("prevHash");
            }
        }
        serde_json::to_writer(&mut *out, &value).map_err(io::Error::from)?;
        out.write_all(b"\n")?;
        summary.records += 1;
    }
    Ok(summary)
}

/// A code fence longer than any run of backticks in `text`.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat(longest.max(2) + 1)
}

fn code_block(out: &mut dyn Write, text: &str, language: &str) -> io::Result<()> {
    let fence = fence(text);
    writeln!(out, "{fence}{language}\n{}\n{fence}", text.trim_end_matches('\n'))
}

/// Writes `session` as Markdown for people: roles, timestamps, tool calls with their targets,
/// long outputs folded in `<details>`, errors marked.
///
/// # Errors
/// [`ExportError`].
pub fn export_markdown(
    snapshot: &Snapshot,
    session: &str,
    redact_secrets: bool,
    out: &mut dyn Write,
) -> Result<ExportSummary, ExportError> {
    let info = snapshot.session(session)?.ok_or_else(|| ReadError::UnknownSession(session.to_owned()))?;
    // Format characters (a bidi override in a file name) are shown, not obeyed: `visible.rs`.
    let clean = |text: &str| -> String {
        if redact_secrets {
            visible_format(&redact(text)).into_owned()
        } else {
            visible_format(text).into_owned()
        }
    };
    write_markdown_title(out, &info)?;
    let mut summary = ExportSummary::default();
    for guard in snapshot.records(session, 0..u64::MAX)? {
        let guard = guard?;
        let view = guard.view()?;
        write!(out, "## {} · {}", view.source_order(), view.role())?;
        if let Some(timestamp) = view.timestamp() {
            write!(out, " · {timestamp}")?;
        }
        writeln!(out, "\n\n<sub>entry `{}`</sub>\n", visible_format(view.entry_id()))?;
        for block in view.blocks() {
            write_markdown_block(out, snapshot, block, &clean)?;
        }
        summary.records += 1;
    }
    Ok(summary)
}

fn write_markdown_title(out: &mut dyn Write, info: &SessionInfo) -> io::Result<()> {
    writeln!(out, "# Session `{}`\n", visible_format(&info.name))?;
    match (&info.parent, info.fork_at) {
        (Some(parent), Some(at)) => {
            writeln!(out, "{} records; forked from `{}` at {at}.\n", info.len, visible_format(parent))
        }
        _ => writeln!(out, "{} records.\n", info.len),
    }
}

fn write_markdown_block(
    out: &mut dyn Write,
    snapshot: &Snapshot,
    block: BlockView<'_>,
    clean: &dyn Fn(&str) -> String,
) -> Result<(), ExportError> {
    match block {
        BlockView::Text { text } => writeln!(out, "{}\n", clean(&snapshot.text(text)?))?,
        BlockView::Thinking { text } => {
            let text = clean(&snapshot.text(text)?);
            writeln!(out, "<details><summary>thinking</summary>\n\n{text}\n\n</details>\n")?;
        }
        BlockView::ToolCall { call_id, tool, input, target } => {
            write!(out, "**Tool call** `{}`", visible_format(tool))?;
            if !target.is_empty() {
                write!(out, " → `{}`", clean(target).replace('`', "'"))?;
            }
            writeln!(out, " <sub>({})</sub>\n", visible_format(call_id))?;
            code_block(out, &clean(&snapshot.text(input)?), "json")?;
            writeln!(out)?;
        }
        BlockView::ToolResult { call_id, tool, is_error, output } => {
            let output = clean(&snapshot.text(output)?);
            write_markdown_result(out, call_id, tool, is_error, &output)?;
        }
        BlockView::Blob { media_type, size_bytes, hash } => {
            writeln!(out, "*[{media_type}, {size_bytes} bytes, blob {}]*\n", &hash_to_hex(&hash)[..16])?;
        }
    }
    Ok(())
}

/// A tool result's heading, then its output, folded when it is long.
fn write_markdown_result(
    out: &mut dyn Write,
    call_id: &str,
    tool: &str,
    is_error: bool,
    output: &str,
) -> io::Result<()> {
    let mark = if is_error { " — **error** ✗" } else { "" };
    let name = if tool.is_empty() { String::new() } else { format!(" `{}`", visible_format(tool)) };
    writeln!(out, "**Result**{name}{mark} <sub>({})</sub>\n", visible_format(call_id))?;
    let lines = output.lines().count();
    if lines > FOLD_LINES {
        writeln!(out, "<details><summary>{lines} lines</summary>\n")?;
        code_block(out, output, "")?;
        writeln!(out, "\n</details>\n")
    } else {
        code_block(out, output, "")?;
        writeln!(out)
    }
}

/// Reads an export's header line.
///
/// # Errors
/// A message naming what is wrong with the header.
pub fn parse_export_header(line: &str) -> Result<ExportHeader, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("header is not JSON: {e}"))?;
    let format = value.get("format").and_then(Value::as_str);
    if format != Some(EXPORT_FORMAT) {
        return Err(format!("header format is {format:?}, expected {EXPORT_FORMAT:?}"));
    }
    let version = value.get("version").and_then(Value::as_u64).unwrap_or(0);
    if version != EXPORT_VERSION {
        return Err(format!("export version {version} is not supported (this annal reads {EXPORT_VERSION})"));
    }
    let session = value.get("session").and_then(Value::as_str).ok_or("header has no \"session\"")?.to_owned();
    Ok(ExportHeader {
        session,
        parent: value.get("parent").and_then(Value::as_str).map(str::to_owned),
        fork_at: value.get("forkAt").and_then(Value::as_u64),
        redacted: value.get("redacted").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// The header line of an annal JSONL export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportHeader {
    /// The exported session's name.
    pub session: String,
    /// Its parent, if it was a fork.
    pub parent: Option<String>,
    /// Where it was forked.
    pub fork_at: Option<u64>,
    /// Whether secrets were masked (then records carry no hashes).
    pub redacted: bool,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fences_outgrow_backticks() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("has ``` inside"), "````");
    }

    #[test]
    fn header_round_trip_and_errors() {
        let header =
            json!({"format": EXPORT_FORMAT, "version": 1, "session": "s", "parent": "p", "forkAt": 3});
        let parsed = parse_export_header(&header.to_string()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.parent.as_deref(), Some("p"));
        assert_eq!(parsed.fork_at, Some(3));
        assert!(parse_export_header("{}").is_err());
        assert!(parse_export_header(
            &json!({"format": EXPORT_FORMAT, "version": 9, "session": "s"}).to_string()
        )
        .unwrap_err()
        .contains("not supported"));
    }
}
