//! The exam's sessions: the turn profiles of annal-support's session family (chat, records,
//! coding, mixed, paste, resumed) generated to a length, with facts planted across the whole session and decoys
//! checked never to occur.

use annal_engine::{Block, Record, Role};
pub use annal_support::rng::Rng;
use annal_support::sessions::SessionSpec;
pub use annal_support::sessions::{Profile, Turn};

use super::facts::{class_plan, Decoy, Fact, FactClass, ValueSource};

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
    /// Whether every request is checked for the user requests under 2,000 tokens it no longer
    /// carries verbatim (`paste`, `resumed` and the real corpus: the check costs a pass over
    /// each request's user text).
    pub check_user_requests: bool,
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
pub struct ExamSpec {
    /// The profile (one of [`Profile::EXAM`]).
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

/// Generates a session of `spec.profile` (annal-support's session family) up to
/// `spec.target_tokens`, then plants its facts and draws its decoys.
pub fn generate(spec: &ExamSpec) -> Session {
    let mut generated = SessionSpec { profile: spec.profile, seed: spec.seed }.turns();
    let mut turns = Vec::new();
    let mut tokens = 0;
    while tokens < spec.target_tokens || turns.len() < MIN_TURNS {
        let Some(turn) = generated.next() else { break };
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
    let check_user_requests = matches!(spec.profile, Profile::Paste | Profile::Resumed);
    let mut session =
        Session { label: spec.profile.label().into(), turns, facts, decoys: Vec::new(), check_user_requests };
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
