//! The agent registry: one table of the agents annal captures, each a row kept in its own
//! folder (`<agent>/agent.rs`, beside its readers and fuzz seeds), and the order in which
//! detection tries the formats. `--format`, `annal sync --list`, detection, the UI's labels and
//! the documentation's tables are read from here.
//!
//! Each location follows the agent's own code (docs/import.md names the versions): the
//! override variable it honours first, then its default folder. Agents that keep sessions inside
//! a project (aider, Crush and the Go OpenCode) are found under project folders the user names.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::environment::Environment;
use super::row::{unwrap_request, Row};
use super::{
    aider, amp, claude, cline, codex, continue_dev, copilot, cursor_transcript, detect, factory, gemini,
    kimi, kiro_log, openhands, pi, qwen, vscode_chat, TranscriptFormat,
};

#[path = "aider/agent.rs"]
mod aider_agent;
#[path = "amp/agent.rs"]
mod amp_agent;
#[path = "claude/agent.rs"]
mod claude_agent;
#[path = "cline/agent.rs"]
mod cline_agent;
#[path = "codex/agent.rs"]
mod codex_agent;
#[path = "continue/agent.rs"]
mod continue_agent;
#[path = "copilot/agent.rs"]
mod copilot_agent;
#[path = "crush/agent.rs"]
mod crush_agent;
#[path = "cursor/agent.rs"]
mod cursor_agent;
#[path = "factory/agent.rs"]
mod factory_agent;
#[path = "gemini/agent.rs"]
mod gemini_agent;
#[path = "goose/agent.rs"]
mod goose_agent;
#[path = "kimi/agent.rs"]
mod kimi_agent;
#[path = "kiro/agent.rs"]
mod kiro_agent;
#[path = "omp/agent.rs"]
mod omp_agent;
#[path = "opencode/agent.rs"]
mod opencode_agent;
#[path = "openhands/agent.rs"]
mod openhands_agent;
#[path = "pi/agent.rs"]
mod pi_agent;
#[path = "qwen/agent.rs"]
mod qwen_agent;
#[path = "roo/agent.rs"]
mod roo_agent;
#[path = "vscode/agent.rs"]
mod vscode_agent;
#[path = "windsurf/agent.rs"]
mod windsurf_agent;
#[path = "zed/agent.rs"]
mod zed_agent;

/// A coding agent whose sessions `annal sync` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Agent {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI.
    Codex,
    /// OpenCode (the TypeScript agent): its database, or its older JSON storage.
    OpenCode,
    /// Gemini CLI.
    Gemini,
    /// goose.
    Goose,
    /// Crush, and the Go OpenCode it continues.
    Crush,
    /// aider.
    Aider,
    /// Cline (a VS Code extension).
    Cline,
    /// Roo Code (a VS Code extension, a fork of Cline).
    Roo,
    /// The Pi coding agent.
    Pi,
    /// Oh My Pi, a fork of Pi writing Pi's format under a folder of its own.
    OhMyPi,
    /// Qwen Code.
    Qwen,
    /// GitHub Copilot CLI.
    Copilot,
    /// Continue (VS Code and JetBrains extensions, and its `cn` CLI).
    Continue,
    /// GitHub Copilot Chat in VS Code (and VS Code Insiders, VSCodium, a remote server).
    VsCode,
    /// Zed's agent threads.
    Zed,
    /// OpenHands (its CLI, and the older server's sessions).
    OpenHands,
    /// Kimi CLI.
    Kimi,
    /// Factory's Droid.
    Factory,
    /// Cursor: the editor's chats and agent runs (Composer), and the CLI's chats.
    Cursor,
    /// Kiro's CLI (the Amazon Q Developer CLI before it).
    Kiro,
    /// Amp: the threads its earlier versions kept on the machine.
    Amp,
    /// Windsurf's Cascade, whose conversations annal cannot read (see [`Agent::not_readable`]).
    Windsurf,
}

impl Agent {
    /// Every agent, in the order `annal sync --list` shows them.
    pub const ALL: [Agent; 23] = [
        Agent::Claude,
        Agent::Codex,
        Agent::OpenCode,
        Agent::Gemini,
        Agent::Goose,
        Agent::Crush,
        Agent::Aider,
        Agent::Cline,
        Agent::Roo,
        Agent::Pi,
        Agent::OhMyPi,
        Agent::Qwen,
        Agent::Copilot,
        Agent::Continue,
        Agent::VsCode,
        Agent::Zed,
        Agent::OpenHands,
        Agent::Kimi,
        Agent::Factory,
        Agent::Cursor,
        Agent::Kiro,
        Agent::Amp,
        Agent::Windsurf,
    ];

