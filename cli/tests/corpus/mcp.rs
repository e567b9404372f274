//! `annal mcp` end to end over a real transcript of the corpus named by `ANNAL_CORPUS`: the
//! transcript imported, projected at a small window, and each record an omission marker names read
//! back through the server byte for byte, as the journal and the transcript file hold it. A
//! missing corpus or transcript fails the test.

use serde_json::{json, Value};

use crate::support::mcp::{Client, TestResult};
use crate::support::Sandbox;

/// A real Claude Code session (53 records) with assistant text a small window omits.
const TRANSCRIPT: &str =
    "claude-code-jsonl/d-kimuson__claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl";
const SESSION: &str = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7";

/// The entryIds an omission marker names: `entry <id>,` or `entry <id> (sourceOrder n)`.
fn marker_entries(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for marker in text.split("[omitted / not summarised: ").skip(1) {
        let marker = marker.split(']').next().unwrap_or_default();
        for part in marker.split("entry ").skip(1) {
            if let Some(id) = part.split([',', ' ']).next().filter(|id| !id.is_empty()) {
                ids.push(id.to_owned());
            }
        }
    }
    ids
}

#[test]
fn an_omitted_record_named_by_a_marker_comes_back_byte_for_byte() -> TestResult {
    let root = std::env::var_os("ANNAL_CORPUS").ok_or("set ANNAL_CORPUS to the corpus folder")?;
    let transcript = std::path::PathBuf::from(root).join(TRANSCRIPT);
    assert!(transcript.is_file(), "the corpus has no {TRANSCRIPT}");
    let sandbox = Sandbox::new();
    let path = transcript.to_str().ok_or("the corpus path is not UTF-8")?;
    sandbox.annal(&["import", path], "").ok();
    let args = ["project", SESSION, "--window", "8000", "--max-output", "1000", "--json"];
    let projection: Value = serde_json::from_str(&sandbox.annal(&args, "").ok().stdout)?;
    assert!(projection["stats"]["omitted"]["markers"].as_u64() > Some(0), "{}", projection["stats"]);
    let texts: Vec<&str> = projection["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["blocks"].as_array().into_iter().flatten())
        .filter_map(|b| b["text"].as_str())
        .collect();
    let ids = marker_entries(&texts.concat());
    assert!(!ids.is_empty(), "no omission marker in the projection");

    let mut client = Client::start(&sandbox)?;
    let (listed, _) = client.call("sessions_list", json!({}))?;
    assert!(listed[0].contains(&format!("{SESSION} · 53 records")), "{listed:?}");
    let (found, error) = client.call("history_search", json!({"query": "claude", "session": SESSION}))?;
    assert!(!error && found[0].contains(&format!(" [{SESSION} #")), "{found:?}");

    // The transcript's own text of each line, by its uuid (the entryId of its record).
    let source = std::fs::read_to_string(&transcript)?;
    let mut written = std::collections::HashMap::<String, Vec<String>>::new();
    for line in source.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()) {
        let Some(uuid) = line["uuid"].as_str() else { continue };
        let texts = match &line["message"]["content"] {
            Value::String(text) => vec![text.clone()],
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str().or(p["thinking"].as_str()))
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        written.insert(uuid.to_owned(), texts);
    }

    let store = annal_engine::Store::open(&sandbox.db, annal_engine::StoreOptions::default())?;
    let mut against_file = 0;
    for id in &ids {
        let (items, error) = client.call("history_get", json!({"entryId": id}))?;
        assert!(!error, "{id}: {items:?}");
        assert!(items[0].starts_with(&format!("entry {id} · session {SESSION}")), "{items:?}");
        // The originals as the journal holds them, read through the engine alone.
        let snapshot = store.snapshot()?;
        let (_, guard) = snapshot.record_by_entry(id)?;
        let record = snapshot.to_record(&guard.view()?)?;
        let originals: Vec<&str> = record
            .blocks
            .iter()
            .map(|block| match block {
                annal_engine::Block::Text { text } | annal_engine::Block::Thinking { text } => text.as_str(),
                annal_engine::Block::ToolCall { input, .. } => input.as_str(),
                annal_engine::Block::ToolResult { output, .. } => output.as_str(),
                annal_engine::Block::Blob { .. } => "",
            })
            .collect();
        assert_eq!(items.len(), originals.len() + 1, "{id}: {items:?}");
        for (got, original) in items[1..].iter().zip(&originals) {
            assert_eq!(got.as_bytes(), original.as_bytes(), "{id}");
        }
        assert!(originals.iter().any(|text| !text.is_empty()), "{id} has text");
        // And the text blocks are what the transcript file itself says, byte for byte.
        let in_file =
            written.get(id.as_str()).ok_or_else(|| format!("{id} is not a line of the transcript"))?;
        for (got, block) in items[1..].iter().zip(&record.blocks) {
            if matches!(block, annal_engine::Block::Text { .. }) {
                assert!(in_file.iter().any(|text| text == got), "{id}: {got:?} is not in the transcript");
                against_file += 1;
            }
        }
    }
    assert!(against_file > 0, "no text block was compared with the transcript");
    drop(store);
    client.finish()
}

#[test]
fn markers_are_parsed_as_projections_write_them() {
    let run = "[omitted / not summarised: 2 entries, from entry a-1 (sourceOrder 16) to entry b-2 \
               (sourceOrder 21), ~290 tokens]";
    let one = "x [omitted / not summarised: entry c-3, sourceOrder 4, ~12 tokens] y";
    assert_eq!(marker_entries(&format!("{run}{one}")), ["a-1", "b-2", "c-3"]);
}
