//! Cline and Roo Code task histories (placeholder until the importer lands).

use super::{ParseOptions, ParsedTranscript};

pub(super) fn parse(_bytes: &[u8], _stem: &str, _options: &ParseOptions) -> ParsedTranscript {
    ParsedTranscript::default()
}

/// Whether `bytes` is a Cline or Roo Code `api_conversation_history.json`.
pub(super) fn is_cline_document(_bytes: &[u8]) -> bool {
    false
}
