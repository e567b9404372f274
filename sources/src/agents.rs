//! The agents annal captures, by name, and where each keeps its sessions by default.
//!
//! Each location follows the agent's own code (docs/import.md names the versions): the
//! override variable it honours first, then its default folder. Agents that keep sessions inside
//! a project (aider, Crush and the Go OpenCode) are found under project folders the user names.

use std::fmt;
use std::path::PathBuf;

use crate::environment::Environment;

/// A coding agent whose sessions `annal sync` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Agent {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI.
    Codex,
    /// OpenCode (the TypeScript agent): its database, or its older JSON storage.
    OpenCode,
    /// Gemini CLI.
    Gemini,
    /// goose.
    Goose,
    /// Crush, and the Go OpenCode it continues.
    Crush,
    /// aider.
    Aider,
    /// Cline (a VS Code extension).
    Cline,
    /// Roo Code (a VS Code extension, a fork of Cline).
    Roo,
    /// The Pi coding agent.
    Pi,
    /// Qwen Code.
    Qwen,
    /// GitHub Copilot CLI.
    Copilot,
    /// Continue (VS Code and JetBrains extensions, and its `cn` CLI).
    Continue,
    /// GitHub Copilot Chat in VS Code (and VS Code Insiders, VSCodium, a remote server).
    VsCode,
    /// Zed's agent threads.
    Zed,
    /// OpenHands (its CLI, and the older server's sessions).
    OpenHands,
    /// Kimi CLI.
    Kimi,
    /// Factory's Droid.
    Factory,
    /// Cursor: the editor's chats and agent runs (Composer), and the CLI's chats.
    Cursor,
    /// Kiro's CLI (the Amazon Q Developer CLI before it).
    Kiro,
    /// Amp: the threads its earlier versions kept on the machine.
    Amp,
    /// Windsurf's Cascade, whose conversations annal cannot read (see [`Agent::not_readable`]).
    Windsurf,
}

