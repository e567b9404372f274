//! The seeded workload: a deterministic agent session of mixed roles, tool calls and outputs.
//!
//! Ordinary records carry 100–1,500 bytes of text (about 800 on average); about 2% of all
//! records are tool outputs of 45–55 KB, the kind of file dumps and test logs that fill real
//! sessions. The same seed always yields the same records, on every machine.

use std::collections::BTreeMap;

use annal_engine::{canonical_input, Block, Record, Role};
use annal_support::rng::Rng;
use serde_json::{json, Value};

const WORDS: &[&str] = &[
    "the",
    "session",
    "record",
    "journal",
    "append",
    "config",
    "value",
    "error",
    "test",
    "build",
    "cache",
    "window",
    "budget",
    "token",
    "index",
    "search",
    "commit",
    "review",
    "should",
    "because",
    "then",
    "we",
    "change",
    "function",
    "returns",
    "module",
    "parser",
    "handler",
    "request",
    "response",
    "timeout",
    "retry",
    "schema",
    "field",
    "migration",
    "version",
    "release",
    "branch",
    "merge",
    "fixture",
    "assert",
    "expected",
    "actual",
    "line",
    "file",
    "path",
    "user",
    "client",
    "server",
    "port",
    "8080",
    "42",
    "0.75",
    "null",
    "true",
    "Result<T>",
    "Vec<u8>",
    "fn",
    "impl",
    "struct",
    "async",
    "await",
    "mutex",
    "thread",
];
const TOOLS: &[&str] = &["Read", "Bash", "Edit", "Grep", "Write"];
const FILES: &[&str] = &[
    "src/main.rs",
    "src/lib.rs",
    "src/store.rs",
    "Cargo.toml",
    "config/app.yaml",
    "tests/api.rs",
    "schema/user.json",
    "README.md",
    "src/handlers/auth.rs",
    "migrations/0003_add_index.sql",
];
const COMMANDS: &[&str] =
    &["cargo test --workspace", "cargo build --release", "git status", "npm run lint", "pytest -x -q"];

/// Large tool outputs: this share (per mille) of tool results, which are about a third of all
/// records, so about 2% of all records.
const LARGE_OUTPUT_PER_MILLE: u64 = 57;

/// Words until the text is at least `len` bytes long, with a line break now and then.
pub fn text_of_len(rng: &mut Rng, len: usize) -> String {
    let mut out = String::with_capacity(len + 16);
    while out.len() < len {
        if !out.is_empty() {
            out.push(if rng.chance(60, 1000) { '\n' } else { ' ' });
        }
        out.push_str(rng.pick(WORDS));
    }
    out
}

/// An id shaped like a version-4 UUID, as agents name their records.
pub fn hex_id(rng: &mut Rng) -> String {
    let (a, b) = (rng.next_u64(), rng.next_u64());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

fn tool_input(rng: &mut Rng, tool: &str) -> String {
    let value: Value = match tool {
        "Bash" => json!({ "command": rng.pick(COMMANDS), "timeout": 120_000 }),
        "Grep" => json!({ "pattern": rng.pick(WORDS), "path": "src", "output_mode": "content" }),
        "Edit" => json!({
            "file_path": rng.pick(FILES),
            "old_string": text_of_len(rng, 60),
            "new_string": text_of_len(rng, 80),
        }),
        "Write" => json!({ "file_path": rng.pick(FILES), "content": text_of_len(rng, 300) }),
        _ => json!({ "file_path": rng.pick(FILES), "limit": 400 }),
    };
    canonical_input(&value.to_string())
}

/// What the next record of the conversation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    User,
    AssistantCall,
    ToolResult,
    AssistantText,
}

