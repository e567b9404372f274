//! Codex CLI: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row, Wrapper};
use crate::agents::TranscriptFormat;

/// Codex CLI's row.
pub(super) const ROW: Row = Row {
    name: "codex",
    title: "Codex CLI",
    formats: &[TranscriptFormat::Codex],
    overrides: &["CODEX_HOME"],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("codex"),
    wrappers: &[
        Wrapper::added("<environment_context>", "</environment_context>"),
        Wrapper::added("<user_instructions>", "</user_instructions>"),
        // The project's AGENTS.md, as newer versions send it.
        Wrapper::added("# AGENTS.md instructions for ", "</INSTRUCTIONS>"),
    ],
    fuzz_targets: &["import_codex"],
    docs: Docs {
        readme: r#"`~/.codex/sessions/` and `archived_sessions/` (`CODEX_HOME`), `.jsonl.zst` too"#,
        import: r#"rollout JSONL `{timestamp, type, payload}` | `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` and `~/.codex/archived_sessions/`, also `.jsonl.zst` (`CODEX_HOME`) | `openai/codex` `codex-rs` rollouts of CLI 0.66.0 (`cli_version`); forks by `session_meta.forked_from_id`"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.dir_var("CODEX_HOME").or_else(|| env.in_home(".codex"))
}

/// Where it keeps its sessions, whether or not they exist.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    home(env).map(|r| vec![r.join("sessions"), r.join("archived_sessions")]).unwrap_or_default()
}

/// Which files under its locations are its transcripts.
fn session_file(_path: &Path, name: &str, _parent: &str) -> Option<TranscriptFormat> {
    let rollout = name.starts_with("rollout-") && (name.ends_with(".jsonl") || name.ends_with(".jsonl.zst"));
    rollout.then_some(TranscriptFormat::Codex)
}
