//! OpenHands: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// OpenHands's row.
pub(super) const ROW: Row = Row {
    name: "openhands",
    title: "OpenHands",
    formats: &[TranscriptFormat::OpenHands],
    overrides: &["OPENHANDS_CONVERSATIONS_DIR", "OPENHANDS_PERSISTENCE_DIR"],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("openhands"),
    wrappers: &[],
    fuzz_targets: &["import_openhands"],
    docs: Docs {
        readme: r#"`~/.openhands/conversations/*/events/*.json` (`OPENHANDS_CONVERSATIONS_DIR`, `OPENHANDS_PERSISTENCE_DIR`) and the older `~/.openhands/sessions/`"#,
        import: r#"one JSON file per event, written once; a trajectory export is an array of them | `~/.openhands/conversations/<conversation>/events/event-<n>-<id>.json` (`OPENHANDS_CONVERSATIONS_DIR`, `OPENHANDS_PERSISTENCE_DIR`), the older server's `~/.openhands/sessions/<id>/events/<n>.json` | `OpenHands/software-agent-sdk` `openhands-sdk/openhands/sdk/event/` at `611629e6` (the CLI's events); `All-Hands-AI/OpenHands` `openhands/events/serialization/event.py` at `156d0686` (the older events and trajectories)"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.dir_var("OPENHANDS_PERSISTENCE_DIR").or_else(|| env.in_home(".openhands"))
}

/// The CLI's conversations (`OPENHANDS_CONVERSATIONS_DIR`, else `conversations` in
/// `OPENHANDS_PERSISTENCE_DIR` or `~/.openhands`), and the older server's sessions.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    let root = home(env);
    let conversations =
        env.dir_var("OPENHANDS_CONVERSATIONS_DIR").or_else(|| root.as_ref().map(|r| r.join("conversations")));
    let sessions = env.in_home(".openhands/sessions");
    conversations.into_iter().chain(sessions).collect()
}

/// `<conversation>/events/<event>.json`.
fn session_file(_path: &Path, name: &str, parent: &str) -> Option<TranscriptFormat> {
    (parent == "events" && name.ends_with(".json")).then_some(TranscriptFormat::OpenHands)
}
