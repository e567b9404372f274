//! Places several agents share: the editors that run VS Code extensions and their storage
//! folders, and a home folder written as `~` in an override.

use std::path::PathBuf;

use super::environment::Environment;

/// `dir` with a leading `~` (alone or before a separator) replaced by the home folder.
pub(crate) fn expand_tilde(env: &Environment, dir: PathBuf) -> PathBuf {
    let Some(home) = &env.home else { return dir };
    match dir.strip_prefix("~") {
        Ok(rest) => home.join(rest),
        Err(_) => dir,
    }
}

/// Where VS Code keeps chat sessions: every workspace's storage (`<id>/chatSessions/`), and the
/// sessions of windows without a workspace and of those moved between windows, in each editor's
/// user data and a remote server's.
pub(crate) fn chat_storage(env: &Environment) -> Vec<PathBuf> {
    let mut users: Vec<PathBuf> = Vec::new();
    if let Some(config) = &env.config_dir {
        users.extend(EDITORS.iter().map(|editor| config.join(editor).join("User")));
    }
    users.extend(env.in_home(".vscode-server/data/User"));
    users
        .into_iter()
        .flat_map(|user| {
            [
                user.join("workspaceStorage"),
                user.join("globalStorage/emptyWindowChatSessions"),
                user.join("globalStorage/transferredChatSessions"),
            ]
        })
        .collect()
}

/// The editors that run VS Code extensions, by the folder name of their user data.
const EDITORS: [&str; 6] = ["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf", "Trae"];

/// A VS Code extension's task folders, in every editor's global storage (and a remote
/// server's).
pub(crate) fn editor_storage(env: &Environment, extension: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(config) = &env.config_dir {
        for editor in EDITORS {
            out.push(config.join(editor).join("User/globalStorage").join(extension).join("tasks"));
        }
    }
    if let Some(server) = env.in_home(".vscode-server/data/User/globalStorage") {
        out.push(server.join(extension).join("tasks"));
    }
    out
}
