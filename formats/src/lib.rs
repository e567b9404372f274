//! annal-formats: the transcript formats of the agents annal reads and writes, as functions over
//! records. Parsing turns a transcript's bytes (Claude Code, Codex, OpenCode, annal's own JSONL
//! export) into sessions of [`Record`](annal_engine::Record)s with every skipped line
//! reported; export writes a session as annal JSONL or Markdown, optionally redacted; loading
//! appends a parsed session to a store idempotently.
//!
//! This crate sits above the journal (`annal-engine`) and uses only its public API: the journal
//! knows no transcript format, and a format never touches the store's tables.
#![deny(missing_docs)]

mod agents;
mod export;
mod load;
mod redact;
mod visible;

pub use crate::agents::{
    cursor_cli_children, cursor_cli_meta, kimi_context_number, parse_cursor_cli_chat, parse_cursor_composer,
    parse_kimi_context, parse_kiro_conversation, parse_zed_thread, CursorComposerRow, KiroConversationRow,
    ZedThreadRow,
};
pub use crate::agents::{
    detect_format, parse_crush_session, parse_goose_session, parse_opencode_rows, parse_transcript,
    parse_transcript_with, record_from_responses_item, record_message_blocks, responses_item_text,
    responses_items, session_items, transcript_stem, CrushMessageRow, CrushSessionRow, GooseMessageRow,
    GooseSessionRow, ItemError, OpenCodeMessageRows, ParseOptions, ParsedSession, ParsedTranscript,
    SkipReason, Skipped, TranscriptFormat, AIDER_LOG, RESPONSES_ITEM_KEY, RESPONSES_SEAL_KEY,
};
pub use crate::agents::{Agent, Environment};
pub use crate::export::{
    export_jsonl, export_markdown, parse_export_header, ExportError, ExportHeader, ExportSummary,
    EXPORT_FORMAT, EXPORT_VERSION,
};
pub use crate::load::{load_session, revision_id, LoadError, SessionLoad};
pub use crate::redact::redact;
pub use crate::visible::{is_format_char, visible_format};
