//! The drive loop: append a step, ask for the request before each model step (the strategy
//! compacts when its trigger fires), measure every request and every compaction, and score the
//! final request closed book.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash as _, Hasher as _};

use annal_engine::Block;

use super::engine_side::Strategy;
use super::facts::FactClass;
use super::request::{joined, orphans, prefix_share, tokens, Request};
use super::session::{block_text, Session};

/// A prompt counts as kept when this many of its first characters appear verbatim.
const PROMPT_CHARS: usize = 200;

/// What one compaction left.
#[derive(Clone, Debug, Default)]
pub struct CompactionCheck {
    /// The session's first user message is gone.
    pub task_lost: bool,
    /// The current turn's user message is gone.
    pub ask_lost: bool,
    /// Calls without results plus results without calls.
    pub orphans: u64,
    /// Nothing original from before the newest step survived but the current turn's user
    /// message (only markers, notes or summaries).
    pub marker_only: bool,
    /// Tokens of the request after compacting.
    pub tokens: u64,
}

/// Everything measured on one session under one strategy.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    /// Requests made.
    pub requests: u64,
    /// Requests above the capacity (what could not have been sent).
    pub over_capacity: u64,
    /// One entry per compaction.
    pub compactions: Vec<CompactionCheck>,
    /// Sum and count of prefix shares over all requests after the first.
    pub prefix_all: (f64, u64),
    /// The same over requests with no compaction since the previous one.
    pub prefix_between: (f64, u64),
    /// Closed-book recall of the facts stated before the first compaction, after the 1st, 2nd,
    /// 3rd and the last (4th or later) compaction.
    pub drift: Vec<(usize, f64)>,
    /// Per fact (session order): its value is in the final request.
    pub kept: Vec<bool>,
    /// Decoy values found in the final request.
    pub decoy_hits: u64,
    /// Turns whose every block is in the final request verbatim.
    pub full_turns: u64,
    /// Turns in the session.
    pub turns: u64,
}

impl RunResult {
    /// Closed-book (kept, total) of `class` (all classes for `None`).
    pub fn closed(&self, session: &Session, class: Option<FactClass>) -> (u64, u64) {
        let mut out = (0, 0);
        for (fact, kept) in session.facts.iter().zip(&self.kept) {
            if class.is_none_or(|c| c == fact.class) {
                out.1 += 1;
                out.0 += u64::from(*kept);
            }
        }
        out
    }
}

