//! The agent profile: the append, codec and search benchmarks' session of mixed roles, tool
//! calls and outputs (docs/performance.md). Ordinary records carry 100–1,500 bytes of text
//! (about 800 on average); about 2% of all records are tool outputs of 45–55 KB, the kind of file
//! dumps and test logs that fill real sessions. Every record has a timestamp 7 s after the last.

use annal_engine::{canonical_input, Block, Record, Role};
use serde_json::{json, Value};

use super::record;
use super::text::{hex_id, joined};
use crate::rng::Rng;

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

/// This profile's text: its words, a line break now and then.
pub fn text_of_len(rng: &mut Rng, len: usize) -> String {
    joined(rng, len, 60, |rng| rng.pick(WORDS))
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

/// The endless stream of the agent profile's records.
#[derive(Clone, Debug)]
pub struct Agent {
    rng: Rng,
    produced: u64,
    step: Step,
    /// The call the next tool result answers: its id and tool.
    pending: Option<(String, String)>,
}

impl Agent {
    /// The session of `seed`.
    pub fn new(seed: u64) -> Agent {
        Agent { rng: Rng::new(seed), produced: 0, step: Step::User, pending: None }
    }

    fn blocks(&mut self) -> (Role, Vec<Block>) {
        let rng = &mut self.rng;
        match self.step {
            Step::User => {
                let len = rng.between(100, 1500);
                (Role::User, vec![Block::Text { text: text_of_len(rng, len) }])
            }
            Step::AssistantText => {
                let mut blocks = Vec::new();
                if rng.chance(300, 1000) {
                    let len = rng.between(50, 400);
                    blocks.push(Block::Thinking { text: text_of_len(rng, len) });
                }
                let len = rng.between(100, 1500);
                blocks.push(Block::Text { text: text_of_len(rng, len) });
                (Role::Assistant, blocks)
            }
            Step::AssistantCall => {
                let tool = rng.pick(TOOLS).to_owned();
                let call_id = format!("toolu_{:016x}", rng.next_u64());
                let input = tool_input(rng, &tool);
                self.pending = Some((call_id.clone(), tool.clone()));
                let len = rng.between(100, 1300);
                let text = text_of_len(rng, len);
                let call = Block::ToolCall { call_id, tool, input, target: String::new() };
                (Role::Assistant, vec![Block::Text { text }, call])
            }
            Step::ToolResult => {
                let (call_id, tool) = self.pending.take().unwrap_or_default();
                let len = if rng.chance(LARGE_OUTPUT_PER_MILLE, 1000) {
                    rng.between(45_000, 55_000)
                } else {
                    rng.between(100, 1500)
                };
                let is_error = rng.chance(50, 1000);
                let output = text_of_len(rng, len);
                (Role::Tool, vec![Block::ToolResult { call_id, tool, is_error, output }])
            }
        }
    }
}

impl Iterator for Agent {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        let secs = self.produced * 7;
        self.produced += 1;
        let timestamp = format!(
            "2026-01-{:02}T{:02}:{:02}:{:02}Z",
            1 + (secs / 86_400) % 28,
            (secs / 3600) % 24,
            (secs / 60) % 60,
            secs % 60
        );
        let (role, blocks) = self.blocks();
        let rng = &mut self.rng;
        self.step = match self.step {
            Step::User if rng.chance(700, 1000) => Step::AssistantCall,
            Step::User => Step::AssistantText,
            Step::AssistantCall => Step::ToolResult,
            Step::ToolResult if rng.chance(600, 1000) => Step::AssistantCall,
            Step::ToolResult => Step::AssistantText,
            Step::AssistantText => Step::User,
        };
        let entry_id = hex_id(rng);
        Some(Record { timestamp: Some(timestamp), ..record(entry_id, role, blocks) })
    }
}
