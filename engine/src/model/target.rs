//! Tool-call targets: what a call acts on, derived from its tool name and input.
//!
//! The evidence index groups tool output by (tool, target), so the derivation must be
//! deterministic and cheap. It recognises the argument names the common agents use (Claude
//! Code, Codex, OpenCode, SWE-agent) rather than particular tools, so new tools with the same
//! conventions get targets too.

use serde_json::Value;

/// Keys holding a file or folder path, in preference order.
const PATH_KEYS: &[&str] =
    &["file_path", "filePath", "path", "notebook_path", "file", "filename", "dir", "directory"];
/// Keys holding a shell command.
const COMMAND_KEYS: &[&str] = &["command", "cmd", "script"];
/// Keys holding a URL.
const URL_KEYS: &[&str] = &["url", "uri"];
/// Keys holding a search pattern.
const PATTERN_KEYS: &[&str] = &["pattern", "query", "regex", "glob", "search"];

/// How many words of a shell command make its target.
const COMMAND_WORDS: usize = 3;
/// Targets are bounded so a digest key and an evidence row stay small.
const TARGET_CHARS_MAX: usize = 200;

/// Derives the target of a tool call from its tool name and JSON input: the path for
/// read/write/edit tools, the first words of the command for shell tools, the URL for
/// fetches, the pattern for searches. Empty when nothing fits.
pub fn derive_target(tool: &str, input_json: &str) -> String {
    match serde_json::from_str::<Value>(input_json) {
        Ok(value) => target_of(tool, &value),
        Err(_) => String::new(),
    }
}

/// [`derive_target`] over an input already parsed.
pub(crate) fn target_of(tool: &str, value: &Value) -> String {
    let Some(object) = value.as_object() else {
        return String::new();
    };
    let field = |keys: &[&str]| -> Option<String> {
        keys.iter().find_map(|key| match object.get(*key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Some(Value::Array(items)) => {
                let words: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                (!words.is_empty()).then(|| words.join(" "))
            }
            _ => None,
        })
    };
    let tool_lower = tool.to_ascii_lowercase();
    let is_search = ["grep", "glob", "search", "find", "rg"].iter().any(|w| tool_lower.contains(w));
    let is_fetch = ["fetch", "web", "http", "browse", "url"].iter().any(|w| tool_lower.contains(w));
    let target = if is_search {
        field(PATTERN_KEYS).or_else(|| field(PATH_KEYS))
    } else if is_fetch {
        field(URL_KEYS).or_else(|| field(PATTERN_KEYS))
    } else {
        field(PATH_KEYS)
            .or_else(|| field(COMMAND_KEYS).map(|cmd| command_head(&cmd)))
            .or_else(|| field(URL_KEYS))
            .or_else(|| field(PATTERN_KEYS))
    };
    target.map(|t| bounded(&t)).unwrap_or_default()
}

/// The first words of a shell command, skipping `cd DIR &&` prefixes and shell wrappers.
fn command_head(command: &str) -> String {
    let mut words: Vec<&str> = command.split_whitespace().collect();
    // `bash -lc "..."` as Codex records it: the command is the last argument.
    if words.len() >= 3 && matches!(words[0], "bash" | "sh" | "zsh") && words[1].starts_with('-') {
        words = words[2..].to_vec();
    }
    if let Some(pos) = words.iter().position(|w| *w == "&&") {
        if words.first() == Some(&"cd") {
            words = words[pos + 1..].to_vec();
        }
    }
    words.truncate(COMMAND_WORDS);
    words.join(" ").trim_matches(|c| c == '"' || c == '\'').to_owned()
}

fn bounded(text: &str) -> String {
    match text.char_indices().nth(TARGET_CHARS_MAX) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text.to_owned(),
    }
}

/// Whether a target names configuration, a schema, validation or a test: the evidence index
/// ranks such groups first.
pub fn is_priority_target(target: &str) -> bool {
    let lower = target.to_ascii_lowercase();
    const MARKERS: &[&str] = &[
        "config",
        "schema",
        "valid",
        "test",
        "spec",
        ".toml",
        ".yaml",
        ".yml",
        ".ini",
        ".env",
        "package.json",
        "tsconfig",
        "cargo.toml",
        "pytest",
        "jest",
        "vitest",
        "cargo test",
        "go test",
    ];
    MARKERS.iter().any(|m| lower.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_by_kind_of_tool() {
        assert_eq!(derive_target("Read", r#"{"file_path":"/src/main.rs"}"#), "/src/main.rs");
        assert_eq!(
            derive_target("Bash", r#"{"command":"cargo test --workspace -q"}"#),
            "cargo test --workspace"
        );
        assert_eq!(derive_target("shell", r#"{"command":["bash","-lc","ls -la src"]}"#), "ls -la src");
        assert_eq!(
            derive_target("WebFetch", r#"{"url":"https://example.com/a","prompt":"x"}"#),
            "https://example.com/a"
        );
        assert_eq!(derive_target("Grep", r#"{"pattern":"fn main","path":"src"}"#), "fn main");
        assert_eq!(derive_target("Bash", r#"{"command":"cd /repo && npm test"}"#), "npm test");
        assert_eq!(derive_target("Unknown", "not json"), "");
        assert_eq!(derive_target("TodoWrite", r#"{"todos":[]}"#), "");
    }

    #[test]
    fn priority_targets() {
        assert!(is_priority_target("config/app.yaml"));
        assert!(is_priority_target("cargo test --workspace"));
        assert!(!is_priority_target("src/main.rs"));
    }
}
