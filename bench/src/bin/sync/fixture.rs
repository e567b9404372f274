//! The benchmark's machine: a home folder laid out as Claude Code, Codex, Gemini CLI and aider
//! lay out their sessions, filled with copies of the corpus's real transcripts, each copy under
//! its own session and record ids (so every copy is new records, as a year of sessions is).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::Value;

/// What was written.
#[derive(Debug, Default)]
pub(crate) struct Home {
    pub(crate) files: u64,
    pub(crate) bytes: u64,
    /// The project folders holding aider logs (`annal sync --path`).
    pub(crate) projects: PathBuf,
}

/// The corpus files copied, by the agent folder they go to.
struct Source {
    agent: &'static str,
    files: Vec<PathBuf>,
}

fn corpus_files(corpus: &Path, folder: &str, agent: &'static str) -> anyhow::Result<Source> {
    let dir = corpus.join(folder);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .with_context(|| format!("cannot read the corpus folder {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.sort();
    anyhow::ensure!(!files.is_empty(), "no files in {}", dir.display());
    Ok(Source { agent, files })
}

/// Fills `home` with copies until `target_bytes` are written.
pub(crate) fn build(corpus: &Path, home: &Path, target_bytes: u64) -> anyhow::Result<Home> {
    let sources = [
        corpus_files(corpus, "claude-code-jsonl", "claude")?,
        corpus_files(corpus, "codex-rollout-jsonl", "codex")?,
        corpus_files(corpus, "gemini-cli-json", "gemini")?,
        corpus_files(corpus, "aider-chat-history-md", "aider")?,
    ];
    let mut written = Home { projects: home.join("code"), ..Home::default() };
    let mut copy = 0u64;
    while written.bytes < target_bytes {
        for source in &sources {
            for (index, file) in source.files.iter().enumerate() {
                let bytes = fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
                let (path, text) = place(home, source.agent, copy, index, &bytes)?;
                fs::create_dir_all(path.parent().context("a parent folder")?)?;
                fs::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
                written.files += 1;
                written.bytes += text.len() as u64;
            }
        }
        copy += 1;
    }
    Ok(written)
}

/// Where copy `copy` of a corpus file goes, and its text with ids made distinct.
fn place(
    home: &Path,
    agent: &str,
    copy: u64,
    index: usize,
    bytes: &[u8],
) -> anyhow::Result<(PathBuf, Vec<u8>)> {
    let tag = format!("c{copy}");
    Ok(match agent {
        "claude" => {
            let path = home.join(format!(".claude/projects/-bench-p{}/{tag}-{index}.jsonl", copy % 40));
            let keys = ["uuid", "parentUuid", "sessionId", "leafUuid"];
            (path, map_lines(bytes, |line| suffix_keys(line, &keys, &tag)))
        }
        "codex" => {
            let day = home.join(format!(".codex/sessions/2026/{:02}/{:02}", 1 + copy % 12, 1 + copy % 28));
            let path = day.join(format!("rollout-2026-01-01T00-00-00-{tag}-{index}.jsonl"));
            let text = map_lines(bytes, |line| suffix_nested_id(line, &tag));
            (path, text)
        }
        "gemini" => {
            let path = home.join(format!(".gemini/tmp/bench{}/chats/session-{tag}-{index}.json", copy % 40));
            let mut doc: Value = serde_json::from_slice(bytes).context("a Gemini CLI session")?;
            suffix_keys(&mut doc, &["sessionId"], &tag);
            if let Some(Value::Array(messages)) = doc.get_mut("messages") {
                for message in messages {
                    suffix_keys(message, &["id"], &tag);
                }
            }
            (path, serde_json::to_vec(&doc)?)
        }
        _ => {
            let path = home.join(format!("code/p{copy}-{index}/.aider.chat.history.md"));
            (path, bytes.to_vec())
        }
    })
}

/// A Codex `session_meta` line's session id, made distinct.
fn suffix_nested_id(line: &mut Value, tag: &str) {
    if line.get("type").and_then(Value::as_str) == Some("session_meta") {
        if let Some(payload) = line.get_mut("payload") {
            suffix_keys(payload, &["id"], tag);
        }
    }
}

fn suffix_keys(value: &mut Value, keys: &[&str], tag: &str) {
    if let Value::Object(map) = value {
        for key in keys {
            if let Some(Value::String(text)) = map.get_mut(*key) {
                text.push('-');
                text.push_str(tag);
            }
        }
    }
}

/// Each JSON line changed by `change`; other lines (comments, damage) kept as they are.
fn map_lines(bytes: &[u8], mut change: impl FnMut(&mut Value)) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 50);
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        match serde_json::from_slice::<Value>(body) {
            Ok(mut value) => {
                change(&mut value);
                out.extend(serde_json::to_vec(&value).unwrap_or_else(|_| body.to_vec()));
                if line.ends_with(b"\n") {
                    out.push(b'\n');
                }
            }
            Err(_) => out.extend_from_slice(line),
        }
    }
    out
}
