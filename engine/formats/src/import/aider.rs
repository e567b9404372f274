//! aider's Markdown chat history (placeholder until the importer lands).

use super::{ParseOptions, ParsedTranscript};

pub(super) fn parse(_bytes: &[u8], _stem: &str, _options: &ParseOptions) -> ParsedTranscript {
    ParsedTranscript::default()
}

/// Whether `bytes` is an aider chat history.
pub(super) fn is_aider_log(_bytes: &[u8]) -> bool {
    false
}
