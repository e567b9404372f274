//! Qwen Code: its row in the agent registry, where it keeps its sessions and which files are
//! its transcripts.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// Qwen Code's row.
pub(super) const ROW: Row = Row {
    name: "qwen",
    title: "Qwen Code",
    formats: &[TranscriptFormat::Qwen],
    overrides: &["QWEN_HOME", "QWEN_RUNTIME_DIR"],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    entry_prefix: Some("qwen"),
    wrappers: &[],
    fuzz_targets: &["import_qwen"],
    docs: Docs {
        readme: r#"`~/.qwen/projects/*/chats/*.jsonl` and sub-agents (`QWEN_RUNTIME_DIR`, `QWEN_HOME`)"#,
        import: r#"JSONL, one `ChatRecord` per line (`uuid`/`parentUuid`, Google GenAI message parts) | `~/.qwen/projects/<project>/chats/<session>.jsonl`, sub-agents in `<project>/subagents/<session>/agent-<id>.jsonl` (`QWEN_RUNTIME_DIR`, `QWEN_HOME`) | `QwenLM/qwen-code` `packages/core/src/services/chatRecordingService.ts` at `015346f1` (the JSONL recording since December 2025); the Gemini-CLI-style `~/.qwen/tmp/` JSON before it is not read"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    env.dir_var("QWEN_HOME").or_else(|| env.in_home(".qwen"))
}

/// Chats live under the runtime folder (`QWEN_RUNTIME_DIR`), which defaults to the
/// configuration folder (`QWEN_HOME`, else `~/.qwen`): both are looked in.
fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    let runtime = env.dir_var("QWEN_RUNTIME_DIR");
    runtime.into_iter().chain(home(env)).map(|root| root.join("projects")).collect()
}

/// `projects/<project>/chats/<session>.jsonl`, sub-agents in
/// `projects/<project>/subagents/<session>/agent-<id>.jsonl`.
fn session_file(path: &Path, name: &str, parent: &str) -> Option<TranscriptFormat> {
    let grandparent = path.parent().and_then(Path::parent).and_then(Path::file_name);
    let sub_agent = grandparent.is_some_and(|g| g == "subagents") && name.starts_with("agent-");
    let chat = (parent == "chats" || sub_agent) && name.ends_with(".jsonl");
    chat.then_some(TranscriptFormat::Qwen)
}