    /// The agent's row: the one table of the registry.
    fn row(self) -> &'static Row {
        match self {
            Agent::Claude => &claude_agent::ROW,
            Agent::Codex => &codex_agent::ROW,
            Agent::OpenCode => &opencode_agent::ROW,
            Agent::Gemini => &gemini_agent::ROW,
            Agent::Goose => &goose_agent::ROW,
            Agent::Crush => &crush_agent::ROW,
            Agent::Aider => &aider_agent::ROW,
            Agent::Cline => &cline_agent::ROW,
            Agent::Roo => &roo_agent::ROW,
            Agent::Pi => &pi_agent::ROW,
            Agent::OhMyPi => &omp_agent::ROW,
            Agent::Qwen => &qwen_agent::ROW,
            Agent::Copilot => &copilot_agent::ROW,
            Agent::Continue => &continue_agent::ROW,
            Agent::VsCode => &vscode_agent::ROW,
            Agent::Zed => &zed_agent::ROW,
            Agent::OpenHands => &openhands_agent::ROW,
            Agent::Kimi => &kimi_agent::ROW,
            Agent::Factory => &factory_agent::ROW,
            Agent::Cursor => &cursor_agent::ROW,
            Agent::Kiro => &kiro_agent::ROW,
            Agent::Amp => &amp_agent::ROW,
            Agent::Windsurf => &windsurf_agent::ROW,
        }
    }

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The agent's own name, for people.
    pub fn title(self) -> &'static str {
        self.row().title
    }

    /// Parses [`Agent::name`].
    pub fn parse(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|agent| agent.name() == name)
    }

    /// The transcript formats the agent's files are written in (none for an agent read from a
    /// database only, or not read at all).
    pub fn formats(self) -> &'static [TranscriptFormat] {
        self.row().formats
    }

    /// Why annal cannot read the agent's sessions, for an agent whose files it finds but whose
    /// format is closed to it: they are counted and listed, never read.
    pub fn not_readable(self) -> Option<&'static str> {
        self.row().not_readable
    }

    /// Whether the agent keeps sessions inside project folders rather than in one place.
    pub fn per_project(self) -> bool {
        self.row().per_project
    }

    /// The folders the agent makes for itself at its first run (settings, logs) whether or not
    /// it has kept a session yet: one that exists while no session location does tells an agent
    /// that is installed but whose sessions annal does not find (none yet, or kept elsewhere).
    pub fn homes(self, env: &Environment) -> Vec<PathBuf> {
        (self.row().home)(env).into_iter().collect()
    }

    /// The folders (or database files) where the agent keeps its sessions on this machine,
    /// whether or not they exist; per-project agents add the project folders given.
    pub fn locations(self, env: &Environment, projects: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = (self.row().locations)(env, projects);
        out.dedup();
        out
    }

    /// The format of a file found under the agent's locations, if it is one of the agent's
    /// transcripts (by its name and place).
    pub fn transcript_format(self, path: &Path) -> Option<TranscriptFormat> {
        let session_file = self.row().session_file?;
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let parent = path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy()).unwrap_or_default();
        session_file(path, &name, &parent)
    }

    /// The agent whose importer derived `entry_id` (`codex:…`), if any did.
    pub fn of_entry_id(entry_id: &str) -> Option<Agent> {
        let (prefix, _) = entry_id.split_once(':')?;
        Agent::ALL.into_iter().find(|agent| agent.row().entry_prefix == Some(prefix))
    }

    /// A request's text without the context the agent wraps around the user's words (its
    /// environment, reminders, the editor's selection): what the user wrote.
    pub fn user_words(self, text: &str) -> String {
        unwrap_request(text, self.row().wrappers)
    }
}

