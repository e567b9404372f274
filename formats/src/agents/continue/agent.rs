//! Continue: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// Continue's row.
pub(super) const ROW: Row = Row {
    name: "continue",
    title: "Continue",
    formats: &[TranscriptFormat::Continue],
    overrides: &["CONTINUE_GLOBAL_DIR"],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("continue"),
    wrappers: &[],
    fuzz_targets: &["import_continue"],
    docs: Docs {
        readme: r#"`~/.continue/sessions/*.json` (`CONTINUE_GLOBAL_DIR`)"#,
        import: r#"one JSON document per session, rewritten whole on every save | `~/.continue/sessions/<session>.json` (`CONTINUE_GLOBAL_DIR`) | `continuedev/continue` `core/util/history.ts`, `core/index.d.ts` (`Session`, `ChatHistoryItem`, `ToolCallState`) at `d0a3c0b6`; the VS Code and JetBrains extensions and the `cn` CLI share the folder. The `cn` CLI's items as `extensions/cli/src/services/ChatHistoryService.ts` at `13766a0f` writes them: no `tool` items, a tool's output only in its call's state (`toolCallStates[].output`, status `done`, `errored` or `canceled`)"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.dir_var("CONTINUE_GLOBAL_DIR").or_else(|| env.in_home(".continue"))
}

/// Where it keeps its sessions, whether or not they exist.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    home(env).map(|r| r.join("sessions")).into_iter().collect()
}

/// `sessions/<session>.json` beside the `sessions.json` index.
fn session_file(_path: &Path, name: &str, parent: &str) -> Option<TranscriptFormat> {
    let session = parent == "sessions" && name.ends_with(".json") && name != "sessions.json";
    session.then_some(TranscriptFormat::Continue)
}