impl Agent {
    /// Every agent, in the order `annal sync --list` shows them.
    pub const ALL: [Agent; 22] = [
        Agent::Claude,
        Agent::Codex,
        Agent::OpenCode,
        Agent::Gemini,
        Agent::Goose,
        Agent::Crush,
        Agent::Aider,
        Agent::Cline,
        Agent::Roo,
        Agent::Pi,
        Agent::Qwen,
        Agent::Copilot,
        Agent::Continue,
        Agent::VsCode,
        Agent::Zed,
        Agent::OpenHands,
        Agent::Kimi,
        Agent::Factory,
        Agent::Cursor,
        Agent::Kiro,
        Agent::Amp,
        Agent::Windsurf,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::OpenCode => "opencode",
            Agent::Gemini => "gemini",
            Agent::Goose => "goose",
            Agent::Crush => "crush",
            Agent::Aider => "aider",
            Agent::Cline => "cline",
            Agent::Roo => "roo",
            Agent::Pi => "pi",
            Agent::Qwen => "qwen",
            Agent::Copilot => "copilot",
            Agent::Continue => "continue",
            Agent::VsCode => "vscode",
            Agent::Zed => "zed",
            Agent::OpenHands => "openhands",
            Agent::Kimi => "kimi",
            Agent::Factory => "factory",
            Agent::Cursor => "cursor",
            Agent::Kiro => "kiro",
            Agent::Amp => "amp",
            Agent::Windsurf => "windsurf",
        }
    }

    /// The agent's own name, for people.
    pub fn title(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex CLI",
            Agent::OpenCode => "OpenCode",
            Agent::Gemini => "Gemini CLI",
            Agent::Goose => "goose",
            Agent::Crush => "Crush / Go OpenCode",
            Agent::Aider => "aider",
            Agent::Cline => "Cline",
            Agent::Roo => "Roo Code",
            Agent::Pi => "Pi",
            Agent::Qwen => "Qwen Code",
            Agent::Copilot => "GitHub Copilot CLI",
            Agent::Continue => "Continue",
            Agent::VsCode => "GitHub Copilot Chat (VS Code)",
            Agent::Zed => "Zed",
            Agent::OpenHands => "OpenHands",
            Agent::Kimi => "Kimi CLI",
            Agent::Factory => "Factory Droid",
            Agent::Cursor => "Cursor",
            Agent::Kiro => "Kiro CLI",
            Agent::Amp => "Amp",
            Agent::Windsurf => "Windsurf (Cascade)",
        }
    }

    /// Parses [`Agent::name`].
    pub fn parse(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|agent| agent.name() == name)
    }

    /// Why annal cannot read the agent's sessions, for an agent whose files it finds but whose
    /// format is closed to it: they are counted and listed, never read.
    pub fn not_readable(self) -> Option<&'static str> {
        match self {
            Agent::Windsurf => Some("Cascade keeps each conversation encrypted (cascade/<id>.pb)"),
            _ => None,
        }
    }

    /// Whether the agent keeps sessions inside project folders rather than in one place.
    pub fn per_project(self) -> bool {
        matches!(self, Agent::Aider | Agent::Crush)
    }

    /// The folders (or database files) where the agent keeps its sessions on this machine,
    /// whether or not they exist; per-project agents add the project folders given.
    pub fn locations(self, env: &Environment, projects: &[PathBuf]) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = match self {
            Agent::Claude => {
                let root = env.dir_var("CLAUDE_CONFIG_DIR").or_else(|| env.in_home(".claude"));
                root.map(|r| r.join("projects")).into_iter().collect()
            }
            Agent::Codex => {
                let root = env.dir_var("CODEX_HOME").or_else(|| env.in_home(".codex"));
                root.map(|r| vec![r.join("sessions"), r.join("archived_sessions")]).unwrap_or_default()
            }
            Agent::OpenCode => env.data_dirs().into_iter().map(|d| d.join("opencode")).collect(),
            Agent::Gemini => {
                let home = env.dir_var("GEMINI_CLI_HOME").or_else(|| env.home.clone());
                home.map(|h| h.join(".gemini").join("tmp")).into_iter().collect()
            }
            // goose ignores a relative root. Its data folder is `goose` in the XDG data folder
            // on Linux, `Block/goose` in the platform's elsewhere (`data/` under it on Windows).
            Agent::Goose => match env.dir_var("GOOSE_PATH_ROOT").filter(|root| root.is_absolute()) {
                Some(root) => vec![root.join("data").join("sessions")],
                None => env
                    .data_dirs()
                    .into_iter()
                    .flat_map(|d| {
                        [
                            d.join("goose/sessions"),
                            d.join("Block/goose/sessions"),
                            d.join("Block/goose/data/sessions"),
                        ]
                    })
                    .collect(),
            },
            // Crush keeps its database in the project (`.crush/`), as the Go OpenCode did
            // (`.opencode/`).
            Agent::Crush | Agent::Aider => projects.to_vec(),
            Agent::Cline => editor_storage(env, "saoudrizwan.claude-dev"),
            Agent::Roo => editor_storage(env, "rooveterinaryinc.roo-cline"),
            // Pi expands a leading `~` in its override itself.
            Agent::Pi => {
                let root = env.dir_var("PI_CODING_AGENT_DIR").map(|dir| expand_tilde(env, dir));
                root.or_else(|| env.in_home(".pi/agent")).map(|r| r.join("sessions")).into_iter().collect()
            }
            // Chats live under the runtime folder (`QWEN_RUNTIME_DIR`), which defaults to the
            // configuration folder (`QWEN_HOME`, else `~/.qwen`): both are looked in.
            Agent::Qwen => {
                let runtime = env.dir_var("QWEN_RUNTIME_DIR");
                let config = env.dir_var("QWEN_HOME").or_else(|| env.in_home(".qwen"));
                runtime.into_iter().chain(config).map(|root| root.join("projects")).collect()
            }
            // `COPILOT_HOME`, else `~/.copilot`. Versions before 1.0 used `.copilot` in
            // `XDG_STATE_HOME` when that was set; current ones move it to `~/.copilot` at start,
            // so it is looked in too, for sessions of a CLI not run since.
            Agent::Copilot => {
                let mut roots: Vec<PathBuf> = match env.dir_var("COPILOT_HOME") {
                    Some(root) => vec![root],
                    None => env.in_home(".copilot").into_iter().collect(),
                };
                if env.dir_var("COPILOT_HOME").is_none() {
                    roots.extend(env.dir_var("XDG_STATE_HOME").map(|state| state.join(".copilot")));
                }
                roots
                    .into_iter()
                    .flat_map(|r| [r.join("session-state"), r.join("history-session-state")])
                    .collect()
            }
            Agent::Continue => {
                let root = env.dir_var("CONTINUE_GLOBAL_DIR").or_else(|| env.in_home(".continue"));
                root.map(|r| r.join("sessions")).into_iter().collect()
            }
            Agent::VsCode => chat_storage(env),
            // Zed's data folder: `zed` in the XDG data folder (`Zed` in the platform's elsewhere),
            // or the Flatpak's.
            Agent::Zed => {
                let mut roots: Vec<PathBuf> =
                    env.data_dirs().into_iter().flat_map(|d| [d.join("zed"), d.join("Zed")]).collect();
                roots.extend(env.in_home(".var/app/dev.zed.Zed/data/zed"));
                roots.into_iter().map(|root| root.join("threads")).collect()
            }
            // The CLI's conversations (`OPENHANDS_CONVERSATIONS_DIR`, else `conversations` in
            // `OPENHANDS_PERSISTENCE_DIR` or `~/.openhands`), and the older server's sessions.
            Agent::OpenHands => {
                let root = env.dir_var("OPENHANDS_PERSISTENCE_DIR").or_else(|| env.in_home(".openhands"));
                let conversations = env
                    .dir_var("OPENHANDS_CONVERSATIONS_DIR")
                    .or_else(|| root.as_ref().map(|r| r.join("conversations")));
                let sessions = env.in_home(".openhands/sessions");
                conversations.into_iter().chain(sessions).collect()
            }
            Agent::Kimi => {
                let root = env.dir_var("KIMI_SHARE_DIR").or_else(|| env.in_home(".kimi"));
                root.map(|r| r.join("sessions")).into_iter().collect()
            }
            // Droid takes `FACTORY_HOME_OVERRIDE` for the home folder it keeps `.factory` in.
            Agent::Factory => {
                let home = env.dir_var("FACTORY_HOME_OVERRIDE").or_else(|| env.home.clone());
                home.map(|h| h.join(".factory/sessions")).into_iter().collect()
            }
            // The editor's global storage, in its user data folder, the CLI's chats, and the
            // agent transcripts both keep per project.
            Agent::Cursor => {
                let mut places: Vec<PathBuf> =
                    env.config_dir.iter().map(|config| config.join("Cursor/User/globalStorage")).collect();
                places.extend(env.in_home(".cursor/chats"));
                places.extend(env.in_home(".cursor/projects"));
                places
            }
            // Kiro CLI's data folder in the platform's local data folder, and the Amazon Q
            // Developer CLI's it was renamed from.
            // Newer builds keep a log per session in `~/.kiro/sessions/cli`.
            Agent::Kiro => {
                let mut places: Vec<PathBuf> = env
                    .data_dirs()
                    .into_iter()
                    .flat_map(|d| [d.join("kiro-cli"), d.join("amazon-q")])
                    .collect();
                places.extend(env.in_home(".kiro/sessions/cli"));
                places
            }
            // The CLI's `amp/threads` in the XDG data folder, and the editor extension's
            // `threads3` in each editor's global storage.
            Agent::Amp => {
                let mut places: Vec<PathBuf> =
                    env.data_dirs().into_iter().map(|d| d.join("amp/threads")).collect();
                places.extend(
                    editor_storage(env, "sourcegraph.amp")
                        .into_iter()
                        .map(|tasks| tasks.with_file_name("threads3")),
                );
                places
            }
            // Windsurf and its preview build keep Cascade's conversations under `~/.codeium`.
            Agent::Windsurf => ["windsurf", "windsurf-next"]
                .iter()
                .filter_map(|build| env.in_home(&format!(".codeium/{build}/cascade")))
                .collect(),
        };
        out.dedup();
        out
    }
}

