//! Kiro CLI: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// Kiro CLI's row.
pub(super) const ROW: Row = Row {
    name: "kiro",
    title: "Kiro CLI",
    formats: &[TranscriptFormat::KiroLog],
    overrides: &[],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("kiro"),
    wrappers: &[],
    fuzz_targets: &["import_kiro", "import_kiro_log"],
    docs: Docs {
        readme: r#"`~/.local/share/kiro-cli/data.sqlite3` (macOS: `~/Library/Application Support/kiro-cli/`) and the Amazon Q Developer CLI's `amazon-q/` before it; newer builds' `~/.kiro/sessions/cli/*.jsonl`"#,
        import: r#"SQLite `data.sqlite3`, table `conversations_v2`: a row per conversation whose `value` is the whole conversation as JSON, replaced every turn (`conversations`, one per folder, before it) | `kiro-cli/` (and `amazon-q/`) in the platform's local data folder: `~/.local/share/`, macOS `~/Library/Application Support/` | `aws/amazon-q-developer-cli` `crates/chat-cli/src/cli/chat/conversation.rs`, `message.rs` and migration `008_multiple_conversations_per_path.sql` on its Kiro branch at `7bc6d25`; history entries as pairs (before July 2025) too. Newer builds: a log per session, `~/.kiro/sessions/cli/<session>.jsonl`, as `crates/agent/src/agent/event_log.rs` at `01b940e3` writes it. Not read: the `sess_<id>/` folders of the engine after it (not in the public source) and the Kiro IDE"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.in_home(".kiro")
}

/// Kiro CLI's data folder in the platform's local data folder, and the Amazon Q
/// Developer CLI's it was renamed from.
/// Newer builds keep a log per session in `~/.kiro/sessions/cli`.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    let mut places: Vec<PathBuf> =
        env.data_dirs().into_iter().flat_map(|d| [d.join("kiro-cli"), d.join("amazon-q")]).collect();
    places.extend(home(env).map(|root| root.join("sessions/cli")));
    places
}

/// `sessions/cli/<session>.jsonl`, beside its `<session>.json` (not read).
fn session_file(_path: &Path, name: &str, _parent: &str) -> Option<TranscriptFormat> {
    name.ends_with(".jsonl").then_some(TranscriptFormat::KiroLog)
}
