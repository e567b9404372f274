//! The shaped profile: the projection and checkpoint tests' sessions, with the shapes that
//! stress a projection (parallel tool calls, split parallel calls, huge outputs, user text past
//! the history target, a newest turn past the tail, a pending call), each switched on by a
//! [`Shape`] field.

use annal_engine::{Block, Record, Role};

use super::record;
use super::text::Numbered;
use crate::rng::Rng;

/// What a shaped session looks like.
#[derive(Clone, Debug)]
pub struct Shape {
    /// The seed.
    pub seed: u64,
    /// User turns.
    pub turns: usize,
    /// Tool steps per turn, at most.
    pub steps_max: usize,
    /// Several calls in one assistant record.
    pub parallel: bool,
    /// Parallel calls split into one record each (as Claude Code writes them).
    pub split_parallel: bool,
    /// One tool output of ~50K tokens.
    pub huge_output: bool,
    /// User messages far past a history target.
    pub huge_user: bool,
    /// The newest turn: many steps with large outputs.
    pub big_newest_turn: bool,
    /// Ends with a call whose result has not arrived.
    pub pending_call: bool,
    /// The newest turn ends with a tool result (the model has not answered yet).
    pub open_turn: bool,
    /// System notes between turns.
    pub system: bool,
    /// Thinking blocks before answers.
    pub thinking: bool,
}

impl Shape {
    /// `turns` turns of up to four steps each, none of the stressing shapes.
    pub fn plain(seed: u64, turns: usize) -> Shape {
        Shape {
            seed,
            turns,
            steps_max: 4,
            parallel: false,
            split_parallel: false,
            huge_output: false,
            huge_user: false,
            big_newest_turn: false,
            pending_call: false,
            open_turn: false,
            system: false,
            thinking: false,
        }
    }
}

const WORDS: &[&str] = &[
    "parser", "config", "ledger", "window", "budget", "journal", "cargo", "schema", "token", "index",
    "query", "module", "handler", "report", "monthly", "export", "value", "branch", "commit", "review",
];

/// Words and numbers of `low..=high` characters.
fn prose(rng: &mut Rng, low: usize, high: usize) -> String {
    let chars = rng.between(low, high);
    words(rng, chars)
}

fn words(rng: &mut Rng, chars: usize) -> String {
    Numbered { words: WORDS, numbers_below: 10_000, newline: Some((1, 12)) }.exactly(rng, chars)
}

struct Builder<'a> {
    prefix: &'a str,
    rng: Rng,
    records: Vec<Record>,
    calls: u64,
}

impl Builder<'_> {
    fn id(&self) -> String {
        format!("{}-{:05}", self.prefix, self.records.len())
    }

    fn push(&mut self, role: Role, blocks: Vec<Block>) {
        let entry_id = self.id();
        self.records.push(record(entry_id, role, blocks));
    }

    fn call(&mut self) -> Block {
        self.calls += 1;
        let call_id = format!("{}-call{}", self.prefix, self.calls);
        let rng = &mut self.rng;
        let (tool, input) = match rng.below(5) {
            0 => ("Read", format!("{{\"file_path\":\"src/{}.rs\"}}", WORDS[rng.index(WORDS.len())])),
            1 => (
                "Bash",
                format!("{{\"command\":\"cargo test -p {} --quiet\"}}", WORDS[rng.index(WORDS.len())]),
            ),
            2 => {
                ("Grep", format!("{{\"path\":\"src\",\"pattern\":\"fn {}\"}}", WORDS[rng.index(WORDS.len())]))
            }
            3 => (
                "Edit",
                format!(
                    "{{\"file_path\":\"config/{}.toml\",\"new\":\"x\",\"old\":\"y\"}}",
                    WORDS[rng.index(WORDS.len())]
                ),
            ),
            _ => {
                ("WebFetch", format!("{{\"url\":\"https://example.com/{}\"}}", WORDS[rng.index(WORDS.len())]))
            }
        };
        Block::ToolCall { call_id, tool: tool.to_owned(), input, target: String::new() }
    }

    fn result(&mut self, call: &Block, chars: usize) -> Block {
        let Block::ToolCall { call_id, tool, .. } = call else { unreachable!("results answer calls") };
        let is_error = self.rng.chance(1, 10);
        Block::ToolResult {
            call_id: call_id.clone(),
            tool: tool.clone(),
            is_error,
            output: words(&mut self.rng, chars),
        }
    }
}

/// The session of `shape`; entry ids start with `prefix`.
pub fn shaped(prefix: &str, shape: &Shape) -> Vec<Record> {
    let mut b = Builder { prefix, rng: Rng::new(shape.seed), records: Vec::new(), calls: 0 };
    // Half the time in the newest turn, where the tail must cut it.
    let huge_at = match (shape.huge_output, b.rng.chance(1, 2)) {
        (false, _) => None,
        (true, true) => Some(shape.turns.saturating_sub(1)),
        (true, false) => Some(b.rng.index(shape.turns.max(1))),
    };
    for turn in 0..shape.turns {
        let newest = turn + 1 == shape.turns;
        let user_chars = if shape.huge_user && b.rng.chance(1, 3) {
            b.rng.between(20_000, 90_000)
        } else {
            b.rng.between(30, 600)
        };
        let text = words(&mut b.rng, user_chars);
        b.push(Role::User, vec![Block::Text { text }]);
        if shape.system && b.rng.chance(1, 4) {
            let text = prose(&mut b.rng, 40, 400);
            b.push(Role::System, vec![Block::Text { text }]);
        }
        let steps = if newest && shape.big_newest_turn { 14 } else { b.rng.index(shape.steps_max + 1) };
        let steps = if huge_at == Some(turn) { steps.max(1) } else { steps };
        for step in 0..steps {
            let mut blocks = Vec::new();
            if shape.thinking && b.rng.chance(1, 3) {
                blocks.push(Block::Thinking { text: prose(&mut b.rng, 40, 800) });
            }
            if b.rng.chance(3, 4) {
                blocks.push(Block::Text { text: prose(&mut b.rng, 60, 2_400) });
            }
            let fanout = if shape.parallel && b.rng.chance(1, 3) { b.rng.between(2, 3) } else { 1 };
            let calls: Vec<Block> = (0..fanout).map(|_| b.call()).collect();
            let split = fanout > 1 && shape.split_parallel && b.rng.chance(1, 2);
            if split {
                let first = blocks.drain(..).chain([calls[0].clone()]).collect();
                b.push(Role::Assistant, first);
                for call in &calls[1..] {
                    b.push(Role::Assistant, vec![call.clone()]);
                }
            } else {
                blocks.extend(calls.iter().cloned());
                b.push(Role::Assistant, blocks);
            }
            let together = fanout > 1 && b.rng.chance(1, 2);
            let mut results = Vec::new();
            for call in &calls {
                let big = newest && shape.big_newest_turn;
                let chars = if huge_at == Some(turn) && step == 0 && results.is_empty() {
                    200_000
                } else if big {
                    b.rng.between(4_000, 12_000)
                } else {
                    b.rng.between(80, 4_000)
                };
                results.push(b.result(call, chars));
            }
            if together {
                b.push(Role::Tool, results);
            } else {
                for result in results {
                    b.push(Role::Tool, vec![result]);
                }
            }
        }
        if newest && shape.open_turn && steps > 0 {
            break;
        }
        let text = prose(&mut b.rng, 60, 1_600);
        b.push(Role::Assistant, vec![Block::Text { text }]);
    }
    if shape.pending_call {
        let call = b.call();
        b.push(Role::Assistant, vec![Block::Text { text: "Running it now.".into() }, call]);
    }
    b.records
}
