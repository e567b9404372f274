//! Transcript import, parsing layer: turns the bytes of an agent transcript (Claude Code JSONL,
//! Codex CLI rollout JSONL, OpenCode `export` JSON, annal's own JSONL export) into sessions of
//! [`Record`]s, and reports every line it had to skip. Nothing here touches a store or a file
//! system; walking folders and appending belong to the caller.
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

use annal_engine::Hash;
use annal_engine::Record;

pub use self::crush::{parse_crush_session, CrushMessageRow, CrushSessionRow};
pub use self::cursor_cli::{cursor_cli_children, cursor_cli_meta, parse_cursor_cli_chat};
pub use self::cursor_ide::{parse_cursor_composer, CursorComposerRow};
pub use self::detect::detect_format;
pub use self::environment::Environment;
pub use self::goose::{parse_goose_session, GooseMessageRow, GooseSessionRow};
pub use self::kimi::{kimi_context_number, parse_kimi_context};
pub use self::kiro::{parse_kiro_conversation, KiroConversationRow};
pub use self::opencode_rows::{parse_opencode_rows, OpenCodeMessageRows};
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

/// Bounds on what one parse accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// The longest line of a line-based format; a longer line is skipped and reported.
    pub max_line_bytes: usize,
    /// The largest single-document transcript (OpenCode); a larger one is reported, not parsed.
    pub max_document_bytes: usize,
}

impl Default for ParseOptions {
    fn default() -> ParseOptions {
        // A line holds one message; 64 MiB fits a large base64 screenshot with room to spare,
        // while a runaway line (a binary file appended by mistake) cannot exhaust memory.
        ParseOptions { max_line_bytes: 64 << 20, max_document_bytes: 1 << 30 }
    }
}

/// What a transcript parsed to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedTranscript {
    /// The sessions found, in the order they were found. Most files hold one.
    pub sessions: Vec<ParsedSession>,
    /// Every line that could not be read, in file order.
    pub skipped: Vec<Skipped>,
    /// Lines or items that were read (valid JSON, say) but are of no kind this format knows.
    /// When they are most of a file, the file is in another format: an import reports it
    /// rather than storing records that carry nothing.
    pub unrecognised: usize,
    /// Lines or items read as something this format knows.
    pub recognised: usize,
}

impl ParsedTranscript {
    /// The records of every session.
    pub fn record_count(&self) -> usize {
        self.sessions.iter().map(|session| session.records.len()).sum()
    }
}

/// One session of a transcript, ready to append.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedSession {
    /// The session's name: the source's session id where it has one, else the file stem.
    pub name: String,
    /// The session this one was forked from (annal exports only).
    pub parent: Option<String>,
    /// The fork point in `parent` (annal exports only).
    pub fork_at: Option<u64>,
    /// The records, in source order.
    pub records: Vec<Record>,
    /// Per record, the `(hash, prevHash)` the source claims for it (annal exports only; `None`
    /// elsewhere), so the caller can check that an import reproduces the exported chain.
    pub claimed_hashes: Vec<Option<(Hash, Hash)>>,
}

/// A line that was not imported, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The 1-based line number in the file.
    pub line: usize,
    /// Why it was skipped.
    pub reason: SkipReason,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

