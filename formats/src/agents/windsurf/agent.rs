//! Windsurf (Cascade): its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::PathBuf;

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};

/// Windsurf (Cascade)'s row.
pub(super) const ROW: Row = Row {
    name: "windsurf",
    title: "Windsurf (Cascade)",
    formats: &[],
    overrides: &[],
    locations,
    home,
    per_project: false,
    session_file: None,
    not_readable: Some("Cascade keeps each conversation encrypted (cascade/<id>.pb)"),
    entry_prefix: None,
    wrappers: &[],
    fuzz_targets: &[],
    docs: Docs {
        readme: r#"`~/.codeium/windsurf/cascade/*.pb`: counted and listed as not readable (Cascade encrypts them), never read"#,
        import: r#"`~/.codeium/windsurf/cascade/<id>.pb`, `~/.codeium/windsurf-next/cascade/` | each conversation is an encrypted protobuf; the key is not the user's to read, and no public reader decodes them"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.in_home(".codeium")
}

/// Windsurf and its preview build keep Cascade's conversations under `~/.codeium`.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    let builds = ["windsurf", "windsurf-next"];
    home(env).into_iter().flat_map(|root| builds.map(|build| root.join(build).join("cascade"))).collect()
}