impl TranscriptFormat {
    /// Every format, as `--format` lists them: the agents' in the registry's order, then
    /// annal's own export.
    pub fn in_agent_order() -> Vec<TranscriptFormat> {
        let mut formats: Vec<TranscriptFormat> = Vec::new();
        for format in Agent::ALL.iter().flat_map(|agent| agent.formats()) {
            if !formats.contains(format) {
                formats.push(*format);
            }
        }
        formats.push(TranscriptFormat::Annal);
        formats
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The environment variables the agents' locations honour, each once.
pub(crate) fn overrides() -> impl Iterator<Item = &'static str> {
    let mut names: Vec<&'static str> =
        Agent::ALL.iter().flat_map(|agent| agent.row().overrides).copied().collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter()
}

/// How a format is told from a file's content.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Probe {
    /// The whole file, before anything else (a Markdown log).
    Text(fn(&[u8]) -> bool),
    /// A file that is a JSON array.
    Array(fn(&[u8]) -> bool),
    /// A JSON document spread over several lines.
    Document(fn(&[u8]) -> bool),
    /// One line that is a JSON object.
    Line(fn(&Map<String, Value>) -> bool),
}

/// Each format's signatures, in the order detection tries them: a format whose lines another
/// format's could also match comes first.
pub(crate) const DETECTION: [(TranscriptFormat, Probe); 28] = [
    (TranscriptFormat::Aider, Probe::Text(aider::is_aider_log)),
    (TranscriptFormat::OpenHands, Probe::Array(openhands::is_events_document)),
    (TranscriptFormat::Cline, Probe::Array(cline::is_cline_document)),
    (TranscriptFormat::OpenCode, Probe::Document(detect::is_opencode_document)),
    (TranscriptFormat::Gemini, Probe::Document(gemini::is_gemini_document)),
    (TranscriptFormat::Continue, Probe::Document(continue_dev::is_continue_document)),
    (TranscriptFormat::VsCodeChat, Probe::Document(vscode_chat::is_chat_session)),
    (TranscriptFormat::OpenHands, Probe::Document(openhands::is_events_document)),
    (TranscriptFormat::Amp, Probe::Document(amp::is_amp_document)),
    (TranscriptFormat::Copilot, Probe::Document(copilot::is_legacy_document)),
    (TranscriptFormat::Annal, Probe::Line(detect::is_export_header)),
    (TranscriptFormat::OpenCode, Probe::Line(detect::is_opencode_line)),
    (TranscriptFormat::Continue, Probe::Line(continue_dev::is_continue_session)),
    (TranscriptFormat::OpenHands, Probe::Line(openhands::is_event)),
    (TranscriptFormat::Amp, Probe::Line(amp::is_amp_thread)),
    // A chat session written on one line, or the first line of its change log.
    (TranscriptFormat::VsCodeChat, Probe::Line(vscode_chat::is_chat_line)),
    // Before Gemini: an older Copilot CLI session names a `sessionId` and `startTime` too.
    (TranscriptFormat::Copilot, Probe::Line(copilot::is_legacy_session)),
    // Before Claude Code: a Gemini CLI log's header names a `sessionId` too.
    (TranscriptFormat::Gemini, Probe::Line(gemini::is_gemini_line)),
    (TranscriptFormat::Copilot, Probe::Line(copilot::is_copilot_line)),
    // Kimi's messages are OpenAI chat messages, which many tools write: only its bookkeeping
    // lines (the system prompt, checkpoints, token counts) tell its files.
    (TranscriptFormat::Kimi, Probe::Line(kimi::is_kimi_signature)),
    (TranscriptFormat::KiroLog, Probe::Line(kiro_log::is_kiro_entry)),
    // Exactly `{role, message}`: no other format writes a line of only these two.
    (TranscriptFormat::CursorTranscript, Probe::Line(cursor_transcript::is_cursor_message)),
    // Before Pi: Droid's messages have Pi's envelope (Pi's messages carry a time of their own).
    (TranscriptFormat::Factory, Probe::Line(factory::is_factory_line)),
    // Before Codex: Pi's entries share type names with an older rollout's bare items.
    (TranscriptFormat::Pi, Probe::Line(pi::is_pi_signature)),
    (TranscriptFormat::Codex, Probe::Line(codex::is_codex_line)),
    (TranscriptFormat::Qwen, Probe::Line(qwen::is_qwen_line)),
    (TranscriptFormat::Claude, Probe::Line(claude::is_claude_line)),
    (TranscriptFormat::Annal, Probe::Line(detect::is_annal_record)),
];

#[cfg(test)]
mod tests;
