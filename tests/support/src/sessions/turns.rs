//! The turn profiles (chat, records, coding, mixed): the retention exam's sessions, generated
//! turn by turn and split into the steps an agent appends between model requests.

use annal_engine::{Block, Record, Role};

use super::prose::{lines, paragraph, prose, sentence, shell_line, source_line};
use super::{pasted, record, Profile};
use crate::rng::Rng;

/// One user turn: the groups of records appended between model requests. A request is made
/// after every step except one that ends with the model's final answer (the next user message
/// comes first).
#[derive(Clone, Debug)]
pub struct Turn {
    /// Steps, in order; the first holds the user's message.
    pub steps: Vec<Vec<Record>>,
}

/// The endless stream of a turn profile's turns.
#[derive(Debug)]
pub struct Turns {
    profile: Profile,
    builder: Builder,
    produced: usize,
}

impl Turns {
    /// The turns of `profile` (one of [`Profile::EXAM`]) from `seed`.
    ///
    /// # Panics
    /// If `profile` has no turns.
    pub fn new(profile: Profile, seed: u64) -> Turns {
        assert!(Profile::EXAM.contains(&profile), "{profile:?} is not a turn profile");
        Turns { profile, builder: Builder { rng: Rng::new(seed), records: 0, calls: 0 }, produced: 0 }
    }
}

impl Iterator for Turns {
    type Item = Turn;

    fn next(&mut self) -> Option<Turn> {
        let index = self.produced;
        self.produced += 1;
        let builder = &mut self.builder;
        Some(match self.profile {
            Profile::Records => builder.records_turn(),
            Profile::Coding => builder.coding_turn(),
            // Alternating 10-turn phases.
            Profile::Mixed if (index / 10) % 2 == 1 => builder.coding_turn(),
            Profile::Paste if index == 0 => builder.paste_first_turn(),
            Profile::Paste => builder.paste_turn(),
            Profile::Resumed if index == 0 => builder.resumed_first_turn(),
            // Every third turn a question without tools.
            Profile::Resumed if index % 3 == 2 => builder.chat_turn(),
            Profile::Resumed => builder.coding_turn(),
            _ => builder.chat_turn(),
        })
    }
}

#[derive(Debug)]
struct Builder {
    rng: Rng,
    records: usize,
    calls: usize,
}

impl Builder {
    fn record(&mut self, role: Role, blocks: Vec<Block>) -> Record {
        self.records += 1;
        record(format!("r{:06}", self.records), role, blocks)
    }

    fn text(&mut self, role: Role, text: String) -> Record {
        self.record(role, vec![Block::Text { text }])
    }

    fn chat_turn(&mut self) -> Turn {
        let n = self.rng.between(1, 4);
        let ask = {
            let text = paragraph(&mut self.rng, n);
            self.text(Role::User, text)
        };
        let n = self.rng.between(2, 8);
        let answer = {
            let text = prose(&mut self.rng, n);
            self.text(Role::Assistant, text)
        };
        Turn { steps: vec![vec![ask], vec![answer]] }
    }

    fn call(&mut self, tool: &str, input: serde_json::Value) -> (Block, String) {
        self.calls += 1;
        let call_id = format!("call-{:06}", self.calls);
        let block = Block::ToolCall {
            call_id: call_id.clone(),
            tool: tool.into(),
            input: input.to_string(),
            target: String::new(),
        };
        (block, call_id)
    }

    fn result(&mut self, call_id: String, tool: &str, is_error: bool, output: String) -> Record {
        self.record(Role::Tool, vec![Block::ToolResult { call_id, tool: tool.into(), is_error, output }])
    }

