//! aider: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;
use crate::agents::AIDER_LOG;

/// aider's row.
pub(super) const ROW: Row = Row {
    name: "aider",
    title: "aider",
    formats: &[TranscriptFormat::Aider],
    overrides: &[],
    locations,
    // No folder of its own outside the projects or the editor's storage.
    home: |_| None,
    per_project: true,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("aider"),
    wrappers: &[],
    fuzz_targets: &["import_aider"],
    docs: Docs {
        readme: r#"`.aider.chat.history.md` in project folders given with `--path`"#,
        import: r#"Markdown `.aider.chat.history.md` | inside project folders (`annal sync --path`) | `Aider-AI/aider` `aider/io.py` at `5dc9490b` (0.86.3.dev), the same layout since 0.10.0"#,
    },
};

/// Crush keeps its database in the project (`.crush/`), as the Go OpenCode did
/// (`.opencode/`).
fn locations(_env: &Environment, projects: &[PathBuf]) -> Vec<PathBuf> {
    projects.to_vec()
}

/// Which files under its locations are its transcripts.
fn session_file(_path: &Path, name: &str, _parent: &str) -> Option<TranscriptFormat> {
    (name == AIDER_LOG).then_some(TranscriptFormat::Aider)
}
