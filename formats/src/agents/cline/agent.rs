//! Cline: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::places::editor_storage;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// Cline's row.
pub(super) const ROW: Row = Row {
    name: "cline",
    title: "Cline",
    formats: &[TranscriptFormat::Cline],
    overrides: &[],
    locations,
    // No folder of its own outside the projects or the editor's storage.
    home: |_| None,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("cline"),
    wrappers: &[],
    fuzz_targets: &["import_cline"],
    docs: Docs {
        readme: r#"each editor's `globalStorage/saoudrizwan.claude-dev/tasks/*/api_conversation_history.json`"#,
        import: r#"`api_conversation_history.json` per task | `<editor>/User/globalStorage/saoudrizwan.claude-dev/tasks/<task>/` for VS Code, Insiders, VSCodium, Cursor, Windsurf, Trae and a remote server | `cline/cline` v3.80.0 (`9dea336c`) `src/core/storage/disk.ts`, `src/core/task/index.ts`"#,
    },
};

/// Where it keeps its sessions, whether or not they exist.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    editor_storage(env, "saoudrizwan.claude-dev")
}

/// Which files under its locations are its transcripts.
fn session_file(_path: &Path, name: &str, _parent: &str) -> Option<TranscriptFormat> {
    (name == "api_conversation_history.json").then_some(TranscriptFormat::Cline)
}
