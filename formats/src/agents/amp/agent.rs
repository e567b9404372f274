//! Amp: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::places::editor_storage;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// Amp's row.
pub(super) const ROW: Row = Row {
    name: "amp",
    title: "Amp",
    formats: &[TranscriptFormat::Amp],
    overrides: &[],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("amp"),
    wrappers: &[],
    fuzz_targets: &["import_amp"],
    docs: Docs {
        readme: r#"`~/.local/share/amp/threads/T-*.json` (`XDG_DATA_HOME`) and the editor extension's `threads3/`: the threads Amp kept on the machine before it kept them on its server"#,
        import: r#"one JSON document per thread, rewritten as it goes on; `amp threads export` prints the same | `amp/threads/T-<id>.json` in the XDG data folder (`~/.local/share`, `XDG_DATA_HOME`), the editor extension's `globalStorage/sourcegraph.amp/threads3/` | closed source: threads as `Dicklesworthstone/cross_agent_sessions_resumer` `src/providers/amp.rs` reads them (thread `v` 5). Current Amp keeps threads on its server and writes none here: export one with `amp threads export` and `annal import` the file"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.config_dir.as_ref().map(|config| config.join("amp"))
}

/// The CLI's `amp/threads` in the XDG data folder, and the editor extension's
/// `threads3` in each editor's global storage.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    let mut places: Vec<PathBuf> = env.data_dirs().into_iter().map(|d| d.join("amp/threads")).collect();
    places.extend(
        editor_storage(env, "sourcegraph.amp").into_iter().map(|tasks| tasks.with_file_name("threads3")),
    );
    places
}

/// `threads/T-<id>.json`, the editor extension's `threads3/<id>.json`.
fn session_file(_path: &Path, name: &str, parent: &str) -> Option<TranscriptFormat> {
    let thread = (parent == "threads" || parent == "threads3") && name.ends_with(".json");
    thread.then_some(TranscriptFormat::Amp)
}