    fn records_turn(&mut self) -> Turn {
        let n = self.rng.between(1, 2);
        let ask = {
            let text = paragraph(&mut self.rng, n);
            self.text(Role::User, text)
        };
        let id = format!("rec-{}", self.records);
        let (call, call_id) = self.call("lookup", serde_json::json!({ "id": id }));
        let lead = paragraph(&mut self.rng, 1);
        let step = self.record(Role::Assistant, vec![Block::Text { text: lead }, call]);
        let count = self.rng.between(50, 70);
        let body =
            lines(&mut self.rng, count, |r| format!("{}: {}", sentence(r).to_lowercase(), r.between(0, 999)));
        let result = self.result(call_id, "lookup", false, body);
        let n = self.rng.between(1, 3);
        let answer = {
            let text = prose(&mut self.rng, n);
            self.text(Role::Assistant, text)
        };
        Turn { steps: vec![vec![ask], vec![step, result], vec![answer]] }
    }

    fn coding_turn(&mut self) -> Turn {
        let n = self.rng.between(1, 3);
        let ask = {
            let text = paragraph(&mut self.rng, n);
            self.text(Role::User, text)
        };
        self.coding_after(ask)
    }

    /// The model steps and final answer of a coding turn opened by `ask`.
    fn coding_after(&mut self, ask: Record) -> Turn {
        let mut steps = vec![vec![ask]];
        for _ in 0..self.rng.between(1, 4) {
            let mut blocks = Vec::new();
            if self.rng.chance(600, 1000) {
                blocks.push(Block::Text { text: paragraph(&mut self.rng, 1) });
            }
            let mut results = Vec::new();
            for _ in 0..self.rng.between(1, 3) {
                let (tool, input, output) = self.tool_use();
                let failed = self.rng.chance(80, 1000);
                let (call, call_id) = self.call(tool, input);
                blocks.push(call);
                let output = if failed {
                    format!("{output}\nerror: exit status {}", self.rng.between(1, 127))
                } else {
                    output
                };
                results.push((call_id, tool, failed, output));
            }
            let mut step = vec![self.record(Role::Assistant, blocks)];
            for (call_id, tool, failed, output) in results {
                step.push(self.result(call_id, tool, failed, output));
            }
            steps.push(step);
        }
        let n = self.rng.between(1, 3);
        let answer = {
            let text = prose(&mut self.rng, n);
            self.text(Role::Assistant, text)
        };
        steps.push(vec![answer]);
        Turn { steps }
    }

    fn paste_first_turn(&mut self) -> Turn {
        let text = pasted::first_paste_ask(&mut self.rng);
        let ask = self.text(Role::User, text);
        self.coding_after(ask)
    }

    fn paste_turn(&mut self) -> Turn {
        let text = pasted::later_paste_ask(&mut self.rng);
        let ask = self.text(Role::User, text);
        self.coding_after(ask)
    }

    fn resumed_first_turn(&mut self) -> Turn {
        let text = pasted::resumed_summary(&mut self.rng);
        let mut summary = self.text(Role::User, text);
        pasted::mark_compact_summary(&mut summary);
        self.coding_after(summary)
    }

    /// A tool, its input and its output. Shell output is heavy-tailed: 3 × 1000^(u²) lines,
    /// so the median is about 17 lines and one call in a few hundred prints thousands.
    fn tool_use(&mut self) -> (&'static str, serde_json::Value, String) {
        let word = self.rng.pick(&["ledger", "parser", "config", "schema", "journal", "worker"]);
        match self.rng.between(0, 9) {
            0..=4 => {
                let u = self.rng.unit();
                let count = (3.0 * 1000f64.powf(u * u)) as usize;
                let command = format!("cargo test -p {word}");
                (
                    "Bash",
                    serde_json::json!({ "command": command }),
                    lines(&mut self.rng, count.clamp(3, 3000), shell_line),
                )
            }
            5..=7 => {
                let path =
                    format!("src/{word}/{}.rs", self.rng.pick(&["mod", "lib", "read", "write", "plan"]));
                let count = self.rng.between(40, 500);
                ("Read", serde_json::json!({ "file_path": path }), lines(&mut self.rng, count, source_line))
            }
            _ => {
                let path = format!("src/{word}/mod.rs");
                let old = source_line(&mut self.rng);
                let new = source_line(&mut self.rng);
                let output = format!("The file {path} has been updated.");
                (
                    "Edit",
                    serde_json::json!({ "file_path": path, "old_string": old, "new_string": new }),
                    output,
                )
            }
        }
    }
}
