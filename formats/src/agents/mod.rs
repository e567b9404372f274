//! Transcript import, parsing layer: turns the bytes of an agent transcript (Claude Code JSONL,
//! Codex CLI rollout JSONL, OpenCode `export` JSON, annal's own JSONL export) into sessions of
//! [`Record`](annal_engine::Record)s, and reports every line it had to skip. Nothing here
//! touches a store or a file system; walking folders and appending belong to the caller.
//!
//! Two promises hold for every format, because re-importing must be a no-op in the store:
//! - the same bytes always parse to the same records (entryIds come from the source's own ids,
//!   or are derived from the session name and line number, never random);
//! - bytes appended to a transcript (a session that went on) parse to the same records as
//!   before, plus new ones at the end. So each source line becomes its own record, and nothing
//!   later in a file is folded back into an earlier record.
//!
//! What a format carries that has no block form goes to the record's `meta`, as canonical JSON
//! text per key, so an export loses nothing. Bad input never aborts a file.

mod aider;
mod amp;
mod annal;
mod anthropic;
mod claude;
mod cline;
mod codex;
#[path = "continue/mod.rs"]
mod continue_dev;
mod copilot;
mod crush;
#[path = "cursor/cli.rs"]
mod cursor_cli;
#[path = "cursor/ide/mod.rs"]
mod cursor_ide;
#[path = "cursor/transcript/mod.rs"]
mod cursor_transcript;
mod detect;
mod environment;
mod factory;
mod gemini;
mod goose;
mod kimi;
mod kiro;
#[path = "kiro/log.rs"]
mod kiro_log;
mod lines;
mod opencode;
#[path = "opencode/rows.rs"]
mod opencode_rows;
mod openhands;
mod parsed;
mod pi;
mod places;
mod qwen;
mod responses;
mod row;
mod session;
mod table;
#[path = "vscode/mod.rs"]
mod vscode_chat;
mod zed;

use std::fmt;

pub use self::crush::{parse_crush_session, CrushMessageRow, CrushSessionRow};
pub use self::cursor_cli::{cursor_cli_children, cursor_cli_meta, parse_cursor_cli_chat};
pub use self::cursor_ide::{parse_cursor_composer, CursorComposerRow};
pub use self::detect::detect_format;
pub use self::environment::Environment;
pub use self::goose::{parse_goose_session, GooseMessageRow, GooseSessionRow};
pub use self::kimi::{kimi_context_number, parse_kimi_context};
pub use self::kiro::{parse_kiro_conversation, KiroConversationRow};
pub use self::opencode_rows::{parse_opencode_rows, OpenCodeMessageRows};
pub use self::parsed::{ParseOptions, ParsedSession, ParsedTranscript, SkipReason, Skipped};
pub use self::responses::{
    record_from_responses_item, record_message_blocks, responses_item_text, responses_items, session_items,
    ItemError, RESPONSES_ITEM_KEY, RESPONSES_SEAL_KEY,
};
pub use self::table::Agent;
pub use self::zed::{parse_zed_thread, ZedThreadRow};

/// The transcript formats annal can import.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TranscriptFormat {
    /// Claude Code session JSONL, sub-agent files included.
    Claude,
    /// Codex CLI rollout JSONL.
    Codex,
    /// The JSON document `opencode export` writes.
    OpenCode,
    /// annal's own JSONL export: a header line, then one portable record per line.
    Annal,
    /// Gemini CLI chat recordings: the JSONL log, and the older whole-file JSON.
    Gemini,
    /// aider's `.aider.chat.history.md` Markdown log.
    Aider,
    /// A Cline or Roo Code task's `api_conversation_history.json`.
    Cline,
    /// A Pi coding agent session JSONL: a `session` header, then entries.
    Pi,
    /// Qwen Code chat JSONL: one `ChatRecord` per line, Google GenAI message parts.
    Qwen,
    /// GitHub Copilot CLI session events (`events.jsonl`), and the older CLI's whole-session
    /// documents (`history-session-state/*.json`).
    Copilot,
    /// A Continue session (`~/.continue/sessions/<id>.json`), rewritten whole on every save.
    Continue,
    /// A GitHub Copilot Chat session as VS Code stores it: the whole state, or a log of changes.
    VsCodeChat,
    /// OpenHands events: one event per file, or an array of them (a trajectory).
    OpenHands,
    /// Kimi CLI context JSONL: the messages the model is given, one per line.
    Kimi,
    /// Factory's Droid session JSONL: a `session_start` line, then one typed line per event.
    Factory,
    /// An Amp thread: one JSON document (a local thread file, or `amp threads export`).
    Amp,
    /// Kiro CLI's session log (`~/.kiro/sessions/cli/<session>.jsonl`): one entry per line.
    KiroLog,
    /// Cursor's agent transcripts (`agent-transcripts/<session>.jsonl`): one message per line.
    CursorTranscript,
}

