//! The seeded session generator: four profiles (chat, records, coding, mixed), turns split into
//! the steps an agent appends between model requests, facts planted across the whole session
//! and decoys checked never to occur.

use annal_engine::{Block, Record, Role};

use super::facts::{class_plan, Decoy, Fact, FactClass, ValueSource};
use super::text::{lines, paragraph, prose, shell_line, source_line, Rng};

/// A session profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Profile {
    /// Conversation only, no tools.
    Chat,
    /// One lookup per turn returning a ~60-line record.
    Records,
    /// 1–3 parallel tool calls per model step: heavy-tailed shell output, file reads, edits,
    /// some failures.
    Coding,
    /// Alternating 10-turn phases of chat and coding.
    Mixed,
}

impl Profile {
    /// The four profiles, in report order.
    pub const ALL: [Profile; 4] = [Profile::Chat, Profile::Records, Profile::Coding, Profile::Mixed];

    /// The report label.
    pub fn label(self) -> &'static str {
        match self {
            Profile::Chat => "chat",
            Profile::Records => "records",
            Profile::Coding => "coding",
            Profile::Mixed => "mixed",
        }
    }
}

/// One user turn: the groups of records appended between model requests. A request is made
/// after every step except one that ends with the model's final answer (the next user message
/// comes first).
#[derive(Clone, Debug)]
pub struct Turn {
    /// Steps, in order; the first holds the user's message.
    pub steps: Vec<Vec<Record>>,
}

/// A generated or imported session with its facts and decoys.
#[derive(Clone, Debug)]
pub struct Session {
    /// The set and profile it belongs to (`chat`, `coding`, or a corpus file's label).
    pub label: String,
    /// Its turns.
    pub turns: Vec<Turn>,
    /// Planted (or extracted) facts.
    pub facts: Vec<Fact>,
    /// Values that occur nowhere in it.
    pub decoys: Vec<Decoy>,
}

impl Session {
    /// Every record, in order.
    pub fn records(&self) -> impl Iterator<Item = &Record> {
        self.turns.iter().flat_map(|t| t.steps.iter().flatten())
    }

    /// Tokens of all records (chars / 4 per block, rounded up).
    pub fn tokens(&self) -> u64 {
        self.records().map(record_tokens).sum()
    }
}

/// The text a block carries (call input, result output, text, thinking).
pub fn block_text(block: &Block) -> &str {
    match block {
        Block::Text { text } | Block::Thinking { text } => text,
        Block::ToolCall { input, .. } => input,
        Block::ToolResult { output, .. } => output,
        Block::Blob { .. } => "",
    }
}

/// chars / 4, rounded up: the store's default counter.
pub fn text_tokens(text: &str) -> u64 {
    text.chars().count().div_ceil(4) as u64
}

fn record_tokens(record: &Record) -> u64 {
    record.blocks.iter().map(|b| text_tokens(block_text(b))).sum()
}

/// No session is shorter than this, so its facts are spread over enough turns even where a
/// few large tool outputs reach the length target.
const MIN_TURNS: usize = 40;

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct SessionSpec {
    /// The profile.
    pub profile: Profile,
    /// Generation stops at the first turn boundary past this many tokens.
    pub target_tokens: u64,
    /// Planted facts (80% assistant, 10% user, 10% tool).
    pub facts: usize,
    /// Decoys.
    pub decoys: usize,
    /// The seed.
    pub seed: u64,
}

struct Builder {
    rng: Rng,
    records: usize,
    calls: usize,
}

