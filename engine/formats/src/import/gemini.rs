//! Gemini CLI chat recordings (placeholder until the importer lands).

use serde_json::{Map, Value};

use super::{ParseOptions, ParsedTranscript};

pub(super) fn parse(_bytes: &[u8], _stem: &str, _options: &ParseOptions) -> ParsedTranscript {
    ParsedTranscript::default()
}

/// Whether one JSONL line is one only Gemini CLI writes.
pub(super) fn is_gemini_line(_map: &Map<String, Value>) -> bool {
    false
}

/// Whether `bytes` is a whole-file Gemini CLI session (the older JSON form).
pub(super) fn is_gemini_document(_bytes: &[u8]) -> bool {
    false
}
