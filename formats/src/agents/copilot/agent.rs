//! GitHub Copilot CLI: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// GitHub Copilot CLI's row.
pub(super) const ROW: Row = Row {
    name: "copilot",
    title: "GitHub Copilot CLI",
    formats: &[TranscriptFormat::Copilot],
    overrides: &["COPILOT_HOME", "XDG_STATE_HOME"],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("copilot"),
    wrappers: &[],
    fuzz_targets: &["import_copilot"],
    docs: Docs {
        readme: r#"`~/.copilot/session-state/*/events.jsonl` and the older `~/.copilot/history-session-state/*.json` (`COPILOT_HOME`)"#,
        import: r#"JSONL of typed events `{id, type, timestamp, parentId, data}`; before 0.0.342 one JSON document per session `{sessionId, startTime, chatMessages, timeline}`, rewritten whole | `~/.copilot/session-state/<session>/events.jsonl` and `~/.copilot/history-session-state/session_<session>_<start ms>.json` (`COPILOT_HOME`); also `XDG_STATE_HOME/.copilot`, where versions before 1.0 kept them when that variable was set (current versions ignore it and move that folder to `~/.copilot` at start: `github/copilot-cli` issues 1750 and 1954, and the same lookup in `microsoft/vscode` pull request 314917's Copilot home resolver) | closed source: the events as `microsoft/vscode-copilot-chat` at `31acd00a` reads them back (`src/extension/chatSessions/copilotcli/`); the older documents as the schema in `@github/copilot` 0.0.340's published bundle declares them (the last release that wrote them; 0.0.342's changelog moves a session to the event log when it is resumed)"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.dir_var("COPILOT_HOME").or_else(|| env.in_home(".copilot"))
}

/// `COPILOT_HOME`, else `~/.copilot`. Versions before 1.0 used `.copilot` in `XDG_STATE_HOME`
/// when that was set; current ones move it to `~/.copilot` at start, so it is looked in too,
/// for sessions of a CLI not run since.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = home(env).into_iter().collect();
    if env.dir_var("COPILOT_HOME").is_none() {
        roots.extend(env.dir_var("XDG_STATE_HOME").map(|state| state.join(".copilot")));
    }
    roots.into_iter().flat_map(|r| [r.join("session-state"), r.join("history-session-state")]).collect()
}

/// `session-state/<session>/events.jsonl`; before 0.0.342,
/// `history-session-state/session_<session>_<start ms>.json`.
fn session_file(_path: &Path, name: &str, parent: &str) -> Option<TranscriptFormat> {
    let legacy = parent == "history-session-state" && name.starts_with("session_") && name.ends_with(".json");
    (name == "events.jsonl" || legacy).then_some(TranscriptFormat::Copilot)
}
