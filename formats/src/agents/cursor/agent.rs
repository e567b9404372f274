//! Cursor: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row, Wrapper};
use crate::agents::TranscriptFormat;

/// Cursor's row.
pub(super) const ROW: Row = Row {
    name: "cursor",
    title: "Cursor",
    formats: &[TranscriptFormat::CursorTranscript],
    overrides: &[],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("cursor"),
    wrappers: &[Wrapper::around("<user_query>", "</user_query>")],
    fuzz_targets: &["import_cursor", "import_cursor_transcript"],
    docs: Docs {
        readme: r#"the editor's `globalStorage/state.vscdb` (`~/.config/Cursor/User/`; macOS `~/Library/Application Support/Cursor/User/`): chats and agent runs, read from the last row read; the CLI's `~/.cursor/chats/*/*/store.db`; the agent transcripts of both, `~/.cursor/projects/*/agent-transcripts/`, each chat's as the session `<chat>/transcript`"#,
        import: r#"the editor: SQLite `state.vscdb`, table `cursorDiskKV`: a conversation under `composerData:<id>`, each message under `bubbleId:<conversation>:<id>`, JSON values replaced whole; the CLI: a SQLite `store.db` per chat of content-addressed blobs, a protobuf root listing the JSON messages; both: a JSONL transcript per chat, appended | the editor's `User/globalStorage/state.vscdb` (`~/.config/Cursor/`, macOS `~/Library/Application Support/Cursor/`); the CLI's `~/.cursor/chats/<folder hash>/<chat>/store.db`; the agent transcripts of both, `~/.cursor/projects/<folder>/agent-transcripts/<chat>.jsonl` (newer builds `<chat>/<chat>.jsonl`, sub-agents `<chat>/subagents/<id>.jsonl`) | closed source: the values as the public readers of the database read them back, `jhlee0409/claude-code-history-viewer` `src-tauri/src/providers/cursor.rs` at `fe46b656` (MIT) and `chenhg5/tape` `internal/source/cursor/` (MIT); conversation values `_v` up to 18, bubbles `_v` 3. The CLI's store as `chenhg5/tape` `internal/source/cursor/cursor.go` reads it. The agent transcripts (`{role, message: {content}}` per line) as the public readers of them agree: `entireio/cli` `cmd/entire/cli/agent/cursor/AGENT.md` (a capture of CLI 2026.02.13) and `HulkInTherapy/potsherd` `docs/formats/cursor.md`. Not read: the first builds' plain-text `agent-transcripts/<chat>.txt`, and the chat panel of Cursor before Composer (`ItemTable`'s `workbench.panel.aichat.view.aichat.chatdata`)"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.in_home(".cursor")
}

/// The editor's global storage, in its user data folder, the CLI's chats, and the
/// agent transcripts both keep per project.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    let mut places: Vec<PathBuf> =
        env.config_dir.iter().map(|config| config.join("Cursor/User/globalStorage")).collect();
    places.extend(home(env).into_iter().flat_map(|root| [root.join("chats"), root.join("projects")]));
    places
}

/// Which files under its locations are its transcripts.
fn session_file(path: &Path, name: &str, _parent: &str) -> Option<TranscriptFormat> {
    let in_transcripts = path.components().any(|part| part.as_os_str() == "agent-transcripts");
    (in_transcripts && name.ends_with(".jsonl")).then_some(TranscriptFormat::CursorTranscript)
}