fn text_hash(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// Originals by the hash of their text: the step (counted over the whole session) that first
/// holds each.
struct Originals {
    step_of: HashMap<u64, usize>,
}

impl Originals {
    fn new(session: &Session) -> Originals {
        let mut step_of = HashMap::new();
        let steps = session.turns.iter().flat_map(|t| &t.steps);
        for (s, step) in steps.enumerate() {
            for block in step.iter().flat_map(|r| &r.blocks) {
                if !matches!(block, Block::ToolCall { .. }) && !block_text(block).is_empty() {
                    step_of.entry(text_hash(block_text(block))).or_insert(s);
                }
            }
        }
        Originals { step_of }
    }

    /// Whether `request` carries any original from before step `step` other than `ask` (the
    /// current turn's user message): if not, all it kept of the compacted part is markers,
    /// notes or a summary.
    fn any_before(&self, request: &Request, step: usize, ask: &str) -> bool {
        let ask = text_hash(ask);
        request.iter().flat_map(|m| &m.parts).any(|p| {
            let hash = text_hash(&p.text);
            hash != ask && self.step_of.get(&hash).is_some_and(|s| *s < step)
        })
    }
}

fn opening(text: &str) -> &str {
    match text.char_indices().nth(PROMPT_CHARS) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

fn first_user_text(session: &Session, turn: usize) -> Option<&str> {
    session.turns[turn].steps.iter().flatten().find_map(|r| {
        (r.role == annal_engine::Role::User).then_some(())?;
        r.blocks.iter().find_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
    })
}

fn recall(session: &Session, text: &str, facts: &[usize]) -> f64 {
    if facts.is_empty() {
        return 1.0;
    }
    facts.iter().filter(|&&i| text.contains(&session.facts[i].value)).count() as f64 / facts.len() as f64
}

/// Runs `session` through `strategy` with capacity `capacity_tokens`.
///
/// # Errors
/// A failure of the strategy (the engine's errors included).
pub fn drive(
    session: &Session,
    strategy: &mut dyn Strategy,
    capacity_tokens: u64,
) -> anyhow::Result<RunResult> {
    let originals = Originals::new(session);
    let task = first_user_text(session, 0).map(|t| opening(t).to_owned()).unwrap_or_default();
    let mut result = RunResult { turns: session.turns.len() as u64, ..RunResult::default() };
    let mut previous: Option<Request> = None;
    let mut early: Vec<usize> = Vec::new();
    let mut last_compaction: Option<Request> = None;
    let mut measure =
        |request: Request, compacted: bool, turn: usize, step: usize, result: &mut RunResult| -> Request {
            result.requests += 1;
            let size = tokens(&request);
            if size > capacity_tokens {
                result.over_capacity += 1;
            }
            if let Some(previous) = &previous {
                let share = prefix_share(previous, &request);
                result.prefix_all.0 += share;
                result.prefix_all.1 += 1;
                if !compacted {
                    result.prefix_between.0 += share;
                    result.prefix_between.1 += 1;
                }
            }
            if compacted {
                let text = joined(&request);
                let ask_text = first_user_text(session, turn).unwrap_or_default();
                let ask = opening(ask_text);
                let (calls, results) = orphans(&request);
                result.compactions.push(CompactionCheck {
                    task_lost: !text.contains(&task),
                    ask_lost: !text.contains(ask),
                    orphans: calls + results,
                    marker_only: step > 0 && !originals.any_before(&request, step, ask_text),
                    tokens: size,
                });
                let k = result.compactions.len();
                if k == 1 {
                    early = (0..session.facts.len()).filter(|&i| session.facts[i].turn < turn).collect();
                }
                if k <= 3 {
                    result.drift.push((k, recall(session, &text, &early)));
                } else {
                    last_compaction = Some(request.clone());
                }
            }
            previous = Some(request.clone());
            request
        };
    // The step just appended, counted over the whole session.
    let mut step_index = 0;
    for (t, turn) in session.turns.iter().enumerate() {
        for (s, step) in turn.steps.iter().enumerate() {
            strategy.append(step, t)?;
            if s + 1 < turn.steps.len() {
                let (request, compacted) = strategy.request()?;
                measure(request, compacted, t, step_index, &mut result);
            }
            step_index += 1;
        }
    }
    // The request before the next model step, after the whole session: scored closed book.
    let (request, compacted) = strategy.request()?;
    let final_turn = session.turns.len() - 1;
    let last = measure(request, compacted, final_turn, step_index.saturating_sub(1), &mut result);
    if let Some(request) = last_compaction {
        let k = result.compactions.len();
        result.drift.push((k, recall(session, &joined(&request), &early)));
    }
    let text = joined(&last);
    result.kept = session.facts.iter().map(|f| text.contains(&f.value)).collect();
    result.decoy_hits = session.decoys.iter().filter(|d| text.contains(&d.value)).count() as u64;
    let present: BTreeSet<u64> = last.iter().flat_map(|m| &m.parts).map(|p| text_hash(&p.text)).collect();
    result.full_turns = session
        .turns
        .iter()
        .filter(|turn| {
            turn.steps
                .iter()
                .flatten()
                .flat_map(|r| &r.blocks)
                .filter(|b| !matches!(b, Block::ToolCall { .. }) && !block_text(b).is_empty())
                .all(|b| present.contains(&text_hash(block_text(b))))
        })
        .count() as u64;
    Ok(result)
}

/// Per fact class, the share kept: for the report's closed-book columns.
pub fn closed_by_class(session: &Session, result: &RunResult) -> BTreeMap<FactClass, (u64, u64)> {
    FactClass::ALL.iter().map(|&c| (c, result.closed(session, Some(c)))).collect()
}
