//! GitHub Copilot Chat (VS Code): its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::places::chat_storage;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// GitHub Copilot Chat (VS Code)'s row.
pub(super) const ROW: Row = Row {
    name: "vscode",
    title: "GitHub Copilot Chat (VS Code)",
    formats: &[TranscriptFormat::VsCodeChat],
    overrides: &[],
    locations,
    // No folder of its own outside the projects or the editor's storage.
    home: |_| None,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("vscode"),
    wrappers: &[],
    fuzz_targets: &["import_vscode"],
    docs: Docs {
        readme: r#"each editor's `workspaceStorage/*/chatSessions/` and `globalStorage/emptyWindowChatSessions/` (`.json` and `.jsonl`)"#,
        import: r#"one JSON document per session (`.json`, rewritten), or a log of changes to it (`.jsonl`) | `<User>/workspaceStorage/<id>/chatSessions/`, `globalStorage/emptyWindowChatSessions/` and `transferredChatSessions/`, for VS Code, Insiders, VSCodium and the other editors above, and a remote server | `microsoft/vscode` `src/vs/workbench/contrib/chat/common/model/chatSessionStore.ts` and `objectMutationLog.ts` at `047238f9` (session data version 3, `ISerializableChatData3` in `chatModel.ts`: `lastMessageDate`, `inputState`, `hasPendingEdits` move with every save); the older `interactive.sessions` key in `state.vscdb` is not read"#,
    },
};

/// Where it keeps its sessions, whether or not they exist.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    chat_storage(env)
}

/// Which files under its locations are its transcripts.
fn session_file(_path: &Path, name: &str, parent: &str) -> Option<TranscriptFormat> {
    let folders = ["chatSessions", "emptyWindowChatSessions", "transferredChatSessions"];
    let session = folders.contains(&parent) && (name.ends_with(".json") || name.ends_with(".jsonl"));
    session.then_some(TranscriptFormat::VsCodeChat)
}
