//! What a user without annal would run before each model request: read the session's JSONL file,
//! parse every record with serde_json, and build a view from them (all user text, then the
//! newest records back to the tail budget), with the same chars/4 token estimate.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use annal_engine::{Block, Record};
use anyhow::Context as _;
use serde_json::{json, Value};

/// Appends records to a JSONL file, one portable-format object per line.
pub(crate) struct JsonlWriter(BufWriter<File>);

impl JsonlWriter {
    pub(crate) fn create(path: &Path) -> anyhow::Result<JsonlWriter> {
        let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(JsonlWriter(BufWriter::with_capacity(1 << 20, file)))
    }

    pub(crate) fn write(&mut self, order: usize, record: &Record) -> anyhow::Result<()> {
        let blocks: Vec<Value> = record
            .blocks
            .iter()
            .map(|b| match b {
                Block::Text { text } => json!({"type": "text", "text": text}),
                Block::Thinking { text } => json!({"type": "thinking", "text": text}),
                Block::ToolCall { call_id, tool, input, target } => {
                    json!({"type": "toolCall", "callId": call_id, "tool": tool, "inputText": input, "target": target})
                }
                Block::ToolResult { call_id, tool, is_error, output } => {
                    json!({"type": "toolResult", "callId": call_id, "tool": tool, "isError": is_error, "output": output})
                }
                Block::Blob { media_type, .. } => json!({"type": "blob", "mediaType": media_type}),
            })
            .collect();
        let line = json!({
            "sourceOrder": order, "entryId": record.entry_id, "role": record.role.as_str(), "blocks": blocks,
        });
        serde_json::to_writer(&mut self.0, &line)?;
        self.0.write_all(b"\n")?;
        Ok(())
    }

    pub(crate) fn finish(mut self) -> anyhow::Result<()> {
        self.0.flush()?;
        Ok(())
    }
}

fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

fn record_tokens(record: &Value) -> usize {
    let Some(blocks) = record["blocks"].as_array() else { return 0 };
    blocks
        .iter()
        .map(|b| {
            ["text", "inputText", "output"].iter().filter_map(|k| b[*k].as_str()).map(tokens).sum::<usize>()
        })
        .sum()
}

/// Parses every line of `path` and builds the naive view: every user text, then the newest
/// records back to `tail_tokens`. Returns the view's tokens.
pub(crate) fn project(path: &Path, tail_tokens: usize) -> anyhow::Result<usize> {
    let mut reader = BufReader::with_capacity(1 << 20, File::open(path)?);
    let mut line = String::new();
    let mut records = Vec::new();
    while reader.read_line(&mut line)? > 0 {
        let record: Value = serde_json::from_str(&line)?;
        records.push(record);
        line.clear();
    }
    let mut total = 0;
    for record in &records {
        if record["role"] == "user" {
            total += record_tokens(record);
        }
    }
    let mut tail = 0;
    for record in records.iter().rev() {
        let t = record_tokens(record);
        if tail + t > tail_tokens {
            break;
        }
        tail += t;
    }
    Ok(total + tail)
}
