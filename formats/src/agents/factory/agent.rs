//! Factory Droid: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// Factory Droid's row.
pub(super) const ROW: Row = Row {
    name: "factory",
    title: "Factory Droid",
    formats: &[TranscriptFormat::Factory],
    overrides: &["FACTORY_HOME_OVERRIDE"],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("factory"),
    wrappers: &[],
    fuzz_targets: &["import_factory"],
    docs: Docs {
        readme: r#"`~/.factory/sessions/*/*.jsonl` and sub-agents' sessions (`FACTORY_HOME_OVERRIDE`)"#,
        import: r#"JSONL: a `session_start` line, then one typed line per event (`message` with Anthropic Messages parts, `todo_state`, `compaction_state`, …), appended | `~/.factory/sessions/<cwd>/<session>.jsonl` (the first versions: `~/.factory/sessions/<session>.jsonl`), a sub-agent's run a session of its own; `FACTORY_HOME_OVERRIDE` stands for the home folder | closed source: the lines as `jazzyalex/agent-sessions` (MIT) `DroidSessionParser.swift` and its fixtures and `entireio/cli` `cmd/entire/cli/agent/factoryaidroid/` read them (Droid 0.2x, session `version` 2); the `<session>.settings.json` beside each (token totals, model) is not read"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.dir_var("FACTORY_HOME_OVERRIDE").or_else(|| env.home.clone()).map(|h| h.join(".factory"))
}

/// Droid takes `FACTORY_HOME_OVERRIDE` for the home folder it keeps `.factory` in.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    home(env).map(|root| root.join("sessions")).into_iter().collect()
}

/// `sessions/<cwd>/<session>.jsonl` (with `<session>.settings.json` beside it, not read);
/// the first versions kept them in `sessions/` itself.
fn session_file(_path: &Path, name: &str, _parent: &str) -> Option<TranscriptFormat> {
    name.ends_with(".jsonl").then_some(TranscriptFormat::Factory)
}