impl Builder {
    fn record(&mut self, role: Role, blocks: Vec<Block>) -> Record {
        self.records += 1;
        Record {
            entry_id: format!("r{:06}", self.records),
            role,
            timestamp: None,
            blocks,
            meta: Default::default(),
        }
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
        let body = lines(&mut self.rng, count, |r| {
            format!("{}: {}", super::text::sentence(r).to_lowercase(), r.between(0, 999))
        });
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

/// Generates a session of `spec.profile` up to `spec.target_tokens`, then plants its facts and
/// draws its decoys.
pub fn generate(spec: &SessionSpec) -> Session {
    let mut builder = Builder { rng: Rng::new(spec.seed), records: 0, calls: 0 };
    let mut turns = Vec::new();
    let mut tokens = 0;
    while tokens < spec.target_tokens || turns.len() < MIN_TURNS {
        let index = turns.len();
        let turn = match spec.profile {
            Profile::Chat => builder.chat_turn(),
            Profile::Records => builder.records_turn(),
            Profile::Coding => builder.coding_turn(),
            Profile::Mixed if (index / 10) % 2 == 0 => builder.chat_turn(),
            Profile::Mixed => builder.coding_turn(),
        };
        tokens += turn.steps.iter().flatten().map(record_tokens).sum::<u64>();
        turns.push(turn);
    }
    let mut rng = Rng::new(spec.seed ^ 0x5EED_FAC7);
    let mut values = ValueSource::default();
    let has_tools = spec.profile != Profile::Chat;
    let mut facts = Vec::new();
    for (i, class) in class_plan(spec.facts, has_tools).into_iter().enumerate() {
        if let Some(fact) = plant(&mut rng, &mut values, &mut turns, i, class) {
            facts.push(fact);
        }
    }
    facts.sort_by_key(|f| (f.turn, f.entry_id.clone(), f.value.clone()));
    let mut session = Session { label: spec.profile.label().into(), turns, facts, decoys: Vec::new() };
    session.decoys = draw_decoys(&mut rng, &mut values, &session, spec.decoys);
    session
}

/// Plants fact number `index` of `class` in a random turn that has a block of that class.
fn plant(
    rng: &mut Rng,
    values: &mut ValueSource,
    turns: &mut [Turn],
    index: usize,
    class: FactClass,
) -> Option<Fact> {
    let statement = values.statement(rng, index, class);
    for _ in 0..64 {
        let turn = rng.between(0, turns.len() - 1);
        let candidates: Vec<(usize, usize, usize)> = turns[turn]
            .steps
            .iter()
            .enumerate()
            .flat_map(|(s, step)| step.iter().enumerate().map(move |(r, rec)| (s, r, rec)))
            .flat_map(|(s, r, rec)| {
                rec.blocks.iter().enumerate().map(move |(b, block)| (s, r, b, rec.role, block))
            })
            .filter(|(_, _, _, role, block)| match (class, block) {
                (FactClass::User, Block::Text { .. }) => *role == Role::User,
                (FactClass::Assistant, Block::Text { .. }) => *role == Role::Assistant,
                (FactClass::Tool, Block::ToolResult { .. }) => true,
                _ => false,
            })
            .map(|(s, r, b, _, _)| (s, r, b))
            .collect();
        if candidates.is_empty() {
            continue;
        }
        let (s, r, b) = candidates[rng.between(0, candidates.len() - 1)];
        let record = &mut turns[turn].steps[s][r];
        let text = match &mut record.blocks[b] {
            Block::Text { text } | Block::ToolResult { output: text, .. } => text,
            _ => continue,
        };
        insert_statement(rng, text, &statement.text, class == FactClass::Tool);
        return Some(Fact {
            class,
            value: statement.value,
            query: statement.query,
            turn,
            entry_id: record.entry_id.clone(),
        });
    }
    None
}

/// Inserts `statement` at a random line (tool output) or paragraph end (prose) of `text`.
fn insert_statement(rng: &mut Rng, text: &mut String, statement: &str, as_line: bool) {
    let separator = if as_line { "\n" } else { "\n\n" };
    let boundaries: Vec<usize> = text.match_indices(separator).map(|(i, _)| i).collect();
    let at =
        if boundaries.is_empty() { text.len() } else { boundaries[rng.between(0, boundaries.len() - 1)] };
    let at = if rng.chance(200, 1000) { text.len() } else { at };
    let inserted = if as_line { format!("\n{statement}") } else { format!(" {statement}") };
    text.insert_str(at, &inserted);
}

/// Decoys: values shaped like facts' that occur nowhere in the session's records.
pub fn draw_decoys(rng: &mut Rng, values: &mut ValueSource, session: &Session, count: usize) -> Vec<Decoy> {
    let texts: Vec<&str> = session.records().flat_map(|r| r.blocks.iter().map(block_text)).collect();
    let mut decoys = Vec::new();
    let mut kind = 0;
    while decoys.len() < count {
        let decoy = values.decoy(rng, kind);
        kind += 1;
        if !texts.iter().any(|t| t.contains(&decoy.value)) {
            decoys.push(decoy);
        }
    }
    decoys
}