impl TranscriptFormat {
    /// Every format, in the order [`detect_format`] prefers them.
    pub const ALL: [TranscriptFormat; 18] = [
        TranscriptFormat::Annal,
        TranscriptFormat::Gemini,
        TranscriptFormat::Factory,
        TranscriptFormat::KiroLog,
        TranscriptFormat::CursorTranscript,
        TranscriptFormat::Pi,
        TranscriptFormat::Qwen,
        TranscriptFormat::Copilot,
        TranscriptFormat::Kimi,
        TranscriptFormat::Codex,
        TranscriptFormat::Claude,
        TranscriptFormat::OpenCode,
        TranscriptFormat::Cline,
        TranscriptFormat::Continue,
        TranscriptFormat::VsCodeChat,
        TranscriptFormat::OpenHands,
        TranscriptFormat::Amp,
        TranscriptFormat::Aider,
    ];

    /// The lower-case name used on the command line: `claude`, `codex`, `opencode`, `annal`,
    /// `gemini`, `aider`, `cline`, `pi`, `qwen`, `copilot`, `continue`, `vscode`, `openhands`, `kimi`, `factory`, `amp`, `kiro`, `cursor`.
    pub fn name(self) -> &'static str {
        match self {
            TranscriptFormat::Claude => "claude",
            TranscriptFormat::Codex => "codex",
            TranscriptFormat::OpenCode => "opencode",
            TranscriptFormat::Annal => "annal",
            TranscriptFormat::Gemini => "gemini",
            TranscriptFormat::Aider => "aider",
            TranscriptFormat::Cline => "cline",
            TranscriptFormat::Pi => "pi",
            TranscriptFormat::Qwen => "qwen",
            TranscriptFormat::Copilot => "copilot",
            TranscriptFormat::Continue => "continue",
            TranscriptFormat::VsCodeChat => "vscode",
            TranscriptFormat::OpenHands => "openhands",
            TranscriptFormat::Kimi => "kimi",
            TranscriptFormat::Factory => "factory",
            TranscriptFormat::Amp => "amp",
            TranscriptFormat::KiroLog => "kiro",
            TranscriptFormat::CursorTranscript => "cursor",
        }
    }

    /// Parses a name as written by [`TranscriptFormat::name`].
    pub fn parse(name: &str) -> Option<TranscriptFormat> {
        TranscriptFormat::ALL.into_iter().find(|format| format.name() == name)
    }
}

impl fmt::Display for TranscriptFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// aider's log file name, the same in every project.
pub const AIDER_LOG: &str = ".aider.chat.history.md";

