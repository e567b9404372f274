//! Crush / Go OpenCode: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::PathBuf;

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};

/// Crush / Go OpenCode's row.
pub(super) const ROW: Row = Row {
    name: "crush",
    title: "Crush / Go OpenCode",
    formats: &[],
    overrides: &[],
    locations,
    // No folder of its own outside the projects or the editor's storage.
    home: |_| None,
    per_project: true,
    session_file: None,
    not_readable: None,
    entry_prefix: Some("crush"),
    wrappers: &[],
    fuzz_targets: &["import_crush"],
    docs: Docs {
        readme: r#"`.crush/crush.db`, `.opencode/opencode.db` in project folders given with `--path`"#,
        import: r#"SQLite `crush.db` / `opencode.db` | `.crush/crush.db`, `.opencode/opencode.db` inside project folders (`annal sync --path`) | `charmbracelet/crush` v0.90.0 (`70d32162`) `internal/db/migrations`; `opencode-ai/opencode` v0.0.55 (`f0571f5f`)"#,
    },
};

/// Crush keeps its database in the project (`.crush/`), as the Go OpenCode did
/// (`.opencode/`).
fn locations(_env: &Environment, projects: &[PathBuf]) -> Vec<PathBuf> {
    projects.to_vec()
}
