//! Roo Code: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::places::editor_storage;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// Roo Code's row.
pub(super) const ROW: Row = Row {
    name: "roo",
    title: "Roo Code",
    formats: &[TranscriptFormat::Cline],
    overrides: &[],
    locations,
    // No folder of its own outside the projects or the editor's storage.
    home: |_| None,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: None,
    wrappers: &[],
    fuzz_targets: &[],
    docs: Docs {
        readme: r#"each editor's `globalStorage/rooveterinaryinc.roo-cline/tasks/*/api_conversation_history.json`"#,
        import: r#"Cline's `api_conversation_history.json` per task | `<editor>/User/globalStorage/rooveterinaryinc.roo-cline/tasks/<task>/`, in the editors Cline is looked for in | `RooCodeInc/Roo-Code` 3.52.1 (`cb836567`) `src/core/task-persistence/apiMessages.ts`"#,
    },
};

/// Where it keeps its sessions, whether or not they exist.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    editor_storage(env, "rooveterinaryinc.roo-cline")
}

/// Which files under its locations are its transcripts.
fn session_file(_path: &Path, name: &str, _parent: &str) -> Option<TranscriptFormat> {
    (name == "api_conversation_history.json").then_some(TranscriptFormat::Cline)
}