/// The name a transcript file gives a session that carries no id of its own: the file's stem,
/// without a compression suffix (`rollout-….jsonl.zst`); for a Cline or Roo Code task file
/// (`<task id>/api_conversation_history.json`) or a Copilot CLI session (`<session>/events.jsonl`)
/// the folder's name, for an OpenHands event (`<conversation>/events/<event>.json`) the
/// conversation's, for a Kimi CLI context (`<session>/context.jsonl`, `context_<n>.jsonl`)
/// the session's (`<session>/agent-<id>` for a sub-agent's), and for an aider log
/// (`<project>/.aider.chat.history.md`) the project folder's name.
pub fn transcript_stem(path: &std::path::Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if name == "api_conversation_history.json" || name == "events.jsonl" {
        if let Some(task) = path.parent().and_then(std::path::Path::file_name) {
            return task.to_string_lossy().into_owned();
        }
    }
    if kimi::kimi_context_number(&name).is_some() {
        if let Some(stem) = kimi::session_of(path) {
            return stem;
        }
    }
    // An OpenHands event file: `<conversation>/events/<event>.json`.
    let parent = path.parent();
    if parent.and_then(std::path::Path::file_name).is_some_and(|folder| folder == "events") {
        if let Some(conversation) =
            parent.and_then(std::path::Path::parent).and_then(std::path::Path::file_name)
        {
            return conversation.to_string_lossy().into_owned();
        }
    }
    // A Cursor sub-agent's transcript: `agent-transcripts/<parent>/subagents/<session>.jsonl`.
    if parent.and_then(std::path::Path::file_name).is_some_and(|folder| folder == "subagents")
        && path.components().any(|part| part.as_os_str() == "agent-transcripts")
    {
        let owner = parent.and_then(std::path::Path::parent).and_then(std::path::Path::file_name);
        if let (Some(owner), Some((stem, _))) = (owner, name.rsplit_once('.')) {
            return format!("{}{}{stem}", owner.to_string_lossy(), cursor_transcript::SUBAGENTS);
        }
    }
    // Every aider log has the same name: its project folder names its sessions.
    if let Some(prefix) = name.strip_suffix(AIDER_LOG) {
        let folder = path.parent().and_then(std::path::Path::file_name);
        return match (prefix, folder) {
            ("", Some(folder)) => folder.to_string_lossy().into_owned(),
            ("", None) => "aider".to_owned(),
            (prefix, _) => prefix.to_owned(),
        };
    }
    let name = name.strip_suffix(".zst").unwrap_or(&name);
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_owned(),
        _ => name.to_owned(),
    }
}

/// Parses a transcript with the default [`ParseOptions`].
///
/// `file_stem` names the session when the source does not (and tells a Claude Code sub-agent
/// file by its `agent-` prefix when its lines do not say). Never fails and never panics: what
/// cannot be read is listed in [`ParsedTranscript::skipped`].
///
/// ```
/// use annal_engine::Role;
/// use annal_formats::{parse_transcript, TranscriptFormat};
/// let jsonl = br#"{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":"hi"}}
/// not json
/// "#;
/// let parsed = parse_transcript(jsonl, TranscriptFormat::Claude, "s1");
/// assert_eq!(parsed.sessions[0].name, "s1");
/// assert_eq!(parsed.sessions[0].records[0].role, Role::User);
/// assert_eq!(parsed.skipped[0].to_string(), "line 2: not JSON (expected ident at column 2)");
/// ```
pub fn parse_transcript(bytes: &[u8], format: TranscriptFormat, file_stem: &str) -> ParsedTranscript {
    parse_transcript_with(bytes, format, file_stem, &ParseOptions::default())
}

/// Parses a transcript with explicit [`ParseOptions`]; see [`parse_transcript`].
pub fn parse_transcript_with(
    bytes: &[u8],
    format: TranscriptFormat,
    file_stem: &str,
    options: &ParseOptions,
) -> ParsedTranscript {
    let stem = if file_stem.is_empty() { "transcript" } else { file_stem };
    match format {
        TranscriptFormat::Claude => claude::parse(bytes, stem, options),
        TranscriptFormat::Codex => codex::parse(bytes, stem, options),
        TranscriptFormat::OpenCode => opencode::parse(bytes, stem, options),
        TranscriptFormat::Annal => annal::parse(bytes, stem, options),
        TranscriptFormat::Gemini => gemini::parse(bytes, stem, options),
        TranscriptFormat::Aider => aider::parse(bytes, stem, options),
        TranscriptFormat::Cline => cline::parse(bytes, stem, options),
        TranscriptFormat::Pi => pi::parse(bytes, stem, options),
        TranscriptFormat::Qwen => qwen::parse(bytes, stem, options),
        TranscriptFormat::Copilot => copilot::parse(bytes, stem, options),
        TranscriptFormat::Continue => continue_dev::parse(bytes, stem, options),
        TranscriptFormat::VsCodeChat => vscode_chat::parse(bytes, stem, options),
        TranscriptFormat::OpenHands => openhands::parse(bytes, stem, options),
        TranscriptFormat::Kimi => kimi::parse(bytes, stem, options),
        TranscriptFormat::Factory => factory::parse(bytes, stem, options),
        TranscriptFormat::Amp => amp::parse(bytes, stem, options),
        TranscriptFormat::KiroLog => kiro_log::parse(bytes, stem, options),
        TranscriptFormat::CursorTranscript => cursor_transcript::parse(bytes, stem, options),
    }
}

#[cfg(test)]
mod tests;
