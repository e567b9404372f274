//! goose: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::PathBuf;

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};

/// goose's row.
pub(super) const ROW: Row = Row {
    name: "goose",
    title: "goose",
    formats: &[],
    overrides: &["GOOSE_PATH_ROOT"],
    locations,
    home,
    per_project: false,
    session_file: None,
    not_readable: None,
    entry_prefix: Some("goose"),
    wrappers: &[],
    fuzz_targets: &["import_goose"],
    docs: Docs {
        readme: r#"`~/.local/share/goose/sessions/sessions.db` (`GOOSE_PATH_ROOT`)"#,
        import: r#"SQLite `sessions.db` | `~/.local/share/goose/sessions/` (macOS: `~/Library/Application Support/Block/goose/sessions/`; `GOOSE_PATH_ROOT`) | `block/goose` `crates/goose/src/session/` schema version 16"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.config_dir.as_ref().map(|config| config.join("goose"))
}

/// goose ignores a relative root. Its data folder is `goose` in the XDG data folder
/// on Linux, `Block/goose` in the platform's elsewhere (`data/` under it on Windows).
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    match env.dir_var("GOOSE_PATH_ROOT").filter(|root| root.is_absolute()) {
        Some(root) => vec![root.join("data").join("sessions")],
        None => env
            .data_dirs()
            .into_iter()
            .flat_map(|d| {
                [
                    d.join("goose/sessions"),
                    d.join("Block/goose/sessions"),
                    d.join("Block/goose/data/sessions"),
                ]
            })
            .collect(),
    }
}
