//! The tool-heavy profile: the projection benchmark's session, generated record by record so
//! 800 MB of it never sits in memory; about 8 KB per record on average: user requests of 150–700
//! bytes; assistant text with a tool call; tool output of 3–26 KB, 5% of it 20–60 KB (past 16 KB,
//! outputs go to the blob table), 5% errors; a final answer per turn.

use annal_engine::{Block, Record, Role};

use super::record;
use super::text::Numbered;
use crate::rng::Rng;

const WORDS: &[&str] = &[
    "ledger", "parser", "config", "schema", "window", "budget", "journal", "monthly", "report", "error",
    "value", "handler", "request", "response", "module", "cargo", "test", "failed", "passed", "commit",
    "branch", "index", "token", "record", "session", "export", "import", "field", "line", "column",
];

/// The endless stream of the tool-heavy profile's records.
#[derive(Clone, Debug)]
pub struct ToolHeavy {
    rng: Rng,
    /// Random words and numbers that texts are sliced from, so generating 800 MB stays cheap.
    text: String,
    produced: usize,
    calls: u64,
    pending: Vec<Record>,
    steps_left: usize,
}

impl ToolHeavy {
    /// The session of `seed`.
    pub fn new(seed: u64) -> ToolHeavy {
        let mut rng = Rng::new(seed);
        let words = Numbered { words: WORDS, numbers_below: 100_000, newline: Some((80, 1000)) };
        let text = words.at_least(&mut rng, 1 << 21);
        ToolHeavy { rng, text, produced: 0, calls: 0, pending: Vec::new(), steps_left: 0 }
    }

    fn slice(&mut self, len: usize) -> String {
        let len = len.min(self.text.len() - 1);
        let mut start = self.rng.index(self.text.len() - len);
        while !self.text.is_char_boundary(start) {
            start -= 1;
        }
        self.text[start..start + len].to_owned()
    }

    fn id(&self) -> String {
        format!("b-{:07}", self.produced + self.pending.len())
    }

    fn queue(&mut self, role: Role, blocks: Vec<Block>) {
        let entry_id = self.id();
        self.pending.push(record(entry_id, role, blocks));
    }

    fn refill(&mut self) {
        if self.steps_left == 0 {
            let ask = self.rng.between(150, 700);
            let text = self.slice(ask);
            self.queue(Role::User, vec![Block::Text { text }]);
            self.steps_left = self.rng.between(5, 30);
            return;
        }
        self.steps_left -= 1;
        if self.steps_left == 0 {
            let answer = self.rng.between(500, 3_000);
            let text = self.slice(answer);
            self.queue(Role::Assistant, vec![Block::Text { text }]);
            return;
        }
        self.calls += 1;
        let call_id = format!("call-{}", self.calls);
        let (tool, input) = match self.rng.below(4) {
            0 => ("Read", format!("{{\"file_path\":\"src/{}.rs\"}}", WORDS[(self.calls % 30) as usize])),
            1 => (
                "Bash",
                format!("{{\"command\":\"cargo test -p {} --quiet\"}}", WORDS[(self.calls % 7) as usize]),
            ),
            2 => (
                "Grep",
                format!("{{\"path\":\"src\",\"pattern\":\"fn {}\"}}", WORDS[(self.calls % 11) as usize]),
            ),
            _ => (
                "Edit",
                format!(
                    "{{\"file_path\":\"config/{}.toml\",\"new\":\"a\",\"old\":\"b\"}}",
                    WORDS[(self.calls % 5) as usize]
                ),
            ),
        };
        let say = self.rng.between(200, 3_000);
        let text = self.slice(say);
        let call =
            Block::ToolCall { call_id: call_id.clone(), tool: tool.into(), input, target: String::new() };
        self.queue(Role::Assistant, vec![Block::Text { text }, call]);
        let size = if self.rng.chance(50, 1000) {
            self.rng.between(20_000, 60_000)
        } else {
            self.rng.between(3_000, 26_000)
        };
        let output = self.slice(size);
        let is_error = self.rng.chance(50, 1000);
        self.queue(Role::Tool, vec![Block::ToolResult { call_id, tool: tool.into(), is_error, output }]);
    }
}

impl Iterator for ToolHeavy {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        if self.pending.is_empty() {
            self.refill();
        }
        let record = self.pending.remove(0);
        self.produced += 1;
        Some(record)
    }
}
