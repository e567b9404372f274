//! Claude Code: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row, Wrapper};
use crate::agents::TranscriptFormat;

/// Claude Code's row.
pub(super) const ROW: Row = Row {
    name: "claude",
    title: "Claude Code",
    formats: &[TranscriptFormat::Claude],
    overrides: &["CLAUDE_CONFIG_DIR"],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("claude"),
    wrappers: &[
        // A slash command: its name and arguments are what the user typed.
        Wrapper::added("<command-message>", "</command-message>"),
        Wrapper::around("<command-name>", "</command-name>"),
        Wrapper::around("<command-args>", "</command-args>"),
        Wrapper::added("<system-reminder>", "</system-reminder>"),
        Wrapper::added("<local-command-caveat>", "</local-command-caveat>"),
        Wrapper::added("<local-command-stdout>", "</local-command-stdout>"),
        // What the editor extension adds: the selection and the file open.
        Wrapper::added("<ide_selection>", "</ide_selection>"),
        Wrapper::added("<ide_opened_file>", "</ide_opened_file>"),
    ],
    fuzz_targets: &["import_claude"],
    docs: Docs {
        readme: r#"`~/.claude/projects/` (`CLAUDE_CONFIG_DIR`), sub-agents included"#,
        import: r#"JSONL, one line per event | `~/.claude/projects/<project>/<session>.jsonl`, sub-agents in `<session>/subagents/agent-<id>.jsonl` (`CLAUDE_CONFIG_DIR`) | transcripts written by Claude Code 1.0.98 to 2.1.14 (the `version` field of the corpus's lines)"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.dir_var("CLAUDE_CONFIG_DIR").or_else(|| env.in_home(".claude"))
}

/// Where it keeps its sessions, whether or not they exist.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    home(env).map(|r| r.join("projects")).into_iter().collect()
}

/// Which files under its locations are its transcripts.
fn session_file(_path: &Path, name: &str, _parent: &str) -> Option<TranscriptFormat> {
    name.ends_with(".jsonl").then_some(TranscriptFormat::Claude)
}
