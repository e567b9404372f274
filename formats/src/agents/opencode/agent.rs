//! OpenCode: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::PathBuf;

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// OpenCode's row.
pub(super) const ROW: Row = Row {
    name: "opencode",
    title: "OpenCode",
    formats: &[TranscriptFormat::OpenCode],
    overrides: &[],
    locations,
    home,
    per_project: false,
    session_file: None,
    not_readable: None,
    entry_prefix: Some("opencode"),
    wrappers: &[],
    fuzz_targets: &["import_opencode", "import_opencode_rows"],
    docs: Docs {
        readme: r#"`~/.local/share/opencode/opencode.db` and the older `storage/` (`XDG_DATA_HOME`)"#,
        import: r#"SQLite `opencode.db` (1.2 and later); JSON tree `storage/` (before); `opencode export` JSON | `~/.local/share/opencode/` (`XDG_DATA_HOME`) | `packages/opencode/src/session/session.sql.ts` at `063e8306`, first migration `20260127222353_familiar_lady_ursula` (1.2.0); `storage/json-migration.ts` at `062aa8c0`"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.config_dir.as_ref().map(|config| config.join("opencode"))
}

/// Where it keeps its sessions, whether or not they exist.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    env.data_dirs().into_iter().map(|d| d.join("opencode")).collect()
}
