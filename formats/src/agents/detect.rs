//! Telling the transcript formats apart from their content: the first lines that are JSON
//! objects for the line formats, the document's shape for OpenCode's export.

use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use super::lines::{lines, read_line, LineValue};
use super::session::str_of;
use super::table::{Probe, DETECTION};
use super::{ParseOptions, TranscriptFormat};
use crate::export::EXPORT_FORMAT;

/// How many JSON lines to look at before giving up: early lines of unknown kinds (a new
/// bookkeeping line type, say) should not hide a format the later lines make plain.
const LINES_TO_TRY: usize = 32;

/// Guesses the format of a transcript from its content, or `None` if it is none of them.
///
/// Whole documents (an OpenCode export, a Gemini CLI JSON session, a Cline task history, an
/// aider log) are told by their shape; line formats by the first line that only one of them
/// writes. Blank lines, `//` comment lines and lines that are not JSON are passed over, so a
/// damaged first line does not hide the format of the rest.
pub fn detect_format(bytes: &[u8]) -> Option<TranscriptFormat> {
    if let Some(format) = first_match(|probe| matches!(probe, Probe::Text(is) if is(bytes))) {
        return Some(format);
    }
    if starts_with_byte(bytes, b'[') {
        return first_match(|probe| matches!(probe, Probe::Array(is) if is(bytes)));
    }
    let options = ParseOptions::default();
    let mut tried = 0;
    for line in lines(bytes) {
        match read_line(&line, &options) {
            LineValue::Json(Value::Object(map)) => {
                if let Some(format) = first_match(|probe| matches!(probe, Probe::Line(is) if is(&map))) {
                    return Some(format);
                }
                tried += 1;
            }
            // The first line of a document written over several lines (`{` alone, say) is
            // not JSON by itself.
            LineValue::Skip(_) if tried == 0 => {
                if let Some(format) = first_match(|probe| matches!(probe, Probe::Document(is) if is(bytes))) {
                    return Some(format);
                }
                tried += 1;
            }
            LineValue::Json(_) | LineValue::Skip(_) => tried += 1,
            LineValue::Blank => {}
        }
        if tried >= LINES_TO_TRY {
            break;
        }
    }
    None
}

/// The first format, in the registry's detection order, whose probe `matches`.
fn first_match(matches: impl Fn(&Probe) -> bool) -> Option<TranscriptFormat> {
    DETECTION.iter().find(|(_, probe)| matches(probe)).map(|(format, _)| *format)
}

/// The first byte that is not white space (after a byte-order mark) is `byte`.
fn starts_with_byte(bytes: &[u8], byte: u8) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&byte)
}

/// The header line of annal's own export.
pub(super) fn is_export_header(map: &Map<String, Value>) -> bool {
    str_of(map, "format") == Some(EXPORT_FORMAT)
}

/// An OpenCode export written on one line.
pub(super) fn is_opencode_line(map: &Map<String, Value>) -> bool {
    map.contains_key("info") && map.get("messages").is_some_and(Value::is_array)
}

/// A portable record (annal's export without its header).
pub(super) fn is_annal_record(map: &Map<String, Value>) -> bool {
    map.contains_key("entryId") && map.contains_key("role")
}

/// Whether `bytes` is one JSON object with `info` and `messages`, read without building it.
pub(super) fn is_opencode_document(bytes: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "info")]
        _info: IgnoredAny,
        #[serde(rename = "messages")]
        _messages: Vec<IgnoredAny>,
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if serde_json::from_slice::<Probe>(bytes).is_ok() {
        return true;
    }
    // A cut-off export is still an export: its opening names `info` first.
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(256)]);
    let rest = text.trim_start().strip_prefix('{').map(str::trim_start);
    rest.is_some_and(|rest| rest.starts_with("\"info\"") || rest.starts_with("\"messages\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect(text: &str) -> Option<TranscriptFormat> {
        detect_format(text.as_bytes())
    }

    #[test]
    fn each_format_by_its_first_lines() {
        use TranscriptFormat::*;
        assert_eq!(detect("{\"format\":\"annal-jsonl\",\"version\":1,\"session\":\"s\"}\n"), Some(Annal));
        assert_eq!(detect("{\"entryId\":\"e\",\"role\":\"user\",\"blocks\":[]}"), Some(Annal));
        assert_eq!(
            detect("{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}"),
            Some(Codex)
        );
        assert_eq!(detect("{\"type\":\"message\",\"role\":\"user\",\"content\":[]}"), Some(Codex));
        assert_eq!(detect("{\"type\":\"summary\",\"summary\":\"s\",\"leafUuid\":\"u\"}"), Some(Claude));
        assert_eq!(
            detect("// two\n// comments\n\n{\"type\":\"queue-operation\",\"sessionId\":\"s\"}"),
            Some(Claude)
        );
        assert_eq!(detect("{\"info\":{},\"messages\":[]}"), Some(OpenCode));
        assert_eq!(detect("{\n  \"info\": {\"id\": \"ses\"},\n  \"messages\": [\n  ]\n}\n"), Some(OpenCode));
        assert_eq!(detect("{\n  \"info\": {\"id\": \"ses\"},\n  \"messages\": [\n"), Some(OpenCode));
    }

    #[test]
    fn not_a_transcript() {
        assert_eq!(detect(""), None);
        assert_eq!(detect("# a markdown file\n\nhello\n"), None);
        assert_eq!(detect("[1, 2, 3]\n{\"a\": 1}\n"), None);
        assert_eq!(detect_format(b"\xFF\xFE\x00"), None);
        let many_unknown = "{\"x\":1}\n".repeat(40) + "{\"type\":\"user\",\"uuid\":\"u\"}\n";
        assert_eq!(detect(&many_unknown), None);
    }
}