/// Why a line was skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// A `//` comment line, which JSON does not allow.
    Comment,
    /// The line is not UTF-8 text.
    NotUtf8 {
        /// The offset in the line of the first byte that is not UTF-8.
        valid_up_to: usize,
    },
    /// The line is not JSON.
    NotJson {
        /// What the JSON parser said.
        message: String,
        /// The 1-based column where it gave up.
        column: usize,
    },
    /// The JSON nests deeper than the parser's recursion limit (128 levels).
    TooDeep,
    /// The file ends inside this line (a write cut short); it imports once it is complete.
    Truncated,
    /// The line is longer than [`ParseOptions::max_line_bytes`].
    TooLarge {
        /// The line's length.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// Valid JSON that cannot be read as what the format requires at this place.
    Invalid(String),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Comment => f.write_str("comment line (not JSON)"),
            SkipReason::NotUtf8 { valid_up_to } => {
                write!(f, "not UTF-8 (invalid byte at offset {valid_up_to})")
            }
            SkipReason::NotJson { message, column } => write!(f, "not JSON ({message} at column {column})"),
            SkipReason::TooDeep => f.write_str("JSON nested too deeply (over 128 levels)"),
            SkipReason::Truncated => f.write_str("truncated (the file ends inside this line)"),
            SkipReason::TooLarge { bytes, limit } => {
                write!(f, "too large ({bytes} bytes, over the limit of {limit})")
            }
            SkipReason::Invalid(reason) => write!(f, "not a valid record ({reason})"),
        }
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
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Fragments of every format, so random input reaches deep into each parser.
    const PIECES: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\n",
        "\"",
        "null",
        "7",
        "true",
        "//",
        "\u{e9}",
        "\"type\"",
        "\"user\"",
        "\"assistant\"",
        "\"message\"",
        "\"content\"",
        "\"tool_use\"",
        "\"tool_result\"",
        "\"tool_use_id\"",
        "\"id\"",
        "\"uuid\"",
        "\"sessionId\"",
        "\"payload\"",
        "\"response_item\"",
        "\"function_call_output\"",
        "\"call_id\"",
        "\"output\"",
        "\"info\"",
        "\"messages\"",
        "\"parts\"",
        "\"tool\"",
        "\"state\"",
        "\"status\"",
        "\"completed\"",
        "\"format\"",
        "\"annal-jsonl\"",
        "\"version\"",
        "\"role\"",
        "\"blocks\"",
        "\"source\"",
        "\"base64\"",
        "\"data\"",
        "\"image\"",
        "\"time\"",
        "\"created\"",
        "-99999999999999999",
    ];

    fn assemble(indices: &[usize]) -> String {
        indices.iter().map(|&i| PIECES[i % PIECES.len()]).collect()
    }

    proptest! {
        #[test]
        fn any_bytes_parse_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = detect_format(&bytes);
            for format in TranscriptFormat::ALL {
                let _ = parse_transcript(&bytes, format, "f");
            }
        }

        #[test]
        fn json_like_input_parses_deterministically(indices in proptest::collection::vec(0usize..1000, 0..200)) {
            let text = assemble(&indices);
            let _ = detect_format(text.as_bytes());
            for format in TranscriptFormat::ALL {
                let parsed = parse_transcript(text.as_bytes(), format, "f");
                prop_assert_eq!(&parse_transcript(text.as_bytes(), format, "f"), &parsed);
                for session in &parsed.sessions {
                    prop_assert!(session.records.iter().all(|r| !r.entry_id.is_empty()));
                    prop_assert_eq!(session.records.len(), session.claimed_hashes.len());
                }
            }
        }
    }

    #[test]
    fn stems_of_transcript_files() {
        use std::path::Path;
        assert_eq!(transcript_stem(Path::new("a/b/5c03.jsonl")), "5c03");
        assert_eq!(transcript_stem(Path::new("s/2025/01/02/rollout-x.jsonl.zst")), "rollout-x");
        assert_eq!(transcript_stem(Path::new("tasks/1733/api_conversation_history.json")), "1733");
        assert_eq!(transcript_stem(Path::new("session-state/5f0c/events.jsonl")), "5f0c");
        assert_eq!(transcript_stem(Path::new("conversations/9ab/events/event-00001-x.json")), "9ab");
        assert_eq!(
            transcript_stem(Path::new("agent-transcripts/9ab/subagents/7c.jsonl")),
            "9ab/subagents/7c"
        );
        assert_eq!(transcript_stem(Path::new(".claude/projects/p/s1/subagents/agent-a1.jsonl")), "agent-a1");
        assert_eq!(transcript_stem(Path::new("sessions/5d41/9ab/context.jsonl")), "9ab");
        assert_eq!(transcript_stem(Path::new("sessions/5d41/9ab/context_2.jsonl")), "9ab");
        assert_eq!(transcript_stem(Path::new("9ab/subagents/a7/context.jsonl")), "9ab/agent-a7");
        assert_eq!(transcript_stem(Path::new("9ab/context_x.jsonl")), "context_x");
        assert_eq!(transcript_stem(Path::new("code/app/.aider.chat.history.md")), "app");
        assert_eq!(transcript_stem(Path::new("logs/app__.aider.chat.history.md")), "app__");
        assert_eq!(transcript_stem(Path::new("noext")), "noext");
    }

    #[test]
    fn format_names_round_trip() {
        for format in TranscriptFormat::ALL {
            assert_eq!(TranscriptFormat::parse(format.name()), Some(format));
            assert_eq!(format.to_string(), format.name());
        }
        assert_eq!(TranscriptFormat::parse("aider"), Some(TranscriptFormat::Aider));
        assert_eq!(TranscriptFormat::parse("goose"), None);
    }
}
