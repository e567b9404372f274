//! Pi: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::places::expand_tilde;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// Pi's row.
pub(super) const ROW: Row = Row {
    name: "pi",
    title: "Pi",
    formats: &[TranscriptFormat::Pi],
    overrides: &["PI_CODING_AGENT_DIR"],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("pi"),
    wrappers: &[],
    fuzz_targets: &["import_pi"],
    docs: Docs {
        readme: r#"`~/.pi/agent/sessions/--<cwd>--/*.jsonl` (`PI_CODING_AGENT_DIR`)"#,
        import: r#"JSONL: a `session` header, then one entry per line (a tree by `id`/`parentId` from version 2) | `~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl` (`PI_CODING_AGENT_DIR`) | `badlogic/pi-mono` `packages/coding-agent/src/core/session-manager.ts` and `docs/session.md` at `83378aad` (session format version 3); version 1 files (no ids) as the corpus's"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    let root = env.dir_var("PI_CODING_AGENT_DIR").map(|dir| expand_tilde(env, dir));
    root.or_else(|| env.in_home(".pi/agent"))
}

/// Pi expands a leading `~` in its override itself.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    home(env).map(|r| r.join("sessions")).into_iter().collect()
}

/// `sessions/--<cwd>--/<time>_<id>.jsonl`.
fn session_file(_path: &Path, name: &str, parent: &str) -> Option<TranscriptFormat> {
    let session = parent.starts_with("--") && name.ends_with(".jsonl");
    session.then_some(TranscriptFormat::Pi)
}