/// `count` records of one deterministic agent session from `seed`.
pub fn generate(count: usize, seed: u64) -> Vec<Record> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(count);
    let mut step = Step::User;
    let mut pending: Option<(String, String)> = None;
    for index in 0..count {
        let secs = index as u64 * 7;
        let timestamp = format!(
            "2026-01-{:02}T{:02}:{:02}:{:02}Z",
            1 + (secs / 86_400) % 28,
            (secs / 3600) % 24,
            (secs / 60) % 60,
            secs % 60
        );
        let (role, blocks) = match step {
            Step::User => {
                let len = rng.between(100, 1500);
                (Role::User, vec![Block::Text { text: text_of_len(&mut rng, len) }])
            }
            Step::AssistantText => {
                let mut blocks = Vec::new();
                if rng.chance(300, 1000) {
                    let len = rng.between(50, 400);
                    blocks.push(Block::Thinking { text: text_of_len(&mut rng, len) });
                }
                let len = rng.between(100, 1500);
                blocks.push(Block::Text { text: text_of_len(&mut rng, len) });
                (Role::Assistant, blocks)
            }
            Step::AssistantCall => {
                let tool = rng.pick(TOOLS).to_owned();
                let call_id = format!("toolu_{:016x}", rng.next_u64());
                let input = tool_input(&mut rng, &tool);
                pending = Some((call_id.clone(), tool.clone()));
                let len = rng.between(100, 1300);
                let text = text_of_len(&mut rng, len);
                (
                    Role::Assistant,
                    vec![
                        Block::Text { text },
                        Block::ToolCall { call_id, tool, input, target: String::new() },
                    ],
                )
            }
            Step::ToolResult => {
                let (call_id, tool) = pending.take().unwrap_or_default();
                let len = if rng.chance(LARGE_OUTPUT_PER_MILLE, 1000) {
                    rng.between(45_000, 55_000)
                } else {
                    rng.between(100, 1500)
                };
                let is_error = rng.chance(50, 1000);
                let output = text_of_len(&mut rng, len);
                (Role::Tool, vec![Block::ToolResult { call_id, tool, is_error, output }])
            }
        };
        step = match step {
            Step::User if rng.chance(700, 1000) => Step::AssistantCall,
            Step::User => Step::AssistantText,
            Step::AssistantCall => Step::ToolResult,
            Step::ToolResult if rng.chance(600, 1000) => Step::AssistantCall,
            Step::ToolResult => Step::AssistantText,
            Step::AssistantText => Step::User,
        };
        out.push(Record {
            entry_id: hex_id(&mut rng),
            role,
            timestamp: Some(timestamp),
            blocks,
            meta: BTreeMap::new(),
        });
    }
    out
}

/// The payload text bytes of a record: text, thinking, tool inputs and tool outputs.
pub fn payload_bytes(record: &Record) -> usize {
    record
        .blocks
        .iter()
        .map(|block| match block {
            Block::Text { text } | Block::Thinking { text } => text.len(),
            Block::ToolCall { input, .. } => input.len(),
            Block::ToolResult { output, .. } => output.len(),
            Block::Blob { data, .. } => data.len(),
        })
        .sum()
}

/// Whether a record carries a tool output of at least 40 KB.
pub fn is_large(record: &Record) -> bool {
    record.blocks.iter().any(|b| matches!(b, Block::ToolResult { output, .. } if output.len() >= 40_000))
}

/// The record as one JSON object, the way a SQLite user would keep it in a TEXT column.
pub fn to_json(record: &Record) -> String {
    let blocks: Vec<Value> = record
        .blocks
        .iter()
        .map(|block| match block {
            Block::Text { text } => json!({ "type": "text", "text": text }),
            Block::Thinking { text } => json!({ "type": "thinking", "text": text }),
            Block::ToolCall { call_id, tool, input, .. } => {
                json!({ "type": "toolCall", "callId": call_id, "tool": tool, "input": input })
            }
            Block::ToolResult { call_id, tool, is_error, output } => json!({
                "type": "toolResult", "callId": call_id, "tool": tool, "isError": is_error, "output": output,
            }),
            Block::Blob { media_type, data } => {
                json!({ "type": "blob", "mediaType": media_type, "size": data.len() })
            }
        })
        .collect();
    json!({
        "entryId": record.entry_id,
        "role": record.role.as_str(),
        "timestamp": record.timestamp,
        "blocks": blocks,
        "meta": record.meta,
    })
    .to_string()
}

/// A summary of a workload, for the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// How many records.
    pub records: usize,
    /// Their payload text bytes.
    pub payload_bytes: usize,
    /// How many carry a large tool output.
    pub large: usize,
    /// Payload bytes of the other records.
    pub ordinary_payload_bytes: usize,
}

impl Workload {
    /// Summarises `records`.
    pub fn of(records: &[Record]) -> Workload {
        let large = records.iter().filter(|r| is_large(r)).count();
        let payload = records.iter().map(payload_bytes).sum();
        let ordinary = records.iter().filter(|r| !is_large(r)).map(payload_bytes).sum();
        Workload { records: records.len(), payload_bytes: payload, large, ordinary_payload_bytes: ordinary }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_shaped() {
        let a = generate(2000, 7);
        assert_eq!(a, generate(2000, 7));
        let workload = Workload::of(&a);
        assert!(workload.large > 10 && workload.large < 80, "{workload:?}");
        let ordinary_mean = workload.ordinary_payload_bytes / (workload.records - workload.large);
        assert!((600..1000).contains(&ordinary_mean), "{ordinary_mean}");
        assert!(serde_json::from_str::<Value>(&to_json(&a[3])).is_ok());
    }
}
