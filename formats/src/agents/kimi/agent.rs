//! Kimi CLI: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::kimi_context_number;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// Kimi CLI's row.
pub(super) const ROW: Row = Row {
    name: "kimi",
    title: "Kimi CLI",
    formats: &[TranscriptFormat::Kimi],
    overrides: &["KIMI_SHARE_DIR"],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("kimi"),
    wrappers: &[],
    fuzz_targets: &["import_kimi"],
    docs: Docs {
        readme: r#"`~/.kimi/sessions/*/*/context.jsonl` with the `context_<n>.jsonl` set aside beside it, and sub-agents (`KIMI_SHARE_DIR`)"#,
        import: r#"JSONL: the messages the model is given, one per line (`context.jsonl`); set aside as `context_<n>.jsonl` and begun again on `/clear`, compaction and undo | `~/.kimi/sessions/<work dir hash>/<session>/context.jsonl`, sub-agents in `<session>/subagents/<id>/`, the first versions' `sessions/<work dir hash>/<session>.jsonl` (`KIMI_SHARE_DIR`) | `MoonshotAI/kimi-cli` `src/kimi_cli/soul/context.py`, `packages/kosong/src/kosong/message.py` at `07a7f173`; `wire.jsonl`, the interface's event log (streamed pieces of the same messages), is not read"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.dir_var("KIMI_SHARE_DIR").or_else(|| env.in_home(".kimi"))
}

/// Where it keeps its sessions, whether or not they exist.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    home(env).map(|r| r.join("sessions")).into_iter().collect()
}

/// `sessions/<work dir>/<session>/context.jsonl`, sub-agents in
/// `<session>/subagents/<id>/context.jsonl`; the files Kimi set aside
/// (`context_<n>.jsonl`) are read with the current one. Before sessions had folders:
/// `sessions/<work dir>/<session>.jsonl`.
fn session_file(path: &Path, name: &str, _parent: &str) -> Option<TranscriptFormat> {
    let grandparent = path.parent().and_then(Path::parent).and_then(Path::file_name);
    let legacy = grandparent.is_some_and(|g| g == "sessions")
        && name.ends_with(".jsonl")
        && kimi_context_number(name).is_none();
    (kimi_context_number(name) == Some(0) || legacy).then_some(TranscriptFormat::Kimi)
}
