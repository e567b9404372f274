//! Splitting a line-based transcript into lines and reading each as JSON, classifying every
//! line that cannot be read (comment, not UTF-8, not JSON, too deep, truncated, too large).

use serde_json::{Map, Value};

use super::detect::foreign_format;
use super::{ParseOptions, ParsedTranscript, SkipReason, Skipped, TranscriptFormat};

/// One physical line of a file, without its line ending.
#[derive(Clone, Copy, Debug)]
pub(super) struct Line<'a> {
    /// 1-based.
    pub(super) number: usize,
    pub(super) bytes: &'a [u8],
    /// The file ends inside this line (no newline after it).
    pub(super) unterminated: bool,
}

/// The lines of `bytes`, split at `\n` (a `\r` before it is dropped). A UTF-8 byte order mark
/// at the start of the file is not part of the first line.
pub(super) fn lines(bytes: &[u8]) -> impl Iterator<Item = Line<'_>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut rest = bytes;
    let mut number = 0usize;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        number += 1;
        let (line, unterminated) = match rest.iter().position(|&b| b == b'\n') {
            Some(end) => {
                let line = &rest[..end];
                rest = &rest[end + 1..];
                (line, false)
            }
            None => (std::mem::take(&mut rest), true),
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        Some(Line { number, bytes: line, unterminated })
    })
}

/// What a line holds.
#[derive(Debug)]
pub(super) enum LineValue {
    /// Only whitespace: not a record, not worth reporting.
    Blank,
    Json(Value),
    Skip(SkipReason),
}

/// Reads one line as JSON.
pub(super) fn read_line(line: &Line<'_>, options: &ParseOptions) -> LineValue {
    if line.bytes.len() > options.max_line_bytes {
        return LineValue::Skip(SkipReason::TooLarge {
            bytes: line.bytes.len(),
            limit: options.max_line_bytes,
        });
    }
    let text = match std::str::from_utf8(line.bytes) {
        Ok(text) => text,
        // Cut inside a character at the end of the file: a write still going on.
        Err(err) if err.error_len().is_none() && line.unterminated => {
            return LineValue::Skip(SkipReason::Truncated)
        }
        Err(err) => return LineValue::Skip(SkipReason::NotUtf8 { valid_up_to: err.valid_up_to() }),
    };
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return LineValue::Blank;
    }
    if trimmed.starts_with("//") {
        return LineValue::Skip(SkipReason::Comment);
    }
    // serde_json's default recursion limit (128) stays on: a deeper line is an error, not a
    // stack overflow.
    match serde_json::from_str::<Value>(text) {
        Ok(value) => LineValue::Json(value),
        Err(err) if err.is_eof() && line.unterminated => LineValue::Skip(SkipReason::Truncated),
        Err(err) => LineValue::Skip(json_error(&err)),
    }
}

/// Reads a JSON-lines transcript of one format, `own`: a line that cannot be read is reported in
/// `parsed.skipped`, and so is a line of another format's shape (a line of another agent's
/// transcript pasted or appended into this one), which is not stored; each other JSON line is
/// counted as recognised when `is_own` says the format writes lines like it (otherwise as
/// unrecognised), then handed to `each` with its line number.
pub(super) fn read_json_lines(
    bytes: &[u8],
    options: &ParseOptions,
    own: TranscriptFormat,
    is_own: fn(&Map<String, Value>) -> bool,
    parsed: &mut ParsedTranscript,
    mut each: impl FnMut(usize, Value),
) {
    for line in lines(bytes) {
        match read_line(&line, options) {
            LineValue::Blank => {}
            LineValue::Skip(reason) => parsed.skipped.push(Skipped { line: line.number, reason }),
            LineValue::Json(value) => {
                let map = value.as_object();
                if map.is_some_and(is_own) {
                    parsed.recognised += 1;
                } else if let Some(other) = map.and_then(|map| foreign_format(map, own)) {
                    parsed.unrecognised += 1;
                    let reason = SkipReason::Invalid(format!("a line in {other}'s format, not {own}'s"));
                    parsed.skipped.push(Skipped { line: line.number, reason });
                    continue;
                } else {
                    parsed.unrecognised += 1;
                }
                each(line.number, value);
            }
        }
    }
}

/// The bytes of a whole-document transcript, without a byte-order mark; `None`, with the reason
/// in `parsed.skipped`, when it is larger than [`ParseOptions::max_document_bytes`].
pub(super) fn document_body<'b>(
    bytes: &'b [u8],
    options: &ParseOptions,
    parsed: &mut ParsedTranscript,
) -> Option<&'b [u8]> {
    if bytes.len() > options.max_document_bytes {
        let reason = SkipReason::TooLarge { bytes: bytes.len(), limit: options.max_document_bytes };
        parsed.skipped.push(Skipped { line: 1, reason });
        return None;
    }
    Some(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes))
}

