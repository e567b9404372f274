//! Input nested as deep as its writer likes, through every command that reads it again: a tool
//! input of 100,000 levels kept as its text, projected, searched, exported as JSONL and Markdown
//! and imported back, shown by `annal ui`; and no source of the workspace lifts serde_json's
//! limit of 128 levels, which is what bounds every JSON value annal builds from input.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::ui::{path_of, Server};
use crate::support::Sandbox;

const DEPTH: usize = 100_000;

/// A tool call whose input is JSON text nested [`DEPTH`] deep (arrays inside objects), with
/// multi-byte text at the bottom (too deep to parse, so it is stored as written), and its result.
fn deep_call() -> (String, String) {
    let input = format!("{}\"日本語 🦀 deepest\"{}", "{\"k\":[".repeat(DEPTH / 2), "]}".repeat(DEPTH / 2));
    let call = json!({"entryId": "deep", "role": "assistant", "blocks": [
        {"type": "toolCall", "callId": "c1", "tool": "Bash", "inputText": input}]});
    let result = json!({"entryId": "deep-result", "role": "tool", "blocks": [
        {"type": "toolResult", "callId": "c1", "tool": "Bash", "output": "done"}]});
    (format!("{call}\n{result}"), input)
}

#[test]
fn a_tool_input_nested_a_hundred_thousand_deep_reads_back_everywhere() {
    let sandbox = Sandbox::new();
    let (record, input) = deep_call();
    sandbox.annal(&["append", "deep"], &format!("{record}\n")).ok();
    let project = sandbox
        .annal(&["project", "deep", "--window", "1000000", "--max-output", "65536", "--json"], "")
        .ok();
    let view: Value = serde_json::from_str(&project.stdout).unwrap_or_else(|e| panic!("{e}"));
    let shown = view.to_string();
    assert!(shown.contains("deepest") && shown.len() > input.len(), "the input is in the view as text");
    let hits = sandbox.annal(&["history", "search", "deepest", "--json"], "").ok();
    let hits: Value = serde_json::from_str(&hits.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(hits[0]["entryId"], "deep", "{hits}");
    let markdown = sandbox.annal(&["export", "deep", "--format", "markdown"], "").ok();
    assert!(markdown.stdout.contains(&input), "the Markdown export holds the input as written");
    // The JSONL export imports back into another store with the same hashes.
    let export = sandbox.dir().join("deep.jsonl");
    sandbox.annal(&["export", "deep", "--output", path(&export)], "").ok();
    let other = Sandbox::new();
    other.annal(&["import", path(&export)], "").ok();
    let hashes = |sandbox: &Sandbox| sandbox.annal(&["show", "deep", "--json"], "").ok().stdout;
    assert_eq!(hashes(&other), hashes(&sandbox));
    other.annal(&["verify"], "").ok();
    // The web view's session page, what the model saw, and the HTML export.
    let server = Server::start(&sandbox);
    for page in [
        path_of("/session", &[("name", "deep")]),
        path_of("/seen", &[("name", "deep"), ("window", "1M")]),
        path_of("/export", &[("name", "deep"), ("format", "html")]),
    ] {
        let answer = server.get(&page);
        assert_eq!(answer.status, 200, "{page}");
        assert!(answer.body.contains("deepest"), "{page}");
    }
}

fn path(path: &Path) -> &str {
    path.to_str().unwrap_or_else(|| panic!("not UTF-8: {}", path.display()))
}

/// serde_json stops at 128 levels unless a caller lifts the limit (`disable_recursion_limit`,
/// with its `unbounded_depth` feature) or parses on a grown stack (`serde_stacker`): no source
/// or manifest of the workspace does either, so every JSON value parsed from input is bounded.
#[test]
fn no_source_lifts_serde_jsons_nesting_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut offenders = Vec::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if path.is_dir() {
                if !name.starts_with('.') && !matches!(name.as_ref(), "target" | "corpus" | "artifacts") {
                    folders.push(path);
                }
            } else if name.ends_with(".rs") || name == "Cargo.toml" {
                if path.ends_with(file!()) {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for needle in ["disable_recursion_limit", "unbounded_depth", "serde_stacker"] {
                    if text.contains(needle) {
                        offenders.push(format!("{} ({needle})", path.display()));
                    }
                }
            }
        }
    }
    assert!(offenders.is_empty(), "serde_json's nesting limit is lifted in {offenders:?}");
    let deep = format!("{}{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
    let err = serde_json::from_str::<Value>(&deep).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.starts_with("recursion limit exceeded"), "{err}");
}