impl Agent {
    /// The folders the agent makes for itself at its first run (settings, logs) whether or not
    /// it has kept a session yet: one that exists while no session location does tells an agent
    /// that is installed but whose sessions annal does not find (none yet, or kept elsewhere).
    pub fn homes(self, env: &Environment) -> Vec<PathBuf> {
        let var_or_home = |var: &str, rest: &str| env.dir_var(var).or_else(|| env.in_home(rest));
        let home: Option<PathBuf> = match self {
            Agent::Claude => var_or_home("CLAUDE_CONFIG_DIR", ".claude"),
            Agent::Codex => var_or_home("CODEX_HOME", ".codex"),
            Agent::Gemini => {
                env.dir_var("GEMINI_CLI_HOME").or_else(|| env.home.clone()).map(|h| h.join(".gemini"))
            }
            Agent::Pi => var_or_home("PI_CODING_AGENT_DIR", ".pi/agent"),
            Agent::Qwen => var_or_home("QWEN_HOME", ".qwen"),
            Agent::Copilot => var_or_home("COPILOT_HOME", ".copilot"),
            Agent::Continue => var_or_home("CONTINUE_GLOBAL_DIR", ".continue"),
            Agent::OpenHands => var_or_home("OPENHANDS_PERSISTENCE_DIR", ".openhands"),
            Agent::Kimi => var_or_home("KIMI_SHARE_DIR", ".kimi"),
            Agent::Factory => {
                env.dir_var("FACTORY_HOME_OVERRIDE").or_else(|| env.home.clone()).map(|h| h.join(".factory"))
            }
            Agent::Cursor => env.in_home(".cursor"),
            Agent::Kiro => env.in_home(".kiro"),
            Agent::Windsurf => env.in_home(".codeium"),
            Agent::OpenCode | Agent::Goose | Agent::Zed | Agent::Amp => {
                let name = match self {
                    Agent::OpenCode => "opencode",
                    Agent::Goose => "goose",
                    Agent::Zed => "zed",
                    _ => "amp",
                };
                env.config_dir.as_ref().map(|config| config.join(name))
            }
            Agent::Crush | Agent::Aider | Agent::Cline | Agent::Roo | Agent::VsCode => None,
        };
        home.into_iter().collect()
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `dir` with a leading `~` (alone or before a separator) replaced by the home folder.
fn expand_tilde(env: &Environment, dir: PathBuf) -> PathBuf {
    let Some(home) = &env.home else { return dir };
    match dir.strip_prefix("~") {
        Ok(rest) => home.join(rest),
        Err(_) => dir,
    }
}

/// Where VS Code keeps chat sessions: every workspace's storage (`<id>/chatSessions/`), and the
/// sessions of windows without a workspace and of those moved between windows, in each editor's
/// user data and a remote server's.
fn chat_storage(env: &Environment) -> Vec<PathBuf> {
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
fn editor_storage(env: &Environment, extension: &str) -> Vec<PathBuf> {
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