/// A whole-document transcript's JSON; `None`, with the reason in `parsed.skipped`, when it is
/// too large, cut short or not JSON.
pub(super) fn document_value(
    bytes: &[u8],
    options: &ParseOptions,
    parsed: &mut ParsedTranscript,
) -> Option<Value> {
    let body = document_body(bytes, options, parsed)?;
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => Some(value),
        Err(err) => {
            let reason = if err.is_eof() { SkipReason::Truncated } else { json_error(&err) };
            parsed.skipped.push(Skipped { line: err.line().max(1), reason });
            None
        }
    }
}

/// A whole-document transcript that must be a JSON object (`what` names it in the reason when
/// it is another value); `None`, with the reason in `parsed.skipped`, otherwise.
pub(super) fn document_object(
    bytes: &[u8],
    options: &ParseOptions,
    parsed: &mut ParsedTranscript,
    what: &str,
) -> Option<Map<String, Value>> {
    match document_value(bytes, options, parsed)? {
        Value::Object(map) => Some(map),
        _ => {
            let reason = SkipReason::Invalid(format!("{what} is a JSON object"));
            parsed.skipped.push(Skipped { line: 1, reason });
            None
        }
    }
}

/// Notes in `parsed.skipped`, at line 1, that a whole document lacks what its format requires
/// (`reason` says what that is), so a file of another shape read with `--format` is refused
/// with the reason rather than a bare count.
pub(super) fn note_shape(parsed: &mut ParsedTranscript, shaped: bool, reason: &str) {
    if !shaped {
        // Skips stay in file order: lines read before the shape was known may already be there.
        let at = parsed.skipped.partition_point(|skipped| skipped.line <= 1);
        parsed.skipped.insert(at, Skipped { line: 1, reason: SkipReason::Invalid(reason.to_owned()) });
    }
}

/// Classifies a serde_json error, without its " at line L column C" suffix (the caller knows
/// the line).
pub(super) fn json_error(err: &serde_json::Error) -> SkipReason {
    let full = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full);
    // serde_json reports its recursion limit only through the message.
    if message == "recursion limit exceeded" {
        return SkipReason::TooDeep;
    }
    SkipReason::NotJson { message: message.to_owned(), column: err.column() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &[u8]) -> Vec<String> {
        lines(text)
            .map(|line| match read_line(&line, &ParseOptions { max_line_bytes: 64, ..Default::default() }) {
                LineValue::Blank => format!("{} blank", line.number),
                LineValue::Json(value) => format!("{} {value}", line.number),
                LineValue::Skip(reason) => format!("{} {reason}", line.number),
            })
            .collect()
    }

    #[test]
    fn splits_lines_and_classifies_each() {
        let input = b"\xEF\xBB\xBF{\"a\":1}\r\n\n  // note\nnope\n[1,\n\xFF\"x\"\n{\"b\":";
        assert_eq!(
            read(input),
            [
                "1 {\"a\":1}",
                "2 blank",
                "3 comment line (not JSON)",
                "4 not JSON (expected ident at column 2)",
                "5 not JSON (EOF while parsing a value at column 3)",
                "6 not UTF-8 (invalid byte at offset 0)",
                "7 truncated (the file ends inside this line)",
            ]
        );
    }

    #[test]
    fn long_and_deep_lines_are_skipped_not_fatal() {
        let long = format!("\"{}\"\n", "x".repeat(100));
        assert_eq!(read(long.as_bytes()), ["1 too large (102 bytes, over the limit of 64)"]);
        let deep = format!("{}{}", "[".repeat(20_000), "]".repeat(20_000));
        let line = Line { number: 1, bytes: deep.as_bytes(), unterminated: false };
        match read_line(&line, &ParseOptions::default()) {
            LineValue::Skip(SkipReason::TooDeep) => {}
            other => panic!("expected TooDeep, got {other:?}"),
        }
    }

    #[test]
    fn no_trailing_newline_and_empty_input() {
        assert_eq!(read(b"{}"), ["1 {}"]);
        assert!(read(b"").is_empty());
        assert_eq!(read(b"\n"), ["1 blank"]);
        assert_eq!(
            read("{\"a\":\"é".as_bytes().split_last().map_or(&[][..], |(_, rest)| rest)),
            ["1 truncated (the file ends inside this line)"]
        );
        assert_eq!(read(b"\"\xC3\"\n"), ["1 not UTF-8 (invalid byte at offset 1)"]);
    }
}
