//! Gemini CLI: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// Gemini CLI's row.
pub(super) const ROW: Row = Row {
    name: "gemini",
    title: "Gemini CLI",
    formats: &[TranscriptFormat::Gemini],
    overrides: &["GEMINI_CLI_HOME"],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("gemini"),
    wrappers: &[],
    fuzz_targets: &["import_gemini"],
    docs: Docs {
        readme: r#"`~/.gemini/tmp/*/chats/` (`GEMINI_CLI_HOME`), JSON and JSONL"#,
        import: r#"JSONL log (v0.39.0 and later); one JSON document (before) | `~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`, sub-agents in `chats/<parent>/<session>.jsonl` (`GEMINI_CLI_HOME`) | `google-gemini/gemini-cli` `packages/core/src/services/chatRecordingService.ts` at `5411f113` (0.56.0-nightly); the JSONL log replaced the document in `f7449135` (0.39.0)"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.dir_var("GEMINI_CLI_HOME").or_else(|| env.home.clone()).map(|h| h.join(".gemini"))
}

/// Where it keeps its sessions, whether or not they exist.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    home(env).map(|root| root.join("tmp")).into_iter().collect()
}

/// Sub-agents' logs sit one folder deeper: `chats/<parent session>/<session>.jsonl`.
fn session_file(path: &Path, name: &str, parent: &str) -> Option<TranscriptFormat> {
    let grandparent = path.parent().and_then(Path::parent).and_then(Path::file_name);
    let in_chats = parent == "chats" || grandparent.is_some_and(|g| g == "chats");
    let chat = in_chats && (name.ends_with(".json") || name.ends_with(".jsonl"));
    chat.then_some(TranscriptFormat::Gemini)
}
