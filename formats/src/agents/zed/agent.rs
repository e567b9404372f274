//! Zed: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::PathBuf;

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};

/// Zed's row.
pub(super) const ROW: Row = Row {
    name: "zed",
    title: "Zed",
    formats: &[],
    overrides: &[],
    locations,
    home,
    per_project: false,
    session_file: None,
    not_readable: None,
    entry_prefix: Some("zed"),
    wrappers: &[],
    fuzz_targets: &["import_zed"],
    docs: Docs {
        readme: r#"`~/.local/share/zed/threads/threads.db` (macOS: `~/Library/Application Support/Zed/threads/`)"#,
        import: r#"SQLite `threads.db`, table `threads`: a row per thread whose `data` is its JSON (zstd, or plain in older rows), replaced on every save | `zed/threads/` in the XDG data folder (`~/.local/share`), `Zed/threads/` in the platform's (macOS `~/Library/Application Support`), the Flatpak's `~/.var/app/dev.zed.Zed/data/zed/threads/` | `zed-industries/zed` `crates/agent/src/db.rs` at `0642ec7e` (`DbThread` 0.3.0: `updated_at`, `cumulative_token_usage` and `request_token_usage` move with every save); the older 0.1/0.2 thread format is read too; the mid-2025 LMDB `threads-db.1.mdb` and text threads are not"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.config_dir.as_ref().map(|config| config.join("zed"))
}

/// Zed's data folder: `zed` in the XDG data folder (`Zed` in the platform's elsewhere),
/// or the Flatpak's.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> =
        env.data_dirs().into_iter().flat_map(|d| [d.join("zed"), d.join("Zed")]).collect();
    roots.extend(env.in_home(".var/app/dev.zed.Zed/data/zed"));
    roots.into_iter().map(|root| root.join("threads")).collect()
}
